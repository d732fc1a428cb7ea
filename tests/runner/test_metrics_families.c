/*
 * test_metrics_families.c - promtool's verdict on what we render and merge
 * and on the example rules, duration sums as written, and the families
 * beside the review loop's: agent usage and cost, audits, runs by skill and
 * engine and the last success.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fgtest.h"
#include "forge/buf.h"
#include "metrics.h"

#include "metrics_sample.h"
#include "../common/tmp_fixture.h"

TestSuite(metrics, .init = tmp_init, .fini = tmp_fini, .timeout = 120);

/* ---- promtool ---- */

Test(metrics, promtool_accepts_rendered_and_merged_files)
{
	const char *const argv[] = { PROMTOOL, "check", "metrics", NULL };
	char *dir, *path, *text;
	struct rn_metrics m;

	if (access(PROMTOOL, X_OK) != 0)
		cr_skip("promtool is not installed (Debian package prometheus)");
	rn_metrics_init(&m);
	observe_run(&m);
	rn_metrics_observe_cycle(&m, "odd \"skill\"\\x", "s\n2", "rejected", 1234.5);
	add_run(&m, "s", "timeout");
	text = render(&m);
	promtool(argv, text);
	free(text);

	dir = fgt_tmpdir();
	path = fgt_fmt("%s/forge.prom", dir);
	fgt_write(path, foreign);
	merge_ok(&m, path);
	merge_ok(&m, path);
	text = fgt_read(path, NULL);
	promtool(argv, text);
	free(text);
	rn_metrics_release(&m);
	fgt_rm_rf(dir);
	free(path);
	free(dir);
}

Test(metrics, promtool_accepts_example_alerting_rules)
{
	const char *const argv[] = { PROMTOOL, "check", "rules",
				     FG_SOURCE_DIR "/docs/examples/forge-review.rules.yml", NULL };

	if (access(PROMTOOL, X_OK) != 0)
		cr_skip("promtool is not installed (Debian package prometheus)");
	promtool(argv, NULL);
}

Test(metrics, promtool_unit_tests_of_example_rules_pass)
{
	const char *const argv[] = { PROMTOOL, "test", "rules", "forge-review.rules.test.yml", NULL };
	struct fgt_proc p;

	if (access(PROMTOOL, X_OK) != 0)
		cr_skip("promtool is not installed (Debian package prometheus)");
	/* A hang guard as in promtool(): the rules' unit tests take the longest. */
	cr_assert_eq(fgt_run(&p, argv, NULL, FG_SOURCE_DIR "/docs/examples", NULL, 110), 0);
	cr_assert(p.exited && p.exit_code == 0, "promtool test rules failed (%d):\n%s\n%s",
		  p.exit_code, p.out, p.err);
	fgt_proc_release(&p);
}

/* 0.009 + 0.019 summed as doubles is 0.027999999999999997; sums are kept
 * to the microsecond and printed in the shortest form that reads back the same. */
Test(metrics, duration_sum_prints_as_written)
{
	struct rn_metrics m;
	char *text;

	rn_metrics_init(&m);
	rn_metrics_observe_cycle(&m, "k", "s", "rejected", 0.009);
	rn_metrics_observe_cycle(&m, "k", "s", "approved", 0.019);
	rn_metrics_observe_cycle(&m, "k", "t", "approved", 0.1);
	rn_metrics_observe_cycle(&m, "k", "t", "approved", 0.2);
	text = render(&m);
	cr_assert(strstr(text, "forge_review_duration_seconds_sum{skill=\"k\",step=\"s\"} 0.028\n"), "%s", text);
	cr_assert(strstr(text, "forge_review_duration_seconds_sum{skill=\"k\",step=\"t\"} 0.3\n"), "%s", text);
	cr_assert(!strstr(text, "0.0279999"), "%s", text);
	free(text);
	rn_metrics_release(&m);
}

/* Agent usage: tokens by kind, cost by role; unreported fields
 * create no series; costs add up as written across merges. */
