/*
 * test_metrics.c - Prometheus rendering, label escaping, histogram buckets,
 * and merging into a shared textfile (several runs, concurrent runners,
 * corrupt files). Promtool and the families of usage, audits and runs:
 * test_metrics_families.c.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fgtest.h"
#include "forge/buf.h"
#include "metrics.h"

#include "metrics_sample.h"
#include "../common/tmp_fixture.h"

TestSuite(metrics, .init = tmp_init, .fini = tmp_fini, .timeout = 120);

static const char expected_run[] =
	"# HELP forge_review_cycles_total Review cycles detected, by skill and step.\n"
	"# TYPE forge_review_cycles_total counter\n"
	"forge_review_cycles_total{skill=\"implement-task\",step=\"implement_task\"} 2\n"
	"# HELP forge_review_duration_seconds Wall time of one review cycle in seconds.\n"
	"# TYPE forge_review_duration_seconds histogram\n"
	"forge_review_duration_seconds_bucket{skill=\"implement-task\",step=\"implement_task\",le=\"1\"} 0\n"
	"forge_review_duration_seconds_bucket{skill=\"implement-task\",step=\"implement_task\",le=\"5\"} 1\n"
	"forge_review_duration_seconds_bucket{skill=\"implement-task\",step=\"implement_task\",le=\"10\"} 1\n"
	"forge_review_duration_seconds_bucket{skill=\"implement-task\",step=\"implement_task\",le=\"30\"} 1\n"
	"forge_review_duration_seconds_bucket{skill=\"implement-task\",step=\"implement_task\",le=\"60\"} 2\n"
	"forge_review_duration_seconds_bucket{skill=\"implement-task\",step=\"implement_task\",le=\"120\"} 2\n"
	"forge_review_duration_seconds_bucket{skill=\"implement-task\",step=\"implement_task\",le=\"300\"} 2\n"
	"forge_review_duration_seconds_bucket{skill=\"implement-task\",step=\"implement_task\",le=\"600\"} 2\n"
	"forge_review_duration_seconds_bucket{skill=\"implement-task\",step=\"implement_task\",le=\"+Inf\"} 2\n"
	"forge_review_duration_seconds_sum{skill=\"implement-task\",step=\"implement_task\"} 48.2\n"
	"forge_review_duration_seconds_count{skill=\"implement-task\",step=\"implement_task\"} 2\n"
	"# HELP forge_review_exhausted_total Runs whose review loop ended rejected at its cycle limit.\n"
	"# TYPE forge_review_exhausted_total counter\n"
	"forge_review_exhausted_total{skill=\"plan-review\",step=\"plan\"} 1\n"
	"# HELP forge_review_sweep_caught_total Review cycles seen only by the final sweep, not while watching.\n"
	"# TYPE forge_review_sweep_caught_total counter\n"
	"forge_review_sweep_caught_total{skill=\"implement-task\",step=\"implement_task\"} 1\n"
	"# HELP forge_review_verdicts_total Review verdicts, by skill, step and verdict.\n"
	"# TYPE forge_review_verdicts_total counter\n"
	"forge_review_verdicts_total{skill=\"implement-task\",step=\"implement_task\",verdict=\"approved\"} 1\n"
	"forge_review_verdicts_total{skill=\"implement-task\",step=\"implement_task\",verdict=\"rejected\"} 1\n"
	"# HELP forge_runner_runs_total Runner runs, by step, outcome, skill and engine.\n"
	"# TYPE forge_runner_runs_total counter\n"
	"forge_runner_runs_total{step=\"implement_task\",outcome=\"approved\"} 1\n";

Test(metrics, render_writes_exact_exposition_text)
{
	struct rn_metrics m;
	char *text;

	rn_metrics_init(&m);
	observe_run(&m);
	text = render(&m);
	cr_assert_str_eq(text, expected_run);
	free(text);
	rn_metrics_release(&m);
}

Test(metrics, render_orders_series_whatever_the_observation_order)
{
	struct rn_metrics a, b;
	char *ta, *tb;

	rn_metrics_init(&a);
	rn_metrics_init(&b);
	add_run(&a, "zeta", "failed");
	add_run(&a, "alpha", "timeout");
	add_run(&a, "alpha", "approved");
	add_run(&b, "alpha", "approved");
	add_run(&b, "zeta", "failed");
	add_run(&b, "alpha", "timeout");
	ta = render(&a);
	tb = render(&b);
	cr_assert_str_eq(ta, tb);
	cr_assert(strstr(ta, "step=\"alpha\",outcome=\"approved\"} 1\n"
			     "forge_runner_runs_total{step=\"alpha\",outcome=\"timeout\"} 1\n"
			     "forge_runner_runs_total{step=\"zeta\",outcome=\"failed\"} 1\n"), "%s", ta);
	free(ta);
	free(tb);
	rn_metrics_release(&a);
	rn_metrics_release(&b);
}

Test(metrics, render_of_nothing_is_empty)
{
	struct rn_metrics m;
	char *text;

	rn_metrics_init(&m);
	text = render(&m);
	cr_assert_str_eq(text, "");
	free(text);
	rn_metrics_release(&m);
}

Test(metrics, render_too_large_for_buffer_is_e2big_and_leaves_it)
{
	struct rn_metrics m;
	struct fg_buf b;

	rn_metrics_init(&m);
	observe_run(&m);
	fg_buf_init(&b, 100);
	fg_buf_adds(&b, "keep");
	cr_assert_eq(rn_metrics_render(&m, &b), -E2BIG);
	cr_assert_str_eq(fg_buf_str(&b), "keep");
	fg_buf_release(&b);
	rn_metrics_release(&m);
}

Test(metrics, label_values_escape_quote_backslash_newline)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "plain", "plain" },
		{ "say \"hi\"", "say \\\"hi\\\"" },
		{ "C:\\dir", "C:\\\\dir" },
		{ "two\nlines", "two\\nlines" },
		{ "\\\"\n", "\\\\\\\"\\n" },
		{ "", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rn_metrics m;
		char *text, *want;

		rn_metrics_init(&m);
		rn_metrics_add_exhausted(&m, cases[i].in, "s");
		text = render(&m);
		want = fgt_fmt("forge_review_exhausted_total{skill=\"%s\",step=\"s\"} 1\n", cases[i].out);
		cr_assert(strstr(text, want), "case %zu: want %s in:\n%s", i, want, text);
		free(want);
		free(text);
		rn_metrics_release(&m);
	}
}

/* Counts, for each bucket bound, the observations at or below it. */
Test(metrics, histogram_buckets_are_cumulative_and_match_count_and_sum)
{
	static const double obs[] = { 0, 0.5, 1, 1.0001, 5, 9.9, 30, 59, 61, 120, 299, 300, 600, 601, 7200 };
	static const char *const le[] = { "1", "5", "10", "30", "60", "120", "300", "600", "+Inf" };
	static const double bound[] = { 1, 5, 10, 30, 60, 120, 300, 600, INFINITY };
	struct rn_metrics m;
	double sum = 0, prev = 0;
	char *text, *key;

	rn_metrics_init(&m);
	for (size_t i = 0; i < sizeof(obs) / sizeof(obs[0]); i++) {
		rn_metrics_observe_cycle(&m, "k", "s", "approved", obs[i]);
		sum += obs[i];
	}
	text = render(&m);
	for (size_t b = 0; b < 9; b++) {
		double want = 0, got;

		for (size_t i = 0; i < sizeof(obs) / sizeof(obs[0]); i++)
			want += obs[i] <= bound[b];
		key = fgt_fmt("forge_review_duration_seconds_bucket{skill=\"k\",step=\"s\",le=\"%s\"}", le[b]);
		got = sample(text, key);
		cr_assert_eq(got, want, "le=%s: %g, want %g", le[b], got, want);
		cr_assert_geq(got, prev);
		prev = got;
		free(key);
	}
	cr_assert_eq(sample(text, "forge_review_duration_seconds_count{skill=\"k\",step=\"s\"}"), prev);
	cr_assert_eq(prev, 15);
	cr_assert_float_eq(sample(text, "forge_review_duration_seconds_sum{skill=\"k\",step=\"s\"}"), sum, 1e-9);
	free(text);
	rn_metrics_release(&m);
}

