/*
 * test_log.c - the operator log: text escaping, JSON lines, levels, SIGHUP reopen.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fgtest.h"
#include "log.h"
#include "../common/tmp_fixture.h"

TestSuite(log, .init = tmp_init, .fini = tmp_fini, .timeout = 10);

/* Logs one event into a memory stream and returns the line (owned). */
static char *log_line(enum rn_log_format fmt, const struct rn_log_field *f, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct rn_log l;

	rn_log_init(&l, fmt, RN_LOG_INFO, fp);
	rn_log_event(&l, RN_LOG_INFO, "ev", f, n);
	rn_log_close(&l);
	fclose(fp);
	return buf;
}

struct esc_case {
	const char *in;
	const char *want;  /* the text form of the value */
};

Test(log, text_values_escaped_table)
{
	static const struct esc_case cases[] = {
		{ "plain", "k=plain" },
		{ "two words", "k=\"two words\"" },
		{ "a\nb", "k=\"a\\nb\"" },
		{ "say \"hi\"", "k=\"say \\\"hi\\\"\"" },
		{ "x=y", "k=\"x=y\"" },
		{ "\x1b[31mred", "k=\"\\x1b[31mred\"" },
		{ "back\\slash", "k=\"back\\\\slash\"" },
		{ "", "k=\"\"" },
		{ "caf\xc3\xa9", "k=\"caf\xc3\xa9\"" },
		{ "bad\xff", "k=\"bad\\xff\"" },
		{ "c1\xc2\x9b", "k=\"c1\\xc2\\x9b\"" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rn_log_field f = RN_LS("k", cases[i].in);
		char *line = log_line(RN_LOG_TEXT, &f, 1);
		const char *kv = strstr(line, " ev ");

		cr_assert_not_null(kv, "%s", line);
		cr_assert_eq(strchr(line, '\n'), line + strlen(line) - 1, "one line: %s", line);
		cr_assert_null(strchr(line, '\x1b'));
		line[strlen(line) - 1] = '\0';
		cr_assert_str_eq(kv + 4, cases[i].want, "case %zu", i);
		free(line);
	}
}

Test(log, text_line_has_timestamp_level_and_numbers)
{
	struct rn_log_field f[] = { RN_LI("n", 42), RN_LN("x", 45.2), RN_LB("b", 1), RN_LS("s", NULL) };
	char *line = log_line(RN_LOG_TEXT, f, 4);

	/* 2026-01-15T10:30:00.123Z INFO ev ... */
	cr_assert_eq(line[10], 'T');
	cr_assert_eq(line[23], 'Z');
	cr_assert_str_eq(line + 24, " INFO ev n=42 x=45.2 b=true s=\"\"\n");
	free(line);
}

Test(log, json_lines_parse_back)
{
	struct rn_log_field f[] = {
		RN_LS("feedback", "line1\nline2 \"q\" \x1b[0m tab\t caf\xc3\xa9 bad\xfe"),
		RN_LI("cycle", 3), RN_LN("elapsed_seconds", 1.5), RN_LB("ok", 0), RN_LS("none", NULL),
	};
	char *line = log_line(RN_LOG_JSON, f, 5);
	cJSON *o = cJSON_Parse(line);

	cr_assert_not_null(o, "not JSON: %s", line);
	cr_assert_str_eq(cJSON_GetObjectItem(o, "event")->valuestring, "ev");
	cr_assert_str_eq(cJSON_GetObjectItem(o, "level")->valuestring, "info");
	cr_assert(cJSON_IsString(cJSON_GetObjectItem(o, "ts")));
	cr_assert_eq(cJSON_GetObjectItem(o, "cycle")->valueint, 3);
	cr_assert_float_eq(cJSON_GetObjectItem(o, "elapsed_seconds")->valuedouble, 1.5, 1e-9);
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "ok")));
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(o, "none")));
	cr_assert_str_eq(cJSON_GetObjectItem(o, "feedback")->valuestring,
			 "line1\nline2 \"q\" \x1b[0m tab\t caf\xc3\xa9 bad\xef\xbf\xbd");
	cr_assert_null(strchr(line, '\x1b'));
	cJSON_Delete(o);
	free(line);
}

