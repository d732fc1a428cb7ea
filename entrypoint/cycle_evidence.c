/*
 * cycle_evidence.c - a review cycle's evidence for the loop (see
 * cycle_evidence.h): change set, checks, no change, reviewer edits.
 */
#include "cycle_evidence.h"

#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "cli.h"
#include "judge.h"
#include "panel.h"
#include "prompt.h"
#include "tracker.h"
#include "forge/alloc.h"
#include "forge/buf.h"

int ep_evidence_start(struct ep_loop *l)
{
	struct ep_tracker_opts o = {
		.on = l->t->changeset && l->review_md && l->max > 0, .git_exclude = l->t->git_exclude,
		.workspace = l->t->workspace, .tmpdir = l->tmpdir, .cycle_dir = l->t->cycle_dir,
	};

	return ep_tracker_start(&l->tr, &l->pid1, &o);
}

void ep_evidence_release(struct ep_loop *l)
{
	ep_tracker_release(&l->tr);
}

char *ep_evidence_prompt(const struct ep_loop *l, char *p)
{
	struct fg_buf b;

	if (!l->ev || (!l->ev->nchecks && !l->ev->has_changes))
		return p;
	fg_buf_init(&b, EP_PROMPT_MAX);
	fg_buf_adds(&b, p);
	ep_tracker_prompt(&b, l->ev, l->t->cycle_dir);
	ep_checks_prompt(&b, &l->checks, l->ev);
	free(p);
	return fg_buf_detach(&b, NULL);
}

/* A cycle no reviewer ran because check r failed (format checks). */
static void checks_cycle(struct ep_loop *l, int k, struct fg_cycle *c, const struct fg_check_result *r)
{
	struct fg_buf fb;

	fg_cycle_init(c);
	c->j.verdict = FG_VERDICT_REJECTED;
	c->j.has_format = true;
	c->j.format = FG_FORMAT_CHECKS;
	fg_buf_init(&fb, FG_FEEDBACK_MAX);
	ep_checks_feedback(&fb, &l->checks, r);
	c->j.feedback = fg_buf_detach(&fb, NULL);
	ep_loop_stamp(l, c, k, r->duration_seconds);
}

/* The last cycle judged the work: its reviewer neither failed nor gave
 * no verdict (then the same work is worth a review again). */
static bool last_judged(const struct ep_loop *l)
{
	const struct fg_cycle *p = &l->hist[l->nhist - 1];

	return !l->reviewer_failed[l->nhist - 1] && !(p->j.has_format && p->j.format == FG_FORMAT_NONE);
}

/* A worker turn after a rejection that changed nothing: cycle k rejects
 * again with the previous findings, and no reviewer runs. After several
 * such turns in a row the feedback repeated is that of the last cycle
 * that was not one of them, not a nest of "changed nothing" texts. */
static void no_change_cycle(struct ep_loop *l, int k, struct fg_cycle *c)
{
	size_t from = l->nhist - 1;
	const struct fg_cycle *prev;

	while (from > 0 && l->hist[from].ev.no_change)
		from--;
	prev = &l->hist[from];

	fg_cycle_init(c);
	c->j.verdict = FG_VERDICT_REJECTED;
	c->ev.no_change = true;
	c->j.feedback = fg_xasprintf("The worker's last turn changed nothing in the workspace: no reviewer "
				     "was asked again. The feedback of cycle %d still stands:\n\n%s", prev->cycle,
				     prev->j.feedback ? prev->j.feedback : "");
	fg_judgement_copy_findings(&c->j, &prev->j);
	ep_loop_stamp(l, c, k, 0);
	ep_log(FG_MSG_INFO, "the worker's turn changed nothing: cycle %d/%d is rejected without a review", k, l->max);
}

/* The reviewer (or a role of the panel: they run at the same time, so
 * every role that ran) changed the workspace: its review does not count
 * (failed), the worker is told which files. */