Test(metrics, negative_or_nan_duration_counts_as_zero)
{
	struct rn_metrics m;
	char *text;

	rn_metrics_init(&m);
	rn_metrics_observe_cycle(&m, "k", "s", "rejected", -3);
	rn_metrics_observe_cycle(&m, "k", "s", "rejected", NAN);
	text = render(&m);
	cr_assert_eq(sample(text, "forge_review_duration_seconds_bucket{skill=\"k\",step=\"s\",le=\"1\"}"), 2);
	cr_assert_eq(sample(text, "forge_review_duration_seconds_sum{skill=\"k\",step=\"s\"}"), 0);
	free(text);
	rn_metrics_release(&m);
}

/* ---- merging ---- */

/* Names in dir other than the ones we expect: temp files must not be left. */
static void assert_only_files(const char *dir, const char *a, const char *b)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	cr_assert_not_null(d);
	for (e = readdir(d); e; e = readdir(d)) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		cr_assert(!strcmp(e->d_name, a) || !strcmp(e->d_name, b), "unexpected file %s", e->d_name);
	}
	closedir(d);
}

Test(metrics, merge_into_missing_file_writes_the_rendering)
{
	char *path = tmp_path("forge.prom");
	struct rn_metrics m;
	char *text;

	rn_metrics_init(&m);
	observe_run(&m);
	merge_ok(&m, path);
	text = fgt_read(path, NULL);
	cr_assert_str_eq(text, expected_run);
	assert_only_files(tmp_dir, "forge.prom", "forge.prom.lock");
	free(text);
	rn_metrics_release(&m);
}

