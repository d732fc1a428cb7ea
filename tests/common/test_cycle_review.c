/*
 * test_cycle_review.c - what a cycle records beside its verdict: a panel's
 * reviews, the reviewer log's name, usage, the re-ask and budget flags and
 * the tools each agent was denied.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "forge/cycle.h"
#include "forge/fsutil.h"
#include "forge/util.h"

#include "cycle_sample.h"

TestSuite(cycle, .timeout = 60);

Test(cycle, reviews_round_trip_and_old_files_have_none)
{
	struct fg_cycle c, back;
	struct fg_review *r;
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
	cycle_parse_ok(&back, text);
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

/* Usage, reask and over_budget survive a write and a read; a malformed
 * usage or reask makes nothing invalid and is read as none. */
Test(cycle, usage_reask_and_over_budget_round_trip)
{
	struct fg_cycle c, back;
	char err[256] = "", *text;

	cycle_fill(&c, 2, 5, FG_VERDICT_REJECTED);
	c.reask = true;
	c.over_budget = true;
	fg_usage_set(&c.usage.worker, FG_USAGE_INPUT, 1200);
	fg_usage_set_cost(&c.usage.reviewer, 0.125);
	text = fg_cycle_to_json(&c);
	cycle_parse_ok(&back, text);
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

/* denied_tools: written per role when a role was refused a tool, read
 * back leniently (invalid names and wrong types dropped, never an error). */
Test(cycle, denied_tools_round_trip_and_lenient_reader)
{
	struct fg_cycle c, back;
	char *text, err[256];
	cJSON *o;

	cycle_fill(&c, 1, 3, FG_VERDICT_REJECTED);
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
	cycle_parse_ok(&back, text);
	cr_assert_eq(back.denied.reviewer.n, 2);
	cr_assert_eq(back.denied.worker.n, 0);
	fg_cycle_release(&back);
	free(text);
	text = cycle_patched("denied_tools", "{\"worker\":[\"Bash\",7,\"a b\"],\"reviewer\":\"Edit\"}");
	cr_assert_eq(fg_cycle_parse(&back, text, strlen(text), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(back.denied.worker.n, 1);
	cr_assert_str_eq(back.denied.worker.v[0], "Bash");
	cr_assert_eq(back.denied.reviewer.n, 0);
	fg_cycle_release(&back);
	free(text);
	fg_cycle_release(&c);
}
