/*
 * test_runner_run.c - `forge-runner run --engine local` end to end, with a
 * scripted entrypoint (--entrypoint) that writes cycle files itself
 * (atomically, with mv) so each test controls exactly what appears when.
 * Scripts that must know the runner saw something wait for its JSON log
 * line in the log file instead of sleeping, so no test depends on timing.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"
#include "forge/util.h"

TestSuite(runner_run, .timeout = 60);

struct rr {
	struct fgw w;    /* the tree: ws (README), ep.sh, runner.log, result.json */
	struct fgt_proc p;
	cJSON *res;
	cJSON *events;   /* the JSON log, line by line */
};

/* Creates the temp tree and the script. */
static void rr_setup(struct rr *r, const char *body)
{
	fgw_init(&r->w);
	free(fgw_fake_entrypoint(&r->w, body));
	fgw_write(&r->w, "ws/README", "workspace\n");
}

/* Runs forge-runner on the prepared tree with extra args (NULL-terminated). */
static void rr_exec(struct rr *r, const char *const *extra, const char *const *env)
{
	char *script = fgt_fmt("%s/ep.sh", r->w.root), *log;
	const char *argv[40];
	const char *envv[8];
	size_t n = 0, ne = 0;
	char *logenv = fgt_fmt("LOG=%s", r->w.log);

	argv[n++] = FG_RUNNER_BIN;
	argv[n++] = "run";
	argv[n++] = "--workspace"; argv[n++] = r->w.ws;
	argv[n++] = "--step"; argv[n++] = "impl";
	argv[n++] = "--skill"; argv[n++] = "sk";
	argv[n++] = "--entrypoint"; argv[n++] = script;
	argv[n++] = "--result"; argv[n++] = r->w.result;
	argv[n++] = "--log-format"; argv[n++] = "json";
	argv[n++] = "--log-file"; argv[n++] = r->w.log;
	for (size_t i = 0; extra && extra[i]; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	envv[ne++] = logenv;
	envv[ne++] = "FORGE_LOG_LEVEL";
	for (size_t i = 0; env && env[i]; i++)
		envv[ne++] = env[i];
	envv[ne] = NULL;
	cr_assert_eq(fgt_run(&r->p, argv, envv, NULL, NULL, 40), 0);
	cr_assert_eq(r->p.timed_out, 0, "runner hung; stderr: %s", r->p.err);
	log = fgt_read(r->w.log, NULL);
	cr_assert_not_null(log, "no log file");
	r->events = fge_json_lines(log);
	free(log);
	r->res = fge_json_file(r->w.result, r->p.err);
	free(script);
	free(logenv);
}

static void run_script(struct rr *r, const char *body, const char *const *extra, const char *const *env)
{
	rr_setup(r, body);
	rr_exec(r, extra, env);
}

static const cJSON *res_cycles(const struct rr *r)
{
	const cJSON *v = cJSON_GetObjectItem(r->res, "review_cycles");

	cr_assert(cJSON_IsArray(v));
	return v;
}

/* 1 if pid exists and is not a zombie (waits briefly for the reaper). */
static int process_alive(int pid)
{
	for (int i = 0; i < 200; i++) {
		char *path = fgt_fmt("/proc/%d/stat", pid);
		char *st = fgt_read(path, NULL);
		char *rp = st ? strrchr(st, ')') : NULL;
		int zombie_or_gone = !rp || rp[2] == 'Z' || rp[2] == 'X';

		free(path);
		free(st);
		if (zombie_or_gone)
			return 0;
		usleep(10000);
	}
	return 1;
}

static void rr_free(struct rr *r)
{
	cJSON_Delete(r->events);
	cJSON_Delete(r->res);
	fgt_proc_release(&r->p);
	fgw_release(&r->w);
}

Test(runner_run, result_file_and_cycle_order)
{
	struct rr r = { 0 };
	const cJSON *cs;

	run_script(&r, "cyc 1 rejected\ncyc 2 rejected\ncyc 3 approved\nexit 0\n", NULL, NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.res, "success")));
	cr_assert_eq(fge_jint(r.res, "exit_code"), 0);
	cr_assert_str_eq(fge_jstr(r.res, "review_state"), "approved");
	cr_assert_str_eq(fge_jstr(r.res, "step"), "impl");
	cr_assert_str_eq(fge_jstr(r.res, "skill"), "sk");
	cr_assert_str_eq(fge_jstr(r.res, "engine"), "local");
	cr_assert_eq(strlen(fge_jstr(r.res, "run_id")), 16);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(r.res, "error_message")));
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(r.res, "review_exhausted")));
	cs = res_cycles(&r);
	cr_assert_eq(cJSON_GetArraySize(cs), 3);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(fge_jint(cJSON_GetArrayItem(cs, i), "cycle"), i + 1);
		cr_assert_str_eq(fge_jstr(cJSON_GetArrayItem(cs, i), "run_id"), fge_jstr(r.res, "run_id"));
	}
	cr_assert_eq(fge_count_events(r.events, "review_cycle", NULL, NULL), 3);
	cr_assert_eq(fge_count_events(r.events, "run_start", "engine", "local"), 1);
	cr_assert_str_eq(fge_jstr(cJSON_GetArrayItem(r.events, 0), "event"), "run_start");
	rr_free(&r);
}

Test(runner_run, exit_code_passthrough_and_exhausted)
{
	struct rr r = { 0 };

	run_script(&r, "cyc 1 rejected\ncyc 2 rejected\ncyc 3 rejected\necho boom >&2\nexit 3\n", NULL, NULL);
	cr_assert_eq(r.p.exit_code, 3);
	cr_assert_eq(fge_jint(r.res, "exit_code"), 3);
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(r.res, "success")));
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.res, "review_exhausted")));
	cr_assert_str_eq(fge_jstr(r.res, "review_state"), "exhausted");
	cr_assert_not_null(strstr(fge_jstr(r.res, "error_message"), "boom"));
	rr_free(&r);
}

Test(runner_run, timeout_stops_the_process_group_with_124)
{
	struct rr r = { 0 };
	const char *extra[] = { "--timeout", "0.5", NULL };

	char *pidfile, *pidtext;

	run_script(&r, "cyc 1 rejected\nsleep 30 &\necho $! > \"$W/bg.pid\"\nwait\n", extra, NULL);
	cr_assert_eq(r.p.exit_code, 124, "stderr: %s", r.p.err);
	cr_assert_eq(fge_jint(r.res, "exit_code"), 124);
	cr_assert_eq(fge_count_events(r.events, "timeout", NULL, NULL), 1);
	cr_assert_eq(cJSON_GetArraySize(res_cycles(&r)), 1);
	/* The agent's background child was in the process group: it is gone. */
	pidfile = fgt_fmt("%s/bg.pid", r.w.ws);
	pidtext = fgt_read(pidfile, NULL);
	cr_assert_not_null(pidtext);
	cr_assert(!process_alive((int)strtol(pidtext, NULL, 10)), "background process %s survived", pidtext);
	free(pidtext);
	free(pidfile);
	rr_free(&r);
}

