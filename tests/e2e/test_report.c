/*
 * test_report.c - forge-runner report over the result files of real runs:
 * the markdown and JSON forms line by line, the same key twice, the exit
 * codes, --only-open, and the evidence (checks, changes, verified lines)
 * as the cycle files carry it.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fge2e.h"
#include "fgloop.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(report, .timeout = 180);

/* ---- forge-runner report over results of real runs ---- */

/* ABC-1 implement_task: exhausted, two cycles of two-line feedback. */
static const struct fgl_spec impl_spec = {
	"implement_task", "ABC-1", "---\nmax_retries: 2\n---\nReview the work.\n",
	"printf 'REJECTED\\nimplement: problem %s remains\\nsee src/parse.c:42\\n' $n\n", NULL,
};
/* ABC-1 local_review: exhausted, one line each, a '|' to escape. */
static const struct fgl_spec local_spec = {
	"local_review", "ABC-1", "---\nmax_retries: 2\n---\nReview the work.\n",
	"printf 'REJECTED\\nlocal: a|b unquoted, pass %s\\n' $n\n", NULL,
};
/* XYZ-2 implement_task: rejected once, then approved. */
static const struct fgl_spec other_spec = {
	"implement_task", "XYZ-2", "---\nmax_retries: 3\n---\nReview the work.\n",
	"if [ $n = 1 ]; then printf 'REJECTED\\nxyz: add a test\\n'; else echo APPROVED; fi\n", NULL,
};

/* Three real runs, their result files copied to dir/r1.json, r2, r3. */
struct three {
	char *dir;
	struct fgl run[3];
};

static void three_run(struct three *t)
{
	const struct fgl_spec *specs[3] = { &impl_spec, &local_spec, &other_spec };

	t->dir = fgt_tmpdir();
	for (int i = 0; i < 3; i++) {
		char *text, *name = fgt_fmt("r%d.json", i + 1);

		fgl_run(&t->run[i], specs[i]);
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

static void three_release(struct three *t)
{
	for (int i = 0; i < 3; i++)
		fgl_release(&t->run[i]);
	fgt_rm_rf(t->dir);
	free(t->dir);
}

/* forge-runner report ARGS... run in dir. */
static void report_in(struct fgt_proc *p, const char *dir, const char *const *args)
{
	const char *argv[16] = { FG_RUNNER_BIN, "report" };
	size_t n = 2;

	for (size_t i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	cr_assert_eq(fgt_run(p, argv, NULL, dir, NULL, 30), 0);
	cr_assert_eq(p->timed_out, 0);
}

/* A step's changes as the report shows them: the worker of every run
 * (tests/helpers/fgloop.c) changes notes.txt each turn. */
#define NOTES_CHANGED \
	"", "**Changes** (cycle 2, since the last review): 1 file(s)", "", "| file | change | lines |", \
	"|---|---|---|", "| notes\\.txt | modified | — |"

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

Test(report, report_markdown_line_by_line)
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
		NOTES_CHANGED,
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
		NOTES_CHANGED,
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
		NOTES_CHANGED,
	};

	three_run(&t);
	report_in(&p, t.dir, args);
	fgt_assert_exit(&p, 0);
	cr_assert_str_eq(p.err, "");
	assert_lines(p.out, want, sizeof(want) / sizeof(want[0]));
	fgt_proc_release(&p);
	three_release(&t);
}

/* The JSON entry key of run i matches that run's result file. */
static void assert_entry(const cJSON *e, const struct fgl *l, const char *source)
{
	const cJSON *rc = fgl_cycles(l), *ec = cJSON_GetObjectItem(e, "cycles");
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

Test(report, report_json_keys_every_step_of_every_task)
{
	struct three t;
	struct fgt_proc p;
	const char *args[] = { "--format", "json", "r2.json", "r3.json", "r1.json", NULL };
	const char *keys[] = { "ABC-1__implement_task", "ABC-1__local_review", "XYZ-2__implement_task" };
	const int run_of[] = { 0, 1, 2 };
	cJSON *o, *entries, *e;
	int i = 0;

	three_run(&t);
	report_in(&p, t.dir, args);
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
	three_release(&t);
}

/* Writes dir/old.json: r1.json with every timestamp moved back to 2020. */
static void write_older_copy(const struct three *t)
{
	char *path = fgl_in_dir(t->dir, "r1.json"), *text = fgt_read(path, NULL), *out;
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

	report_in(&p, t->dir, args);
	cr_assert_eq(p.exit_code, 0, "a replaced duplicate is no error; stderr: %s", p.err);
	cr_assert_str_eq(p.err, want_err);
	o = cJSON_Parse(p.out);
	entries = cJSON_GetObjectItem(o, "entries");
	cr_assert_eq(cJSON_GetArraySize(entries), 3, "merged, never overwritten: %s", p.out);
	e = cJSON_GetObjectItem(entries, "ABC-1__implement_task");
	assert_entry(e, &t->run[0], "r1.json");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "warnings")), 1);
	/* The same text as on stderr, without the prefix and the newline. */
	warning = fgt_fmt("forge-runner: warning: %s\n",
			  cJSON_GetArrayItem(cJSON_GetObjectItem(o, "warnings"), 0)->valuestring);
	cr_assert_str_eq(warning, want_err);
	free(warning);
	cJSON_Delete(o);
	fgt_proc_release(&p);
}

