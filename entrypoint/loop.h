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
 * The loop is loop.c, two helpers of it, and a one-way pipeline of stages
 * (stage.h: each takes a read-only input and returns an output):
 *   loop.c   the phases (configure, start, worker, review cycles) and the
 *            endings (summary, synthetic cycles, blocked, budget); its
 *            state (struct ep_loop) is its own; it alone stamps a cycle,
 *            counts usage, checks the budget between stages, and fits,
 *            writes and frames the cycle record;
 *   setup.c  the run's place before the worker: the cycle directory,
 *            stale files, the agents' box and its isolation line (setup.h);
 *   outcome.c  what the history says besides the verdict (stalled, a
 *            reviewer that cannot start or judged nothing twice) and a
 *            cycle's progress lines (outcome.h);
 * and the stages:
 *   cycle_evidence.c  a cycle's evidence: change set, checks, no change,
 *            reviewer edits; it calls the reviewer or the panel
 *            (cycle_evidence.h);
 *   audit.c  the held-out audit once the loop approved (audit.h);
 *   judge.c  judging a review: the verdict, the re-ask, the reviewer log,
 *            the single reviewer's cycle (judge.h);
 *   panel.c  a reviewer panel: helpers per role and its decisions (panel.h);
 *   call.c   calling an agent: argv, environment, prompt files (call.h).
 * Calls go loop -> evidence, audit -> judge, panel -> call -> agent, never
 * back (tests/entrypoint/test_layers.c). The pure rules (stall, fit,
 * budget) are in common (forge/rules.h).
 */
#ifndef EP_LOOP_H
#define EP_LOOP_H

#include "task.h"

/* Runs the task (borrowed, already loaded). Returns the process exit code. */
int ep_loop_run(const struct ep_task *t);

#endif
