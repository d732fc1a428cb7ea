/*
 * test_loop.c - the review loop end to end: the real forge-entrypoint with
 * scripted sh agents in a temporary workspace (approval, rejection and
 * feedback, exhaustion, a failing reviewer or worker, review.md lookup,
 * the cycle directory), and the shipped demo.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(loop, .timeout = 120);

/* A worker that records its prompt, feedback and cycle per run. */
static const char RECORDING_WORKER[] =
	"cat > \"$FORGE_WORKSPACE/../worker_stdin_$FORGE_CYCLE.txt\"\n"
	"cp \"$FORGE_PROMPT_FILE\" \"$FORGE_WORKSPACE/../worker_promptfile_$FORGE_CYCLE.txt\"\n"
	"if [ -n \"$FORGE_FEEDBACK_FILE\" ]; then cp \"$FORGE_FEEDBACK_FILE\" \"$FORGE_WORKSPACE/../worker_feedback_$FORGE_CYCLE.txt\"; fi\n"
	"echo \"role=$FORGE_ROLE cycle=$FORGE_CYCLE step=$FORGE_STEP_NAME skill=$FORGE_SKILL_NAME key=$FORGE_TASK_KEY run=$FORGE_RUN_ID pwd=$(pwd)\" >> \"$FORGE_WORKSPACE/../worker_env.txt\"\n"
	"echo hello >> greeting.txt\n";

static char *recording_worker(struct fgw *w)
{
	return fgw_script(w, "worker.sh", NULL, RECORDING_WORKER);
}

/* Lines of text (NULL: 0). */
static int count_lines(const char *text)
{
	int n = 0;

	for (const char *p = text; p && *p; p++)
		n += *p == '\n';
	return n;
}

/* A reviewer that records its prompts, then runs body. */
static char *reviewer(struct fgw *w, const char *body)
{
	char *text = fgt_fmt("cat > \"$FORGE_WORKSPACE/../reviewer_stdin_$FORGE_CYCLE.txt\"\n"
			     "cp \"$FORGE_SYSTEM_PROMPT_FILE\" \"$FORGE_WORKSPACE/../reviewer_system.txt\"\n"
			     "echo ran >> \"$FORGE_WORKSPACE/../reviewer_ran.txt\"\n%s", body);
	char *p = fgw_script(w, "reviewer.sh", NULL, text);

	free(text);
	return p;
}

/* The recording worker and reviewer(body), run by the entrypoint with extra. */
static void run_loop(struct fgw *w, struct fgt_proc *p, const char *body, const char *const *extra)
{
	char *wk = recording_worker(w), *rv = reviewer(w, body);

	fgw_entrypoint(w, p, wk, rv, extra);
	free(wk);
	free(rv);
}