Test(metrics, agent_usage_counts_what_was_reported_and_merges)
{
	char *path = tmp_path("forge.prom");
	struct rn_metrics m;
	struct fg_usage w, r;
	char *text;

	fg_usage_init(&w);
	fg_usage_init(&r);
	fg_usage_set(&w, FG_USAGE_INPUT, 100);
	fg_usage_set(&w, FG_USAGE_OUTPUT, 7);
	fg_usage_set_cost(&w, 0.1);
	fg_usage_set_cost(&r, 0.2);
	for (int run = 0; run < 2; run++) {
		rn_metrics_init(&m);
		rn_metrics_add_usage(&m, "k", "s", "worker", &w);
		rn_metrics_add_usage(&m, "k", "s", "reviewer", &r);
		merge_ok(&m, path);
		rn_metrics_release(&m);
	}
	text = fgt_read(path, NULL);
	cr_assert(strstr(text, "forge_review_agent_tokens_total{skill=\"k\",step=\"s\",role=\"worker\",kind=\"input\"} 200\n"),
		  "%s", text);
	cr_assert(strstr(text, "forge_review_agent_tokens_total{skill=\"k\",step=\"s\",role=\"worker\",kind=\"output\"} 14\n"),
		  "%s", text);
	cr_assert(strstr(text, "forge_review_agent_cost_usd_total{skill=\"k\",step=\"s\",role=\"worker\"} 0.2\n"), "%s", text);
	cr_assert(strstr(text, "forge_review_agent_cost_usd_total{skill=\"k\",step=\"s\",role=\"reviewer\"} 0.4\n"), "%s", text);
	/* Nothing reported, nothing invented: no cached or reviewer token series. */
	cr_assert_null(strstr(text, "kind=\"cached_input\""), "%s", text);
	cr_assert_null(strstr(text, "role=\"reviewer\",kind="), "%s", text);
	free(text);
}

/* Costs of 1e308 would sum to +Inf, and a file holding +Inf is refused by
 * the next merge (and by promtool's users): the metrics would be lost for
 * good. A cost above FG_USAGE_COST_MAX is refused
 * where it is read (no series), and no addition makes a metric non-finite:
 * a file already near the largest double stays finite after more runs,
 * counters and the histogram's sum alike. promtool accepts the file. */
Test(metrics, no_addition_makes_a_metric_infinite)
{
	const char *const argv[] = { PROMTOOL, "check", "metrics", NULL };
	char *path = tmp_path("forge.prom");
	struct rn_metrics m;
	struct fg_usage w;
	char *text;

	fg_usage_init(&w);
	fg_usage_set_cost(&w, 1e308);
	fg_usage_set(&w, FG_USAGE_OUTPUT, 5);
	cr_assert_not(w.have & FG_USAGE_COST);
	fgt_write(path, "# TYPE forge_review_cycles_total counter\n"
		  "forge_review_cycles_total{skill=\"k\",step=\"s\"} 1.7976931348623157e+308\n");
	for (int run = 0; run < 2; run++) {
		rn_metrics_init(&m);
		rn_metrics_add_usage(&m, "k", "s", "worker", &w);
		rn_metrics_observe_cycle(&m, "k", "s", "approved", 1.7e308);
		for (int i = 0; i < 3; i++)
			rn_metrics_observe_cycle(&m, "k", "s", "approved", 1e308);
		merge_ok(&m, path);
		rn_metrics_release(&m);
	}
	text = fgt_read(path, NULL);
	cr_assert_null(strstr(text, "Inf\n"), "%s", text);
	cr_assert_null(strstr(text, "NaN"), "%s", text);
	cr_assert_null(strstr(text, "forge_review_agent_cost_usd_total{"), "%s", text);
	cr_assert(strstr(text, "forge_review_cycles_total{skill=\"k\",step=\"s\"} 1.7976931348623157e+308\n"),
		  "%s", text);
	cr_assert(strstr(text, "role=\"worker\",kind=\"output\"} 10\n"), "%s", text);
	if (access(PROMTOOL, X_OK) == 0)
		promtool(argv, text);
	else
		cr_log_warn("promtool check skipped: %s is missing", PROMTOOL);
	free(text);
}

/* forge_review_audits_total{skill,step,outcome}: one per audited run,
 * counted across runs that share the file, read back strictly, and a file
 * promtool accepts. */
Test(metrics, audit_outcomes_count_merge_and_pass_promtool)
{
	const char *const argv[] = { PROMTOOL, "check", "metrics", NULL };
	char *dir = fgt_tmpdir(), *path = fgt_fmt("%s/forge.prom", dir), *text;
	struct rn_metrics m;

	for (int run = 0; run < 2; run++) {
		rn_metrics_init(&m);
		rn_metrics_add_audit(&m, "implement-task", "implement_task", "disagreed");
		rn_metrics_add_audit(&m, "implement-task", "implement_task", run ? "agreed" : "skipped");
		merge_ok(&m, path);
		rn_metrics_release(&m);
	}
	text = fgt_read(path, NULL);
	cr_assert_not_null(strstr(text, "# TYPE forge_review_audits_total counter\n"
				  "forge_review_audits_total{skill=\"implement-task\",step=\"implement_task\",outcome=\"agreed\"} 1\n"
				  "forge_review_audits_total{skill=\"implement-task\",step=\"implement_task\",outcome=\"disagreed\"} 2\n"
				  "forge_review_audits_total{skill=\"implement-task\",step=\"implement_task\",outcome=\"skipped\"} 1\n"),
			   "%s", text);
	if (access(PROMTOOL, X_OK) == 0)
		promtool(argv, text);
	free(text);
	fgt_rm_rf(dir);
	free(path);
	free(dir);
}

