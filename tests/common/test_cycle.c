/*
 * test_cycle.c - review_cycle_N.json: names, writing, reading and
 * validation, listing order, exhaustion.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgtest.h"
#include "forge/cycle.h"
#include "forge/fsutil.h"

TestSuite(cycle, .timeout = 60);

/* fg_cycle_list_at() on dir, opened for the call. */
static int list_dir(const char *dir, struct fg_cycle_entry **e, size_t *n)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r;

	if (dfd < 0)
		return -errno;
	r = fg_cycle_list_at(dfd, e, n);
	close(dfd);
	return r;
}

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

static const char base_json[] =
	"{\"cycle\": 2, \"max_cycles\": 3, \"verdict\": \"rejected\", \"feedback\": \"fix it\","
	" \"skill\": \"implement-task\", \"elapsed_seconds\": 1.5,"
	" \"timestamp\": \"2026-01-15T10:30:00Z\"}";

/* base_json with key set to the JSON text value, or removed when value is NULL. */
static char *patched(const char *key, const char *value)
{
	cJSON *o = cJSON_Parse(base_json);
	char *text, *out;

	cr_assert_not_null(o);
	if (value) {
		cJSON *v = cJSON_Parse(value);

		cr_assert_not_null(v, "bad test value %s", value);
		if (cJSON_GetObjectItemCaseSensitive(o, key))
			cJSON_ReplaceItemInObjectCaseSensitive(o, key, v);
		else
			cJSON_AddItemToObject(o, key, v);
	} else {
		cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	}
	text = cJSON_PrintUnformatted(o);
	out = fgt_fmt("%s", text);
	cJSON_free(text);
	cJSON_Delete(o);
	return out;
}

static void fill(struct fg_cycle *c, int n, int max, enum fg_verdict_kind v)
{
	fg_cycle_init(c);
	c->cycle = n;
	c->max_cycles = max;
	c->j.verdict = v;
	c->j.feedback = fgt_fmt("%s", v == FG_VERDICT_APPROVED ? "" : "needs work");
	c->skill = fgt_fmt("implement-task");
	c->elapsed_seconds = 2.25;
	snprintf(c->timestamp, sizeof(c->timestamp), "2026-01-15T10:30:0%dZ", n % 10);
}

/* ---- names ---- */

struct name_case {
	const char *name;
	int ok;
	int n;
};

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

	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		int n = -7;

		cr_expect_eq(fg_cycle_name_parse(cases[i].name, &n), cases[i].ok, "'%s'", cases[i].name);
		cr_expect_eq(n, cases[i].ok ? cases[i].n : -7, "'%s': n untouched on refusal", cases[i].name);
	}
}

