/*
 * loop.h - `forge-entrypoint run`: the worker, then the review loop.
 *
 * Order of events:
 *   1. resolve review.md and read its configuration (a missing skills
 *      directory, an invalid name, or review asked for while
 *      FORGE_REVIEWER_CMD is unset: exit 2 before any agent runs), then
 *      the preflight (preflight.h: commands in PATH, preset credentials,
 *      a writable cycle directory; exit 2 before anything is created,
 *      cleared or written);
 *   2. run the worker (cycle 0); failure: summary "failed" (cause
 *      worker_failed, no cycle), exit 1;
 *   3. no review.md: summary "no_review", exit 0; max_retries 0: summary
 *      "disabled", exit 0;
 *   4. for cycle 1..max: reviewer, verdict, review_cycle_N.json (+ raw
 *      review_cycle_N.reviewer.log), progress line; approved: the audit
 *      when review.md has audit: (audit.h), then summary "approved", exit
 *      0 (a blocking audit that disagreed: "audit_rejected", exit 4);
 *      rejected with cycles left: worker retry with the
 *      feedback; a failed retry: synthetic review_cycle_{max}.json,
 *      summary "failed" (worker_failed), exit 1; a check that could not
 *      run: summary "failed" (config_error), exit 2; two identical rejections in a row with
 *      stop_when_stalled: summary "stalled"; rejected at max: "exhausted";
 *      exhausted/stalled exit 0, or 3 with AUTO_REVIEW_FAIL_ON_EXHAUSTION=1;
 *   5. SIGTERM/SIGINT at any time: forwarded to the running agent's group,
 *      which gets the grace period, then SIGKILL; no further cycle file is
 *      written, the summary says "failed" (cause interrupted); exit
 *      128 + signal. Shortly before FORGE_DEADLINE (pid1.h) the same
 *      stop, but cause timeout and exit 124.
 * Before the worker, the box (sandbox.h): the `isolation` line, and with
 * FORGE_REQUIRE_ISOLATION=1 and no Landlock, exit 2. Prompt files live in
 * a prompt directory per agent run (call.h), removed with it.
 *
 * The loop is four files around one state (struct ep_loop, below):
 *   loop.c   the phases (configure, start, worker, review cycles) and the
 *            endings (summary, synthetic cycles, blocked, budget);
 *   call.c   calling an agent: argv, environment, prompt files, usage
 *            (call.h);
 *   judge.c  judging a review: the verdict, the re-ask, the reviewer log,
 *            the single reviewer's cycle (judge.h);
 *   panel.c  a reviewer panel: helpers per role and its decisions (panel.h);
 *   cycle_evidence.c  a cycle's evidence: change set, checks, no change,
 *            reviewer edits (cycle_evidence.h);
 *   audit.c  the held-out audit once the loop approved (audit.h).
 * The pure rules (stall, fit, budget) are in common (forge/rules.h).
 */
#ifndef EP_LOOP_H
#define EP_LOOP_H

#include <stdbool.h>
#include <stddef.h>

#include "agentenv.h"
#include "checks.h"
#include "pid1.h"
#include "task.h"
#include "tracker.h"
#include "forge/audit.h"
#include "forge/cycle.h"
#include "forge/isolation.h"
#include "forge/reviewmd.h"
#include "forge/summary.h"
#include "forge/usage.h"

/* Longest system prompt given as one argument ({system_prompt}); Linux
 * refuses a single argument over 128 KiB (MAX_ARG_STRLEN). */
#define EP_SYSTEM_ARG_MAX (96u * 1024)

/* Raw reviewer output kept per cycle in review_cycle_N.reviewer.log. */
#define EP_REVIEWER_LOG_MAX (32ull * 1024 * 1024)

/* Runs the task (borrowed, already loaded). Returns the process exit code. */
int ep_loop_run(const struct ep_task *t);

/* ---- internals shared by loop.c, call.c, judge.c and panel.c ------------ */

/* Returned by the loop's steps when an agent run ended because we received
 * a signal (never a process exit code). */
#define EP_STOP_SIGNAL (-1)
/* Returned by a cycle when something of the setup (a check that could not
 * run) ends the step as a configuration error; l->reason says why. */
#define EP_SETUP_ERROR (-2)

/* The state of one run; owned by ep_loop_run(), borrowed by the others. */
struct ep_loop {
	const struct ep_task *t;
	struct ep_pid1 pid1;
	char *tmpdir;                 /* owned: the private directory (call.h), hidden from agents */
	char *indir;                  /* owned: the base of the agents' prompt directories (call.h) */
	struct fg_isolation iso;      /* the agents' box (sandbox.h), in the summary */
	char *step_dir;               /* owned: W/ + fg_cycle_dir() */
	char *review_md;              /* owned or NULL */
	struct fg_review_config cfg;
	int max;                      /* resolved max_retries */
	struct fg_cycle *hist;        /* owned: real cycles so far */
	bool *reviewer_failed;        /* parallel to hist */
	size_t nhist;
	char *system_prompt;          /* owned: the reviewer's, once review starts */
	char *role_system[FG_REVIEWERS_MAX];  /* owned: each panel role's system prompt */
	struct fg_usage worker_last;  /* the last worker run's usage, for the next cycle */
	struct fg_agent_run worker_run;  /* the last worker run's record, for the next cycle */
	struct fg_phase step_t;       /* the step: from the start to the summary */
	struct fg_strvec worker_denied;  /* the tools refused to the last worker run */
	struct fg_usage_pair total;   /* the step's totals */
	const struct fg_cycle *blocked_by;  /* the cycle whose questions a blocked summary lists */
	bool checks_passed;           /* this cycle's checks ran and passed (evidence) */
	struct ep_checks checks;      /* review.md's checks (checks.h) */
	const struct fg_evidence *ev; /* this cycle's evidence while its reviewers run, or NULL */
	struct ep_tracker tr;         /* the workspace's states (tracker.h) */
	struct fg_audit *audit;       /* owned or NULL: the audit's record, once it was decided */
	char *audit_system;           /* owned: the audit's system prompt, once it runs */
	struct ep_agentenv ae;        /* the agents' environments and HOMEs (agentenv.h) */
	char *skill_dir;              /* owned or NULL: review.md's directory, absolute */
	char *reason;                 /* owned or NULL: why the step failed (the summary's) */
	enum fg_failure_cause cause;  /* why the step failed (FG_CAUSE_NONE: not) */
};

/*
 * Stamps c as cycle n of this run: cycle, max_cycles, skill, run_id (none
 * when the task has none), elapsed_seconds, the worker usage, run record
 * and denied tools before it and the timestamp (now). The one place a cycle gets these.
 */
void ep_loop_stamp(const struct ep_loop *l, struct fg_cycle *c, int n, double elapsed);

/* True when the step's reported cost has passed max_cost_usd (*spent, when
 * not NULL and a cost is known: the cost). */
bool ep_loop_over_budget(const struct ep_loop *l, double *spent);

#endif
