/*
 * test_runner_cycles.c - forge-runner run finds every cycle of its run and
 * only those, with a scripted entrypoint writing the cycle files: the
 * result's cycles in order, exit codes, timeouts, stale and foreign files,
 * rewrites, corrupt files, a removed step directory, the watch and the
 * sweep, the cycle directory template, the failure's cause.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgrun.h"
#include "fgtest.h"
#include "fgws.h"
#include "forge/util.h"

TestSuite(runner_cycles, .timeout = 60);

/* 1 if pid exists and is not a zombie (waits briefly for the reaper). */
static int process_alive(int pid)
{
	for (int i = 0; i < 200; i++) {
		if (!fgt_alive(pid))
			return 0;
		usleep(10000);
	}
	return 1;
}

Test(runner_cycles, result_file_and_cycle_order)
{
	struct fgr r = { 0 };
	const cJSON *cs;

	fgr_run_script(&r, "cyc 1 rejected\ncyc 2 rejected\ncyc 3 approved\nexit 0\n", NULL, NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.res, "success")));
	cr_assert_eq(fge_jint(r.res, "exit_code"), 0);
	fge_assert_strs(r.res, "review_state", "approved", "step", "impl", "skill", "sk",
			"engine", "local");
	cr_assert_eq(strlen(fge_jstr(r.res, "run_id")), 16);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(r.res, "error_message")));
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(r.res, "review_exhausted")));
	cs = fgr_cycles(&r);
	cr_assert_eq(cJSON_GetArraySize(cs), 3);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(fge_jint(cJSON_GetArrayItem(cs, i), "cycle"), i + 1);
		cr_assert_str_eq(fge_jstr(cJSON_GetArrayItem(cs, i), "run_id"), fge_jstr(r.res, "run_id"));
	}
	cr_assert_eq(fge_count_events(r.events, "review_cycle", NULL, NULL), 3);
	cr_assert_eq(fge_count_events(r.events, "run_start", "engine", "local"), 1);
	cr_assert_str_eq(fge_jstr(cJSON_GetArrayItem(r.events, 0), "event"), "run_start");
	fgr_release(&r);
}

Test(runner_cycles, exit_code_passthrough_and_exhausted)
{
	struct fgr r = { 0 };

	fgr_run_script(&r, "cyc 1 rejected\ncyc 2 rejected\ncyc 3 rejected\necho boom >&2\nexit 3\n", NULL, NULL);
	cr_assert_eq(r.p.exit_code, 3);
	cr_assert_eq(fge_jint(r.res, "exit_code"), 3);
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(r.res, "success")));
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.res, "review_exhausted")));
	cr_assert_str_eq(fge_jstr(r.res, "review_state"), "exhausted");
	cr_assert_not_null(strstr(fge_jstr(r.res, "error_message"), "boom"));
	fgr_release(&r);
}

Test(runner_cycles, timeout_stops_the_process_group_with_124)
{
	struct fgr r = { 0 };
	const char *extra[] = { "--timeout", "0.5", NULL };

	char *pidfile, *pidtext;

	fgr_run_script(&r, "cyc 1 rejected\nsleep 30 &\necho $! > \"$W/bg.pid\"\nwait\n", extra, NULL);
	cr_assert_eq(r.p.exit_code, 124, "stderr: %s", r.p.err);
	cr_assert_eq(fge_jint(r.res, "exit_code"), 124);
	cr_assert_eq(fge_count_events(r.events, "timeout", NULL, NULL), 1);
	cr_assert_eq(cJSON_GetArraySize(fgr_cycles(&r)), 1);
	/* The agent's background child was in the process group: it is gone. */
	pidfile = fgt_fmt("%s/bg.pid", r.w.ws);
	pidtext = fgt_read(pidfile, NULL);
	cr_assert_not_null(pidtext);
	cr_assert(!process_alive((int)strtol(pidtext, NULL, 10)), "background process %s survived", pidtext);
	free(pidtext);
	free(pidfile);
	fgr_release(&r);
}

