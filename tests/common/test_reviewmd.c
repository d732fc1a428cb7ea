/*
 * test_reviewmd.c - the review.md parser, loader and lint, case by case
 * against docs/reference/review-md-schema.md.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgtest.h"
#include "forge/buf.h"
#include "forge/alloc.h"
#include "forge/reviewmd.h"

TestSuite(reviewmd, .timeout = 60);

#define FIX FG_FIXTURES_DIR "/reviewmd/"

/* Expectation for one diagnostic (or none when sub is NULL). */
struct want_diag {
	enum fg_diag_level level;
	int line;
	const char *sub;
};

struct pcase {
	const char *what;
	const char *data;
	size_t len;                 /* 0: strlen(data) */
	int max;
	enum fg_retries_source src;
	const char *instr;
	int has_fm;
	struct want_diag diag;      /* the only diagnostic expected, or sub NULL: none */
};

static void check_diag(const struct fg_diags *d, const struct want_diag *w, const char *what)
{
	if (!w->sub) {
		cr_assert_eq(d->n, 0, "%s: unexpected diagnostic '%s'", what, d->n ? d->v[0].msg : "");
		return;
	}
	cr_assert_eq(d->n, 1, "%s: %zu diagnostics (first '%s')", what, d->n, d->n ? d->v[0].msg : "");
	cr_assert_eq(d->v[0].level, w->level, "%s: level of '%s'", what, d->v[0].msg);
	cr_assert_eq(d->v[0].line, w->line, "%s: line %d of '%s'", what, d->v[0].line, d->v[0].msg);
	cr_assert(strstr(d->v[0].msg, w->sub), "%s: '%s' lacks '%s'", what, d->v[0].msg, w->sub);
}

#define E(l, s) { FG_DIAG_ERROR, l, s }
#define W(l, s) { FG_DIAG_WARNING, l, s }
#define NONE { FG_DIAG_WARNING, 0, NULL }
#define FM FG_RETRIES_FRONTMATTER
#define DEF FG_RETRIES_DEFAULT

