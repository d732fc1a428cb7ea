/*
 * test_report_evidence.c - issue 23 in `forge-runner report`: one real run
 * (forge-runner run --engine local, the real forge-entrypoint, scripted sh
 * agents, a git workspace, the change set on) whose cycles are a failing
 * check (no reviewer), a rejection with a BLOCKING finding, a turn that
 * changed nothing (no reviewer), and an approval whose only finding is a
 * NITPICK with a Verified line; then the report of its result file, in
 * Markdown line by line and as JSON.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(report_evidence, .timeout = 180);

static const char REVIEW_MD[] =
	"---\nmax_retries: 5\nchecks:\n  - name: tests\n    run: sh tests/test_calc.sh\n---\n"
	"# Review of calc.sh\n\ncalc.sh A B prints A + B; README.md says so.\n";

static const char TEST_CALC[] =
	"r=$(sh calc.sh 2 3)\n"
	"if [ \"$r\" = 5 ]; then echo 'ok: 2 + 3 = 5'; else echo \"FAIL: got $r\" >&2; exit 1; fi\n";

/* Turn by turn (its prompt and feedback file, matched newest case first:
 * the prompt keeps the history): a wrong calc.sh; after the check, the
 * fix; after the review, nothing (it forgets); told its turn changed
 * nothing, README.md. */
static const char WORKER[] =
	"#!/bin/sh\n"
	"fb=\"$(cat) $(cat \"${FORGE_FEEDBACK_FILE:-/dev/null}\")\"\n"
	"case \"$fb\" in\n"
	"  *\"changed nothing\"*) echo 'calc.sh A B prints A + B.' > README.md ;;\n"
	"  *BLOCKING*) : ;;\n"
	"  *\"check 'tests' failed\"*) printf 'echo $(($1 + $2))\\n' > calc.sh ;;\n"
	"  *) printf 'echo $(($1 - $2))\\n' > calc.sh ;;\n"
	"esac\n";

static const char REVIEWER[] =
	"#!/bin/sh\n"
	"if [ ! -f README.md ]; then\n"
	"  printf '| # | Severity | Finding | Location | Evidence |\\n|---|---|---|---|---|\\n'\n"
	"  printf '| 1 | BLOCKING | README.md is missing | README.md | ls |\\n\\n'\n"
	"  printf '<!-- review-result: findings=1 -->\\n'\n"
	"  exit 0\n"
	"fi\n"
	"printf '| # | Severity | Finding | Location | Evidence |\\n|---|---|---|---|---|\\n'\n"
	"printf '| 1 | NITPICK | README.md could show an example | README.md:1 | cat README.md |\\n\\n'\n"
	"printf '**Verified:** sh tests/test_calc.sh -> %s\\n\\n' \"$(sh tests/test_calc.sh)\"\n"
	"printf '<!-- review-result: findings=1 -->\\n'\n";

struct run {
	struct fgw w;  /* the tree: a git workspace, the calc skill, task.json, result.json */
	struct fgt_proc p;
};

static void run_step(struct run *r)
{
	fgw_init(&r->w);
	char *w = fgw_script(&r->w, "worker.sh", "", WORKER), *v = fgw_script(&r->w, "reviewer.sh", "", REVIEWER);
	char *wcmd = fgt_fmt("FORGE_WORKER_CMD=sh %s", w), *rcmd = fgt_fmt("FORGE_REVIEWER_CMD=sh %s", v);

	fgw_write(&r->w, "skills/default/calc/review.md", REVIEW_MD);
	fgw_write(&r->w, "ws/tests/test_calc.sh", TEST_CALC);
	fgw_write(&r->w, "ws/calc.sh", "echo 0\n");
	fge_git_commit_all(r->w.ws);
	fgw_task(&r->w, "{\"task_key\":\"CALC-1\",\"summary\":\"Fix add\",\"description\":\"Add.\"}\n");
	const char *argv[] = { FG_RUNNER_BIN, "run", "--engine", "local", "--workspace", r->w.ws,
			       "--step", "calc", "--skill", "calc", "--task-key", "CALC-1",
			       "--task-file", r->w.task, "--skills-dir", r->w.skills, "--entrypoint", FG_ENTRYPOINT_BIN,
			       "--result", r->w.result, NULL };
	const char *env[] = { wcmd, rcmd, "AUTO_REVIEW_MAX_RETRIES",
			      "AUTO_REVIEW_STOP_WHEN_STALLED", NULL };
	cr_assert_eq(fgt_run(&r->p, argv, env, NULL, NULL, 120), 0);
	cr_assert_eq(r->p.exit_code, 0, "stderr:\n%s", r->p.err);
	free(w); free(v); free(wcmd); free(rcmd);
}

static void run_free(struct run *r)
{
	fgt_proc_release(&r->p);
	fgw_release(&r->w);
}

static char *report(const struct run *r, const char *format)
{
	struct fgt_proc p;
	const char *argv[] = { FG_RUNNER_BIN, "report", "--format", format, r->w.result, NULL };
	char *out;

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 60), 0);
	cr_assert_eq(p.exit_code, 0, "report: %s", p.err);
	out = fgt_fmt("%s", p.out);
	fgt_proc_release(&p);
	return out;
}

