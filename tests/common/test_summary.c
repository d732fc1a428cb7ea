/*
 * test_summary.c - review_summary.json: states, writing, reading, validation.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgtest.h"
#include "forge/fsutil.h"
#include "forge/summary.h"
#include "forge/util.h"

#include "cycle_sample.h"
#include "tmp_fixture.h"

TestSuite(summary, .init = tmp_init, .fini = tmp_fini, .timeout = 30);


struct state_case {
	enum fg_review_state s;
	const char *name;
};

static const struct state_case states[] = {
	{ FG_STATE_APPROVED, "approved" },   { FG_STATE_EXHAUSTED, "exhausted" },
	{ FG_STATE_STALLED, "stalled" },     { FG_STATE_BLOCKED, "blocked" },
	{ FG_STATE_OVER_BUDGET, "over_budget" }, { FG_STATE_FAILED, "failed" },
	{ FG_STATE_DISABLED, "disabled" },   { FG_STATE_NO_REVIEW, "no_review" },
	{ FG_STATE_AUDIT_REJECTED, "audit_rejected" },
};

Test(summary, state_names_and_parse_table)
{
	static const char *const bad[] = { "", "APPROVED", "Approved", "none", "no-review",
					   "exhausted ", "rejected", "over-budget" };

	for (size_t i = 0; i < ARRAY_SIZE(states); i++) {
		enum fg_review_state got = FG_STATE_APPROVED;

		cr_expect_str_eq(fg_review_state_name(states[i].s), states[i].name);
		cr_expect_eq(fg_review_state_parse(states[i].name, &got), 0);
		cr_expect_eq(got, states[i].s);
	}
	/* Every state has a row: a new state cannot go without a name. */
	cr_expect_eq(ARRAY_SIZE(states), FG_STATE_COUNT);
	cr_expect_str_eq(fg_review_state_name(FG_STATE_COUNT), "failed", "out of range");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		enum fg_review_state got = FG_STATE_STALLED;

		cr_expect_eq(fg_review_state_parse(bad[i], &got), -EINVAL, "'%s'", bad[i]);
		cr_expect_eq(got, FG_STATE_STALLED, "untouched on failure");
	}
}

static void fill(struct fg_summary *s, enum fg_review_state st)
{
	summary_fill(s, st, 2, 3, "implement_task", "implement-task");
	s->task_key = fgt_fmt("PROJ-12");
	s->run_id = fgt_fmt("run-1");
	s->review_md = fgt_fmt("/skills/proj/implement-task/review.md");
}

Test(summary, round_trip_every_state)
{
	for (size_t i = 0; i < ARRAY_SIZE(states); i++) {
		char *dir = fgt_tmpdir();
		struct fg_summary s, back;
		char err[256] = "";

		fill(&s, states[i].s);
		cr_assert_eq(fg_summary_write(dir, &s), 0);
		cr_assert_eq(fgt_count_entries(dir), 1, "only review_summary.json, no temp");
		fg_summary_init(&back);
		cr_assert_eq(fg_summary_read(dir, &back, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(back.state, states[i].s);
		cr_assert_eq(back.cycles, 2);
		cr_assert_eq(back.max_cycles, 3);
		cr_assert_str_eq(back.step, "implement_task");
		cr_assert_str_eq(back.skill, "implement-task");
		cr_assert_str_eq(back.task_key, "PROJ-12");
		cr_assert_str_eq(back.run_id, "run-1");
		cr_assert_str_eq(back.review_md, "/skills/proj/implement-task/review.md");
		fg_summary_release(&back);
		fg_summary_release(&s);
		fgt_rm_rf(dir);
		free(dir);
	}
}

Test(summary, written_shape_has_exact_fields_and_null_review_md)
{
	static const char *const keys[] = { "state", "cycles", "max_cycles", "step", "skill",
					    "task_key", "run_id", "review_md" };
	char *path = fgt_fmt("%s/" FG_SUMMARY_FILE, tmp_dir);
	struct fg_summary s, back;
	cJSON *o;
	char err[256] = "";

	summary_fill(&s, FG_STATE_NO_REVIEW, 0, 0, "review", "x");
	/* task_key, run_id and review_md NULL */
	cr_assert_eq(fg_summary_write(tmp_dir, &s), 0);
	o = read_keys_in_order(path, keys, ARRAY_SIZE(keys));
	cr_assert_str_eq(cJSON_GetObjectItem(o, "state")->valuestring, "no_review");
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(o, "review_md")));
	cr_assert_str_eq(cJSON_GetObjectItem(o, "task_key")->valuestring, "");
	cr_assert_str_eq(cJSON_GetObjectItem(o, "run_id")->valuestring, "");
	cr_assert_eq(cJSON_GetObjectItem(o, "cycles")->valuedouble, 0);
	cJSON_Delete(o);
	fg_summary_init(&back);
	cr_assert_eq(fg_summary_read(tmp_dir, &back, err, sizeof(err)), 0, "%s", err);
	cr_assert_null(back.review_md);
	cr_assert_str_eq(back.task_key, "");
	fg_summary_release(&back);
	fg_summary_release(&s);
	free(path);
}