Test(loop, approve_on_first_cycle)
{
	struct fgw w;
	struct fgt_proc p;
	cJSON *c, *s;

	fgw_init_step(&w, "---\nmax_retries: 3\n---\nCheck greeting.txt.\n");
	run_loop(&w, &p, "echo 'Looks right. APPROVED'", NULL);
	fgt_assert_exit(&p, 0);
	c = fgw_step_json(&w, "review_cycle_1.json");
	cr_assert_eq(fge_jint(c, "cycle"), 1);
	cr_assert_eq(fge_jint(c, "max_cycles"), 3);
	fge_assert_strs(c, "verdict", "approved", "feedback", "", "skill", "impl", "run_id", "test-run",
			"format", "marker", "reviewer_log", "review_cycle_1.reviewer.log");
	cr_assert(!fgw_step_exists(&w, "review_cycle_2.json"));
	char *log = fgw_step_file(&w, "review_cycle_1.reviewer.log");
	cr_assert_str_eq(log, "Looks right. APPROVED\n");
	s = fgw_step_json(&w, "review_summary.json");
	cr_assert_str_eq(fge_jstr(s, "state"), "approved");
	cr_assert_eq(fge_jint(s, "cycles"), 1);
	cr_assert_str_eq(fge_jstr(s, "task_key"), "ABC-12");
	fgt_assert_has(p.err, "Review cycle 1/3: APPROVED", "[reviewer] Looks right. APPROVED");
	/* The agent's environment and working directory. */
	char *env = fgw_read(&w, "worker_env.txt");
	char *want = fgt_fmt("role=worker cycle=0 step=impl skill=impl key=ABC-12 run=test-run pwd=%s\n", w.ws);
	cr_assert_str_eq(env, want);
	/* The prompt on stdin (EOF after it) is the prompt file. */
	char *in = fgw_read(&w, "worker_stdin_0.txt"), *pf = fgw_read(&w, "worker_promptfile_0.txt");
	cr_assert(strstr(in, "Add a greeting") && strstr(in, "Write hello to greeting.txt"), "%s", in);
	cr_assert_str_eq(in, pf);
	char *sys = fgw_read(&w, "reviewer_system.txt");
	cr_assert(strstr(sys, "APPROVED") && strstr(sys, "Check greeting.txt."), "%s", sys);
	free(sys); free(in); free(pf); free(env); free(want); free(log);
	cJSON_Delete(c); cJSON_Delete(s);
	fgw_release_run(&w, &p);
}

Test(loop, reject_then_approve_feeds_back_to_worker)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "Check greeting.txt.\n");
	run_loop(&w, &p, "if [ \"$FORGE_CYCLE\" = 1 ]; then echo 'REJECTED: greeting.txt must say hello twice'; "
		 "else echo APPROVED; fi", NULL);
	fgt_assert_exit(&p, 0);
	cJSON *c1 = fgw_step_json(&w, "review_cycle_1.json"), *c2 = fgw_step_json(&w, "review_cycle_2.json");
	fge_assert_strs(c1, "verdict", "rejected", "feedback", "greeting.txt must say hello twice");
	cr_assert_str_eq(fge_jstr(c2, "verdict"), "approved");
	cr_assert(strstr(p.err, "Review cycle 1/3: REJECTED - greeting.txt must say hello twice"), "%s", p.err);
	/* The retry got the feedback: prompt section, feedback file, FORGE_CYCLE. */
	char *retry = fgw_read(&w, "worker_stdin_1.txt");
	char *fb = fgw_read(&w, "worker_feedback_1.txt");
	cr_assert(retry && strstr(retry, "## Reviewer Feedback"), "%s", retry);
	fgt_assert_has(retry, "greeting.txt must say hello twice", "Add a greeting");
	cr_assert(fb && strstr(fb, "greeting.txt must say hello twice"), "%s", fb);
	cr_assert(!fgw_exists(&w, "worker_feedback_0.txt"));
	/* Re-review with memory: cycle 2's reviewer sees cycle 1's feedback. */
	char *r2 = fgw_read(&w, "reviewer_stdin_2.txt");
	cr_assert(r2 && strstr(r2, "greeting.txt must say hello twice") && strstr(r2, "regression"), "%s", r2);
	cJSON *s = fgw_step_json(&w, "review_summary.json");
	cr_assert_str_eq(fge_jstr(s, "state"), "approved");
	cr_assert_eq(fge_jint(s, "cycles"), 2);
	free(retry); free(fb); free(r2);
	cJSON_Delete(c1); cJSON_Delete(c2); cJSON_Delete(s);
	fgw_release_run(&w, &p);
}