/* Each wanted line is in text, in this order. */
static void assert_in_order(const char *text, const char *const *want, size_t n)
{
	const char *at = text;

	for (size_t i = 0; i < n; i++) {
		const char *f = strstr(at, want[i]);

		cr_assert_not_null(f, "missing, or out of order: '%s' in:\n%s", want[i], text);
		at = f + strlen(want[i]);
	}
}

Test(report_evidence, markdown_shows_checks_changes_no_change_advice_and_verified)
{
	struct run r;

	run_step(&r);
	char *md = report(&r, "markdown");
	/* The diff by its path, which the result's cycle_dir gives. */
	/* The diff by its path, which the result's cycle_dir gives (inert Markdown). */
	char *changes = fgt_fmt("**Changes** (cycle 4, since the last review): 1 file(s) · diff: ");
	const char *want[] = {
		"### CALC-1 — calc\n\n**State:** approved · **Skill:** calc · **Cycles:** 4/5\n\n",
		"| 1 | rejected (check failed) | The check \\'tests\\' failed with exit code 1",
		"| 2 | rejected | \\| \\# \\| Severity \\| Finding",
		"| 3 | rejected (no change) | The worker\\'s last turn changed nothing in the workspace",
		"| 4 | approved (advice only) |",
		"**Checks** (cycle 4): tests passed (exit code 0, ",
		changes,
		"**Advice (listed, not looped on):**\n\n| role | severity | location | finding |\n|---|---|---|---|\n"
		"| default | NITPICK | README\\.md\\:1 | README\\.md could show an example |\n\n",
		"**Verified:**\n\n- sh tests\\/test\\_calc\\.sh \\-\\> ok\\: 2 \\+ 3 \\= 5\n",
	};
	assert_in_order(md, want, sizeof(want) / sizeof(want[0]));
	cr_assert(strstr(md, "\\/\\.forge\\/calc\\/review\\_cycle\\_4\\.diff\n\n| file | change | lines |\n|---|---|---|\n"
			 "| README\\.md | added | +1 −0 |\n\n"), "%s", md);
	cr_assert(strstr(r.p.err, "calc: approved in 4/5 cycles (1 advice finding, not looped on)"), "%s", r.p.err);
	cr_assert_null(strstr(md, "**Open feedback**"), "%s", md);
	free(md);
	free(changes);
	run_free(&r);
}

static const cJSON *at(const cJSON *arr, int i)
{
	const cJSON *e = cJSON_GetArrayItem(arr, i);

	cr_assert_not_null(e, "no item %d", i);
	return e;
}

Test(report_evidence, json_cycles_carry_the_evidence_as_the_cycle_files_do)
{
	struct run r;

	run_step(&r);
	char *text = report(&r, "json");
	cJSON *root = cJSON_Parse(text);
	cr_assert_not_null(root, "%s", text);
	const cJSON *e = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "entries"), "CALC-1__calc");
	const cJSON *cycles = cJSON_GetObjectItem(e, "cycles");
	cr_assert_eq(cJSON_GetArraySize(cycles), 4);
	const cJSON *k1 = at(cJSON_GetObjectItem(at(cycles, 0), "checks"), 0);
	cr_assert_str_eq(fge_jstr(k1, "name"), "tests");
	cr_assert_eq(fge_jint(k1, "exit_code"), 1);
	cr_assert(strstr(fge_jstr(k1, "output_tail"), "FAIL: got -1"), "%s", fge_jstr(k1, "output_tail"));
	cr_assert_str_eq(fge_jstr(k1, "log"), "review_cycle_1.check.tests.log");
	cr_assert_str_eq(fge_jstr(at(cycles, 0), "changes_since"), "step");
	const cJSON *ch1 = at(cJSON_GetObjectItem(at(cycles, 0), "changes"), 0);
	cr_assert_str_eq(fge_jstr(ch1, "path"), "calc.sh");
	cr_assert_str_eq(fge_jstr(ch1, "status"), "modified");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(at(cycles, 2), "no_change")));
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(at(cycles, 2), "changes")), 0);
	cr_assert_null(cJSON_GetObjectItem(at(cycles, 1), "no_change"));
	const cJSON *c4 = at(cycles, 3);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c4, "advice_only")));
	cr_assert_str_eq(fge_jstr(c4, "diff"), "review_cycle_4.diff");
	cr_assert_str_eq(fge_jstr(c4, "changes_since"), "review");
	cr_assert_str_eq(at(cJSON_GetObjectItem(c4, "verified"), 0)->valuestring,
			 "sh tests/test_calc.sh -> ok: 2 + 3 = 5");
	cr_assert_str_eq(fge_jstr(at(cJSON_GetObjectItem(e, "advice_findings"), 0), "severity"), "NITPICK");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(e, "open_findings")), 0);
	/* The result keeps the approval's advice beside its state. */
	cJSON *res = fge_json_file(r.w.result, NULL);
	cr_assert_str_eq(fge_jstr(at(cJSON_GetObjectItem(res, "advice"), 0), "severity"), "NITPICK");
	cr_assert_not_null(fge_jstr(res, "cycle_dir"));
	cJSON_Delete(res);
	cJSON_Delete(root);
	free(text);
	run_free(&r);
}
