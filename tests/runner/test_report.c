/*
 * test_report.c - `forge-runner report`: merging result files by
 * {task_key}__{step}, the newer-wins rule for a repeated key and its
 * warning, JSON parsed back, Markdown checked line by line, and the exit
 * codes for unreadable and invalid input. rn_cmd_report() is called
 * directly with stdout and stderr redirected to files.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgtest.h"
#include "forge/buf.h"
#include "report.h"

TestSuite(report, .timeout = 30);

struct cap {
	int code;
	char *out;
	char *err;
};

/* Runs rn_cmd_report(argv) with stdout and stderr sent to files in dir. */
static struct cap run_report(const char *dir, char **argv)
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

static void cap_release(struct cap *c)
{
	free(c->out);
	free(c->err);
}

/* One cycle object; feedback is JSON-escaped already. Owned. */
static char *cyc(int n, int max, const char *verdict, const char *feedback, const char *ts)
{
	return fgt_fmt("{\"cycle\": %d, \"max_cycles\": %d, \"verdict\": \"%s\", \"feedback\": \"%s\","
		       " \"skill\": \"implement-task\", \"elapsed_seconds\": 12.5, \"timestamp\": \"%s\","
		       " \"run_id\": \"run-1\"}", n, max, verdict, feedback, ts);
}

/* Writes a result file as `run --result` would; cycles is a JSON array body. */
static char *write_result(const char *dir, const char *name, const char *task_key, const char *step,
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
static char *exhausted_cycles(const char *fb1, const char *fb2, const char *ts2)
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
static void write_three(const char *dir, char *paths[3])
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

static void free_paths(char **p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i]);
}

static const cJSON *get(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	cr_assert_not_null(v, "missing '%s'", k);
	return v;
}

