/*
 * exit.h - the exit codes of forge-entrypoint and forge-runner, one name
 * each (spec: "Exit codes"; docs/reference/exit-codes.md). Code and help
 * texts both use these names (help texts through FG_XSTR() of util.h), so
 * the numbers are written once.
 *
 *   0    success
 *   1    forge-entrypoint: the worker failed (resolve: no review.md
 *        applies; lint: an error was found); forge-runner report: some
 *        results could not be read; forge-runner sweep: the directory
 *        cannot be read
 *   2    usage or configuration error (nothing was started)
 *   3    forge-entrypoint: review exhausted, stalled, blocked or over budget
 *        with AUTO_REVIEW_FAIL_ON_EXHAUSTION=1
 *   4    forge-entrypoint: the loop approved, and the audit (review.md
 *        audit: with blocks: true) disagreed: state audit_rejected
 *   124  forge-runner run: --timeout ran out; forge-entrypoint run: it
 *        stopped itself shortly before FORGE_DEADLINE (the same timeout)
 *   125  the program itself failed at run time (fds 0-2 could not be
 *        opened, the event loop or a result could not be set up or written)
 *   128+N ended by signal N
 */
#ifndef FORGE_EXIT_H
#define FORGE_EXIT_H

#define FG_EXIT_OK 0
#define FG_EXIT_FAILED 1
#define FG_EXIT_USAGE 2
#define FG_EXIT_EXHAUSTED 3
#define FG_EXIT_AUDIT_REJECTED 4
#define FG_EXIT_TIMEOUT 124
#define FG_EXIT_RUNTIME 125
#define FG_EXIT_SIGNAL_BASE 128

#endif
