/*
 * test_docs.c - the documentation cannot drift from the programs.
 *
 * For each program and subcommand, --help is run for real; every long option
 * (--name) and every environment variable (FORGE_*, AUTO_REVIEW_*) it prints
 * must appear in docs/reference/config.md and in the program's man page (git's
 * doc-vs-help test), and the other way round: every option the man pages'
 * OPTIONS items and config.md's option rows define is printed by some
 * --help, and each subcommand's SYNOPSIS lists its options. Every exit code
 * the docs and man pages name is one exit.h defines (or 128+N, or an engine
 * CLI's own 126, 127, 137), and each of exit.h's is in exit-codes.md. The
 * shipped skills/ tree must pass lint, and lint must be able to fail. Every log event the runner's sources can emit is named in
 * docs/guide/operations.md (found by scanning the runner/ sources, not from a list).
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"

TestSuite(docs, .timeout = 60);

struct help_case {
	const char *bin;
	const char *man;        /* relative to FG_SOURCE_DIR */
	const char *args[3];    /* subcommand words before --help */
};

static const struct help_case HELP_CASES[] = {
	{ FG_ENTRYPOINT_BIN, "man/forge-entrypoint.1", { NULL } },
	{ FG_ENTRYPOINT_BIN, "man/forge-entrypoint.1", { "run", NULL } },
	{ FG_ENTRYPOINT_BIN, "man/forge-entrypoint.1", { "resolve", NULL } },
	{ FG_ENTRYPOINT_BIN, "man/forge-entrypoint.1", { "config", NULL } },
	{ FG_ENTRYPOINT_BIN, "man/forge-entrypoint.1", { "verdict", NULL } },
	{ FG_ENTRYPOINT_BIN, "man/forge-entrypoint.1", { "lint", NULL } },
	{ FG_ENTRYPOINT_BIN, "man/forge-entrypoint.1", { "agent-output", NULL } },
	{ FG_RUNNER_BIN, "man/forge-runner.1", { NULL } },
	{ FG_RUNNER_BIN, "man/forge-runner.1", { "run", NULL } },
	{ FG_RUNNER_BIN, "man/forge-runner.1", { "watch", NULL } },
	{ FG_RUNNER_BIN, "man/forge-runner.1", { "sweep", NULL } },
	{ FG_RUNNER_BIN, "man/forge-runner.1", { "report", NULL } },
	{ FG_RUNNER_BIN, "man/forge-runner.1", { "reap", NULL } },
};

static char *read_source(const char *rel)
{
	char *path = fgt_fmt("%s/%s", FG_SOURCE_DIR, rel);
	char *s = fgt_read(path, NULL);

	cr_assert_not_null(s, "cannot read '%s'", path);
	free(path);
	return s;
}

/* Man page source as a reader sees it: font escapes (\fB, \fR, \f(CW),
 * zero-width \& and the roff minus \- reduced to plain text. */