static void run_exhaustion(const char *fail_env, int want_exit)
{
	struct fgw w;
	struct fgt_proc p;
	const char *extra[] = { fail_env, NULL };

	fgw_init_step(&w, "---\nmax_retries: 2\n---\nBe strict.\n");
	run_loop(&w, &p, "echo \"REJECTED: still wrong ($FORGE_CYCLE)\"", fail_env ? extra : NULL);
	cr_assert_eq(p.exit_code, want_exit, "stderr:\n%s", p.err);
	cJSON *c2 = fgw_step_json(&w, "review_cycle_2.json"), *s = fgw_step_json(&w, "review_summary.json");
	cr_assert_str_eq(fge_jstr(c2, "verdict"), "rejected");
	cr_assert_eq(fge_jint(c2, "cycle"), 2);
	cr_assert_eq(fge_jint(c2, "max_cycles"), 2);
	cr_assert(!fgw_step_exists(&w, "review_cycle_3.json"));
	cr_assert_str_eq(fge_jstr(s, "state"), "exhausted");
	/* The worker ran twice: first run and one retry (none after the last cycle). */
	char *env = fgw_read(&w, "worker_env.txt");
	cr_assert(strstr(env, "cycle=1") && !strstr(env, "cycle=2"), "%s", env);
	free(env);
	cJSON_Delete(c2); cJSON_Delete(s);
	fgw_release_run(&w, &p);
}

Test(loop, exhaustion_exits_zero_by_default)
{
	run_exhaustion(NULL, 0);
}

Test(loop, exhaustion_exits_three_when_told_to_fail)
{
	run_exhaustion("AUTO_REVIEW_FAIL_ON_EXHAUSTION=1", 3);
}

/* One cycle with a misbehaving reviewer: a rejected cycle whose feedback says what happened. */
static void reviewer_failure(const char *body, const char *const *extra, const char *want_feedback,
			     const char *want_format)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nmax_retries: 1\n---\nCheck.\n");
	run_loop(&w, &p, body, extra);
	fgt_assert_exit(&p, 0);
	cJSON *c = fgw_step_json(&w, "review_cycle_1.json");
	cr_assert_str_eq(fge_jstr(c, "verdict"), "rejected");
	cr_assert(strstr(fge_jstr(c, "feedback"), want_feedback), "feedback: %s", fge_jstr(c, "feedback"));
	cr_assert_str_eq(fge_jstr(c, "format"), want_format);
	fgw_assert_step_strs(&w, "review_summary.json", "state", "exhausted");
	cJSON_Delete(c);
	fgw_release_run(&w, &p);
}

Test(loop, reviewer_nonzero_exit_is_a_rejection)
{
	reviewer_failure("echo APPROVED; exit 3", NULL, "reviewer exited with status 3", "none");
}

Test(loop, reviewer_crash_is_a_rejection)
{
	reviewer_failure("echo APPROVED; kill -SEGV $$", NULL, "reviewer was killed by signal 11", "none");
}

Test(loop, reviewer_timeout_is_a_rejection)
{
	const char *extra[] = { "FORGE_AGENT_TIMEOUT=0.3", NULL };

	reviewer_failure("echo APPROVED; sleep 60", extra, "timed out after 0.3 s", "none");
}

Test(loop, silent_hung_reviewer_is_stopped_by_idle_watchdog)
{
	const char *extra[] = { "FORGE_AGENT_IDLE_TIMEOUT=0.3", NULL };

	reviewer_failure("echo APPROVED; sleep 60", extra, "FORGE_AGENT_IDLE_TIMEOUT", "none");
}

Test(loop, reviewer_empty_output_is_a_rejection)
{
	reviewer_failure("printf '  \\n\\n'", NULL, "the reviewer printed nothing", "none");
}

Test(loop, reviewer_without_verdict_is_a_rejection)
{
	reviewer_failure("echo 'I looked at it and have thoughts.'", NULL, "Verdict could not be parsed", "none");
}

/* A reviewer that cannot be started burned every cycle (the
 * worker sent back each time, exhausted, exit 0). Its run is a rejected
 * cycle that says why, and the loop ends at once: state failed, exit 2
 * (configuration). The reviewer exists but its interpreter does not, so
 * exec fails when the loop runs it. */