static const struct pcase parse_cases[] = {
	/* The schema's edge cases. */
	{ "empty file", "", 0, 3, DEF, "", 0, NONE },
	{ "whitespace only", " \n\t\n  \r\n", 0, 3, DEF, "", 0, NONE },
	{ "frontmatter only", "---\nmax_retries: 5\n---\n", 0, 5, FM, "", 1, NONE },
	{ "frontmatter only, no final newline", "---\nmax_retries: 5\n---", 0, 5, FM, "", 1, NONE },
	{ "no frontmatter", "Review the code for bugs and style issues.\n", 0, 3, DEF,
	  "Review the code for bugs and style issues.", 0, NONE },
	{ "schema example", "---\nmax_retries: 5\n---\n\n# Review Instructions\n\nVerify it...\n", 0, 5,
	  FM, "# Review Instructions\n\nVerify it...", 1, NONE },
	{ "schema malformed example", "---\nmax_retries: \"not a number\"\n---\n\nInstructions here...\n",
	  0, 3, DEF, "Instructions here...", 1, E(2, "quoted string") },
	/* max_retries types. */
	{ "quoted integer", "---\nmax_retries: \"3\"\n---\nb", 0, 3, DEF, "b", 1, E(2, "'3' (a quoted string)") },
	{ "single quoted", "---\nmax_retries: '4'\n---\nb", 0, 3, DEF, "b", 1, E(2, "quoted string") },
	{ "float", "---\nmax_retries: 3.0\n---\nb", 0, 3, DEF, "b", 1, E(2, "(a float)") },
	{ "exponent", "---\nmax_retries: 1e2\n---\nb", 0, 3, DEF, "b", 1, E(2, "(a float)") },
	{ "infinity", "---\nmax_retries: .inf\n---\nb", 0, 3, DEF, "b", 1, E(2, "(a float)") },
	{ "bool", "---\nmax_retries: true\n---\nb", 0, 3, DEF, "b", 1, E(2, "(a boolean)") },
	{ "yaml 1.1 bool", "---\nmax_retries: yes\n---\nb", 0, 3, DEF, "b", 1, E(2, "(a boolean)") },
	{ "negative", "---\nmax_retries: -1\n---\nb", 0, 3, DEF, "b", 1, E(2, "negative") },
	{ "plus sign", "---\nmax_retries: +3\n---\nb", 0, 3, DEF, "b", 1, E(2, "signed") },
	{ "hex", "---\nmax_retries: 0x10\n---\nb", 0, 3, DEF, "b", 1, E(2, "hexadecimal or octal") },
	{ "octal", "---\nmax_retries: 0o7\n---\nb", 0, 3, DEF, "b", 1, E(2, "hexadecimal or octal") },
	{ "leading zero", "---\nmax_retries: 010\n---\nb", 0, 3, DEF, "b", 1, E(2, "leading zero") },
	{ "above limit", "---\nmax_retries: 101\n---\nb", 0, 3, DEF, "b", 1, E(2, "above the limit") },
	{ "huge", "---\nmax_retries: 99999999999999999999999\n---\nb", 0, 3, DEF, "b", 1,
	  E(2, "above the limit") },
	{ "limit", "---\nmax_retries: 100\n---\nb", 0, 100, FM, "b", 1, NONE },
	{ "zero disables", "---\nmax_retries: 0\n---\nb", 0, 0, FM, "b", 1, NONE },
	{ "null", "---\nmax_retries:\n---\nb", 0, 3, DEF, "b", 1, E(2, "(null)") },
	{ "tilde", "---\nmax_retries: ~\n---\nb", 0, 3, DEF, "b", 1, E(2, "(null)") },
	{ "word", "---\nmax_retries: three\n---\nb", 0, 3, DEF, "b", 1, E(2, "(a string)") },
	{ "mapping", "---\nmax_retries:\n  value: 3\n---\nb", 0, 3, DEF, "b", 1, E(3, "(a mapping)") },
	{ "flow mapping", "---\nmax_retries: {a: 1}\n---\nb", 0, 3, DEF, "b", 1, E(2, "(a mapping)") },
	{ "sequence", "---\nmax_retries: [3]\n---\nb", 0, 3, DEF, "b", 1, E(2, "(a sequence)") },
	{ "block scalar", "---\nmax_retries: |\n  3\n---\nb", 0, 3, DEF, "b", 1, E(2, "block string") },
	{ "str tag", "---\nmax_retries: !!str 3\n---\nb", 0, 3, DEF, "b", 1, E(2, "tagged") },
	{ "int tag", "---\nmax_retries: !!int 3\n---\nb", 0, 3, FM, "b", 1, NONE },
	{ "alias", "---\nx: &n 4\nmax_retries: *n\n---\nb", 0, 3, DEF, "b", 1, E(3, "(an alias)") },
	{ "anchored value", "---\nmax_retries: &n 4\n---\nb", 0, 4, FM, "b", 1, NONE },
	{ "comment after value", "---\nmax_retries: 4 # four\n---\nb", 0, 4, FM, "b", 1, NONE },
	{ "quoted key", "---\n\"max_retries\": 4\n---\nb", 0, 4, FM, "b", 1, NONE },
	{ "duplicate, last wins", "---\nmax_retries: 2\nmax_retries: 7\n---\nb", 0, 7, FM, "b", 1, NONE },
	{ "duplicate, last invalid", "---\nmax_retries: 2\nmax_retries: x\n---\nb", 0, 3, DEF, "b", 1,
	  E(3, "(a string)") },
	{ "line numbers count comments", "---\n# c\nauthor: me\nmax_retries: nope\n---\nb", 0, 3, DEF, "b",
	  1, E(4, "'nope'") },
	/* Unknown fields. */
	{ "unknown fields ignored", "---\nmax_retries: 4\nauthor: me\nnested: {a: [1, 2]}\n---\nb", 0, 4,
	  FM, "b", 1, NONE },
	{ "deep unknown field", "---\nx: [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]\nmax_retries: 6\n---\nb", 0,
	  6, FM, "b", 1, NONE },
	{ "complex key", "---\n? [a, b]\n: 1\nmax_retries: 6\n---\nb", 0, 6, FM, "b", 1, NONE },
	/* Issue 18: a typo of a known field warns at run time too (not only in lint). */
	{ "typo of max_retries", "---\nmax_retires: 1\n---\nb", 0, 3, DEF, "b", 1,
	  W(2, "unknown field 'max_retires' is ignored (did you mean 'max_retries'?)") },
	{ "typo of stop_when_stalled", "---\nmax_retries: 2\nstop_when_stall: true\n---\nb", 0, 2, FM, "b",
	  1, W(3, "unknown field 'stop_when_stall' is ignored (did you mean 'stop_when_stalled'?)") },
	{ "far from any field", "---\nretries: 1\n---\nb", 0, 3, DEF, "b", 1, NONE },
	/* Malformed YAML. */
	{ "unclosed flow", "---\nmax_retries: [1\n---\nbody", 0, 3, DEF, "body", 1, E(3, "malformed YAML") },
	{ "bad indentation", "---\nmax_retries: 5\n  bad: 1\n---\nbody", 0, 3, DEF, "body", 1,
	  E(3, "malformed YAML") },
	{ "tab indentation", "---\na:\n\tb: 1\nmax_retries: 5\n---\nbody", 0, 3, DEF, "body", 1,
	  E(3, "malformed YAML") },
	{ "unclosed quote", "---\nmax_retries: \"5\n---\nbody", 0, 3, DEF, "body", 1, E(3, "malformed YAML") },
	{ "not a mapping", "---\njust some text\n---\nbody", 0, 3, DEF, "body", 1, E(2, "not a mapping") },
	{ "a list", "---\n- max_retries: 5\n---\nbody", 0, 3, DEF, "body", 1, E(2, "not a mapping") },
	{ "two documents", "---\nmax_retries: 5\n--- x\n---\nbody", 0, 3, DEF, "body", 1,
	  E(3, "more than one YAML document") },
	{ "document end marker", "---\nmax_retries: 5\n...\n---\nbody", 0, 5, FM, "body", 1, NONE },
	{ "empty frontmatter", "---\n---\nbody", 0, 3, DEF, "body", 1, NONE },
	{ "comment-only frontmatter", "---\n# nothing yet\n---\nbody", 0, 3, DEF, "body", 1, NONE },
	/* Delimiters. */
	{ "leading blank line", "\n---\nmax_retries: 5\n---\nbody", 0, 3, DEF,
	  "---\nmax_retries: 5\n---\nbody", 0, W(2, "not on the first line") },
	{ "leading space", " ---\nmax_retries: 5\n---\nbody", 0, 3, DEF,
	  " ---\nmax_retries: 5\n---\nbody", 0, W(1, "not on the first line") },
	{ "four dashes", "----\nmax_retries: 5\n----\nbody", 0, 3, DEF, "----\nmax_retries: 5\n----\nbody",
	  0, NONE },
	{ "closing with trailing spaces", "---\nmax_retries: 2\n--- \t\nbody", 0, 2, FM, "body", 1, NONE },
	{ "opening with trailing spaces", "---  \nmax_retries: 2\n---\nbody", 0, 2, FM, "body", 1, NONE },
	{ "closing with text is not closing", "---\nmax_retries: 2\n--- end\nbody\n", 0, 3, DEF,
	  "---\nmax_retries: 2\n--- end\nbody", 0, E(1, "never closed") },
	{ "unclosed", "---\nmax_retries: 2\nbody\n", 0, 3, DEF, "---\nmax_retries: 2\nbody", 0,
	  E(1, "never closed") },
	{ "lone opener", "---", 0, 3, DEF, "---", 0, E(1, "never closed") },
	{ "body keeps later rules", "---\nmax_retries: 2\n---\na\n---\nb\n", 0, 2, FM, "a\n---\nb", 1, NONE },
	{ "crlf", "---\r\nmax_retries: 4\r\n---\r\n\r\nLine one\r\nLine two\r\n", 0, 4, FM,
	  "Line one\nLine two", 1, NONE },
	{ "crlf without frontmatter", "a\r\nb\r\n", 0, 3, DEF, "a\nb", 0, NONE },
	{ "utf-8 bom stripped", "\xef\xbb\xbf---\nmax_retries: 2\n---\nbody", 0, 2, FM, "body", 1, NONE },
	{ "bom only", "\xef\xbb\xbf", 0, 3, DEF, "", 0, NONE },
	{ "trimming", "---\nmax_retries: 1\n---\n\n \n\t\n  indented\nx  \n\n\t\n", 0, 1, FM,
	  "  indented\nx", 1, NONE },
	{ "utf-8 body", "---\nmax_retries: 1\n---\nR\xc3\xa9vision \xe2\x9c\x93\n", 0, 1, FM,
	  "R\xc3\xa9vision \xe2\x9c\x93", 1, NONE },
	/* Content that is treated as empty. */
	{ "nul byte", "---\nmax_retries: 5\n---\nab\0c", 27, 3, DEF, "", 0, E(4, "NUL byte") },
	{ "invalid utf-8", "body\n\xff\n", 0, 3, DEF, "", 0, E(2, "not valid UTF-8") },
	{ "overlong utf-8", "\xc0\x80", 0, 3, DEF, "", 0, E(1, "not valid UTF-8") },
	{ "surrogate", "a\xed\xa0\x80", 0, 3, DEF, "", 0, E(1, "not valid UTF-8") },
	{ "truncated utf-8", "a\xe2\x9c", 0, 3, DEF, "", 0, E(1, "not valid UTF-8") },
	{ "latin-1", "---\nmax_retries: 5\n---\ncaf\xe9\n", 0, 3, DEF, "", 0, E(4, "not valid UTF-8") },
	/* stop_when_stalled does not disturb max_retries. */
	{ "stalled and retries", "---\nstop_when_stalled: true\nmax_retries: 2\n---\nb", 0, 2, FM, "b", 1,
	  NONE },
	{ "stalled invalid", "---\nstop_when_stalled: yes\n---\nb", 0, 3, DEF, "b", 1,
	  E(2, "'stop_when_stalled' value 'yes'") },
};

Test(reviewmd, parse_table)
{
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct pcase *k = &parse_cases[i];
		struct fg_review_config c;
		size_t len = k->len ? k->len : strlen(k->data);

		fg_review_config_init(&c);
		cr_assert_eq(fg_review_config_parse(&c, k->data, len, NULL), 0, "%s", k->what);
		cr_assert_eq(c.max_retries, k->max, "%s: max_retries %d", k->what, c.max_retries);
		cr_assert_eq(c.source, k->src, "%s: source %d", k->what, (int)c.source);
		cr_assert_not_null(c.instructions, "%s", k->what);
		cr_assert_str_eq(c.instructions, k->instr, "%s", k->what);
		cr_assert_eq(c.has_frontmatter, k->has_fm, "%s: has_frontmatter", k->what);
		check_diag(&c.diags, &k->diag, k->what);
		fg_review_config_release(&c);
	}
}

struct ecase {
	const char *what;
	const char *data;
	const char *env_retries;
	const char *env_stalled;
	int max;
	enum fg_retries_source src;
	int stalled;
	size_t warnings;
	size_t errors;
};

