/*
 * cli.c - usage errors and help (see cli.h).
 */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>

#include "forge/buf.h"

static void vsay(const char *fmt, va_list ap)
{
	fputs("forge-entrypoint: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void ep_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

int ep_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	fputs("try 'forge-entrypoint --help'\n", stderr);
	return EP_EXIT_USAGE;
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
