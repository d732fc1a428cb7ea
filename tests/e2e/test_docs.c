/*
 * test_docs.c - the documentation cannot drift from the programs.
 *
 * For each program and subcommand, --help is run for real; every long option
 * (--name) and every environment variable (FORGE_*, AUTO_REVIEW_*) it prints
 * must appear in docs/reference/config.md and in the program's man page (git's
 * doc-vs-help test). The shipped skills/ tree must pass lint, and lint must
 * be able to fail. Every log event the runner's sources can emit is named in
 * docs/guide/operations.md (found by scanning the runner/ sources, not from a list).
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
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
