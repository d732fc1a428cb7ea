/*
 * cli.c - the entrypoint's message writer (ep_log()), usage errors and
 * help (see cli.h).
 */
#include "cli.h"
#include "frames.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/text.h"

/* One line, whatever the values quoted in it hold: line breaks and other
 * controls from a task file, a review.md or an agent's failure are escaped
 * (fg_escape_controls), so nothing can start a line of our stderr (a frame,
 * forge/frame.h) or rewrite one on a terminal but us. */
static void vsay(enum fg_msg_level level, const char *fmt, va_list ap)
{
	size_t n;
	char *line = fg_msg_vline(FG_MSG_PREFIX, level, EP_MESSAGE_MAX - 1, fmt, ap, &n);

	if (level == FG_MSG_ERROR || level == FG_MSG_FAILED) {
		/* The runner's failure reason comes from this sealed frame only. */
		char *text = fg_xstrndup(line + FG_MSG_PREFIX_LEN, n - FG_MSG_PREFIX_LEN);
		cJSON *f = cJSON_CreateObject();

		if (!f || !cJSON_AddStringToObject(f, "reason", text))
			abort();
		ep_frame_event("error", f);
		cJSON_Delete(f);
		free(text);
	}
	fputs(line, stderr);
	fflush(stderr);
	free(line);
}

void ep_log(enum fg_msg_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(level, fmt, ap);
	va_end(ap);
}

int ep_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(FG_MSG_INFO, fmt, ap);
	va_end(ap);
	fputs("try 'forge-entrypoint --help'\n", stderr);
	return FG_EXIT_USAGE;
}

int ep_cmd_usage(const char *cmd, const char *fmt, ...)
{
	struct fg_buf b;
	va_list ap;

	fg_buf_init(&b, 8192);
	va_start(ap, fmt);
	fg_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	ep_log(FG_MSG_INFO, "%s: %s", cmd, fg_buf_str(&b));
	fg_buf_release(&b);
	fprintf(stderr, "try 'forge-entrypoint %s --help'\n", cmd);
	return FG_EXIT_USAGE;
}

int ep_help(const char *usage, const char *about, const struct fg_opt *table)
{
	struct fg_buf b;

	fg_buf_init(&b, 64 * 1024);
	fg_buf_addf(&b, "usage: %s\n\n%s\n", usage, about);
	if (table && table->name) {
		fg_buf_adds(&b, "\noptions:\n");
		fg_opts_help(table, &b);
	}
	fputs(fg_buf_str(&b), stdout);
	fg_buf_release(&b);
	return 0;
}