static char *man_plain(const char *rel)
{
	char *src = read_source(rel);
	char *out = malloc(strlen(src) + 1);
	size_t o = 0;

	cr_assert_not_null(out);
	for (const char *p = src; *p;) {
		if (p[0] == '\\' && p[1] == 'f' && p[2] == '(' && p[3] && p[4]) {
			p += 5;
		} else if (p[0] == '\\' && p[1] == 'f' && p[2]) {
			p += 3;
		} else if (p[0] == '\\' && (p[1] == '&' || p[1] == '%')) {
			p += 2;
		} else if (p[0] == '\\' && p[1] == '-') {
			out[o++] = '-';
			p += 2;
		} else {
			out[o++] = *p++;
		}
	}
	out[o] = '\0';
	free(src);
	return out;
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* needle occurs in hay as a whole token: "--log" is not in "--log-format",
 * "--step" is not in "a--step", FORGE_X is not in FORGE_X_Y. */
static bool has_token(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		if ((p == hay || !word_char(p[-1])) && !word_char(p[n]))
			return true;
	return false;
}

static bool opt_char(char c)
{
	return islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-';
}

static bool env_char(char c)
{
	return isupper((unsigned char)c) || isdigit((unsigned char)c) || c == '_';
}

/* Length of the option or variable name starting at p (0: none). "FORGE_*"
 * is a wildcard, not a name. */
static size_t token_len(const char *text, const char *p)
{
	size_t prefix, len;
	bool opt;

	if (p > text && word_char(p[-1]))
		return 0;
	opt = p[0] == '-' && p[1] == '-' && islower((unsigned char)p[2]);
	if (opt)
		prefix = 2;
	else if (!strncmp(p, "FORGE_", 6))
		prefix = 6;
	else if (!strncmp(p, "AUTO_REVIEW_", 12))
		prefix = 12;
	else
		return 0;
	len = prefix;
	while (p[len] && (opt ? opt_char(p[len]) : env_char(p[len])))
		len++;
	while (len > prefix && (p[len - 1] == '-' || p[len - 1] == '_'))
		len--;
	return len > prefix ? len : 0;
}

/* Appends to names every distinct long option (--name) and environment
 * variable (FORGE_*, AUTO_REVIEW_*) of text. Returns the new count. */
static size_t collect_tokens(const char *text, char names[][64], size_t n, size_t max)
{
	for (const char *p = text; *p; p++) {
		size_t len = token_len(text, p);
		bool seen = false;

		if (!len)
			continue;
		cr_assert_lt(len, 64, "name too long in --help output");
		for (size_t i = 0; i < n && !seen; i++)
			seen = strlen(names[i]) == len && !strncmp(names[i], p, len);
		if (!seen) {
			cr_assert_lt(n, max, "too many names in --help output");
			memcpy(names[n], p, len);
			names[n++][len] = '\0';
		}
		p += len - 1;
	}
	return n;
}

static char *help_of(const struct help_case *c)
{
	const char *argv[6] = { c->bin };
	struct fgt_proc p;
	size_t k = 1;
	char *out;

	for (size_t i = 0; i < 3 && c->args[i]; i++)
		argv[k++] = c->args[i];
	argv[k++] = "--help";
	argv[k] = NULL;
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 30), 0);
	cr_assert(p.exited && p.exit_code == 0, "%s %s --help: exit %d, stderr: %s", c->bin,
		  c->args[0] ? c->args[0] : "", p.exit_code, p.err);
	out = p.out;
	p.out = NULL;
	fgt_proc_release(&p);
	return out;
}

Test(docs, every_help_option_and_variable_is_in_config_md_and_the_man_page)
{
	char *config = read_source("docs/reference/config.md");
	size_t checked = 0, missing = 0;

	for (size_t i = 0; i < sizeof(HELP_CASES) / sizeof(HELP_CASES[0]); i++) {
		const struct help_case *c = &HELP_CASES[i];
		char *help = help_of(c);
		char *man = man_plain(c->man);
		static char names[256][64];
		size_t n = collect_tokens(help, names, 0, 256);

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
Test(docs, every_engine_of_the_help_is_in_config_md_and_the_man_page)
{
	static const struct help_case run = { FG_RUNNER_BIN, "man/forge-runner.1", { "run", NULL } };
	char *help = help_of(&run), *config = read_source("docs/reference/config.md");
	char *man = man_plain(run.man);
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

Test(docs, token_matching_needs_a_whole_name)
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

Test(docs, help_tokens_are_collected_once_and_trimmed)
{
	static char names[16][64];
	size_t n = collect_tokens("  --skills-dir DIR  [env: FORGE_SKILLS_DIR]\n"
				  "'COMMAND --help'; --skills-dir again, FORGE_*, x--no, --trail-", names, 0, 16);

	cr_assert_eq(n, 4);
	cr_expect_str_eq(names[0], "--skills-dir");
	cr_expect_str_eq(names[1], "FORGE_SKILLS_DIR");
	cr_expect_str_eq(names[2], "--help");
	cr_expect_str_eq(names[3], "--trail");
}

static void expect_no_error_lines(const char *what, const char *text)
{
	cr_expect_null(strstr(text, ": error:"), "%s printed an error: %s", what, text);
}

Test(docs, shipped_skills_pass_lint)
{
	char *skills = fgt_fmt("%s/skills", FG_SOURCE_DIR);
	const char *argv[] = { FG_ENTRYPOINT_BIN, "lint", skills, NULL };
	struct fgt_proc p;

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 30), 0);
	cr_expect(p.exited && p.exit_code == 0, "lint skills/: exit %d\n%s%s", p.exit_code, p.out, p.err);
	expect_no_error_lines("lint skills/ (stdout)", p.out);
	expect_no_error_lines("lint skills/ (stderr)", p.err);
	fgt_proc_release(&p);
	free(skills);
}

Test(docs, lint_fails_on_a_broken_review_md)
{
	char *dir = fgt_tmpdir();
	char *file = fgt_fmt("%s/broken/review.md", dir);
	const char *argv[] = { FG_ENTRYPOINT_BIN, "lint", dir, NULL };
	struct fgt_proc p;

	fgt_write(file, "---\nmax_retries: three\n---\nReview the change.\n");
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 30), 0);
	cr_expect(p.exited && p.exit_code == 1, "lint on a broken review.md: exit %d", p.exit_code);
	cr_expect_not_null(strstr(p.out, "review.md:2: error:"), "no error line for line 2: %s", p.out);
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(file);
	free(dir);
}

