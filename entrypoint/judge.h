/*
 * judge.h - judging a review for the loop (loop.h): a reviewer's run turned
 * into a judgement (forge/verdict.h), asked once more when its answer holds
 * no verdict (FORGE_REASK), and recorded in its reviewer log
 * (review_cycle_N[.ROLE].reviewer.log: the raw output, then the final text
 * an output format extracted, and a note before each re-ask).
 *
 * The single reviewer's cycle is ep_judge_review(); a panel role's review
 * (panel.c) uses ep_judge_answer() in the role's helper.
 */
#ifndef EP_JUDGE_H
#define EP_JUDGE_H

#include <stdbool.h>

#include "loop.h"
#include "forge/cycle.h"
#include "forge/usage.h"
#include "forge/verdict.h"

/* The feedback of a failed review whose reviewer could not be started at
 * all (its command or interpreter is missing, not executable): the loop
 * ends at once with exit 2 (configuration). Only the judgement of a failed
 * run writes it, so a reviewer's own text cannot pass for it. */
#define EP_JUDGE_UNSTARTABLE "The review could not be completed: the reviewer could not be started: "

/* One reviewer's answer: what the caller gives, then what it got. */
struct ep_judge_call {
	int k;                       /* the review cycle */
	const char *prompt_name;     /* file in tmpdir */
	const char *panel_role;      /* NULL: the single reviewer */
	int log_fd;                  /* its reviewer log, or -1 */
	/* filled by ep_judge_answer() (initialise with ep_judge_call_init) */
	struct fg_judgement j;       /* owned: the judgement of the last run */
	bool failed;                 /* the reviewer could not complete */
	bool reask;                  /* it was asked once more */
	struct fg_usage usage;       /* its runs' usage, summed */
	struct fg_strvec denied;     /* owned: the tools its CLI refused (denied.h) */
	struct fg_agent_runs runs;   /* each run: times, usage, span, failed (phase.h) */
};

/* Sets the caller's fields and empties the results; log_fd is taken
 * (ep_judge_call_release closes it). */
void ep_judge_call_init(struct ep_judge_call *jc, int k, const char *prompt_name,
			const char *panel_role, int log_fd);
/* Frees what jc owns (its judgement, its denied tools) and closes its log. */
void ep_judge_call_release(struct ep_judge_call *jc);

/*
 * Opens step_dir/name for writing as a fresh file (a link or symlink planted
 * under the name is unlinked first, never followed). The fd, or -1 after a
 * warning.
 */
int ep_judge_open_log(const struct ep_loop *l, const char *name);

/*
 * Runs the reviewer on prompt (borrowed) and judges its answer into jc->j
 * (a failed run: rejected, format none, "The review could not be
 * completed: ..."), asking once more when the answer holds no verdict and
 * the task allows it (FORGE_REASK, budget left), and, with review.md
 * require_evidence, once more when it approves without executed evidence
 * (still none: rejected, EP_NO_EVIDENCE_FEEDBACK). Returns 0 or
 * EP_STOP_SIGNAL (jc->j then holds what was judged so far, maybe nothing).
 */
int ep_judge_answer(struct ep_loop *l, struct ep_judge_call *jc, const char *prompt);

/*
 * The single reviewer's cycle k into c (initialised here, stamped,
 * reviewer_log set when the log could be written); *failed: the reviewer
 * could not complete. 0, or EP_STOP_SIGNAL (c then empty).
 */
int ep_judge_review(struct ep_loop *l, int k, struct fg_cycle *c, bool *failed);

#endif