static const struct ecase env_cases[] = {
	{ "env 0 beats frontmatter", "---\nmax_retries: 5\n---\nb", "0", NULL, 0, FG_RETRIES_ENV_DISABLED, 0, 0, 0 },
	{ "env 0 with frontmatter 0", "---\nmax_retries: 0\n---\nb", "0", NULL, 0, FG_RETRIES_ENV_DISABLED, 0, 0, 0 },
	{ "env used without frontmatter", "b", "7", NULL, 7, FG_RETRIES_ENV, 0, 0, 0 },
	{ "frontmatter beats env", "---\nmax_retries: 5\n---\nb", "7", NULL, 5, FM, 0, 0, 0 },
	{ "frontmatter 0 beats env", "---\nmax_retries: 0\n---\nb", "7", NULL, 0, FM, 0, 0, 0 },
	{ "env used when frontmatter invalid", "---\nmax_retries: \"3\"\n---\nb", "7", NULL, 7,
	  FG_RETRIES_ENV, 0, 0, 1 },
	{ "env used when yaml malformed", "---\nmax_retries: [\n---\nb", "8", NULL, 8, FG_RETRIES_ENV, 0, 0, 1 },
	{ "invalid env ignored", "b", "abc", NULL, 3, DEF, 0, 1, 0 },
	{ "invalid env, frontmatter", "---\nmax_retries: 5\n---\nb", "abc", NULL, 5, FM, 0, 1, 0 },
	{ "negative env", "b", "-1", NULL, 3, DEF, 0, 1, 0 },
	{ "env above limit", "b", "101", NULL, 3, DEF, 0, 1, 0 },
	{ "env with spaces", "b", " 4", NULL, 3, DEF, 0, 1, 0 },
	{ "env float", "b", "2.5", NULL, 3, DEF, 0, 1, 0 },
	{ "empty env is unset", "b", "", "", 3, DEF, 0, 0, 0 },
	{ "env 0 on a binary file", "a\0b", "0", NULL, 0, FG_RETRIES_ENV_DISABLED, 0, 0, 1 },
	{ "env on an empty file", "", "9", NULL, 9, FG_RETRIES_ENV, 0, 0, 0 },
	{ "stalled env true", "b", NULL, "1", 3, DEF, 1, 0, 0 },
	{ "stalled env yes", "b", NULL, "yes", 3, DEF, 1, 0, 0 },
	{ "stalled env TRUE", "b", NULL, "TRUE", 3, DEF, 1, 0, 0 },
	{ "stalled env off", "b", NULL, "off", 3, DEF, 0, 0, 0 },
	{ "stalled env invalid", "b", NULL, "maybe", 3, DEF, 0, 1, 0 },
	{ "stalled frontmatter beats env", "---\nstop_when_stalled: false\n---\nb", NULL, "1", 3, DEF, 0, 0, 0 },
	{ "stalled frontmatter true", "---\nstop_when_stalled: True\n---\nb", NULL, "0", 3, DEF, 1, 0, 0 },
	{ "stalled frontmatter invalid, env", "---\nstop_when_stalled: \"true\"\n---\nb", NULL, "1", 3, DEF,
	  1, 0, 1 },
	{ "stalled frontmatter 1 is not a bool", "---\nstop_when_stalled: 1\n---\nb", NULL, NULL, 3, DEF, 0,
	  0, 1 },
	{ "stalled default", "b", NULL, NULL, 3, DEF, 0, 0, 0 },
};

Test(reviewmd, environment_priority_table)
{
	for (size_t i = 0; i < sizeof(env_cases) / sizeof(env_cases[0]); i++) {
		const struct ecase *k = &env_cases[i];
		struct fg_review_env env = { k->env_retries, k->env_stalled, NULL };
		struct fg_review_config c;
		size_t len = strlen(k->data);

		if (!strcmp(k->what, "env 0 on a binary file"))
			len = 3;
		fg_review_config_init(&c);
		fg_review_config_parse(&c, k->data, len, &env);
		cr_assert_eq(c.max_retries, k->max, "%s: max_retries %d", k->what, c.max_retries);
		cr_assert_eq(c.source, k->src, "%s: source %d", k->what, (int)c.source);
		cr_assert_eq(c.stop_when_stalled, k->stalled, "%s: stop_when_stalled", k->what);
		cr_assert_eq(fg_diags_count(&c.diags, FG_DIAG_WARNING), k->warnings, "%s: warnings", k->what);
		cr_assert_eq(fg_diags_count(&c.diags, FG_DIAG_ERROR), k->errors, "%s: errors", k->what);
		fg_review_config_release(&c);
	}
}

Test(reviewmd, invalid_env_warning_names_the_variable)
{
	struct fg_review_env env = { "lots", "sometimes", NULL };
	struct fg_review_config c;

	fg_review_config_init(&c);
	fg_review_config_parse(&c, "b", 1, &env);
	cr_assert_eq(c.diags.n, 2);
	cr_assert_str_eq(c.diags.v[0].msg,
			 "ignoring AUTO_REVIEW_MAX_RETRIES='lots': not an integer from 0 to 100");
	cr_assert(strstr(c.diags.v[1].msg, "AUTO_REVIEW_STOP_WHEN_STALLED='sometimes'"));
	fg_review_config_release(&c);
}

Test(reviewmd, env_from_environ)
{
	struct fg_review_env env;

	setenv("AUTO_REVIEW_MAX_RETRIES", "6", 1);
	unsetenv("AUTO_REVIEW_STOP_WHEN_STALLED");
	fg_review_env_from_environ(&env);
	cr_assert_str_eq(env.max_retries, "6");
	cr_assert_null(env.stop_when_stalled);
	unsetenv("AUTO_REVIEW_MAX_RETRIES");
}

Test(reviewmd, reparse_and_null_data)
{
	struct fg_review_config c;

	fg_review_config_init(&c);
	fg_review_config_parse(&c, "---\nmax_retries: \"x\"\n---\nfirst", 30, NULL);
	cr_assert_eq(c.diags.n, 1);
	/* A second parse replaces everything: nothing leaks, no stale warning. */
	fg_review_config_parse(&c, NULL, 5, NULL);
	cr_assert_str_eq(c.instructions, "");
	cr_assert_eq(c.diags.n, 0);
	cr_assert_eq(c.max_retries, 3);
	fg_review_config_release(&c);
	fg_review_config_release(&c);
}

Test(reviewmd, messages_are_single_line_and_bounded)
{
	struct fg_review_config c;
	const char *data = "---\nmax_retries: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\nb\"\n---\n";

	fg_review_config_init(&c);
	fg_review_config_parse(&c, data, strlen(data), NULL);
	cr_assert_eq(c.diags.n, 1);
	cr_assert_null(strchr(c.diags.v[0].msg, '\n'));
	cr_assert(strstr(c.diags.v[0].msg, "...'"), "%s", c.diags.v[0].msg);
	fg_review_config_release(&c);
}

Test(reviewmd, size_limit_on_parse)
{
	size_t n = FG_REVIEWMD_MAX_BYTES + 1;
	char *big = malloc(n);
	struct fg_review_config c;

	memset(big, 'a', n);
	fg_review_config_init(&c);
	fg_review_config_parse(&c, big, n, NULL);
	cr_assert_str_eq(c.instructions, "");
	cr_assert_eq(c.diags.n, 1);
	cr_assert(strstr(c.diags.v[0].msg, "over the 1048576-byte limit"), "%s", c.diags.v[0].msg);
	/* Exactly the limit is fine. */
	fg_review_config_parse(&c, big, n - 1, NULL);
	cr_assert_eq(c.diags.n, 0);
	cr_assert_eq(strlen(c.instructions), n - 1);
	fg_review_config_release(&c);
	free(big);
}