/* ---- log events named in the sources vs. the operations guide ---- */

#define MAX_EVENTS 128

struct event_set {
	char name[MAX_EVENTS][64];
	size_t n;
};

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Past the string or character literal starting at p (its closing quote). */
static const char *skip_literal(const char *p)
{
	char q = *p++;

	while (*p && *p != q)
		p += p[0] == '\\' && p[1] ? 2 : 1;
	return *p ? p : p - 1;
}

/* Copy of src with its comments blanked, owned; literals are kept. */
static char *strip_comments(const char *src)
{
	char *out = strdup(src);

	cr_assert_not_null(out);
	for (char *p = out; *p; p++) {
		if (*p == '"' || *p == '\'') {
			p = out + (skip_literal(p) - out);
		} else if (p[0] == '/' && p[1] == '*') {
			char *end = strstr(p + 2, "*/");

			end = end ? end + 2 : p + strlen(p);
			memset(p, ' ', (size_t)(end - p));
			p = end - 1;
		}
	}
	return out;
}

/*
 * Splits the argument list opening at open (a '(') at its top-level commas:
 * starts[i]/ends[i] delimit argument i. Returns the count (at most max), or
 * -1 if the list does not close.
 */
static int split_args(const char *open, const char **starts, const char **ends, int max)
{
	int depth = 0, n = 0;

	starts[0] = open + 1;
	for (const char *p = open + 1; *p; p++) {
		if (*p == '"' || *p == '\'') {
			p = skip_literal(p);
		} else if (*p == '(' || *p == '[' || *p == '{') {
			depth++;
		} else if ((*p == ')' || *p == ']' || *p == '}') && depth > 0) {
			depth--;
		} else if (*p == ')' || (*p == ',' && depth == 0)) {
			if (n < max)
				ends[n] = p;
			n++;
			if (*p == ')')
				return n < max ? n : max;
			if (n < max)
				starts[n] = p + 1;
		}
	}
	return -1;
}

static void add_event(struct event_set *s, const char *name, size_t len)
{
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->name[i]) == len && !strncmp(s->name[i], name, len))
			return;
	cr_assert(s->n < MAX_EVENTS && len < 64, "too many or too long event names");
	memcpy(s->name[s->n], name, len);
	s->name[s->n++][len] = '\0';
}

/* Every string literal in [a, b): `r ? "x_error" : "x"` names two events. */
static void add_literals(struct event_set *s, const char *a, const char *b)
{
	for (const char *p = a; p < b; p++) {
		if (*p == '"') {
			const char *end = skip_literal(p);

			add_event(s, p + 1, (size_t)(end - p - 1));
			p = end;
		}
	}
}

/* Adds the event argument (index idx) of every call of fn in src;
 * declarations (a "const char" among the arguments) are not calls. */