Test(metrics, merge_over_several_runs_adds_and_keeps_foreign_families)
{
	char *path = tmp_path("forge.prom");
#define IT "skill=\"implement-task\",step=\"implement_task\""
	static const struct want_sample want[] = {
		{ "forge_review_cycles_total{" IT "}", 6 },
		{ "forge_review_verdicts_total{" IT ",verdict=\"rejected\"}", 3 },
		{ "forge_review_exhausted_total{skill=\"plan-review\",step=\"plan\"}", 3 },
		{ "forge_review_sweep_caught_total{" IT "}", 3 },
		{ "forge_runner_runs_total{step=\"implement_task\",outcome=\"approved\"}", 3 },
		{ "forge_review_duration_seconds_bucket{" IT ",le=\"5\"}", 3 },
		{ "forge_review_duration_seconds_bucket{" IT ",le=\"60\"}", 6 },
		{ "forge_review_duration_seconds_bucket{" IT ",le=\"+Inf\"}", 6 },
		{ "forge_review_duration_seconds_count{" IT "}", 6 },
	};
	const char *key_sum = "forge_review_duration_seconds_sum{" IT "}";
#undef IT
	struct rn_metrics m;
	char *text, *tail;

	fgt_write(path, foreign);
	rn_metrics_init(&m);
	observe_run(&m);
	for (int i = 0; i < 3; i++)
		merge_ok(&m, path);
	text = fgt_read(path, NULL);
	expect_samples(text, want, ARRAY_SIZE(want));
	cr_assert_float_eq(sample(text, key_sum), 3 * 48.2, 1e-9);
	/* The foreign lines come after ours, verbatim and in their order. */
	tail = strstr(text, foreign);
	cr_assert_not_null(tail, "foreign lines lost:\n%s", text);
	cr_assert_str_eq(tail, foreign);
	cr_assert_eq(strstr(text, "# HELP forge_review_cycles_total"), text);
	free(text);
	rn_metrics_release(&m);
}

Test(metrics, merge_of_different_runs_keeps_every_series)
{
#define XY "skill=\"x\\\"y\",step=\"s1\""
	static const struct want_sample want[] = {
		{ "forge_review_cycles_total{" XY "}", 2 },
		{ "forge_review_verdicts_total{" XY ",verdict=\"approved\"}", 1 },
		{ "forge_review_verdicts_total{" XY ",verdict=\"rejected\"}", 1 },
		{ "forge_review_duration_seconds_bucket{" XY ",le=\"600\"}", 1 },
		{ "forge_review_duration_seconds_bucket{" XY ",le=\"+Inf\"}", 2 },
		{ "forge_review_duration_seconds_sum{" XY "}", 702 },
		{ "forge_runner_runs_total{step=\"s1\",outcome=\"approved\"}", 1 },
		{ "forge_runner_runs_total{step=\"s2\",outcome=\"failed\"}", 1 },
	};
#undef XY
	char *path = tmp_path("forge.prom");
	struct rn_metrics a, b;
	char *text;

	rn_metrics_init(&a);
	rn_metrics_init(&b);
	rn_metrics_observe_cycle(&a, "x\"y", "s1", "approved", 2);
	add_run(&a, "s1", "approved");
	rn_metrics_observe_cycle(&b, "x\"y", "s1", "rejected", 700);
	add_run(&b, "s2", "failed");
	merge_ok(&a, path);
	merge_ok(&b, path);
	text = fgt_read(path, NULL);
	expect_samples(text, want, ARRAY_SIZE(want));
	free(text);
	rn_metrics_release(&a);
	rn_metrics_release(&b);
}

