/*
 * test_review_loop.c - issue 10 end to end: re-review with memory, stall
 * detection and `forge-runner report`, through the real forge-runner
 * (`run --engine local`) starting the real forge-entrypoint, with scripted
 * /bin/sh agents in a temporary workspace.
 *
 * The agents save what they were given (standard input, the system prompt
 * file, the feedback file) under $SAVE, one file per cycle, so the tests
 * assert on the prompts the loop really built.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(review_loop, .timeout = 180);

#define TASK_SUMMARY "Add a parser"
#define TASK_DESCRIPTION "Write src/parse.c with tests."

/* Saves the worker's prompt and, on a retry, its feedback file; changes
 * the workspace every turn (a turn that changes nothing costs no review). */
static const char *worker_script =
	"#!/bin/sh\n"
	"cat > \"$SAVE/work_prompt_$FORGE_CYCLE.txt\"\n"
	"if [ -n \"$FORGE_FEEDBACK_FILE\" ]; then cp \"$FORGE_FEEDBACK_FILE\" \"$SAVE/work_fb_$FORGE_CYCLE.txt\"; fi\n"
	"echo \"pass $FORGE_CYCLE\" >> notes.txt\n"
	"echo worked\n";

/* Saves the reviewer's prompt and system prompt; the test's body follows.
 * shadow T2 prints a report with a JSON shadow block of two findings: a NOTE
 * listed first (to see blocking ones put first) and a BLOCKING one titled
 * T2; both descriptions are reworded every cycle. */
static const char *reviewer_head =
	"#!/bin/sh\n"
	"n=$FORGE_CYCLE\n"
	"cat > \"$SAVE/rev_prompt_$n.txt\"\n"
	"cp \"$FORGE_SYSTEM_PROMPT_FILE\" \"$SAVE/rev_sys_$n.txt\"\n"
	"F='```'\n"
	"shadow() {\n"
	"cat <<EOT\n"
	"## Review $n\n"
	"Two problems remain.\n"
	"\n"
	"${F}json\n"
	"{\"verdict\": \"request_changes\", \"findings\": [\n"
	" {\"severity\": \"NOTE\", \"ordinal\": 2, \"filePath\": \"README.md\", \"line\": 3,"
	" \"title\": \"Typo in heading\", \"description\": \"spelled parsre (pass $n)\"},\n"
	" {\"severity\": \"BLOCKING\", \"ordinal\": 1, \"filePath\": \"src/parse.c\", \"line\": 42,"
	" \"title\": \"$1\", \"description\": \"reads one byte past the end (pass $n)\","
	" \"fix\": \"Check len == 0 first.\"}\n"
	"]}\n"
	"$F\n"
	"EOT\n"
	"}\n";

struct spec {
	const char *step;
	const char *task_key;
	const char *review_md;    /* content of skills/default/impl/review.md */
	const char *reviewer;     /* shell after reviewer_head */
	const char *const *env;   /* extra changes, NULL-terminated; may be NULL */
};

struct lp {
	struct fgw w;     /* the tree: ws (README.md), skills, task.json, work.sh, rev.sh, result */
	char *save;       /* R/save: what the agents saved */
	const struct spec *s;
	struct fgt_proc p;
	cJSON *res;
};

static char *in_dir(const char *dir, const char *name)
{
	return fgt_fmt("%s/%s", dir, name);
}

/* Lays out the tree: workspace, skill, task file, the two agents. */
static void lp_setup(struct lp *l, const struct spec *s)
{
	char *task, *rev;

	memset(l, 0, sizeof(*l));
	l->s = s;
	fgw_init(&l->w);
	l->save = fgw_path(&l->w, "save");
	fge_write_in(l->w.ws, "README.md", "# parsre\n");
	fge_write_in(l->save, ".keep", "");
	fge_write_in(l->w.skills, "default/impl/review.md", s->review_md);
	task = fgt_fmt("{\"task_key\":\"%s\",\"summary\":\"" TASK_SUMMARY "\",\"description\":\""
		       TASK_DESCRIPTION "\"}\n", s->task_key);
	fge_write_in(l->w.root, "task.json", task);
	fge_write_in(l->w.root, "work.sh", worker_script);
	rev = fgt_fmt("%s%s", reviewer_head, s->reviewer);
	fge_write_in(l->w.root, "rev.sh", rev);
	free(rev);
	free(task);
}