/* "---\n" + key + open*depth + close*depth + "\n---\nBody.\n", total bytes in *len. */
static char *nested(const char *key, char open, char close, size_t depth, size_t *len)
{
	size_t klen = strlen(key), n = 4 + klen + 2 * depth + 12;
	char *s = malloc(n + 1);
	size_t k = 0;

	cr_assert(s);
	memcpy(s, "---\n", 4);
	k = 4;
	memcpy(s + k, key, klen);
	k += klen;
	memset(s + k, open, depth);
	k += depth;
	memset(s + k, close, depth);
	k += depth;
	memcpy(s + k, "\n---\nBody.\n", 11);
	k += 11;
	s[k] = '\0';
	*len = k;
	return s;
}

/* Defect (issue 18): 200,000 nested '[' took 88 s in libyaml's scanner. The
 * walk stops at the depth bound: malformed, defaults, body kept. The suite's
 * timeout is the hang guard; no timing is asserted. */
Test(reviewmd, nesting_bomb_is_malformed_frontmatter)
{
	static const struct { char open, close; size_t depth; } bombs[] = {
		{ '[', ']', 200000 }, { '{', '}', 200000 }, { '[', ']', 520000 },
		{ '[', ']', FG_REVIEWMD_MAX_DEPTH + 1 },
	};
	struct fg_review_config c;

	fg_review_config_init(&c);
	for (size_t i = 0; i < sizeof(bombs) / sizeof(bombs[0]); i++) {
		size_t len;
		char *s = nested("max_retries: 1\nx: ", bombs[i].open, bombs[i].close, bombs[i].depth, &len);

		cr_assert_leq(len, FG_REVIEWMD_MAX_BYTES);
		fg_review_config_parse(&c, s, len, NULL);
		cr_assert_eq(c.diags.n, 1, "depth %zu: %zu diagnostics", bombs[i].depth, c.diags.n);
		cr_assert_eq(c.diags.v[0].level, FG_DIAG_ERROR);
		cr_assert(strstr(c.diags.v[0].msg, "malformed YAML in the frontmatter (nested deeper than 64 levels)"),
			  "%s", c.diags.v[0].msg);
		cr_assert_eq(c.max_retries, FG_DEFAULT_MAX_RETRIES, "the frontmatter's fields are ignored");
		cr_assert_eq(c.source, FG_RETRIES_DEFAULT);
		cr_assert_str_eq(c.instructions, "Body.");
		free(s);
	}
	fg_review_config_release(&c);
}

Test(reviewmd, nesting_at_the_bound_and_block_nesting)
{
	struct fg_review_config c;
	size_t len;
	/* The root mapping is one level: 63 more are still fine. */
	char *s = nested("max_retries: 1\nx: ", '[', ']', FG_REVIEWMD_MAX_DEPTH - 1, &len);
	struct fg_buf b;

	fg_review_config_init(&c);
	fg_review_config_parse(&c, s, len, NULL);
	cr_assert_eq(c.diags.n, 0, "%s", c.diags.n ? c.diags.v[0].msg : "");
	cr_assert_eq(c.max_retries, 1);
	free(s);
	/* Block style nests through indentation: bounded the same way. */
	fg_buf_init(&b, FG_REVIEWMD_MAX_BYTES);
	fg_buf_adds(&b, "---\nmax_retries: 1\nx:\n");
	for (int d = 1; d <= 100; d++)
		fg_buf_addf(&b, "%*s-\n", d, "");
	fg_buf_adds(&b, "---\nBody.\n");
	fg_review_config_parse(&c, b.data, b.len, NULL);
	cr_assert_eq(c.diags.n, 1);
	cr_assert(strstr(c.diags.v[0].msg, "nested deeper than 64 levels"), "%s", c.diags.v[0].msg);
	cr_assert_eq(c.max_retries, FG_DEFAULT_MAX_RETRIES);
	cr_assert_str_eq(c.instructions, "Body.");
	fg_buf_release(&b);
	fg_review_config_release(&c);
}

Test(reviewmd, event_bound_is_malformed_frontmatter)
{
	struct fg_review_config c;
	struct fg_buf b;

	/* A flat list of 20,000 items: shallow, but past the event bound. */
	fg_buf_init(&b, FG_REVIEWMD_MAX_BYTES);
	fg_buf_adds(&b, "---\nmax_retries: 1\nx: [");
	for (int i = 0; i < 20000; i++)
		fg_buf_adds(&b, "a,");
	fg_buf_adds(&b, "a]\n---\nBody.\n");
	fg_review_config_init(&c);
	fg_review_config_parse(&c, b.data, b.len, NULL);
	cr_assert_eq(c.diags.n, 1);
	cr_assert(strstr(c.diags.v[0].msg, "more than 10000 YAML events"), "%s", c.diags.v[0].msg);
	cr_assert_eq(c.max_retries, FG_DEFAULT_MAX_RETRIES);
	cr_assert_str_eq(c.instructions, "Body.");
	fg_buf_release(&b);
	fg_review_config_release(&c);
}

/* ---- loading files ---------------------------------------------------- */

Test(reviewmd, load_fixture_valid)
{
	struct fg_review_config c;

	fg_review_config_init(&c);
	cr_assert_eq(fg_review_config_load(&c, FIX "valid/review.md", NULL), 0);
	cr_assert_eq(c.max_retries, 5);
	cr_assert(c.stop_when_stalled);
	cr_assert(c.has_frontmatter);
	cr_assert_eq(c.diags.n, 0);
	cr_assert(!strncmp(c.instructions, "# Code Review Checklist\n\nEvaluate", 33));
	cr_assert(strstr(c.instructions, "for the implementer"));
	cr_assert_eq(c.instructions[strlen(c.instructions) - 1], 'r');
	fg_review_config_release(&c);
}

Test(reviewmd, load_fixture_crlf)
{
	struct fg_review_config c;

	fg_review_config_init(&c);
	cr_assert_eq(fg_review_config_load(&c, FIX "crlf/review.md", NULL), 0);
	cr_assert_eq(c.max_retries, 4);
	cr_assert_str_eq(c.instructions, "# Review\n\nCheck the tests.");
	fg_review_config_release(&c);
}

Test(reviewmd, load_missing_file)
{
	struct fg_review_config c;
	struct fg_review_env env = { "4", NULL, NULL };

	fg_review_config_init(&c);
	cr_assert_eq(fg_review_config_load(&c, "/nonexistent/review.md", &env), -ENOENT);
	cr_assert_str_eq(c.instructions, "");
	cr_assert_eq(c.max_retries, 4);
	cr_assert_eq(c.diags.n, 1);
	cr_assert_str_eq(c.diags.v[0].msg, "file does not exist");
	fg_review_config_release(&c);
}

/* Loads path and checks it was treated as empty, with why in the error. */
static void assert_treated_empty(const char *path, const char *why)
{
	struct fg_review_config c;
	struct fg_review_env env = { "2", NULL, NULL };

	fg_review_config_init(&c);
	cr_assert_eq(fg_review_config_load(&c, path, &env), 0, "%s", path);
	cr_assert_str_eq(c.instructions, "");
	cr_assert_eq(c.max_retries, 2, "reviewer still runs with the env value");
	cr_assert_eq(c.source, FG_RETRIES_ENV);
	cr_assert_eq(fg_diags_count(&c.diags, FG_DIAG_ERROR), 1, "%s", path);
	cr_assert(strstr(c.diags.v[0].msg, why), "'%s' lacks '%s'", c.diags.v[0].msg, why);
	cr_assert(strstr(c.diags.v[0].msg, "treated as an empty file"), "%s", c.diags.v[0].msg);
	fg_review_config_release(&c);
}

