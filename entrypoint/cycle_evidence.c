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
#include "forge/alloc.h"
#include "forge/buf.h"

int ep_evidence_start(struct ep_tracker *tr, const struct ep_stage_in *in)
{
	struct ep_tracker_opts o = {
		.on = in->t->changeset && in->max > 0, .git_exclude = in->t->git_exclude,
		.workspace = in->t->workspace, .tmpdir = in->tmpdir, .cycle_dir = in->t->cycle_dir,
	};

	return ep_tracker_start(tr, in->pid1, &o);
}

void ep_evidence_release(struct ep_tracker *tr)
{
	ep_tracker_release(tr);
}

/* A cycle no reviewer ran because check r failed (format checks). */
static void checks_cycle(const struct ep_stage_in *in, struct fg_cycle *c, const struct fg_check_result *r)
{
	struct fg_buf fb;

	c->j.verdict = FG_VERDICT_REJECTED;
	c->j.has_format = true;
	c->j.format = FG_FORMAT_CHECKS;
	fg_buf_init(&fb, FG_FEEDBACK_MAX);
	ep_checks_feedback(&fb, in->checks, r);
	c->j.feedback = fg_buf_detach(&fb, NULL);
}

/* The last cycle judged the work: its reviewer neither failed nor gave
 * no verdict (then the same work is worth a review again). */
static bool last_judged(const struct ep_stage_in *in)
{
	const struct fg_cycle *p = &in->hist[in->nhist - 1];

	return !ep_panel_any_failed(p) && !(p->j.has_format && p->j.format == FG_FORMAT_NONE);
}

/* A worker turn after a rejection that changed nothing: cycle k rejects
 * again with the previous findings, and no reviewer runs. After several
 * such turns in a row the feedback repeated is that of the last cycle
 * that was not one of them, not a nest of "changed nothing" texts. */
static void no_change_cycle(const struct ep_stage_in *in, struct fg_cycle *c)
{
	size_t from = in->nhist - 1;
	const struct fg_cycle *prev;

	while (from > 0 && in->hist[from].ev.no_change)
		from--;
	prev = &in->hist[from];

	c->j.verdict = FG_VERDICT_REJECTED;
	c->ev.no_change = true;
	c->j.feedback = fg_xasprintf("The worker's last turn changed nothing in the workspace: no reviewer "
				     "was asked again. The feedback of cycle %d still stands:\n\n%s", prev->cycle,
				     prev->j.feedback ? prev->j.feedback : "");
	fg_judgement_copy_findings(&c->j, &prev->j);
	ep_log(FG_MSG_INFO, "the worker's turn changed nothing: cycle %d/%d is rejected without a review", in->k,
	       in->max);
}

/* The reviewer (or a role of the panel: they run at the same time, so
 * every role that ran) changed the workspace: its review does not count
 * (failed), the worker is told which files. */
static void reviewer_edited(const struct ep_stage_in *in, struct fg_cycle *c, const struct fg_strvec *changed)
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
	if (!c->has_reviews)
		c->reviewer_failed = true;
	ep_log(FG_MSG_WARN, "reviewer_changed_workspace: cycle %d/%d: the reviewer changed %zu file(s) (%s%s): "
		 "its review failed", in->k, in->max, changed->n, changed->v[0], changed->n > 1 ? ", ..." : "");
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

/* The reviewer or the panel, with ev as their input (their prompts'
 * section, ep_stage_with_evidence). 0 or EP_STOP_SIGNAL. */
static int review(const struct ep_stage_in *in, const struct fg_evidence *ev, struct ep_stage_out *out)
{
	struct ep_stage_in rin = *in;

	rin.ev = ev;
	return in->cfg->nreviewers ? ep_panel_review(&rin, out) : ep_judge_review(&rin, out);
}

/* The checks, then the reviewer or the panel when they pass. *reviewed: a
 * reviewer ran. 0, EP_STOP_SIGNAL or EP_SETUP_ERROR. */
static int checks_then_review(const struct ep_stage_in *in, struct ep_tracker *tr, struct fg_evidence *ev,
			      struct ep_stage_out *out, bool *reviewed)
{
	const struct fg_check_result *bad;
	int rc = 0;

	*reviewed = false;
	rc = ep_checks_run(in->checks, in->pid1, in->k, ev);
	if (rc == EP_CHECKS_CANNOT_RUN) {
		struct fg_buf why;

		fg_buf_init(&why, FG_FEEDBACK_MAX);
		ep_checks_setup_reason(&why, in->checks, &ev->checks[ev->nchecks - 1]);
		free(out->reason);
		out->reason = fg_buf_detach(&why, NULL);
		return EP_SETUP_ERROR;
	}
	if (rc)
		return EP_STOP_SIGNAL;
	bad = fg_evidence_failed_check(ev);
	if (bad) {
		checks_cycle(in, &out->c, bad);
		out->elapsed = bad->duration_seconds;
		return 0;
	}
	if (ev->nchecks)
		ep_tracker_before_reviewer(tr, in->pid1);
	*reviewed = true;
	return review(in, ev, out);
}

int ep_evidence_cycle(const struct ep_stage_in *in, struct ep_tracker *tr, struct ep_stage_out *out)
{
	struct fg_strvec changed;
	struct fg_evidence ev;
	bool same = false, reviewed = false;
	int rc = 0;

	fg_evidence_init(&ev);
	fg_strvec_init(&changed);
	ep_tracker_after_worker(tr, in->pid1, in->k, in->step_dir, &ev, &same);
	if (same && in->k > 1 && last_judged(in))
		no_change_cycle(in, &out->c);
	else
		rc = checks_then_review(in, tr, &ev, out, &reviewed);
	if (rc != EP_STOP_SIGNAL && rc != EP_SETUP_ERROR) {
		if (!out->c.ev.no_change)
			ep_tracker_after_reviewer(tr, in->pid1, reviewed ? &changed : NULL);
		if (changed.n)
			reviewer_edited(in, &out->c, &changed);
		take_evidence(&out->c, &ev);
	}
	fg_strvec_release(&changed);
	fg_evidence_release(&ev);
	return rc;
}