Test(report, merges_two_exhausted_steps_of_one_task_and_a_third_of_another)
{
	char *dir = fgt_tmpdir(), *p[3];
	struct cap c;
	cJSON *root;
	const cJSON *entries, *e, *cycles;

	write_three(dir, p);
	c = run_report(dir, (char *[]){ "report", p[0], p[1], p[2], NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	cr_assert_str_eq(c.err, "");
	root = cJSON_Parse(c.out);
	cr_assert_not_null(root, "not JSON: %s", c.out);
	entries = get(root, "entries");
	cr_assert_eq(cJSON_GetArraySize(entries), 3);
	/* Sorted by key. */
	cr_assert_str_eq(entries->child->string, "DEMO-1__fix_ci");
	cr_assert_str_eq(entries->child->next->string, "DEMO-1__implement_task");
	cr_assert_str_eq(entries->child->next->next->string, "DEMO-2__implement_task");
	cr_assert_eq(cJSON_GetArraySize(get(root, "warnings")), 0);

	e = get(entries, "DEMO-1__fix_ci");
	cr_assert_str_eq(get(e, "task_key")->valuestring, "DEMO-1");
	cr_assert_str_eq(get(e, "step")->valuestring, "fix_ci");
	cr_assert_str_eq(get(e, "skill")->valuestring, "implement-task");
	cr_assert_str_eq(get(e, "run_id")->valuestring, "run-1");
	cr_assert_str_eq(get(e, "state")->valuestring, "exhausted");
	cr_assert(cJSON_IsTrue(get(e, "exhausted")));
	cr_assert_str_eq(get(e, "open_feedback")->valuestring, "Lint | format still failing\nsecond line");
	cr_assert_str_eq(get(e, "source")->valuestring, p[1]);
	cycles = get(e, "cycles");
	cr_assert_eq(cJSON_GetArraySize(cycles), 2);
	cr_assert_eq(get(cycles->child, "cycle")->valueint, 1);
	cr_assert_eq(get(cycles->child, "max_cycles")->valueint, 2);
	cr_assert_str_eq(get(cycles->child, "verdict")->valuestring, "rejected");
	cr_assert_str_eq(get(cycles->child, "feedback")->valuestring, "CI fails on lint");
	cr_assert_str_eq(get(cycles->child, "timestamp")->valuestring, "2026-01-15T10:00:00Z");

	e = get(entries, "DEMO-1__implement_task");
	cr_assert_str_eq(get(e, "open_feedback")->valuestring, "Still no tests");
	cr_assert_str_eq(get(e, "source")->valuestring, p[0]);
	e = get(entries, "DEMO-2__implement_task");
	cr_assert_str_eq(get(e, "task_key")->valuestring, "DEMO-2");
	cr_assert_str_eq(get(e, "open_feedback")->valuestring, "Docs incomplete");
	cr_assert_str_eq(get(e, "source")->valuestring, p[2]);

	cJSON_Delete(root);
	cap_release(&c);
	free_paths(p, 3);
	fgt_rm_rf(dir);
	free(dir);
}

/* Splits text into lines and compares them with want, one by one. */
static void assert_lines(const char *text, const char *const *want, size_t n)
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

Test(report, markdown_output_line_by_line)
{
	static const char *const want[] = {
		"## Auto-Review Notes",
		"",
		"### DEMO-1 — fix_ci",
		"",
		"**State:** exhausted · **Skill:** implement-task · **Cycles:** 2/2",
		"",
		"| Cycle | Verdict | Feedback |",
		"|---|---|---|",
		"| 1 | rejected | CI fails on lint |",
		"| 2 | rejected | Lint \\| format still failing … |",
		"",
		"**Open feedback** (cycle 2):",
		"",
		"> Lint \\| format still failing",
		"> second line",
		"",
		"### DEMO-1 — implement_task",
		"",
		"**State:** exhausted · **Skill:** implement-task · **Cycles:** 2/2",
		"",
		"| Cycle | Verdict | Feedback |",
		"|---|---|---|",
		"| 1 | rejected | Missing tests for the parser |",
		"| 2 | rejected | Still no tests |",
		"",
		"**Open feedback** (cycle 2):",
		"",
		"> Still no tests",
		"",
		"### DEMO-2 — implement_task",
		"",
		"**State:** exhausted · **Skill:** implement-task · **Cycles:** 2/2",
		"",
		"| Cycle | Verdict | Feedback |",
		"|---|---|---|",
		"| 1 | rejected | No docs |",
		"| 2 | rejected | Docs incomplete |",
		"",
		"**Open feedback** (cycle 2):",
		"",
		"> Docs incomplete",
	};
	char *dir = fgt_tmpdir(), *p[3];
	struct cap c;

	write_three(dir, p);
	/* Command-line order does not matter: entries come sorted by key. */
	c = run_report(dir, (char *[]){ "report", "--format", "markdown", p[2], p[0], p[1], NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	assert_lines(c.out, want, sizeof(want) / sizeof(want[0]));
	cap_release(&c);
	free_paths(p, 3);
	fgt_rm_rf(dir);
	free(dir);
}

Test(report, markdown_approved_step_has_no_open_feedback_and_only_open_drops_it)
{
	static const char *const all[] = {
		"## Auto-Review Notes",
		"",
		"### DEMO-3 — implement_task",
		"",
		"**State:** approved · **Skill:** implement-task · **Cycles:** 2/3",
		"",
		"| Cycle | Verdict | Feedback |",
		"|---|---|---|",
		"| 1 | rejected | Add a test |",
		"| 2 | approved | — |",
		"",
		"### review",
		"",
		"**State:** no_review · **Skill:** implement-task · **Cycles:** 0",
		"",
		"No review cycles.",
	};
	static const char *const open_only[] = {
		"## Auto-Review Notes",
		"",
		"No open auto-review feedback.",
	};
	char *dir = fgt_tmpdir();
	char *a = cyc(1, 3, "rejected", "  \\n Add a test  ", "2026-01-15T10:00:00Z");
	char *b = cyc(2, 3, "approved", "", "2026-01-15T10:10:00Z");
	char *cy = fgt_fmt("%s, %s", a, b);
	char *p1 = write_result(dir, "ok.json", "DEMO-3", "implement_task", "approved", 0, cy);
	char *p2 = write_result(dir, "none.json", NULL, "review", "none", 0, "");
	struct cap c;

	c = run_report(dir, (char *[]){ "report", "--format=markdown", p1, p2, NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	assert_lines(c.out, all, sizeof(all) / sizeof(all[0]));
	cap_release(&c);
	c = run_report(dir, (char *[]){ "report", "--format", "markdown", "--only-open", p1, p2, NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	assert_lines(c.out, open_only, sizeof(open_only) / sizeof(open_only[0]));
	cap_release(&c);
	free(a);
	free(b);
	free(cy);
	free(p1);
	free(p2);
	fgt_rm_rf(dir);
	free(dir);
}

Test(report, markdown_cell_cuts_long_lines_and_quote_folds_crlf)
{
	char *dir = fgt_tmpdir();
	char long_fb[128];
	char *c1, *c2, *cy, *p, *want_cell;
	struct cap c;

	/* 119 ASCII bytes then "é": the cut at 120 bytes must not split it. */
	memset(long_fb, 'x', 119);
	memcpy(long_fb + 119, "\xc3\xa9 tail", 8);
	c1 = cyc(1, 2, "rejected", long_fb, "2026-01-15T10:00:00Z");
	c2 = cyc(2, 2, "rejected", "first\\r\\n\\r\\n`a|b` third\\r\\n", "2026-01-15T10:05:00Z");
	/* Cycles given out of order: the report sorts them by number. */
	cy = fgt_fmt("%s, %s", c2, c1);
	p = write_result(dir, "r.json", "T-1", "st", "exhausted", 1, cy);
	c = run_report(dir, (char *[]){ "report", "--format", "markdown", p, NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	want_cell = fgt_fmt("| 1 | rejected | %.119s … |\n| 2 | rejected | first … |\n", long_fb);
	cr_assert_not_null(strstr(c.out, want_cell), "got:\n%s", c.out);
	cr_assert_not_null(strstr(c.out, "**Open feedback** (cycle 2):\n\n> first\n>\n> \\`a\\|b\\` third\n"),
			   "got:\n%s", c.out);
	cr_assert_null(strchr(c.out, '\r'));
	cap_release(&c);
	free(want_cell);
	free(c1);
	free(c2);
	free(cy);
	free(p);
	fgt_rm_rf(dir);
	free(dir);
}

/* Writes one exhausted DEMO-1__implement_task result whose last cycle ends at ts. */
static char *write_dup(const char *dir, const char *name, const char *fb, const char *ts)
{
	char *cy = exhausted_cycles("first", fb, ts);
	char *p = write_result(dir, name, "DEMO-1", "implement_task", "exhausted", 1, cy);

	free(cy);
	return p;
}

static const cJSON *only_entry(const cJSON *root)
{
	const cJSON *entries = get(root, "entries");

	cr_assert_eq(cJSON_GetArraySize(entries), 1);
	return get(entries, "DEMO-1__implement_task");
}

Test(report, same_key_twice_keeps_the_newer_and_says_so)
{
	char *dir = fgt_tmpdir();
	char *old = write_dup(dir, "old.json", "old feedback", "2026-01-15T10:05:00Z");
	char *new = write_dup(dir, "new.json", "new feedback", "2026-01-15T11:05:00Z");
	char *other = write_dup(dir, "other.json", "x", "2026-01-15T09:00:00Z");
	char *want;
	struct cap c;
	cJSON *root;
	const cJSON *w;

	/* The newer one named first: it must survive the older one named later. */
	c = run_report(dir, (char *[]){ "report", new, old, NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	root = cJSON_Parse(c.out);
	cr_assert_not_null(root);
	cr_assert_str_eq(get(only_entry(root), "open_feedback")->valuestring, "new feedback");
	cr_assert_str_eq(get(only_entry(root), "source")->valuestring, new);
	want = fgt_fmt("duplicate key 'DEMO-1__implement_task': kept '%s' (its last cycle is newer: "
		       "2026-01-15T11:05:00Z after 2026-01-15T10:05:00Z), dropped '%s'", new, old);
	w = get(root, "warnings");
	cr_assert_eq(cJSON_GetArraySize(w), 1);
	cr_assert_str_eq(w->child->valuestring, want);
	cr_assert_not_null(strstr(c.err, want), "stderr: %s", c.err);
	cr_assert_eq(strncmp(c.err, "forge-runner: warning: ", 23), 0);
	cJSON_Delete(root);
	cap_release(&c);
	free(want);

	/* Same order the other way round: the newer named later replaces. */
	c = run_report(dir, (char *[]){ "report", old, new, NULL });
	cr_assert_eq(c.code, 0);
	root = cJSON_Parse(c.out);
	cr_assert_str_eq(get(only_entry(root), "source")->valuestring, new);
	cr_assert_eq(cJSON_GetArraySize(get(root, "warnings")), 1);
	cJSON_Delete(root);
	cap_release(&c);

	/* A third, oldest copy: still one entry, one warning per duplicate. */
	c = run_report(dir, (char *[]){ "report", old, new, other, NULL });
	cr_assert_eq(c.code, 0);
	root = cJSON_Parse(c.out);
	cr_assert_str_eq(get(only_entry(root), "source")->valuestring, new);
	cr_assert_eq(cJSON_GetArraySize(get(root, "warnings")), 2);
	cJSON_Delete(root);
	cap_release(&c);
	free(old);
	free(new);
	free(other);
	fgt_rm_rf(dir);
	free(dir);
}

Test(report, same_key_same_time_keeps_the_one_named_later)
{
	char *dir = fgt_tmpdir();
	char *a = write_dup(dir, "a.json", "from a", "2026-01-15T10:05:00Z");
	char *b = write_dup(dir, "b.json", "from b", "2026-01-15T10:05:00Z");
	char *want;
	struct cap c;
	cJSON *root;

	c = run_report(dir, (char *[]){ "report", b, a, NULL });
	cr_assert_eq(c.code, 0);
	root = cJSON_Parse(c.out);
	cr_assert_str_eq(get(only_entry(root), "open_feedback")->valuestring, "from a");
	want = fgt_fmt("duplicate key 'DEMO-1__implement_task': kept '%s' (last cycles equally recent, "
		       "named later), dropped '%s'", a, b);
	cr_assert_str_eq(get(root, "warnings")->child->valuestring, want);
	cr_assert_not_null(strstr(c.err, want));
	cJSON_Delete(root);
	cap_release(&c);
	free(want);
	free(a);
	free(b);
	fgt_rm_rf(dir);
	free(dir);
}

Test(report, bad_inputs_are_skipped_named_and_exit_1)
{
	static const struct { const char *name; const char *content; const char *why; } cases[] = {
		{ "missing.json", NULL, "No such file or directory" },
		{ "garbage.json", "{\"step\": ", "not valid JSON" },
		{ "trailing.json", "{} x", "not valid JSON" },
		{ "empty.json", "", "not valid JSON" },
		{ "array.json", "[1, 2]", "not a result file: not a JSON object" },
		{ "nostep.json", "{\"review_state\": \"none\", \"review_cycles\": []}",
		  "not a result file: missing field 'step'" },
		{ "badstep.json", "{\"step\": \"../x\", \"review_state\": \"none\", \"review_cycles\": []}",
		  "not a result file: invalid step name" },
		{ "nostate.json", "{\"step\": \"s\", \"review_cycles\": []}",
		  "not a result file: missing field 'review_state'" },
		{ "badstate.json", "{\"step\": \"s\", \"review_state\": \"great\", \"review_cycles\": []}",
		  "not a result file: field 'review_state' must be one of" },
		{ "nocycles.json", "{\"step\": \"s\", \"review_state\": \"none\"}",
		  "not a result file: missing field 'review_cycles'" },
		{ "badcycle.json", "{\"step\": \"s\", \"review_state\": \"none\", \"review_cycles\": [{\"cycle\": 1}]}",
		  "not a result file: review_cycles[0]: missing field" },
		/* A directory: what report wants instead (a step directory is the usual slip). */
		{ "dir.d", NULL, "a directory: report reads result files, the --result FILE of 'forge-runner run'" },
	};
	char *dir = fgt_tmpdir();
	char *good = write_dup(dir, "good.json", "open", "2026-01-15T10:05:00Z");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *path = fgt_fmt("%s/%s", dir, cases[i].name);
		char *want = fgt_fmt("forge-runner: warning: cannot read '%s': %s", path, cases[i].why);
		struct cap c;
		cJSON *root;

		if (cases[i].content)
			fgt_write(path, cases[i].content);
		if (!strcmp(cases[i].name, "dir.d"))
			cr_assert_eq(mkdir(path, 0700), 0);
		c = run_report(dir, (char *[]){ "report", path, good, NULL });
		cr_assert_eq(c.code, 1, "case %s: code %d", cases[i].name, c.code);
		cr_assert_not_null(strstr(c.err, want), "case %s: stderr: %s", cases[i].name, c.err);
		/* The good input is still reported, and the skip is in the warnings. */
		root = cJSON_Parse(c.out);
		cr_assert_not_null(root, "case %s: stdout: %s", cases[i].name, c.out);
		cr_assert_str_eq(get(only_entry(root), "source")->valuestring, good);
		cr_assert_not_null(strstr(get(root, "warnings")->child->valuestring, cases[i].why));
		cJSON_Delete(root);
		cap_release(&c);
		free(want);
		free(path);
	}
	free(good);
	fgt_rm_rf(dir);
	free(dir);
}

Test(report, only_bad_inputs_still_print_an_empty_report_and_exit_1)
{
	char *dir = fgt_tmpdir();
	char *missing = fgt_fmt("%s/nope.json", dir);
	struct cap c = run_report(dir, (char *[]){ "report", "--format", "markdown", missing, NULL });

	cr_assert_eq(c.code, 1);
	cr_assert_str_eq(c.out, "## Auto-Review Notes\n\nNo auto-review results.\n");
	cap_release(&c);
	free(missing);
	fgt_rm_rf(dir);
	free(dir);
}

Test(report, usage_errors_exit_2_and_write_nothing)
{
	static char *cases[][5] = {
		{ "report", NULL },
		{ "report", "--format", "pdf", "x.json", NULL },
		{ "report", "--bogus", "x.json", NULL },
		{ "report", "x.json", "--output", NULL },
		{ "report", "--only-open=yes", "x.json", NULL },
	};
	char *dir = fgt_tmpdir();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cap c = run_report(dir, cases[i]);

		cr_assert_eq(c.code, 2, "case %zu", i);
		cr_assert_str_eq(c.out, "", "case %zu", i);
		cr_assert_eq(strncmp(c.err, "forge-runner: error: report: ", 29), 0, "case %zu: %s", i, c.err);
		cr_assert_not_null(strstr(c.err, "try 'forge-runner report --help'"), "case %zu", i);
		cap_release(&c);
	}
	fgt_rm_rf(dir);
	free(dir);
}

Test(report, help_lists_every_option)
{
	char *dir = fgt_tmpdir();
	struct cap c = run_report(dir, (char *[]){ "report", "--help", NULL });

	cr_assert_eq(c.code, 0);
	for (const struct fg_opt *o = rn_report_options; o->name; o++) {
		char *want = fgt_fmt("--%s", o->name);

		cr_assert_not_null(strstr(c.out, want), "--help lacks %s", want);
		free(want);
	}
	cap_release(&c);
	fgt_rm_rf(dir);
	free(dir);
}

Test(report, output_file_is_written_instead_of_stdout)
{
	char *dir = fgt_tmpdir(), *p[3];
	char *out = fgt_fmt("%s/notes.md", dir), *bad = fgt_fmt("%s/no/such/dir/x.md", dir);
	char *text;
	struct cap c;

	write_three(dir, p);
	c = run_report(dir, (char *[]){ "report", "--format", "markdown", "-o", out, p[0], p[1], p[2], NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	cr_assert_str_eq(c.out, "");
	text = fgt_read(out, NULL);
	cr_assert_not_null(text);
	cr_assert_eq(strncmp(text, "## Auto-Review Notes\n\n### DEMO-1 — fix_ci\n", 42), 0, "%s", text);
	cap_release(&c);
	free(text);

	c = run_report(dir, (char *[]){ "report", "--output", bad, p[0], NULL });
	cr_assert_eq(c.code, 125);
	cr_assert_not_null(strstr(c.err, "forge-runner: error: cannot write '"), "%s", c.err);
	cr_assert_eq(fgt_exists(bad), 0);
	cap_release(&c);
	free_paths(p, 3);
	free(out);
	free(bad);
	fgt_rm_rf(dir);
	free(dir);
}

/* Every review state a result can carry is read, written back by its one
 * name (the old result word "none" reads as no_review), and open unless
 * approved or without a review. */
Test(report, every_review_state_is_read_and_open_unless_settled)
{
	static const struct { const char *in, *out; bool open; } cases[] = {
		{ "approved", "approved", false },   { "exhausted", "exhausted", true },
		{ "stalled", "stalled", true },      { "blocked", "blocked", true },
		{ "over_budget", "over_budget", true }, { "failed", "failed", true },
		{ "disabled", "disabled", false },   { "no_review", "no_review", false },
		{ "none", "no_review", false },     /* a result written before issue 18 */
	};
	char *dir = fgt_tmpdir();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *step = fgt_fmt("step_%zu", i);
		char *p = write_result(dir, "r.json", NULL, step, cases[i].in, 0, "");
		struct cap c = run_report(dir, (char *[]){ "report", "--only-open", p, NULL });
		cJSON *o = cJSON_Parse(c.out), *e;
		char *key = fgt_fmt("__%s", step);

		cr_assert_eq(c.code, 0, "%s: %s", cases[i].in, c.err);
		cr_assert_not_null(o, "%s", c.out);
		e = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "entries"), key);
		cr_expect_eq(e != NULL, cases[i].open, "%s: %s", cases[i].in, c.out);
		cap_release(&c);
		cJSON_Delete(o);
		c = run_report(dir, (char *[]){ "report", p, NULL });
		o = cJSON_Parse(c.out);
		e = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "entries"), key);
		cr_assert_not_null(e, "%s", c.out);
		cr_expect_str_eq(cJSON_GetObjectItem(e, "state")->valuestring, cases[i].out);
		cJSON_Delete(o);
		cap_release(&c);
		free(key);
		free(p);
		free(step);
	}
	fgt_rm_rf(dir);
	free(dir);
}

/* Issue 18: a run that failed before any review showed as "State: none ·
 * No review cycles", and --only-open hid it. Success, exit code and error
 * are shown, and a failed run is open. */
Test(report, run_failed_before_review_shows_its_error_and_is_open)
{
	static const char *const want[] = {
		"## Auto-Review Notes",
		"",
		"### DEMO-4 — implement_task",
		"",
		"**State:** no_review · **Skill:** implement-task · **Cycles:** 0",
		"",
		"**Run failed** (exit code 1): the task failed\\: cannot run worker \\'agent\\' \\| x …",
		"",
		/* The whole message follows the cut line. */
		"> the task failed\\: cannot run worker \\'agent\\' \\| x",
		"> second line",
		"",
		"No review cycles.",
	};
	char *dir = fgt_tmpdir();
	char *path = fgt_fmt("%s/failed.json", dir);
	struct cap c;

	fgt_write(path, "{\"success\": false, \"exit_code\": 1, \"error_message\": "
			"\"the task failed: cannot run worker 'agent' | x\\nsecond line\",\n"
			" \"step\": \"implement_task\", \"skill\": \"implement-task\", \"task_key\": \"DEMO-4\",\n"
			" \"run_id\": \"run-1\", \"engine\": \"local\", \"duration_seconds\": 0.2,\n"
			" \"review_cycles\": [], \"review_exhausted\": false, \"review_state\": \"no_review\",\n"
			" \"stale_files_cleared\": 0, \"sweep_caught\": 0}\n");
	c = run_report(dir, (char *[]){ "report", "--format", "markdown", "--only-open", path, NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	assert_lines(c.out, want, sizeof(want) / sizeof(want[0]));
	cap_release(&c);

	c = run_report(dir, (char *[]){ "report", "--only-open", path, NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	cJSON *o = cJSON_Parse(c.out);
	cJSON *e = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "entries"), "DEMO-4__implement_task");
	cr_assert_not_null(e, "%s", c.out);
	cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(e, "success")));
	cr_expect_eq(cJSON_GetObjectItem(e, "exit_code")->valueint, 1);
	cr_expect_str_eq(cJSON_GetObjectItem(e, "error")->valuestring,
			 "the task failed: cannot run worker 'agent' | x\nsecond line");
	cr_expect_str_eq(cJSON_GetObjectItem(e, "state")->valuestring, "no_review");
	cJSON_Delete(o);
	cap_release(&c);
	fgt_rm_rf(dir);
	free(dir);
	free(path);
}

/* A result as `run` writes it: n cycles, each with nf findings. */
static void write_big_result(const char *path, int n, int nf)
{
	struct rn_cycles cs;
	struct rn_result res = {
		.exit_code = 0, .step = "impl", .skill = "implement-task", .run_id = "0123456789abcdef",
		.engine = "local", .review_state = FG_STATE_EXHAUSTED, .review_exhausted = true,
	};

	rn_cycles_init(&cs);
	for (int k = 1; k <= n; k++) {
		struct fg_cycle c;

		fg_cycle_init(&c);
		c.cycle = k;
		c.max_cycles = n;
		c.j.verdict = FG_VERDICT_REJECTED;
		c.j.feedback = fgt_fmt("cycle %d: fix the findings", k);
		c.skill = strdup("implement-task");
		fg_time_iso_utc(c.timestamp, 1767225600 + k);
		c.j.has_findings = true;
		c.j.nfindings = (size_t)nf;
		c.j.findings = calloc((size_t)nf, sizeof(*c.j.findings));
		for (int i = 0; i < nf; i++) {
			struct fg_finding *f = &c.j.findings[i];

			f->severity = strdup(i % 2 ? "NOTE" : "BLOCKING");
			f->ordinal = i + 1;
			f->file_path = fgt_fmt("src/module_%d.c", i);
			f->line = i + 1;
			f->title = fgt_fmt("Finding %d of cycle %d", i, k);
			f->description = strdup("The function does not check its input.");
			f->evidence = strdup("if (p->len > max)");
			f->fix = strdup("Check the length first.");
		}
		cr_assert_eq(rn_cycles_put(&cs, &c, false, 0), 0, "cycle %d was dropped", k);
		fg_cycle_release(&c);
	}
	res.cycles = &cs;
	cr_assert_eq(rn_result_write(path, &res), 0);
	rn_cycles_release(&cs);
}

/* Issue 18 defect 4: 40 cycles of 500 findings (3.6 MB, some 400,000 JSON
 * tokens) made `report` say "not valid JSON" on a result `run` wrote. */
Test(report, reads_a_result_of_40_cycles_of_500_findings)
{
	char *dir = fgt_tmpdir();
	char *path = fgt_fmt("%s/r.json", dir);
	char *argv[] = { "report", path, NULL };
	struct cap c;
	cJSON *root;
	const cJSON *e;

	write_big_result(path, 40, 500);
	c = run_report(dir, argv);
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	root = cJSON_Parse(c.out);
	cr_assert_not_null(root);
	e = get(get(root, "entries"), "__impl");
	cr_assert_eq(cJSON_GetArraySize(get(e, "cycles")), 40);
	cr_assert_str_eq(get(e, "state")->valuestring, "exhausted");
	cJSON_Delete(root);
	cap_release(&c);
	fgt_rm_rf(dir);
	free(path);
	free(dir);
}

/* A bound hit says which bound, never "not valid JSON". */
Test(report, a_bound_hit_says_so)
{
	char *dir = fgt_tmpdir();
	char *path = fgt_fmt("%s/deep.json", dir);
	char *argv[] = { "report", path, NULL };
	size_t n = RN_RESULT_MAX_TOKENS + 10;
	char *doc = malloc(3 * n + 8), *p = doc;
	struct cap c;

	*p++ = '[';
	for (size_t i = 0; i < n; i++) {
		memcpy(p, "[],", 3);
		p += 3;
	}
	memcpy(p, "[]]", 4);
	fgt_write(path, doc);
	c = run_report(dir, argv);
	cr_assert_eq(c.code, 1, "stderr: %s", c.err);
	cr_assert_not_null(strstr(c.err, "more than 2162688 JSON tokens"), "stderr: %s", c.err);
	cr_assert_null(strstr(c.err, "not valid JSON"), "stderr: %s", c.err);
	cap_release(&c);
	free(doc);
	fgt_rm_rf(dir);
	free(path);
	free(dir);
}

/* Issue 23: a cycle's evidence in the Markdown, line by line: a check
 * that timed out, a renamed file, a path holding markup and a newline
 * (escaped, the newline shown as '?'), unknown line counts, and more files
 * than RN_REPORT_CHANGES_SHOWN (the rest counted). */
Test(report, markdown_evidence_is_bounded_and_escaped)
{
	char *dir = fgt_tmpdir();
	struct fg_buf ch;
	struct cap c;

	fg_buf_init(&ch, 1u << 20);
	fg_buf_adds(&ch, "{\"path\": \"new.c\", \"status\": \"renamed\", \"old_path\": \"old.c\", \"added\": 0, \"deleted\": 0},"
			 "{\"path\": \"[x](http://e)\\n|*.md\", \"status\": \"added\"}");
	for (int i = 0; i < RN_REPORT_CHANGES_SHOWN; i++)
		fg_buf_addf(&ch, ",{\"path\": \"f%02d\", \"status\": \"deleted\", \"added\": 0, \"deleted\": %d}", i, i);
	char *c1 = cyc(1, 1, "rejected", "The check 'lint' timed out", "2026-01-15T10:00:00Z");
	c1[strlen(c1) - 1] = '\0';
	char *cycles = fgt_fmt("%s, \"checks\": [{\"name\": \"unit\", \"exit_code\": 0, \"duration_seconds\": 1.25,"
			       " \"output_tail\": \"ok\"}, {\"name\": \"lint\", \"exit_code\": -1, \"timed_out\": true,"
			       " \"duration_seconds\": 30, \"output_tail\": \"\"}], \"changes\": [%s],"
			       " \"changes_since\": \"step\", \"changes_truncated\": true}", c1, fg_buf_str(&ch));
	char *p = write_result(dir, "r.json", "T-1", "s", "exhausted", 1, cycles);
	c = run_report(dir, (char *[]){ "report", "--format", "markdown", p, NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	const char *want[] = {
		"| 1 | rejected (check failed) | The check \\'lint\\' timed out |\n\n"
		"**Checks** (cycle 1): unit passed (exit code 0, 1.2 s) · lint timed out (30.0 s)\n\n"
		/* The failed check's output follows its line. */
		"The end of lint's output:\n\n> \\(no output\\)\n\n"
		"**Changes** (cycle 1, since the step began): 22 file(s) (the list was cut at a bound)\n\n"
		"| file | change | lines |\n|---|---|---|\n"
		"| new\\.c | renamed from old\\.c | +0 −0 |\n"
		/* Quoted as git shows it (one line), then inert Markdown. */
		"| \\\"\\[x\\]\\(http\\:\\/\\/e\\)\\\\n\\|\\*\\.md\\\" | added | — |\n"
		"| f00 | deleted | +0 −0 |\n",
		"| f17 | deleted | +0 −17 |\n\n… and 2 more file(s) in the cycle file\n\n**Open feedback**",
	};
	for (size_t i = 0; i < 2; i++)
		cr_assert_not_null(strstr(c.out, want[i]), "missing:\n%s\nin:\n%s", want[i], c.out);
	cr_assert_null(strstr(c.out, "| f18 |"), "%s", c.out);
	cap_release(&c);
	free(p);
	free(cycles);
	free(c1);
	fg_buf_release(&ch);
	fgt_rm_rf(dir);
	free(dir);
}

/* The report shows the whole cause of a failed run, by its name, escaped
 * and bounded: `--only-open` cut it off after one line of 120 bytes. */
Test(report, a_failed_run_shows_its_cause_and_the_whole_reason_escaped)
{
	char *dir = fgt_tmpdir();
	char *path = fgt_fmt("%s/failed.json", dir);
	struct cap c;

	fgt_write(path, "{\"success\": false, \"exit_code\": 2, \"error_message\": \"local exited with code 2\",\n"
			" \"failure\": {\"cause\": \"config_error\", \"reason\": \"the check 'lint' could not run: "
			"exit code 127\\nThe end of its output:\\nsh: 1: no-such-lint: not found\\u001b[2K\"},\n"
			" \"step\": \"implement_task\", \"skill\": \"implement-task\", \"task_key\": \"DEMO-5\",\n"
			" \"review_cycles\": [], \"review_exhausted\": false, \"review_state\": \"failed\"}\n");
	c = run_report(dir, (char *[]){ "report", "--format", "markdown", "--only-open", path, NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	cr_assert(strstr(c.out, "**Run failed** (exit code 2, cause config_error): the check \\'lint\\' could not "
			 "run\\: exit code 127 …\n"), "%s", c.out);
	cr_assert(strstr(c.out, "> sh\\: 1\\: no\\-such\\-lint\\: not found"), "the output, inert: %s", c.out);
	cr_assert_null(strchr(c.out, '\033'), "a control reached the report");
	cap_release(&c);
	c = run_report(dir, (char *[]){ "report", path, NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	cr_assert(strstr(c.out, "\"cause\":\t\"config_error\""), "%s", c.out);
	cap_release(&c);
	fgt_rm_rf(dir);
	free(dir);
	free(path);
}

/* A failed check's row is followed by what it printed (escaped), and the
 * Verified lines of every cycle are listed (a role whose approval stands
 * from cycle 1 ran nothing in cycle 2), each once. */
Test(report, a_failed_checks_output_and_every_cycles_verified_lines)
{
	char *dir = fgt_tmpdir();
	struct cap c;
	char *c1 = cyc(1, 3, "rejected", "The check 'lint' failed with exit code 1", "2026-01-15T10:00:00Z");
	char *c2 = cyc(2, 3, "rejected", "x", "2026-01-15T10:05:00Z");
	char *c3 = cyc(3, 3, "approved", "", "2026-01-15T10:09:00Z");

	c1[strlen(c1) - 1] = '\0';
	c2[strlen(c2) - 1] = '\0';
	c3[strlen(c3) - 1] = '\0';
	char *cycles = fgt_fmt("%s, \"checks\": [{\"name\": \"lint\", \"exit_code\": 1, \"duration_seconds\": 0.5,"
			       " \"output_tail\": \"lint.sh: line 3: calc.sh: trailing space\\u001b[2K\\n\"}]},"
			       "%s, \"verified\": [\"security: sh audit.sh -> clean\"]},"
			       "%s, \"verified\": [\"correctness: sh tests.sh -> 5 passed\", "
			       "\"security: sh audit.sh -> clean\"]}", c1, c2, c3);
	char *p = write_result(dir, "r.json", "T-2", "s", "approved", 0, cycles);
	c = run_report(dir, (char *[]){ "report", "--format", "markdown", p, NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	cr_assert(strstr(c.out, "**Checks** (cycle 1): lint failed (exit code 1, 0.5 s)\n\n"
			 "The end of lint's output:\n\n> lint\\.sh\\: line 3\\: calc\\.sh\\: trailing space"), "%s", c.out);
	cr_assert(strstr(c.out, "**Verified:**\n\n- security\\: sh audit\\.sh \\-\\> clean\n"
			 "- correctness\\: sh tests\\.sh \\-\\> 5 passed\n"), "%s", c.out);
	cap_release(&c);
	fgt_rm_rf(dir);
	free(dir); free(p); free(c1); free(c2); free(c3); free(cycles);
}