Test(cycle, file_name_round_trips)
{
	static const int ns[] = { 1, 9, 10, 11, 100000 };

	for (size_t i = 0; i < N_ELEMS(ns); i++) {
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
	char *dir = fgt_tmpdir();
	char *path = fgt_fmt("%s/review_cycle_2.json", dir);
	struct fg_cycle c;
	cJSON *o, *it;
	char *text;
	size_t i = 0;

	fill(&c, 2, 3, FG_VERDICT_REJECTED);
	cr_assert_eq(fg_cycle_write(dir, &c), 0);
	text = fgt_read(path, NULL);
	cr_assert_not_null(text);
	cr_assert_eq(text[strlen(text) - 1], '\n', "ends with a newline");
	o = cJSON_Parse(text);
	cr_assert_not_null(o);
	cJSON_ArrayForEach(it, o) {
		cr_assert_lt(i, N_ELEMS(keys), "unexpected field '%s'", it->string);
		cr_assert_str_eq(it->string, keys[i]);
		i++;
	}
	cr_assert_eq(i, N_ELEMS(keys));
	cr_assert_eq(cJSON_GetObjectItem(o, "cycle")->valuedouble, 2);
	cr_assert_str_eq(cJSON_GetObjectItem(o, "verdict")->valuestring, "rejected");
	cr_assert_str_eq(cJSON_GetObjectItem(o, "feedback")->valuestring, "needs work");
	cJSON_Delete(o);
	free(text);
	fg_cycle_release(&c);
	fgt_rm_rf(dir);
	free(path);
	free(dir);
}

Test(cycle, optional_fields_written_only_when_set)
{
	struct fg_cycle c;
	cJSON *o;

	fill(&c, 1, 3, FG_VERDICT_APPROVED);
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

struct elapsed_case {
	double in;
	double want;
};

Test(cycle, elapsed_seconds_rounded_to_milliseconds)
{
	static const struct elapsed_case cases[] = {
		{ 45.23456, 45.235 }, { 45.2, 45.2 }, { 0.0004, 0 }, { 0.0005, 0.001 },
		{ 3, 3 }, { 0, 0 }, { -1, 0 }, { NAN, 0 }, { INFINITY, 0 },
	};

	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		struct fg_cycle c;
		cJSON *o;

		fill(&c, 1, 1, FG_VERDICT_APPROVED);
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

	fill(&c, 1, 1, FG_VERDICT_APPROVED);
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

	fill(&c, 1, 3, FG_VERDICT_APPROVED);
	round_trip(&c);
	fg_cycle_release(&c);
	fill(&c, 10, 10, FG_VERDICT_REJECTED);
	round_trip(&c);
	fg_cycle_release(&c);
}

Test(cycle, round_trip_with_every_optional_field)
{
	static const enum fg_verdict_format formats[] = {
		FG_FORMAT_JSON_SHADOW, FG_FORMAT_REVIEW_RESULT_MARKER, FG_FORMAT_VERDICT_LINE,
		FG_FORMAT_MARKER, FG_FORMAT_NONE,
	};

	for (size_t i = 0; i < N_ELEMS(formats); i++) {
		struct fg_cycle c;

		fill(&c, 3, 3, FG_VERDICT_REJECTED);
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
	char err[256];

	fill(&c, 2, 3, FG_VERDICT_REJECTED);
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
	fg_cycle_init(&back);
	cr_assert_eq(fg_cycle_parse(&back, text, strlen(text), err, sizeof(err)), 0, "%s", err);
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

	for (size_t i = 0; i < N_ELEMS(texts); i++) {
		struct fg_cycle c;

		fill(&c, 1, 2, FG_VERDICT_REJECTED);
		free(c.j.feedback);
		c.j.feedback = fgt_fmt("%s", texts[i]);
		round_trip(&c);
		fg_cycle_release(&c);
	}
}

Test(cycle, write_refuses_out_of_range_cycle)
{
	char *dir = fgt_tmpdir();
	struct fg_cycle c;

	fill(&c, 0, 3, FG_VERDICT_REJECTED);
	cr_assert_eq(fg_cycle_write(dir, &c), -EINVAL);
	c.cycle = FG_CYCLE_NUMBER_MAX + 1;
	cr_assert_eq(fg_cycle_write(dir, &c), -EINVAL);
	cr_assert_eq(fgt_count_entries(dir), 0);
	fg_cycle_release(&c);
	fgt_rm_rf(dir);
	free(dir);
}

/* ---- atomicity ---- */

Test(cycle, write_replaces_old_file_and_leaves_only_canonical_names)
{
	char *dir = fgt_tmpdir();
	struct fg_cycle c;
	struct fg_cycle_entry *e = NULL;
	size_t n = 0;
	DIR *d;
	struct dirent *de;

	fill(&c, 1, 3, FG_VERDICT_REJECTED);
	cr_assert_eq(fg_cycle_write(dir, &c), 0);
	c.j.verdict = FG_VERDICT_APPROVED;
	cr_assert_eq(fg_cycle_write(dir, &c), 0);
	d = opendir(dir);
	for (de = readdir(d); de; de = readdir(d)) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		cr_assert_str_eq(de->d_name, "review_cycle_1.json");
	}
	closedir(d);
	cr_assert_eq(list_dir(dir, &e, &n), 0);
	cr_assert_eq(n, 1);
	fg_cycle_entries_free(e, n);
	fg_cycle_release(&c);
	fgt_rm_rf(dir);
	free(dir);
}

Test(cycle, temp_name_of_every_cycle_misses_the_glob)
{
	for (int i = 1; i <= 12; i++) {
		char *name = fg_cycle_file_name(i);
		char *tmp = fg_atomic_tmp_name(name);
		int n;

		cr_assert_neq(fnmatch("review_cycle_*.json", tmp, 0), 0, "%s", tmp);
		cr_assert_neq(fnmatch("review_cycle_*.json", tmp, FNM_PERIOD), 0, "%s", tmp);
		cr_assert_eq(fg_cycle_name_parse(tmp, &n), 0, "%s", tmp);
		free(tmp);
		free(name);
	}
}

Test(cycle, failed_write_keeps_old_file_and_leaves_no_temp)
{
	char *dir = fgt_tmpdir();
	char *missing = fgt_fmt("%s/gone", dir);
	char *blocker = fgt_fmt("%s/review_cycle_4.json/x", dir);
	struct fg_cycle c;
	char *got;

	fill(&c, 4, 4, FG_VERDICT_REJECTED);
	cr_assert_eq(fg_cycle_write(missing, &c), -ENOENT);
	/* The name is taken by a non-empty directory: rename fails, even as root. */
	fgt_write(blocker, "old");
	cr_assert_lt(fg_cycle_write(dir, &c), 0);
	got = fgt_read(blocker, NULL);
	cr_assert_str_eq(got, "old");
	free(got);
	cr_assert_eq(fgt_count_entries(dir), 1, "a temp file was left behind");
	fg_cycle_release(&c);
	fgt_rm_rf(dir);
	free(missing);
	free(blocker);
	free(dir);
}

/* ---- validation ---- */

struct bad_case {
	const char *key;
	const char *value;   /* JSON text, NULL: field removed */
	const char *reason;
};

Test(cycle, invalid_fields_table)
{
	static const struct bad_case cases[] = {
		{ "cycle", NULL, "missing field 'cycle'" },
		{ "cycle", "1.5", "field 'cycle' must be an integer >= 1" },
		{ "cycle", "\"1\"", "field 'cycle' must be an integer >= 1" },
		{ "cycle", "true", "field 'cycle' must be an integer >= 1" },
		{ "cycle", "0", "field 'cycle' must be an integer >= 1" },
		{ "cycle", "-1", "field 'cycle' must be an integer >= 1" },
		{ "cycle", "null", "field 'cycle' must be an integer >= 1" },
		{ "cycle", "[1]", "field 'cycle' must be an integer >= 1" },
		{ "cycle", "{}", "field 'cycle' must be an integer >= 1" },
		{ "cycle", "0.999", "field 'cycle' must be an integer >= 1" },
		{ "cycle", "100001", "field 'cycle' must be at most 100000" },
		{ "cycle", "1e300", "field 'cycle' must be at most 100000" },
		{ "max_cycles", NULL, "missing field 'max_cycles'" },
		{ "max_cycles", "0", "field 'max_cycles' must be an integer >= 1" },
		{ "max_cycles", "-3", "field 'max_cycles' must be an integer >= 1" },
		{ "max_cycles", "2.5", "field 'max_cycles' must be an integer >= 1" },
		{ "max_cycles", "\"3\"", "field 'max_cycles' must be an integer >= 1" },
		{ "max_cycles", "false", "field 'max_cycles' must be an integer >= 1" },
		{ "max_cycles", "1e20", "field 'max_cycles' must be at most 100000" },
		{ "max_cycles", "100001", "field 'max_cycles' must be at most 100000" },
		{ "verdict", NULL, "missing field 'verdict'" },
		{ "verdict", "\"APPROVED\"", "field 'verdict' must be \"approved\" or \"rejected\"" },
		{ "verdict", "\"Rejected\"", "field 'verdict' must be \"approved\" or \"rejected\"" },
		{ "verdict", "\"approve\"", "field 'verdict' must be \"approved\" or \"rejected\"" },
		{ "verdict", "\" approved\"", "field 'verdict' must be \"approved\" or \"rejected\"" },
		{ "verdict", "\"\"", "field 'verdict' must be \"approved\" or \"rejected\"" },
		{ "verdict", "true", "field 'verdict' must be a string" },
		{ "verdict", "null", "field 'verdict' must be a string" },
		{ "feedback", NULL, "missing field 'feedback'" },
		{ "feedback", "1", "field 'feedback' must be a string" },
		{ "feedback", "null", "field 'feedback' must be a string" },
		{ "feedback", "[\"a\"]", "field 'feedback' must be a string" },
		{ "skill", NULL, "missing field 'skill'" },
		{ "skill", "5", "field 'skill' must be a string" },
		{ "skill", "null", "field 'skill' must be a string" },
		/* Issue 18 defect 2: the skill becomes a metrics label and the
		 * result's skill, so it is held to the names rule. */
		{ "skill", "\"\"", "field 'skill': invalid skill name '': is empty" },
		{ "skill", "\"a b\"", "field 'skill': invalid skill name 'a b': contains whitespace" },
		{ "skill", "\"a\\u0007b\"", "field 'skill': invalid skill name 'a\\x07b': contains a control character" },
		{ "skill", "\"a\\nb\"", "field 'skill': invalid skill name 'a\\x0ab': contains a control character" },
		{ "skill", "\"../x\"", "field 'skill': invalid skill name '../x': contains '/'" },
		{ "elapsed_seconds", "1e10", "field 'elapsed_seconds' must be a number from 0 to 1000000000" },
		{ "elapsed_seconds", NULL, "missing field 'elapsed_seconds'" },
		{ "elapsed_seconds", "-0.1", "field 'elapsed_seconds' must be a number from 0 to 1000000000" },
		{ "elapsed_seconds", "\"1.5\"", "field 'elapsed_seconds' must be a number from 0 to 1000000000" },
		{ "elapsed_seconds", "null", "field 'elapsed_seconds' must be a number from 0 to 1000000000" },
		{ "elapsed_seconds", "true", "field 'elapsed_seconds' must be a number from 0 to 1000000000" },
		{ "elapsed_seconds", "1e999", "field 'elapsed_seconds' must be a number from 0 to 1000000000" },
		{ "timestamp", NULL, "missing field 'timestamp'" },
		{ "timestamp", "12345", "field 'timestamp' must be a string" },
		{ "timestamp", "null", "field 'timestamp' must be a string" },
		{ "timestamp", "\"2026-01-15 10:30:00Z\"", "field 'timestamp' must be UTC 'YYYY-MM-DDTHH:MM:SSZ'" },
		{ "timestamp", "\"2026-01-15T10:30:00\"", "field 'timestamp' must be UTC 'YYYY-MM-DDTHH:MM:SSZ'" },
		{ "timestamp", "\"2026-13-01T00:00:00Z\"", "field 'timestamp' must be UTC 'YYYY-MM-DDTHH:MM:SSZ'" },
		{ "timestamp", "\"2026-01-15T10:30:00.123Z\"", "field 'timestamp' must be UTC 'YYYY-MM-DDTHH:MM:SSZ'" },
		{ "timestamp", "\"2026-01-15T10:30:00+00:00\"", "field 'timestamp' must be UTC 'YYYY-MM-DDTHH:MM:SSZ'" },
		{ "timestamp", "\"\"", "field 'timestamp' must be UTC 'YYYY-MM-DDTHH:MM:SSZ'" },
	};

	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		char *text = patched(cases[i].key, cases[i].value);
		char err[256] = "";
		struct fg_cycle c;

		fg_cycle_init(&c);
		cr_expect_eq(fg_cycle_parse(&c, text, strlen(text), err, sizeof(err)), -EINVAL, "%s", text);
		cr_expect_str_eq(err, cases[i].reason, "%s", text);
		cr_expect_null(c.j.feedback, "left empty on failure");
		cr_expect_null(c.skill);
		cr_expect_eq(c.cycle, 0);
		fg_cycle_release(&c);
		free(text);
	}
}

struct json_case {
	const char *text;
	size_t len;          /* 0: strlen(text) */
	const char *reason;
};

Test(cycle, not_json_table)
{
	static const struct json_case cases[] = {
		{ "", 0, "not valid JSON" },
		{ "   \n", 0, "not valid JSON" },
		{ "{", 0, "not valid JSON" },
		{ "{\"cycle\": 1, \"max_cycles\": 3,", 0, "not valid JSON" },
		{ "{\"cycle\": 1} trailing", 0, "not valid JSON" },
		{ "{\"cycle\": 1}{}", 0, "not valid JSON" },
		{ "{\"cycle\": 1}\0{}", 15, "contains a NUL byte" },
		{ "\xff\xfe{}", 0, "not valid UTF-8 at byte 0" },
		/* Issue 17 point 4: invalid UTF-8 in any string makes the file
		 * corrupt, whichever field holds it. */
		{ "{\"feedback\": \"ok \xff\xfe\"}", 0, "not valid UTF-8 at byte 17" },
		{ "{\"skill\": \"\xc3\"}", 0, "not valid UTF-8 at byte 11" },
		{ "{\"f\": \"\xed\xa0\x80\"}", 0, "not valid UTF-8 at byte 7" },
		{ "{\"f\": \"\\ud800\"}", 0, "not valid JSON" },
		{ "[1, 2]", 0, "not a JSON object" },
		{ "null", 0, "not a JSON object" },
		{ "\"review\"", 0, "not a JSON object" },
		{ "3", 0, "not a JSON object" },
	};

	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
		char err[256] = "";
		struct fg_cycle c;

		fg_cycle_init(&c);
		cr_expect_eq(fg_cycle_parse(&c, cases[i].text, len, err, sizeof(err)), -EINVAL, "case %zu", i);
		cr_expect_str_eq(err, cases[i].reason, "case %zu", i);
		fg_cycle_release(&c);
	}
}