Test(summary, temp_name_is_not_a_cycle_or_summary_name)
{
	char *tmp = fg_atomic_tmp_name(FG_SUMMARY_FILE);

	cr_assert_neq(fnmatch("review_cycle_*.json", tmp, 0), 0);
	cr_assert_str_neq(tmp, FG_SUMMARY_FILE);
	cr_assert(fg_is_atomic_tmp_name(tmp));
	free(tmp);
}

Test(summary, write_into_missing_dir_fails)
{
	char *missing = tmp_path("none");
	struct fg_summary s;

	fill(&s, FG_STATE_APPROVED);
	cr_assert_eq(fg_summary_write(missing, &s), -ENOENT);
	cr_assert_eq(fgt_count_entries(tmp_dir), 0);
	fg_summary_release(&s);
}

struct bad_case {
	const char *text;
	const char *reason;
};

#define TAIL "\"step\": \"s\", \"skill\": \"k\", \"task_key\": \"\", \"run_id\": \"\", \"review_md\": null}"

Test(summary, invalid_files_table)
{
	static const struct bad_case cases[] = {
		{ "", "not valid JSON" },
		{ "{\"state\": \"approved\"", "not valid JSON" },
		{ "[]", "not a JSON object" },
		{ "{\"cycles\": 1, \"max_cycles\": 3, " TAIL, "missing field 'state'" },
		{ "{\"state\": \"done\", \"cycles\": 1, \"max_cycles\": 3, " TAIL,
		  "field 'state' must be one of approved, exhausted, stalled, failed, disabled, no_review" },
		{ "{\"state\": 1, \"cycles\": 1, \"max_cycles\": 3, " TAIL,
		  "field 'state' must be one of approved, exhausted, stalled, failed, disabled, no_review" },
		{ "{\"state\": \"approved\", \"max_cycles\": 3, " TAIL, "missing field 'cycles'" },
		{ "{\"state\": \"approved\", \"cycles\": -1, \"max_cycles\": 3, " TAIL,
		  "field 'cycles' must be an integer from 0 to 100000" },
		{ "{\"state\": \"approved\", \"cycles\": 1.5, \"max_cycles\": 3, " TAIL,
		  "field 'cycles' must be an integer from 0 to 100000" },
		{ "{\"state\": \"approved\", \"cycles\": \"1\", \"max_cycles\": 3, " TAIL,
		  "field 'cycles' must be an integer from 0 to 100000" },
		{ "{\"state\": \"approved\", \"cycles\": 1e30, \"max_cycles\": 3, " TAIL,
		  "field 'cycles' must be an integer from 0 to 100000" },
		{ "{\"state\": \"approved\", \"cycles\": 1, " TAIL, "missing field 'max_cycles'" },
		{ "{\"state\": \"approved\", \"cycles\": 1, \"max_cycles\": true, " TAIL,
		  "field 'max_cycles' must be an integer from 0 to 100000" },
		{ "{\"state\": \"approved\", \"cycles\": 1, \"max_cycles\": 3, \"skill\": \"k\"}",
		  "missing field 'step'" },
		{ "{\"state\": \"approved\", \"cycles\": 1, \"max_cycles\": 3, \"step\": null, \"skill\": \"k\"}",
		  "field 'step' must be a string" },
		{ "{\"state\": \"approved\", \"cycles\": 1, \"max_cycles\": 3, \"step\": \"s\"}",
		  "missing field 'skill'" },
		/* Every name is held to the names rule. */
		{ "{\"state\": \"approved\", \"cycles\": 1, \"max_cycles\": 3, \"step\": \"a/b\", \"skill\": \"k\"}",
		  "field 'step': invalid step name 'a/b': contains '/'" },
		{ "{\"state\": \"approved\", \"cycles\": 1, \"max_cycles\": 3, \"step\": \"s\", \"skill\": \"k k\"}",
		  "field 'skill': invalid skill name 'k k': contains whitespace" },
		{ "{\"state\": \"approved\", \"cycles\": 1, \"max_cycles\": 3, \"step\": \"s\", \"skill\": \"k\", "
		  "\"task_key\": \"..\"}", "field 'task_key': invalid task key name '..': is '..'" },
		{ "{\"state\": \"approved\", \"cycles\": 1, \"max_cycles\": 3, \"step\": \"s\", \"skill\": \"k\", "
		  "\"run_id\": \"a\\u001bb\"}", "field 'run_id': invalid run id name 'a\\x1bb': contains a control character" },
		{ "{\"state\": \"approved\", \"cycles\": 100001, \"max_cycles\": 3, \"step\": \"s\", \"skill\": \"k\"}",
		  "field 'cycles' must be an integer from 0 to 100000" },
		{ "{\"state\": \"approved\", \"cycles\": 1, \"max_cycles\": 3, \"step\": \"s\", \"skill\": \"\xff\"}",
		  "not valid UTF-8 at byte 75" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *dir = fgt_tmpdir();
		char *path = fgt_fmt("%s/" FG_SUMMARY_FILE, dir);
		struct fg_summary s;
		char err[256] = "";

		fgt_write(path, cases[i].text);
		fill(&s, FG_STATE_APPROVED);
		cr_expect_eq(fg_summary_read(dir, &s, err, sizeof(err)), -EINVAL, "%s", cases[i].text);
		cr_expect_str_eq(err, cases[i].reason, "%s", cases[i].text);
		cr_expect_null(s.step, "earlier contents released");
		fg_summary_release(&s);
		fgt_rm_rf(dir);
		free(path);
		free(dir);
	}
}

Test(summary, optional_strings_tolerate_absence_and_wrong_types)
{
	char *path = fgt_fmt("%s/" FG_SUMMARY_FILE, tmp_dir);
	struct fg_summary s;
	char err[256] = "";

	fgt_write(path, "{\"state\": \"disabled\", \"cycles\": 0, \"max_cycles\": 0, \"step\": \"s\","
			" \"skill\": \"k\", \"run_id\": 5, \"review_md\": 7, \"future\": [1]}");
	fg_summary_init(&s);
	cr_assert_eq(fg_summary_read(tmp_dir, &s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(s.state, FG_STATE_DISABLED);
	cr_assert_eq(s.max_cycles, 0);
	cr_assert_str_eq(s.task_key, "");
	cr_assert_str_eq(s.run_id, "");
	cr_assert_null(s.review_md);
	fg_summary_release(&s);
	free(path);
}

Test(summary, read_refuses_missing_symlink_and_fifo)
{
	char *path = fgt_fmt("%s/" FG_SUMMARY_FILE, tmp_dir);
	char *real = tmp_path("real.json");
	struct fg_summary s;
	char err[512] = "";

	fg_summary_init(&s);
	cr_assert_eq(fg_summary_read(tmp_dir, &s, err, sizeof(err)), -ENOENT);
	cr_assert_not_null(strstr(err, "cannot read"), "%s", err);
	fgt_write(real, "{}");
	cr_assert_eq(symlink(real, path), 0);
	cr_assert_eq(fg_summary_read(tmp_dir, &s, err, sizeof(err)), -ELOOP);
	cr_assert_not_null(strstr(err, "symbolic link"), "%s", err);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(mkfifo(path, 0600), 0);
	cr_assert_eq(fg_summary_read(tmp_dir, &s, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "not a regular file"), "%s", err);
	fg_summary_release(&s);
	free(path);
}

/* The step's usage totals and the budget round-trip. */
Test(summary, usage_and_budget_round_trip)
{
	struct fg_summary s, back;
	char err[256] = "";

	fill(&s, FG_STATE_OVER_BUDGET);
	s.max_cost_usd = 0.9;
	fg_usage_set_cost(&s.usage.worker, 0.6);
	fg_usage_set(&s.usage.reviewer, FG_USAGE_OUTPUT, 42);
	cr_assert_eq(fg_summary_write(tmp_dir, &s), 0);
	fg_summary_init(&back);
	cr_assert_eq(fg_summary_read(tmp_dir, &back, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(back.state, FG_STATE_OVER_BUDGET);
	cr_assert_float_eq(back.max_cost_usd, 0.9, 1e-12);
	cr_assert_float_eq(back.usage.worker.cost_usd, 0.6, 1e-12);
	cr_assert_eq(back.usage.reviewer.output_tokens, 42);
	fg_summary_release(&back);
	fg_summary_release(&s);
}

/* An approval with advice only lists its advice ("advice"),
 * bounded and read back; absent otherwise. */
Test(summary, advice_round_trips_bounded)
{
	struct fg_summary s, back;
	struct fg_finding f = { .severity = "NITPICK", .title = "no final newline", .file_path = "a.txt",
				.line = 1, .role = "default" };
	char err[256] = "";

	fill(&s, FG_STATE_APPROVED);
	for (int i = 0; i < FG_SUMMARY_QUESTIONS_MAX + 5; i++)
		fg_summary_add_advice(&s, &f);
	cr_assert_eq(s.nadvice, FG_SUMMARY_QUESTIONS_MAX);
	cr_assert_eq(fg_summary_write(tmp_dir, &s), 0);
	fg_summary_init(&back);
	cr_assert_eq(fg_summary_read(tmp_dir, &back, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(back.nadvice, FG_SUMMARY_QUESTIONS_MAX);
	cr_assert_str_eq(back.advice[0].severity, "NITPICK");
	cr_assert_str_eq(back.advice[0].file_path, "a.txt");
	cr_assert_eq(back.nquestions, 0);
	fg_summary_release(&back);
	fg_summary_release(&s);
	fill(&s, FG_STATE_APPROVED);
	cr_assert_eq(fg_summary_write(tmp_dir, &s), 0);
	char *path = fgt_fmt("%s/" FG_SUMMARY_FILE, tmp_dir);
	char *text = fgt_read(path, NULL);
	cr_assert(text && !strstr(text, "\"advice\""), "%s", text ? text : "");
	free(text);
	free(path);
	fg_summary_release(&s);
}

/* The audit's record (audit.h) round-trips through the summary, bounded:
 * feedback cut, findings at most FG_AUDIT_FINDINGS_MAX, usage and cost kept;
 * a summary without one has none, one with an unreadable one drops it. */
Test(summary, audit_round_trips_bounded)
{
	struct fg_summary s, back;
	struct fg_audit a;
	struct fg_judgement j;
	char err[256] = "";

	fill(&s, FG_STATE_AUDIT_REJECTED);
	fg_audit_init(&a);
	fg_judgement_init(&j);
	j.verdict = FG_VERDICT_REJECTED;
	j.feedback = malloc(FG_AUDIT_FEEDBACK_MAX * 3);
	memset(j.feedback, 'x', FG_AUDIT_FEEDBACK_MAX * 3 - 1);
	j.feedback[FG_AUDIT_FEEDBACK_MAX * 3 - 1] = '\0';
	for (int i = 0; i < FG_AUDIT_FINDINGS_MAX + 7; i++) {
		struct fg_finding *f = fg_judgement_add_finding(&j);

		f->severity = strdup("BLOCKING");
		f->title = strdup("off by one");
		f->file_path = strdup("calc.sh");
		f->line = 3;
	}
	j.has_findings = true;
	fg_audit_take_judgement(&a, &j);
	fg_judgement_reset(&j);
	a.blocks = true;
	a.sample = 0.2;
	a.draw = 0.125;
	a.elapsed_seconds = 1.5;
	fg_usage_set_cost(&a.usage, 0.04);
	fg_usage_set(&a.usage, FG_USAGE_OUTPUT, 1312);
	fg_summary_set_audit(&s, &a);
	fg_audit_release(&a);
	cr_assert_eq(fg_summary_write(tmp_dir, &s), 0);
	fg_summary_init(&back);
	cr_assert_eq(fg_summary_read(tmp_dir, &back, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(back.state, FG_STATE_AUDIT_REJECTED);
	cr_assert_not_null(back.audit);
	cr_assert_eq(back.audit->outcome, FG_AUDIT_DISAGREED);
	cr_assert(back.audit->has_verdict);
	cr_assert_eq(back.audit->verdict, FG_VERDICT_REJECTED);
	cr_assert_eq(strlen(back.audit->feedback), FG_AUDIT_FEEDBACK_MAX);
	cr_assert_eq(back.audit->nfindings, FG_AUDIT_FINDINGS_MAX);
	cr_assert_str_eq(back.audit->findings[0].title, "off by one");
	cr_assert(back.audit->blocks);
	cr_assert_float_eq(back.audit->sample, 0.2, 1e-12);
	cr_assert_float_eq(back.audit->draw, 0.125, 1e-12);
	cr_assert_float_eq(back.audit->usage.cost_usd, 0.04, 1e-12);
	cr_assert_eq(back.audit->usage.output_tokens, 1312);
	fg_summary_release(&back);
	fg_summary_release(&s);

	/* Without an audit: none; with one that does not read: none either. */
	fill(&s, FG_STATE_APPROVED);
	cr_assert_eq(fg_summary_write(tmp_dir, &s), 0);
	fg_summary_init(&back);
	cr_assert_eq(fg_summary_read(tmp_dir, &back, err, sizeof(err)), 0, "%s", err);
	cr_assert_null(back.audit);
	fg_summary_release(&back);
	fg_summary_release(&s);
	{
		char *p = tmp_path("review_summary.json");

		fgt_write(p, "{\"state\":\"approved\",\"cycles\":1,\"max_cycles\":3,\"step\":\"s\","
			  "\"skill\":\"k\",\"audit\":{\"outcome\":\"maybe\"}}");
	}
	fg_summary_init(&back);
	cr_assert_eq(fg_summary_read(tmp_dir, &back, err, sizeof(err)), 0, "%s", err);
	cr_assert_null(back.audit, "an audit without a valid outcome is dropped");
	fg_summary_release(&back);
}