Test(runner_run, stale_files_removed_and_never_reported)
{
	struct rr r = { 0 };
	const cJSON *cs;
	char *d, *link;

	/* Files of an earlier run exist before start; the script checks they were
	 * gone when it started, writes only cycle 1 and exits. */
	rr_setup(&r, "[ -e \"$D/review_cycle_2.json\" ] && exit 7\n"
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
	rr_exec(&r, NULL, NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cr_assert_eq(fge_jint(r.res, "stale_files_cleared"), 3);
	cs = res_cycles(&r);
	cr_assert_eq(cJSON_GetArraySize(cs), 1);
	cr_assert_str_eq(fge_jstr(cJSON_GetArrayItem(cs, 0), "feedback"), "new");
	cr_assert_eq(fge_count_events(r.events, "review_cycle", "feedback", "OLD"), 0);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", NULL, NULL), 1);
	cr_assert(fge_exists_in(d, "notes.txt"));
	cr_assert(fgt_exists("/etc/passwd"));
	cr_assert(!fge_exists_in(d, "review_cycle_4.json"));
	cr_assert(!fge_exists_in(d, ".review_cycle_3.json.tmp.123"));
	free(d);
	rr_free(&r);
}

Test(runner_run, same_name_rewrite_reported_twice)
{
	struct rr r = { 0 };
	const cJSON *cs;

	run_script(&r,
		   "cyc 1 rejected \"\" first\nwait_log '\"feedback\":\"first\"'\n"
		   "cyc 1 rejected \"\" first\n"  /* identical content: not reported again */
		   "cyc 1 approved \"\" second\nwait_log '\"feedback\":\"second\"'\nexit 0\n",
		   NULL, NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", "feedback", "first"), 1);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", "feedback", "second"), 1);
	cs = res_cycles(&r);
	cr_assert_eq(cJSON_GetArraySize(cs), 1);
	cr_assert_str_eq(fge_jstr(cJSON_GetArrayItem(cs, 0), "feedback"), "second");
	rr_free(&r);
}

Test(runner_run, numeric_order_cycle_10_after_9)
{
	struct rr r = { 0 };
	const cJSON *cs;

	run_script(&r, "export MAX=10\nfor i in 10 2 9 1 3 4 5 6 7 8; do cyc $i rejected; done\nexit 0\n",
		   NULL, NULL);
	cs = res_cycles(&r);
	cr_assert_eq(cJSON_GetArraySize(cs), 10);
	for (int i = 0; i < 10; i++)
		cr_assert_eq(fge_jint(cJSON_GetArrayItem(cs, i), "cycle"), i + 1);
	cr_assert_str_eq(fge_jstr(r.res, "review_state"), "exhausted");
	rr_free(&r);
}

Test(runner_run, foreign_run_id_ignored)
{
	struct rr r = { 0 };
	const cJSON *cs;

	run_script(&r, "cyc 1 rejected someoneelse\ncyc 2 approved\nexit 0\n", NULL, NULL);
	cs = res_cycles(&r);
	cr_assert_eq(cJSON_GetArraySize(cs), 1);
	cr_assert_eq(fge_jint(cJSON_GetArrayItem(cs, 0), "cycle"), 2);
	cr_assert_eq(fge_count_events(r.events, "cycle_ignored", "run_id", "someoneelse"), 1);
	rr_free(&r);
}

Test(runner_run, corrupt_file_reported_and_skipped)
{
	struct rr r = { 0 };
	const cJSON *cs;

	run_script(&r, "cyc 1 rejected\necho 'not json' > \"$D/review_cycle_2.json\"\ncyc 3 approved\nexit 0\n",
		   NULL, NULL);
	cr_assert_eq(r.p.exit_code, 0);
	cs = res_cycles(&r);
	cr_assert_eq(cJSON_GetArraySize(cs), 2);
	cr_assert_eq(fge_jint(cJSON_GetArrayItem(cs, 1), "cycle"), 3);
	cr_assert_eq(fge_count_events(r.events, "cycle_corrupt", "file", "review_cycle_2.json"), 1);
	rr_free(&r);
}

Test(runner_run, step_dir_removed_and_recreated_mid_run)
{
	struct rr r = { 0 };
	const cJSON *cs;

	run_script(&r,
		   "cyc 1 rejected\nwait_log 'review_cycle_1.json'\n"
		   "rm -rf \"$D\"\nmkdir \"$D\"\ncyc 2 rejected\nwait_log 'review_cycle_2.json'\n"
		   "rm -rf \"$W/.forge\"\nmkdir -p \"$D\"\ncyc 3 approved\nexit 0\n",
		   NULL, NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cs = res_cycles(&r);
	cr_assert_eq(cJSON_GetArraySize(cs), 3);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", "source", "watch"), 3);
	cr_assert_eq(fge_jint(r.res, "sweep_caught"), 0);
	rr_free(&r);
}

Test(runner_run, fast_exit_every_cycle_once_from_the_watch)
{
	struct rr r = { 0 };

	run_script(&r, "cyc 1 rejected\ncyc 2 rejected\ncyc 3 approved\nexit 0\n", NULL, NULL);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", NULL, NULL), 3);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", "source", "watch"), 3);
	cr_assert_eq(fge_jint(r.res, "sweep_caught"), 0);
	rr_free(&r);
}

Test(runner_run, sweep_catches_what_the_watch_could_not_see)
{
	struct rr r = { 0 };
	const char *extra[] = { "--no-inotify", "--poll-interval", "600", NULL };

	run_script(&r, "cyc 1 rejected\ncyc 2 approved\nexit 0\n", extra, NULL);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", NULL, NULL), 2);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", "source", "sweep"), 2);
	cr_assert_eq(fge_jint(r.res, "sweep_caught"), 2);
	cr_assert_eq(cJSON_GetArraySize(res_cycles(&r)), 2);
	rr_free(&r);
}

Test(runner_run, copy_without_recording_dir_is_a_usage_error)
{
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", "/tmp", "--step", "x",
			       "--record", "copy", NULL };
	const char *env[] = { "FORGE_REVIEW_RECORDING_DIR", NULL };
	struct fgt_proc p;

	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 20), 0);
	cr_assert_eq(p.exit_code, 2);
	cr_assert_not_null(strstr(p.err, "try 'forge-runner run --help'"));
	fgt_proc_release(&p);
}

/* Issue 18: a docker run without --image cleared the previous run's cycle
 * files, then exited 125. Every configuration error is found before the
 * step directory is touched: exit 2, nothing changed, no result written. */
Test(runner_run, configuration_errors_exit_2_and_change_nothing)
{
	struct fgw w;

	fgw_init(&w);
	char *dir = w.root;
	char *ws = w.ws, *step = fgt_fmt("%s/ws/.forge/impl", dir);
	char *res = fgt_fmt("%s/result.json", dir), *file = fgt_fmt("%s/afile", dir);
	char *colon = fgt_fmt("%s/a:b", dir);
	const char *env[] = { "FORGE_IMAGE", "FORGE_ENGINE", NULL };
	const char *no_image[] = { FG_RUNNER_BIN, "run", "--engine", "docker", "--workspace", ws,
				   "--step", "impl", "--result", res, NULL };
	const char *skills_file[] = { FG_RUNNER_BIN, "run", "--engine", "docker", "--image", "img:1",
				      "--workspace", ws, "--step", "impl", "--result", res,
				      "--skills-dir", file, NULL };
	const char *skills_colon[] = { FG_RUNNER_BIN, "run", "--engine", "docker", "--image", "img:1",
				       "--workspace", ws, "--step", "impl", "--result", res,
				       "--skills-dir", colon, NULL };
	const char *no_entrypoint[] = { FG_RUNNER_BIN, "run", "--engine", "local", "--workspace", ws,
					"--step", "impl", "--result", res, "--entrypoint", file, NULL };
	const char *const *argvs[] = { no_image, skills_file, skills_colon, no_entrypoint };
	char *want[] = {
		fgt_fmt("engine 'docker' needs an image (--image or FORGE_IMAGE)"),
		fgt_fmt("skills dir '%s' is not a directory", file),
		fgt_fmt("skills dir '%s' cannot be bind-mounted: contains ':' or ','", colon),
		fgt_fmt("entrypoint '%s' is not an executable file", file),
	};

	fge_write_in(step, "review_cycle_1.json", "{\"kept\": true}\n");
	fge_write_in(step, "review_summary.json", "{\"kept\": true}\n");
	fgt_write(file, "not a directory\n");
	fge_write_in(colon, ".keep", "");
	for (size_t i = 0; i < 4; i++) {
		struct fgt_proc p;

		cr_assert_eq(fgt_run(&p, argvs[i], env, NULL, NULL, 20), 0);
		cr_assert_eq(p.exit_code, 2, "case %zu: %s", i, p.err);
		cr_assert(strstr(p.err, want[i]), "case %zu: %s", i, p.err);
		cr_assert(strstr(p.err, "try 'forge-runner run --help'"), "%s", p.err);
		cr_assert(fge_exists_in(step, "review_cycle_1.json"), "case %zu: the cycle file was removed", i);
		cr_assert(fge_exists_in(step, "review_summary.json"), "case %zu: the summary was removed", i);
		cr_assert(!fgt_exists(res), "case %zu: a result was written", i);
		free(want[i]);
		fgt_proc_release(&p);
	}
	fgw_release(&w);
	free(step); free(res); free(file); free(colon);
}

/* Issue 18: run_start said skill="" when the skill was derived; it logs the
 * skill the entrypoint will use (task file's skill_name, else the step with
 * '_' -> '-'). */