static void scan_calls(struct event_set *s, const char *src, const char *fn, int idx)
{
	size_t len = strlen(fn);

	for (const char *p = strstr(src, fn); p; p = strstr(p + 1, fn)) {
		const char *starts[16], *ends[16];
		int n;

		if ((p > src && ident_char(p[-1])) || p[len] != '(')
			continue;
		n = split_args(p + len, starts, ends, 16);
		if (n <= idx)
			continue;
		if (strstr(starts[0], "const char") && strstr(starts[0], "const char") < ends[n - 1])
			continue;
		add_literals(s, starts[idx], ends[idx]);
	}
}

/*
 * The event names src can log: rn_log_event() and the rn_log() macro of log.h
 * take the event as their third argument, and any function with a
 * `const char *event` parameter (a wrapper such as log_file_event) passes
 * it on, so its calls name events too.
 */
static void scan_events(struct event_set *s, const char *const *srcs, size_t nsrc)
{
	for (size_t g = 0; g < nsrc; g++)
		scan_calls(s, srcs[g], "rn_log", 2);
	for (size_t f = 0; f < nsrc; f++) {
		for (const char *p = strstr(srcs[f], "const char *event"); p;
		     p = strstr(p + 1, "const char *event")) {
			const char *open = p, *name;
			int idx = 0, depth = 0;
			char fn[64];

			for (; open > srcs[f] && (*open != '(' || depth); open--) {
				depth += *open == ')';
				depth -= *open == '(' && depth;
				idx += *open == ',' && !depth;
			}
			for (name = open; name > srcs[f] && ident_char(name[-1]); name--)
				;
			cr_assert(open > name && open - name < 64, "cannot read a wrapper's name");
			memcpy(fn, name, (size_t)(open - name));
			fn[open - name] = '\0';
			for (size_t g = 0; g < nsrc; g++)
				scan_calls(s, srcs[g], fn, idx);
		}
	}
}

static bool has_event(const struct event_set *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return true;
	return false;
}

Test(docs, event_scanner_follows_wrappers_and_ternaries)
{
	const char *src[] = {
		"/* rn_log_event(l, RN_LOG_INFO, \"in_a_comment\", f, 1); */\n"
		"void rn_log_event(struct rn_log *l, enum rn_log_level level, const char *event,\n"
		"\t\t  const struct rn_log_field *fields, size_t nfields);\n"
		"static void wrap(struct s *s, int lvl, const char *event, const char *k)\n"
		"{ rn_log_event(s->log, lvl, event, (struct rn_log_field[]){ RN_LS(k, \"v\") }, 1); }\n"
		"static void g(void) { rn_log_event(l, f(a, b), \"direct\", x, 0);\n"
		"  wrap(s, RN_LOG_WARN, r ? \"bad_one\" : \"good_one\", \"key\");\n"
		"  rn_log(l, RN_LOG_INFO, \"counted\", RN_LS(\"k\", f(a, \"v\")), RN_LI(\"n\", 1)); }\n",
	};
	struct event_set s = { .n = 0 };
	char *stripped = strip_comments(src[0]);

	scan_events(&s, (const char *const *)&stripped, 1);
	free(stripped);
	cr_assert_eq(s.n, 4, "found %zu events", s.n);
	cr_assert(has_event(&s, "direct") && has_event(&s, "bad_one") && has_event(&s, "good_one") &&
		  has_event(&s, "counted"));
}

/* The runner/ C sources, comments blanked; owned. */
static size_t read_runner_sources(char **srcs, size_t max)
{
	char *dir = fgt_fmt("%s/runner", FG_SOURCE_DIR);
	DIR *d = opendir(dir);
	size_t n = 0;

	cr_assert_not_null(d, "cannot open '%s'", dir);
	for (struct dirent *de = readdir(d); de; de = readdir(d)) {
		size_t len = strlen(de->d_name);
		char *path, *text;

		if (len < 3 || strcmp(de->d_name + len - 2, ".c"))
			continue;
		cr_assert_lt(n, max, "too many runner sources");
		path = fgt_fmt("%s/%s", dir, de->d_name);
		text = fgt_read(path, NULL);
		cr_assert_not_null(text, "cannot read '%s'", path);
		srcs[n++] = strip_comments(text);
		free(text);
		free(path);
	}
	closedir(d);
	free(dir);
	return n;
}