/* Files written by hand or by another tool: the parser must read them. */
Test(metrics, merge_reads_valid_variants_of_the_format)
{
	static const struct { const char *file; double want; } cases[] = {
		{ "forge_runner_runs_total{outcome=\"failed\",step=\"s\"} 4\n", 5 },
		{ "forge_runner_runs_total{ step = \"s\" , outcome=\"failed\", } 4\n", 5 },
		{ "forge_runner_runs_total{step=\"s\",outcome=\"failed\"} 4 1700000000000\n", 5 },
		{ "\n# TYPE forge_runner_runs_total counter\n\nforge_runner_runs_total{step=\"s\",outcome=\"failed\"}\t4.0\n", 5 },
		{ "forge_runner_runs_total{step=\"s\",outcome=\"failed\"} 4e0\n", 5 },
		{ "", 1 },
	};
	char *path = tmp_path("forge.prom");
	struct rn_metrics m;

	rn_metrics_init(&m);
	add_run(&m, "s", "failed");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text;

		fgt_write(path, cases[i].file);
		merge_ok(&m, path);
		text = fgt_read(path, NULL);
		cr_assert_eq(sample(text, "forge_runner_runs_total{step=\"s\",outcome=\"failed\"}"),
			     cases[i].want, "case %zu:\n%s", i, text);
		free(text);
	}
	rn_metrics_release(&m);
}

#define HIST_OK_BUCKETS(inf) \
	"forge_review_duration_seconds_bucket{skill=\"k\",step=\"s\",le=\"1\"} 0\n" \
	"forge_review_duration_seconds_bucket{skill=\"k\",step=\"s\",le=\"5\"} 1\n" \
	"forge_review_duration_seconds_bucket{skill=\"k\",step=\"s\",le=\"10\"} 1\n" \
	"forge_review_duration_seconds_bucket{skill=\"k\",step=\"s\",le=\"30\"} 1\n" \
	"forge_review_duration_seconds_bucket{skill=\"k\",step=\"s\",le=\"60\"} 1\n" \
	"forge_review_duration_seconds_bucket{skill=\"k\",step=\"s\",le=\"120\"} 1\n" \
	"forge_review_duration_seconds_bucket{skill=\"k\",step=\"s\",le=\"300\"} 1\n" \
	"forge_review_duration_seconds_bucket{skill=\"k\",step=\"s\",le=\"600\"} 1\n" \
	"forge_review_duration_seconds_bucket{skill=\"k\",step=\"s\",le=\"+Inf\"} " inf "\n"

Test(metrics, corrupt_file_is_refused_and_left_untouched)
{
	static const struct { const char *file; size_t len; } cases[] = {
		{ "forge_review_cycles_total{skill=\"a\",step=\"b\"} x\n", 0 },
		{ "forge_review_cycles_total{skill=\"a\"} 1\n", 0 },
		{ "forge_review_cycles_total{skill=\"a\",step=\"b\",extra=\"c\"} 1\n", 0 },
		{ "forge_review_cycles_total{skill=\"a\",skill=\"a\",step=\"b\"} 1\n", 0 },
		{ "forge_review_cycles_total{skill=\"a\",step=\"b\"} 1", 0 },
		{ "forge_review_cycles_total{skill=\"a\",step=\"b} 1\n", 0 },
		{ "forge_review_cycles_total{skill=\"a\\t\",step=\"b\"} 1\n", 0 },
		{ "forge_review_cycles_total{skill=\"a\",step=\"b\"} -1\n", 0 },
		{ "forge_review_cycles_total{skill=\"a\",step=\"b\"} NaN\n", 0 },
		{ "forge_review_cycles_total{skill=\"a\",step=\"b\"} 1 junk\n", 0 },
		{ "forge_review_cycles_total{skill=\"a\",step=\"b\"} 1\n"
		  "forge_review_cycles_total{step=\"b\",skill=\"a\"} 1\n", 0 },
		{ "# TYPE forge_review_cycles_total gauge\n", 0 },
		{ "garbage line\n", 0 },
		{ "{skill=\"a\"} 1\n", 0 },
		{ "other_metric{a=b} 1\n", 0 },
		{ "other_metric 1\nnul\0here 2\n", 26 },
		/* A file poisoned by a label that is not UTF-8
		 * (promtool and node_exporter drop it whole) is never merged into. */
		{ "forge_review_cycles_total{skill=\"bad\xff\xfe\",step=\"b\"} 1\n", 0 },
		{ "# HELP other_metric caf\xc3\n", 0 },
		{ "forge_review_duration_seconds_count{skill=\"k\",step=\"s\"} 1\n", 0 },
		{ HIST_OK_BUCKETS("1") "forge_review_duration_seconds_sum{skill=\"k\",step=\"s\"} 2\n", 0 },
		{ HIST_OK_BUCKETS("2") "forge_review_duration_seconds_sum{skill=\"k\",step=\"s\"} 2\n"
		  "forge_review_duration_seconds_count{skill=\"k\",step=\"s\"} 1\n", 0 },
		{ HIST_OK_BUCKETS("0") "forge_review_duration_seconds_sum{skill=\"k\",step=\"s\"} 2\n"
		  "forge_review_duration_seconds_count{skill=\"k\",step=\"s\"} 0\n", 0 },
		{ "forge_review_duration_seconds_bucket{skill=\"k\",step=\"s\",le=\"2\"} 1\n", 0 },
		{ "forge_review_duration_seconds_sum{skill=\"k\",step=\"s\",le=\"1\"} 1\n", 0 },
	};
	char *path = tmp_path("forge.prom");
	struct rn_metrics m;

	rn_metrics_init(&m);
	observe_run(&m);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].file), got_len;
		char err[512] = "";
		char *after;
		int r;

		fgt_write_bytes(path, cases[i].file, len);
		r = rn_metrics_merge_file(&m, path, err, sizeof(err));
		cr_assert_eq(r, -EINVAL, "case %zu: %d", i, r);
		cr_assert(strstr(err, "corrupt metrics file"), "case %zu: %s", i, err);
		cr_assert(strstr(err, path), "case %zu: %s", i, err);
		after = fgt_read(path, &got_len);
		cr_assert_eq(got_len, len, "case %zu", i);
		cr_assert(!memcmp(after, cases[i].file, len), "case %zu changed the file", i);
		free(after);
		assert_only_files(tmp_dir, "forge.prom", "forge.prom.lock");
	}
	rn_metrics_release(&m);
}