Test(runner_run, run_start_logs_the_derived_skill)
{
	struct fgw w;

	fgw_init(&w);
	char *dir = w.root;
	char *ws = w.ws, *log = fgt_fmt("%s/r.log", dir), *task = fgt_fmt("%s/task.json", dir);
	char *script = fge_script(dir, "ep.sh", FGE_FAKE_EP_HEAD, "exit 0");
	const char *env[] = { "FORGE_SKILL_NAME", "FORGE_LOG_LEVEL", NULL };
	const char *from_step[] = { FG_RUNNER_BIN, "run", "--workspace", ws, "--step", "implement_task",
				    "--entrypoint", script, "--log-format", "json", "--log-file", log, NULL };
	const char *from_task[] = { FG_RUNNER_BIN, "run", "--workspace", ws, "--step", "implement_task",
				    "--task-file", task, "--entrypoint", script, "--log-format", "json",
				    "--log-file", log, NULL };
	const char *const *argvs[] = { from_step, from_task };
	static const char *const want[] = { "implement-task", "add-license" };

	fge_write_in(ws, "README", "workspace\n");
	fgt_write(task, "{\"skill_name\": \"add-license\", \"summary\": \"s\"}");
	for (size_t i = 0; i < 2; i++) {
		struct fgt_proc p;

		cr_assert_eq(fgt_run(&p, argvs[i], env, NULL, NULL, 20), 0);
		fgt_assert_exit(&p, 0);
		char *text = fgt_read(log, NULL);
		cJSON *evs = fge_json_lines(text);
		const cJSON *e = fge_find_event(evs, "run_start", NULL, NULL);
		cr_assert_not_null(e);
		cr_expect_str_eq(fge_jstr(e, "skill"), want[i]);
		cJSON_Delete(evs);
		free(text);
		unlink(log);
		fgt_proc_release(&p);
	}
	fgw_release(&w);
	free(log); free(task); free(script);
}

/* Issue 18: a reviewer printing "LGTM" gave rejected cycles that looked like
 * real rejections, all INFO. Each cycle without a parsable verdict gets a
 * verdict_unparsed warning naming its reviewer log and the words expected;
 * a reviewer that failed (format none too) and a normal rejection do not. */
Test(runner_run, unparsed_verdict_is_a_warning_naming_the_reviewer_log)
{
	struct rr r = { 0 };
	const char *body =
		"put() { printf '{\"cycle\":%s,\"max_cycles\":3,\"verdict\":\"rejected\",\"feedback\":\"%s\","
		"\"format\":\"none\",\"skill\":\"sk\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\","
		"\"run_id\":\"%s\"}' \"$1\" \"$2\" \"$FORGE_RUN_ID\" | fgseal \"$S\" \"review_cycle_$1.json\" > \"$D/.t\";"
		" mv \"$D/.t\" \"$D/review_cycle_$1.json\"; }\n"
		"put 1 'Verdict could not be parsed'\n"
		"put 2 'The review could not be completed: reviewer was killed by signal 9 (Killed).'\n"
		"cyc 3 rejected\n"
		"exit 0\n";
	const cJSON *e;

	run_script(&r, body, NULL, NULL);
	cr_assert_eq(r.p.exit_code, 0, "%s", r.p.err);
	cr_assert_eq(fge_count_events(r.events, "verdict_unparsed", NULL, NULL), 1);
	e = fge_find_event(r.events, "verdict_unparsed", NULL, NULL);
	cr_expect_str_eq(fge_jstr(e, "level"), "warn");
	cr_expect_eq(fge_jint(e, "cycle"), 1);
	cr_expect_str_eq(fge_jstr(e, "file"), "review_cycle_1.json");
	cr_expect_str_eq(fge_jstr(e, "reviewer_log"), "review_cycle_1.reviewer.log");
	cr_expect(strstr(fge_jstr(e, "expected"), "APPROVED or REJECTED"));
	rr_free(&r);
}

/* Issue 18: the entrypoint's configuration error ("FORGE_REVIEWER_CMD is not
 * set") was an INFO output line and run_exit only said exit_code=2. With the
 * real entrypoint: the line is an ERROR and run_exit's reason repeats it. */
Test(runner_run, entrypoint_configuration_error_is_an_error_line_and_the_reason)
{
	struct fgw w;

	fgw_init(&w);
	char *dir = w.root;
	char *ws = w.ws, *skills = w.skills, *log = fgt_fmt("%s/r.log", dir);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", ws, "--step", "impl", "--skills-dir", skills,
			       "--entrypoint", FG_ENTRYPOINT_BIN, "--log-format", "json", "--log-file", log,
			       "--log-level", "warn", NULL };
	const char *env[] = { "FORGE_WORKER_CMD=/bin/true", "FORGE_REVIEWER_CMD", "FORGE_LOG_LEVEL",
			      "AUTO_REVIEW_MAX_RETRIES", "FORGE_SKILL_NAME", "FORGE_TASK_FILE", NULL };
	struct fgt_proc p;
	const cJSON *e;

	fge_write_in(ws, "README", "workspace\n");
	fge_write_in(skills, "default/impl/review.md", "Check.\n");
	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 30), 0);
	fgt_assert_exit(&p, 2);
	char *text = fgt_read(log, NULL);
	cJSON *evs = fge_json_lines(text);
	e = fge_find_event(evs, "output", NULL, NULL);
	cr_assert_not_null(e, "%s", text);
	cr_expect_str_eq(fge_jstr(e, "level"), "error");
	cr_expect(strstr(fge_jstr(e, "line"), "forge-entrypoint: error: FORGE_REVIEWER_CMD is not set") ==
		  fge_jstr(e, "line"), "%s", text);
	e = fge_find_event(evs, "run_exit", NULL, NULL);
	cr_assert_not_null(e);
	cr_expect(strstr(fge_jstr(e, "reason"), "error: FORGE_REVIEWER_CMD is not set") == fge_jstr(e, "reason"),
		  "%s", text);
	cJSON_Delete(evs);
	free(text);
	fgw_release_run(&w, &p);
	free(log);
}

/* ---- the stream source: frames on the entrypoint's stderr ---- */

/* Shell functions for scripts that send frames: frm N VERDICT [RUN [FB]]
 * (TRUNC=1: a truncated frame, feedback left out), sumfrm STATE CYCLES. */
static const char FRAMES[] =
	"frm() {\n"
	"  r=${3:-$FORGE_RUN_ID}; f=${4:-fb$1}; t=''\n"
	"  if [ -n \"$TRUNC\" ]; then f=''; t=',\"truncated\":true'; fi\n"
	"  printf '@@forge-review {\"v\":1,\"type\":\"review_cycle\",\"run_id\":\"%s\",\"step\":\"%s\","
	"\"file\":\"review_cycle_%s.json\",\"cycle\":{\"cycle\":%s,\"max_cycles\":%s,\"verdict\":\"%s\","
	"\"feedback\":\"%s\",\"skill\":\"%s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\","
	"\"run_id\":\"%s\"}%s}\\n' \"$r\" \"$S\" \"$1\" \"$1\" \"${MAX:-3}\" \"$2\" \"$f\" \"$K\" \"$r\" \"$t\" | fgseal >&2\n"
	"}\n"
	"sumfrm() {\n"
	"  printf '@@forge-review {\"v\":1,\"type\":\"review_summary\",\"run_id\":\"%s\",\"step\":\"%s\","
	"\"file\":\"review_summary.json\",\"summary\":{\"state\":\"%s\",\"cycles\":%s,\"max_cycles\":3,"
	"\"step\":\"%s\",\"skill\":\"%s\",\"run_id\":\"%s\"}}\\n' \"$FORGE_RUN_ID\" \"$S\" \"$1\" \"$2\" "
	"\"$S\" \"$K\" \"$FORGE_RUN_ID\" | fgseal >&2\n"
	"}\n";

static void run_frames(struct rr *r, const char *body, const char *const *extra)
{
	char *text = fgt_fmt("%s%s", FRAMES, body);
	const char *env[] = { "FORGE_LOG_LEVEL=debug", NULL };

	run_script(r, text, extra, env);
	free(text);
}

static int by_source(const struct rr *r, const char *source)
{
	const cJSON *o = cJSON_GetObjectItem(r->res, "cycles_by_source");

	cr_assert(cJSON_IsObject(o), "no cycles_by_source");
	return fge_jint(o, source);
}