/* Runs forge-runner run --engine local with the real entrypoint; loads the
 * result file (which must exist). */
static void lp_exec(struct lp *l)
{
	char *task = in_dir(l->w.root, "task.json");
	char *wcmd = fgt_fmt("FORGE_WORKER_CMD=sh %s/work.sh", l->w.root);
	char *rcmd = fgt_fmt("FORGE_REVIEWER_CMD=sh %s/rev.sh", l->w.root);
	char *save = fgt_fmt("SAVE=%s", l->save);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--engine", "local", "--workspace", l->w.ws,
			       "--step", l->s->step, "--skill", "impl", "--task-key", l->s->task_key,
			       "--task-file", task, "--skills-dir", l->w.skills,
			       "--entrypoint", FG_ENTRYPOINT_BIN, "--result", l->w.result, NULL };
	/* SAVE reaches the agents only by name (their environment is an allow-list). */
	const char *env[16] = { wcmd, rcmd, save, "FORGE_AGENT_ENV=SAVE", "AUTO_REVIEW_STOP_WHEN_STALLED",
				"AUTO_REVIEW_FAIL_ON_EXHAUSTION", "AUTO_REVIEW_MAX_RETRIES",
				"FORGE_LOG_LEVEL" };
	size_t ne = 8;

	for (size_t i = 0; l->s->env && l->s->env[i]; i++)
		env[ne++] = l->s->env[i];
	env[ne] = NULL;
	cr_assert_eq(fgt_run(&l->p, argv, env, NULL, NULL, 60), 0);
	cr_assert_eq(l->p.timed_out, 0, "runner hung; stderr: %s", l->p.err);
	l->res = fge_json_file(l->w.result, l->p.err);
	free(task);
	free(wcmd);
	free(rcmd);
	free(save);
}

static void lp_run(struct lp *l, const struct spec *s)
{
	lp_setup(l, s);
	lp_exec(l);
}

static void lp_free(struct lp *l)
{
	cJSON_Delete(l->res);
	fgt_proc_release(&l->p);
	fgw_release(&l->w);
	free(l->save);
}

/* A file the agents saved (must exist); owned. */
static char *saved(const struct lp *l, const char *name)
{
	char *text = fge_read_in(l->save, name);

	cr_assert_not_null(text, "the agent did not save %s", name);
	return text;
}

static int saved_exists(const struct lp *l, const char *name)
{
	return fge_exists_in(l->save, name);
}

/* W/.forge/{step}/name parsed (must exist and be JSON); owned. */
static cJSON *step_json(const struct lp *l, const char *name)
{
	char *path = fgt_fmt("%s/.forge/%s/%s", l->w.ws, l->s->step, name);
	cJSON *o = fge_json_file(path, NULL);

	free(path);
	return o;
}

static int step_file_exists(const struct lp *l, const char *name)
{
	char *path = fgt_fmt("%s/.forge/%s/%s", l->w.ws, l->s->step, name);
	int ok = fgt_exists(path);

	free(path);
	return ok;
}

static const cJSON *res_cycles(const struct lp *l)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(l->res, "review_cycles");

	cr_assert(cJSON_IsArray(v));
	return v;
}

/* Number of cycles in the result that carry "stalled": true. */
static int stalled_cycles(const struct lp *l)
{
	const cJSON *c;
	int n = 0;

	cJSON_ArrayForEach(c, res_cycles(l))
		n += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "stalled"));
	return n;
}

/* The stall rule's cases (whitespace, findings, failed reviewers, ...) are
 * unit tests (tests/common/test_rules.c); the tests here prove the loop
 * applies it: the frontmatter field and the environment, the files, the
 * exit code, only consecutive cycles, findings, the last cycle. */

