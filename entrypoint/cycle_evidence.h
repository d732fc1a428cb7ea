/*
 * cycle_evidence.h - what a review cycle rests on besides the reviewer's
 * word (issue 23), for the loop (loop.h): the worker turn's change set
 * (tracker.h), review.md's checks (checks.h), no change no review, and the
 * reviewer that changed the workspace.
 *
 * Protocol: ep_evidence_start() before the first worker run; then, for each
 * review cycle k, ep_evidence_cycle() instead of calling the reviewer (or
 * the panel) directly; the reviewer prompts are passed through
 * ep_evidence_prompt() (judge.c, panel.c); ep_evidence_release() at the end.
 */
#ifndef EP_CYCLE_EVIDENCE_H
#define EP_CYCLE_EVIDENCE_H

#include <stdbool.h>

#include "loop.h"
#include "forge/cycle.h"

/* The change set's first state (when review will run and FORGE_CHANGESET
 * is on). 0. */
int ep_evidence_start(struct ep_loop *l);

/*
 * Cycle k into c: the worker turn's change set; after a judged rejection a
 * turn that changed nothing is a no_change cycle (no reviewer); else the
 * checks, and when they pass the reviewer (ep_judge_review) or the panel
 * (ep_panel_review) with the evidence in its prompt, watched for edits (a
 * reviewer that changed files: its review failed, *failed set, the worker
 * told). The checks, changes and diff are kept in c->ev. 0,
 * EP_STOP_SIGNAL or EP_SETUP_ERROR (a check could not run: l->reason says
 * why; c then empty).
 */
int ep_evidence_cycle(struct ep_loop *l, int k, struct fg_cycle *c, bool *failed);

/* p (taken) with this cycle's evidence appended (the files the worker
 * changed, the checks that passed); p itself when there is none. */
char *ep_evidence_prompt(const struct ep_loop *l, char *p);

void ep_evidence_release(struct ep_loop *l);

#endif
