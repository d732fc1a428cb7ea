/*
 * checks.h - review.md's checks: commands run in the workspace after every
 * worker turn, before any reviewer (docs/guide/auto-review.md, "Checks").
 *
 * Protocol:
 *   1. before the first worker run, ep_checks_preflight(): every check's
 *      program must be startable (found in PATH, or an executable file for
 *      a name with '/', relative names against the workspace) and every
 *      word naming a {skill_dir} path must exist; a check that cannot start
 *      is a configuration error (exit 2, nothing run);
 *   2. after each worker turn, for review cycle k, ep_checks_run(): the
 *      checks in review.md order, each as an agent runs (agent.h: argv
 *      without a shell, its own process group, its timeout_seconds, the
 *      workspace as working directory, stdin empty), stdout and stderr
 *      echoed as "[check:NAME] " lines, kept in review_cycle_k.check.NAME.log
 *      (at most EP_CHECK_LOG_MAX bytes) and, the last FG_CHECK_TAIL_BYTES,
 *      in the result's output_tail. The run stops at the first check that
 *      fails (exit status not 0, killed, timed out, not started);
 *   3. a failure rejects the cycle with ep_checks_feedback() and format
 *      "checks", and no reviewer runs; passing checks go into the
 *      reviewer's prompt (ep_checks_prompt()) and the cycle file;
 *   4. a check that could not run at all (not started, exit status 126 or
 *      127: the shell's "cannot execute" and "not found") is no verdict on
 *      the worker's turn: ep_checks_run() says so (EP_CHECKS_CANNOT_RUN)
 *      and the loop ends the step as a configuration error with
 *      ep_checks_setup_reason() (exit 2, no worker retry).
 * A check's command line takes the agents' placeholders {workspace},
 * {step}, {skill}, {task_key}, {cycle} and {skill_dir} (the directory of
 * the step's review.md, read-only to every agent: where a skill ships its
 * check scripts); its environment is a check's allow-list (agentenv.h: no
 * credential at all, git's overrides, a fresh HOME and TMPDIR) with
 * FORGE_ROLE=check, FORGE_CHECK_NAME=NAME, FORGE_CYCLE=k, FORGE_SKILL_DIR,
 * FORGE_WORKSPACE, FORGE_STEP_NAME, FORGE_SKILL_NAME, FORGE_TASK_KEY and
 * FORGE_RUN_ID.
 */
#ifndef EP_CHECKS_H
#define EP_CHECKS_H

#include "agentenv.h"
#include "pid1.h"
#include "task.h"
#include "forge/buf.h"
#include "forge/evidence.h"
#include "forge/reviewmd.h"

/* A check's log beside the cycle files keeps at most this much. */
#define EP_CHECK_LOG_MAX (8ull * 1024 * 1024)

/* What a run of the checks needs; all borrowed. */
struct ep_checks {
	const struct ep_task *t;
	const struct fg_review_config *cfg;
	const char *step_dir;          /* absolute: logs are written there */
	const struct ep_agentenv *ae;  /* the run's agent environments (agentenv.h) */
	const char *skill_dir;         /* absolute: review.md's directory ({skill_dir}) */
};

/* ep_checks_run(): a check could not run (step 4). */
#define EP_CHECKS_CANNOT_RUN 2

/* Step 1. Logs each problem ("error: check 'tests' cannot start: ..."); 0
 * when every check can start, else FG_EXIT_USAGE. */
int ep_checks_preflight(const struct ep_checks *x);

/* Step 2 for review cycle k: results appended to ev (has_checks set when
 * there is any check). Returns 0, 1 when a stop signal arrived (p's
 * term_sig): the results so far are in ev, the loop must stop, or
 * EP_CHECKS_CANNOT_RUN when the last result of ev could not run (step 4). */
int ep_checks_run(const struct ep_checks *x, struct ep_pid1 *p, int k, struct fg_evidence *ev);

/* The rejection of a failed check r (borrowed), appended to b: which check,
 * its command, how it ended, the tail of its output and its log's name. */
void ep_checks_feedback(struct fg_buf *b, const struct ep_checks *x, const struct fg_check_result *r);

/* Why the step ends when check r (borrowed) could not run, appended to b:
 * which check, its command, how it ended and the tail of its output. */
void ep_checks_setup_reason(struct fg_buf *b, const struct ep_checks *x, const struct fg_check_result *r);

/* The reviewer prompt's evidence: the checks of ev that ran and passed,
 * with their exit codes, durations and output tails. Appends nothing when
 * ev has no check. */
void ep_checks_prompt(struct fg_buf *b, const struct ep_checks *x, const struct fg_evidence *ev);

/* Opens a fresh file name in the directory dir for writing (a planted link
 * or file under that name is unlinked first, never followed). The fd, or
 * -1 after a warning on stderr. */
int ep_step_log_open(const char *dir, const char *name);

#endif