/* The run counter names the skill and the engine, each run's duration is a
 * histogram, the last success of a step a gauge (the later time wins a
 * merge), rejections are counted by what rejected them; a file written
 * before the new labels merges, its series kept apart; promtool agrees. */
Test(metrics, runs_carry_skill_and_engine_duration_and_last_success)
{
	const char *const argv[] = { PROMTOOL, "check", "metrics", NULL };
	const struct rn_metrics_run ok = { .skill = "impl-task", .step = "s", .engine = "docker",
					   .outcome = "approved", .seconds = 42, .succeeded_at = 1700000000 };
	const struct rn_metrics_run bad = { .skill = "impl-task", .step = "s", .engine = "docker",
					    .outcome = "failed", .seconds = 4000 };
	const struct rn_metrics_run later = { .skill = "impl-task", .step = "s", .engine = "podman",
					      .outcome = "approved", .seconds = 5, .succeeded_at = 1700000500 };
	char *dir = fgt_tmpdir(), *path = fgt_fmt("%s/forge.prom", dir), *text;
	struct rn_metrics a, b;

	fgt_write(path, "# HELP forge_runner_runs_total Runner runs, by step and outcome.\n"
			"# TYPE forge_runner_runs_total counter\n"
			"forge_runner_runs_total{step=\"s\",outcome=\"failed\"} 4\n");
	rn_metrics_init(&a);
	rn_metrics_init(&b);
	rn_metrics_add_run(&a, &ok);
	rn_metrics_add_run(&a, &bad);
	rn_metrics_add_rejection(&a, "impl-task", "s", "checks");
	rn_metrics_add_rejection(&a, "impl-task", "s", "reviewer");
	rn_metrics_add_rejection(&a, "impl-task", "s", "checks");
	rn_metrics_add_run(&b, &later);
	merge_ok(&b, path);
	merge_ok(&a, path);
	text = fgt_read(path, NULL);
	cr_assert_eq(sample(text, "forge_runner_runs_total{step=\"s\",outcome=\"failed\"}"), 4, "%s", text);
	cr_assert_eq(sample(text, "forge_runner_runs_total{step=\"s\",outcome=\"failed\",skill=\"impl-task\","
				  "engine=\"docker\"}"), 1, "%s", text);
	cr_assert_eq(sample(text, "forge_runner_runs_total{step=\"s\",outcome=\"approved\",skill=\"impl-task\","
				  "engine=\"podman\"}"), 1, "%s", text);
	cr_assert(strstr(text, "# TYPE forge_runner_last_success_timestamp_seconds gauge\n"), "%s", text);
	cr_assert_eq(sample(text, "forge_runner_last_success_timestamp_seconds{skill=\"impl-task\",step=\"s\"}"),
		     1700000500, "the later success: %s", text);
	cr_assert(strstr(text, "# TYPE forge_runner_run_duration_seconds histogram\n"), "%s", text);
	cr_assert_eq(sample(text, "forge_runner_run_duration_seconds_bucket{skill=\"impl-task\",step=\"s\","
				  "engine=\"docker\",le=\"60\"}"), 1, "%s", text);
	cr_assert_eq(sample(text, "forge_runner_run_duration_seconds_bucket{skill=\"impl-task\",step=\"s\","
				  "engine=\"docker\",le=\"7200\"}"), 2, "%s", text);
	cr_assert_eq(sample(text, "forge_review_rejections_total{skill=\"impl-task\",step=\"s\",by=\"checks\"}"), 2,
		     "%s", text);
	cr_assert_eq(sample(text, "forge_review_rejections_total{skill=\"impl-task\",step=\"s\",by=\"reviewer\"}"), 1,
		     "%s", text);
	if (access(PROMTOOL, X_OK) == 0)
		promtool(argv, text);
	free(text);
	rn_metrics_release(&a);
	rn_metrics_release(&b);
	fgt_rm_rf(dir);
	free(path);
	free(dir);
}
