/*
 * metrics_sample.h - what the test_metrics*.c files share: a rendering
 * (render), one sample's value (sample), the runs and cycles the tests
 * observe (add_run, observe_run), a merge that must succeed (merge_ok), the
 * families someone else writes (foreign), promtool's verdict (promtool) and
 * the samples a text must hold (expect_samples).
 * Static inline: each file uses what it needs.
 */
#ifndef METRICS_SAMPLE_H
#define METRICS_SAMPLE_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "forge/buf.h"
#include "forge/util.h"
#include "metrics.h"

#define PROMTOOL "/usr/bin/promtool"

static inline char *render(const struct rn_metrics *m)
{
	struct fg_buf b;

	fg_buf_init(&b, 1 << 20);
	cr_assert_eq(rn_metrics_render(m, &b), 0);
	return fg_buf_detach(&b, NULL);
}

/*
 * Value of the sample whose "name{labels}" is exactly key, at the start of a
 * line; fails the test when there is no such sample or it appears twice.
 */
static inline double sample(const char *text, const char *key)
{
	size_t kl = strlen(key);
	const char *found = NULL;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, kl) && p[kl] == ' ') {
			cr_assert_null(found, "sample %s appears twice", key);
			found = p + kl + 1;
		}
	}
	cr_assert_not_null(found, "no sample %s in:\n%s", key, text);
	return strtod(found, NULL);
}

/* A run of step with outcome, no skill, engine or duration: the series
 * the file held before those labels and families were added. */
static inline void add_run(struct rn_metrics *m, const char *step, const char *outcome)
{
	const struct rn_metrics_run r = { .skill = "", .step = step, .engine = "", .outcome = outcome, .seconds = -1 };

	rn_metrics_add_run(m, &r);
}

static inline void observe_run(struct rn_metrics *m)
{
	rn_metrics_observe_cycle(m, "implement-task", "implement_task", "rejected", 45.2);
	rn_metrics_observe_cycle(m, "implement-task", "implement_task", "approved", 3);
	rn_metrics_add_sweep_caught(m, "implement-task", "implement_task", 1);
	rn_metrics_add_exhausted(m, "plan-review", "plan");
	add_run(m, "implement_task", "approved");
}

static inline void merge_ok(const struct rn_metrics *m, const char *path)
{
	char err[512];
	int r = rn_metrics_merge_file(m, path, err, sizeof(err));

	cr_assert_eq(r, 0, "merge: %d %s", r, err);
}


static const char foreign[] =
	"# HELP node_custom_thing A family someone else writes.\n"
	"# TYPE node_custom_thing gauge\n"
	"node_custom_thing{name=\"a \\\"quoted\\\" one\"} 4.5\n"
	"# a free comment\n"
	"# HELP other_total Another family, with a timestamp.\n"
	"# TYPE other_total counter\n"
	"other_total 7 1700000000000\n";

static inline void promtool(const char *const argv[], const char *stdin_data)
{
	struct fgt_proc p;

	/* A hang guard only, below the suite's 120 s: on a loaded machine
	 * promtool takes tens of seconds. */
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, stdin_data, 110), 0);
	cr_assert(p.exited && p.exit_code == 0, "promtool %s %s failed (%d):\n%s\n%s", argv[1], argv[2],
		  p.exit_code, p.out, p.err);
	fgt_proc_release(&p);
}

/* One sample's key ("name{labels}") and the value it must have. */
struct want_sample {
	const char *key;
	double value;
};

/* Fails the test unless text holds each sample of want with its value. */
static inline void expect_samples(const char *text, const struct want_sample *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(sample(text, want[i].key), want[i].value, "%s", want[i].key);
}

#endif