Test(cycle, truncated_valid_file_is_never_accepted)
{
	size_t len = strlen(base_json);

	/* Every proper prefix of a valid cycle is invalid JSON: a reader that
	 * sees a half-written file from somebody else rejects it. */
	for (size_t cut = 0; cut < len; cut++) {
		struct fg_cycle c;
		char err[64];

		fg_cycle_init(&c);
		cr_assert_eq(fg_cycle_parse(&c, base_json, cut, err, sizeof(err)), -EINVAL, "cut %zu", cut);
		cr_assert_str_eq(err, "not valid JSON", "cut %zu", cut);
		fg_cycle_release(&c);
	}
}

Test(cycle, failed_parse_releases_earlier_contents)
{
	struct fg_cycle c;
	char err[64];
	const char *bad = "{\"cycle\": 0}";

	fg_cycle_init(&c);
	cr_assert_eq(fg_cycle_parse(&c, base_json, strlen(base_json), err, sizeof(err)), 0);
	cr_assert_str_eq(c.j.feedback, "fix it");
	cr_assert_eq(fg_cycle_parse(&c, bad, strlen(bad), err, sizeof(err)), -EINVAL);
	cr_assert_null(c.j.feedback);
	cr_assert_null(c.skill);
	cr_assert_eq(c.cycle, 0);
	/* A NULL error buffer is allowed. */
	cr_assert_eq(fg_cycle_parse(&c, bad, strlen(bad), NULL, 0), -EINVAL);
	fg_cycle_release(&c);
}

