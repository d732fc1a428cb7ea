/*
 * cli.h - the entrypoint's one message writer (ep_log), used by every part,
 * and the command-line plumbing its subcommands share (usage errors, help).
 */
#ifndef EP_CLI_H
#define EP_CLI_H

#include "forge/exit.h"
#include "forge/msg.h"
#include "forge/opts.h"

/* Bytes of one message line (longer ones are cut and end in "..."). */
#define EP_MESSAGE_MAX 4096

/* Prints "forge-entrypoint: <msg>" (as ep_log() at FG_MSG_INFO) and
 * "try 'forge-entrypoint --help'" on stderr; returns FG_EXIT_USAGE. */
int ep_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for subcommand cmd: "cmd: " before the message, and the hint
 * names that subcommand's --help. */
int ep_cmd_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "usage: <usage>", a description and the option table (borrowed)
 * on stdout; returns 0. */
int ep_help(const char *usage, const char *about, const struct fg_opt *table);

/*
 * The entrypoint's one message writer: prints the message as one line on
 * stderr, FG_MSG_PREFIX ("forge-entrypoint: ") and level's prefix first
 * (forge/msg.h: "" for info, "warning: ", "error: ", "the task failed: ";
 * FG_MSG_PLAIN, for progress lines, prints neither), and flushes it.
 * Controls in the message are escaped as fg_escape_controls() does, so no
 * value quoted in it can start a line (a frame) or rewrite one; the
 * message is cut at EP_MESSAGE_MAX bytes, ending in "...".
 */
void ep_log(enum fg_msg_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
