/*
 * test_reviewmd.c - the review.md parser case by case against
 * docs/reference/review-md-schema.md: the frontmatter, the environment's
 * overrides and their priority, the size and nesting bounds. Loading and
 * lint: test_reviewmd_load.c; the reviewer panel: test_reviewmd_panel.c;
 * the other fields: test_reviewmd_fields.c.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "forge/buf.h"
#include "forge/alloc.h"
#include "forge/reviewmd.h"

#include "reviewmd_sample.h"

TestSuite(reviewmd, .timeout = 60);

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
	/* A typo of a known field warns at run time too (not only in lint). */
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

/* 200,000 nested '[' would take libyaml's scanner over a minute. The walk
 * stops at the depth bound: malformed, defaults, body kept. The suite's
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