Test(loop, missing_reviewer_binary_ends_the_loop_with_exit_2)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nmax_retries: 3\n---\nCheck.\n");
	char *wk = recording_worker(&w);
	char *rv = fgt_fmt("%s/reviewer-xyz", w.root);
	fgt_write(rv, "#!/nonexistent/interpreter\necho APPROVED\n");
	cr_assert_eq(chmod(rv, 0755), 0);
	char *cmd = fgt_fmt("%s --flag", rv);
	fgw_entrypoint(&w, &p, wk, cmd, NULL);
	fgt_assert_exit(&p, 2);
	cJSON *c = fgw_step_json(&w, "review_cycle_1.json");
	char *want = fgt_fmt("cannot run reviewer '%s': No such file or directory", rv);
	cr_assert(strstr(fge_jstr(c, "feedback"), want), "%s", fge_jstr(c, "feedback"));
	fgt_assert_has(p.err, "forge-entrypoint: error: the reviewer could not be started: ",
		       "check FORGE_REVIEWER_CMD");
	cr_assert(!fgw_step_exists(&w, "review_cycle_2.json"), "the loop went on");
	char *runs = fgw_read(&w, "worker_env.txt");
	cr_assert_eq(count_lines(runs), 1, "the worker was sent back:\n%s", runs);
	fgw_assert_step_strs(&w, "review_summary.json", "state", "failed");
	cJSON_Delete(c); free(wk); free(rv); free(cmd); free(want); free(runs);
	fgw_release_run(&w, &p);
}

/* A reviewer that only says "LGTM" cost a worker run per cycle
 * until exhausted. Two cycles in a row without a verdict (each re-asked)
 * end the loop failed (exit 1): the worker is not sent back a second time. */
Test(loop, a_reviewer_without_a_verdict_twice_ends_the_loop_failed)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nmax_retries: 5\n---\nCheck.\n");
	run_loop(&w, &p, "echo LGTM", NULL);
	fgt_assert_exit(&p, 1);
	cr_assert(fgw_step_exists(&w, "review_cycle_2.json"));
	cr_assert(!fgw_step_exists(&w, "review_cycle_3.json"), "a third cycle ran");
	cr_assert(strstr(p.err, "forge-entrypoint: the task failed: the review failed: the reviewer failed or "
			 "gave no verdict in cycles 1 and 2"), "%s", p.err);
	char *runs = fgw_read(&w, "worker_env.txt");
	cr_assert_eq(count_lines(runs), 2, "worker runs:\n%s", runs);
	char *asks = fgw_read(&w, "reviewer_ran.txt");
	cr_assert_eq(count_lines(asks), 4, "two asks in each cycle:\n%s", asks);
	fgw_assert_step_strs(&w, "review_summary.json", "state", "failed");
	free(runs); free(asks);
	fgw_release_run(&w, &p);
}

/* One cycle without a verdict is not enough: a reviewer that answers in
 * the next cycle goes on as before. */
Test(loop, one_cycle_without_a_verdict_goes_on)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nmax_retries: 3\n---\nCheck.\n");
	run_loop(&w, &p, "if [ \"$FORGE_CYCLE\" = 1 ]; then echo LGTM; else echo APPROVED; fi", NULL);
	fgt_assert_exit(&p, 0);
	fgw_assert_step_strs(&w, "review_summary.json", "state", "approved");
	fgw_release_run(&w, &p);
}

/* The preflight: a reviewer that cannot be found stops the run
 * before the worker ran (exit 2, no cycle file), instead of a rejected
 * cycle after a paid worker run. */
Test(loop, missing_reviewer_binary_stops_before_any_agent_runs)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nmax_retries: 1\n---\nCheck.\n");
	char *wk = recording_worker(&w);
	fgw_entrypoint(&w, &p, wk, "/nonexistent/reviewer-xyz --flag", NULL);
	fgt_assert_exit(&p, 2);
	cr_assert(strstr(p.err, "error: cannot run reviewer '/nonexistent/reviewer-xyz': no executable file "
			 "'/nonexistent/reviewer-xyz'"), "%s", p.err);
	cr_assert(!strstr(p.err, "running the worker"), "%s", p.err);
	cr_assert_not(fgt_exists(w.step_dir), "the cycle directory was created");
	free(wk);
	fgw_release_run(&w, &p);
}