/* The run stopped as stalled at cycle 2 of 5, everywhere it is recorded. */
static void assert_stalled_at_2_of_5(const struct lp *l, int exit_code)
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
	cr_assert_eq(cJSON_GetArraySize(res_cycles(l)), 2, "stalled after 2 cycles, not 5");
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

/* The same plain feedback every cycle, its whitespace varied. */
static const char *repeating_reviewer =
	"case $n in\n"
	"1) printf 'REJECTED\\n  Missing   tests for\\tparse.c \\n';;\n"
	"*) printf 'REJECTED\\nMissing tests\\nfor parse.c\\n\\n';;\n"
	"esac\n";

Test(review_loop, repeated_feedback_stalls_after_two_cycles_with_the_frontmatter_field)
{
	struct lp l;
	const struct spec s = { "implement_task", "ABC-1",
				"---\nmax_retries: 5\nstop_when_stalled: true\n---\nReview the work.\n",
				repeating_reviewer, NULL };

	lp_run(&l, &s);
	assert_stalled_at_2_of_5(&l, 0);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(l.res, "error_message")));
	lp_free(&l);
}

Test(review_loop, stalled_exits_3_when_told_to_fail_on_exhaustion)
{
	struct lp l;
	const char *env[] = { "AUTO_REVIEW_STOP_WHEN_STALLED=1", "AUTO_REVIEW_FAIL_ON_EXHAUSTION=1", NULL };
	const struct spec s = { "implement_task", "ABC-1", "---\nmax_retries: 5\n---\nReview the work.\n",
				repeating_reviewer, env };

	lp_run(&l, &s);
	assert_stalled_at_2_of_5(&l, 3);
	lp_free(&l);
}

Test(review_loop, frontmatter_false_wins_over_the_environment)
{
	struct lp l;
	const char *env[] = { "AUTO_REVIEW_STOP_WHEN_STALLED=1", NULL };
	const struct spec s = { "implement_task", "ABC-1",
				"---\nmax_retries: 3\nstop_when_stalled: false\n---\nReview the work.\n",
				repeating_reviewer, env };

	lp_run(&l, &s);
	cr_assert_eq(l.p.exit_code, 0, "stderr: %s", l.p.err);
	cr_assert_str_eq(fge_jstr(l.res, "review_state"), "exhausted");
	cr_assert_eq(cJSON_GetArraySize(res_cycles(&l)), 3);
	cr_assert_eq(stalled_cycles(&l), 0);
	lp_free(&l);
}

/* A run that went to its limit without stalling: 3 cycles of 3. */
static void assert_exhausted_3_of_3(const struct lp *l)
{
	cJSON *sum = step_json(l, "review_summary.json");

	cr_assert_eq(l->p.exit_code, 0, "stderr: %s", l->p.err);
	cr_assert_str_eq(fge_jstr(l->res, "review_state"), "exhausted");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(l->res, "review_exhausted")));
	cr_assert_eq(cJSON_GetArraySize(res_cycles(l)), 3);
	cr_assert_eq(stalled_cycles(l), 0);
	cr_assert_str_eq(fge_jstr(sum, "state"), "exhausted");
	cr_assert_eq(fge_jint(sum, "cycles"), 3);
	cr_assert_null(strstr(l->p.err, "(stalled"), "%s", l->p.err);
	cJSON_Delete(sum);
}

/* A, B, A: only two consecutive cycles count. */
Test(review_loop, same_feedback_two_cycles_apart_is_not_a_stall)
{
	struct lp l;
	const struct spec s = { "implement_task", "ABC-1",
				"---\nmax_retries: 3\nstop_when_stalled: true\n---\nReview the work.\n",
				"printf 'REJECTED\\nProblem %s remains.\\n' $((n % 2))\n", NULL };

	lp_run(&l, &s);
	assert_exhausted_3_of_3(&l);
	lp_free(&l);
}

