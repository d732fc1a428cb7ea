/*
 * cycle_evidence.h - a review cycle's evidence, the loop's first stage of
 * each cycle (stage.h): what a cycle rests on besides the reviewer's word.
 * It owns the worker turn's change set (through the tracker, tracker.h),
 * review.md's checks run (checks.h), "no change, no review", and the
 * reviewer that changed the workspace; it calls the single reviewer
 * (judge.h) or the panel (panel.h) with the evidence as their input (the
 * section of their prompts it becomes: ep_stage_with_evidence, stage.h).
 *
 * Protocol: ep_evidence_start() before the first worker run; then, for each
 * review cycle k, ep_evidence_cycle() instead of calling the reviewer (or
 * the panel) directly; ep_evidence_release() at the end.
 */
#ifndef EP_CYCLE_EVIDENCE_H
#define EP_CYCLE_EVIDENCE_H

#include "stage.h"
#include "tracker.h"

/* The change set's first state into tr (when review will run, in->max > 0,
 * and FORGE_CHANGESET is on). 0. */
int ep_evidence_start(struct ep_tracker *tr, const struct ep_stage_in *in);

/*
 * Cycle in->k into out (initialised): the worker turn's change set (tr);
 * after a judged rejection a turn that changed nothing is a no_change
 * cycle (no reviewer); else the checks, and when they pass the reviewer
 * (ep_judge_review) or the panel (ep_panel_review) with the evidence as
 * their input, watched for edits (a reviewer that changed files: its
 * review failed, the worker told). The checks, changes and diff are kept
 * in out->c.ev; out->elapsed is the time of the phase that decided the
 * cycle (the failed check's, the review's; 0 for no change). 0,
 * EP_STOP_SIGNAL or EP_SETUP_ERROR (a check could not run: out->reason
 * says why; out->c then empty).
 */
int ep_evidence_cycle(const struct ep_stage_in *in, struct ep_tracker *tr, struct ep_stage_out *out);

void ep_evidence_release(struct ep_tracker *tr);

#endif
