/*
 * test_metrics.c - forge-runner's metrics file: three runs add up, runners
 * sharing it at once lose no update, and promtool accepts it.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgobs.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(metrics, .timeout = 120);

/* ---- metrics ---- */

/* 1 if the label lists "k=v,k=v" a and b hold the same pairs, in any order. */
static bool same_labels(const char *a, const char *b)
{
	char *copy, *save = NULL, *in;
	bool all = true;

	if (strlen(a) != strlen(b))
		return false;
	copy = strdup(a);
	in = fgt_fmt(",%s,", b);
	for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *k = fgt_fmt(",%s,", kv);

		all = all && strstr(in, k);
		free(k);
	}
	free(in);
	free(copy);
	return all;
}

/* The value of the sample `name{labels}` in a metrics text, where want is the
 * label set as "k=v,k=v" (any order, values without quotes or escapes);
 * -1 if there is no such sample. Fails the test on a malformed sample line. */
static double sample(const char *text, const char *name, const char *want)
{
	size_t nlen = strlen(name);

	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n'), *p = line + nlen;
		char got[512] = "";
		size_t g = 0;

		cr_assert_not_null(nl, "metrics text not newline-terminated");
		if (line[0] == '#' || strncmp(line, name, nlen) || (*p != '{' && *p != ' ')) {
			line = nl + 1;
			continue;
		}
		if (*p == '{') {
			/* Flatten {k="v",k="v"} to k=v,k=v (our values need no escapes). */
			for (p++; *p != '}'; p++) {
				cr_assert(p < nl && g + 1 < sizeof(got), "bad sample: %.*s", (int)(nl - line), line);
				if (*p != '"')
					got[g++] = *p;
			}
			got[g] = '\0';
			p++;
		}
		cr_assert_eq(*p, ' ', "bad sample: %.*s", (int)(nl - line), line);
		if (same_labels(got, want))
			return strtod(p + 1, NULL);
		line = nl + 1;
	}
	return -1;
}

static const char *const BUCKETS[] = { "1", "5", "10", "30", "60", "120", "300", "600", "+Inf" };

/* Buckets cumulative, +Inf equal to _count; want[] the expected counts per
 * bucket (NULL: only the invariants). Returns _count. */
static double check_histogram(const char *text, const char *labels, const double *want)
{
	const char *name = "forge_review_duration_seconds";
	char *bn = fgt_fmt("%s_bucket", name), *cn = fgt_fmt("%s_count", name);
	double prev = 0, count = sample(text, cn, labels);

	cr_assert_geq(count, 0, "no %s{%s}", cn, labels);
	for (size_t i = 0; i < sizeof(BUCKETS) / sizeof(BUCKETS[0]); i++) {
		char *l = fgt_fmt("%s,le=%s", labels, BUCKETS[i]);
		double v = sample(text, bn, l);

		cr_assert_geq(v, 0, "no bucket le=%s", BUCKETS[i]);
		cr_assert_geq(v, prev, "bucket le=%s (%g) below the previous (%g)", BUCKETS[i], v, prev);
		if (want)
			cr_assert_float_eq(v, want[i], 1e-9, "bucket le=%s is %g, want %g", BUCKETS[i], v, want[i]);
		prev = v;
		free(l);
	}
	cr_assert_float_eq(prev, count, 1e-9, "+Inf bucket %g != _count %g", prev, count);
	free(bn);
	free(cn);
	return count;
}

static void run_promtool(const char *path)
{
	const char *argv[] = { "/usr/bin/promtool", "check", "metrics", NULL };
	char *text = fgt_read(path, NULL);
	struct fgt_proc p;

	cr_assert_not_null(text);
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, text, 30), 0);
	cr_assert(p.exited && p.exit_code == 0, "promtool check metrics failed (%d): %s%s\n%s",
		  p.exit_code, p.out, p.err, text);
	fgt_proc_release(&p);
	free(text);
}

static void skip_without_promtool(void)
{
	if (!fgt_exists("/usr/bin/promtool"))
		cr_skip("/usr/bin/promtool is missing (Debian package prometheus)");
}