Test(reviewmd, load_bad_files_are_treated_as_empty)
{
	char *dir = fgt_tmpdir();
	char *bin = fgt_fmt("%s/bin/review.md", dir);
	char *big = fgt_fmt("%s/big/review.md", dir);
	char *fifo = fgt_fmt("%s/fifo", dir);
	char *latin = fgt_fmt("%s/latin/review.md", dir);
	unsigned char binary[512];
	size_t n = 2u * 1024 * 1024;
	char *blob = malloc(n);

	/* A binary review.md: an ELF-like header with NUL bytes. */
	for (size_t i = 0; i < sizeof(binary); i++)
		binary[i] = (unsigned char)(i * 7);
	memcpy(binary, "\x7f" "ELF", 4);
	fgt_write_bytes(bin, binary, sizeof(binary));
	memset(blob, 'x', n);
	fgt_write_bytes(big, blob, n);
	fgt_write(latin, "---\nmax_retries: 5\n---\nR\xe9vision\n");
	cr_assert_eq(mkfifo(fifo, 0644), 0);

	assert_treated_empty(bin, "NUL byte");
	assert_treated_empty(big, "larger than 1048576 bytes");
	assert_treated_empty(fifo, "not a regular file");
	assert_treated_empty(dir, "is a directory");
	assert_treated_empty(latin, "not valid UTF-8");
	assert_treated_empty("/dev/null", "not a regular file");
	free(blob);
	free(bin);
	free(big);
	free(fifo);
	free(latin);
	fgt_rm_rf(dir);
	free(dir);
}

/* The checks of assert_treated_empty(), as an exit code (0: all hold), for a
 * child process that runs without root's power to read a mode-000 file. */
static int load_unreadable(void *path)
{
	struct fg_review_config c;
	struct fg_review_env env = { "2", NULL, NULL };
	int bad;

	fg_review_config_init(&c);
	bad = fg_review_config_load(&c, path, &env) != 0 || strcmp(c.instructions, "") ||
	      c.max_retries != 2 || c.source != FG_RETRIES_ENV ||
	      fg_diags_count(&c.diags, FG_DIAG_ERROR) != 1 ||
	      !strstr(c.diags.v[0].msg, "cannot read the file: permission denied") ||
	      !strstr(c.diags.v[0].msg, "treated as an empty file");
	fg_review_config_release(&c);
	return bad;
}

Test(reviewmd, load_unreadable_file)
{
	char *dir = fgt_tmpdir();
	char *path = fgt_fmt("%s/review.md", dir);

	fgt_write(path, "---\nmax_retries: 5\n---\nbody\n");
	cr_assert_eq(chmod(path, 0), 0);
	/* The directory must be searchable by nobody: the file's mode denies. */
	cr_assert_eq(chmod(dir, 0755), 0);
	cr_assert_eq(fgt_as_nobody(load_unreadable, path), 0,
		     "an unreadable review.md is not treated as empty with the reason");
	fgt_rm_rf(dir);
	free(path);
	free(dir);
}

Test(reviewmd, load_follows_symlink)
{
	char *dir = fgt_tmpdir();
	char *target = fgt_fmt("%s/real.md", dir);
	char *link = fgt_fmt("%s/review.md", dir);
	struct fg_review_config c;

	fgt_write(target, "---\nmax_retries: 9\n---\nbody\n");
	cr_assert_eq(symlink("real.md", link), 0);
	fg_review_config_init(&c);
	cr_assert_eq(fg_review_config_load(&c, link, NULL), 0);
	cr_assert_eq(c.max_retries, 9);
	fg_review_config_release(&c);
	fgt_rm_rf(dir);
	free(target);
	free(link);
	free(dir);
}

/* ---- lint ------------------------------------------------------------- */

struct lcase {
	const char *path;
	size_t errors;
	struct want_diag first;    /* first diagnostic, or sub NULL: no diagnostic at all */
	size_t total;
};

Test(reviewmd, lint_fixtures_table)
{
	static const struct lcase cases[] = {
		{ FIX "valid/review.md", 0, NONE, 0 },
		{ FIX "crlf/review.md", 0, NONE, 0 },
		/* No APPROVED/REJECTED needed: the entrypoint adds the verdict protocol. */
		{ FIX "no-verdict-words/review.md", 0, NONE, 0 },
		{ FIX "typo/review.md", 0, W(2, "unknown field 'max_retry' is ignored (did you mean 'max_retries'?)"), 1 },
		{ FIX "bad-type/review.md", 1, E(3, "invalid 'max_retries' value '3' (a quoted string)"), 1 },
		{ FIX "wrong-name/REVIEW.md", 1, E(0, "must be named exactly 'review.md'"), 1 },
		{ FIX "missing/review.md", 1, E(0, "file does not exist"), 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fg_diags d;
		size_t errors;

		fg_diags_init(&d);
		errors = fg_review_lint_file(cases[i].path, &d);
		cr_assert_eq(errors, cases[i].errors, "%s: %zu errors", cases[i].path, errors);
		cr_assert_eq(d.n, cases[i].total, "%s: %zu diagnostics (first '%s')", cases[i].path, d.n,
			     d.n ? d.v[0].msg : "");
		if (cases[i].first.sub) {
			cr_assert_eq(d.v[0].level, cases[i].first.level, "%s", cases[i].path);
			cr_assert_eq(d.v[0].line, cases[i].first.line, "%s: line %d", cases[i].path, d.v[0].line);
			cr_assert(strstr(d.v[0].msg, cases[i].first.sub), "%s: '%s'", cases[i].path, d.v[0].msg);
		}
		fg_diags_release(&d);
	}
}

struct lcontent {
	const char *what;
	const char *data;
	size_t len;
	size_t errors;
	size_t warnings;
	int line;               /* line of the first diagnostic */
	const char *sub;        /* in the first diagnostic */
};

Test(reviewmd, lint_content_table)
{
	static const struct lcontent cases[] = {
		{ "empty", "", 0, 0, 1, 0, "no review instructions" },
		{ "frontmatter only", "---\nmax_retries: 2\n---\n", 0, 0, 1, 0, "no review instructions" },
		{ "unclosed", "---\nmax_retries: 2\nbody\n", 0, 1, 0, 1, "never closed" },
		{ "malformed", "---\nmax_retries: [\n---\nbody\n", 0, 1, 0, 3, "malformed YAML" },
		{ "leading blank line", "\n---\nmax_retries: 2\n---\nbody\n", 0, 0, 1, 2, "not on the first line" },
		{ "duplicate", "---\nmax_retries: 2\nmax_retries: 3\n---\nbody\n", 0, 0, 1, 3, "repeated (first on line 2)" },
		{ "unknown, no hint", "---\nowner: me\n---\nbody\n", 0, 0, 1, 2, "unknown field 'owner' is ignored" },
		{ "non-scalar key", "---\n? [a]\n: 1\n---\nbody\n", 0, 0, 1, 2, "not a plain name" },
		{ "stalled typo", "---\nstop_when_stall: true\n---\nbody\n", 0, 0, 1, 2, "did you mean 'stop_when_stalled'" },
		{ "binary", "ab\0cd", 5, 1, 0, 1, "NUL byte" },
		{ "above limit", "---\nmax_retries: 1000\n---\nbody\n", 0, 1, 0, 2, "above the limit" },
	};
	char *dir = fgt_tmpdir();
	char *path = fgt_fmt("%s/review.md", dir);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct lcontent *k = &cases[i];
		struct fg_diags d;

		fgt_write_bytes(path, k->data, k->len ? k->len : strlen(k->data));
		fg_diags_init(&d);
		cr_assert_eq(fg_review_lint_file(path, &d), k->errors, "%s", k->what);
		cr_assert_eq(fg_diags_count(&d, FG_DIAG_ERROR), k->errors, "%s", k->what);
		cr_assert_eq(fg_diags_count(&d, FG_DIAG_WARNING), k->warnings, "%s: first '%s'", k->what,
			     d.n ? d.v[0].msg : "");
		cr_assert_eq(d.v[0].line, k->line, "%s: line %d", k->what, d.v[0].line);
		cr_assert(strstr(d.v[0].msg, k->sub), "%s: '%s'", k->what, d.v[0].msg);
		fg_diags_release(&d);
	}
	fgt_rm_rf(dir);
	free(path);
	free(dir);
}