Test(loop, worker_failure_on_first_run_fails_the_task)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "Check.\n");
	char *wk = fgw_script(&w, "worker.sh", NULL, "echo 'cannot do it' >&2; exit 4");
	char *rv = reviewer(&w, "echo APPROVED");
	fgw_entrypoint(&w, &p, wk, rv, NULL);
	fgt_assert_exit(&p, 1);
	fgt_assert_has(p.err, "worker exited with status 4", "[worker] cannot do it");
	cr_assert(!fgw_step_exists(&w, "review_cycle_1.json"));
	/* A summary by the failure's own name, not "no review.md". */
	char *why = fgw_summary_failure(&w, "worker_failed");
	cr_assert(strstr(why, "worker exited with status 4"), "%s", why);
	free(why);
	cr_assert(!fgw_exists(&w, "reviewer_ran.txt"), "the reviewer must not run");
	free(wk); free(rv);
	fgw_release_run(&w, &p);
}

Test(loop, worker_failure_on_retry_writes_synthetic_exhaustion)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nmax_retries: 3\n---\nCheck.\n");
	char *wk = fgw_script(&w, "worker.sh", NULL, "cat >/dev/null; [ \"$FORGE_CYCLE\" = 0 ] || exit 7");
	char *rv = reviewer(&w, "echo 'REJECTED: fix it'");
	fgw_entrypoint(&w, &p, wk, rv, NULL);
	cr_assert_eq(p.exit_code, 1, "a failed retry must never exit 0; stderr:\n%s", p.err);
	cr_assert(!fgw_step_exists(&w, "review_cycle_2.json"));
	cJSON *c = fgw_step_json(&w, "review_cycle_3.json");
	cr_assert_eq(fge_jint(c, "cycle"), 3);
	cr_assert_eq(fge_jint(c, "max_cycles"), 3);
	cr_assert_str_eq(fge_jstr(c, "verdict"), "rejected");
	cr_assert(fge_jtrue(c, "synthetic"));
	cr_assert(strstr(fge_jstr(c, "feedback"), "worker exited with status 7"), "%s", fge_jstr(c, "feedback"));
	fgw_assert_step_strs(&w, "review_summary.json", "state", "failed");
	cJSON_Delete(c); free(wk); free(rv);
	fgw_release_run(&w, &p);
}

static void review_skipped(const char *review_md, const char *const *extra, const char *want_state)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, NULL);
	if (review_md)
		fgw_review_md(&w, "default", review_md);
	char *wk = recording_worker(&w), *rv = reviewer(&w, "echo APPROVED");
	fgw_entrypoint(&w, &p, wk, review_md ? rv : NULL, extra);
	fgt_assert_exit(&p, 0);
	cr_assert(!fgw_exists(&w, "reviewer_ran.txt"), "the reviewer must not run");
	cr_assert(fge_exists_in(w.ws, "greeting.txt"), "the worker must run");
	cr_assert(!fgw_step_exists(&w, "review_cycle_1.json"));
	cJSON *s = fgw_step_json(&w, "review_summary.json");
	cr_assert_str_eq(fge_jstr(s, "state"), want_state);
	cr_assert_eq(fge_jint(s, "cycles"), 0);
	cJSON_Delete(s); free(wk); free(rv);
	fgw_release_run(&w, &p);
}

Test(loop, max_retries_zero_in_frontmatter_skips_review)
{
	review_skipped("---\nmax_retries: 0\n---\nCheck.\n", NULL, "disabled");
}

Test(loop, max_retries_zero_in_env_skips_review_despite_frontmatter)
{
	const char *extra[] = { "AUTO_REVIEW_MAX_RETRIES=0", NULL };

	review_skipped("---\nmax_retries: 3\n---\nCheck.\n", extra, "disabled");
}