Test(runner_run, frames_alone_report_every_cycle_and_the_summary)
{
	struct rr r = { 0 };
	const cJSON *cs;

	/* No file at all: what a run on a named volume or a remote engine sees. */
	run_frames(&r, "echo '[worker] @@forge-review {}' >&2\nfrm 1 rejected\nfrm 2 rejected\n"
		       "MAX=2 frm 2 rejected\nsumfrm exhausted 2\nexit 0\n", NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cs = res_cycles(&r);
	cr_assert_eq(cJSON_GetArraySize(cs), 2);
	cr_assert_str_eq(fge_jstr(cJSON_GetArrayItem(cs, 0), "feedback"), "fb1");
	cr_assert_eq(fge_jint(cJSON_GetArrayItem(cs, 1), "max_cycles"), 2, "the rewrite counts");
	cr_assert_eq(fge_count_events(r.events, "review_cycle", "source", "stream"), 3,
		     "two cycles and a rewrite");
	cr_assert_eq(by_source(&r, "stream"), 3);
	cr_assert_eq(by_source(&r, "watch") + by_source(&r, "poll") + by_source(&r, "sweep"), 0);
	cr_assert_str_eq(fge_jstr(r.res, "review_state"), "exhausted", "from the summary frame");
	cr_assert_eq(fge_count_events(r.events, "output", "line", "[worker] @@forge-review {}"), 1);
	cr_assert_eq(fge_count_events(r.events, "output", NULL, NULL), 1, "frames are not output lines");
	rr_free(&r);
}

Test(runner_run, a_cycle_seen_by_file_and_frame_is_reported_once)
{
	struct rr r = { 0 };
	const cJSON *e;

	/* Cycle 1: the file first, then its frame once the watch reported it;
	 * cycle 2: the frame first, then the file once the stream reported it. */
	run_frames(&r, "cyc 1 rejected\nwait_log '\"source\":\"watch\"'\nfrm 1 rejected\n"
		       "frm 2 approved\nwait_log '\"source\":\"stream\"'\ncyc 2 approved\n"
		       "wait_log 'cycle_seen_again.*review_cycle_2'\nexit 0\n", NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", NULL, NULL), 2);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", "file", "review_cycle_1.json"), 1);
	e = fge_find_event(r.events, "review_cycle", "file", "review_cycle_2.json");
	cr_assert_str_eq(fge_jstr(e, "source"), "stream");
	e = fge_find_event(r.events, "cycle_seen_again", "file", "review_cycle_1.json");
	cr_assert_not_null(e, "the second source of cycle 1 is logged at debug");
	cr_assert_str_eq(fge_jstr(e, "source"), "stream");
	cr_assert_str_eq(fge_jstr(e, "first_source"), "watch");
	e = fge_find_event(r.events, "cycle_seen_again", "file", "review_cycle_2.json");
	cr_assert_not_null(e);
	cr_assert_str_eq(fge_jstr(e, "first_source"), "stream");
	cr_assert_eq(by_source(&r, "watch"), 1);
	cr_assert_eq(by_source(&r, "stream"), 1);
	cr_assert_eq(cJSON_GetArraySize(res_cycles(&r)), 2);
	rr_free(&r);
}

Test(runner_run, a_truncated_frame_is_completed_by_its_file_silently)
{
	struct rr r = { 0 };
	const cJSON *c;

	run_frames(&r, "TRUNC=1 frm 1 approved\nwait_log '\"source\":\"stream\"'\ncyc 1 approved\n"
		       "wait_log 'cycle_seen_again'\nexit 0\n", NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", NULL, NULL), 1);
	c = cJSON_GetArrayItem(res_cycles(&r), 0);
	cr_assert_str_eq(fge_jstr(c, "feedback"), "fb1", "the file's whole content is kept");
	cr_assert_eq(by_source(&r, "stream"), 1);
	rr_free(&r);
}

Test(runner_run, frames_of_another_run_are_ignored_and_logged_once)
{
	struct rr r = { 0 };

	run_frames(&r, "frm 1 approved other\nfrm 2 approved other\nexit 0\n", NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", NULL, NULL), 0);
	cr_assert_eq(fge_count_events(r.events, "frame_ignored", "run_id", "other"), 1);
	cr_assert_eq(cJSON_GetArraySize(res_cycles(&r)), 0);
	rr_free(&r);
}

/* Container limits: given to the local engine they are refused (a limit
 * silently not applied is worse); bad values are usage errors; their
 * environment twins are ignored by the local engine. */
Test(runner_run, container_options_checked_and_refused_for_the_local_engine)
{
	static const struct { const char *opt, *val, *engine, *env, *want; } cases[] = {
		{ "--memory", "4g", "local", NULL, "'--memory' applies to the docker and podman engines only" },
		{ "--read-only-rootfs", NULL, "local", NULL, "'--read-only-rootfs' applies to the docker" },
		{ "--memory", "4gb", "docker", NULL, "invalid memory limit '4gb'" },
		{ "--cpus", "0", "docker", NULL, "invalid CPU limit '0'" },
		{ "--pids-limit", "lots", "podman", NULL, "invalid process limit 'lots'" },
		{ "--network", "--privileged", "docker", NULL, "invalid network '--privileged'" },
		{ "--mount-label", "Y", "docker", NULL, "invalid mount label 'Y'" },
		{ NULL, NULL, "docker", "FORGE_PIDS_LIMIT=0", "invalid process limit '0'" },
		{ NULL, NULL, "docker", "FORGE_MOUNT_LABEL=on", "invalid mount label 'on'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[13] = { FG_RUNNER_BIN, "run", "--workspace", "/tmp", "--step", "x",
					 "--engine", cases[i].engine, "--image", "img:1" };
		const char *env[] = { cases[i].env ? cases[i].env : "FORGE_MEMORY", NULL };
		size_t n = 10;
		struct fgt_proc p;

		if (cases[i].opt)
			argv[n++] = cases[i].opt;
		if (cases[i].val)
			argv[n++] = cases[i].val;
		argv[n] = NULL;
		cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 20), 0);
		cr_assert_eq(p.exit_code, 2, "case %zu exited %d: %s", i, p.exit_code, p.err);
		cr_assert_not_null(strstr(p.err, cases[i].want), "case %zu: %s", i, p.err);
		fgt_proc_release(&p);
	}
}

/* A remote engine (DOCKER_HOST=tcp://...): a stand-in `docker` on PATH
 * records its arguments and sends the frames a container would. The runner
 * must neither clear nor watch the host path (it names a directory on the
 * engine's host) and must hear the run on the stream alone. */
/* Runs forge-runner with --engine docker against a remote DOCKER_HOST whose
 * stand-in CLI sends the frames of body (FRAMES functions available). */
static void run_remote_more(struct rr *r, const char *body, const char *const *more)
{
	const char *extra[12] = { "--engine", "docker", "--image", "img:1", NULL };
	char *bin, *script, *path;
	const char *env[3];

	for (size_t i = 0, n = 4; more && more[i] && n < 11; i++)
		extra[n++] = more[i];

	rr_setup(r, "true\n");
	bin = fgt_fmt("%s/bin", r->w.root);
	script = fgt_fmt("%sS=implement; K=sk\n"
			 "case $1 in run) ;; *) exit 0;; esac\n"
			 "for a; do case $prev in --step) S=$a;; esac; prev=$a; done\n"
			 "echo \"$*\" > \"%s/docker.args\"\n%s",
			 FRAMES, r->w.root, body);
	free(fge_script(bin, "docker", "#!/bin/sh\n" FGE_SEAL_LINES, script));
	fge_write_in(r->w.ws, ".forge/impl/review_cycle_5.json", "{\"stale\":true}\n");
	path = fgt_fmt("PATH=%s:/usr/bin:/bin", bin);
	env[0] = path;
	env[1] = "DOCKER_HOST=tcp://build-host.invalid:2376";
	env[2] = NULL;
	rr_exec(r, extra, env);
	free(script);
	free(path);
	free(bin);
}

static void run_remote(struct rr *r, const char *body)
{
	run_remote_more(r, body, NULL);
}

Test(runner_run, remote_engine_host_runs_on_the_stream_alone)
{
	struct rr r = { 0 };
	char *args;

	run_remote(&r, "frm 1 rejected\nfrm 2 approved\nsumfrm approved 2\nexit 0\n");
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	args = fge_read_in(r.w.root, "docker.args");
	cr_assert_not_null(args);
	cr_assert_not_null(strstr(args, "--clear-stale"), "the entrypoint clears: %s", args);
	cr_assert_not_null(strstr(args, "-v "), "%s", args);
	cr_assert(fge_exists_in(r.w.ws, ".forge/impl/review_cycle_5.json"), "the runner cleared a remote path");
	cr_assert_eq(fge_count_events(r.events, "review_cycle", "source", "stream"), 2);
	cr_assert_eq(fge_count_events(r.events, "review_cycle", NULL, NULL), 2);
	cr_assert_eq(by_source(&r, "stream"), 2);
	cr_assert_eq(fge_count_events(r.events, "detection_sources", "reason", "remote_engine"), 1);
	cr_assert_eq(fge_count_events(r.events, "detection_sources", "engine_host",
				      "tcp://build-host.invalid:2376"), 1);
	cr_assert_eq(fge_count_events(r.events, "stale_cleared", NULL, NULL), 0);
	cr_assert_eq(fge_count_events(r.events, "sweep", NULL, NULL), 0, "a sweep event, but no sweep ran");
	cr_assert_eq(fge_count_events(r.events, "cycle_unseen", NULL, NULL), 0);
	cr_assert_str_eq(fge_jstr(r.res, "review_state"), "approved");
	free(args);
	rr_free(&r);
}