Test(reviewmd, lint_appends_and_counts_only_its_errors)
{
	struct fg_diags d;

	fg_diags_init(&d);
	fg_diags_add(&d, FG_DIAG_ERROR, 1, "earlier error");
	cr_assert_eq(fg_review_lint_file(FIX "bad-type/review.md", &d), 1);
	cr_assert_eq(d.n, 2);
	cr_assert_str_eq(d.v[0].msg, "earlier error");
	fg_diags_release(&d);
}

/* ---- the reviewer panel (reviewers:, rereview:) ------------------------ */

static int has_diag(const struct fg_diags *d, enum fg_diag_level level, int line, const char *sub)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].level == level && (line < 0 || d->v[i].line == line) &&
		    strstr(d->v[i].msg, sub))
			return 1;
	return 0;
}

Test(reviewmd, panel_roles_and_rereview_are_read)
{
	const char *t = "---\nrereview: all\nreviewers:\n  - role: correctness\n    instructions: c.md\n"
			"  - role: security\n---\nBody\n";
	struct fg_review_config c;

	fg_review_config_init(&c);
	fg_review_config_parse(&c, t, strlen(t), NULL);
	cr_assert_eq(c.diags.n, 0, "%s", c.diags.n ? c.diags.v[0].msg : "");
	cr_assert_eq(c.nreviewers, 2);
	cr_assert_str_eq(c.reviewers[0].role, "correctness");
	cr_assert_str_eq(c.reviewers[0].instructions_file, "c.md");
	cr_assert_eq(c.reviewers[0].line, 4);
	cr_assert_str_eq(c.reviewers[1].role, "security");
	cr_assert_null(c.reviewers[1].instructions_file);
	cr_assert_eq(c.rereview, FG_REREVIEW_ALL);
	cr_assert_str_eq(c.instructions, "Body");
	fg_review_config_release(&c);
}

struct panel_case {
	const char *what;
	const char *fm;            /* the frontmatter lines */
	size_t nroles;
	const char *diag;          /* substring of an error on some line, or NULL: none */
	int fallback;              /* the "no valid entry" warning is expected */
};

Test(reviewmd, panel_invalid_entries_are_skipped_with_a_diagnostic)
{
	static const struct panel_case cases[] = {
		{ "no panel", "max_retries: 2\n", 0, NULL, 0 },
		{ "not a list", "reviewers: correctness\n", 0, "invalid 'reviewers' value", 0 },
		{ "empty list", "reviewers: []\n", 0, NULL, 1 },
		{ "not a mapping", "reviewers:\n  - correctness\n  - role: ok\n", 1, "expected a mapping", 0 },
		{ "missing role", "reviewers:\n  - instructions: a.md\n", 0, "'role' is missing", 1 },
		{ "upper case", "reviewers:\n  - role: Safety\n", 0, "not a slug", 1 },
		{ "leading dash", "reviewers:\n  - role: -x\n", 0, "not a slug", 1 },
		{ "underscore", "reviewers:\n  - role: a_b\n", 0, "not a slug", 1 },
		{ "too long", "reviewers:\n  - role: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 0,
		  "not a slug", 1 },
		{ "a number role", "reviewers:\n  - role: 7\n", 1, NULL, 0 },
		{ "a list role", "reviewers:\n  - role: [a]\n", 0, "'role' is missing", 1 },
		{ "duplicate", "reviewers:\n  - role: a\n  - role: a\n", 1, "is repeated", 0 },
		{ "nine roles",
		  "reviewers:\n  - role: a\n  - role: b\n  - role: c\n  - role: d\n  - role: e\n"
		  "  - role: f\n  - role: g\n  - role: h\n  - role: i\n", 8, "one more than the 8", 0 },
		{ "absolute file", "reviewers:\n  - role: a\n    instructions: /etc/passwd\n", 0,
		  "escapes the directory", 1 },
		{ "dot-dot file", "reviewers:\n  - role: a\n    instructions: x/../../s.md\n", 0,
		  "escapes the directory", 1 },
		{ "file not a string", "reviewers:\n  - role: a\n    instructions: [x]\n", 0,
		  "not a string", 1 },
		{ "bad rereview", "rereview: some\n", 0, "invalid 'rereview' value", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct panel_case *k = &cases[i];
		char *t = fgt_fmt("---\n%s---\nBody\n", k->fm);
		struct fg_review_config c;

		fg_review_config_init(&c);
		fg_review_config_parse(&c, t, strlen(t), NULL);
		cr_assert_eq(c.nreviewers, k->nroles, "%s: %zu roles", k->what, c.nreviewers);
		if (k->diag)
			cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, -1, k->diag), "%s: no '%s'", k->what,
				  k->diag);
		else
			cr_assert_eq(fg_diags_count(&c.diags, FG_DIAG_ERROR), 0, "%s", k->what);
		cr_assert_eq(has_diag(&c.diags, FG_DIAG_WARNING, 0, "has no valid entry"), k->fallback,
			     "%s", k->what);
		cr_assert_eq(c.rereview, FG_REREVIEW_REJECTED, "%s", k->what);
		fg_review_config_release(&c);
		free(t);
	}
}

Test(reviewmd, role_files_are_read_beside_review_md_and_never_outside)
{
	char *d = fgt_tmpdir();
	char *skill = fgt_fmt("%s/skill", d);
	char *rmd = fgt_fmt("%s/review.md", skill);
	struct fg_review_config c;

	fgt_write(rmd, "---\nreviewers:\n  - role: a\n    instructions: roles/a.md\n"
		       "  - role: b\n    instructions: link.md\n  - role: c\n    instructions: none.md\n"
		       "  - role: d\n    instructions: bin.md\n---\nShared\n");
	char *paths[4] = { fgt_fmt("%s/roles/a.md", skill), fgt_fmt("%s/secret.md", d),
			   fgt_fmt("%s/link.md", skill), fgt_fmt("%s/bin.md", skill) };

	fgt_write(paths[0], "\nCheck A.\r\n\n");
	fgt_write(paths[1], "outside\n");
	cr_assert_eq(symlink("../secret.md", paths[2]), 0);
	fgt_write_bytes(paths[3], "a\0b", 3);
	for (int i = 0; i < 4; i++)
		free(paths[i]);
	fg_review_config_init(&c);
	cr_assert_eq(fg_review_config_load(&c, rmd, NULL), 0);
	cr_assert_eq(c.nreviewers, 1);
	cr_assert_str_eq(c.reviewers[0].role, "a");
	cr_assert_str_eq(c.reviewers[0].instructions, "Check A.");
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 5, "role file 'link.md' of role 'b' refused"));
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 7, "role file 'none.md' of role 'c' refused"));
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 9, "NUL byte"));
	fg_review_config_release(&c);

	/* Every role refused: one reviewer, said once. */
	fgt_write(rmd, "---\nreviewers:\n  - role: b\n    instructions: link.md\n---\nShared\n");
	fg_review_config_init(&c);
	fg_review_config_load(&c, rmd, NULL);
	cr_assert_eq(c.nreviewers, 0);
	cr_assert(has_diag(&c.diags, FG_DIAG_WARNING, 0, "has no valid entry"));
	fg_review_config_release(&c);

	/* lint fails on a refused role file. */
	struct fg_diags out;

	fg_diags_init(&out);
	cr_assert_eq(fg_review_lint_file(rmd, &out), 1);
	fg_diags_release(&out);
	fgt_rm_rf(d);
	free(rmd);
	free(skill);
	free(d);
}