Test(cycle, integral_numbers_accepted_however_written)
{
	static const char *const values[] = { "2", "2.0", "2e0", "20e-1" };

	for (size_t i = 0; i < N_ELEMS(values); i++) {
		char *text = patched("cycle", values[i]);
		char err[128] = "";
		struct fg_cycle c;

		fg_cycle_init(&c);
		cr_expect_eq(fg_cycle_parse(&c, text, strlen(text), err, sizeof(err)), 0, "%s: %s", text, err);
		cr_expect_eq(c.cycle, 2);
		fg_cycle_release(&c);
		free(text);
	}
}

struct opt_case {
	const char *key;
	const char *value;
};

Test(cycle, optional_fields_with_wrong_types_are_ignored)
{
	static const struct opt_case cases[] = {
		{ "run_id", "17" }, { "run_id", "null" }, { "run_id", "[\"r\"]" },
		{ "synthetic", "\"true\"" }, { "synthetic", "1" }, { "synthetic", "false" },
		{ "stalled", "\"yes\"" }, { "stalled", "1" }, { "stalled", "null" },
		{ "format", "\"telepathy\"" }, { "format", "3" }, { "format", "\"MARKER\"" },
		{ "findings", "{}" }, { "findings", "\"none\"" }, { "findings", "null" },
		{ "reviewer_log", "7" }, { "reviewer_log", "\"../../etc/passwd\"" },
		{ "reviewer_log", "\"sub/x.log\"" }, { "reviewer_log", "\"..\"" },
		{ "reviewer_log", "\"\"" },
		{ "unknown_field", "{\"nested\": [1, 2, {\"x\": null}]}" },
	};

	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		char *text = patched(cases[i].key, cases[i].value);
		char err[128] = "";
		struct fg_cycle c;

		fg_cycle_init(&c);
		cr_expect_eq(fg_cycle_parse(&c, text, strlen(text), err, sizeof(err)), 0, "%s: %s", text, err);
		cr_expect_null(c.run_id, "%s", text);
		cr_expect_not(c.synthetic, "%s", text);
		cr_expect_not(c.stalled, "%s", text);
		cr_expect_not(c.j.has_format, "%s", text);
		cr_expect_not(c.j.has_findings, "%s", text);
		cr_expect_null(c.reviewer_log, "%s", text);
		cr_expect_str_eq(c.j.feedback, "fix it");
		fg_cycle_release(&c);
		free(text);
	}
}

/* ---- fixtures and reading from disk ---- */

