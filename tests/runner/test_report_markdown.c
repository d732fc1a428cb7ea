/*
 * test_report_markdown.c - `forge-runner report --format markdown`, line by
 * line: open feedback and --only-open, table cells cut and quotes folded,
 * a failed run's error and cause, a cycle's evidence bounded and escaped.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "forge/alloc.h"
#include "forge/buf.h"
#include "report.h"

#include "report_sample.h"
#include "../common/tmp_fixture.h"

TestSuite(report, .init = tmp_init, .fini = tmp_fini, .timeout = 30);

/* `report --format markdown` of the files (and --only-open when only_open),
 * which must exit 0. */
static struct cap markdown(bool only_open, char *a, char *b)
{
	char *argv[] = { "report", "--format", "markdown", only_open ? "--only-open" : a, only_open ? a : b,
			 only_open ? b : NULL, NULL };
	struct cap c = run_report(tmp_dir, argv);

	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	return c;
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
	char *a = cyc(1, 3, "rejected", "  \\n Add a test  ", "2026-01-15T10:00:00Z");
	char *b = cyc(2, 3, "approved", "", "2026-01-15T10:10:00Z");
	char *cy = fgt_fmt("%s, %s", a, b);
	char *p1 = write_result(tmp_dir, "ok.json", "DEMO-3", "implement_task", "approved", 0, cy);
	char *p2 = write_result(tmp_dir, "none.json", NULL, "review", "none", 0, "");
	struct cap c;

	c = run_report(tmp_dir, (char *[]){ "report", "--format=markdown", p1, p2, NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	assert_lines(c.out, all, sizeof(all) / sizeof(all[0]));
	cap_release(&c);
	c = markdown(true, p1, p2);
	assert_lines(c.out, open_only, sizeof(open_only) / sizeof(open_only[0]));
	cap_release(&c);
	free(a);
	free(b);
	free(cy);
	free(p1);
	free(p2);
}

Test(report, markdown_cell_cuts_long_lines_and_quote_folds_crlf)
{
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
	p = write_result(tmp_dir, "r.json", "T-1", "st", "exhausted", 1, cy);
	c = markdown(false, p, NULL);
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
}

/* A run that failed before any review shows its success, exit code and
 * error, not only "No review cycles", and is open (--only-open keeps it). */
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
	char *path = tmp_path("failed.json");
	struct cap c;

	fgt_write(path, "{\"success\": false, \"exit_code\": 1, \"error_message\": "
			"\"the task failed: cannot run worker 'agent' | x\\nsecond line\",\n"
			" \"step\": \"implement_task\", \"skill\": \"implement-task\", \"task_key\": \"DEMO-4\",\n"
			" \"run_id\": \"run-1\", \"engine\": \"local\", \"duration_seconds\": 0.2,\n"
			" \"review_cycles\": [], \"review_exhausted\": false, \"review_state\": \"no_review\",\n"
			" \"stale_files_cleared\": 0, \"sweep_caught\": 0}\n");
	c = markdown(true, path, NULL);
	assert_lines(c.out, want, sizeof(want) / sizeof(want[0]));
	cap_release(&c);

	c = run_report(tmp_dir, (char *[]){ "report", "--only-open", path, NULL });
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
}

/* A cycle's evidence in the Markdown, line by line: a check that timed
 * out, a renamed file, a path holding markup and a newline (escaped, the
 * newline shown as '?'), unknown line counts, and more files than
 * RN_REPORT_CHANGES_SHOWN (the rest counted). */
Test(report, markdown_evidence_is_bounded_and_escaped)
{
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
	char *p = write_result(tmp_dir, "r.json", "T-1", "s", "exhausted", 1, cycles);
	c = markdown(false, p, NULL);
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
}

/* The report shows the whole cause of a failed run, by its name, escaped
 * and bounded: `--only-open` cut it off after one line of 120 bytes. */
Test(report, a_failed_run_shows_its_cause_and_the_whole_reason_escaped)
{
	char *path = tmp_path("failed.json");
	struct cap c;

	fgt_write(path, "{\"success\": false, \"exit_code\": 2, \"error_message\": \"local exited with code 2\",\n"
			" \"failure\": {\"cause\": \"config_error\", \"reason\": \"the check 'lint' could not run: "
			"exit code 127\\nThe end of its output:\\nsh: 1: no-such-lint: not found\\u001b[2K\"},\n"
			" \"step\": \"implement_task\", \"skill\": \"implement-task\", \"task_key\": \"DEMO-5\",\n"
			" \"review_cycles\": [], \"review_exhausted\": false, \"review_state\": \"failed\"}\n");
	c = markdown(true, path, NULL);
	cr_assert(strstr(c.out, "**Run failed** (exit code 2, cause config_error): the check \\'lint\\' could not "
			 "run\\: exit code 127 …\n"), "%s", c.out);
	cr_assert(strstr(c.out, "> sh\\: 1\\: no\\-such\\-lint\\: not found"), "the output, inert: %s", c.out);
	cr_assert_null(strchr(c.out, '\033'), "a control reached the report");
	cap_release(&c);
	c = run_report(tmp_dir, (char *[]){ "report", path, NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	cr_assert(strstr(c.out, "\"cause\":\t\"config_error\""), "%s", c.out);
	cap_release(&c);
}

/* A failed check's row is followed by what it printed (escaped), and the
 * Verified lines of every cycle are listed (a role whose approval stands
 * from cycle 1 ran nothing in cycle 2), each once. */
Test(report, a_failed_checks_output_and_every_cycles_verified_lines)
{
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
	char *p = write_result(tmp_dir, "r.json", "T-2", "s", "approved", 0, cycles);
	c = markdown(false, p, NULL);
	cr_assert(strstr(c.out, "**Checks** (cycle 1): lint failed (exit code 1, 0.5 s)\n\n"
			 "The end of lint's output:\n\n> lint\\.sh\\: line 3\\: calc\\.sh\\: trailing space"), "%s", c.out);
	cr_assert(strstr(c.out, "**Verified:**\n\n- security\\: sh audit\\.sh \\-\\> clean\n"
			 "- correctness\\: sh tests\\.sh \\-\\> 5 passed\n"), "%s", c.out);
	cap_release(&c);
	FG_FREE_ALL(p, c1, c2, c3, cycles);
}