Test(metrics, merge_reports_unreadable_path)
{
	char *path = tmp_path("sub");
	char *file = tmp_path("sub/forge.prom");
	char *link = tmp_path("link.prom");
	struct rn_metrics m;
	char err[512];

	rn_metrics_init(&m);
	add_run(&m, "s", "none");
	/* A directory where the file should be. */
	fgt_write(file, "");
	cr_assert_eq(rn_metrics_merge_file(&m, path, err, sizeof(err)), -EISDIR);
	cr_assert(strstr(err, "cannot read metrics file"), "%s", err);
	/* A symlink is never followed. */
	cr_assert_eq(symlink(file, link), 0);
	cr_assert_eq(rn_metrics_merge_file(&m, link, err, sizeof(err)), -ELOOP);
	expect_content(file, "");
	rn_metrics_release(&m);
}

/* Each child merges its own run `rounds` times; any lost update shows in the totals. */
static void merge_in_child(const char *path, int rounds)
{
	struct rn_metrics m;
	int bad = 0;

	rn_metrics_init(&m);
	rn_metrics_observe_cycle(&m, "k", "s", "approved", 7);
	add_run(&m, "s", "approved");
	for (int i = 0; i < rounds; i++)
		bad |= rn_metrics_merge_file(&m, path, NULL, 0) != 0;
	rn_metrics_release(&m);
	_exit(bad);
}

Test(metrics, concurrent_runners_lose_no_update)
{
	enum { CHILDREN = 4, ROUNDS = 25 };
	char *path = tmp_path("forge.prom");
	pid_t pids[CHILDREN];
	char *text;

	fgt_write(path, foreign);
	for (int i = 0; i < CHILDREN; i++) {
		pids[i] = fork();
		cr_assert_geq(pids[i], 0);
		if (pids[i] == 0)
			merge_in_child(path, ROUNDS);
	}
	for (int i = 0; i < CHILDREN; i++) {
		int st;

		cr_assert_eq(waitpid(pids[i], &st, 0), pids[i]);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %d failed", i);
	}
	text = fgt_read(path, NULL);
	cr_assert_eq(sample(text, "forge_review_cycles_total{skill=\"k\",step=\"s\"}"), CHILDREN * ROUNDS);
	cr_assert_eq(sample(text, "forge_runner_runs_total{step=\"s\",outcome=\"approved\"}"), CHILDREN * ROUNDS);
	cr_assert_eq(sample(text, "forge_review_duration_seconds_bucket{skill=\"k\",step=\"s\",le=\"10\"}"), CHILDREN * ROUNDS);
	cr_assert_eq(sample(text, "forge_review_duration_seconds_count{skill=\"k\",step=\"s\"}"), CHILDREN * ROUNDS);
	cr_assert_eq(sample(text, "forge_review_duration_seconds_sum{skill=\"k\",step=\"s\"}"), 7 * CHILDREN * ROUNDS);
	cr_assert_str_eq(strstr(text, foreign), foreign);
	assert_only_files(tmp_dir, "forge.prom", "forge.prom.lock");
	free(text);
}