Test(runner_cycles, stale_files_removed_and_never_reported)
{
	struct fgr r = { 0 };
	const cJSON *cs;
	char *d, *link;

	/* Files of an earlier run exist before start; the script checks they were
	 * gone when it started, writes only cycle 1 and exits. */
	fgr_init(&r, "[ -e \"$D/review_cycle_2.json\" ] && exit 7\n"
		     "[ -e \"$D/review_summary.json\" ] && exit 8\n"
		     "cyc 1 approved \"\" new\nexit 0\n");
	d = fgt_fmt("%s/.forge/impl", r.w.ws);
	fge_write_in(d, "review_cycle_1.json",
		  "{\"cycle\":1,\"max_cycles\":3,\"verdict\":\"rejected\",\"feedback\":\"OLD\",\"skill\":\"sk\","
		  "\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}\n");
	fge_write_in(d, "review_cycle_2.json",
		  "{\"cycle\":2,\"max_cycles\":3,\"verdict\":\"rejected\",\"feedback\":\"OLD\",\"skill\":\"sk\","
		  "\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}\n");
	fge_write_in(d, "review_summary.json", "{}\n");
	fge_write_in(d, ".review_cycle_3.json.tmp.123", "x");
	fge_write_in(d, "notes.txt", "keep me\n");
	link = fgt_fmt("%s/review_cycle_4.json", d);
	cr_assert_eq(symlink("/etc/passwd", link), 0);
	free(link);
	fgr_exec(&r, NULL, NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cr_assert_eq(fge_jint(r.res, "stale_files_cleared"), 3);
	cs = fgr_cycles(&r);
	cr_assert_eq(cJSON_GetArraySize(cs), 1);
	cr_assert_str_eq(fge_jstr(cJSON_GetArrayItem(cs, 0), "feedback"), "new");
	cr_assert_eq(fge_count_events(r.events, "review_cycle", "feedback", "OLD"), 0);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", NULL, NULL), 1);
	cr_assert(fge_exists_in(d, "notes.txt"));
	cr_assert(fgt_exists("/etc/passwd"));
	cr_assert(!fge_exists_in(d, "review_cycle_4.json"));
	cr_assert(!fge_exists_in(d, ".review_cycle_3.json.tmp.123"));
	free(d);
	fgr_release(&r);
}

Test(runner_cycles, same_name_rewrite_reported_twice)
{
	struct fgr r = { 0 };
	const cJSON *cs;

	fgr_run_script(&r,
		   "cyc 1 rejected \"\" first\nwait_log '\"feedback\":\"first\"'\n"
		   "cyc 1 rejected \"\" first\n"  /* identical content: not reported again */
		   "cyc 1 approved \"\" second\nwait_log '\"feedback\":\"second\"'\nexit 0\n",
		   NULL, NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", "feedback", "first"), 1);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", "feedback", "second"), 1);
	cs = fgr_cycles(&r);
	cr_assert_eq(cJSON_GetArraySize(cs), 1);
	cr_assert_str_eq(fge_jstr(cJSON_GetArrayItem(cs, 0), "feedback"), "second");
	fgr_release(&r);
}

Test(runner_cycles, numeric_order_cycle_10_after_9)
{
	struct fgr r = { 0 };
	const cJSON *cs;

	fgr_run_script(&r, "export MAX=10\nfor i in 10 2 9 1 3 4 5 6 7 8; do cyc $i rejected; done\nexit 0\n",
		   NULL, NULL);
	cs = fgr_cycles(&r);
	cr_assert_eq(cJSON_GetArraySize(cs), 10);
	for (int i = 0; i < 10; i++)
		cr_assert_eq(fge_jint(cJSON_GetArrayItem(cs, i), "cycle"), i + 1);
	cr_assert_str_eq(fge_jstr(r.res, "review_state"), "exhausted");
	fgr_release(&r);
}

/* A cycle file the runner must not count: it logs the file once and goes on
 * with the others. */
static const struct skipped_case {
	const char *script;
	int ncycles, at, cycle;           /* cycles left; the one at index at is cycle */
	const char *event, *key, *val;    /* the one event it logs */
} SKIPPED[] = {
	{ "cyc 1 rejected someoneelse\ncyc 2 approved\nexit 0\n", 1, 0, 2,
	  "cycle_ignored", "run_id", "someoneelse" },
	{ "cyc 1 rejected\necho 'not json' > \"$D/review_cycle_2.json\"\ncyc 3 approved\nexit 0\n", 2, 1, 3,
	  "cycle_corrupt", "file", "review_cycle_2.json" },
};

Test(runner_cycles, foreign_run_id_ignored_and_corrupt_file_reported_and_skipped)
{
	for (size_t i = 0; i < sizeof(SKIPPED) / sizeof(SKIPPED[0]); i++) {
		const struct skipped_case *c = &SKIPPED[i];
		struct fgr r = { 0 };
		const cJSON *cs;

		fgr_run_script(&r, c->script, NULL, NULL);
		cr_assert_eq(r.p.exit_code, 0, "%s: stderr: %s", c->event, r.p.err);
		cs = fgr_cycles(&r);
		cr_assert_eq(cJSON_GetArraySize(cs), c->ncycles, "%s", c->event);
		cr_assert_eq(fge_jint(cJSON_GetArrayItem(cs, c->at), "cycle"), c->cycle, "%s", c->event);
		cr_assert_eq(fge_count_events(r.events, c->event, c->key, c->val), 1);
		fgr_release(&r);
	}
}