Test(docs, every_runner_log_event_is_in_the_operations_guide)
{
	char *srcs[64];
	size_t nsrc = read_runner_sources(srcs, 64);
	char *guide = read_source("docs/guide/operations.md");
	struct event_set s = { .n = 0 };

	scan_events(&s, (const char *const *)srcs, nsrc);
	/* The scanner works on the real tree: a direct call, one through a
	 * wrapper, one behind a ternary. */
	cr_assert(has_event(&s, "run_start") && has_event(&s, "cycle_corrupt") &&
		  has_event(&s, "log_reopen_error"), "the scan found only %zu events", s.n);
	for (size_t i = 0; i < s.n; i++) {
		char *quoted = fgt_fmt("`%s`", s.name[i]);

		cr_expect_not_null(strstr(guide, quoted),
				   "event %s is logged by runner/ but not in docs/guide/operations.md", quoted);
		free(quoted);
	}
	for (size_t i = 0; i < nsrc; i++)
		free(srcs[i]);
	free(guide);
}

/* ---- the other direction: what the docs define exists in --help ---- */

/* Every long option of every --help of bin, collected once (names, n). */
static size_t help_tokens_of(const char *bin, char names[][64], size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(HELP_CASES) / sizeof(HELP_CASES[0]); i++) {
		char *help;

		if (strcmp(HELP_CASES[i].bin, bin))
			continue;
		help = help_of(&HELP_CASES[i]);
		n = collect_tokens(help, names, n, max);
		free(help);
	}
	return n;
}

static bool in_names(char names[][64], size_t n, const char *p, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(names[i]) == len && !strncmp(names[i], p, len))
			return true;
	return false;
}

/* The long option an item head ("--name ARG", "-o, --output FILE") or a
 * table cell defines: the first --name of the line [p, end); 0 if none. */