static void read_fixture(const char *name, struct fg_cycle *c)
{
	int dfd = open(FG_FIXTURES_DIR "/cycle", O_RDONLY | O_DIRECTORY);
	char err[256] = "";

	cr_assert_geq(dfd, 0);
	fg_cycle_init(c);
	cr_assert_eq(fg_cycle_read_at(dfd, name, c, NULL, err, sizeof(err)), 0, "%s: %s", name, err);
	close(dfd);
}

Test(cycle, fixture_minimal)
{
	struct fg_cycle c;

	read_fixture("minimal.json", &c);
	cr_assert_eq(c.cycle, 1);
	cr_assert_eq(c.max_cycles, 3);
	cr_assert_eq(c.j.verdict, FG_VERDICT_REJECTED);
	cr_assert_str_eq(c.j.feedback, "Missing tests for the parser.");
	cr_assert_str_eq(c.skill, "implement-task");
	cr_assert_eq(c.elapsed_seconds, 45.2);
	cr_assert_str_eq(c.timestamp, "2026-01-15T10:30:00Z");
	cr_assert_null(c.run_id);
	cr_assert_not(c.j.has_format);
	cr_assert_not(c.j.has_findings);
	fg_cycle_release(&c);
}

Test(cycle, fixture_full)
{
	struct fg_cycle c;

	read_fixture("full.json", &c);
	cr_assert_eq(c.cycle, 2);
	cr_assert_str_eq(c.run_id, "run-20260115-103000-ab12");
	cr_assert(c.j.has_format);
	cr_assert_eq(c.j.format, FG_FORMAT_JSON_SHADOW);
	cr_assert(c.j.has_findings);
	cr_assert_eq(c.j.nfindings, 1);
	cr_assert_str_eq(c.j.findings[0].file_path, "src/parser.c");
	cr_assert_eq(c.j.findings[0].line, 42);
	cr_assert_str_eq(c.reviewer_log, "review_cycle_2.reviewer.log");
	fg_cycle_release(&c);
}

Test(cycle, fixture_foreign_writer_is_tolerated)
{
	struct fg_cycle c;

	read_fixture("foreign.json", &c);
	cr_assert_eq(c.cycle, 3);
	cr_assert_eq(c.j.verdict, FG_VERDICT_APPROVED);
	cr_assert_str_eq(c.j.feedback, "");
	cr_assert_null(c.run_id);
	cr_assert_not(c.synthetic);
	cr_assert_not(c.stalled);
	cr_assert_not(c.j.has_format);
	cr_assert_not(c.j.has_findings);
	cr_assert_null(c.reviewer_log);
	fg_cycle_release(&c);
}

struct refuse_case {
	const char *name;
	int want;
	const char *err;
};

Test(cycle, read_at_refuses_unsafe_files)
{
	static const struct refuse_case cases[] = {
		{ "review_cycle_1.json", -ELOOP, "'review_cycle_1.json' is a symbolic link" },
		{ "review_cycle_2.json", -EINVAL, "'review_cycle_2.json' is not a regular file" },
		{ "review_cycle_3.json", -EINVAL, "'review_cycle_3.json' is not a regular file" },
		{ "review_cycle_4.json", -EFBIG, "'review_cycle_4.json' is larger than 8388608 bytes" },
		{ "review_cycle_5.json", -ENOENT, "cannot read 'review_cycle_5.json': No such file or directory" },
	};
	char *dir = fgt_tmpdir();
	char *p1 = fgt_fmt("%s/review_cycle_1.json", dir);
	char *p2 = fgt_fmt("%s/review_cycle_2.json", dir);
	char *p3 = fgt_fmt("%s/review_cycle_3.json", dir);
	char *p4 = fgt_fmt("%s/review_cycle_4.json", dir);
	char *big = calloc(1, FG_CYCLE_MAX_BYTES + 1);
	int dfd;

	cr_assert_eq(symlink(FG_FIXTURES_DIR "/cycle/minimal.json", p1), 0);
	cr_assert_eq(mkfifo(p2, 0600), 0);
	cr_assert_eq(mkdir(p3, 0700), 0);
	memset(big, ' ', FG_CYCLE_MAX_BYTES + 1);
	fgt_write_bytes(p4, big, FG_CYCLE_MAX_BYTES + 1);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		struct fg_cycle c;
		struct fg_buf raw;
		char err[256] = "";

		fg_cycle_init(&c);
		fg_buf_init(&raw, FG_CYCLE_MAX_BYTES);
		cr_expect_eq(fg_cycle_read_at(dfd, cases[i].name, &c, &raw, err, sizeof(err)), cases[i].want,
			     "%s", cases[i].name);
		cr_expect_str_eq(err, cases[i].err);
		cr_expect_eq(raw.len, 0);
		cr_expect_null(c.j.feedback);
		fg_buf_release(&raw);
		fg_cycle_release(&c);
	}
	close(dfd);
	fgt_rm_rf(dir);
	free(big);
	free(p1);
	free(p2);
	free(p3);
	free(p4);
	free(dir);
}

Test(cycle, read_at_hands_back_raw_bytes_even_when_invalid)
{
	char *dir = fgt_tmpdir();
	char *p = fgt_fmt("%s/review_cycle_1.json", dir);
	const char *bad = "{\"cycle\": 1, \"verdict\": \"maybe\"}";
	struct fg_cycle c;
	struct fg_buf raw;
	char err[256] = "";
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);

	fgt_write(p, bad);
	fg_cycle_init(&c);
	fg_buf_init(&raw, FG_CYCLE_MAX_BYTES);
	fg_buf_adds(&raw, "stale");
	cr_assert_eq(fg_cycle_read_at(dfd, "review_cycle_1.json", &c, &raw, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "missing field 'max_cycles'");
	cr_assert_str_eq(fg_buf_str(&raw), bad);
	close(dfd);
	fg_buf_release(&raw);
	fg_cycle_release(&c);
	fgt_rm_rf(dir);
	free(p);
	free(dir);
}

