/*
 * test_frame.c - frames on standard error: the lines the entrypoint writes
 * and the parser the runner reads them with.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "fgtest.h"
#include "forge/alloc.h"
#include "forge/frame.h"

#include "cycle_sample.h"

TestSuite(frame, .timeout = 30);

static void make_cycle(struct fg_cycle *c, int n, const char *feedback)
{
	cycle_make(c, n, FG_VERDICT_REJECTED, feedback);
	free(c->skill);
	c->skill = fg_xstrdup("impl");
	c->elapsed_seconds = 1.25;
	snprintf(c->timestamp, sizeof(c->timestamp), "%s", "2026-01-15T10:30:00Z");
	c->run_id = fg_xstrdup("r1");
}

/* Parses line (its trailing newline cut); asserts the result. */
static int parse_line(struct fg_frame *f, const char *line, char *err, size_t errlen)
{
	size_t n = strlen(line);

	if (n && line[n - 1] == '\n')
		n--;
	return fg_frame_parse(f, line, n, err, errlen);
}

Test(frame, cycle_round_trip_is_one_line_with_the_whole_cycle)
{
	struct fg_cycle c;
	struct fg_frame f;
	char err[256] = "";
	size_t len = 0;

	make_cycle(&c, 2, "Line one\nline two\r\n\ttab \x1b[31m");
	char *line = fg_frame_cycle_line(&c, "implement_task", NULL, &len);
	cr_assert_not_null(line);
	cr_assert_eq(len, strlen(line));
	cr_assert(!strncmp(line, "@@forge-review {\"v\":1,\"type\":\"review_cycle\"", 43), "%s", line);
	cr_assert_eq(strchr(line, '\n'), line + len - 1, "one line: %s", line);
	cr_assert_null(strchr(line, '\r'));
	fg_frame_init(&f);
	cr_assert_eq(parse_line(&f, line, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(f.type, FG_FRAME_CYCLE);
	cr_assert_str_eq(f.run_id, "r1");
	cr_assert_str_eq(f.step, "implement_task");
	cr_assert(!f.truncated);
	char *a = cycle_text(&c), *b = cycle_text(&f.cycle);
	cr_assert_str_eq(a, b);
	cJSON_free(a);
	cJSON_free(b);
	cr_assert_not_null(strstr(line, "\"file\":\"review_cycle_2.json\""));
	free(line);
	fg_frame_release(&f);
	fg_cycle_release(&c);
}

Test(frame, summary_round_trip)
{
	struct fg_summary s;
	struct fg_frame f;
	char err[256] = "";
	size_t len = 0;

	summary_fill(&s, FG_STATE_EXHAUSTED, 3, 3, "impl", "impl");
	s.task_key = fg_xstrdup("ABC-1");
	s.run_id = fg_xstrdup("r1");
	char *line = fg_frame_summary_line(&s, NULL, &len);
	cr_assert_not_null(line);
	fg_frame_init(&f);
	cr_assert_eq(parse_line(&f, line, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(f.type, FG_FRAME_SUMMARY);
	cr_assert_eq(f.summary.state, FG_STATE_EXHAUSTED);
	cr_assert_eq(f.summary.cycles, 3);
	cr_assert_str_eq(f.summary.task_key, "ABC-1");
	cr_assert_null(f.summary.review_md);
	cr_assert_not_null(strstr(line, "\"file\":\"review_summary.json\""));
	free(line);
	fg_frame_release(&f);
	fg_summary_release(&s);
}

/* n times ch, owned. */
static char *repeated(char ch, size_t n)
{
	char *s = fg_xmalloc(n + 1);

	memset(s, ch, n);
	s[n] = '\0';
	return s;
}

/* c's frame line of step "impl", which fits in a frame, parsed into f. */
static void frame_of_cycle(const struct fg_cycle *c, struct fg_frame *f)
{
	char err[256] = "";
	size_t len = 0;
	char *line = fg_frame_cycle_line(c, "impl", NULL, &len);

	cr_assert_not_null(line);
	cr_assert_leq(len, FG_FRAME_MAX);
	fg_frame_init(f);
	cr_assert_eq(parse_line(f, line, err, sizeof(err)), 0, "%s", err);
	free(line);
}

Test(frame, long_feedback_is_left_out_and_flagged)
{
	struct fg_cycle c;
	struct fg_frame f;
	char *fb = repeated('x', 200 * 1024);

	make_cycle(&c, 1, fb);
	c.reviewer_log = fg_xstrdup("review_cycle_1.reviewer.log");
	frame_of_cycle(&c, &f);
	cr_assert(f.truncated);
	cr_assert_str_eq(f.cycle.j.feedback, "");
	cr_assert_str_eq(f.cycle.reviewer_log, "review_cycle_1.reviewer.log", "only the feedback goes");
	cr_assert_eq(f.cycle.j.verdict, FG_VERDICT_REJECTED);
	free(fb);
	fg_frame_release(&f);
	fg_cycle_release(&c);
}

Test(frame, still_too_long_keeps_the_required_fields_only)
{
	struct fg_cycle c;
	struct fg_frame f;

	make_cycle(&c, 1, "short");
	c.reviewer_log = repeated('l', 70 * 1024);
	c.stalled = true;
	frame_of_cycle(&c, &f);
	cr_assert(f.truncated);
	cr_assert_null(f.cycle.reviewer_log);
	cr_assert(f.cycle.stalled);
	cr_assert_str_eq(f.cycle.run_id, "r1");
	fg_frame_release(&f);
	fg_cycle_release(&c);
}

Test(frame, nothing_fits_no_frame)
{
	struct fg_cycle c;
	size_t len = 0;

	make_cycle(&c, 1, "short");
	free(c.skill);
	c.skill = repeated('s', 70 * 1024);
	cr_assert_null(fg_frame_cycle_line(&c, "impl", NULL, &len));
	fg_cycle_release(&c);
}

struct bad_case {
	const char *line;
	const char *why;   /* substring of the error */
};

#define CYC "{\"cycle\":1,\"max_cycles\":2,\"verdict\":\"approved\",\"feedback\":\"\",\"skill\":\"s\"," \
	    "\"elapsed_seconds\":1,\"timestamp\":\"2026-01-15T10:30:00Z\""

Test(frame, invalid_frames_are_refused_with_a_reason)
{
	static const struct bad_case bad[] = {
		{ "[worker] @@forge-review {}", "not a frame" },
		{ "@@forge-review", "not a frame" },
		{ "@@forge-review {", "not valid JSON" },
		{ "@@forge-review []", "not a JSON object" },
		{ "@@forge-review {\"v\":2,\"type\":\"review_cycle\",\"run_id\":\"r\",\"step\":\"s\","
		  "\"file\":\"review_cycle_1.json\",\"cycle\":" CYC "}}", "'v'" },
		{ "@@forge-review {\"v\":1,\"type\":\"review_note\",\"run_id\":\"r\",\"step\":\"s\","
		  "\"file\":\"review_cycle_1.json\",\"cycle\":" CYC "}}", "'type'" },
		{ "@@forge-review {\"v\":1,\"type\":\"review_cycle\",\"step\":\"s\","
		  "\"file\":\"review_cycle_1.json\",\"cycle\":" CYC "}}", "run_id" },
		{ "@@forge-review {\"v\":1,\"type\":\"review_cycle\",\"run_id\":\"r\",\"step\":\"s\","
		  "\"file\":\"review_cycle_2.json\",\"cycle\":" CYC "}}", "'file'" },
		{ "@@forge-review {\"v\":1,\"type\":\"review_cycle\",\"run_id\":\"r\",\"step\":\"s\","
		  "\"file\":\"../review_cycle_1.json\",\"cycle\":" CYC "}}", "'file'" },
		{ "@@forge-review {\"v\":1,\"type\":\"review_cycle\",\"run_id\":\"r\",\"step\":\"s\","
		  "\"file\":\"review_cycle_1.json\",\"cycle\":" CYC ",\"run_id\":\"other\"}}", "run_id" },
		{ "@@forge-review {\"v\":1,\"type\":\"review_cycle\",\"run_id\":\"r\",\"step\":\"s\","
		  "\"file\":\"review_cycle_1.json\",\"cycle\":{\"cycle\":1}}", "missing field" },
		{ "@@forge-review {\"v\":1,\"type\":\"review_cycle\",\"run_id\":\"r\",\"step\":\"s\","
		  "\"file\":\"review_cycle_1.json\",\"cycle\":\"x\"}", "'cycle'" },
		{ "@@forge-review {\"v\":1,\"type\":\"review_summary\",\"run_id\":\"r\",\"step\":\"s\","
		  "\"file\":\"review_summary.json\",\"summary\":{\"state\":\"none\"}}", "'state'" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fg_frame f;
		char err[256] = "";

		fg_frame_init(&f);
		cr_expect_eq(fg_frame_parse(&f, bad[i].line, strlen(bad[i].line), err, sizeof(err)),
			     -EINVAL, "accepted: %s", bad[i].line);
		cr_expect_not_null(strstr(err, bad[i].why), "%s: error '%s' lacks '%s'", bad[i].line,
				   err, bad[i].why);
		cr_expect_null(f.run_id);
		fg_frame_release(&f);
	}
}

Test(frame, a_line_over_the_limit_is_refused)
{
	struct fg_frame f;
	char err[256] = "";
	size_t n = FG_FRAME_MAX + 1;
	char *line = fg_xmalloc(n);

	memset(line, ' ', n);
	memcpy(line, FG_FRAME_PREFIX, FG_FRAME_PREFIX_LEN);
	fg_frame_init(&f);
	cr_assert_eq(fg_frame_parse(&f, line, n, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "longer than"), "%s", err);
	free(line);
}

Test(frame, a_cycle_without_run_id_takes_the_frames)
{
	struct fg_frame f;
	char err[256] = "";
	const char *line = "@@forge-review {\"v\":1,\"type\":\"review_cycle\",\"run_id\":\"\",\"step\":\"s\","
			   "\"file\":\"review_cycle_1.json\",\"cycle\":" CYC "}}";

	fg_frame_init(&f);
	cr_assert_eq(fg_frame_parse(&f, line, strlen(line), err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(f.run_id, "");
	cr_assert_null(f.cycle.run_id);
	fg_frame_release(&f);
}