/* Without a sweep, the summary frame is the check that no frame was lost. */
Test(runner_run, remote_run_with_a_lost_frame_says_so)
{
	struct rr r = { 0 };
	const cJSON *e;

	run_remote(&r, "frm 1 rejected\nsumfrm approved 2\nexit 0\n");
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	e = fge_find_event(r.events, "cycle_unseen", NULL, NULL);
	cr_assert_not_null(e, "no cycle_unseen");
	cr_assert_str_eq(fge_jstr(e, "level"), "warn");
	cr_assert_eq(fge_jint(e, "summary_cycles"), 2);
	cr_assert_eq(fge_jint(e, "reported"), 1);
	cr_assert_str_eq(fge_jstr(r.res, "review_state"), "approved", "the summary frame still counts");
	rr_free(&r);
}

Test(runner_run, workspace_volume_needs_a_container_engine_and_no_workspace)
{
	static const char *const cases[][6] = {
		{ "--workspace-volume", "v1", NULL },
		{ "--workspace-volume", "bad/name", "--engine", "docker", "--image", "i" },
	};

	for (size_t i = 0; i < 2; i++) {
		struct fgt_proc p;
		const char *argv[12] = { FG_RUNNER_BIN, "run", "--step", "impl" };
		size_t n = 4;

		for (size_t k = 0; k < 6 && cases[i][k]; k++)
			argv[n++] = cases[i][k];
		argv[n] = NULL;
		cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 20), 0);
		cr_assert_eq(p.exit_code, 2, "case %zu: %s", i, p.err);
		fgt_proc_release(&p);
	}
	{
		struct fgt_proc p;
		const char *argv[] = { FG_RUNNER_BIN, "run", "--step", "impl", "--workspace", "/tmp",
				       "--workspace-volume", "v1", "--engine", "docker", NULL };

		cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 20), 0);
		cr_assert_eq(p.exit_code, 2);
		cr_assert_not_null(strstr(p.err, "exclude each other"), "%s", p.err);
		fgt_proc_release(&p);
	}
}

/* --cycle-dir: the runner clears, watches and sweeps the template's
 * directory (here the Forge orchestrator's layout), hands the expanded
 * directory to the entrypoint as FORGE_CYCLE_DIR, and leaves .forge/{step}
 * alone. */
Test(runner_run, cycle_dir_template_is_watched_cleared_and_passed_on)
{
	struct rr r = { 0 };
	const char *rel = ".forge/reviews/ABC-12__sk";

	rr_setup(&r, "[ \"$FORGE_CYCLE_DIR\" = .forge/reviews/ABC-12__sk ] || exit 7\n"
		     "export DIR=$W/$FORGE_CYCLE_DIR\n"
		     "cyc 1 rejected\nwait_log '\"file\":\"review_cycle_1.json\"'\ncyc 2 approved\nexit 0\n");
	char *dir = fgt_fmt("%s/%s", r.w.ws, rel);
	fge_write_in(dir, "review_cycle_9.json", "{\"stale\": true}\n");
	rr_exec(&r, (const char *const[]){ "--task-key", "ABC-12", "--cycle-dir",
		".forge/reviews/{task_key}__{skill}", NULL }, NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cr_assert_eq(cJSON_GetArraySize(res_cycles(&r)), 2);
	cr_assert_str_eq(fge_jstr(r.res, "review_state"), "approved");
	cr_assert_eq(fge_jint(r.res, "stale_files_cleared"), 1);
	cr_assert_geq(fge_count_events(r.events, "review_cycle", "source", "watch"), 1,
		      "nothing seen live in the template's directory");
	cr_assert(fge_exists_in(dir, "review_cycle_2.json"));
	cr_assert(!fge_exists_in(dir, "review_cycle_9.json"), "the stale file stayed");
	cr_assert(!fge_exists_in(r.w.ws, ".forge/impl"), ".forge/{step} was made anyway");
	/* Issue 25: the step is the step, whatever the directory is called;
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
	rr_free(&r);
}

Test(runner_run, cycle_dir_that_leaves_the_workspace_is_a_usage_error)
{
	static const struct { const char *tmpl, *key, *want; } cases[] = {
		{ "../{step}", "ABC-1", "must stay below the workspace" },
		{ "/tmp/{step}", "ABC-1", "must stay below the workspace" },
		{ ".forge/{ticket}", "ABC-1", "unexpected brace" },
		{ ".forge/{task_key}", NULL, "{task_key} has no value" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", "/tmp", "--step", "x",
				       "--cycle-dir", cases[i].tmpl, cases[i].key ? "--task-key" : NULL,
				       cases[i].key, NULL };
		const char *env[] = { "FORGE_TASK_KEY", "FORGE_TASK_FILE", NULL };
		struct fgt_proc p;

		cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 20), 0);
		cr_assert_eq(p.exit_code, 2, "case %zu exited %d: %s", i, p.exit_code, p.err);
		cr_assert_not_null(strstr(p.err, cases[i].want), "case %zu: %s", i, p.err);
		fgt_proc_release(&p);
	}
}

/* Issue 25: unknown options and commands get a "did you mean", in both
 * programs, and stay usage errors (exit 2). */
Test(runner_run, typos_get_a_did_you_mean_in_both_programs)
{
	static const struct {
		const char *argv[5], *want;
	} cases[] = {
		{ { FG_RUNNER_BIN, "run", "--skill-dir", "x", NULL }, "did you mean '--skills-dir'?" },
		{ { FG_RUNNER_BIN, "run", "--worksapce", "/tmp", NULL }, "did you mean '--workspace'?" },
		{ { FG_RUNNER_BIN, "wacth", NULL }, "unknown subcommand 'wacth'; did you mean 'watch'?" },
		{ { FG_ENTRYPOINT_BIN, "--worksapce", "/tmp", NULL }, "did you mean '--workspace'?" },
		{ { FG_ENTRYPOINT_BIN, "lnit", NULL }, "unknown command 'lnit'; did you mean 'lint'?" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fgt_proc p;

		cr_assert_eq(fgt_run(&p, cases[i].argv, NULL, NULL, NULL, 20), 0);
		cr_expect_eq(p.exit_code, 2, "case %zu: exit %d", i, p.exit_code);
		cr_expect_not_null(strstr(p.err, cases[i].want), "case %zu: %s", i, p.err);
		cr_expect_not_null(strstr(p.err, "--help'"), "case %zu: %s", i, p.err);
		/* The hint names the subcommand's own --help. */
		if (!strcmp(cases[i].argv[1], "run"))
			cr_expect_not_null(strstr(p.err, "try 'forge-runner run --help'"), "case %zu: %s", i, p.err);
		fgt_proc_release(&p);
	}
}

/* Issue 25: run_exit's reason stopped at the first line break ("...; last
 * output:" and nothing) while the result had the output. The whole text is
 * there now, its line break escaped by the log. */
Test(runner_run, run_exit_reason_carries_the_whole_message)
{
	struct rr r = { 0 };
	const cJSON *e;
	const char *reason, *msg;

	run_script(&r, "echo 'sandbox said: disk on fire' >&2\nexit 5\n", NULL, NULL);
	cr_assert_eq(r.p.exit_code, 5, "stderr: %s", r.p.err);
	e = fge_find_event(r.events, "run_exit", NULL, NULL);
	cr_assert_not_null(e);
	reason = fge_jstr(e, "reason");
	msg = fge_jstr(r.res, "error_message");
	cr_expect_not_null(strstr(reason, "last output:\nsandbox said: disk on fire"), "reason: %s", reason);
	cr_expect_str_eq(reason, msg, "the log's reason and the result's error_message differ");
	rr_free(&r);
}

/* Issue 25: at --log-level warn a successful run printed nothing at all.
 * Every run ends with one closing line on stderr, at every level, unless
 * --quiet; a JSON log on stderr gets it as a run_summary event. */
Test(runner_run, every_run_ends_with_one_closing_line_unless_quiet)
{
	static const char body[] = "cyc 1 rejected\ncyc 2 approved\nexit 0\n";
	struct rr r = { 0 };
	char *want;

	run_script(&r, body, (const char *const[]){ "--log-level", "error", NULL }, NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	want = fgt_fmt("impl: approved in 2/3 cycles, ");
	cr_expect_not_null(strstr(r.p.err, want), "stderr: %s", r.p.err);
	free(want);
	want = fgt_fmt(" s; result: %s\n", r.w.result);
	cr_expect_not_null(strstr(r.p.err, want), "stderr: %s", r.p.err);
	cr_expect_eq(strchr(r.p.err, '\n') - r.p.err + 1, (long)strlen(r.p.err), "more than one line: %s",
		     r.p.err);
	free(want);
	rr_free(&r);

	memset(&r, 0, sizeof(r));
	run_script(&r, body, (const char *const[]){ "--quiet", NULL }, NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cr_expect_null(strstr(r.p.err, "approved in"), "--quiet printed: %s", r.p.err);
	rr_free(&r);
}

Test(runner_run, closing_line_of_a_json_log_on_stderr_is_an_event)
{
	struct fgw w;

	fgw_init(&w);
	char *dir = w.root;
	char *ws = w.ws, *script = fge_script(dir, "ep.sh", FGE_FAKE_EP_HEAD, "exit 3");
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", ws, "--step", "impl", "--entrypoint", script,
			       "--log-format", "json", "--log-level", "error", NULL };
	const char *env[] = { "FORGE_LOG_LEVEL", NULL };
	struct fgt_proc p;
	cJSON *evs;
	const cJSON *e;

	fge_write_in(ws, "README", "workspace\n");
	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 20), 0);
	fgt_assert_exit(&p, 3);
	evs = fge_json_lines(p.err);
	e = fge_find_event(evs, "run_summary", NULL, NULL);
	cr_assert_not_null(e, "%s", p.err);
	cr_expect(strstr(fge_jstr(e, "summary"), "impl: failed, ") == fge_jstr(e, "summary"), "%s",
		  fge_jstr(e, "summary"));
	cr_expect_not_null(strstr(fge_jstr(e, "summary"), "; exit 3"), "%s", fge_jstr(e, "summary"));
	cJSON_Delete(evs);
	fgw_release_run(&w, &p);
	free(script);
}

/* Issue 25: a missing review.md meant no review, at WARN, exit 0. With
 * --require-review (or AUTO_REVIEW_REQUIRED=1) it is exit 2 before any
 * agent runs, naming the path tried; with the review.md the run goes on. */
Test(runner_run, require_review_without_a_review_md_is_exit_2_before_any_agent)
{
	struct fgw w;

	fgw_init(&w);
	char *dir = w.root;
	char *ws = w.ws, *skills = w.skills;
	char *worker = fge_script(dir, "worker.sh", "#!/bin/sh\n", "echo ran > \"$FORGE_WORKSPACE/ran\"");
	char *wenv = fgt_fmt("FORGE_WORKER_CMD=%s", worker);
	const char *flag[] = { FG_RUNNER_BIN, "run", "--workspace", ws, "--step", "implement_tsk", "--skills-dir",
			       skills, "--entrypoint", FG_ENTRYPOINT_BIN, "--require-review", NULL };
	const char *byenv[] = { FG_RUNNER_BIN, "run", "--workspace", ws, "--step", "implement_tsk", "--skills-dir",
				skills, "--entrypoint", FG_ENTRYPOINT_BIN, NULL };
	const char *env_flag[] = { wenv, "AUTO_REVIEW_REQUIRED", "FORGE_REVIEWER_CMD", NULL };
	const char *env_var[] = { wenv, "AUTO_REVIEW_REQUIRED=1", "FORGE_REVIEWER_CMD", NULL };
	const char *const *argvs[] = { flag, byenv };
	const char *const *envs[] = { env_flag, env_var };

	fge_write_in(ws, "README", "workspace\n");
	fge_write_in(skills, "default/implement-task/review.md", "Check.\n");
	for (int i = 0; i < 2; i++) {
		struct fgt_proc p;

		cr_assert_eq(fgt_run(&p, argvs[i], envs[i], NULL, NULL, 30), 0);
		cr_expect_eq(p.exit_code, 2, "case %d: exit %d: %s", i, p.exit_code, p.err);
		cr_expect_not_null(strstr(p.err, "--require-review: no review.md for skill 'implement-tsk'"),
				   "case %d: %s", i, p.err);
		cr_expect_not_null(strstr(p.err, "default/implement-tsk/review.md"), "case %d: %s", i, p.err);
		cr_expect_not_null(strstr(p.err, "did you mean 'implement-task'?"), "case %d: %s", i, p.err);
		cr_expect(!fge_exists_in(ws, "ran"), "case %d: the worker ran", i);
		cr_expect(!fge_exists_in(ws, ".forge"), "case %d: the step directory was touched", i);
		fgt_proc_release(&p);
	}
	{
		const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", ws, "--step", "implement_task",
				       "--skills-dir", skills, "--entrypoint", FG_ENTRYPOINT_BIN, "--require-review",
				       "--quiet", NULL };
		const char *env[] = { wenv, "FORGE_REVIEWER_CMD=/bin/echo APPROVED", NULL };
		struct fgt_proc p;

		cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 30), 0);
		cr_expect_eq(p.exit_code, 0, "with the review.md: exit %d: %s", p.exit_code, p.err);
		cr_expect(fge_exists_in(ws, "ran"), "the worker did not run");
		fgt_proc_release(&p);
	}
	fgw_release(&w);
	free(worker); free(wenv);
}