Test(review_loop, same_findings_reworded_stall)
{
	struct lp l;
	const struct spec s = { "implement_task", "ABC-1",
				"---\nmax_retries: 5\nstop_when_stalled: true\n---\nReview the work.\n",
				"shadow 'Off-by-one in parse_line'\n", NULL };
	cJSON *c2;

	lp_run(&l, &s);
	cr_assert_eq(l.p.exit_code, 0, "stderr: %s", l.p.err);
	cr_assert_str_eq(fge_jstr(l.res, "review_state"), "stalled");
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(l.res, "review_exhausted")));
	cr_assert_eq(cJSON_GetArraySize(res_cycles(&l)), 2);
	c2 = step_json(&l, "review_cycle_2.json");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c2, "stalled")));
	cr_assert_str_eq(fge_jstr(c2, "format"), "json_shadow");
	/* The report text changed (## Review 2) and so did every description:
	 * only the file and title set decides. */
	cr_assert_str_eq(fge_jstr(c2, "feedback"), "## Review 2\nTwo problems remain.");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(c2, "findings")), 2);
	cJSON_Delete(c2);
	lp_free(&l);
}

/* ---- re-review memory ---- */

#define TASK_TEXT TASK_SUMMARY "\n\n" TASK_DESCRIPTION "\n"
#define FINDINGS_LIST(n) \
	"- [BLOCKING] src/parse.c:42: Off-by-one\n" \
	"  reads one byte past the end (pass " n ")\n" \
	"  Fix: Check len == 0 first.\n" \
	"- [NOTE] README.md:3: Typo in heading\n" \
	"  spelled parsre (pass " n ")\n"

Test(review_loop, reviewer_gets_the_previous_findings_from_cycle_two)
{
	struct lp l;
	const struct spec s = { "implement_task", "ABC-1", "---\nmax_retries: 2\n---\nCheck the parser.\n",
				"shadow Off-by-one\n", NULL };
	char *p1, *p2, *sys1, *sys2, *head, *want;

	lp_run(&l, &s);
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
	lp_free(&l);
}

Test(review_loop, worker_retry_lists_findings_blocking_first)
{
	struct lp l;
	const struct spec s = { "implement_task", "ABC-1", "---\nmax_retries: 2\n---\nCheck the parser.\n",
				"shadow Off-by-one\n", NULL };
	char *w0, *w1, *fb1;

	lp_run(&l, &s);
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
	lp_free(&l);
}

Test(review_loop, plain_feedback_memory_and_history_of_earlier_cycles)
{
	struct lp l;
	const struct spec s = { "implement_task", "ABC-1", "---\nmax_retries: 3\n---\nReview the work.\n",
				"printf 'REJECTED\\nProblem number %s remains.\\nSee   src/parse.c.\\n' $n\n",
				NULL };
	char *r3, *w2, *fb2;

	lp_run(&l, &s);
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
	lp_free(&l);
}

/* ---- forge-runner report over results of real runs ---- */

/* ABC-1 implement_task: exhausted, two cycles of two-line feedback. */
static const struct spec impl_spec = {
	"implement_task", "ABC-1", "---\nmax_retries: 2\n---\nReview the work.\n",
	"printf 'REJECTED\\nimplement: problem %s remains\\nsee src/parse.c:42\\n' $n\n", NULL,
};
/* ABC-1 local_review: exhausted, one line each, a '|' to escape. */
static const struct spec local_spec = {
	"local_review", "ABC-1", "---\nmax_retries: 2\n---\nReview the work.\n",
	"printf 'REJECTED\\nlocal: a|b unquoted, pass %s\\n' $n\n", NULL,
};
/* XYZ-2 implement_task: rejected once, then approved. */
static const struct spec other_spec = {
	"implement_task", "XYZ-2", "---\nmax_retries: 3\n---\nReview the work.\n",
	"if [ $n = 1 ]; then printf 'REJECTED\\nxyz: add a test\\n'; else echo APPROVED; fi\n", NULL,
};

/* Three real runs, their result files copied to dir/r1.json, r2, r3. */
struct three {
	char *dir;
	struct lp run[3];
};

