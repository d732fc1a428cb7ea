/*
 * test_cycle.c - review_cycle_N.json: file names, what a write puts in the
 * file and what a read gives back, exhaustion, the cycle directory's
 * template and the run id rule. Parsing: test_cycle_parse.c; the files on
 * disk: test_cycle_disk.c; a panel's reviews, usage and denied tools:
 * test_cycle_review.c.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fgtest.h"
#include "forge/cycle.h"
#include "forge/fsutil.h"
#include "forge/util.h"

#include "cycle_sample.h"
#include "tmp_fixture.h"

TestSuite(cycle, .init = tmp_init, .fini = tmp_fini, .timeout = 60);

/* ---- names ---- */

struct name_case { const char *name; int ok; int n; };

Test(cycle, name_parse_table)
{
	static const struct name_case cases[] = {
		{ "review_cycle_1.json", 1, 1 },
		{ "review_cycle_9.json", 1, 9 },
		{ "review_cycle_10.json", 1, 10 },
		{ "review_cycle_100000.json", 1, 100000 },
		{ "review_cycle_100001.json", 0, 0 },
		{ "review_cycle_99999999999999999999.json", 0, 0 },
		{ "review_cycle_0.json", 0, 0 },
		{ "review_cycle_01.json", 0, 0 },
		{ "review_cycle_.json", 0, 0 },
		{ "review_cycle_-1.json", 0, 0 },
		{ "review_cycle_+1.json", 0, 0 },
		{ "review_cycle_ 1.json", 0, 0 },
		{ "review_cycle_1.json.tmp", 0, 0 },
		{ ".review_cycle_1.json.tmp.123", 0, 0 },
		{ "review_cycle_1.jsonx", 0, 0 },
		{ "review_cycle_1.JSON", 0, 0 },
		{ "REVIEW_CYCLE_1.json", 0, 0 },
		{ "review_cycle_1x.json", 0, 0 },
		{ "review_cycle_1", 0, 0 },
		{ "xreview_cycle_1.json", 0, 0 },
		{ "review_summary.json", 0, 0 },
		{ "", 0, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int n = -7;

		cr_expect_eq(fg_cycle_name_parse(cases[i].name, &n), cases[i].ok, "'%s'", cases[i].name);
		cr_expect_eq(n, cases[i].ok ? cases[i].n : -7, "'%s': n untouched on refusal", cases[i].name);
	}
}

Test(cycle, file_name_round_trips)
{
	static const int ns[] = { 1, 9, 10, 11, 100000 };

	for (size_t i = 0; i < ARRAY_SIZE(ns); i++) {
		char *name = fg_cycle_file_name(ns[i]);
		int n = 0;

		cr_assert_eq(fg_cycle_name_parse(name, &n), 1, "%s", name);
		cr_assert_eq(n, ns[i]);
		cr_assert_eq(fnmatch("review_cycle_*.json", name, 0), 0);
		free(name);
	}
}

/* ---- writing and round trips ---- */

Test(cycle, minimal_write_has_exactly_the_required_fields)
{
	static const char *const keys[] = { "cycle", "max_cycles", "verdict", "feedback", "skill",
					    "elapsed_seconds", "timestamp" };
	char *path = tmp_path("review_cycle_2.json");
	struct fg_cycle c;
	cJSON *o;

	cycle_fill(&c, 2, 3, FG_VERDICT_REJECTED);
	cr_assert_eq(fg_cycle_write(tmp_dir, &c), 0);
	o = read_keys_in_order(path, keys, ARRAY_SIZE(keys));
	cr_assert_eq(cJSON_GetObjectItem(o, "cycle")->valuedouble, 2);
	cr_assert_str_eq(cJSON_GetObjectItem(o, "verdict")->valuestring, "rejected");
	cr_assert_str_eq(cJSON_GetObjectItem(o, "feedback")->valuestring, "needs work");
	cJSON_Delete(o);
	fg_cycle_release(&c);
}

Test(cycle, optional_fields_written_only_when_set)
{
	struct fg_cycle c;
	cJSON *o;

	cycle_fill(&c, 1, 3, FG_VERDICT_APPROVED);
	c.synthetic = false;
	c.stalled = false;
	c.j.has_format = false;
	c.j.has_findings = false;
	o = fg_cycle_to_cjson(&c);
	cr_assert_null(cJSON_GetObjectItem(o, "run_id"));
	cr_assert_null(cJSON_GetObjectItem(o, "synthetic"));
	cr_assert_null(cJSON_GetObjectItem(o, "stalled"));
	cr_assert_null(cJSON_GetObjectItem(o, "format"));
	cr_assert_null(cJSON_GetObjectItem(o, "findings"));
	cr_assert_null(cJSON_GetObjectItem(o, "reviewer_log"));
	cr_assert_str_eq(cJSON_GetObjectItem(o, "feedback")->valuestring, "");
	cJSON_Delete(o);

	c.run_id = fgt_fmt("run-1");
	c.synthetic = true;
	c.stalled = true;
	c.j.has_format = true;
	c.j.format = FG_FORMAT_VERDICT_LINE;
	c.j.has_findings = true;   /* an empty findings array is still written */
	c.reviewer_log = fgt_fmt("review_cycle_1.reviewer.log");
	o = fg_cycle_to_cjson(&c);
	cr_assert_str_eq(cJSON_GetObjectItem(o, "run_id")->valuestring, "run-1");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "synthetic")));
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "stalled")));
	cr_assert_str_eq(cJSON_GetObjectItem(o, "format")->valuestring, "verdict_line");
	cr_assert(cJSON_IsArray(cJSON_GetObjectItem(o, "findings")));
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "findings")), 0);
	cr_assert_str_eq(cJSON_GetObjectItem(o, "reviewer_log")->valuestring,
			 "review_cycle_1.reviewer.log");
	cJSON_Delete(o);
	fg_cycle_release(&c);
}