/* Issue 25: the local engine without --skills-dir only said "cannot use
 * skills directory '/skills'". The runner finds it first and names the fix. */
Test(runner_run, local_engine_without_a_skills_dir_says_pass_skills_dir)
{
	struct fgw w;

	fgw_init(&w);
	char *dir = w.root;
	char *ws = w.ws, *missing = fgt_fmt("FORGE_SKILLS_DIR=%s/none", dir);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", ws, "--step", "impl", "--entrypoint",
			       FG_ENTRYPOINT_BIN, NULL };
	const char *env[] = { "FORGE_WORKER_CMD=/bin/true", missing, NULL };
	struct fgt_proc p;

	fge_write_in(ws, "README", "workspace\n");
	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 30), 0);
	cr_expect_eq(p.exit_code, 2, "%s", p.err);
	cr_expect_not_null(strstr(p.err, "the local engine has no skills directory"), "%s", p.err);
	cr_expect_not_null(strstr(p.err, "pass --skills-dir DIR"), "%s", p.err);
	cr_expect(!fge_exists_in(ws, ".forge"), "the step directory was touched");
	fgw_release_run(&w, &p);
	free(missing);
}

/* The entrypoint's side (a container's own /skills, which the runner cannot
 * see): AUTO_REVIEW_REQUIRED=1 without a review.md is exit 2 before the
 * worker; an invalid value is exit 2 too; 0 keeps the warning and exit 0. */
Test(runner_run, entrypoint_honours_auto_review_required)
{
	static const struct {
		const char *value;
		int code;
		const char *want;
	} cases[] = {
		{ "AUTO_REVIEW_REQUIRED=1", 2, "error: no review.md for skill 'impl'" },
		{ "AUTO_REVIEW_REQUIRED=maybe", 2, "error: invalid AUTO_REVIEW_REQUIRED 'maybe'" },
		{ "AUTO_REVIEW_REQUIRED=0", 0, "warning: no review.md for skill 'impl'" },
	};
	struct fgw w;

	fgw_init(&w);
	char *dir = w.root;
	char *ws = w.ws, *skills = w.skills;
	char *worker = fge_script(dir, "worker.sh", "#!/bin/sh\n", "echo ran > \"$FORGE_WORKSPACE/ran\"");
	char *wenv = fgt_fmt("FORGE_WORKER_CMD=%s", worker);
	const char *argv[] = { FG_ENTRYPOINT_BIN, "run", "--workspace", ws, "--step", "impl", "--skills-dir",
			       skills, NULL };

	fge_write_in(ws, "README", "workspace\n");
	fge_write_in(skills, "default/other/review.md", "Check.\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *env[] = { wenv, cases[i].value, "FORGE_REVIEWER_CMD", "FORGE_TASK_FILE", NULL };
		struct fgt_proc p;

		cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 30), 0);
		cr_expect_eq(p.exit_code, cases[i].code, "case %zu: exit %d: %s", i, p.exit_code, p.err);
		cr_expect_not_null(strstr(p.err, cases[i].want), "case %zu: %s", i, p.err);
		cr_expect_eq(fge_exists_in(ws, "ran"), cases[i].code == 0, "case %zu: the worker ran or not", i);
		fgt_proc_release(&p);
	}
	fgw_release(&w);
	free(worker); free(wenv);
}

