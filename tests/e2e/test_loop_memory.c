/*
 * test_loop_memory.c - what the loop remembers from cycle to cycle, end to
 * end through forge-runner and the real entrypoint: the previous review and
 * findings in the reviewer's and the worker's prompts, and the stall rule
 * (the frontmatter field, the environment, the exit code, consecutive
 * cycles only, findings, the last cycle).
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fge2e.h"
#include "fgloop.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(loop_memory, .timeout = 180);

/* A file the agents saved (must exist); owned. */
static char *saved(const struct fgl *l, const char *name)
{
	char *text = fge_read_in(l->save, name);

	cr_assert_not_null(text, "the agent did not save %s", name);
	return text;
}

static int saved_exists(const struct fgl *l, const char *name)
{
	return fge_exists_in(l->save, name);
}

/* W/.forge/{step}/name parsed (must exist and be JSON); owned. */
static cJSON *step_json(const struct fgl *l, const char *name)
{
	char *path = fgt_fmt("%s/.forge/%s/%s", l->w.ws, l->s->step, name);
	cJSON *o = fge_json_file(path, NULL);

	free(path);
	return o;
}

static int step_file_exists(const struct fgl *l, const char *name)
{
	char *path = fgt_fmt("%s/.forge/%s/%s", l->w.ws, l->s->step, name);
	int ok = fgt_exists(path);

	free(path);
	return ok;
}

/* Number of cycles in the result that carry "stalled": true. */
static int stalled_cycles(const struct fgl *l)
{
	const cJSON *c;
	int n = 0;

	cJSON_ArrayForEach(c, fgl_cycles(l))
		n += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "stalled"));
	return n;
}

/* The stall rule's cases (whitespace, findings, failed reviewers, ...) are
 * unit tests (tests/common/test_rules.c); the tests here prove the loop
 * applies it: the frontmatter field and the environment, the files, the
 * exit code, only consecutive cycles, findings, the last cycle. */

/* The run stopped as stalled at cycle 2 of 5, everywhere it is recorded. */
static void assert_stalled_at_2_of_5(const struct fgl *l, int exit_code)
{
	cJSON *c1 = step_json(l, "review_cycle_1.json"), *c2 = step_json(l, "review_cycle_2.json");
	cJSON *sum = step_json(l, "review_summary.json");

	cr_assert_eq(l->p.exit_code, exit_code, "stderr: %s", l->p.err);
	cr_assert_eq(fge_jint(l->res, "exit_code"), exit_code);
	cr_assert_eq(cJSON_IsTrue(cJSON_GetObjectItem(l->res, "success")), exit_code == 0);
	cr_assert_str_eq(fge_jstr(l->res, "review_state"), "stalled");
	/* Exhausted means "last cycle rejected at its limit" (cycle-files.md):
	 * a loop that stalled at 2 of 5 is not. */
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(l->res, "review_exhausted")));
	cr_assert_eq(cJSON_GetArraySize(fgl_cycles(l)), 2, "stalled after 2 cycles, not 5");
	cr_assert(!step_file_exists(l, "review_cycle_3.json"));
	cr_assert_eq(fge_jint(c2, "max_cycles"), 5);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c2, "stalled")));
	cr_assert_null(cJSON_GetObjectItem(c1, "stalled"), "only the cycle that stalled says so");
	cr_assert_str_eq(fge_jstr(sum, "state"), "stalled");
	cr_assert_eq(fge_jint(sum, "cycles"), 2);
	cr_assert_eq(fge_jint(sum, "max_cycles"), 5);
	cr_assert_eq(stalled_cycles(l), 1);
	cr_assert_not_null(strstr(l->p.err, "review_state=stalled"), "%s", l->p.err);
	cr_assert_not_null(strstr(l->p.err, "Review cycle 2/5: REJECTED - Missing tests for parse.c "
				  "(stalled: same findings as the previous cycle)"), "%s", l->p.err);
	cJSON_Delete(c1);
	cJSON_Delete(c2);
	cJSON_Delete(sum);
}