struct elapsed_case { double in; double want; };

Test(cycle, elapsed_seconds_rounded_to_milliseconds)
{
	static const struct elapsed_case cases[] = {
		{ 45.23456, 45.235 }, { 45.2, 45.2 }, { 0.0004, 0 }, { 0.0005, 0.001 },
		{ 3, 3 }, { 0, 0 }, { -1, 0 }, { NAN, 0 }, { INFINITY, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fg_cycle c;
		cJSON *o;

		cycle_fill(&c, 1, 1, FG_VERDICT_APPROVED);
		c.elapsed_seconds = cases[i].in;
		o = fg_cycle_to_cjson(&c);
		cr_expect_eq(cJSON_GetObjectItem(o, "elapsed_seconds")->valuedouble, cases[i].want,
			     "%g", cases[i].in);
		cJSON_Delete(o);
		fg_cycle_release(&c);
	}
}

Test(cycle, elapsed_seconds_text_has_three_decimals_at_most)
{
	struct fg_cycle c;
	char *text;

	cycle_fill(&c, 1, 1, FG_VERDICT_APPROVED);
	c.elapsed_seconds = 45.23456789;
	text = fg_cycle_to_json(&c);
	cr_assert_not_null(strstr(text, "45.235"), "%s", text);
	cr_assert_null(strstr(text, "45.2345"), "%s", text);
	free(text);
	fg_cycle_release(&c);
}

static void assert_same(const struct fg_cycle *a, const struct fg_cycle *b)
{
	cr_assert_eq(a->cycle, b->cycle);
	cr_assert_eq(a->max_cycles, b->max_cycles);
	cr_assert_eq(a->j.verdict, b->j.verdict);
	cr_assert_str_eq(a->j.feedback, b->j.feedback);
	cr_assert_str_eq(a->skill, b->skill);
	cr_assert_eq(a->elapsed_seconds, b->elapsed_seconds);
	cr_assert_str_eq(a->timestamp, b->timestamp);
	cr_assert_eq(!!a->run_id, !!b->run_id);
	if (a->run_id)
		cr_assert_str_eq(a->run_id, b->run_id);
	cr_assert_eq(a->synthetic, b->synthetic);
	cr_assert_eq(a->stalled, b->stalled);
	cr_assert_eq(a->j.has_format, b->j.has_format);
	if (a->j.has_format)
		cr_assert_eq(a->j.format, b->j.format);
	cr_assert_eq(!!a->reviewer_log, !!b->reviewer_log);
	if (a->reviewer_log)
		cr_assert_str_eq(a->reviewer_log, b->reviewer_log);
	cr_assert_eq(a->j.has_findings, b->j.has_findings);
	cr_assert_eq(a->j.nfindings, b->j.nfindings);
}

static void round_trip(const struct fg_cycle *c)
{
	char *dir = fgt_tmpdir();
	char *name = fg_cycle_file_name(c->cycle);
	char err[256] = "";
	struct fg_cycle back;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);

	cr_assert_eq(fg_cycle_write(dir, c), 0);
	fg_cycle_init(&back);
	cr_assert_eq(fg_cycle_read_at(dfd, name, &back, NULL, err, sizeof(err)), 0, "%s", err);
	assert_same(c, &back);
	cr_assert_eq(fgt_count_entries(dir), 1, "no temp file left");
	fg_cycle_release(&back);
	close(dfd);
	fgt_rm_rf(dir);
	free(name);
	free(dir);
}

