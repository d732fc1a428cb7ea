/*
 * cmd.c - the subcommand table: lookup, suggestion and the help text made
 * from it (see cmd.h).
 */
#include "forge/cmd.h"

#include <string.h>

#include "forge/buf.h"
#include "forge/opts.h"

/* The most listed commands a program has (the suggestion's name list). */
#define CMD_MAX 32

const struct fg_cmd *fg_cmd_find(const struct fg_cmd *cmds, size_t n, const char *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

const char *fg_cmd_suggest(const struct fg_cmd *cmds, size_t n, const char *word)
{
	const char *names[CMD_MAX];
	size_t k = 0;

	for (size_t i = 0; i < n && k < CMD_MAX; i++)
		if (cmds[i].synopsis)
			names[k++] = cmds[i].name;
	return fg_suggest(word, names, k);
}

void fg_cmd_names(struct fg_buf *b, const struct fg_cmd *cmds, size_t n)
{
	size_t listed = 0, seen = 0;

	for (size_t i = 0; i < n; i++)
		listed += cmds[i].synopsis != NULL;
	for (size_t i = 0; i < n; i++) {
		if (!cmds[i].synopsis)
			continue;
		if (seen)
			fg_buf_adds(b, seen + 1 == listed ? " or " : ", ");
		fg_buf_adds(b, cmds[i].name);
		seen++;
	}
}

void fg_cmd_usage(struct fg_buf *b, const char *prog, const struct fg_cmd *cmds, size_t n)
{
	const char *lead = "usage: ";

	for (size_t i = 0; i < n; i++) {
		if (!cmds[i].synopsis)
			continue;
		fg_buf_addf(b, "%s%s %s\n", lead, prog, cmds[i].synopsis);
		lead = "       ";
	}
	fg_buf_addf(b, "%s%s --help | --version\n", lead, prog);
}

void fg_cmd_list(struct fg_buf *b, const struct fg_cmd *cmds, size_t n)
{
	int width = 0;

	for (size_t i = 0; i < n; i++)
		if (cmds[i].synopsis && (int)strlen(cmds[i].name) > width)
			width = (int)strlen(cmds[i].name);
	fg_buf_adds(b, "commands:\n");
	for (size_t i = 0; i < n; i++)
		if (cmds[i].synopsis)
			fg_buf_addf(b, "  %-*s  %s\n", width, cmds[i].name, cmds[i].summary);
}

void fg_cmd_options(struct fg_buf *b, const struct fg_cmd *cmds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!cmds[i].synopsis || !cmds[i].options)
			continue;
		fg_buf_addf(b, "\n%s options:\n", cmds[i].name);
		fg_opts_help(cmds[i].options(), b);
	}
}
