/*
 * loop.h - `forge-entrypoint run`: the worker, then the review loop.
 *
 * Order of events:
 *   1. resolve review.md and read its configuration (a missing skills
 *      directory, an invalid name, or review asked for while
 *      FORGE_REVIEWER_CMD is unset: exit 2 before any agent runs);
 *   2. run the worker (cycle 0); failure: exit 1 (no summary: the review
 *      phase was not reached);
 *   3. no review.md: summary "no_review", exit 0; max_retries 0: summary
 *      "disabled", exit 0;
 *   4. for cycle 1..max: reviewer, verdict, review_cycle_N.json (+ raw
 *      review_cycle_N.reviewer.log), progress line; approved: summary
 *      "approved", exit 0; rejected with cycles left: worker retry with the
 *      feedback; a failed retry: synthetic review_cycle_{max}.json,
 *      summary "failed", exit 1; two identical rejections in a row with
 *      stop_when_stalled: summary "stalled"; rejected at max: "exhausted";
 *      exhausted/stalled exit 0, or 3 with AUTO_REVIEW_FAIL_ON_EXHAUSTION=1;
 *   5. SIGTERM/SIGINT at any time: forwarded to the running agent's group,
 *      which gets the grace period, then SIGKILL; no further file is
 *      written (a summary would claim an end the loop never reached); exit
 *      128 + signal.
 * Prompt files live in a private temporary directory ($TMPDIR or /tmp,
 * "forge-ep.XXXXXX", mode 0700), removed before returning.
 */
#ifndef EP_LOOP_H
#define EP_LOOP_H

#include "task.h"

/* Longest system prompt given as one argument ({system_prompt}); Linux
 * refuses a single argument over 128 KiB (MAX_ARG_STRLEN). */
#define EP_SYSTEM_ARG_MAX (96u * 1024)

/* Raw reviewer output kept per cycle in review_cycle_N.reviewer.log. */
#define EP_REVIEWER_LOG_MAX (32ull * 1024 * 1024)

/* Runs the task (borrowed, already loaded). Returns the process exit code. */
int ep_loop_run(const struct ep_task *t);

#endif
