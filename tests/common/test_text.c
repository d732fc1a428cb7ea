/*
 * test_text.c - the shared UTF-8 decoder and the exact JSON parse/print.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "forge/json.h"
#include "forge/buf.h"
#include "forge/text.h"
#include "forge/util.h"

TestSuite(text, .timeout = 30);

Test(text, utf8_sequences)
{
	static const struct { const char *bytes; size_t n; size_t want; } cases[] = {
		{ "a", 1, 1 },
		{ "\xc3\xa9", 2, 2 },            /* é */
		{ "\xe2\x82\xac", 3, 3 },        /* € */
		{ "\xf0\x9f\x98\x80", 4, 4 },    /* emoji */
		{ "\xc3", 1, 0 },                /* truncated */
		{ "\xc0\xaf", 2, 0 },            /* overlong '/' */
		{ "\xe0\x80\xaf", 3, 0 },        /* overlong, 3 bytes */
		{ "\xed\xa0\x80", 3, 0 },        /* UTF-16 surrogate */
		{ "\xf4\x90\x80\x80", 4, 0 },    /* above U+10FFFF */
		{ "\x80", 1, 0 },                /* lone continuation */
		{ "\xc3\x28", 2, 0 },            /* bad continuation */
		{ "\xff", 1, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_assert_eq(fg_utf8_seq(cases[i].bytes, cases[i].n), cases[i].want, "case %zu", i);
}

Test(text, parse_exact_accepts_one_value_and_whitespace)
{
	static const char *ok[] = { "{}", " {\"a\":1} \n", "[1,2]\r\n\t", "\"s\"", "3" };
	static const char *bad[] = { "{} x", "{}{}", "{", "", "   ", "{\"a\":}" };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cJSON *o = fg_json_parse_exact(ok[i], strlen(ok[i]));

		cr_assert_not_null(o, "refused '%s'", ok[i]);
		cJSON_Delete(o);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_null(fg_json_parse_exact(bad[i], strlen(bad[i])), "accepted '%s'", bad[i]);
}

/* Each getter checks the member's type: one of another type reads as
 * absent, and so does any member of a NULL object. */
Test(text, getters_read_a_member_of_another_type_as_absent)
{
	static const char doc[] = "{\"a\":[1],\"o\":{\"k\":\"v\"},\"s\":\"x\",\"n\":2}";
	cJSON *o = fg_json_parse_exact(doc, strlen(doc));

	cr_assert_not_null(o);
	cr_expect_eq(cJSON_GetArraySize(fg_json_arr(o, "a")), 1);
	cr_expect_null(fg_json_arr(o, "o"));
	cr_expect_null(fg_json_arr(o, "missing"));
	cr_expect_null(fg_json_arr(NULL, "a"));
	cr_expect_str_eq(fg_json_str(fg_json_obj(o, "o"), "k"), "v");
	cr_expect_null(fg_json_obj(o, "a"));
	cr_expect_null(fg_json_str(o, "n"));
	cr_expect_eq(fg_json_num(o, "n"), 2);
	cJSON_Delete(o);
}

Test(text, parse_exact_refuses_nul_bytes)
{
	static const char doc[] = "{\"a\":\"x\"}\0garbage";

	cr_assert_null(fg_json_parse_exact(doc, sizeof(doc) - 1));
}

Test(text, parse_exact_caps_structural_tokens)
{
	size_t n = FG_JSON_MAX_TOKENS + 10, len = 2 + 3 * n;
	char *doc = malloc(len + 1), *p = doc;
	cJSON *o;

	/* [[],[],...]: tiny bytes, a huge tree. */
	*p++ = '[';
	for (size_t i = 0; i < n; i++) {
		memcpy(p, i ? ",[]" : "[] ", 3);
		p += 3;
	}
	*p++ = ']';
	cr_assert_null(fg_json_parse_exact(doc, (size_t)(p - doc)), "a tree of %zu nodes was built", n);
	/* Commas and colons inside strings are text, not tokens. */
	p = doc;
	*p++ = '"';
	for (size_t i = 0; i < n; i++)
		*p++ = ',';
	*p++ = '"';
	o = fg_json_parse_exact(doc, (size_t)(p - doc));
	cr_assert_not_null(o, "a long string of commas was refused");
	cJSON_Delete(o);
	free(doc);
}

Test(text, print_ends_with_a_newline)
{
	cJSON *o = cJSON_CreateObject();
	char *s;

	cJSON_AddNumberToObject(o, "cycle", 1);
	s = fg_json_print(o);
	cr_assert_eq(s[strlen(s) - 1], '\n');
	cr_assert_not_null(strstr(s, "\"cycle\""));
	free(s);
	cJSON_Delete(o);
}