/* ---- listing ---- */

Test(cycle, list_sorts_numerically_and_skips_non_canonical_names)
{
	static const char *const files[] = {
		"review_cycle_10.json", "review_cycle_2.json", "review_cycle_11.json",
		"review_cycle_1.json", "review_cycle_9.json",
		/* decoys */
		"review_cycle_0.json", "review_cycle_01.json", "review_cycle_.json",
		"review_cycle_1.json.tmp", ".review_cycle_1.json.tmp.123", "review_cycle_100001.json",
		"review_summary.json", "review_cycle_1.reviewer.log", "REVIEW_CYCLE_3.json",
		"review_cycle_3.json~",
	};
	static const int want[] = { 1, 2, 5, 9, 10, 11 };
	char *dir = fgt_tmpdir();
	char *sub = fgt_fmt("%s/review_cycle_5.json", dir);
	struct fg_cycle_entry *e = NULL;
	size_t n = 0;

	for (size_t i = 0; i < N_ELEMS(files); i++) {
		char *p = fgt_fmt("%s/%s", dir, files[i]);

		fgt_write(p, "{}");
		free(p);
	}
	/* Listing is by name only: a directory with a cycle name is listed and
	 * the reader refuses it later. */
	cr_assert_eq(mkdir(sub, 0700), 0);
	cr_assert_eq(list_dir(dir, &e, &n), 0);
	cr_assert_eq(n, N_ELEMS(want));
	for (size_t i = 0; i < n; i++) {
		char *name = fg_cycle_file_name(want[i]);

		cr_expect_eq(e[i].n, want[i], "position %zu", i);
		cr_expect_str_eq(e[i].name, name);
		free(name);
	}
	fg_cycle_entries_free(e, n);
	fgt_rm_rf(dir);
	free(sub);
	free(dir);
}

Test(cycle, list_empty_directory_and_bad_descriptors)
{
	char *dir = fgt_tmpdir();
	char *file = fgt_fmt("%s/review_cycle_1.json", dir);
	struct fg_cycle_entry *e = (void *)1;
	size_t n = 99;
	int fd;

	cr_assert_eq(list_dir(dir, &e, &n), 0);
	cr_assert_eq(n, 0);
	fg_cycle_entries_free(e, n);
	e = NULL;
	n = 7;
	cr_assert_eq(fg_cycle_list_at(-1, &e, &n), -EBADF);
	fgt_write(file, "{}");
	fd = open(file, O_RDONLY);
	cr_assert_eq(fg_cycle_list_at(fd, &e, &n), -ENOTDIR);
	close(fd);
	cr_assert_null(e, "untouched on failure");
	cr_assert_eq(n, 7);
	fg_cycle_entries_free(NULL, 0);
	fgt_rm_rf(dir);
	free(file);
	free(dir);
}