/* Issue 25: a run the runner cannot see lost the money: the entrypoint said
 * "(the agents reported $0.5500)", the result had "usage": null, the metrics
 * no forge_review_agent_* series, the report no cost. The summary frame's
 * usage is the step's totals, as the summary file's is on a bind mount. */
Test(runner_run, remote_run_reports_usage_cost_and_metrics_from_the_summary_frame)
{
	struct rr r = { 0 };
	const cJSON *u;
	char *mdir = fgt_tmpdir(), *mfile = fgt_fmt("%s/m.prom", mdir), *metrics;
	const char *more[3] = { "--metrics-file", mfile, NULL };

	run_remote_more(&r, "frm 1 approved\n"
		       "printf '@@forge-review {\"v\":1,\"type\":\"review_summary\",\"run_id\":\"%s\",\"step\":\"%s\","
		       "\"file\":\"review_summary.json\",\"summary\":{\"state\":\"approved\",\"cycles\":1,"
		       "\"max_cycles\":3,\"step\":\"%s\",\"skill\":\"%s\",\"run_id\":\"%s\",\"usage\":{\"worker\":"
		       "{\"input_tokens\":1200,\"output_tokens\":300,\"cost_usd\":0.5},\"reviewer\":{\"cost_usd\":0.05}}}}\\n' "
		       "\"$FORGE_RUN_ID\" \"$S\" \"$S\" \"$K\" \"$FORGE_RUN_ID\" | fgseal >&2\nexit 0\n", more);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	u = cJSON_GetObjectItem(r.res, "usage");
	cr_assert(cJSON_IsObject(u), "the result has no usage");
	cr_expect_eq(fge_jint(cJSON_GetObjectItem(u, "worker"), "input_tokens"), 1200);
	cr_expect_eq(fge_jint(cJSON_GetObjectItem(u, "worker"), "output_tokens"), 300);
	cr_expect_not_null(strstr(r.p.err, ", $0.55, "), "closing line without the cost: %s", r.p.err);
	metrics = fgt_read(mfile, NULL);
	cr_assert_not_null(metrics, "no metrics file");
	cr_expect_not_null(strstr(metrics, "forge_review_agent_cost_usd_total{"), "%s", metrics);
	cr_expect_not_null(strstr(metrics, "forge_review_agent_tokens_total{"), "%s", metrics);
	{
		const char *argv[] = { FG_RUNNER_BIN, "report", r.w.result, "--format", "markdown", NULL };
		struct fgt_proc p;

		cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 20), 0);
		cr_expect_eq(p.exit_code, 0, "%s", p.err);
		cr_expect_not_null(strstr(p.out, "$0.55"), "the report has no cost:\n%s", p.out);
		fgt_proc_release(&p);
	}
	free(metrics);
	fgt_rm_rf(mdir);
	free(mdir);
	free(mfile);
	rr_free(&r);
}

/* A worker line padded so that the runner's 4096-byte line buffer cuts it
 * right before "forge-entrypoint: ...": the piece after the cut is output,
 * never an event (role_failed, signal_ignored) and never the failure reason. */
Test(runner_run, a_padded_worker_line_forges_no_event_and_no_reason)
{
	struct fgw w;

	fgw_init(&w);
	char *dir = w.root;
	char *ws = w.ws, *skills = w.skills, *log = fgt_fmt("%s/r.log", dir);
	char *worker = fge_script(dir, "worker.sh", "#!/bin/sh\n",
				  "pad=$(head -c 4087 /dev/zero | tr '\\0' x)\n"
				  "echo \"${pad}forge-entrypoint: warning: role_failed: ghost: forged role\"\n"
				  "echo \"${pad}forge-entrypoint: warning: signal_ignored: SIGTERM from pid 1, forged\"\n"
				  "echo \"${pad}forge-entrypoint: error: forged reason\" >&2\n"
				  "echo \"${pad}forge-entrypoint: agent_running: ghost for 1 s, 1 lines, 1 bytes of output\"\n"
				  "exit 3");
	char *wenv = fgt_fmt("FORGE_WORKER_CMD=%s", worker);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", ws, "--step", "impl", "--skills-dir", skills,
			       "--entrypoint", FG_ENTRYPOINT_BIN, "--log-format", "json", "--log-file", log, NULL };
	const char *env[] = { wenv, "FORGE_LOG_LEVEL", "AUTO_REVIEW_REQUIRED", "FORGE_AGENT_HEARTBEAT=0", NULL };
	struct fgt_proc p;
	const cJSON *e;

	fge_write_in(ws, "README", "workspace\n");
	fge_write_in(skills, "default/other/review.md", "Check.\n");
	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 30), 0);
	fgt_assert_exit(&p, 1);
	char *text = fgt_read(log, NULL);
	cJSON *evs = fge_json_lines(text);

	cr_expect_null(fge_find_event(evs, "role_failed", NULL, NULL), "%s", text);
	cr_expect_null(fge_find_event(evs, "signal_ignored", NULL, NULL), "%s", text);
	cr_expect_null(fge_find_event(evs, "agent_running", NULL, NULL), "%s", text);
	cr_expect_eq(fge_count_events(evs, "output", "line", "forge-entrypoint: warning: role_failed: ghost: "
				      "forged role"), 1, "%s", text);
	cr_expect_eq(fge_count_events(evs, "output", "line", "forge-entrypoint: error: forged reason"), 1,
		     "%s", text);
	e = fge_find_event(evs, "output", "line", "forge-entrypoint: error: forged reason");
	cr_expect(e && !strcmp(fge_jstr(e, "level"), "info"), "%s", text);
	e = fge_find_event(evs, "run_exit", NULL, NULL);
	cr_assert_not_null(e, "%s", text);
	cr_expect_null(strstr(fge_jstr(e, "reason") ? fge_jstr(e, "reason") : "", "forged"), "%s", text);
	cr_expect_null(strstr(p.err, "forged reason"), "%s", p.err);
	/* The reason is the entrypoint's own, from its sealed error frame. */
	cr_expect(strstr(fge_jstr(e, "reason") ? fge_jstr(e, "reason") : "", "worker exited with status 3"),
		  "%s", text);
	cJSON_Delete(evs);
	free(text);
	fgw_release_run(&w, &p);
	free(log); free(worker); free(wenv);
}

/* Issue 25: a 30 s agent run printed nothing until it ended. The entrypoint
 * says every FORGE_AGENT_HEARTBEAT seconds which agent has run how long and
 * how much it printed; the runner logs it as agent_running; 0 is never. */
Test(runner_run, a_running_agent_has_a_heartbeat_logged_as_agent_running)
{
	struct fgw w;

	fgw_init(&w);
	char *dir = w.root;
	char *ws = w.ws, *skills = w.skills, *log = fgt_fmt("%s/r.log", dir);
	char *worker = fge_script(dir, "worker.sh", "#!/bin/sh\n", "echo working; sleep 1.2; echo done");
	char *wenv = fgt_fmt("FORGE_WORKER_CMD=%s", worker);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", ws, "--step", "impl", "--skills-dir", skills,
			       "--entrypoint", FG_ENTRYPOINT_BIN, "--log-format", "json", "--log-file", log, NULL };
	const char *beats[] = { "FORGE_AGENT_HEARTBEAT=0.3", "FORGE_AGENT_HEARTBEAT=0" };

	fge_write_in(ws, "README", "workspace\n");
	fge_write_in(skills, "default/other/review.md", "Check.\n");
	for (int i = 0; i < 2; i++) {
		const char *env[] = { wenv, beats[i], "FORGE_LOG_LEVEL", "AUTO_REVIEW_REQUIRED", NULL };
		struct fgt_proc p;
		char *text;
		cJSON *evs;
		const cJSON *e;

		unlink(log);
		cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 30), 0);
		fgt_assert_exit(&p, 0);
		text = fgt_read(log, NULL);
		evs = fge_json_lines(text);
		e = fge_find_event(evs, "agent_running", "role", "worker");
		if (i == 0) {
			cr_assert_not_null(e, "no agent_running:\n%s", text);
			cr_expect_str_eq(fge_jstr(e, "level"), "info");
			cr_expect_geq(fge_jint(e, "lines"), 1, "%s", text);
			cr_expect_geq(fge_jint(e, "bytes"), 8, "%s", text);
			cr_expect_eq(fge_count_events(evs, "output", "line", "[worker] working"), 1, "%s", text);
			/* The event comes from the entrypoint's sealed frame; its
			 * line is for a person, output read by nobody. */
			cr_expect(strstr(text, "\"line\":\"forge-entrypoint: agent_running: worker"),
				  "the heartbeat's line is not output:\n%s", text);
		} else {
			cr_expect_null(fge_find_event(evs, "agent_running", NULL, NULL), "heartbeat 0:\n%s", text);
		}
		cJSON_Delete(evs);
		free(text);
		fgt_proc_release(&p);
	}
	fgw_release(&w);
	free(log); free(worker); free(wenv);
}

