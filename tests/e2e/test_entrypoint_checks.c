/*
 * test_entrypoint_checks.c - review.md checks in the real forge-entrypoint:
 * a failing check rejects the cycle without calling the reviewer, a passing
 * one is evidence in the reviewer's prompt and the cycle file, a check that
 * cannot start is exit 2 before the worker runs, a hung check times out.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"
#include "forge/util.h"

TestSuite(entrypoint_checks, .timeout = 180);

static const cJSON *member(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* The test script the checks run: calc.sh add 2 3 must print 5. */
static void calc_test(struct fgw *w)
{
	fge_write_in(w->ws, "tests/test_calc.sh",
		     "r=$(sh calc.sh 2 3)\n[ \"$r\" = 5 ] && echo \"ok: 2+3=5\" && exit 0\n"
		     "echo \"FAIL: 2+3 gave '$r'\" >&2\nexit 1\n");
}

Test(entrypoint_checks, failing_check_rejects_without_the_reviewer_and_passing_one_is_evidence)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init(&w);
	fgw_task(&w, NULL);
	calc_test(&w);
	fgw_review_md(&w, "default", "---\nmax_retries: 3\nchecks:\n  - name: tests\n"
				    "    run: sh tests/test_calc.sh {cycle}\n    timeout_seconds: 20\n---\nCheck.\n");
	char *wk = fgw_script(&w, "worker.sh", NULL,
			     "if [ -n \"$FORGE_FEEDBACK_FILE\" ]; then cp \"$FORGE_FEEDBACK_FILE\" ../feedback.txt;\n"
			     "  echo 'echo $(($1 + $2))' > calc.sh; else echo 'echo $(($1 - $2))' > calc.sh; fi\n");
	char *rv = fgw_script(&w, "reviewer.sh", NULL,
			     "echo $FORGE_CYCLE >> ../reviewer_calls.txt\ncp \"$FORGE_PROMPT_FILE\" ../rprompt.txt\n"
			     "echo APPROVED\n");
	fgw_entrypoint(&w, &p, wk, rv, NULL);
	fgt_assert_exit(&p, 0);
	cJSON *c1 = fgw_step_json(&w, "review_cycle_1.json");
	cr_assert_str_eq(member(c1, "verdict")->valuestring, "rejected");
	cr_assert_str_eq(member(c1, "format")->valuestring, "checks");
	cr_assert_null(member(c1, "reviewer_log"));
	const cJSON *k = cJSON_GetArrayItem(member(c1, "checks"), 0);
	cr_assert_str_eq(member(k, "name")->valuestring, "tests");
	cr_assert_eq(member(k, "exit_code")->valueint, 1);
	cr_assert(strstr(member(k, "output_tail")->valuestring, "FAIL: 2+3 gave '-1'"));
	cr_assert_str_eq(member(k, "log")->valuestring, "review_cycle_1.check.tests.log");
	cr_assert(strstr(member(c1, "feedback")->valuestring, "The check 'tests' failed with exit code 1"));
	char *log = fgw_step_file(&w, "review_cycle_1.check.tests.log");
	cr_assert(log && strstr(log, "FAIL: 2+3 gave '-1'"), "%s", log ? log : "(no log)");
	char *fb = fgw_read(&w, "feedback.txt");
	cr_assert(fb && strstr(fb, "FAIL: 2+3 gave '-1'"), "the worker gets the output: %s", fb ? fb : "");
	/* The reviewer ran once, in cycle 2, with the passing check in its prompt. */
	char *calls = fgw_read(&w, "reviewer_calls.txt");
	cr_assert_str_eq(calls, "2\n");
	char *prompt = fgw_read(&w, "rprompt.txt");
	cr_assert(strstr(prompt, "## Checks that ran after the worker's turn"), "%s", prompt);
	cr_assert(strstr(prompt, "`tests` (sh tests/test_calc.sh {cycle}): exit code 0"), "%s", prompt);
	cr_assert(strstr(prompt, "ok: 2+3=5"), "%s", prompt);
	cJSON *c2 = fgw_step_json(&w, "review_cycle_2.json");
	cr_assert_str_eq(member(c2, "verdict")->valuestring, "approved");
	cr_assert_eq(member(cJSON_GetArrayItem(member(c2, "checks"), 0), "exit_code")->valueint, 0);
	cr_assert(strstr(p.err, "[check:tests] FAIL: 2+3 gave '-1'"), "%s", p.err);
	cJSON_Delete(c1);
	cJSON_Delete(c2);
	free(log); free(fb); free(calls); free(prompt); free(wk); free(rv);
	fgw_release_run(&w, &p);
}

Test(entrypoint_checks, a_check_that_cannot_start_is_exit_2_before_the_worker)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nchecks:\n  - name: tests\n    run: no-such-program-here --x\n"
				    "  - name: local\n    run: ./missing.sh\n---\nCheck.\n");
	char *wk = fgw_script(&w, "worker.sh", NULL, "touch ../worker_ran\n");
	fgw_entrypoint(&w, &p, wk, "true", NULL);
	fgt_assert_exit(&p, 2);
	cr_assert(strstr(p.err, "error: check 'tests' (review.md line 3) cannot start: 'no-such-program-here'"),
		  "%s", p.err);
	cr_assert(strstr(p.err, "error: check 'local' (review.md line 5) cannot start: './missing.sh'"), "%s",
		  p.err);
	cr_assert_not(fgw_exists(&w, "worker_ran"), "the worker must not run");
	free(wk);
	fgw_release_run(&w, &p);
}

