/*
 * test_docs_help.c - the programs' --help against the reference: every
 * option and variable of each --help is in docs/reference/config.md and
 * the man page, every option they define is in --help, and each synopsis
 * lists its subcommand's options.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fgdocs.h"
#include "fgtest.h"

TestSuite(docs_help, .timeout = 60);

/* needle occurs in hay as a whole token: "--log" is not in "--log-format",
 * "--step" is not in "a--step", FORGE_X is not in FORGE_X_Y. */
static bool has_token(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		if ((p == hay || !fgdoc_word_char(p[-1])) && !fgdoc_word_char(p[n]))
			return true;
	return false;
}

Test(docs_help, every_help_option_and_variable_is_in_config_md_and_the_man_page)
{
	char *config = fgdoc_read_source("docs/reference/config.md");
	size_t checked = 0, missing = 0;

	for (size_t i = 0; i < FGDOC_NHELP; i++) {
		const struct fgdoc_help_case *c = &FGDOC_HELP_CASES[i];
		char *help = fgdoc_help_of(c);
		char *man = fgdoc_man_plain(c->man);
		static char names[256][64];
		size_t n = fgdoc_collect_tokens(help, names, 0, 256);

		cr_expect_gt(n, 0, "no option found in '%s %s --help'", c->bin, c->args[0] ? c->args[0] : "");
		if (c->args[0])
			cr_expect(has_token(man, c->args[0]), "%s: subcommand '%s' not described", c->man,
				  c->args[0]);
		for (size_t j = 0; j < n; j++) {
			bool in_config = has_token(config, names[j]);
			bool in_man = has_token(man, names[j]);

			cr_expect(in_config, "'%s' (from %s %s --help) is missing from docs/reference/config.md",
				  names[j], c->bin, c->args[0] ? c->args[0] : "");
			cr_expect(in_man, "'%s' (from %s %s --help) is missing from %s", names[j], c->bin,
				  c->args[0] ? c->args[0] : "", c->man);
			missing += !in_config + !in_man;
			checked++;
		}
		free(help);
		free(man);
	}
	/* Both programs print at least their ~25 run/watch options and variables. */
	cr_expect_gt(checked, 40, "only %zu names checked: is --help output parsed?", checked);
	cr_expect_eq(missing, 0);
	free(config);
}

/* The engines are listed once, in runner/engine.c: run --help names them
 * from that list, and config.md's --engine row and the man page's --engine
 * entry name each of them. */
Test(docs_help, every_engine_of_the_help_is_in_config_md_and_the_man_page)
{
	static const struct fgdoc_help_case run = { FG_RUNNER_BIN, "man/forge-runner.1", { "run", NULL } };
	char *help = fgdoc_help_of(&run), *config = fgdoc_read_source("docs/reference/config.md");
	char *man = fgdoc_man_plain(run.man);
	const char *line = strstr(help, "--engine ENGINE"), *row = strstr(config, "| `--engine ENGINE` |");
	const char *entry = strstr(man, ".BI --engine \" ENGINE\"");
	size_t engines = 0;

	cr_assert(line && row && entry, "no --engine in the help, config.md or the man page");
	line += strlen("--engine ENGINE");
	for (const char *end = strstr(line, "[env:"); line < end; ) {
		char name[32], *want;
		size_t n;

		line += strspn(line, " ,");
		n = strcspn(line, " ,[");
		if (n == 0 || n >= sizeof(name))
			break;
		snprintf(name, sizeof(name), "%.*s", (int)n, line);
		line += n;
		if (!strcmp(name, "or") || !strcmp(name, "(default)"))
			continue;
		want = fgt_fmt("`%s`", name);
		cr_expect(strstr(row, want) && strstr(row, want) < strchr(row + 1, '\n'),
			  "engine '%s' is not in config.md's --engine row", name);
		free(want);
		cr_expect(has_token(entry, name) && strstr(entry, name) < strstr(entry, ".TP"),
			  "engine '%s' is not in the man page's --engine entry", name);
		engines++;
	}
	cr_expect_geq(engines, 4, "only %zu engines read from: %s", engines, help);
	free(help);
	free(config);
	free(man);
}

