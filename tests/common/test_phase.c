/*
 * test_phase.c - phase times and agent runs in the cycle files and the
 * summary, and the W3C trace context (phase.h, tracectx.h).
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/cycle.h"
#include "forge/phase.h"
#include "forge/summary.h"
#include "forge/timeutil.h"
#include "forge/tracectx.h"

#include "cycle_sample.h"

TestSuite(phase, .timeout = 30);

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

Test(phase, rfc3339_ms_round_trip_and_refusals)
{
	static const char *const bad[] = {
		"2026-01-15T10:30:00Z", "2026-01-15T10:30:00.12Z", "2026-01-15T10:30:00.1234Z",
		"2026-01-15 10:30:00.123Z", "2026-13-15T10:30:00.123Z", "1969-12-31T23:59:59.999Z",
		"2026-01-15T10:30:00.123+00:00", "2026-01-15T10:30:00.a23Z", "", "x",
	};
	char ts[FG_TIMESTAMP_LEN];
	int64_t ms = 7;

	cr_assert_eq(fg_time_rfc3339_ms_parse("2026-01-15T10:30:00.125Z", &ms), 0);
	cr_expect_eq(ms, 1768473000125LL);
	fg_time_rfc3339_ms_at(ts, ms);
	cr_expect_str_eq(ts, "2026-01-15T10:30:00.125Z");
	fg_time_rfc3339_ms_at(ts, 5);
	cr_expect_str_eq(ts, "1970-01-01T00:00:00.005Z");
	for (size_t i = 0; i < N_ELEMS(bad); i++) {
		ms = 7;
		cr_expect_eq(fg_time_rfc3339_ms_parse(bad[i], &ms), -EINVAL, "'%s'", bad[i]);
		cr_expect_eq(ms, 7, "untouched");
	}
	cr_expect_eq(fg_time_rfc3339_ms_parse(NULL, &ms), -EINVAL);
}

static struct fg_agent_run run(int64_t start, int64_t end, const char *span, bool failed)
{
	struct fg_agent_run r;

	fg_agent_run_init(&r);
	r.t.started_ms = start;
	r.t.ended_ms = end;
	r.failed = failed;
	snprintf(r.span_id, sizeof(r.span_id), "%s", span);
	return r;
}

static void fill_cycle(struct fg_cycle *c)
{
	struct fg_agent_run a = run(1768473000000LL, 1768473001500LL, "00f067aa0ba902b7", false);
	struct fg_agent_run b = run(1768473001600LL, 1768473002000LL, "", true);
	struct fg_check_result *k;

	fg_cycle_init(c);
	c->cycle = 1;
	c->max_cycles = 3;
	c->j.feedback = strdup("no");
	c->skill = strdup("implement-task");
	snprintf(c->timestamp, sizeof(c->timestamp), "2026-01-15T10:30:02Z");
	c->worker_run = a;
	fg_usage_set(&c->worker_run.usage, FG_USAGE_INPUT, 120);
	snprintf(c->worker_run.provider, sizeof(c->worker_run.provider), "anthropic");
	fg_agent_runs_push(&c->reviewer_runs, &b);
	fg_agent_runs_push(&c->reviewer_runs, &a);
	k = fg_evidence_add_check(&c->ev, "tests");
	k->exit_code = 1;
	k->t.started_ms = 1768473001500LL;
	k->t.ended_ms = 1768473001550LL;
}

Test(phase, cycle_runs_and_check_times_round_trip)
{
	struct fg_cycle c, back;
	char err[256] = "";
	char *json;

	fill_cycle(&c);
	json = fg_cycle_to_json(&c);
	cr_expect_not_null(strstr(json, "\"started_at\":\t\"2026-01-15T10:30:00.000Z\""), "%s", json);
	cr_expect_not_null(strstr(json, "\"ended_at\":\t\"2026-01-15T10:30:01.550Z\""), "the check's end");
	fg_cycle_init(&back);
	cr_assert_eq(fg_cycle_parse(&back, json, strlen(json), err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(back.worker_run.t.started_ms, 1768473000000LL);
	cr_expect_eq(back.worker_run.t.ended_ms, 1768473001500LL);
	cr_expect_str_eq(back.worker_run.span_id, "00f067aa0ba902b7");
	cr_expect_str_eq(back.worker_run.provider, "anthropic");
	cr_expect_eq(back.worker_run.usage.input_tokens, 120);
	cr_assert_eq(back.reviewer_runs.n, 2);
	cr_expect(back.reviewer_runs.v[0].failed);
	cr_expect_str_eq(back.reviewer_runs.v[0].span_id, "");
	cr_expect(!back.reviewer_runs.v[1].failed);
	cr_assert_eq(back.ev.nchecks, 1);
	cr_expect_eq(back.ev.checks[0].t.ended_ms, 1768473001550LL);
	free(json);
	fg_cycle_release(&back);
	fg_cycle_release(&c);
}

Test(phase, hostile_values_count_as_absent)
{
	static const char *const doc =
		"{\"cycle\":1,\"max_cycles\":1,\"verdict\":\"approved\",\"feedback\":\"\",\"skill\":\"s\","
		"\"elapsed_seconds\":1,\"timestamp\":\"2026-01-15T10:30:02Z\","
		"\"worker_run\":{\"started_at\":\"2026-01-15T10:30:02.000Z\",\"ended_at\":\"2026-01-15T10:30:01.000Z\"},"
		"\"reviewer_runs\":[{\"started_at\":\"2026-01-15T10:30:00.000Z\",\"ended_at\":\"2026-01-15T10:30:01.000Z\","
		"\"span_id\":\"0000000000000000\",\"provider\":\"<script>\"},"
		"{\"started_at\":17},\"x\",{\"started_at\":\"2026-01-15T10:30:00.000Z\",\"ended_at\":\"2026-01-15T10:30:01.000Z\","
		"\"span_id\":\"00F067AA0BA902B7\"},{\"started_at\":\"2026-01-15T10:30:00.000Z\",\"ended_at\":\"2026-01-15T10:30:00.000Z\"},"
		"{\"started_at\":\"2026-01-15T10:30:00.000Z\",\"ended_at\":\"2026-01-15T10:30:00.000Z\"},"
		"{\"started_at\":\"2026-01-15T10:30:00.000Z\",\"ended_at\":\"2026-01-15T10:30:00.000Z\"}]}";
	struct fg_cycle c;
	char err[256] = "";

	fg_cycle_init(&c);
	cr_assert_eq(fg_cycle_parse(&c, doc, strlen(doc), err, sizeof(err)), 0, "%s", err);
	cr_expect(!fg_phase_known(&c.worker_run.t), "an end before the start is no phase");
	cr_assert_eq(c.reviewer_runs.n, FG_AGENT_RUNS_MAX, "bad entries skipped, at most the maximum kept");
	cr_expect_str_eq(c.reviewer_runs.v[0].span_id, "", "an all-zero span id is none");
	cr_expect_str_eq(c.reviewer_runs.v[0].provider, "", "an unknown provider is none");
	cr_expect_str_eq(c.reviewer_runs.v[1].span_id, "", "upper case is no span id");
	fg_cycle_release(&c);
}

Test(phase, summary_times_round_trip)
{
	struct fg_summary s, back;
	cJSON *o;
	char *json, err[256] = "";

	summary_fill(&s, FG_STATE_APPROVED, 2, 3, "implement_task", "implement-task");
	s.t.started_ms = 1768473000000LL;
	s.t.ended_ms = 1768473062345LL;
	o = fg_summary_to_cjson(&s);
	json = cJSON_PrintUnformatted(o);
	cr_expect_not_null(strstr(json, "\"ended_at\":\"2026-01-15T10:31:02.345Z\""), "%s", json);
	fg_summary_init(&back);
	cr_assert_eq(fg_summary_parse(&back, json, strlen(json), err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(back.t.started_ms, s.t.started_ms);
	cr_expect_eq(back.t.ended_ms, s.t.ended_ms);
	free(json);
	cJSON_Delete(o);
	fg_summary_release(&back);
	fg_summary_release(&s);
}

Test(phase, traceparent_parse_table)
{
	static const char *const bad[] = {
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
		"00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01", "", "00",
	};
	struct fg_trace_ctx c, keep;
	char tp[FG_TRACEPARENT_LEN];

	cr_assert_eq(fg_traceparent_parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", &c), 0);
	cr_expect_str_eq(c.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
	cr_expect_str_eq(c.span_id, "00f067aa0ba902b7");
	cr_expect(c.sampled);
	fg_traceparent_format(tp, c.trace_id, "b7ad6b7169203331", false);
	cr_expect_str_eq(tp, "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-00");
	for (size_t i = 0; i < N_ELEMS(bad); i++) {
		keep = c;
		cr_expect_eq(fg_traceparent_parse(bad[i], &c), -EINVAL, "'%s'", bad[i]);
		cr_expect_str_eq(c.trace_id, keep.trace_id, "untouched");
	}
	cr_expect_eq(fg_traceparent_parse(NULL, &c), -EINVAL);
}

Test(phase, random_ids_are_valid_and_differ)
{
	char a[FG_TRACE_ID_HEX + 1], b[FG_TRACE_ID_HEX + 1], s[FG_SPAN_ID_HEX + 1];

	fg_trace_random_hex(a, FG_TRACE_ID_HEX);
	fg_trace_random_hex(b, FG_TRACE_ID_HEX);
	fg_trace_random_hex(s, FG_SPAN_ID_HEX);
	cr_expect(fg_trace_hex_valid(a, FG_TRACE_ID_HEX), "%s", a);
	cr_expect(fg_span_id_valid(s), "%s", s);
	cr_expect_str_neq(a, b);
}
