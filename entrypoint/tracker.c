/*
 * tracker.c - the review loop's workspace states (see tracker.h).
 */
#include "tracker.h"
#include "forge/quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks.h"
#include "cli.h"
#include "forge/alloc.h"
#include "forge/fsutil.h"
#include "forge/timeutil.h"

/* Changes listed in the reviewer's prompt; the cycle file and the diff
 * hold the rest. */
#define PROMPT_CHANGES_MAX 200

/* A snapshot into st; a failure is a warning and leaves st invalid. */
static void snap(struct ep_tracker *tr, struct ep_pid1 *p, struct ep_state *st, const char *when)
{
	uint64_t t0 = fg_monotonic_ns();

	if (ep_changeset_snapshot(&tr->cs, p, st) < 0)
		ep_log(FG_MSG_WARN, "change set: cannot record the workspace %s: %s", when, tr->cs.err);
	else if (fg_seconds_since(t0) > 5)
		ep_log(FG_MSG_INFO, "change set: recording the workspace %s took %.1f s", when, fg_seconds_since(t0));
}

int ep_tracker_start(struct ep_tracker *tr, struct ep_pid1 *p, const struct ep_tracker_opts *o)
{
	memset(tr, 0, sizeof(*tr));
	tr->on = o->on;
	if (!tr->on)
		return 0;
	ep_changeset_init(&tr->cs, p, o->workspace, o->tmpdir, o->cycle_dir);
	if (tr->cs.git && o->git_exclude) {
		int rc = ep_changeset_exclude_in_repo(&tr->cs);

		if (rc < 0)
			ep_log(FG_MSG_WARN, "change set: %s", tr->cs.err);
		else if (rc == 0)
			ep_log(FG_MSG_INFO, "change set: added '/%s/' to .git/info/exclude (FORGE_GIT_EXCLUDE=0 turns this off)",
				 tr->cs.exclude);
	}
	if (tr->cs.git)
		ep_log(FG_MSG_INFO, "change set: git (a private index; the repository's is not touched)");
	else
		ep_log(FG_MSG_INFO, "change set: manifest (%s)", *tr->cs.err ? tr->cs.err : "no git repository in the workspace");
	snap(tr, p, &tr->judged, "at the start of the step");
	return 0;
}

void ep_tracker_release(struct ep_tracker *tr)
{
	if (!tr->on)
		return;
	ep_state_release(&tr->judged);
	ep_state_release(&tr->seen);
	ep_changeset_release(&tr->cs);
	memset(tr, 0, sizeof(*tr));
}

int ep_tracker_after_worker(struct ep_tracker *tr, struct ep_pid1 *p, int k, const char *step_dir,
			    struct fg_evidence *ev, bool *no_change)
{
	char *name;
	bool diffed = false;
	int fd;

	*no_change = false;
	if (!tr->on)
		return 0;
	tr->cycle = k;
	snap(tr, p, &tr->seen, "after the worker's turn");
	if (!tr->seen.valid || !tr->judged.valid)
		return 0;
	*no_change = ep_changeset_same(&tr->judged, &tr->seen);
	ev->since_review = k > 1;
	if (*no_change) {
		ev->has_changes = true;   /* an empty list: nothing changed */
		return 0;
	}
	name = fg_diff_name(k);
	fd = tr->cs.git ? ep_step_log_open(step_dir, name) : -1;
	if (ep_changeset_compare(&tr->cs, p, &tr->judged, &tr->seen, ev, fd, &diffed) < 0)
		ep_log(FG_MSG_WARN, "change set: cannot compare the workspace's states: %s", tr->cs.err);
	if (fd >= 0)
		close(fd);
	if (fd >= 0 && !diffed) {
		/* Nothing was written: no empty diff file is left behind. */
		char *path = fg_path_join(step_dir, name);

		unlink(path);
		free(path);
	}
	if (diffed)
		ev->diff = name;
	else
		free(name);
	return 0;
}

int ep_tracker_before_reviewer(struct ep_tracker *tr, struct ep_pid1 *p)
{
	if (tr->on)
		snap(tr, p, &tr->seen, "before the reviewer");
	return 0;
}

int ep_tracker_after_reviewer(struct ep_tracker *tr, struct ep_pid1 *p, struct fg_strvec *changed)
{
	struct ep_state after = { 0 };
	struct fg_evidence ev;
	bool diffed;

	if (!tr->on)
		return 0;
	snap(tr, p, &after, changed ? "after the review" : "at the end of the cycle");
	if (changed && tr->seen.valid && after.valid && !ep_changeset_same(&tr->seen, &after)) {
		fg_evidence_init(&ev);
		ep_changeset_compare(&tr->cs, p, &tr->seen, &after, &ev, -1, &diffed);
		for (size_t i = 0; i < ev.nchanges; i++)
			fg_strvec_push(changed, ev.changes[i].path);
		if (!ev.nchanges)
			fg_strvec_push(changed, "(the workspace's state changed)");
		fg_evidence_release(&ev);
	}
	ep_state_move(&tr->judged, after.valid ? &after : &tr->seen);
	ep_state_release(&after);
	return 0;
}

void ep_tracker_prompt(struct fg_buf *b, const struct fg_evidence *ev, const char *step_dir_rel)
{
	size_t n = ev->nchanges < PROMPT_CHANGES_MAX ? ev->nchanges : PROMPT_CHANGES_MAX;

	if (!ev->has_changes)
		return;
	fg_buf_addf(b, "\n## Files changed %s\n\n", ev->since_review ? "since the last review cycle"
							: "since the step began");
	for (size_t i = 0; i < n; i++) {
		const struct fg_change *c = &ev->changes[i];

		/* Quoted as git shows names: a newline in a name cannot start a
		 * line (a section) of the prompt. */
		fg_buf_addf(b, "- %s ", fg_change_status_name(c->status));
		fg_quote_name(b, c->path, strlen(c->path));
		if (c->old_path) {
			fg_buf_adds(b, " (from ");
			fg_quote_name(b, c->old_path, strlen(c->old_path));
			fg_buf_addc(b, ')');
		}
		if (c->added >= 0 && c->deleted >= 0)
			fg_buf_addf(b, " +%ld -%ld", c->added, c->deleted);
		if (ep_changeset_is_agent_config(c->path))
			fg_buf_adds(b, " [agent or git configuration: a CLI or git loads it by itself]");
		fg_buf_addc(b, '\n');
	}
	if (ev->nchanges > n || ev->changes_truncated)
		fg_buf_addf(b, "- ... and more (the list was cut)\n");
	if (ev->diff)
		fg_buf_addf(b, "\nThe unified diff of these changes is in %s/%s (at most 1 MiB). Review "
			    "them first; the rest of the workspace is context.\n", step_dir_rel, ev->diff);
}
