/*
 * judge.h - judging a review, a stage of the loop (stage.h): a reviewer's
 * run turned into a judgement (forge/verdict.h), asked once more when its
 * answer holds no verdict (FORGE_REASK), and recorded in its reviewer log
 * (review_cycle_N[.ROLE].reviewer.log: the raw output, then the final text
 * an output format extracted, and a note before each re-ask).
 *
 * This file owns the answer of one reviewer (ep_judge_answer: the single
 * reviewer, a panel role in its helper, the audit) and the single
 * reviewer's cycle (ep_judge_review). Whether the reviewer failed is
 * decided here once (struct ep_answer's failed) and kept once in the
 * record: the single reviewer's cycle's reviewer_failed, a panel role's
 * review's failed, the audit's outcome.
 */
#ifndef EP_JUDGE_H
#define EP_JUDGE_H

#include <stdbool.h>

#include "stage.h"
#include "forge/buf.h"
#include "forge/phase.h"
#include "forge/usage.h"
#include "forge/verdict.h"

/* The feedback of a failed review whose reviewer could not be started at
 * all (its command or interpreter is missing, not executable): the loop
 * ends at once with exit 2 (configuration). Only the judgement of a failed
 * run writes it, so a reviewer's own text cannot pass for it. */
#define EP_JUDGE_UNSTARTABLE "The review could not be completed: the reviewer could not be started: "

/* What a reviewer is asked; every pointer borrowed. */
struct ep_ask {
	const char *prompt;
	const char *prompt_name;     /* its file in the run's prompt directory */
	const char *panel_role;      /* NULL: the single reviewer (FG_AUDIT_ROLE: the audit) */
	const char *system_text;     /* its system prompt, or NULL */
	int log_fd;                  /* its reviewer log, or -1 (the caller closes it) */
};

/* What it answered. */
struct ep_answer {
	struct fg_judgement j;       /* owned: the judgement of the last run */
	bool failed;                 /* the reviewer could not complete */
	bool reask;                  /* it was asked once more */
	struct fg_usage usage;       /* its runs' usage, summed (a stopped run's too) */
	struct fg_strvec denied;     /* owned: the tools its CLI refused (denied.h) */
	struct fg_agent_runs runs;   /* each run: times, usage, span, failed (phase.h) */
};

void ep_answer_init(struct ep_answer *a);
/* Frees what a owns (its judgement, its denied tools). */
void ep_answer_release(struct ep_answer *a);

/*
 * Runs the reviewer on ask->prompt and judges its answer into out
 * (initialised; a failed run: rejected, format none, "The review could
 * not be completed: ..."), asking once more when the answer holds no
 * verdict and the task allows it (FORGE_REASK, budget left: in's totals
 * plus this answer's usage), and, with review.md require_evidence, once
 * more when it approves without executed evidence (no passing check in
 * in->ev, no "**Verified:**" line; still none: rejected,
 * EP_NO_EVIDENCE_FEEDBACK). Returns 0 or EP_STOP_SIGNAL (out->j then holds
 * what was judged so far, maybe nothing).
 */
int ep_judge_answer(const struct ep_stage_in *in, const struct ep_ask *ask, struct ep_answer *out);

/*
 * The single reviewer's cycle in->k into out (initialised): its judgement,
 * verified lines, usage, denied tools, runs, reask, reviewer_failed and
 * reviewer_log (when the log could be written), and the seconds it took.
 * 0, or EP_STOP_SIGNAL (out->c then empty; out->spent says what its runs
 * cost).
 */
int ep_judge_review(const struct ep_stage_in *in, struct ep_stage_out *out);

#endif