Test(log, level_threshold_filters)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct rn_log l;
	enum rn_log_level lv;

	cr_assert_eq(rn_log_level_parse("warn", &lv), 0);
	cr_assert_eq(rn_log_level_parse("loud", &lv), -EINVAL);
	rn_log_init(&l, RN_LOG_TEXT, RN_LOG_WARN, fp);
	rn_log_event(&l, RN_LOG_INFO, "quiet", NULL, 0);
	rn_log_event(&l, RN_LOG_ERROR, "loud", NULL, 0);
	fclose(fp);
	cr_assert_null(strstr(buf, "quiet"));
	cr_assert_not_null(strstr(buf, "ERROR loud"));
	free(buf);
}

Test(log, reopen_after_rotation_writes_new_file)
{
	char *path = tmp_path("runner.log");
	char *rotated = tmp_path("runner.log.1");
	struct rn_log l;
	char *a, *b;

	rn_log_init(&l, RN_LOG_TEXT, RN_LOG_INFO, stderr);
	cr_assert_eq(rn_log_open_file(&l, path), 0);
	rn_log_event(&l, RN_LOG_INFO, "before", NULL, 0);
	cr_assert_eq(rename(path, rotated), 0);
	rn_log_event(&l, RN_LOG_INFO, "still_old", NULL, 0);
	cr_assert_eq(rn_log_reopen(&l), 0);
	rn_log_event(&l, RN_LOG_INFO, "after", NULL, 0);
	rn_log_close(&l);
	a = fgt_read(rotated, NULL);
	b = fgt_read(path, NULL);
	cr_assert_not_null(strstr(a, "before"));
	cr_assert_not_null(strstr(a, "still_old"));
	cr_assert_null(strstr(a, "after"));
	cr_assert_not_null(strstr(b, "after"));
	cr_assert_null(strstr(b, "before"));
	free(a);
	free(b);
}

Test(log, open_file_appends)
{
	char *path = tmp_path("x.log");
	struct rn_log l;
	char *text;

	fgt_write(path, "existing\n");
	rn_log_init(&l, RN_LOG_JSON, RN_LOG_INFO, stderr);
	cr_assert_eq(rn_log_open_file(&l, path), 0);
	rn_log_event(&l, RN_LOG_INFO, "new", NULL, 0);
	rn_log_close(&l);
	text = fgt_read(path, NULL);
	cr_assert_eq(strncmp(text, "existing\n{", 10), 0, "%s", text);
	free(text);
}

/* rn_log() counts its fields; an optional field is absent when NULL, a
 * plain one logs as null (JSON) or "" (text). */
Test(log, counted_fields_and_absent_optional_ones)
{
	static const enum rn_log_format fmts[] = { RN_LOG_JSON, RN_LOG_TEXT };

	for (size_t i = 0; i < ARRAY_SIZE(fmts); i++) {
		for (int have = 0; have < 2; have++) {
			char *buf = NULL;
			size_t len = 0;
			FILE *fp = open_memstream(&buf, &len);
			struct rn_log l;
			const char *opt = have ? "here" : NULL;

			rn_log_init(&l, fmts[i], RN_LOG_INFO, fp);
			rn_log(&l, RN_LOG_INFO, "ev", RN_LS("a", "1"), RN_LS("b", NULL),
			       RN_LS_OPT("c", opt), RN_LI("d", 4));
			rn_log(NULL, RN_LOG_ERROR, "nowhere", RN_LS("a", "1"));
			rn_log_close(&l);
			fclose(fp);
			if (fmts[i] == RN_LOG_JSON) {
				cJSON *o = cJSON_Parse(buf);

				cr_assert_not_null(o, "%s", buf);
				cr_expect_str_eq(cJSON_GetObjectItem(o, "a")->valuestring, "1");
				cr_expect(cJSON_IsNull(cJSON_GetObjectItem(o, "b")), "%s", buf);
				cr_expect_eq(cJSON_GetObjectItem(o, "d")->valueint, 4, "%s", buf);
				if (have)
					cr_expect_str_eq(cJSON_GetObjectItem(o, "c")->valuestring, "here");
				else
					cr_expect_null(cJSON_GetObjectItem(o, "c"), "%s", buf);
				cJSON_Delete(o);
			} else {
				cr_expect_not_null(strstr(buf, have ? " a=1 b=\"\" c=here d=4\n" : " a=1 b=\"\" d=4\n"),
						   "%s", buf);
			}
			free(buf);
		}
	}
}