Test(cycle, round_trip_minimal)
{
	struct fg_cycle c;

	cycle_fill(&c, 1, 3, FG_VERDICT_APPROVED);
	round_trip(&c);
	fg_cycle_release(&c);
	cycle_fill(&c, 10, 10, FG_VERDICT_REJECTED);
	round_trip(&c);
	fg_cycle_release(&c);
}

Test(cycle, round_trip_with_every_optional_field)
{
	static const enum fg_verdict_format formats[] = {
		FG_FORMAT_JSON_SHADOW, FG_FORMAT_REVIEW_RESULT_MARKER, FG_FORMAT_VERDICT_LINE,
		FG_FORMAT_MARKER, FG_FORMAT_NONE,
	};

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		struct fg_cycle c;

		cycle_fill(&c, 3, 3, FG_VERDICT_REJECTED);
		c.run_id = fgt_fmt("run-%zu", i);
		c.synthetic = true;
		c.stalled = true;
		c.j.has_format = true;
		c.j.format = formats[i];
		c.reviewer_log = fgt_fmt("review_cycle_3.reviewer.log");
		c.elapsed_seconds = 12.345;
		round_trip(&c);
		fg_cycle_release(&c);
	}
}

Test(cycle, round_trip_findings)
{
	struct fg_cycle c, back;
	char *text;

	cycle_fill(&c, 2, 3, FG_VERDICT_REJECTED);
	c.j.has_findings = true;
	c.j.nfindings = 2;
	c.j.findings = calloc(2, sizeof(*c.j.findings));
	c.j.findings[0].severity = fgt_fmt("BLOCKING");
	c.j.findings[0].ordinal = 1;
	c.j.findings[0].file_path = fgt_fmt("src/a.c");
	c.j.findings[0].line = 42;
	c.j.findings[0].title = fgt_fmt("Unchecked length");
	c.j.findings[0].description = fgt_fmt("desc");
	c.j.findings[0].evidence = fgt_fmt("memcpy(d, s, n);");
	c.j.findings[0].fix = fgt_fmt("check n");
	c.j.findings[1].severity = fgt_fmt("NOTE");
	c.j.findings[1].ordinal = 2;
	c.j.findings[1].line = -1;
	c.j.findings[1].title = fgt_fmt("Naming");
	text = fg_cycle_to_json(&c);
	cycle_parse_ok(&back, text);
	cr_assert(back.j.has_findings);
	cr_assert_eq(back.j.nfindings, 2);
	cr_assert_str_eq(back.j.findings[0].severity, "BLOCKING");
	cr_assert_eq(back.j.findings[0].ordinal, 1);
	cr_assert_str_eq(back.j.findings[0].file_path, "src/a.c");
	cr_assert_eq(back.j.findings[0].line, 42);
	cr_assert_str_eq(back.j.findings[0].evidence, "memcpy(d, s, n);");
	cr_assert_str_eq(back.j.findings[1].title, "Naming");
	cr_assert_eq(back.j.findings[1].line, -1);
	free(text);
	fg_cycle_release(&back);
	fg_cycle_release(&c);
}