Test(runner_cycles, step_dir_removed_and_recreated_mid_run)
{
	struct fgr r = { 0 };
	const cJSON *cs;

	fgr_run_script(&r,
		   "cyc 1 rejected\nwait_log 'review_cycle_1.json'\n"
		   "rm -rf \"$D\"\nmkdir \"$D\"\ncyc 2 rejected\nwait_log 'review_cycle_2.json'\n"
		   "rm -rf \"$W/.forge\"\nmkdir -p \"$D\"\ncyc 3 approved\nexit 0\n",
		   NULL, NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cs = fgr_cycles(&r);
	cr_assert_eq(cJSON_GetArraySize(cs), 3);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", "source", "watch"), 3);
	cr_assert_eq(fge_jint(r.res, "sweep_caught"), 0);
	fgr_release(&r);
}

Test(runner_cycles, fast_exit_every_cycle_once_from_the_watch)
{
	struct fgr r = { 0 };

	fgr_run_script(&r, "cyc 1 rejected\ncyc 2 rejected\ncyc 3 approved\nexit 0\n", NULL, NULL);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", NULL, NULL), 3);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", "source", "watch"), 3);
	cr_assert_eq(fge_jint(r.res, "sweep_caught"), 0);
	fgr_release(&r);
}

Test(runner_cycles, sweep_catches_what_the_watch_could_not_see)
{
	struct fgr r = { 0 };
	const char *extra[] = { "--no-inotify", "--poll-interval", "600", NULL };

	fgr_run_script(&r, "cyc 1 rejected\ncyc 2 approved\nexit 0\n", extra, NULL);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", NULL, NULL), 2);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", "source", "sweep"), 2);
	cr_assert_eq(fge_jint(r.res, "sweep_caught"), 2);
	cr_assert_eq(cJSON_GetArraySize(fgr_cycles(&r)), 2);
	fgr_release(&r);
}

/* --cycle-dir: the runner clears, watches and sweeps the template's
 * directory (here the Forge orchestrator's layout), hands the expanded
 * directory to the entrypoint as FORGE_CYCLE_DIR, and leaves .forge/{step}
 * alone. */