Test(reviewmd, role_slug_rule)
{
	cr_assert(fg_role_valid("a"));
	cr_assert(fg_role_valid("0-correctness-2"));
	cr_assert_not(fg_role_valid(""));
	cr_assert_not(fg_role_valid("-a"));
	cr_assert_not(fg_role_valid("a b"));
	cr_assert_not(fg_role_valid("a/b"));
	cr_assert_not(fg_role_valid("A"));
	cr_assert_str_eq(fg_rereview_name(FG_REREVIEW_ALL), "all");
	cr_assert_str_eq(fg_rereview_name(FG_REREVIEW_REJECTED), "rejected");
}

/* max_cost_usd (issue 13): plain numbers only; the frontmatter wins over
 * AUTO_REVIEW_MAX_COST_USD; invalid values warn and fall back. */
Test(reviewmd, max_cost_usd_values_and_priority)
{
	static const struct {
		const char *fm, *env;
		double want;
		bool warns;
	} k[] = {
		{ "max_cost_usd: 2.50", NULL, 2.5, false },
		{ "max_cost_usd: 5", "1", 5, false },
		{ "max_cost_usd: 0", NULL, 0, false },
		{ NULL, "0.75", 0.75, false },
		{ NULL, NULL, -1, false },
		{ "max_cost_usd: \"3\"", NULL, -1, true },
		{ "max_cost_usd: -1", "2", 2, true },
		{ "max_cost_usd: .inf", NULL, -1, true },
		{ "max_cost_usd: true", NULL, -1, true },
		{ "max_cost_usd: [1]", NULL, -1, true },
		{ NULL, "lots", -1, true },
		{ NULL, "-3", -1, true },
		{ "max_cost_usd: 1000001", NULL, -1, true },
	};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct fg_review_env env = { NULL, NULL, k[i].env };
		struct fg_review_config c;
		char *text = k[i].fm ? fgt_fmt("---\n%s\n---\nBody\n", k[i].fm) : fgt_fmt("Body\n");

		fg_review_config_init(&c);
		fg_review_config_parse(&c, text, strlen(text), &env);
		cr_expect_float_eq(c.max_cost_usd, k[i].want, 1e-12, "case %zu: got %g", i, c.max_cost_usd);
		cr_expect_eq(c.diags.n > 0, k[i].warns, "case %zu: %zu diagnostic(s)", i, c.diags.n);
		fg_review_config_release(&c);
		free(text);
	}
}

static void parse_str(struct fg_review_config *c, const char *s)
{
	fg_review_config_parse(c, s, strlen(s), NULL);
}

Test(reviewmd, require_evidence_is_a_bool_defaulting_to_false)
{
	struct fg_review_config c;

	fg_review_config_init(&c);
	parse_str(&c, "Body\n");
	cr_assert_not(c.require_evidence);
	parse_str(&c, "---\nrequire_evidence: true\n---\nBody\n");
	cr_assert(c.require_evidence);
	cr_assert_eq(c.diags.n, 0);
	parse_str(&c, "---\nrequire_evidence: yes\n---\nBody\n");
	cr_assert_not(c.require_evidence, "YAML 1.2: 'yes' is no boolean");
	cr_assert_eq(c.diags.n, 1);
	cr_assert(strstr(c.diags.v[0].msg, "invalid 'require_evidence' value 'yes'"), "%s", c.diags.v[0].msg);
	parse_str(&c, "---\nrequire_evidnce: true\n---\nBody\n");
	cr_assert(strstr(c.diags.v[0].msg, "did you mean 'require_evidence'"), "%s", c.diags.v[0].msg);
	fg_review_config_release(&c);
}

Test(reviewmd, checks_entries_are_validated_one_by_one)
{
	struct fg_review_config c;

	fg_review_config_init(&c);
	parse_str(&c, "---\nchecks:\n"
		      "  - name: tests\n    run: sh tests/test_calc.sh\n    timeout_seconds: 30\n"
		      "  - name: lint\n    run: \"make lint\"\n"
		      "  - name: Bad Name\n    run: true\n"
		      "  - name: tests\n    run: true\n"
		      "  - name: quote\n    run: \"sh -c 'unclosed\"\n"
		      "  - name: slow\n    run: sleep 1\n    timeout_seconds: 0\n"
		      "  - name: empty\n    run: \"  \"\n"
		      "  - just a string\n"
		      "---\nBody\n");
	cr_assert_eq(c.nchecks, 2);
	cr_assert_str_eq(c.checks[0].name, "tests");
	cr_assert_str_eq(c.checks[0].run, "sh tests/test_calc.sh");
	cr_assert_eq(c.checks[0].timeout_s, 30);
	cr_assert_eq(c.checks[0].line, 3);
	cr_assert_str_eq(c.checks[1].name, "lint");
	cr_assert_eq(c.checks[1].timeout_s, FG_CHECK_TIMEOUT_DEFAULT);
	cr_assert_eq(c.diags.n, 6, "%zu diagnostics", c.diags.n);
	for (size_t i = 0; i < c.diags.n; i++) {
		cr_assert_eq(c.diags.v[i].level, FG_DIAG_ERROR);
		cr_assert(strstr(c.diags.v[i].msg, "invalid 'checks' entry"), "%s", c.diags.v[i].msg);
	}
	cr_assert(strstr(c.diags.v[0].msg, "'name' must be a slug"), "%s", c.diags.v[0].msg);
	cr_assert(strstr(c.diags.v[1].msg, "check 'tests' is repeated (first on line 3)"), "%s", c.diags.v[1].msg);
	cr_assert(strstr(c.diags.v[2].msg, "'run' is not a command line"), "%s", c.diags.v[2].msg);
	cr_assert(strstr(c.diags.v[3].msg, "'timeout_seconds' must be a plain integer from 1 to 86400"), "%s",
		  c.diags.v[3].msg);
	cr_assert(strstr(c.diags.v[4].msg, "check 'empty': 'run' is not a command line"), "%s", c.diags.v[4].msg);
	parse_str(&c, "---\nchecks: make test\n---\nBody\n");
	cr_assert_eq(c.nchecks, 0);
	cr_assert(strstr(c.diags.v[0].msg, "invalid 'checks' value 'make test'"), "%s", c.diags.v[0].msg);
	fg_review_config_release(&c);
}

/* audit: (issue "A second opinion"): the mapping's members, their
 * defaults, bad values with an error each, the instructions file read
 * beside review.md (never outside), the role name "audit" reserved. */