static size_t first_option(const char *text, const char *p, const char *end, const char **at)
{
	for (; p < end; p++) {
		size_t len = token_len(text, p);

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
Test(docs, every_option_the_man_pages_define_is_in_help)
{
	static const char *const pages[][2] = {
		{ FG_ENTRYPOINT_BIN, "man/forge-entrypoint.1" },
		{ FG_RUNNER_BIN, "man/forge-runner.1" },
	};
	size_t checked = 0;

	for (size_t k = 0; k < 2; k++) {
		static char names[512][64];
		size_t n = help_tokens_of(pages[k][0], names, 512);
		char *man = man_plain(pages[k][1]);
		char *sec = strstr(man, "\n.SH OPTIONS");
		char *stop = sec ? strstr(sec + 1, "\n.SH ") : NULL;

		cr_assert_not_null(sec, "%s has no OPTIONS section", pages[k][1]);
		for (char *tp = strstr(sec, "\n.TP\n"); tp && (!stop || tp < stop); tp = strstr(tp + 1, "\n.TP\n")) {
			const char *head = tp + 5, *end = strchr(head, '\n'), *at;
			size_t len = first_option(man, head, end ? end : head + strlen(head), &at);

			if (!len)
				continue;
			checked++;
			cr_expect(in_names(names, n, at, len), "%s defines '%.*s', which no --help of %s prints",
				  pages[k][1], (int)len, at, pages[k][0]);
		}
		free(man);
	}
	cr_expect_gt(checked, 40, "only %zu man page options found", checked);
}

/* Every option row of docs/reference/config.md (a row whose first cell
 * starts with `--name`) is an option of one of the programs. */
Test(docs, every_option_config_md_defines_is_in_help)
{
	static char names[1024][64];
	size_t n = help_tokens_of(FG_ENTRYPOINT_BIN, names, 1024);
	char *config = read_source("docs/reference/config.md");
	size_t checked = 0;

	n = help_tokens_of(FG_RUNNER_BIN, names + n, 1024 - n) + n;
	for (const char *row = strstr(config, "\n| `-"); row; row = strstr(row + 1, "\n| `-")) {
		const char *cell = row + 3, *end = strchr(cell, '|'), *at;
		size_t len = end ? first_option(config, cell, end, &at) : 0;

		if (!len)
			continue;
		checked++;
		cr_expect(in_names(names, n, at, len), "config.md defines '%.*s', which no --help prints",
			  (int)len, at);
	}
	cr_expect_gt(checked, 40, "only %zu config.md option rows found", checked);
	free(config);
}

/* The SYNOPSIS of each subcommand whose synopsis lists options (not
 * "[options]") lists every option its --help prints. */
Test(docs, each_synopsis_lists_the_subcommands_options)
{
	for (size_t i = 0; i < sizeof(HELP_CASES) / sizeof(HELP_CASES[0]); i++) {
		const struct help_case *c = &HELP_CASES[i];
		char *man, *syn, *key, *start, *end, *help;
		static char names[256][64];
		size_t n;

		if (!c->args[0])
			continue;
		man = man_plain(c->man);
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
		help = help_of(c);
		n = collect_tokens(help, names, 0, 256);
		for (size_t j = 0; j < n; j++)
			if (names[j][0] == '-' && strcmp(names[j], "--help"))
				cr_expect(has_token(start, names[j]), "%s: the synopsis of '%s' lacks %s", c->man,
					  c->args[0], names[j]);
		free(help);
		free(man);
	}
}

/* ---- exit codes: the docs name only codes exit.h defines ---- */

#define MAX_CODES 16

/* The values of exit.h's FG_EXIT_* (FG_EXIT_SIGNAL_BASE included). */
static size_t exit_h_codes(int *codes)
{
	char *h = read_source("common/include/forge/exit.h");
	size_t n = 0;

	for (const char *p = strstr(h, "#define FG_EXIT_"); p; p = strstr(p + 1, "#define FG_EXIT_")) {
		const char *v = p + 8;
		char *end;
		long code;

		while (*v && *v != ' ')
			v++;
		code = strtol(v, &end, 10);
		if (end != v && n < MAX_CODES)
			codes[n++] = (int)code;
	}
	free(h);
	cr_assert_geq(n, 7, "exit.h: only %zu codes read", n);
	return n;
}

/*
 * A code the docs may name: one of exit.h's, 128+N (a signal), or one of
 * the engine CLI's own codes the runner passes through, which
 * exit-codes.md describes: 126, 127 (the command in the container cannot
 * be run) and 137 (the container was killed).
 */
static bool known_code(long code, const int *codes, size_t n)
{
	if (code == 126 || code == 127 || code == 137 || (code > 128 && code < 128 + 65))
		return true;
	for (size_t i = 0; i < n; i++)
		if (codes[i] == code)
			return true;
	return false;
}

/* Checks every "exit N", "exits N", "exit code N", "exit status N" and
 * "`N` |" table cell of text; returns how many were checked. */
static size_t check_codes_in(const char *what, const char *text, const int *codes, size_t n)
{
	static const char *const lead[] = { "exit ", "exits ", "exit code ", "exit status ", "\n| `" };
	size_t checked = 0;

	for (size_t l = 0; l < sizeof(lead) / sizeof(lead[0]); l++) {
		for (const char *p = strstr(text, lead[l]); p; p = strstr(p + 1, lead[l])) {
			const char *v = p + strlen(lead[l]);
			char *end;
			long code;

			if (l < 4 && p > text && ident_char(p[-1]))
				continue;
			v += *v == '`';
			code = strtol(v, &end, 10);
			if (end == v || !isdigit((unsigned char)*v) || isalnum((unsigned char)*end) || *end == '.')
				continue;
			if (l == 4 && strncmp(end, "` |", 3))
				continue;
			checked++;
			cr_expect(known_code(code, codes, n), "%s names exit code %ld, which exit.h does not define",
				  what, code);
		}
	}
	return checked;
}

Test(docs, exit_codes_in_the_docs_are_the_ones_exit_h_defines)
{
	static const char *const files[] = {
		"README.md", "examples/README.md", "docs/architecture.md", "docs/security.md",
		/* Not agents.md: it names the agent CLIs' own codes (Gemini's 55). */
		"docs/guide/auto-review.md", "docs/guide/operations.md",
		"docs/guide/container-image.md", "docs/reference/config.md", "docs/reference/exit-codes.md",
		"docs/reference/cycle-files.md", "docs/reference/report.md", "man/forge-entrypoint.1",
		"man/forge-runner.1",
	};
	int codes[MAX_CODES];
	size_t n = exit_h_codes(codes), checked = 0;
	char *table = read_source("docs/reference/exit-codes.md");

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *text = strstr(files[i], "man/") ? man_plain(files[i]) : read_source(files[i]);

		checked += check_codes_in(files[i], text, codes, n);
		free(text);
	}
	cr_expect_gt(checked, 50, "only %zu exit codes found in the docs", checked);
	/* And each code of exit.h is described in exit-codes.md. */
	for (size_t i = 0; i < n; i++) {
		char *cell = fgt_fmt(codes[i] == 128 ? "`128+N`" : "`%d`", codes[i]);

		cr_expect_not_null(strstr(table, cell), "exit code %d (exit.h) is not in exit-codes.md", codes[i]);
		free(cell);
	}
	free(table);
}

Test(docs, exit_code_scanner_reads_prose_and_tables)
{
	static const int codes[] = { 0, 1, 2, 3, 124, 125, 128 };

	cr_expect_eq(check_codes_in("t", "it exits 2; exit `125`\n| `3` | x |\nexit 1.5 texit 9", codes, 7), 3);
}

/* Each fenced block of lang in text (```lang ... ```), in order: *at the
 * start of the next one's body, its length, 0 when none is left. */
static size_t next_block(const char **at, const char *lang)
{
	char *fence = fgt_fmt("```%s\n", lang);
	const char *open = strstr(*at, fence), *body, *close;
	size_t len = 0;

	if (open) {
		body = open + strlen(fence);
		close = strstr(body, "\n```");
		len = close ? (size_t)(close - body) + 1 : 0;
		*at = body;
	}
	free(fence);
	return len;
}

/* 1 when obj is a claim with access modes and a size (failing the test
 * when it lacks them), 0 for another kind. */
static size_t manifest_claim_ok(const cJSON *obj)
{
	const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(obj, "kind"));
	const cJSON *spec = cJSON_GetObjectItem(obj, "spec");

	cr_assert_not_null(kind, "a manifest without kind");
	if (strcmp(kind, "PersistentVolumeClaim"))
		return 0;
	cr_expect(cJSON_GetArraySize(cJSON_GetObjectItem(spec, "accessModes")) > 0, "no accessModes");
	cr_expect_not_null(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(spec, "resources"), "requests"),
					       "storage"), "no size");
	return 1;
}