static void reviewer_edited(struct ep_loop *l, struct fg_cycle *c, const struct fg_strvec *changed, bool *failed)
{
	struct fg_buf b;

	fg_buf_init(&b, FG_FEEDBACK_MAX);
	fg_buf_adds(&b, "The review failed: the reviewer changed the workspace, which a reviewer must not "
		    "do, so its verdict does not count. Files it changed:");
	for (size_t i = 0; i < changed->n; i++)
		fg_buf_addf(&b, "%s %s", i ? "," : "", changed->v[i]);
	fg_buf_addf(&b, ".\nCheck these files: keep what your task needs, undo the rest.%s%s\n",
		    *c->j.feedback ? "\n\nWhat the review said:\n\n" : "", c->j.feedback);
	free(c->j.feedback);
	c->j.feedback = fg_buf_detach(&b, NULL);
	c->j.verdict = FG_VERDICT_REJECTED;
	c->j.advice_only = false;
	for (size_t i = 0; i < c->nreviews; i++)
		if (!c->reviews[i].from_cycle) {
			c->reviews[i].failed = true;
			fg_review_set_verdict(&c->reviews[i], FG_ROLE_REJECTED);
		}
	for (size_t i = 0; i < changed->n; i++)
		fg_strvec_push(&c->ev.reviewer_changed, changed->v[i]);
	*failed = true;
	ep_log(FG_MSG_WARN, "reviewer_changed_workspace: cycle %d/%d: the reviewer changed %zu file(s) (%s%s): "
		 "its review failed", c->cycle, l->max, changed->n, changed->v[0], changed->n > 1 ? ", ..." : "");
}

/* Moves the worker turn's evidence (checks, changes, diff) into c, keeping
 * what the review put there (verified lines, edits, markers). */
static void take_evidence(struct fg_cycle *c, struct fg_evidence *ev)
{
	struct fg_strvec verified = c->ev.verified, edited = c->ev.reviewer_changed;
	bool no_change = c->ev.no_change, advice = c->ev.advice_only;

	fg_strvec_init(&c->ev.verified);
	fg_strvec_init(&c->ev.reviewer_changed);
	fg_evidence_release(&c->ev);
	c->ev = *ev;
	fg_evidence_init(ev);
	fg_strvec_release(&c->ev.verified);
	c->ev.verified = verified;
	c->ev.reviewer_changed = edited;
	c->ev.no_change = no_change;
	c->ev.advice_only = advice;
}

/* The checks, then the reviewer or the panel when they pass, with ev as
 * the prompts' evidence. *reviewed: a reviewer ran. 0 or EP_STOP_SIGNAL. */
static int checks_then_review(struct ep_loop *l, int k, struct fg_cycle *c, struct fg_evidence *ev,
			      bool *failed, bool *reviewed)
{
	const struct fg_check_result *bad;
	int rc = 0;

	*reviewed = false;
	l->checks.step_dir = l->step_dir;
	rc = ep_checks_run(&l->checks, &l->pid1, k, ev);
	if (rc == EP_CHECKS_CANNOT_RUN) {
		struct fg_buf why;

		fg_buf_init(&why, FG_FEEDBACK_MAX);
		ep_checks_setup_reason(&why, &l->checks, &ev->checks[ev->nchecks - 1]);
		free(l->reason);
		l->reason = fg_buf_detach(&why, NULL);
		return EP_SETUP_ERROR;
	}
	if (rc)
		return EP_STOP_SIGNAL;
	bad = fg_evidence_failed_check(ev);
	l->checks_passed = ev->nchecks && !bad;
	if (bad) {
		checks_cycle(l, k, c, bad);
		return 0;
	}
	if (ev->nchecks)
		ep_tracker_before_reviewer(&l->tr, &l->pid1);
	l->ev = ev;
	*reviewed = true;
	rc = l->cfg.nreviewers ? ep_panel_review(l, k, c) : ep_judge_review(l, k, c, failed);
	l->ev = NULL;
	return rc;
}

int ep_evidence_cycle(struct ep_loop *l, int k, struct fg_cycle *c, bool *failed)
{
	struct fg_strvec changed;
	struct fg_evidence ev;
	bool same = false, reviewed = false;
	int rc = 0;

	fg_evidence_init(&ev);
	fg_strvec_init(&changed);
	ep_tracker_after_worker(&l->tr, &l->pid1, k, l->step_dir, &ev, &same);
	if (same && k > 1 && last_judged(l))
		no_change_cycle(l, k, c);
	else
		rc = checks_then_review(l, k, c, &ev, failed, &reviewed);
	if (rc != EP_STOP_SIGNAL && rc != EP_SETUP_ERROR) {
		if (!c->ev.no_change)
			ep_tracker_after_reviewer(&l->tr, &l->pid1, reviewed ? &changed : NULL);
		if (changed.n)
			reviewer_edited(l, c, &changed, failed);
		take_evidence(c, &ev);
	}
	fg_strvec_release(&changed);
	fg_evidence_release(&ev);
	return rc;
}