Test(docs_help, token_matching_needs_a_whole_name)
{
	static const struct {
		const char *hay, *needle;
		bool want;
	} cases[] = {
		{ "use --log-format json", "--log-format", true },
		{ "use --log-format json", "--log", false },
		{ "`--env NAME`", "--env", true },
		{ "FORGE_AGENT_TIMEOUT_X", "FORGE_AGENT_TIMEOUT", false },
		{ "| `FORGE_AGENT_TIMEOUT` |", "FORGE_AGENT_TIMEOUT", true },
		{ "a--step", "--step", false },
		{ "report", "report", true },
		{ "reports", "report", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(has_token(cases[i].hay, cases[i].needle), cases[i].want, "'%s' in '%s'",
			     cases[i].needle, cases[i].hay);
}

Test(docs_help, help_tokens_are_collected_once_and_trimmed)
{
	static char names[16][64];
	size_t n = fgdoc_collect_tokens("  --skills-dir DIR  [env: FORGE_SKILLS_DIR]\n"
				  "'COMMAND --help'; --skills-dir again, FORGE_*, x--no, --trail-", names, 0, 16);

	cr_assert_eq(n, 4);
	cr_expect_str_eq(names[0], "--skills-dir");
	cr_expect_str_eq(names[1], "FORGE_SKILLS_DIR");
	cr_expect_str_eq(names[2], "--help");
	cr_expect_str_eq(names[3], "--trail");
}

/* The long option an item head ("--name ARG", "-o, --output FILE") or a
 * table cell defines: the first --name of the line [p, end); 0 if none. */
static size_t first_option(const char *text, const char *p, const char *end, const char **at)
{
	for (; p < end; p++) {
		size_t len = fgdoc_token_len(text, p);

		if (len && p[0] == '-') {
			*at = p;
			return len;
		}
	}
	return 0;
}

/*
 * Every option the man page's OPTIONS section defines (the head line of
 * each .TP item) is an option of the program's --help: a removed or renamed
 * option cannot stay documented.
 */
Test(docs_help, every_option_the_man_pages_define_is_in_help)
{
	static const char *const pages[][2] = {
		{ FG_ENTRYPOINT_BIN, "man/forge-entrypoint.1" },
		{ FG_RUNNER_BIN, "man/forge-runner.1" },
	};
	size_t checked = 0;

	for (size_t k = 0; k < 2; k++) {
		static char names[512][64];
		size_t n = fgdoc_help_tokens_of(pages[k][0], names, 512);
		char *man = fgdoc_man_plain(pages[k][1]);
		char *sec = strstr(man, "\n.SH OPTIONS");
		char *stop = sec ? strstr(sec + 1, "\n.SH ") : NULL;

		cr_assert_not_null(sec, "%s has no OPTIONS section", pages[k][1]);
		for (char *tp = strstr(sec, "\n.TP\n"); tp && (!stop || tp < stop); tp = strstr(tp + 1, "\n.TP\n")) {
			const char *head = tp + 5, *end = strchr(head, '\n'), *at;
			size_t len = first_option(man, head, end ? end : head + strlen(head), &at);

			if (!len)
				continue;
			checked++;
			cr_expect(fgdoc_in_names(names, n, at, len), "%s defines '%.*s', which no --help of %s prints",
				  pages[k][1], (int)len, at, pages[k][0]);
		}
		free(man);
	}
	cr_expect_gt(checked, 40, "only %zu man page options found", checked);
}

/* Every option row of docs/reference/config.md (a row whose first cell
 * starts with `--name`) is an option of one of the programs. */
Test(docs_help, every_option_config_md_defines_is_in_help)
{
	static char names[1024][64];
	size_t n = fgdoc_help_tokens_of(FG_ENTRYPOINT_BIN, names, 1024);
	char *config = fgdoc_read_source("docs/reference/config.md");
	size_t checked = 0;

	n = fgdoc_help_tokens_of(FG_RUNNER_BIN, names + n, 1024 - n) + n;
	for (const char *row = strstr(config, "\n| `-"); row; row = strstr(row + 1, "\n| `-")) {
		const char *cell = row + 3, *end = strchr(cell, '|'), *at;
		size_t len = end ? first_option(config, cell, end, &at) : 0;

		if (!len)
			continue;
		checked++;
		cr_expect(fgdoc_in_names(names, n, at, len), "config.md defines '%.*s', which no --help prints",
			  (int)len, at);
	}
	cr_expect_gt(checked, 40, "only %zu config.md option rows found", checked);
	free(config);
}

/* The SYNOPSIS of each subcommand whose synopsis lists options (not
 * "[options]") lists every option its --help prints. */
Test(docs_help, each_synopsis_lists_the_subcommands_options)
{
	for (size_t i = 0; i < FGDOC_NHELP; i++) {
		const struct fgdoc_help_case *c = &FGDOC_HELP_CASES[i];
		char *man, *syn, *key, *start, *end, *help;
		static char names[256][64];
		size_t n;

		if (!c->args[0])
			continue;
		man = fgdoc_man_plain(c->man);
		syn = strstr(man, "\n.SH SYNOPSIS");
		cr_assert_not_null(syn, "%s has no SYNOPSIS", c->man);
		key = fgt_fmt("\n.B %s\n", c->args[0]);
		start = strstr(syn, key);
		free(key);
		end = start ? strstr(start, "\n.YS") : NULL;
		if (!start || !end || end > strstr(syn + 1, "\n.SH ")) {
			free(man);
			continue;   /* no synopsis of its own: the default command */
		}
		*end = '\0';
		if (strstr(start, "options")) {
			free(man);
			continue;
		}
		help = fgdoc_help_of(c);
		n = fgdoc_collect_tokens(help, names, 0, 256);
		for (size_t j = 0; j < n; j++)
			if (names[j][0] == '-' && strcmp(names[j], "--help"))
				cr_expect(has_token(start, names[j]), "%s: the synopsis of '%s' lacks %s", c->man,
					  c->args[0], names[j]);
		free(help);
		free(man);
	}
}
