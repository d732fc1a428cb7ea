/*
 * cli.h - the subcommands of forge-runner, what their parsers share, and
 * the runner's one message writer (rn_msg()).
 *
 * Exit codes (forge/exit.h): run passes the entrypoint's code through,
 * FG_EXIT_TIMEOUT when --timeout ran out, FG_EXIT_RUNTIME when the runner
 * itself failed at run time, FG_EXIT_SIGNAL_BASE+N when ended by signal N;
 * every subcommand exits FG_EXIT_USAGE on a usage or configuration error
 * (nothing was started). watch exits 0 after SIGINT/SIGTERM; sweep exits 0,
 * or FG_EXIT_FAILED when the directory cannot be read.
 */
#ifndef RN_CLI_H
#define RN_CLI_H

#include "forge/exit.h"
#include "forge/msg.h"
#include "forge/opts.h"
#include "log.h"

#define RN_DEFAULT_POLL_INTERVAL 5.0

/* The rows of the options run and watch share, one spelling and help text
 * each: the log's format and level (log.h reads them). */
#define RN_OPT_LOG_FORMAT(id) { (id), "log-format", 0, "FMT", NULL, "text (default) or json" }
#define RN_OPT_LOG_LEVEL(id) \
	{ (id), "log-level", 0, "LEVEL", "FORGE_LOG_LEVEL", "debug, info (default), warn, error" }

/* run's option table: its own options and every engine's (run_config.c
 * builds it once from engine.c's list). */
const struct fg_opt *rn_run_options(void);
extern const struct fg_opt rn_watch_options[];
extern const struct fg_opt rn_sweep_options[];

/* The subcommands; argv[0] is the subcommand's name. Return the exit code. */
int rn_cmd_run(int argc, char **argv);
int rn_cmd_watch(int argc, char **argv);
int rn_cmd_sweep(int argc, char **argv);

/* The runner's own messages on stderr start with this (forge/msg.h). */
#define RN_MSG_PREFIX "forge-runner: "
/* Bytes of one message line (longer ones are cut and end in "..."). */
#define RN_MESSAGE_MAX 4096

/*
 * The runner's one message writer: prints the message as one line on
 * stderr, RN_MSG_PREFIX and level's prefix first (forge/msg.h: "" for
 * info, "warning: ", "error: "; FG_MSG_PLAIN, for the closing line, prints
 * neither), and flushes it. Controls are escaped and the message cut at
 * RN_MESSAGE_MAX bytes as fg_msg_vline() does. The structured log
 * (log.h) is for a run's events; this is for what a command says to its
 * operator.
 */
void rn_msg(enum fg_msg_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "forge-runner: error: CMD: <msg>" (rn_msg()) and "try
 * 'forge-runner CMD --help'" to stderr (cmd NULL: "forge-runner: error:
 * <msg>", "try 'forge-runner --help'"); returns FG_EXIT_USAGE. rn_usage()
 * is the form without a subcommand. */
int rn_cmd_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define rn_usage(...) rn_cmd_usage(NULL, __VA_ARGS__)

/* Prints "usage: <usage>" and the option table to stdout; returns 0. */
int rn_cmd_help(const char *usage, const struct fg_opt *table);

/* --seal-key-file FILE of watch and sweep: the key into *k; 0, or
 * FG_EXIT_USAGE after saying why on stderr. */
struct fg_seal_key;
int rn_seal_key_option(const char *path, struct fg_seal_key *k);

/* Parses a poll interval in seconds (fractional, 0.001 .. 86400). 0 or -EINVAL. */
int rn_parse_interval(const char *s, double *out);

/* Log settings gathered from options and environment. */
struct rn_log_cfg {
	const char *format;     /* NULL: text */
	const char *level;      /* NULL: FORGE_LOG_LEVEL, else info */
	const char *file;       /* NULL: the given stream */
};
/* Sets up l per cfg writing to fp unless a file is named. 0, or FG_EXIT_USAGE
 * after printing the usage error, or FG_EXIT_RUNTIME when the file cannot be opened. */
int rn_log_setup(struct rn_log *l, const struct rn_log_cfg *cfg, FILE *fp);

#endif