Test(loop, no_review_md_means_no_reviewer)
{
	review_skipped(NULL, NULL, "no_review");
}

/* A misspelled skill silently skipped the review; now a warning
 * names the paths tried and the nearest skill that has a review.md. */
Test(loop, missing_review_md_warns_with_paths_and_nearest_skill)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, NULL);
	fgw_write(&w, "skills/default/impls/review.md", "Check.\n");
	fgw_run_step(&w, &p, RECORDING_WORKER, NULL, NULL);
	fgt_assert_exit(&p, 0);
	char *want = fgt_fmt("forge-entrypoint: warning: no review.md for skill 'impl' (tried "
			     "'%s/abc/impl/review.md', '%s/default/impl/review.md'; did you mean 'impls'?): "
			     "nothing is reviewed, the worker's result is final\n", w.skills, w.skills);
	cr_assert(strstr(p.err, want), "stderr:\n%s\nwanted:\n%s", p.err, want);
	free(want);
	fgw_release_run(&w, &p);
}

/* "max_retires: 1" ran with 3 cycles and no word outside lint. */
Test(loop, frontmatter_typo_warns_at_run_time)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nmax_retires: 1\n---\nCheck.\n");
	run_loop(&w, &p, "echo APPROVED", NULL);
	fgt_assert_exit(&p, 0);
	char *want = fgt_fmt("forge-entrypoint: warning: %s/default/impl/review.md:2: unknown field "
			     "'max_retires' is ignored (did you mean 'max_retries'?)\n", w.skills);
	cr_assert(strstr(p.err, want), "stderr:\n%s", p.err);
	free(want);
	fgw_release_run(&w, &p);
}

Test(loop, project_override_is_chosen)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "DEFAULT RULES\n");
	fgw_review_md(&w, "abc", "PROJECT RULES\n");
	run_loop(&w, &p, "echo APPROVED", NULL);
	fgt_assert_exit(&p, 0);
	char *sys = fgw_read(&w, "reviewer_system.txt");
	cr_assert(strstr(sys, "PROJECT RULES") && !strstr(sys, "DEFAULT RULES"), "%s", sys);
	cJSON *s = fgw_step_json(&w, "review_summary.json");
	cr_assert(strstr(fge_jstr(s, "review_md"), "/abc/impl/review.md"), "%s", fge_jstr(s, "review_md"));
	free(sys);
	cJSON_Delete(s);
	fgw_release_run(&w, &p);
}

/* FORGE_CYCLE_DIR: the cycle files and the summary go where the template
 * says (the Forge orchestrator's poller looks in
 * .forge/reviews/{task_key}__{skill}); a template that leaves the
 * workspace, directly or through a symlink, is a configuration error. */
