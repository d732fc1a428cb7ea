/*
 * inspect.h - the inspection subcommands (spec section 2), for skill authors,
 * operators and tests. Each takes the subcommand's own argv (argv[0] is the
 * subcommand name) and returns the process exit code:
 *   resolve --skills-dir DIR --skill NAME [--ticket KEY]
 *           prints the chosen review.md path: 0; none: 1 (prints nothing);
 *           invalid input or unusable skills directory: 2.
 *   config FILE      {"max_retries", "instructions", "warnings"}: 0; unreadable
 *                    argument (missing file): 2.
 *   verdict [FILE|-] {"verdict", "feedback", "format"[, "findings"]}: 0;
 *                    unreadable input: 2. Input beyond the first and last
 *                    4 MiB is dropped, as in the loop (capture.h).
 *   agent-output --format FMT [FILE|-]   see output.h.
 *   lint PATH...     "PATH:LINE: error|warning: msg" lines on stdout; a file
 *                    is linted as it is, a directory is searched recursively
 *                    (symlinks not followed) for files named review.md;
 *                    1 if any error, else 0.
 * Warnings and diagnostics that are not the output go to stderr.
 */
#ifndef EP_INSPECT_H
#define EP_INSPECT_H

#include <stddef.h>

int ep_cmd_resolve(int argc, char **argv);
int ep_cmd_config(int argc, char **argv);
int ep_cmd_verdict(int argc, char **argv);
int ep_cmd_lint(int argc, char **argv);
/* agent-output --format FMT [FILE|-] (cmd_agent_output.c): the adapter's
 * {"ok", "error", "text", "usage", "session_id"}: 0 when the input was
 * read; usage error or unreadable input: 2. */
int ep_cmd_agent_output(int argc, char **argv);

/* Streams path ("-" or NULL: standard input) to feed(ctx, bytes, n) in
 * chunks of at most 64 KiB, so memory does not grow with the input.
 * Returns 0 at end of file, or a negative errno (-EISDIR for a
 * directory); feed may have seen part of the input then. */
int ep_read_input(const char *path, void (*feed)(void *ctx, const void *p, size_t n), void *ctx);

#endif