static void three_run(struct three *t)
{
	const struct spec *specs[3] = { &impl_spec, &local_spec, &other_spec };

	t->dir = fgt_tmpdir();
	for (int i = 0; i < 3; i++) {
		char *text, *name = fgt_fmt("r%d.json", i + 1);

		lp_run(&t->run[i], specs[i]);
		cr_assert_eq(t->run[i].p.exit_code, 0, "stderr: %s", t->run[i].p.err);
		text = fgt_read(t->run[i].w.result, NULL);
		fge_write_in(t->dir, name, text);
		free(text);
		free(name);
	}
	cr_assert_str_eq(fge_jstr(t->run[0].res, "review_state"), "exhausted");
	cr_assert_str_eq(fge_jstr(t->run[1].res, "review_state"), "exhausted");
	cr_assert_str_eq(fge_jstr(t->run[2].res, "review_state"), "approved");
}

static void three_free(struct three *t)
{
	for (int i = 0; i < 3; i++)
		lp_free(&t->run[i]);
	fgt_rm_rf(t->dir);
	free(t->dir);
}

/* forge-runner report ARGS... run in dir. */
static void report(struct fgt_proc *p, const char *dir, const char *const *args)
{
	const char *argv[16] = { FG_RUNNER_BIN, "report" };
	size_t n = 2;

	for (size_t i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	cr_assert_eq(fgt_run(p, argv, NULL, dir, NULL, 30), 0);
	cr_assert_eq(p->timed_out, 0);
}

/* out, split at '\n', equals want[] line by line (out ends with one '\n'). */
static void assert_lines(const char *out, const char *const *want, size_t nwant)
{
	const char *s = out;
	size_t i = 0;

	for (; *s && i < nwant; i++) {
		const char *nl = strchr(s, '\n');
		char *line;

		cr_assert_not_null(nl, "line %zu has no newline: '%s'", i + 1, s);
		line = fgt_fmt("%.*s", (int)(nl - s), s);
		cr_assert_str_eq(line, want[i], "line %zu", i + 1);
		free(line);
		s = nl + 1;
	}
	cr_assert_eq(i, nwant, "%zu lines, %zu expected:\n%s", i, nwant, out);
	cr_assert_str_eq(s, "", "more lines than expected: '%s'", s);
}

Test(review_loop, report_markdown_line_by_line)
{
	struct three t;
	struct fgt_proc p;
	const char *args[] = { "r3.json", "r1.json", "r2.json", "--format", "markdown", NULL };
	/* Sorted by key: ABC-1__implement_task, ABC-1__local_review, XYZ-2__implement_task.
	 * Nothing here depends on a timestamp or a run id. */
	const char *const want[] = {
		"## Auto-Review Notes",
		"",
		"### ABC-1 — implement_task",
		"",
		"**State:** exhausted · **Skill:** impl · **Cycles:** 2/2",
		"",
		"| Cycle | Verdict | Feedback |",
		"|---|---|---|",
		"| 1 | rejected | implement\\: problem 1 remains … |",
		"| 2 | rejected | implement\\: problem 2 remains … |",
		"",
		"**Changes** (cycle 2, since the last review): 1 file(s)",
		"",
		"| file | change | lines |",
		"|---|---|---|",
		"| notes\\.txt | modified | — |",
		"",
		"**Open feedback** (cycle 2):",
		"",
		"> implement\\: problem 2 remains",
		"> see src\\/parse\\.c\\:42",
		"",
		"### ABC-1 — local_review",
		"",
		"**State:** exhausted · **Skill:** impl · **Cycles:** 2/2",
		"",
		"| Cycle | Verdict | Feedback |",
		"|---|---|---|",
		"| 1 | rejected | local\\: a\\|b unquoted\\, pass 1 |",
		"| 2 | rejected | local\\: a\\|b unquoted\\, pass 2 |",
		"",
		"**Changes** (cycle 2, since the last review): 1 file(s)",
		"",
		"| file | change | lines |",
		"|---|---|---|",
		"| notes\\.txt | modified | — |",
		"",
		"**Open feedback** (cycle 2):",
		"",
		"> local\\: a\\|b unquoted\\, pass 2",
		"",
		"### XYZ-2 — implement_task",
		"",
		"**State:** approved · **Skill:** impl · **Cycles:** 2/3",
		"",
		"| Cycle | Verdict | Feedback |",
		"|---|---|---|",
		"| 1 | rejected | xyz\\: add a test |",
		"| 2 | approved | — |",
		"",
		"**Changes** (cycle 2, since the last review): 1 file(s)",
		"",
		"| file | change | lines |",
		"|---|---|---|",
		"| notes\\.txt | modified | — |",
	};

	three_run(&t);
	report(&p, t.dir, args);
	fgt_assert_exit(&p, 0);
	cr_assert_str_eq(p.err, "");
	assert_lines(p.out, want, sizeof(want) / sizeof(want[0]));
	fgt_proc_release(&p);
	three_free(&t);
}

/* The JSON entry key of run i matches that run's result file. */
static void assert_entry(const cJSON *e, const struct lp *l, const char *source)
{
	const cJSON *rc = res_cycles(l), *ec = cJSON_GetObjectItem(e, "cycles");
	const cJSON *last = cJSON_GetArrayItem(rc, cJSON_GetArraySize(rc) - 1);
	const cJSON *open = cJSON_GetObjectItem(e, "open_feedback");

	cr_assert_str_eq(fge_jstr(e, "task_key"), l->s->task_key);
	cr_assert_str_eq(fge_jstr(e, "step"), l->s->step);
	cr_assert_str_eq(fge_jstr(e, "skill"), "impl");
	cr_assert_str_eq(fge_jstr(e, "run_id"), fge_jstr(l->res, "run_id"));
	cr_assert_str_eq(fge_jstr(e, "state"), fge_jstr(l->res, "review_state"));
	cr_assert_eq(cJSON_IsTrue(cJSON_GetObjectItem(e, "exhausted")),
		     cJSON_IsTrue(cJSON_GetObjectItem(l->res, "review_exhausted")));
	cr_assert_str_eq(fge_jstr(e, "source"), source);
	cr_assert_eq(cJSON_GetArraySize(ec), cJSON_GetArraySize(rc));
	for (int i = 0; i < cJSON_GetArraySize(rc); i++) {
		const cJSON *a = cJSON_GetArrayItem(ec, i), *b = cJSON_GetArrayItem(rc, i);

		cr_assert_eq(fge_jint(a, "cycle"), i + 1);
		cr_assert_eq(fge_jint(a, "max_cycles"), fge_jint(b, "max_cycles"));
		cr_assert_str_eq(fge_jstr(a, "verdict"), fge_jstr(b, "verdict"));
		cr_assert_str_eq(fge_jstr(a, "feedback"), fge_jstr(b, "feedback"));
		cr_assert_str_eq(fge_jstr(a, "timestamp"), fge_jstr(b, "timestamp"));
	}
	if (!strcmp(fge_jstr(last, "verdict"), "rejected"))
		cr_assert_str_eq(open->valuestring, fge_jstr(last, "feedback"));
	else
		cr_assert(cJSON_IsNull(open));
}

Test(review_loop, report_json_keys_every_step_of_every_task)
{
	struct three t;
	struct fgt_proc p;
	const char *args[] = { "--format", "json", "r2.json", "r3.json", "r1.json", NULL };
	const char *keys[] = { "ABC-1__implement_task", "ABC-1__local_review", "XYZ-2__implement_task" };
	const int run_of[] = { 0, 1, 2 };
	cJSON *o, *entries, *e;
	int i = 0;

	three_run(&t);
	report(&p, t.dir, args);
	fgt_assert_exit(&p, 0);
	cr_assert_str_eq(p.err, "");
	o = cJSON_Parse(p.out);
	cr_assert_not_null(o, "%s", p.out);
	entries = cJSON_GetObjectItem(o, "entries");
	cr_assert_eq(cJSON_GetArraySize(entries), 3, "%s", p.out);
	cJSON_ArrayForEach(e, entries) {
		char *source = fgt_fmt("r%d.json", run_of[i] + 1);

		cr_assert_str_eq(e->string, keys[i], "entries sorted by key");
		assert_entry(e, &t.run[run_of[i]], source);
		free(source);
		i++;
	}
	cr_assert_str_eq(fge_jstr(cJSON_GetObjectItem(entries, keys[0]), "open_feedback"),
			 "implement: problem 2 remains\nsee src/parse.c:42");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "warnings")), 0);
	cJSON_Delete(o);
	fgt_proc_release(&p);
	three_free(&t);
}