Test(loop, cycle_dir_template_places_the_files)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nmax_retries: 3\n---\nCheck greeting.txt.\n");
	char *wk = recording_worker(&w), *rv = reviewer(&w, "echo APPROVED");
	free(w.step_dir);
	w.step_dir = fgt_fmt("%s/.forge/reviews/ABC-12__impl", w.ws);
	fgw_entrypoint(&w, &p, wk, rv, (const char *const[]){
		"FORGE_CYCLE_DIR=.forge/reviews/{task_key}__{skill}", NULL });
	fgt_assert_exit(&p, 0);
	cJSON *c = fgw_step_json(&w, "review_cycle_1.json");
	cJSON *s = fgw_step_json(&w, "review_summary.json");
	cr_assert_str_eq(fge_jstr(s, "state"), "approved");
	cr_assert(!fge_exists_in(w.ws, ".forge/impl"), "the default directory was made too");
	fgt_proc_release(&p);

	char *outside = fgt_fmt("%s/outside", w.root), *link = fgt_fmt("%s/.forge/linked", w.ws);
	cr_assert_eq(mkdir(outside, 0755), 0);
	cr_assert_eq(symlink(outside, link), 0);
	static const struct { const char *env, *want; } bad[] = {
		{ "FORGE_CYCLE_DIR=../{step}", "stay below the workspace" },
		{ "FORGE_CYCLE_DIR=.forge/{nope}", "unexpected brace" },
		{ "FORGE_CYCLE_DIR=.forge/linked/{step}", "symbolic link" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fgw_entrypoint(&w, &p, wk, rv, (const char *const[]){ bad[i].env, NULL });
		cr_assert_eq(p.exit_code, 2, "%s: exit %d; stderr:\n%s", bad[i].env, p.exit_code, p.err);
		cr_assert(strstr(p.err, bad[i].want), "%s: stderr:\n%s", bad[i].env, p.err);
		fgt_proc_release(&p);
	}
	cr_assert(!fge_exists_in(outside, "impl"), "followed the symlink out of the workspace");
	free(outside);
	free(link);
	cJSON_Delete(c);
	cJSON_Delete(s);
	free(wk);
	free(rv);
	fgw_release(&w);
}

/* Removes the demo's kept copy: its path is on the first line of out. */
static void rm_kept_copy(char *out)
{
	const char *tag = "== demo workspace: ";
	char *line = strstr(out, tag), *end;

	cr_assert(line);
	line += strlen(tag);
	end = strstr(line, "/workspace\n");
	cr_assert(end);
	*end = '\0';
	cr_assert(strstr(line, "forge-demo."));
	fgt_rm_rf(line);
}

Test(loop, demo_loop_rejects_then_approves)
{
	struct fgt_proc p;
	const char *argv[] = { "/bin/sh", FG_SOURCE_DIR "/examples/run-demo.sh", FG_BUILD_DIR, NULL };

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 100), 0);
	cr_assert_eq(p.exit_code, 0, "stdout:\n%s\nstderr:\n%s", p.out, p.err);
	fgt_assert_has(p.err, "Review cycle 1/3: REJECTED - The tests fail", "Review cycle 2/3: APPROVED");
	cr_assert(strstr(p.out, "\"state\":\t\"approved\"") || strstr(p.out, "\"state\": \"approved\""), "%s", p.out);
	cr_assert(strstr(p.out, "== tests after:\nall tests pass"), "%s", p.out);
	rm_kept_copy(p.out);
	fgt_proc_release(&p);
}

/* The demo from a checkout under $TMPDIR (a clone in /tmp): the box grants
 * nothing of the directory the entrypoint's private directories are made
 * in, but the agent commands' own directories and the skills directory it
 * does (sandbox.h, step 1b); before, the worker could not even start
 * ("cannot run worker '/tmp/.../demo-worker.sh': Permission denied"). */
Test(loop, the_demo_runs_from_a_checkout_under_tmpdir)
{
	struct fgt_proc p;
	char *dir = fgt_tmpdir(), *script = fgt_fmt("%s/examples/run-demo.sh", dir);
	const char *cp[] = { "/bin/cp", "-r", FG_SOURCE_DIR "/examples", FG_SOURCE_DIR "/skills", dir, NULL };
	const char *argv[] = { "/bin/sh", script, FG_BUILD_DIR, NULL };

	cr_assert_eq(fgt_run(&p, cp, NULL, NULL, NULL, 30), 0);
	cr_assert_eq(p.exit_code, 0, "cp: %s", p.err);
	fgt_proc_release(&p);
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 100), 0);
	cr_assert_eq(p.exit_code, 0, "stdout:\n%s\nstderr:\n%s", p.out, p.err);
	cr_assert(strstr(p.err, "Review cycle 2/3: APPROVED"), "%s", p.err);
	cr_assert(strstr(p.out, "== tests after:\nall tests pass"), "%s", p.out);
	rm_kept_copy(p.out);
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(script);
	free(dir);
}