Test(runner_cycles, cycle_dir_template_is_watched_cleared_and_passed_on)
{
	struct fgr r = { 0 };
	const char *rel = ".forge/reviews/ABC-12__sk";

	fgr_init(&r, "[ \"$FORGE_CYCLE_DIR\" = .forge/reviews/ABC-12__sk ] || exit 7\n"
		     "export DIR=$W/$FORGE_CYCLE_DIR\n"
		     "cyc 1 rejected\nwait_log '\"file\":\"review_cycle_1.json\"'\ncyc 2 approved\nexit 0\n");
	char *dir = fgt_fmt("%s/%s", r.w.ws, rel);
	fge_write_in(dir, "review_cycle_9.json", "{\"stale\": true}\n");
	fgr_exec(&r, (const char *const[]){ "--task-key", "ABC-12", "--cycle-dir",
		".forge/reviews/{task_key}__{skill}", NULL }, NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cr_assert_eq(cJSON_GetArraySize(fgr_cycles(&r)), 2);
	cr_assert_str_eq(fge_jstr(r.res, "review_state"), "approved");
	cr_assert_eq(fge_jint(r.res, "stale_files_cleared"), 1);
	cr_assert_geq(fge_count_events(r.events, "review_cycle", "source", "watch"), 1,
		      "nothing seen live in the template's directory");
	cr_assert(fge_exists_in(dir, "review_cycle_2.json"));
	cr_assert(!fge_exists_in(dir, "review_cycle_9.json"), "the stale file stayed");
	cr_assert(!fge_exists_in(r.w.ws, ".forge/impl"), ".forge/{step} was made anyway");
	/* The step is the step, whatever the directory is called;
	 * the directory has a field of its own. */
	{
		int n = fge_count_events(r.events, "review_cycle", NULL, NULL);
		char *abs = fgt_fmt("%s/%s", r.w.ws, rel);
		char real[PATH_MAX];

		cr_assert_gt(n, 0);
		cr_assert_eq(fge_count_events(r.events, "review_cycle", "step", "impl"), n,
			     "a review_cycle event names another step");
		cr_assert_not_null(realpath(abs, real));
		cr_assert_eq(fge_count_events(r.events, "review_cycle", "cycle_dir", real), n,
			     "cycle_dir is not %s", real);
		free(abs);
	}
	free(dir);
	fgr_release(&r);
}

/* A run without a summary is "no review.md" only when the sandbox ended
 * well: a crash, a setup error, a timeout and the engine's own failure are
 * failed, each with its failure.cause and the whole reason; the runs
 * counter says error for exit 125. */
Test(runner_cycles, failures_are_named_by_their_cause_not_no_review)
{
	static const struct {
		const char *body, *timeout, *cause, *reason, *outcome;
		int code;
	} cases[] = {
		{ "echo 'forge-entrypoint: the task failed: worker exited with status 4' >&2\nexit 1\n", NULL,
		  "worker_failed", "worker exited with status 4", "failed", 1 },
		{ "echo 'forge-entrypoint: error: FORGE_WORKER_CMD is not set' >&2\nexit 2\n", NULL,
		  "config_error", "FORGE_WORKER_CMD is not set", "failed", 2 },
		{ "sleep 30\n", "0.5", "timeout", "timed out after 0.5s", "timeout", 124 },
		{ "echo 'Error: the runtime could not start it' >&2\nexit 125\n", NULL, "engine_error",
		  "could not start it", "error", 125 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fgr r = { 0 };
		const char *extra[] = { "--metrics-file", NULL, cases[i].timeout ? "--timeout" : NULL,
					cases[i].timeout, NULL };

		fgr_init(&r, cases[i].body);
		extra[1] = r.w.metrics;
		fgr_exec(&r, extra, NULL);
		cr_assert_eq(r.p.exit_code, cases[i].code, "case %zu: %s", i, r.p.err);
		cr_assert_str_eq(fge_jstr(r.res, "review_state"), "failed", "case %zu", i);
		const cJSON *f = cJSON_GetObjectItem(r.res, "failure");
		cr_assert_str_eq(fge_jstr(f, "cause"), cases[i].cause, "case %zu", i);
		cr_assert(strstr(fge_jstr(f, "reason"), cases[i].reason), "case %zu: %s", i, fge_jstr(f, "reason"));
		const cJSON *e = fge_find_event(r.events, "run_exit", NULL, NULL);
		cr_assert_str_eq(fge_jstr(e, "cause"), cases[i].cause, "case %zu", i);
		char *prom = fgt_read(r.w.metrics, NULL);
		char *want = fgt_fmt("outcome=\"%s\",skill=\"sk\",engine=\"local\"} 1", cases[i].outcome);
		cr_assert(prom && strstr(prom, want), "case %zu: no %s in\n%s", i, want, prom ? prom : "");
		free(prom); free(want);
		fgr_release(&r);
	}
}

/* --timeout with the real entrypoint: the runner hands it the run's
 * deadline (FORGE_DEADLINE), and shortly before it the entrypoint stops its
 * worker itself and leaves its sealed summary (failed, cause timeout); the
 * result names the timeout, not "no review", and the log says who stopped. */
Test(runner_cycles, a_timeout_leaves_a_sealed_summary_and_names_the_cause)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init(&w);
	fge_write_in(w.ws, "README", "workspace\n");
	fgw_review_md(&w, "default", "Check.\n");
	char *wk = fgw_script(&w, "worker.sh", NULL, "sleep 30\n");
	char *wenv = fgt_fmt("FORGE_WORKER_CMD=%s", wk);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", w.ws, "--step", "impl", "--skills-dir", w.skills,
			       "--entrypoint", FG_ENTRYPOINT_BIN, "--result", w.result, "--timeout", "3",
			       "--log-format", "json", "--log-file", w.log, NULL };
	const char *env[] = { wenv, "FORGE_REVIEWER_CMD=true", "FORGE_AGENT_KILL_GRACE=1", "FORGE_LOG_LEVEL", NULL };

	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 60), 0);
	cr_assert_eq(p.exit_code, 124, "%s", p.err);
	cJSON *res = fge_json_file(w.result, p.err);
	cr_assert_str_eq(fge_jstr(res, "review_state"), "failed");
	cr_assert_str_eq(fge_jstr(cJSON_GetObjectItem(res, "failure"), "cause"), "timeout");
	cr_assert(strstr(fge_jstr(res, "error_message"), "timed out: the entrypoint stopped itself shortly before "
			 "--timeout 3s ran out"), "%s", fge_jstr(res, "error_message"));
	char *why = fgw_summary_failure(&w, "timeout");
	cr_assert(strstr(why, "the run's time ran out") && strstr(why, "FORGE_DEADLINE"), "%s", why);
	cJSON *sum = fgw_step_json(&w, "review_summary.json");
	cr_assert_not_null(cJSON_GetObjectItem(sum, "seal"), "the summary is sealed");
	cJSON *ev = fgw_log_events(&w);
	cr_assert_eq(fge_count_events(ev, "timeout", NULL, NULL), 1);
	cr_assert_eq(fge_count_events(ev, "timeout", "stopped_by", "entrypoint"), 1, "the runner had to stop it");
	cr_assert_eq(fge_count_events(ev, "stop_kill", NULL, NULL), 0);
	cJSON_Delete(ev);
	cJSON_Delete(sum);
	cJSON_Delete(res);
	free(why); free(wenv); free(wk);
	fgw_release_run(&w, &p);
}