/* Writes dir/old.json: r1.json with every timestamp moved back to 2020. */
static void write_older_copy(const struct three *t)
{
	char *path = in_dir(t->dir, "r1.json"), *text = fgt_read(path, NULL), *out;
	cJSON *o = cJSON_Parse(text), *c;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(o, "review_cycles"))
		cJSON_ReplaceItemInObject(c, "timestamp", cJSON_CreateString("2020-01-01T00:00:00Z"));
	cJSON_ReplaceItemInObject(o, "run_id", cJSON_CreateString("older-run"));
	out = cJSON_Print(o);
	fge_write_in(t->dir, "old.json", out);
	free(out);
	cJSON_Delete(o);
	free(text);
	free(path);
}

/* Reports the inputs as JSON; the ABC-1__implement_task entry must come from
 * r1.json, and stderr must be exactly want_err. */
static void assert_kept_r1(const struct three *t, const char *const *args, const char *want_err)
{
	struct fgt_proc p;
	cJSON *o, *entries, *e;
	char *warning;

	report(&p, t->dir, args);
	cr_assert_eq(p.exit_code, 0, "a replaced duplicate is no error; stderr: %s", p.err);
	cr_assert_str_eq(p.err, want_err);
	o = cJSON_Parse(p.out);
	entries = cJSON_GetObjectItem(o, "entries");
	cr_assert_eq(cJSON_GetArraySize(entries), 3, "merged, never overwritten: %s", p.out);
	e = cJSON_GetObjectItem(entries, "ABC-1__implement_task");
	assert_entry(e, &t->run[0], "r1.json");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "warnings")), 1);
	/* The same text as on stderr, without the prefix and the newline. */
	warning = fgt_fmt("forge-runner report: %s\n",
			  cJSON_GetArrayItem(cJSON_GetObjectItem(o, "warnings"), 0)->valuestring);
	cr_assert_str_eq(warning, want_err);
	free(warning);
	cJSON_Delete(o);
	fgt_proc_release(&p);
}