Test(loop_memory, repeated_feedback_stalls_after_two_cycles_with_the_frontmatter_field)
{
	struct fgl l;
	const struct fgl_spec s = { "implement_task", "ABC-1",
				"---\nmax_retries: 5\nstop_when_stalled: true\n---\nReview the work.\n",
				FGL_REPEATING_REVIEWER, NULL };

	fgl_run(&l, &s);
	assert_stalled_at_2_of_5(&l, 0);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(l.res, "error_message")));
	fgl_release(&l);
}

Test(loop_memory, stalled_exits_3_when_told_to_fail_on_exhaustion)
{
	struct fgl l;
	const char *env[] = { "AUTO_REVIEW_STOP_WHEN_STALLED=1", "AUTO_REVIEW_FAIL_ON_EXHAUSTION=1", NULL };
	const struct fgl_spec s = { "implement_task", "ABC-1", "---\nmax_retries: 5\n---\nReview the work.\n",
				FGL_REPEATING_REVIEWER, env };

	fgl_run(&l, &s);
	assert_stalled_at_2_of_5(&l, 3);
	fgl_release(&l);
}

Test(loop_memory, frontmatter_false_wins_over_the_environment)
{
	struct fgl l;
	const char *env[] = { "AUTO_REVIEW_STOP_WHEN_STALLED=1", NULL };
	const struct fgl_spec s = { "implement_task", "ABC-1",
				"---\nmax_retries: 3\nstop_when_stalled: false\n---\nReview the work.\n",
				FGL_REPEATING_REVIEWER, env };

	fgl_run(&l, &s);
	cr_assert_eq(l.p.exit_code, 0, "stderr: %s", l.p.err);
	cr_assert_str_eq(fge_jstr(l.res, "review_state"), "exhausted");
	cr_assert_eq(cJSON_GetArraySize(fgl_cycles(&l)), 3);
	cr_assert_eq(stalled_cycles(&l), 0);
	fgl_release(&l);
}

/* A run that went to its limit without stalling: 3 cycles of 3. */
static void assert_exhausted_3_of_3(const struct fgl *l)
{
	cJSON *sum = step_json(l, "review_summary.json");

	cr_assert_eq(l->p.exit_code, 0, "stderr: %s", l->p.err);
	cr_assert_str_eq(fge_jstr(l->res, "review_state"), "exhausted");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(l->res, "review_exhausted")));
	cr_assert_eq(cJSON_GetArraySize(fgl_cycles(l)), 3);
	cr_assert_eq(stalled_cycles(l), 0);
	cr_assert_str_eq(fge_jstr(sum, "state"), "exhausted");
	cr_assert_eq(fge_jint(sum, "cycles"), 3);
	cr_assert_null(strstr(l->p.err, "(stalled"), "%s", l->p.err);
	cJSON_Delete(sum);
}

/* A, B, A: only two consecutive cycles count. */
Test(loop_memory, same_feedback_two_cycles_apart_is_not_a_stall)
{
	struct fgl l;
	const struct fgl_spec s = { "implement_task", "ABC-1",
				"---\nmax_retries: 3\nstop_when_stalled: true\n---\nReview the work.\n",
				"printf 'REJECTED\\nProblem %s remains.\\n' $((n % 2))\n", NULL };

	fgl_run(&l, &s);
	assert_exhausted_3_of_3(&l);
	fgl_release(&l);
}

