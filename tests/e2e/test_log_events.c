/*
 * test_log_events.c - the lines forge-runner run logs about a run: the
 * run_start's settings, an unparsed verdict, the closing line and its
 * reason, the agents' heartbeat, the run, step, skill and task on every
 * event.
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

TestSuite(log_events, .timeout = 60);

/* Run_start said skill="" when the skill was derived; it logs the
 * skill the entrypoint will use (task file's skill_name, else the step with
 * '_' -> '-'). */
Test(log_events, run_start_logs_the_derived_skill)
{
	struct fgw w;

	fgw_init(&w);
	char *log = fgt_fmt("%s/r.log", w.root), *task = fgt_fmt("%s/task.json", w.root);
	char *script = fge_script(w.root, "ep.sh", FGE_FAKE_EP_HEAD, "exit 0");
	const char *env[] = { "FORGE_SKILL_NAME", "FORGE_LOG_LEVEL", NULL };
	const char *from_step[] = { FG_RUNNER_BIN, "run", "--workspace", w.ws, "--step", "implement_task",
				    "--entrypoint", script, "--log-format", "json", "--log-file", log, NULL };
	const char *from_task[] = { FG_RUNNER_BIN, "run", "--workspace", w.ws, "--step", "implement_task",
				    "--task-file", task, "--entrypoint", script, "--log-format", "json",
				    "--log-file", log, NULL };
	const char *const *argvs[] = { from_step, from_task };
	static const char *const want[] = { "implement-task", "add-license" };

	fge_write_in(w.ws, "README", "workspace\n");
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

/* A reviewer printing "LGTM" gave rejected cycles that looked like
 * real rejections, all INFO. Each cycle without a parsable verdict gets a
 * verdict_unparsed warning naming its reviewer log and the words expected;
 * a reviewer that failed (format none too) and a normal rejection do not. */
Test(log_events, unparsed_verdict_is_a_warning_naming_the_reviewer_log)
{
	struct fgr r = { 0 };
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

	fgr_run_script(&r, body, NULL, NULL);
	cr_assert_eq(r.p.exit_code, 0, "%s", r.p.err);
	cr_assert_eq(fge_count_events(r.events, "verdict_unparsed", NULL, NULL), 1);
	e = fge_find_event(r.events, "verdict_unparsed", NULL, NULL);
	cr_expect_str_eq(fge_jstr(e, "level"), "warn");
	cr_expect_eq(fge_jint(e, "cycle"), 1);
	cr_expect_str_eq(fge_jstr(e, "file"), "review_cycle_1.json");
	cr_expect_str_eq(fge_jstr(e, "reviewer_log"), "review_cycle_1.reviewer.log");
	cr_expect(strstr(fge_jstr(e, "expected"), "APPROVED or REJECTED"));
	fgr_release(&r);
}

/* Run_exit's reason stopped at the first line break ("...; last
 * output:" and nothing) while the result had the output. The whole text is
 * there now, its line break escaped by the log. */
Test(log_events, run_exit_reason_carries_the_whole_message)
{
	struct fgr r = { 0 };
	const cJSON *e;
	const char *reason, *msg;

	fgr_run_script(&r, "echo 'sandbox said: disk on fire' >&2\nexit 5\n", NULL, NULL);
	cr_assert_eq(r.p.exit_code, 5, "stderr: %s", r.p.err);
	e = fge_find_event(r.events, "run_exit", NULL, NULL);
	cr_assert_not_null(e);
	reason = fge_jstr(e, "reason");
	msg = fge_jstr(r.res, "error_message");
	cr_expect_not_null(strstr(reason, "last output:\nsandbox said: disk on fire"), "reason: %s", reason);
	cr_expect_str_eq(reason, msg, "the log's reason and the result's error_message differ");
	fgr_release(&r);
}

/* At --log-level warn a successful run printed nothing at all.
 * Every run ends with one closing line on stderr, at every level, unless
 * --quiet; a JSON log on stderr gets it as a run_summary event. */
Test(log_events, every_run_ends_with_one_closing_line_unless_quiet)
{
	static const char body[] = "cyc 1 rejected\ncyc 2 approved\nexit 0\n";
	struct fgr r = { 0 };
	char *want;

	fgr_run_script(&r, body, (const char *const[]){ "--log-level", "error", NULL }, NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	want = fgt_fmt("impl: approved in 2/3 cycles, ");
	cr_expect_not_null(strstr(r.p.err, want), "stderr: %s", r.p.err);
	free(want);
	want = fgt_fmt(" s; result: %s\n", r.w.result);
	cr_expect_not_null(strstr(r.p.err, want), "stderr: %s", r.p.err);
	cr_expect_eq(strchr(r.p.err, '\n') - r.p.err + 1, (long)strlen(r.p.err), "more than one line: %s",
		     r.p.err);
	free(want);
	fgr_release(&r);

	memset(&r, 0, sizeof(r));
	fgr_run_script(&r, body, (const char *const[]){ "--quiet", NULL }, NULL);
	cr_assert_eq(r.p.exit_code, 0, "stderr: %s", r.p.err);
	cr_expect_null(strstr(r.p.err, "approved in"), "--quiet printed: %s", r.p.err);
	fgr_release(&r);
}

Test(log_events, closing_line_of_a_json_log_on_stderr_is_an_event)
{
	struct fgw w;

	fgw_init(&w);
	char *script = fge_script(w.root, "ep.sh", FGE_FAKE_EP_HEAD, "exit 3");
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", w.ws, "--step", "impl", "--entrypoint", script,
			       "--log-format", "json", "--log-level", "error", NULL };
	const char *env[] = { "FORGE_LOG_LEVEL", NULL };
	struct fgt_proc p;
	cJSON *evs;
	const cJSON *e;

	fge_write_in(w.ws, "README", "workspace\n");
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

/* A 30 s agent run printed nothing until it ended. The entrypoint
 * says every FORGE_AGENT_HEARTBEAT seconds which agent has run how long and
 * how much it printed; the runner logs it as agent_running; 0 is never. */
Test(log_events, a_running_agent_has_a_heartbeat_logged_as_agent_running)
{
	struct fgw w;

	fgw_init(&w);
	char *log = fgt_fmt("%s/r.log", w.root);
	char *worker = fge_script(w.root, "worker.sh", "#!/bin/sh\n", "echo working; sleep 1.2; echo done");
	char *wenv = fgt_fmt("FORGE_WORKER_CMD=%s", worker);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", w.ws, "--step", "impl", "--skills-dir", w.skills,
			       "--entrypoint", FG_ENTRYPOINT_BIN, "--log-format", "json", "--log-file", log, NULL };
	const char *beats[] = { "FORGE_AGENT_HEARTBEAT=0.3", "FORGE_AGENT_HEARTBEAT=0" };

	fge_write_in(w.ws, "README", "workspace\n");
	fge_write_in(w.skills, "default/other/review.md", "Check.\n");
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

/* One --log-file shared by many runs stays attributable: every event,
 * output lines, timeout and run_exit included, names its run, step, skill
 * and task. */
Test(log_events, every_event_names_its_run_step_skill_and_task)
{
	struct fgr r = { 0 };
	const char *extra[] = { "--task-key", "ABC-7", "--timeout", "0.5", NULL };
	int outputs = 0;

	fgr_run_script(&r, "cyc 1 rejected\necho 'a line of the sandbox' >&2\nsleep 30\n", extra, NULL);
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
	fgr_release(&r);
}

/* run_start on an engine whose workspace the runner cannot see names that
 * engine's settings (the claim, namespace, context), not a poll interval
 * and an empty workspace. A stand-in kubectl that fails: nothing more is
 * needed for the first line. */
Test(log_events, run_start_names_the_kubernetes_settings_in_use)
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
	fge_assert_strs(e, "workspace_volume", "claim-7", "namespace", "ns-a", "context", "kind-x");
	cr_assert_null(cJSON_GetObjectItem(e, "poll_interval"), "%s", text);
	cr_assert_null(cJSON_GetObjectItem(e, "workspace"), "%s", text);
	cJSON_Delete(evs);
	free(text); free(kubectl);
	fgw_release_run(&w, &p);
}