/*
 * The Kubernetes workspace guide's examples: every manifest is valid JSON
 * whose claims have what a claim needs (access modes, a size), and every
 * option its forge-runner command lines use is one `run --help` prints.
 */
Test(docs, the_kubernetes_workspace_guides_examples_hold)
{
	char *guide = read_source("docs/guide/kubernetes-workspace.md");
	static char names[512][64];
	size_t n = help_tokens_of(FG_RUNNER_BIN, names, 512), len, claims = 0, options = 0;
	const char *at = guide;

	for (len = next_block(&at, "json"); len; at += len, len = next_block(&at, "json")) {
		cJSON *o = cJSON_ParseWithLength(at, len);
		const cJSON *items = cJSON_GetObjectItem(o, "items"), *it;

		cr_assert_not_null(o, "not JSON: %.*s", (int)len, at);
		if (items) {
			cJSON_ArrayForEach(it, items)
				claims += manifest_claim_ok(it);
		} else {
			claims += manifest_claim_ok(o);
		}
		cJSON_Delete(o);
	}
	cr_expect_eq(claims, 2, "a claim for the test cluster and one for a real cluster");
	at = guide;
	for (len = next_block(&at, "sh"); len; at += len, len = next_block(&at, "sh")) {
		const char *run = strstr(at, "forge-runner run");

		for (const char *p = run; p && p < at + len; p++) {
			size_t tl = p[0] == '-' && p[1] == '-' && (p == run || !isalnum((unsigned char)p[-1]))
					    ? 2 + strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-") : 0;

			if (tl <= 2)
				continue;
			options++;
			cr_expect(in_names(names, n, p, tl), "the guide uses '%.*s', which run --help does not print",
				  (int)tl, p);
			p += tl;
		}
	}
	cr_expect_gt(options, 10, "only %zu options found in the guide's command lines", options);
	free(guide);
}
