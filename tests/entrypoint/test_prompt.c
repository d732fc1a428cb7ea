/*
 * test_prompt.c - worker and reviewer prompts, feedback rendering, one-line cut.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "prompt.h"

#include "../common/cycle_sample.h"

TestSuite(prompt, .timeout = 10);

static void task(struct ep_task *t, const char *summary, const char *description)
{
	ep_task_init(t);
	t->workspace = fg_xstrdup("/workspace");
	t->skills_dir = fg_xstrdup("/skills");
	t->step = fg_xstrdup("implement_task");
	t->skill = fg_xstrdup("implement-task");
	t->task_key = fg_xstrdup("ABC-1");
	t->summary = fg_xstrdup(summary);
	t->description = fg_xstrdup(description);
	t->run_id = fg_xstrdup("");
}

static void cycle(struct fg_cycle *c, int n, const char *feedback)
{
	cycle_make(c, n, FG_VERDICT_REJECTED, feedback);
}

Test(prompt, worker_prompt_is_summary_and_description)
{
	struct ep_task t;

	task(&t, "Add login", "Use OAuth.");
	fg_strvec_push(&t.previous, "ABC-0");
	char *p = ep_prompt_worker(&t);
	cr_assert_str_eq(p, "Add login\n\nUse OAuth.\n\nPrevious tasks: ABC-0\n");
	cr_assert_null(strstr(p, "Reviewer Feedback"));
	free(p);
	ep_task_release(&t);
}

Test(prompt, empty_task_says_so)
{
	struct ep_task t;

	task(&t, "", "");
	char *p = ep_prompt_worker(&t);
	cr_assert(strstr(p, "no task summary or description"));
	free(p);
	ep_task_release(&t);
}

Test(prompt, retry_appends_reviewer_feedback_and_history)
{
	struct ep_task t;
	struct fg_cycle h[2];

	task(&t, "Add login", "Use OAuth.");
	cycle(&h[0], 1, "Missing tests\nfor the callback");
	cycle(&h[1], 2, "Still no test for the error path");
	char *p = ep_prompt_worker_retry(&t, h, 2);
	cr_assert(!strncmp(p, "Add login\n\nUse OAuth.\n\n## Reviewer Feedback\n\n", 44), "%s", p);
	cr_assert(strstr(p, "Still no test for the error path\n"));
	cr_assert(strstr(p, "- Cycle 1/3: rejected - Missing tests for the callback\n"), "%s", p);
	cr_assert(strstr(p, "- Cycle 2/3: rejected - Still no test"), "%s", p);
	free(p);
	fg_cycle_release(&h[0]);
	fg_cycle_release(&h[1]);
	ep_task_release(&t);
}

Test(prompt, findings_render_as_list_blocking_first)
{
	struct fg_cycle c;
	struct fg_buf b;

	cycle(&c, 1, "raw markdown report");
	c.j.has_findings = true;
	c.j.nfindings = 2;
	c.j.findings = fg_xcalloc(2, sizeof(*c.j.findings));
	c.j.findings[0] = (struct fg_finding){ .severity = fg_xstrdup("NOTE"), .title = fg_xstrdup("Naming"), .line = -1 };
	c.j.findings[1] = (struct fg_finding){ .severity = fg_xstrdup("BLOCKING"), .file_path = fg_xstrdup("src/a.c"),
					     .line = 42, .title = fg_xstrdup("Leak"), .fix = fg_xstrdup("free it") };
	fg_buf_init(&b, 4096);
	ep_prompt_feedback(&b, &c);
	cr_assert_str_eq(fg_buf_str(&b), "- [BLOCKING] src/a.c:42: Leak\n  Fix: free it\n- [NOTE] Naming\n");
	fg_buf_release(&b);
	fg_cycle_release(&c);
}

Test(prompt, reviewer_system_prompt_is_protocol_then_body)
{
	char *p = ep_prompt_reviewer_system("Check the tests.");

	cr_assert(strstr(p, "APPROVED") && strstr(p, "REJECTED"));
	cr_assert(strstr(p, "## Review instructions\n\nCheck the tests.\n"), "%s", p);
	cr_assert_lt(strstr(p, "APPROVED"), strstr(p, "Check the tests."));
	free(p);
	p = ep_prompt_reviewer_system("");
	cr_assert(strstr(p, "none given"));
	free(p);
}

Test(prompt, reviewer_prompt_carries_previous_feedback_from_cycle_two)
{
	struct ep_task t;
	struct fg_cycle h;

	task(&t, "Add login", "Use OAuth.");
	char *p1 = ep_prompt_reviewer(&t, NULL, 0);
	cr_assert(strstr(p1, "Add login") && strstr(p1, "/workspace"));
	cr_assert_null(strstr(p1, "Previous review"));
	cycle(&h, 1, "Missing tests");
	char *p2 = ep_prompt_reviewer(&t, &h, 1);
	cr_assert(strstr(p2, "## Previous review (cycle 1 of 3)"));
	cr_assert(strstr(p2, "Missing tests") && strstr(p2, "regression"));
	free(p1); free(p2);
	fg_cycle_release(&h);
	ep_task_release(&t);
}

Test(prompt, one_line_collapses_and_cuts)
{
	static const struct { const char *in; size_t max; const char *want; } cases[] = {
		{ "  a\n\n b\tc  ", 200, "a b c" },
		{ "", 200, "" },
		{ "abcdef", 3, "abc..." },
		{ "abc", 3, "abc" },
		{ "\xc3\xa9\xc3\xa9\xc3\xa9", 2, "\xc3\xa9\xc3\xa9..." },
	};
	char out[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ep_one_line(out, sizeof(out), cases[i].in, cases[i].max);
		cr_assert_str_eq(out, cases[i].want, "case %zu", i);
	}
}