Test(review_loop, report_same_key_twice_keeps_the_newer_and_says_so)
{
	struct three t;
	const char *older_last[] = { "r1.json", "r2.json", "r3.json", "old.json", NULL };
	const char *older_first[] = { "old.json", "r2.json", "r1.json", "r3.json", NULL };
	const char *same_file[] = { "r1.json", "r2.json", "r3.json", "r1.json", NULL };
	const cJSON *cs;
	const char *stamp;
	char *want;

	three_run(&t);
	write_older_copy(&t);
	cs = res_cycles(&t.run[0]);
	stamp = fge_jstr(cJSON_GetArrayItem(cs, cJSON_GetArraySize(cs) - 1), "timestamp");
	want = fgt_fmt("forge-runner report: duplicate key 'ABC-1__implement_task': kept 'r1.json' "
		       "(its last cycle is newer: %s after 2020-01-01T00:00:00Z), dropped 'old.json'\n",
		       stamp);
	assert_kept_r1(&t, older_last, want);
	assert_kept_r1(&t, older_first, want);
	free(want);
	assert_kept_r1(&t, same_file, "forge-runner report: duplicate key 'ABC-1__implement_task': "
		       "kept 'r1.json' (last cycles equally recent, named later), dropped 'r1.json'\n");
	three_free(&t);
}