Test(entrypoint_checks, a_hung_check_times_out_and_rejects)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nmax_retries: 1\nchecks:\n  - name: hang\n    run: sleep 30\n"
				    "    timeout_seconds: 1\n---\nCheck.\n");
	fgw_entrypoint(&w, &p, "true", "sh -c 'touch ../reviewer_ran; echo APPROVED'", NULL);
	fgt_assert_exit(&p, 0);
	cJSON *c = fgw_step_json(&w, "review_cycle_1.json");
	const cJSON *k = cJSON_GetArrayItem(member(c, "checks"), 0);
	cr_assert(fge_jtrue(k, "timed_out"));
	cr_assert_eq(member(k, "exit_code")->valueint, -1);
	cr_assert(strstr(member(c, "feedback")->valuestring, "The check 'hang' timed out after 1 s"));
	cr_assert_not(fge_exists_in(w.ws, "reviewer_ran"));
	cJSON *s = fgw_step_json(&w, "review_summary.json");
	cr_assert_str_eq(member(s, "state")->valuestring, "exhausted");
	cJSON_Delete(s);
	cJSON_Delete(c);
	fgw_release_run(&w, &p);
}

Test(entrypoint_checks, a_check_runs_the_skills_own_script_with_where_it_stands)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nmax_retries: 1\nchecks:\n  - name: lint\n"
				    "    run: sh {skill_dir}/lint.sh {skill_dir}\n---\nCheck.\n");
	/* Shipped with the skill, beside review.md: out of the worker's reach. */
	fge_write_in(w.skills, "default/impl/lint.sh",
		     "printf '%s\\n' \"arg=$1\" \"dir=$FORGE_SKILL_DIR\" \"ws=$FORGE_WORKSPACE\" "
		     "\"step=$FORGE_STEP_NAME\" \"key=$FORGE_TASK_KEY\" > ../check_env.txt\n");
	fgw_entrypoint(&w, &p, "true", "echo APPROVED", NULL);
	fgt_assert_exit(&p, 0);
	char *env = fgw_read(&w, "check_env.txt");
	char *dir = fgt_fmt("%s/default/impl", w.skills);
	char *want = fgt_fmt("arg=%s\ndir=%s\nws=%s\nstep=impl\nkey=ABC-12\n", dir, dir, w.ws);
	cr_assert_str_eq(env, want);
	free(env); free(dir); free(want);
	fgw_release_run(&w, &p);
}

Test(entrypoint_checks, a_missing_skill_dir_script_is_exit_2_before_the_worker)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nchecks:\n  - name: lint\n    run: sh {skill_dir}/lint.sh\n---\nCheck.\n");
	char *wk = fgw_script(&w, "worker.sh", NULL, "touch ../worker_ran\n");
	fgw_entrypoint(&w, &p, wk, "echo APPROVED", NULL);
	fgt_assert_exit(&p, 2);
	char *path = fgt_fmt("'%s/default/impl/lint.sh' does not exist", w.skills);
	cr_assert(strstr(p.err, "error: check 'lint' (review.md line 3) cannot run: ") && strstr(p.err, path),
		  "%s", p.err);
	cr_assert_not(fgw_exists(&w, "worker_ran"), "the worker must not run");
	free(path); free(wk);
	fgw_release_run(&w, &p);
}

/* A check whose command is not found (127) or cannot be executed (126)
 * judged nothing: the step ends failed, config_error, exit 2, with the
 * check's output in the reason, and the worker is not sent back. */
Test(entrypoint_checks, a_check_that_cannot_run_ends_the_step_as_a_config_error)
{
	static const char *const runs[] = { "sh -c 'no-such-lint-xyz --all'", "sh -c './not-exec.sh'" };

	for (size_t i = 0; i < ARRAY_SIZE(runs); i++) {
		struct fgw w;
		struct fgt_proc p;

		fgw_init(&w);
		fgw_task(&w, NULL);
		fge_write_in(w.ws, "not-exec.sh", "echo hi\n");
		char *md = fgt_fmt("---\nmax_retries: 3\nchecks:\n  - name: lint\n    run: %s\n---\nCheck.\n", runs[i]);
		fgw_review_md(&w, "default", md);
		char *wk = fgw_script(&w, "worker.sh", NULL, "echo run >> ../worker_runs\n");
		fgw_entrypoint(&w, &p, wk, "sh -c 'touch ../reviewer_ran; echo APPROVED'", NULL);
		cr_assert_eq(p.exit_code, 2, "case %zu: stderr:\n%s", i, p.err);
		char *runs_txt = fgw_read(&w, "worker_runs");
		cr_assert_str_eq(runs_txt, "run\n", "case %zu: no worker turn is spent on it", i);
		cr_assert_not(fgw_exists(&w, "reviewer_ran"));
		cr_assert_not(fgw_step_exists(&w, "review_cycle_1.json"), "case %zu: no cycle judged", i);
		cJSON *s = fgw_step_json(&w, "review_summary.json");
		cr_assert_str_eq(member(s, "state")->valuestring, "failed");
		const cJSON *f = member(s, "failure");
		cr_assert_str_eq(member(f, "cause")->valuestring, "config_error");
		const char *reason = member(f, "reason")->valuestring;
		cr_assert(strstr(reason, i ? "exit code 126" : "exit code 127"), "%s", reason);
		cr_assert(strstr(reason, i ? "Permission denied" : "no-such-lint-xyz"), "the output: %s", reason);
		cJSON_Delete(s);
		free(md); free(wk); free(runs_txt);
		fgt_proc_release(&p);
		fgw_release(&w);
	}
}