Test(reviewmd, audit_mapping_members_defaults_and_errors)
{
	struct fg_review_config c;
	const char *t;

	fg_review_config_init(&c);
	fg_review_config_parse(&c, "---\nmax_retries: 2\n---\nBody\n", 0, NULL);
	cr_assert_not(c.audit.on, "no audit: unless asked for");
	t = "---\naudit: {}\n---\nBody\n";
	fg_review_config_parse(&c, t, strlen(t), NULL);
	cr_assert(c.audit.on);
	cr_assert_float_eq(c.audit.sample, 1, 1e-12);
	cr_assert_not(c.audit.blocks);
	cr_assert_null(c.audit.instructions_file);
	cr_assert_eq(c.diags.n, 0);
	t = "---\naudit:\n  sample: 0.2\n  blocks: true\n---\nBody\n";
	fg_review_config_parse(&c, t, strlen(t), NULL);
	cr_assert(c.audit.on);
	cr_assert_float_eq(c.audit.sample, 0.2, 1e-12);
	cr_assert(c.audit.blocks);
	cr_assert_eq(c.audit.line, 2);
	/* Bad members: an error each, the default kept, the audit still on. */
	t = "---\naudit:\n  sample: 1.5\n  blocks: yes\n  instructions: ../x.md\n  smaple: 1\n---\nB\n";
	fg_review_config_parse(&c, t, strlen(t), NULL);
	cr_assert(c.audit.on);
	cr_assert_float_eq(c.audit.sample, 1, 1e-12);
	cr_assert_not(c.audit.blocks);
	cr_assert_null(c.audit.instructions_file);
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 3, "invalid 'audit.sample' value '1.5'"));
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 4, "invalid 'audit.blocks' value 'yes'"));
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 5, "audit file '../x.md' refused"));
	cr_assert(has_diag(&c.diags, FG_DIAG_WARNING, 6, "unknown field 'smaple' in 'audit'"));
	/* Not a mapping: an error, no audit. */
	t = "---\naudit: true\n---\nB\n";
	fg_review_config_parse(&c, t, strlen(t), NULL);
	cr_assert_not(c.audit.on);
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 2, "invalid 'audit' value 'true'"));
	/* A typo of the field is said at run time too. */
	t = "---\naudti: {}\n---\nB\n";
	fg_review_config_parse(&c, t, strlen(t), NULL);
	cr_assert_not(c.audit.on);
	cr_assert(has_diag(&c.diags, FG_DIAG_WARNING, 2, "did you mean 'audit'"));
	/* The audit's role name is no panel role's. */
	t = "---\nreviewers:\n  - role: audit\n  - role: docs\n---\nB\n";
	fg_review_config_parse(&c, t, strlen(t), NULL);
	cr_assert_eq(c.nreviewers, 1);
	cr_assert_str_eq(c.reviewers[0].role, "docs");
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 3, "role 'audit' is reserved for the audit"));
	fg_review_config_release(&c);
}

Test(reviewmd, audit_instructions_file_is_read_beside_review_md_only)
{
	char *d = fgt_tmpdir();
	char *skill = fgt_fmt("%s/skill", d);
	char *rmd = fgt_fmt("%s/review.md", skill);
	char *file = fgt_fmt("%s/audit/hunt.md", skill), *outside = fgt_fmt("%s/secret.md", d);
	char *link = fgt_fmt("%s/link.md", skill);
	struct fg_review_config c;
	struct fg_diags out;

	fgt_write(file, "\nHunt for off-by-one errors.\r\n\n");
	fgt_write(outside, "outside\n");
	cr_assert_eq(symlink("../secret.md", link), 0);
	fgt_write(rmd, "---\naudit:\n  instructions: audit/hunt.md\n  sample: 0\n---\nShared\n");
	fg_review_config_init(&c);
	cr_assert_eq(fg_review_config_load(&c, rmd, NULL), 0);
	cr_assert(c.audit.on);
	cr_assert_str_eq(c.audit.instructions_file, "audit/hunt.md");
	cr_assert_str_eq(c.audit.instructions, "Hunt for off-by-one errors.");
	cr_assert_float_eq(c.audit.sample, 0, 1e-12);
	cr_assert_eq(c.diags.n, 0, "%s", c.diags.n ? c.diags.v[0].msg : "");
	/* A symlink leading out: refused, the audit runs with its prompt alone. */
	fgt_write(rmd, "---\naudit:\n  instructions: link.md\n---\nShared\n");
	cr_assert_eq(fg_review_config_load(&c, rmd, NULL), 0);
	cr_assert(c.audit.on);
	cr_assert_str_eq(c.audit.instructions, "");
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 2, "audit file 'link.md' refused"));
	fg_review_config_release(&c);
	fg_diags_init(&out);
	cr_assert_eq(fg_review_lint_file(rmd, &out), 1, "lint fails on a refused audit file");
	fg_diags_release(&out);
	fgt_rm_rf(d);
	FG_FREE_ALL(d, skill, rmd, file, outside, link);
}

/* The message of c's diagnostic that holds part, or NULL; *line its line. */
static const char *diag_with(const struct fg_review_config *c, const char *part, int *line)
{
	for (size_t i = 0; i < c->diags.n; i++)
		if (strstr(c->diags.v[i].msg, part)) {
			*line = c->diags.v[i].line;
			return c->diags.v[i].msg;
		}
	return NULL;
}

/* Lint and the run-time parse guess what an author meant in an entry, say
 * "missing 'run'", flag an unknown placeholder, and point at the value's
 * line; "./style.md" is the role file beside review.md. */
Test(reviewmd, entries_get_a_did_you_mean_and_errors_at_the_values_line)
{
	struct fg_review_config c;
	const char *m;
	int line = 0;

	fg_review_config_init(&c);
	parse_str(&c, "---\nchecks:\n"
		      "  - name: lint\n    command: make lint\n"
		      "  - name: tests\n    run: make test\n    timeout: 30\n"
		      "  - name: slow\n    run: sleep 1\n    timeout_seconds: 0\n"
		      "  - name: own\n    run: sh {skills_dir}/lint.sh {cycle}\n"
		      "reviewers:\n  - name: security\n"
		      "---\nBody\n");
	m = diag_with(&c, "unknown field 'command' in a 'checks' entry is ignored (did you mean 'run'?)", &line);
	cr_assert(m && line == 4, "%s at %d", m ? m : "(none)", line);
	m = diag_with(&c, "check 'lint': missing 'run' (the command line the check runs)", &line);
	cr_assert(m && line == 3, "%s at %d", m ? m : "(none)", line);
	m = diag_with(&c, "unknown field 'timeout' in a 'checks' entry is ignored (did you mean 'timeout_seconds'?)",
		      &line);
	cr_assert(m && line == 7, "%s at %d", m ? m : "(none)", line);
	m = diag_with(&c, "check 'slow': 'timeout_seconds' must be a plain integer", &line);
	cr_assert(m && line == 10, "at the value's line: %s at %d", m ? m : "(none)", line);
	m = diag_with(&c, "check 'own': unknown placeholder '{skills_dir}' in 'run' is left as it is "
			  "(did you mean '{skill_dir}'? a check takes", &line);
	cr_assert(m && line == 12, "%s at %d", m ? m : "(none)", line);
	m = diag_with(&c, "unknown field 'name' in a 'reviewers' entry is ignored (did you mean 'role'?)", &line);
	cr_assert(m && line == 14, "%s at %d", m ? m : "(none)", line);
	fg_review_config_release(&c);

	char *dir = fgt_tmpdir();
	char *md = fgt_fmt("%s/review.md", dir), *style = fgt_fmt("%s/style.md", dir);
	struct fg_diags d;

	fgt_write(style, "Check the style.\n");
	fgt_write(md, "---\nreviewers:\n  - role: style\n    instructions: ./style.md\n"
		      "checks:\n  - name: lint\n    run: sh {skill_dir}/lint.sh\n---\nBody\n");
	fg_diags_init(&d);
	cr_assert_eq(fg_review_lint_file(md, &d), 0, "./style.md is accepted");
	char *want = fgt_fmt("check 'lint': '%s/lint.sh' does not exist ({skill_dir} is the directory of this "
			     "review.md: ship the file there)", dir);
	int found = 0;

	for (size_t i = 0; i < d.n; i++)
		found |= d.v[i].level == FG_DIAG_WARNING && strstr(d.v[i].msg, want) && d.v[i].line == 6;
	cr_assert(found, "no warning '%s' (%zu diagnostics%s%s)", want, d.n, d.n ? ", first: " : "",
		  d.n ? d.v[0].msg : "");
	fg_diags_release(&d);
	fgt_rm_rf(dir);
	free(dir); free(md); free(style); free(want);
}
