/*
 * tracker.h - the workspace states of one step's review loop, and what the
 * loop learns from them: the change set of each worker turn,
 * whether a turn changed nothing, whether a reviewer changed anything.
 *
 * Protocol (every call after a successful start; each is a no-op returning
 * 0 when the tracker is off):
 *   1. ep_tracker_start() before the first worker run: the step's first
 *      state, "judged";
 *   2. after each worker turn, for review cycle k, ep_tracker_after_worker():
 *      the state now; the turn's changes (since "judged": since the step
 *      began in cycle 1, since the last judged state later) into the
 *      cycle's evidence and review_cycle_k.diff; *no_change when the state
 *      equals "judged";
 *   3. when checks ran (they may write), ep_tracker_before_reviewer(): the
 *      state the reviewer will see;
 *   4. after the reviewer (or the whole panel), ep_tracker_after_reviewer():
 *      the paths the reviewer changed, if any; the state becomes "judged".
 *      A cycle whose checks failed calls it with changed NULL (no reviewer
 *      ran); a cycle without change does not call it.
 *   5. after the loop approved, for the audit, ep_tracker_since_start(): the
 *      state now, the changes since the step began (review_audit.diff);
 *      then ep_tracker_after_reviewer() for what the audit changed.
 * A snapshot that fails is logged once per failure as a warning and
 * counts as "changed" (never as no change, never as a reviewer edit).
 */
#ifndef EP_TRACKER_H
#define EP_TRACKER_H

#include <stdbool.h>

#include "changeset.h"
#include "pid1.h"
#include "forge/buf.h"
#include "forge/evidence.h"

struct ep_tracker {
	bool on;
	struct ep_changeset cs;
	struct ep_state judged;          /* what the last cycle judged (the step's start at first) */
	struct ep_state seen;            /* what the reviewer of this cycle sees */
	struct ep_state start;           /* the step's first state (for the audit) */
	int cycle;                       /* the cycle of the last after_worker */
};

/* What the tracker needs; strings borrowed. */
struct ep_tracker_opts {
	bool on;                         /* FORGE_CHANGESET (default on) */
	bool git_exclude;                /* FORGE_GIT_EXCLUDE: add the cycle dir to .git/info/exclude */
	const char *workspace;
	const char *tmpdir;              /* private to this run */
	const char *cycle_dir;           /* workspace-relative: its top is left out */
};

/* Step 1. Logs what it does ("change set: git ..." / "manifest ..."). 0. */
int ep_tracker_start(struct ep_tracker *tr, struct ep_pid1 *p, const struct ep_tracker_opts *o);
void ep_tracker_release(struct ep_tracker *tr);

/* Step 2 for cycle k: ev gets changes (and diff, the file name, when one
 * was written in step_dir). 0. */
int ep_tracker_after_worker(struct ep_tracker *tr, struct ep_pid1 *p, int k, const char *step_dir,
			    struct fg_evidence *ev, bool *no_change);

/* Step 5: ev gets the changes from the step's start to now (and diff, the
 * file name diff_name, when one was written in step_dir); the state now
 * is what the audit sees. 0. */
int ep_tracker_since_start(struct ep_tracker *tr, struct ep_pid1 *p, const char *step_dir,
			   const char *diff_name, struct fg_evidence *ev);

/* Step 3. 0. */
int ep_tracker_before_reviewer(struct ep_tracker *tr, struct ep_pid1 *p);

/* Step 4: changed (initialised by the caller) receives the paths the
 * reviewer added, modified or deleted, at most FG_CHANGES_MAX; NULL when
 * no reviewer ran (the state is only recorded as judged). 0. */
int ep_tracker_after_reviewer(struct ep_tracker *tr, struct ep_pid1 *p, struct fg_strvec *changed);

/* The reviewer prompt's part of the change set: "## What changed" with the
 * files of ev and the diff's name, appended to b (nothing when ev has no
 * change list). */
void ep_tracker_prompt(struct fg_buf *b, const struct fg_evidence *ev, const char *step_dir_rel);

#endif