Test(cycle, feedback_stored_as_is)
{
	static const char *const texts[] = {
		"line one\nline two\n\n  indented\t\"quoted\" \\ backslash",
		"unicode: \xc3\xa9\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82 and control \x01\x1f",
		"  leading and trailing space  ",
		"</script> {\"json\": true} APPROVED",
	};

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct fg_cycle c;

		cycle_fill(&c, 1, 2, FG_VERDICT_REJECTED);
		free(c.j.feedback);
		c.j.feedback = fgt_fmt("%s", texts[i]);
		round_trip(&c);
		fg_cycle_release(&c);
	}
}

Test(cycle, write_refuses_out_of_range_cycle)
{
	struct fg_cycle c;

	cycle_fill(&c, 0, 3, FG_VERDICT_REJECTED);
	cr_assert_eq(fg_cycle_write(tmp_dir, &c), -EINVAL);
	c.cycle = FG_CYCLE_NUMBER_MAX + 1;
	cr_assert_eq(fg_cycle_write(tmp_dir, &c), -EINVAL);
	cr_assert_eq(fgt_count_entries(tmp_dir), 0);
	fg_cycle_release(&c);
}

/* ---- exhaustion ---- */

struct ex_cycle {
	int n, max;
	enum fg_verdict_kind v;
	bool synthetic;
};

struct ex_case { const char *what; struct ex_cycle c[4]; size_t n; bool want; };

#define REJ FG_VERDICT_REJECTED
#define APP FG_VERDICT_APPROVED

Test(cycle, exhausted_table)
{
	static const struct ex_case cases[] = {
		{ "no cycles", { { 0 } }, 0, false },
		{ "first rejection", { { 1, 3, REJ, false } }, 1, false },
		{ "last rejected at the limit", { { 1, 3, REJ, false }, { 2, 3, REJ, false }, { 3, 3, REJ, false } }, 3, true },
		{ "unsorted, last rejected", { { 3, 3, REJ, false }, { 1, 3, REJ, false }, { 2, 3, REJ, false } }, 3, true },
		{ "approved at the limit", { { 1, 3, REJ, false }, { 2, 3, REJ, false }, { 3, 3, APP, false } }, 3, false },
		{ "unsorted, last approved", { { 1, 3, REJ, false }, { 3, 3, APP, false }, { 2, 3, REJ, false } }, 3, false },
		{ "below the limit", { { 1, 3, REJ, false }, { 2, 3, REJ, false } }, 2, false },
		{ "past the limit", { { 4, 3, REJ, false } }, 1, true },
		{ "limit of one", { { 1, 1, REJ, false } }, 1, true },
		{ "the last cycle's own limit counts", { { 1, 1, REJ, false }, { 2, 5, REJ, false } }, 2, false },
		{ "10 after 9", { { 10, 10, REJ, false }, { 9, 10, APP, false } }, 2, true },
		{ "synthetic marker at the limit", { { 1, 3, REJ, false }, { 3, 3, REJ, true } }, 2, true },
		{ "synthetic flag alone is not exhaustion", { { 1, 3, REJ, false }, { 2, 3, REJ, true } }, 2, false },
		{ "rewrite of the last cycle wins", { { 2, 2, APP, false }, { 2, 2, REJ, false } }, 2, true },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fg_cycle cs[4];

		for (size_t j = 0; j < cases[i].n; j++) {
			fg_cycle_init(&cs[j]);
			cs[j].cycle = cases[i].c[j].n;
			cs[j].max_cycles = cases[i].c[j].max;
			cs[j].j.verdict = cases[i].c[j].v;
			cs[j].synthetic = cases[i].c[j].synthetic;
		}
		cr_expect_eq(fg_cycles_exhausted(cs, cases[i].n), cases[i].want, "%s", cases[i].what);
	}
	cr_expect_not(fg_cycles_exhausted(NULL, 0));
}