Test(loop_memory, same_findings_reworded_stall)
{
	struct fgl l;
	const struct fgl_spec s = { "implement_task", "ABC-1",
				"---\nmax_retries: 5\nstop_when_stalled: true\n---\nReview the work.\n",
				"shadow 'Off-by-one in parse_line'\n", NULL };
	cJSON *c2;

	fgl_run(&l, &s);
	cr_assert_eq(l.p.exit_code, 0, "stderr: %s", l.p.err);
	cr_assert_str_eq(fge_jstr(l.res, "review_state"), "stalled");
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(l.res, "review_exhausted")));
	cr_assert_eq(cJSON_GetArraySize(fgl_cycles(&l)), 2);
	c2 = step_json(&l, "review_cycle_2.json");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c2, "stalled")));
	cr_assert_str_eq(fge_jstr(c2, "format"), "json_shadow");
	/* The report text changed (## Review 2) and so did every description:
	 * only the file and title set decides. */
	cr_assert_str_eq(fge_jstr(c2, "feedback"), "## Review 2\nTwo problems remain.");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(c2, "findings")), 2);
	cJSON_Delete(c2);
	fgl_release(&l);
}

/* ---- re-review memory ---- */

#define TASK_TEXT FGL_TASK_SUMMARY "\n\n" FGL_TASK_DESCRIPTION "\n"
#define FINDINGS_LIST(n) \
	"- [BLOCKING] src/parse.c:42: Off-by-one\n" \
	"  reads one byte past the end (pass " n ")\n" \
	"  Fix: Check len == 0 first.\n" \
	"- [NOTE] README.md:3: Typo in heading\n" \
	"  spelled parsre (pass " n ")\n"

Test(loop_memory, reviewer_gets_the_previous_findings_from_cycle_two)
{
	struct fgl l;
	const struct fgl_spec s = { "implement_task", "ABC-1", "---\nmax_retries: 2\n---\nCheck the parser.\n",
				"shadow Off-by-one\n", NULL };
	char *p1, *p2, *sys1, *sys2, *head, *want;

	fgl_run(&l, &s);
	cr_assert_eq(l.p.exit_code, 0, "stderr: %s", l.p.err);
	cr_assert_str_eq(fge_jstr(l.res, "review_state"), "exhausted");
	p1 = saved(&l, "rev_prompt_1.txt");
	p2 = saved(&l, "rev_prompt_2.txt");
	head = fgt_fmt("Review the work done in the workspace %s for step 'implement_task' (skill 'impl'), "
		       "task ABC-1.\n\n## Task\n\n" TASK_TEXT, l.w.ws);
	want = fgt_fmt("%s\n## Files changed since the step began\n\n- added notes.txt\n", head);
	cr_assert_str_eq(p1, want, "cycle 1 has no memory");
	free(want);
	want = fgt_fmt("%s\n## Previous review (cycle 1 of 2)\n\n"
		       "The previous review rejected the work with this feedback:\n\n"
		       "## Review 1\nTwo problems remain.\n\nIts findings:\n\n" FINDINGS_LIST("1")
		       "\nThe worker has tried to address it since. For each item above, confirm whether "
		       "it is fixed now; then report any regression the fixes introduced and anything "
		       "still missing.\n\n## Files changed since the last review cycle\n\n- modified notes.txt\n",
		       head);
	cr_assert_str_eq(p2, want);
	/* The system prompt is the protocol and the review.md body, every cycle. */
	sys1 = saved(&l, "rev_sys_1.txt");
	sys2 = saved(&l, "rev_sys_2.txt");
	cr_assert_str_eq(sys1, sys2);
	cr_assert_not_null(strstr(sys1, "## Review instructions\n\nCheck the parser.\n"), "%s", sys1);
	cr_assert_null(strstr(sys1, "Previous review"));
	free(p1);
	free(p2);
	free(sys1);
	free(sys2);
	free(head);
	free(want);
	fgl_release(&l);
}