Test(cycle, list_at_starts_from_the_beginning_and_keeps_the_descriptor)
{
	char *dir = fgt_tmpdir();
	struct fg_cycle_entry *e = NULL;
	size_t n = 0;
	int dfd;

	for (int i = 1; i <= 40; i++) {
		char *p = fgt_fmt("%s/review_cycle_%d.json", dir, i);

		fgt_write(p, "{}");
		free(p);
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(fg_cycle_list_at(dfd, &e, &n), 0);
	cr_assert_eq(n, 40);
	fg_cycle_entries_free(e, n);
	/* Twice through the same descriptor: the second listing is complete too,
	 * and dfd is still open and usable afterwards. */
	cr_assert_eq(fg_cycle_list_at(dfd, &e, &n), 0);
	cr_assert_eq(n, 40);
	cr_assert_eq(e[39].n, 40);
	fg_cycle_entries_free(e, n);
	cr_assert_geq(fcntl(dfd, F_GETFD), 0, "the descriptor is still open");
	close(dfd);
	fgt_rm_rf(dir);
	free(dir);
}

/* ---- exhaustion ---- */

struct ex_cycle {
	int n, max;
	enum fg_verdict_kind v;
	bool synthetic;
};

struct ex_case {
	const char *what;
	struct ex_cycle c[4];
	size_t n;
	bool want;
};

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

	for (size_t i = 0; i < N_ELEMS(cases); i++) {
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

Test(cycle, reviews_round_trip_and_old_files_have_none)
{
	struct fg_cycle c, back;
	struct fg_review *r;
	char err[128];
	char *text;

	fg_cycle_init(&c);
	c.cycle = 2;
	c.max_cycles = 3;
	c.j.verdict = FG_VERDICT_REJECTED;
	c.j.feedback = strdup("merged");
	c.skill = strdup("s");
	fg_time_iso_utc(c.timestamp, 0);
	c.has_reviews = true;
	c.nreviews = 2;
	c.reviews = calloc(2, sizeof(*c.reviews));
	r = &c.reviews[0];
	fg_review_init(r);
	snprintf(r->role, sizeof(r->role), "%s", "correctness");
	fg_review_set_verdict(r, FG_ROLE_REJECTED);
	r->j.has_format = true;
	r->j.format = FG_FORMAT_JSON_SHADOW;
	r->j.feedback = strdup("fix a.c");
	r->j.has_findings = true;
	r->j.nfindings = 1;
	r->j.findings = calloc(1, sizeof(*r->j.findings));
	r->j.findings[0].severity = strdup("BLOCKING");
	r->j.findings[0].title = strdup("Leak");
	r->j.findings[0].line = 3;
	r->j.findings[0].role = strdup("correctness");
	r->elapsed_seconds = 1.25;
	r->reviewer_log = strdup("review_cycle_2.correctness.reviewer.log");
	r->usage = cJSON_Parse("{\"input_tokens\": 5}");
	r = &c.reviews[1];
	fg_review_init(r);
	snprintf(r->role, sizeof(r->role), "%s", "security");
	fg_review_set_verdict(r, FG_ROLE_OUT_OF_SCOPE);
	r->from_cycle = 1;
	r->j.feedback = strdup("");
	text = fg_cycle_to_json(&c);
	fg_cycle_init(&back);
	cr_assert_eq(fg_cycle_parse(&back, text, strlen(text), err, sizeof(err)), 0, "%s", err);
	cr_assert(back.has_reviews);
	cr_assert_eq(back.nreviews, 2);
	cr_assert_str_eq(back.reviews[0].role, "correctness");
	cr_assert_eq(fg_review_verdict(&back.reviews[0]), FG_ROLE_REJECTED);
	cr_assert_eq(back.reviews[0].j.format, FG_FORMAT_JSON_SHADOW);
	cr_assert_str_eq(back.reviews[0].j.feedback, "fix a.c");
	cr_assert_eq(back.reviews[0].j.nfindings, 1);
	cr_assert_str_eq(back.reviews[0].j.findings[0].role, "correctness");
	cr_assert_float_eq(back.reviews[0].elapsed_seconds, 1.25, 1e-9);
	cr_assert_str_eq(back.reviews[0].reviewer_log, "review_cycle_2.correctness.reviewer.log");
	cr_assert_eq(cJSON_GetObjectItem(back.reviews[0].usage, "input_tokens")->valueint, 5);
	cr_assert_eq(fg_review_verdict(&back.reviews[1]), FG_ROLE_OUT_OF_SCOPE);
	cr_assert_eq(back.reviews[1].from_cycle, 1);
	cr_assert_not(back.reviews[1].j.has_format);
	cr_assert_not(back.reviews[1].failed);
	/* The copy is deep. */
	struct fg_review copy;

	fg_review_init(&copy);
	fg_review_copy(&copy, &back.reviews[0]);
	cr_assert_str_eq(copy.j.findings[0].title, "Leak");
	fg_review_release(&copy);
	fg_cycle_release(&back);
	free(text);

	/* A cycle written without a panel has no reviews member. */
	fg_cycle_release(&c);
	fg_cycle_init(&c);
	c.cycle = 1;
	c.max_cycles = 1;
	c.j.feedback = strdup("");
	c.skill = strdup("s");
	fg_time_iso_utc(c.timestamp, 0);
	text = fg_cycle_to_json(&c);
	cr_assert_null(strstr(text, "reviews"), "%s", text);
	free(text);
	fg_cycle_release(&c);
}

Test(cycle, invalid_review_entries_are_skipped_not_fatal)
{
	static const char base[] =
		"{\"cycle\":1,\"max_cycles\":1,\"verdict\":\"approved\",\"feedback\":\"\",\"skill\":\"s\","
		"\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\",\"reviews\":[";
	static const char *const entries[] = {
		"1", "{}", "{\"role\":\"Bad\",\"verdict\":\"approved\"}",
		"{\"role\":\"a\",\"verdict\":\"maybe\"}", "{\"role\":\"a\"}",
		"{\"role\":\"ok\",\"verdict\":\"approved\",\"feedback\":3,\"findings\":{},"
		"\"elapsed_seconds\":-1,\"reviewer_log\":\"../x\",\"usage\":[],\"failed\":\"yes\"}",
	};
	struct fg_cycle c;
	char err[128];

	fg_cycle_init(&c);
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		char *t = fgt_fmt("%s%s]}", base, entries[i]);

		cr_assert_eq(fg_cycle_parse(&c, t, strlen(t), err, sizeof(err)), 0, "%s: %s", t, err);
		cr_assert(c.has_reviews);
		free(t);
	}
	cr_assert_eq(c.nreviews, 1);
	cr_assert_str_eq(c.reviews[0].j.feedback, "");
	cr_assert_not(c.reviews[0].j.has_findings);
	cr_assert_eq(c.reviews[0].elapsed_seconds, 0);
	cr_assert_null(c.reviews[0].reviewer_log);
	cr_assert_null(c.reviews[0].usage);
	cr_assert_not(c.reviews[0].failed);
	fg_cycle_release(&c);
}

Test(cycle, reviewer_log_name_round_trips)
{
	static const char *const bad[] = {
		"review_cycle_1.json", "review_cycle_01.reviewer.log", "review_cycle_.reviewer.log",
		"review_cycle_1reviewer.log", "review_cycle_1..reviewer.log", "review_cycle_1.x/y.reviewer.log",
		"review_cycle_100001.reviewer.log", "xreview_cycle_1.reviewer.log", "review_cycle_1.reviewer.log.x",
	};
	int n = 0;

	for (int k = 1; k <= 100000; k *= 10) {
		char *name = fg_reviewer_log_name(k, NULL);

		cr_assert_eq(fg_reviewer_log_name_parse(name, &n), 1, "%s", name);
		cr_assert_eq(n, k);
		free(name);
		name = fg_reviewer_log_name(k, "security");
		cr_assert_str_eq(name + strlen(name) - strlen(".security.reviewer.log"), ".security.reviewer.log");
		cr_assert_eq(fg_reviewer_log_name_parse(name, &n), 1, "%s", name);
		cr_assert_eq(n, k);
		free(name);
	}
	cr_assert_eq(fg_reviewer_log_name_parse("review_cycle_7.security.reviewer.log", &n), 1);
	cr_assert_eq(n, 7);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(fg_reviewer_log_name_parse(bad[i], &n), 0, "%s", bad[i]);
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
	const struct fg_cycle_dir_vars v = { "impl", "DEMO-1", "implement-task" };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "", *d = NULL;

		cr_assert_eq(fg_cycle_dir(cases[i].tmpl, &v, &d, err, sizeof(err)), 0, "case %zu: %s", i, err);
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
	const struct fg_cycle_dir_vars v = { "impl", "", "implement-task" };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "", *d = (char *)"untouched";

		cr_assert_eq(fg_cycle_dir(cases[i].tmpl, &v, &d, err, sizeof(err)), -EINVAL, "case %zu", i);
		cr_assert_str_eq(d, "untouched", "case %zu", i);
		cr_assert_not_null(strstr(err, cases[i].why), "case %zu: %s", i, err);
	}
	char *huge = malloc(PATH_MAX + 16), err[256] = "", *d = NULL;
	memset(huge, 'a', PATH_MAX + 15);
	huge[PATH_MAX + 15] = '\0';
	cr_assert_eq(fg_cycle_dir(huge, &v, &d, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "longer than"), "%s", err);
	free(huge);
}