/* fg_cycle_dir() of step "impl", skill "implement-task" and task_key. */
static int expand(const char *tmpl, const char *task_key, char **d, char *err, size_t errlen)
{
	const struct fg_cycle_dir_vars v = { "impl", task_key, "implement-task" };

	return fg_cycle_dir(tmpl, &v, d, err, errlen);
}

Test(cycle, cycle_dir_expands_the_template)
{
	static const struct { const char *tmpl, *want; } cases[] = {
		{ NULL, ".forge/impl" },
		{ ".forge/{step}", ".forge/impl" },
		{ "reviews/{step}/cycles-{step}", "reviews/impl/cycles-impl" },
		{ ".forge/reviews/{task_key}__{skill}", ".forge/reviews/DEMO-1__implement-task" },
		{ "fixed", "fixed" },
		{ "a.b/..c/d..", "a.b/..c/d.." },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char err[256] = "", *d = NULL;

		cr_assert_eq(expand(cases[i].tmpl, "DEMO-1", &d, err, sizeof(err)), 0, "case %zu: %s", i, err);
		cr_assert_str_eq(d, cases[i].want, "case %zu", i);
		free(d);
	}
}

Test(cycle, cycle_dir_refuses_what_leaves_the_workspace_or_cannot_be_expanded)
{
	static const struct { const char *tmpl, *why; } cases[] = {
		{ "/etc/{step}", "stay below the workspace" },
		{ "../{step}", "stay below the workspace" },
		{ ".forge/../../x", "stay below the workspace" },
		{ ".forge/./{step}", "stay below the workspace" },
		{ ".forge//{step}", "stay below the workspace" },
		{ ".forge/{step}/", "stay below the workspace" },
		{ "", "stay below the workspace" },
		{ "{step}/..", "stay below the workspace" },
		{ ".forge/{ticket}", "unexpected brace" },
		{ ".forge/{step", "unexpected brace" },
		{ ".forge/step}", "unexpected brace" },
		{ ".forge/a\nb", "control character" },
		{ ".forge/{task_key}", "{task_key} has no value" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char err[256] = "", *d = (char *)"untouched";

		cr_assert_eq(expand(cases[i].tmpl, "", &d, err, sizeof(err)), -EINVAL, "case %zu", i);
		cr_assert_str_eq(d, "untouched", "case %zu", i);
		cr_assert_not_null(strstr(err, cases[i].why), "case %zu: %s", i, err);
	}
	char *huge = malloc(PATH_MAX + 16), err[256] = "", *d = NULL;
	memset(huge, 'a', PATH_MAX + 15);
	huge[PATH_MAX + 15] = '\0';
	cr_assert_eq(expand(huge, "", &d, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "longer than"), "%s", err);
	free(huge);
}

Test(cycle, run_id_rule_table)
{
	static const struct { const char *expected, *got; bool accepted; } cases[] = {
		{ NULL, NULL, true }, { NULL, "abc", true }, { "abc", NULL, true },
		{ "abc", "abc", true }, { "abc", "abd", false }, { "abc", "", false },
		{ "", "", true }, { "abc", "ABC", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_assert_eq(fg_run_id_accepts(cases[i].expected, cases[i].got), cases[i].accepted,
			     "case %zu", i);
}
