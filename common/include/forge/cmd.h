/*
 * cmd.h - the subcommand table of a program: the one shape both programs
 * dispatch through, and the source of their --help's usage lines and
 * command list (git's table of builtins in git.c is the model). A command
 * is added by one row; no name is typed a second time anywhere.
 *
 * Tier: base (util.h). Uses buf and opts.
 */
#ifndef FORGE_CMD_H
#define FORGE_CMD_H

#include <stddef.h>

struct fg_buf;
struct fg_opt;

/* One subcommand. A row with synopsis NULL is dispatched but never listed
 * (an internal command one program runs of itself). */
struct fg_cmd {
	const char *name;                   /* the word on the command line */
	int (*run)(int argc, char **argv);  /* argv[0] is the name; returns the exit code */
	const char *synopsis;               /* what follows the program's name in a usage line */
	const char *summary;                /* one line for the command list */
	/* The options --help lists under "NAME options:" (a function: a table
	 * may be assembled when first asked for, as run's is from the
	 * engines'), or NULL. */
	const struct fg_opt *(*options)(void);
};

/* The row of cmds (n rows, borrowed) named name, or NULL. */
const struct fg_cmd *fg_cmd_find(const struct fg_cmd *cmds, size_t n, const char *name);

/* The listed command nearest to word (fg_suggest()), or NULL. Borrowed. */
const char *fg_cmd_suggest(const struct fg_cmd *cmds, size_t n, const char *word);

/* Appends the listed names as a phrase: "run, watch, sweep or report". */
void fg_cmd_names(struct fg_buf *b, const struct fg_cmd *cmds, size_t n);

/*
 * Appends the usage block: "usage: PROG SYNOPSIS" for the first listed
 * command, "       PROG SYNOPSIS" for each other one, then
 * "       PROG --help | --version".
 */
void fg_cmd_usage(struct fg_buf *b, const char *prog, const struct fg_cmd *cmds, size_t n);

/* Appends "commands:" and one line per listed command: its name, aligned,
 * and its summary. */
void fg_cmd_list(struct fg_buf *b, const struct fg_cmd *cmds, size_t n);

/* Appends, for each listed command with options, "\nNAME options:\n" and
 * the options (fg_opts_help()). */
void fg_cmd_options(struct fg_buf *b, const struct fg_cmd *cmds, size_t n);

#endif
