/*
 * stage.h - what the review loop's stages share: the read-only input each
 * is given and the output a reviewing stage returns.
 *
 * The loop (loop.h) is one direction: loop -> evidence (cycle_evidence.h)
 * and audit (audit.h) -> judge (judge.h) and panel (panel.h) -> call
 * (call.h) -> agent (agent.h). A stage reads its input, runs what it runs
 * and returns an output; it never reaches back into the loop. The loop
 * alone stamps a cycle (number, skill, times, the worker's run before it),
 * adds usage to the step's totals, checks the budget between stages, fits
 * the cycle into its file, writes it and frames it.
 *
 * Everything in struct ep_stage_in is borrowed from the loop and not
 * changed by a stage, with two exceptions a stage cannot avoid: the signal
 * state (pid1: reading signals and reaping children changes it) and, for
 * the stages that watch the workspace, the change set's tracker, passed
 * beside the input.
 */
#ifndef EP_STAGE_H
#define EP_STAGE_H

#include <stddef.h>

#include "agentenv.h"
#include "checks.h"
#include "pid1.h"
#include "task.h"
#include "forge/cycle.h"
#include "forge/evidence.h"
#include "forge/reviewmd.h"
#include "forge/usage.h"

/* Returned by a stage when an agent run ended because we received a
 * signal (never a process exit code). */
#define EP_STOP_SIGNAL (-1)
/* Returned by a cycle when something of the setup (a check that could not
 * run) ends the step as a configuration error; the output's reason says
 * why. */
#define EP_SETUP_ERROR (-2)

/* The input of a stage; every pointer borrowed. */
struct ep_stage_in {
	const struct ep_task *t;
	const struct fg_review_config *cfg;    /* review.md's configuration */
	int max;                               /* resolved max_retries */
	int k;                                 /* the review cycle the stage is for */
	struct ep_pid1 *pid1;                  /* the signal state (in a panel helper: its own) */
	const struct ep_agentenv *ae;          /* the agents' environments (agentenv.h) */
	const struct ep_checks *checks;        /* review.md's checks (checks.h) */
	const char *step_dir;                  /* W/ + the cycle directory */
	const char *tmpdir;                    /* the private directory (call.h) */
	const char *indir;                     /* the base of the prompt directories (call.h) */
	const char *system_prompt;             /* the single reviewer's, or NULL */
	char *const *role_system;              /* each panel role's, in panel order */
	const struct fg_cycle *hist;           /* the real cycles so far */
	size_t nhist;
	const struct fg_usage_pair *total;     /* the step's totals before this stage */
	const struct fg_evidence *ev;          /* this cycle's evidence (reviewers), or NULL */
};

/* What a reviewing stage (the evidence, the single reviewer, the panel)
 * returns for one cycle. */
struct ep_stage_out {
	/* The cycle's content, not stamped: judgement, reviews, evidence,
	 * the reviewer's usage, denied tools, runs and log, reask, and
	 * reviewer_failed (the single reviewer's; a panel's is in its
	 * reviews). */
	struct fg_cycle c;
	/* The reviewer usage of every run of the stage, also of one that was
	 * stopped: the loop adds it to the step's totals. */
	struct fg_usage spent;
	double elapsed;                        /* seconds of the phase that decided the cycle */
	char *reason;                          /* owned or NULL: why, after EP_SETUP_ERROR */
};

void ep_stage_out_init(struct ep_stage_out *o);
/* Frees what o owns (its cycle, its reason). */
void ep_stage_out_release(struct ep_stage_out *o);

/* The step's totals with a stage's own reviewer usage so far added (own
 * NULL: none) have passed max_cost_usd (*spent, when not NULL and a cost
 * is known: the cost). */
bool ep_stage_over_budget(const struct ep_stage_in *in, const struct fg_usage *own, double *spent);

/* prompt (taken) with in->ev as the reviewers' section appended (the files
 * the worker changed, the checks that passed); prompt itself when there is
 * none. Owned. */
char *ep_stage_with_evidence(const struct ep_stage_in *in, char *prompt);

#endif