Test(review_loop, report_exit_codes)
{
	struct three t;
	struct fgt_proc p;
	const char *missing[] = { "r1.json", "nope.json", "--format", "markdown", NULL };
	const char *not_result[] = { "r1.json", "cycle.json", NULL };
	const char *none[] = { "--format", "markdown", NULL };
	const char *bad_format[] = { "r1.json", "--format", "xml", NULL };
	char *cycle;

	three_run(&t);
	report(&p, t.dir, missing);
	cr_assert_eq(p.exit_code, 1);
	cr_assert_str_eq(p.err, "forge-runner report: cannot read 'nope.json': No such file or directory\n");
	cr_assert_not_null(strstr(p.out, "### ABC-1 — implement_task\n"), "the others are still reported");
	fgt_proc_release(&p);
	/* A cycle file is not a result file. */
	cycle = cJSON_PrintUnformatted(cJSON_GetArrayItem(res_cycles(&t.run[0]), 0));
	fge_write_in(t.dir, "cycle.json", cycle);
	free(cycle);
	report(&p, t.dir, not_result);
	cr_assert_eq(p.exit_code, 1);
	cr_assert_not_null(strstr(p.err, "cannot read 'cycle.json': not a result file: "), "%s", p.err);
	cr_assert_not_null(strstr(p.out, "\"ABC-1__implement_task\""));
	fgt_proc_release(&p);
	report(&p, t.dir, none);
	cr_assert_eq(p.exit_code, 2);
	cr_assert_str_eq(p.out, "");
	cr_assert_not_null(strstr(p.err, "try 'forge-runner report --help'"));
	fgt_proc_release(&p);
	report(&p, t.dir, bad_format);
	cr_assert_eq(p.exit_code, 2);
	cr_assert_str_eq(p.out, "");
	fgt_proc_release(&p);
	three_free(&t);
}

Test(review_loop, report_only_open_shows_a_stalled_step)
{
	struct lp l;
	struct three t;
	struct fgt_proc p;
	const struct spec s = { "plan_task", "ABC-1",
				"---\nmax_retries: 5\nstop_when_stalled: true\n---\nReview the plan.\n",
				repeating_reviewer, NULL };
	const char *args[] = { "--format", "markdown", "--only-open", "r1.json", "r3.json", "stalled.json", NULL };
	char *text;

	three_run(&t);
	lp_run(&l, &s);
	text = fgt_read(l.w.result, NULL);
	fge_write_in(t.dir, "stalled.json", text);
	free(text);
	report(&p, t.dir, args);
	fgt_assert_exit(&p, 0);
	cr_assert_not_null(strstr(p.out, "### ABC-1 — plan_task\n\n**State:** stalled · **Skill:** impl · "
				  "**Cycles:** 2/5\n"), "%s", p.out);
	cr_assert_not_null(strstr(p.out, "**Open feedback** (cycle 2):\n\n> Missing tests\n> for parse\\.c\n"),
			   "%s", p.out);
	cr_assert_not_null(strstr(p.out, "### ABC-1 — implement_task\n"));
	cr_assert_null(strstr(p.out, "XYZ-2"), "approved is not open: %s", p.out);
	fgt_proc_release(&p);
	lp_free(&l);
	three_free(&t);
}

/* A stall on the last allowed cycle is still reported as stalled, and
 * review_exhausted keeps its one definition (last cycle rejected at its
 * limit), so it is true here while it is false for a stall at 2 of 5. */
Test(review_loop, stall_on_the_last_cycle_is_stalled_and_exhausted)
{
	struct lp l;
	const struct spec s = { "plan_task", "ABC-1",
				"---\nmax_retries: 2\nstop_when_stalled: true\n---\nReview the plan.\n",
				repeating_reviewer, NULL };
	cJSON *c2, *sum;

	lp_run(&l, &s);
	cr_assert_eq(l.p.exit_code, 0, "stderr: %s", l.p.err);
	cr_assert_str_eq(fge_jstr(l.res, "review_state"), "stalled");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(l.res, "review_exhausted")));
	c2 = step_json(&l, "review_cycle_2.json");
	sum = step_json(&l, "review_summary.json");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c2, "stalled")));
	cr_assert_str_eq(fge_jstr(sum, "state"), "stalled");
	cJSON_Delete(c2);
	cJSON_Delete(sum);
	lp_free(&l);
}
