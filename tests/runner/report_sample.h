/*
 * report_sample.h - what the test_report*.c files share: rn_cmd_report()
 * run with its output captured (run_report), result files as `run --result`
 * writes them (write_result, cyc, exhausted_cycles and the three files of
 * the merge scenario), a member that must be there (get), and the output
 * compared line by line (assert_lines). Static inline: each file uses what
 * it needs.
 */
#ifndef REPORT_SAMPLE_H
#define REPORT_SAMPLE_H

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fgtest.h"
#include "report.h"

struct cap {
	int code;
	char *out;
	char *err;
};

/* Runs rn_cmd_report(argv) with stdout and stderr sent to files in dir. */
static inline struct cap run_report(const char *dir, char **argv)
{
	char *op = fgt_fmt("%s/.stdout", dir), *ep = fgt_fmt("%s/.stderr", dir);
	int ofd = open(op, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int efd = open(ep, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int so, se, argc = 0;
	struct cap c;

	cr_assert(ofd >= 0 && efd >= 0);
	while (argv[argc])
		argc++;
	fflush(stdout);
	fflush(stderr);
	so = dup(1);
	se = dup(2);
	dup2(ofd, 1);
	dup2(efd, 2);
	c.code = rn_cmd_report(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(ofd);
	close(efd);
	c.out = fgt_read(op, NULL);
	c.err = fgt_read(ep, NULL);
	cr_assert(c.out && c.err);
	free(op);
	free(ep);
	return c;
}

static inline void cap_release(struct cap *c)
{
	free(c->out);
	free(c->err);
}

/* One cycle object; feedback is JSON-escaped already. Owned. */
static inline char *cyc(int n, int max, const char *verdict, const char *feedback, const char *ts)
{
	return fgt_fmt("{\"cycle\": %d, \"max_cycles\": %d, \"verdict\": \"%s\", \"feedback\": \"%s\","
		       " \"skill\": \"implement-task\", \"elapsed_seconds\": 12.5, \"timestamp\": \"%s\","
		       " \"run_id\": \"run-1\"}", n, max, verdict, feedback, ts);
}

/* Writes a result file as `run --result` would; cycles is a JSON array body. */
static inline char *write_result(const char *dir, const char *name, const char *task_key, const char *step,
			  const char *state, int exhausted, const char *cycles)
{
	char *path = fgt_fmt("%s/%s", dir, name);
	char *tk = task_key ? fgt_fmt("\"%s\"", task_key) : fgt_fmt("null");
	char *text = fgt_fmt("{\"success\": true, \"exit_code\": 0, \"error_message\": null,\n"
			     " \"step\": \"%s\", \"skill\": \"implement-task\", \"task_key\": %s,\n"
			     " \"run_id\": \"run-1\", \"engine\": \"local\", \"duration_seconds\": 93.1,\n"
			     " \"review_cycles\": [%s],\n \"review_exhausted\": %s,"
			     " \"review_state\": \"%s\", \"stale_files_cleared\": 0, \"sweep_caught\": 0}\n",
			     step, tk, cycles, exhausted ? "true" : "false", state);

	fgt_write(path, text);
	free(tk);
	free(text);
	return path;
}

/* Two rejected cycles out of two: an exhausted step. Owned array body. */
static inline char *exhausted_cycles(const char *fb1, const char *fb2, const char *ts2)
{
	char *a = cyc(1, 2, "rejected", fb1, "2026-01-15T10:00:00Z");
	char *b = cyc(2, 2, "rejected", fb2, ts2);
	char *s = fgt_fmt("%s, %s", a, b);

	free(a);
	free(b);
	return s;
}

/* The three files of the merge scenario: DEMO-1 implement_task and fix_ci
 * (both exhausted), DEMO-2 implement_task (exhausted). */
static inline void write_three(const char *dir, char *paths[3])
{
	char *c1 = exhausted_cycles("Missing tests for the parser", "Still no tests", "2026-01-15T10:05:00Z");
	char *c2 = exhausted_cycles("CI fails on lint", "Lint | format still failing\\nsecond line",
				    "2026-01-15T11:05:00Z");
	char *c3 = exhausted_cycles("No docs", "Docs incomplete", "2026-01-15T12:05:00Z");

	paths[0] = write_result(dir, "r1.json", "DEMO-1", "implement_task", "exhausted", 1, c1);
	paths[1] = write_result(dir, "r2.json", "DEMO-1", "fix_ci", "exhausted", 1, c2);
	paths[2] = write_result(dir, "r3.json", "DEMO-2", "implement_task", "exhausted", 1, c3);
	free(c1);
	free(c2);
	free(c3);
}

static inline void free_paths(char **p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i]);
}

static inline const cJSON *get(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	cr_assert_not_null(v, "missing '%s'", k);
	return v;
}

/* Splits text into lines and compares them with want, one by one. */
static inline void assert_lines(const char *text, const char *const *want, size_t n)
{
	const char *s = text;
	size_t i = 0;

	for (; *s && i < n; i++) {
		size_t len = strcspn(s, "\n");

		cr_assert_eq(s[len], '\n', "line %zu has no newline", i + 1);
		cr_assert(len == strlen(want[i]) && !memcmp(s, want[i], len),
			  "line %zu: got '%.*s', want '%s'", i + 1, (int)len, s, want[i]);
		s += len + 1;
	}
	cr_assert_eq(i, n, "only %zu lines, want %zu:\n%s", i, n, text);
	cr_assert_str_eq(s, "", "extra output after line %zu: '%s'", n, s);
}

#endif