Test(text, escape_controls)
{
	static const struct { const char *in; unsigned flags; const char *want; } cases[] = {
		{ "plain \xc3\xa9 text", 0, "plain \xc3\xa9 text" },
		{ "a\r\033[2Kb\n\t", 0, "a\\r\\x1b[2Kb\\n\\t" },
		{ "del\x7f bell\x07", 0, "del\\x7f bell\\x07" },
		{ "c1 \xc2\x9b sep \xe2\x80\xa8", 0, "c1 \\xc2\\x9b sep \\xe2\\x80\\xa8" },
		{ "bad \xff\xc3", 0, "bad \\xff\\xc3" },
		{ "q\"b\\", 0, "q\"b\\" },
		{ "q\"b\\", FG_ESC_QUOTES, "q\\\"b\\\\" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fg_buf b;

		fg_buf_init(&b, 1024);
		fg_escape_controls(&b, cases[i].in, strlen(cases[i].in), cases[i].flags);
		cr_expect_str_eq(fg_buf_str(&b), cases[i].want, "case %zu", i);
		fg_buf_release(&b);
	}
}

Test(text, parse_bounded_says_which_bound_or_rule)
{
	static const struct { const char *doc; size_t len; size_t max; const char *why; } cases[] = {
		{ "[1,2,3]", 7, 2, "more than 2 JSON tokens" },
		{ "\"a\xff\"", 4, 100, "not valid UTF-8 at byte 2" },
		{ "\"a\xe2\x82\"", 5, 100, "not valid UTF-8 at byte 2" },
		{ "\"\xc0\xaf\"", 4, 100, "not valid UTF-8 at byte 1" },
		{ "[1]\0", 4, 100, "contains a NUL byte" },
		{ "[1", 2, 100, "not valid JSON" },
		{ "", 0, 100, "not valid JSON" },
	};
	char err[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		cr_assert_null(fg_json_parse_bounded(cases[i].doc, cases[i].len, cases[i].max, err, sizeof(err)),
			       "case %zu", i);
		cr_assert_str_eq(err, cases[i].why, "case %zu", i);
	}
	/* At the bound is fine; valid multi-byte UTF-8 is fine. */
	cJSON_Delete(fg_json_parse_bounded("[1,2]", 5, 2, err, sizeof(err)));
	{
		cJSON *o = fg_json_parse_bounded("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", 11, 1, err, sizeof(err));

		cr_assert_not_null(o, "%s", err);
		cr_assert_str_eq(o->valuestring, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
		cJSON_Delete(o);
	}
}

Test(text, utf8_scrub_replaces_every_bad_byte)
{
	char *s = fg_utf8_scrub("ok\xff\xfe \xc3\xa9 \xe2\x82", 10);
	size_t bad = 99;

	cr_assert_str_eq(s, "ok\xef\xbf\xbd\xef\xbf\xbd \xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd");
	cr_assert_eq(fg_utf8_check(s, strlen(s), &bad), 0);
	cr_assert_eq(fg_utf8_check("a\x80", 2, &bad), -EILSEQ);
	cr_assert_eq(bad, 1);
	free(s);
}

Test(text, utf8_cut_never_splits_a_character)
{

	/* "é" is 2 bytes: a cut at 2 keeps "a" alone, at 3 "aé". */
	static const struct { const char *in; size_t max; const char *want; } cases[] = {
		{ "abc", 10, "abc" }, { "a\xc3\xa9z", 2, "a" }, { "a\xc3\xa9z", 3, "a\xc3\xa9" }, { "abc", 0, "" },
	};

	cr_assert_null(fg_utf8_cut(NULL, 4));
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *c = fg_utf8_cut(cases[i].in, cases[i].max);

		cr_expect_str_eq(c, cases[i].want, "cut of '%s' at %zu", cases[i].in, cases[i].max);
		free(c);
	}
}

Test(text, skip_prefix_sets_rest_only_on_a_match)
{
	const char *rest = "untouched";

	cr_assert(fg_skip_prefix("gitdir: /x", "gitdir: ", &rest));
	cr_assert_str_eq(rest, "/x");
	cr_assert(fg_skip_prefix("abc", "abc", &rest));
	cr_assert_str_eq(rest, "");
	cr_assert(fg_skip_prefix("abc", "", &rest));
	cr_assert_str_eq(rest, "abc");
	rest = "untouched";
	cr_assert(!fg_skip_prefix("ab", "abc", &rest));
	cr_assert(!fg_skip_prefix("xabc", "abc", &rest));
	cr_assert_str_eq(rest, "untouched");
	cr_assert(fg_skip_prefix("include.path", "include.", NULL));
}