static void metrics_run(struct fgo *o, const char *kind, const char *metrics, int sweep)
{
	const char *a[] = { "--metrics-file", metrics, "--no-inotify", "--poll-interval", "600", NULL };
	char *k = fgt_fmt("KIND=%s", kind);
	const char *env[] = { k, NULL };

	if (!sweep)
		a[2] = NULL;
	fgo_exec(o, 1, a, env);
	cr_assert_eq(o->p.exit_code, 0, "run %s: stderr: %s", kind, o->p.err);
	cr_assert_eq(fgo_count_ev(o, "metrics_error", NULL, NULL), 0, "run %s: metrics_error", kind);
	free(k);
}

#define SK "skill=sk,step=impl"

/* Three runs share one file: approved (elapsed 0.5 and 7), exhausted (45, 45,
 * 700) and approved with its one cycle (30) caught only by the final sweep. */
Test(metrics, metrics_of_three_runs_add_up_in_one_file)
{
	static const double buckets[] = { 1, 1, 2, 3, 5, 5, 5, 5, 6 };
	struct fgo o = { 0 };
	char *metrics, *text;

	fgo_init(&o, "case $KIND in\n"
		     "a) cyc 1 rejected '' 0.5; cyc 2 approved '' 7;;\n"
		     "b) cyc 1 rejected '' 45; cyc 2 rejected '' 45; cyc 3 rejected '' 700;;\n"
		     "c) cyc 1 approved '' 30;;\n"
		     "esac\nexit 0\n");
	metrics = fgt_fmt("%s/forge.prom", o.w.root);
	metrics_run(&o, "a", metrics, 0);
	text = fgt_read(metrics, NULL);
	cr_assert_not_null(text, "no metrics file");
	cr_assert_float_eq(check_histogram(text, SK, NULL), 2, 1e-9);
	free(text);
	metrics_run(&o, "b", metrics, 0);
	metrics_run(&o, "c", metrics, 1);
	cr_assert_eq(fgo_count_ev(&o, "review_cycle", "source", "sweep"), 1, "run c: not a sweep catch");
	text = fgt_read(metrics, NULL);
	cr_assert_float_eq(sample(text, "forge_review_cycles_total", SK), 6, 1e-9, "%s", text);
	cr_assert_float_eq(sample(text, "forge_review_verdicts_total", SK ",verdict=approved"), 2, 1e-9);
	cr_assert_float_eq(sample(text, "forge_review_verdicts_total", SK ",verdict=rejected"), 4, 1e-9);
	cr_assert_float_eq(sample(text, "forge_runner_runs_total", "step=impl,outcome=approved,skill=sk,engine=local"), 2, 1e-9);
	cr_assert_float_eq(sample(text, "forge_runner_runs_total", "step=impl,outcome=exhausted,skill=sk,engine=local"), 1, 1e-9);
	cr_assert_float_eq(sample(text, "forge_review_exhausted_total", SK), 1, 1e-9, "%s", text);
	cr_assert_float_eq(sample(text, "forge_review_sweep_caught_total", SK), 1, 1e-9, "%s", text);
	cr_assert_float_eq(check_histogram(text, SK, buckets), 6, 1e-9);
	cr_assert_float_eq(sample(text, "forge_review_duration_seconds_sum", SK), 827.5, 1e-6);
	free(text);
	if (fgt_exists("/usr/bin/promtool"))
		run_promtool(metrics);
	free(metrics);
	fgo_release(&o);
}

/* Four runners start at once; each entrypoint waits until all four wrote
 * their cycles, so the runners end (and merge the file) together. */
static const char *concurrent_driver =
	"R=$1; T=$2; pids=\n"
	"for i in 1 2 3 4; do\n"
	"  mkdir -p \"$T/w$i\"\n"
	"  \"$R\" run --engine local --workspace \"$T/w$i\" --step impl --skill sk --entrypoint \"$T/ep.sh\" "
	"--metrics-file \"$T/m.prom\" --log-format json --log-file \"$T/log$i\" &\n"
	"  pids=\"$pids $!\"\n"
	"done\n"
	"rc=0; for p in $pids; do wait $p || rc=$?; done; echo rc=$rc\n";