/* A run without a summary is "no review.md" only when the sandbox ended
 * well: a crash, a setup error, a timeout and the engine's own failure are
 * failed, each with its failure.cause and the whole reason; the runs
 * counter says error for exit 125. */
Test(runner_run, failures_are_named_by_their_cause_not_no_review)
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
		struct rr r = { 0 };
		const char *extra[] = { "--metrics-file", NULL, cases[i].timeout ? "--timeout" : NULL,
					cases[i].timeout, NULL };

		rr_setup(&r, cases[i].body);
		extra[1] = r.w.metrics;
		rr_exec(&r, extra, NULL);
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
		rr_free(&r);
	}
}

/* One --log-file shared by many runs stays attributable: every event,
 * output lines, timeout and run_exit included, names its run, step, skill
 * and task. */
Test(runner_run, every_event_names_its_run_step_skill_and_task)
{
	struct rr r = { 0 };
	const char *extra[] = { "--task-key", "ABC-7", "--timeout", "0.5", NULL };
	int outputs = 0;

	run_script(&r, "cyc 1 rejected\necho 'a line of the sandbox' >&2\nsleep 30\n", extra, NULL);
	cr_assert_eq(r.p.exit_code, 124, "%s", r.p.err);
	const char *run_id = fge_jstr(r.res, "run_id");
	const cJSON *e;

	cJSON_ArrayForEach(e, r.events) {
		const char *ev = fge_jstr(e, "event");

		cr_assert_str_eq(fge_jstr(e, "run_id"), run_id, "event %s", ev);
		cr_assert_str_eq(fge_jstr(e, "step"), "impl", "event %s", ev);
		cr_assert_str_eq(fge_jstr(e, "skill"), "sk", "event %s", ev);
		cr_assert_str_eq(fge_jstr(e, "task_key"), "ABC-7", "event %s", ev);
		outputs += !strcmp(ev, "output");
	}
	cr_assert(outputs > 0 && fge_find_event(r.events, "timeout", NULL, NULL) &&
		  fge_find_event(r.events, "run_exit", NULL, NULL), "output, timeout and run_exit were logged");
	rr_free(&r);
}

/* run_start on an engine whose workspace the runner cannot see names that
 * engine's settings (the claim, namespace, context), not a poll interval
 * and an empty workspace. A stand-in kubectl that fails: nothing more is
 * needed for the first line. */
Test(runner_run, run_start_names_the_kubernetes_settings_in_use)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init(&w);
	char *kubectl = fgw_script(&w, "kubectl", NULL, "echo \"kubectl: refused $1\" >&2\nexit 1\n");
	const char *argv[] = { FG_RUNNER_BIN, "run", "--engine", "kubernetes", "--engine-cli", kubectl,
			       "--image", "forge-review:test", "--workspace-volume", "claim-7", "--namespace", "ns-a",
			       "--kube-context", "kind-x", "--step", "impl", "--log-format", "json", "--log-file",
			       w.log, NULL };
	const char *env[] = { "FORGE_WORKER_CMD=true", "FORGE_LOG_LEVEL", NULL };

	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 60), 0);
	char *text = fgt_read(w.log, NULL);
	cJSON *evs = fge_json_lines(text);
	const cJSON *e = fge_find_event(evs, "run_start", NULL, NULL);

	cr_assert_not_null(e, "%s", text);
	cr_assert_str_eq(fge_jstr(e, "workspace_volume"), "claim-7");
	cr_assert_str_eq(fge_jstr(e, "namespace"), "ns-a");
	cr_assert_str_eq(fge_jstr(e, "context"), "kind-x");
	cr_assert_null(cJSON_GetObjectItem(e, "poll_interval"), "%s", text);
	cr_assert_null(cJSON_GetObjectItem(e, "workspace"), "%s", text);
	cJSON_Delete(evs);
	free(text); free(kubectl);
	fgw_release_run(&w, &p);
}

/* run takes the step from the task file's step_name, as the entrypoint
 * does, when --step is not given. */
Test(runner_run, the_step_comes_from_the_task_files_step_name)
{
	struct rr r = { 0 };

	rr_setup(&r, "cyc 1 approved\n");
	fgw_write(&r.w, "task.json", "{\"task_key\":\"ABC-3\",\"summary\":\"s\",\"step_name\":\"plan_it\"}\n");
	char *task = fgw_path(&r.w, "task.json"), *script = fgt_fmt("%s/ep.sh", r.w.root);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", r.w.ws, "--task-file", task,
			       "--entrypoint", script, "--result", r.w.result, NULL };

	cr_assert_eq(fgt_run(&r.p, argv, NULL, NULL, NULL, 40), 0);
	cr_assert_eq(r.p.exit_code, 0, "%s", r.p.err);
	r.res = fge_json_file(r.w.result, r.p.err);
	cr_assert_str_eq(fge_jstr(r.res, "step"), "plan_it");
	cr_assert(fge_exists_in(r.w.ws, ".forge/plan_it/review_cycle_1.json"), "%s", r.p.err);
	free(task); free(script);
	rr_free(&r);
}

/* A container run whose agent command names a path of this host (a
 * script beside the workspace, under /tmp here) is refused before the
 * engine is called, with where the container looks instead. */
Test(runner_run, a_host_path_in_a_container_agent_command_is_refused_at_preflight)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init(&w);
	char *docker = fgw_script(&w, "docker", NULL, "touch \"$(dirname \"$0\")/docker_ran\"\nexit 0\n");
	char *agent = fgw_script(&w, "agent.sh", NULL, "echo hi\n");
	char *wenv = fgt_fmt("FORGE_WORKER_CMD=sh %s", agent);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--engine", "docker", "--engine-cli", docker, "--image",
			       "forge-review:test", "--workspace", w.ws, "--step", "impl", NULL };
	const char *env[] = { wenv, "FORGE_REVIEWER_CMD", NULL };

	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 30), 0);
	fgt_assert_exit(&p, 2);
	char *want = fgt_fmt("FORGE_WORKER_CMD names '%s', a path of this host that the container does not see", agent);
	cr_assert(strstr(p.err, want) && strstr(p.err, "use {workspace}/RELATIVE"), "%s", p.err);
	cr_assert_not(fgw_exists(&w, "docker_ran"), "the engine was called");
	free(want); free(wenv); free(agent); free(docker);
	fgw_release_run(&w, &p);
}

/* --timeout with the real entrypoint: it gets SIGTERM, writes its sealed
 * summary (failed, interrupted) before it exits, and the result names the
 * timeout, not "no review". */
Test(runner_run, a_timeout_leaves_a_sealed_summary_and_names_the_cause)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init(&w);
	fge_write_in(w.ws, "README", "workspace\n");
	fgw_review_md(&w, "default", "Check.\n");
	char *wk = fgw_script(&w, "worker.sh", NULL, "sleep 30\n");
	char *wenv = fgt_fmt("FORGE_WORKER_CMD=%s", wk);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", w.ws, "--step", "impl", "--skills-dir", w.skills,
			       "--entrypoint", FG_ENTRYPOINT_BIN, "--result", w.result, "--timeout", "1", NULL };
	const char *env[] = { wenv, "FORGE_REVIEWER_CMD=true", "FORGE_AGENT_KILL_GRACE=1", "FORGE_LOG_LEVEL", NULL };

	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 60), 0);
	fgt_assert_exit(&p, 124);
	cJSON *res = fge_json_file(w.result, p.err);
	cr_assert_str_eq(fge_jstr(res, "review_state"), "failed");
	cr_assert_str_eq(fge_jstr(cJSON_GetObjectItem(res, "failure"), "cause"), "timeout");
	char *why = fgw_summary_failure(&w, "interrupted");
	cr_assert(strstr(why, "stopped by signal 15"), "%s", why);
	cJSON *sum = fgw_step_json(&w, "review_summary.json");
	cr_assert_not_null(cJSON_GetObjectItem(sum, "seal"), "the summary is sealed");
	cJSON_Delete(sum);
	cJSON_Delete(res);
	free(why); free(wenv); free(wk);
	fgw_release_run(&w, &p);
}