/* Issue 13: usage, reask and over_budget survive a write and a read; a
 * malformed usage makes nothing invalid; an old file has none. */
Test(cycle, usage_reask_and_over_budget_round_trip)
{
	struct fg_cycle c, back;
	char err[256] = "", *text;

	fill(&c, 2, 5, FG_VERDICT_REJECTED);
	c.reask = true;
	c.over_budget = true;
	fg_usage_set(&c.usage.worker, FG_USAGE_INPUT, 1200);
	fg_usage_set_cost(&c.usage.reviewer, 0.125);
	text = fg_cycle_to_json(&c);
	fg_cycle_init(&back);
	cr_assert_eq(fg_cycle_parse(&back, text, strlen(text), err, sizeof(err)), 0, "%s", err);
	cr_assert(back.reask && back.over_budget);
	cr_assert_eq(back.usage.worker.input_tokens, 1200);
	cr_assert_eq(back.usage.worker.have, FG_USAGE_INPUT);
	cr_assert_float_eq(back.usage.reviewer.cost_usd, 0.125, 1e-12);
	cr_assert(strstr(text, "\"output_tokens\":\tnull"), "%s", text);
	free(text);
	fg_cycle_release(&back);
	fg_cycle_release(&c);

	static const char odd[] = "{\"cycle\":1,\"max_cycles\":1,\"verdict\":\"approved\",\"feedback\":\"\","
				  "\"skill\":\"s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-15T10:30:00Z\","
				  "\"usage\":{\"worker\":\"lots\",\"reviewer\":{\"cost_usd\":-1,\"turns\":2}},"
				  "\"reask\":\"yes\"}";
	fg_cycle_init(&back);
	cr_assert_eq(fg_cycle_parse(&back, odd, strlen(odd), err, sizeof(err)), 0, "%s", err);
	cr_assert(fg_usage_empty(&back.usage.worker));
	cr_assert_eq(back.usage.reviewer.have, FG_USAGE_TURNS);
	cr_assert_not(back.reask);
	fg_cycle_release(&back);
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

/* denied_tools: written per role when a role was refused a tool, read
 * back leniently (invalid names and wrong types dropped, never an error). */
Test(cycle, denied_tools_round_trip_and_lenient_reader)
{
	struct fg_cycle c, back;
	char *text, err[256];
	cJSON *o;

	fill(&c, 1, 3, FG_VERDICT_REJECTED);
	o = fg_cycle_to_cjson(&c);
	cr_assert_null(cJSON_GetObjectItem(o, "denied_tools"));
	cJSON_Delete(o);
	cr_assert(fg_denied_add(&c.denied.reviewer, "Bash"));
	cr_assert(fg_denied_add(&c.denied.reviewer, "Bash"));
	cr_assert_not(fg_denied_add(&c.denied.reviewer, "rm -rf /"));
	cr_assert(fg_denied_add(&c.denied.reviewer, "mcp__srv__tool"));
	cr_assert_eq(c.denied.reviewer.n, 2);
	o = fg_cycle_to_cjson(&c);
	text = cJSON_PrintUnformatted(cJSON_GetObjectItem(o, "denied_tools"));
	cr_assert_str_eq(text, "{\"reviewer\":[\"Bash\",\"mcp__srv__tool\"]}");
	cJSON_free(text);
	cJSON_Delete(o);
	text = fg_cycle_to_json(&c);
	fg_cycle_init(&back);
	cr_assert_eq(fg_cycle_parse(&back, text, strlen(text), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(back.denied.reviewer.n, 2);
	cr_assert_eq(back.denied.worker.n, 0);
	fg_cycle_release(&back);
	free(text);
	text = patched("denied_tools", "{\"worker\":[\"Bash\",7,\"a b\"],\"reviewer\":\"Edit\"}");
	cr_assert_eq(fg_cycle_parse(&back, text, strlen(text), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(back.denied.worker.n, 1);
	cr_assert_str_eq(back.denied.worker.v[0], "Bash");
	cr_assert_eq(back.denied.reviewer.n, 0);
	fg_cycle_release(&back);
	free(text);
	fg_cycle_release(&c);
}