Test(metrics, runners_sharing_a_metrics_file_at_once_lose_no_update)
{
	static const double buckets[] = { 0, 4, 4, 8, 8, 8, 8, 8, 8 };
	struct fgo o = { 0 };
	const char *argv[7];
	char *bar, *bar_env, *metrics, *text;
	struct fgt_proc p;

	fgo_init(&o, "cyc 1 rejected '' 2\ncyc 2 approved '' 20\ntouch \"$BAR/$FORGE_RUN_ID\"\n"
		     "i=0; while [ \"$(ls \"$BAR\" | wc -l)\" -lt 4 ]; do i=$((i+1)); "
		     "[ $i -gt 3000 ] && exit 98; sleep 0.01; done\nexit 0\n");
	bar = fgt_fmt("%s/barrier", o.w.root);
	cr_assert_eq(mkdir(bar, 0755), 0);
	bar_env = fgt_fmt("BAR=%s", bar);
	argv[0] = "/bin/sh"; argv[1] = "-c"; argv[2] = concurrent_driver; argv[3] = "sh";
	argv[4] = FG_RUNNER_BIN; argv[5] = o.w.root; argv[6] = NULL;
	{
		const char *env[] = { bar_env, "FORGE_LOG_LEVEL", "AUTO_REVIEW_RECORD_POLLED_FILES", NULL };

		cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 90), 0);
	}
	cr_assert_not_null(strstr(p.out, "rc=0"), "out: %s err: %s", p.out, p.err);
	metrics = fgt_fmt("%s/m.prom", o.w.root);
	text = fgt_read(metrics, NULL);
	cr_assert_not_null(text, "no metrics file");
	cr_assert_float_eq(sample(text, "forge_review_cycles_total", SK), 8, 1e-9, "%s", text);
	cr_assert_float_eq(sample(text, "forge_review_verdicts_total", SK ",verdict=approved"), 4, 1e-9);
	cr_assert_float_eq(sample(text, "forge_review_verdicts_total", SK ",verdict=rejected"), 4, 1e-9);
	cr_assert_float_eq(sample(text, "forge_runner_runs_total", "step=impl,outcome=approved,skill=sk,engine=local"), 4, 1e-9,
			   "%s", text);
	cr_assert_float_eq(check_histogram(text, SK, buckets), 8, 1e-9);
	cr_assert_float_eq(sample(text, "forge_review_duration_seconds_sum", SK), 88, 1e-6);
	if (fgt_exists("/usr/bin/promtool"))
		run_promtool(metrics);
	fgt_proc_release(&p);
	free(text);
	free(metrics);
	free(bar_env);
	free(bar);
	fgo_release(&o);
}

Test(metrics, promtool_accepts_the_metrics_file)
{
	struct fgo o = { 0 };
	char *metrics;
	const char *slow[] = { "SLOW=1", NULL };

	skip_without_promtool();
	/* Every family (an exhausted run, a sweep catch, a timeout, a failure),
	 * and a skill label that needs escaping. */
	fgo_init(&o, "[ -n \"$SLOW\" ] && exec sleep 30\n"
		     "export MAX=2\ncyc 1 rejected '' 3\ncyc 2 rejected '' 9000\nexit 1\n");
	metrics = fgt_fmt("%s/forge.prom", o.w.root);
	{
		const char *a[] = { "--metrics-file", metrics, "--no-inotify", "--poll-interval", "600",
				    "--skill", "we\"ird", NULL };
		const char *t[] = { "--metrics-file", metrics, "--timeout", "0.2", NULL };

		fgo_exec(&o, 0, a, NULL);
		cr_assert_eq(o.p.exit_code, 1, "stderr: %s", o.p.err);
		fgo_exec(&o, 0, t, slow);
		cr_assert_eq(o.p.exit_code, 124, "stderr: %s", o.p.err);
	}
	run_promtool(metrics);
	{
		char *text = fgt_read(metrics, NULL);

		cr_assert_not_null(strstr(text, "skill=\"we\\\"ird\""), "label not escaped: %s", text);
		fgt_assert_has(text, "outcome=\"timeout\"", "forge_review_sweep_caught_total{",
			       "forge_review_exhausted_total{");
		free(text);
	}
	free(metrics);
	fgo_release(&o);
}