Test(report, report_same_key_twice_keeps_the_newer_and_says_so)
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
	cs = fgl_cycles(&t.run[0]);
	stamp = fge_jstr(cJSON_GetArrayItem(cs, cJSON_GetArraySize(cs) - 1), "timestamp");
	want = fgt_fmt("forge-runner: warning: duplicate key 'ABC-1__implement_task': kept 'r1.json' "
		       "(its last cycle is newer: %s after 2020-01-01T00:00:00Z), dropped 'old.json'\n",
		       stamp);
	assert_kept_r1(&t, older_last, want);
	assert_kept_r1(&t, older_first, want);
	free(want);
	assert_kept_r1(&t, same_file, "forge-runner: warning: duplicate key 'ABC-1__implement_task': "
		       "kept 'r1.json' (last cycles equally recent, named later), dropped 'r1.json'\n");
	three_release(&t);
}

Test(report, report_exit_codes)
{
	struct three t;
	struct fgt_proc p;
	const char *missing[] = { "r1.json", "nope.json", "--format", "markdown", NULL };
	const char *not_result[] = { "r1.json", "cycle.json", NULL };
	const char *none[] = { "--format", "markdown", NULL };
	const char *bad_format[] = { "r1.json", "--format", "xml", NULL };
	char *cycle;

	three_run(&t);
	report_in(&p, t.dir, missing);
	cr_assert_eq(p.exit_code, 1);
	cr_assert_str_eq(p.err, "forge-runner: warning: cannot read 'nope.json': No such file or directory\n");
	cr_assert_not_null(strstr(p.out, "### ABC-1 — implement_task\n"), "the others are still reported");
	fgt_proc_release(&p);
	/* A cycle file is not a result file. */
	cycle = cJSON_PrintUnformatted(cJSON_GetArrayItem(fgl_cycles(&t.run[0]), 0));
	fge_write_in(t.dir, "cycle.json", cycle);
	free(cycle);
	report_in(&p, t.dir, not_result);
	cr_assert_eq(p.exit_code, 1);
	cr_assert_not_null(strstr(p.err, "cannot read 'cycle.json': not a result file: "), "%s", p.err);
	cr_assert_not_null(strstr(p.out, "\"ABC-1__implement_task\""));
	fgt_proc_release(&p);
	report_in(&p, t.dir, none);
	cr_assert_eq(p.exit_code, 2);
	cr_assert_str_eq(p.out, "");
	cr_assert_not_null(strstr(p.err, "try 'forge-runner report --help'"));
	fgt_proc_release(&p);
	report_in(&p, t.dir, bad_format);
	cr_assert_eq(p.exit_code, 2);
	cr_assert_str_eq(p.out, "");
	fgt_proc_release(&p);
	three_release(&t);
}

Test(report, report_only_open_shows_a_stalled_step)
{
	struct fgl l;
	struct three t;
	struct fgt_proc p;
	const struct fgl_spec s = { "plan_task", "ABC-1",
				"---\nmax_retries: 5\nstop_when_stalled: true\n---\nReview the plan.\n",
				FGL_REPEATING_REVIEWER, NULL };
	const char *args[] = { "--format", "markdown", "--only-open", "r1.json", "r3.json", "stalled.json", NULL };
	char *text;

	three_run(&t);
	fgl_run(&l, &s);
	text = fgt_read(l.w.result, NULL);
	fge_write_in(t.dir, "stalled.json", text);
	free(text);
	report_in(&p, t.dir, args);
	fgt_assert_exit(&p, 0);
	cr_assert_not_null(strstr(p.out, "### ABC-1 — plan_task\n\n**State:** stalled · **Skill:** impl · "
				  "**Cycles:** 2/5\n"), "%s", p.out);
	cr_assert_not_null(strstr(p.out, "**Open feedback** (cycle 2):\n\n> Missing tests\n> for parse\\.c\n"),
			   "%s", p.out);
	cr_assert_not_null(strstr(p.out, "### ABC-1 — implement_task\n"));
	cr_assert_null(strstr(p.out, "XYZ-2"), "approved is not open: %s", p.out);
	fgt_proc_release(&p);
	fgl_release(&l);
	three_release(&t);
}

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

static void run_release(struct run *r)
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

Test(report, markdown_shows_checks_changes_no_change_advice_and_verified)
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
	run_release(&r);
}

static const cJSON *at(const cJSON *arr, int i)
{
	const cJSON *e = cJSON_GetArrayItem(arr, i);

	cr_assert_not_null(e, "no item %d", i);
	return e;
}

Test(report, json_cycles_carry_the_evidence_as_the_cycle_files_do)
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
	fge_assert_strs(ch1, "path", "calc.sh", "status", "modified");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(at(cycles, 2), "no_change")));
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(at(cycles, 2), "changes")), 0);
	cr_assert_null(cJSON_GetObjectItem(at(cycles, 1), "no_change"));
	const cJSON *c4 = at(cycles, 3);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c4, "advice_only")));
	fge_assert_strs(c4, "diff", "review_cycle_4.diff", "changes_since", "review");
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
	run_release(&r);
}