Test(loop_memory, worker_retry_lists_findings_blocking_first)
{
	struct fgl l;
	const struct fgl_spec s = { "implement_task", "ABC-1", "---\nmax_retries: 2\n---\nCheck the parser.\n",
				"shadow Off-by-one\n", NULL };
	char *w0, *w1, *fb1;

	fgl_run(&l, &s);
	w0 = saved(&l, "work_prompt_0.txt");
	w1 = saved(&l, "work_prompt_1.txt");
	fb1 = saved(&l, "work_fb_1.txt");
	cr_assert_str_eq(w0, TASK_TEXT);
	cr_assert(!saved_exists(&l, "work_fb_0.txt"), "the first run has no feedback file");
	cr_assert_str_eq(fb1, FINDINGS_LIST("1"), "the feedback file is the list, not the raw report");
	cr_assert_str_eq(w1, TASK_TEXT "\n## Reviewer Feedback\n\n"
			 "The reviewer rejected your work (cycle 1 of 2). Address every point below.\n\n"
			 FINDINGS_LIST("1")
			 "\n### Review cycles so far\n\n"
			 "- Cycle 1/2: rejected - ## Review 1 Two problems remain.\n");
	/* Cycle 2 was the last: no retry after it. */
	cr_assert(!saved_exists(&l, "work_prompt_2.txt"));
	free(w0);
	free(w1);
	free(fb1);
	fgl_release(&l);
}

Test(loop_memory, plain_feedback_memory_and_history_of_earlier_cycles)
{
	struct fgl l;
	const struct fgl_spec s = { "implement_task", "ABC-1", "---\nmax_retries: 3\n---\nReview the work.\n",
				"printf 'REJECTED\\nProblem number %s remains.\\nSee   src/parse.c.\\n' $n\n",
				NULL };
	char *r3, *w2, *fb2;

	fgl_run(&l, &s);
	cr_assert_eq(l.p.exit_code, 0, "stderr: %s", l.p.err);
	r3 = saved(&l, "rev_prompt_3.txt");
	cr_assert_not_null(strstr(r3, "\n## Previous review (cycle 2 of 3)\n\nThe previous review rejected "
				  "the work with this feedback:\n\nProblem number 2 remains.\nSee   src/parse.c.\n"
				  "\nThe worker has tried to address it since. For each item above, confirm "
				  "whether it is fixed now; then report any regression"), "%s", r3);
	cr_assert_null(strstr(r3, "Problem number 1"), "only the previous cycle: %s", r3);
	cr_assert_null(strstr(r3, "Its findings"), "no structured findings: %s", r3);
	w2 = saved(&l, "work_prompt_2.txt");
	fb2 = saved(&l, "work_fb_2.txt");
	cr_assert_str_eq(fb2, "Problem number 2 remains.\nSee   src/parse.c.\n");
	cr_assert_str_eq(w2, TASK_TEXT "\n## Reviewer Feedback\n\n"
			 "The reviewer rejected your work (cycle 2 of 3). Address every point below.\n\n"
			 "Problem number 2 remains.\nSee   src/parse.c.\n"
			 "\n### Review cycles so far\n\n"
			 "- Cycle 1/3: rejected - Problem number 1 remains. See src/parse.c.\n"
			 "- Cycle 2/3: rejected - Problem number 2 remains. See src/parse.c.\n");
	free(r3);
	free(w2);
	free(fb2);
	fgl_release(&l);
}

/* A stall on the last allowed cycle is still reported as stalled, and
 * review_exhausted keeps its one definition (last cycle rejected at its
 * limit), so it is true here while it is false for a stall at 2 of 5. */
Test(loop_memory, stall_on_the_last_cycle_is_stalled_and_exhausted)
{
	struct fgl l;
	const struct fgl_spec s = { "plan_task", "ABC-1",
				"---\nmax_retries: 2\nstop_when_stalled: true\n---\nReview the plan.\n",
				FGL_REPEATING_REVIEWER, NULL };
	cJSON *c2, *sum;

	fgl_run(&l, &s);
	cr_assert_eq(l.p.exit_code, 0, "stderr: %s", l.p.err);
	cr_assert_str_eq(fge_jstr(l.res, "review_state"), "stalled");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(l.res, "review_exhausted")));
	c2 = step_json(&l, "review_cycle_2.json");
	sum = step_json(&l, "review_summary.json");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c2, "stalled")));
	cr_assert_str_eq(fge_jstr(sum, "state"), "stalled");
	cJSON_Delete(c2);
	cJSON_Delete(sum);
	fgl_release(&l);
}
