/*
 * cli.c - the runner's message writer and the helpers its subcommand
 * parsers share: usage errors, help, the seal key, intervals, the log
 * (see cli.h).
 */
#include "cli.h"
#include "forge/seal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/buf.h"
#include "forge/num.h"

void rn_msg(enum fg_msg_level level, const char *fmt, ...)
{
	va_list ap;
	char *line;

	va_start(ap, fmt);
	line = fg_msg_vline(RN_MSG_PREFIX, level, RN_MESSAGE_MAX - 1, fmt, ap, NULL);
	va_end(ap);
	fputs(line, stderr);
	fflush(stderr);
	free(line);
}

int rn_cmd_usage(const char *cmd, const char *fmt, ...)
{
	struct fg_buf b;
	va_list ap;

	fg_buf_init(&b, RN_MESSAGE_MAX);
	va_start(ap, fmt);
	fg_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	if (cmd)
		rn_msg(FG_MSG_ERROR, "%s: %s", cmd, fg_buf_str(&b));
	else
		rn_msg(FG_MSG_ERROR, "%s", fg_buf_str(&b));
	fg_buf_release(&b);
	rn_msg(FG_MSG_PLAIN, "try 'forge-runner%s%s --help'", cmd ? " " : "", cmd ? cmd : "");
	return FG_EXIT_USAGE;
}

int rn_seal_key_option(const char *path, struct fg_seal_key *k)
{
	char err[512] = "";

	if (!fg_seal_key_load(path, k, err, sizeof(err)))
		return 0;
	return rn_usage("--seal-key-file: %s", err);
}

int rn_parse_interval(const char *s, double *out)
{
	return fg_parse_double(s, 0.001, 86400.0, out) ? -EINVAL : 0;
}

int rn_log_setup(struct rn_log *l, const struct rn_log_cfg *cfg, FILE *fp)
{
	enum rn_log_format fmt = RN_LOG_TEXT;
	enum rn_log_level lvl = RN_LOG_INFO;
	const char *level = cfg->level ? cfg->level : getenv("FORGE_LOG_LEVEL");
	int r;

	if (cfg->format && rn_log_format_parse(cfg->format, &fmt))
		return rn_usage("invalid log format '%s' (text or json)", cfg->format);
	if (level && *level && rn_log_level_parse(level, &lvl))
		return rn_usage("invalid log level '%s' (debug, info, warn or error)", level);
	rn_log_init(l, fmt, lvl, fp);
	if (!cfg->file)
		return 0;
	r = rn_log_open_file(l, cfg->file);
	if (r) {
		rn_msg(FG_MSG_ERROR, "cannot open log file '%s': %s", cfg->file, strerror(-r));
		return FG_EXIT_RUNTIME;
	}
	return 0;
}

int rn_cmd_help(const char *usage, const struct fg_opt *table)
{
	struct fg_buf b;

	fg_buf_init(&b, 64 * 1024);
	fg_buf_addf(&b, "usage: %s\n\noptions:\n", usage);
	fg_opts_help(table, &b);
	fputs(fg_buf_str(&b), stdout);
	fflush(stdout);
	fg_buf_release(&b);
	return 0;
}
