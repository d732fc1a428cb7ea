/*
 * cli.h - shared command-line plumbing of forge-entrypoint's subcommands.
 */
#ifndef EP_CLI_H
#define EP_CLI_H

#include "forge/exit.h"
#include "forge/opts.h"

/* Bytes of one message line (longer ones are cut and end in "..."). */
#define EP_MESSAGE_MAX 4096

/* Prints "forge-entrypoint: <msg>" and "try 'forge-entrypoint --help'" on
 * stderr; returns FG_EXIT_USAGE. */
int ep_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "usage: <usage>", a description and the option table (borrowed)
 * on stdout; returns 0. */
int ep_help(const char *usage, const char *about, const struct fg_opt *table);

/* Prints "forge-entrypoint: <msg>" on stderr as one line (controls in the
 * message escaped as fg_escape_controls() does; cut at EP_MESSAGE_MAX bytes
 * with "...") and flushes it. */
void ep_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
