/*
 * test_cli_run.c - forge-runner run's command line: configuration and
 * usage errors (exit 2, nothing changed), container options on the local
 * engine, did-you-mean, required review, the skills directory, the step of
 * the task file, preflight of the agents' commands, the entrypoint's
 * configuration error passed through.
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

TestSuite(cli_run, .timeout = 60);

Test(cli_run, copy_without_recording_dir_is_a_usage_error)
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

/* A docker run without --image cleared the previous run's cycle
 * files, then exited 125. Every configuration error is found before the
 * step directory is touched: exit 2, nothing changed, no result written. */
Test(cli_run, configuration_errors_exit_2_and_change_nothing)
{
	struct fgw w;

	fgw_init(&w);
	char *step = fgt_fmt("%s/ws/.forge/impl", w.root);
	char *res = fgt_fmt("%s/result.json", w.root), *file = fgt_fmt("%s/afile", w.root);
	char *colon = fgt_fmt("%s/a:b", w.root);
	const char *env[] = { "FORGE_IMAGE", "FORGE_ENGINE", NULL };
	const char *no_image[] = { FG_RUNNER_BIN, "run", "--engine", "docker", "--workspace", w.ws,
				   "--step", "impl", "--result", res, NULL };
	const char *skills_file[] = { FG_RUNNER_BIN, "run", "--engine", "docker", "--image", "img:1",
				      "--workspace", w.ws, "--step", "impl", "--result", res,
				      "--skills-dir", file, NULL };
	const char *skills_colon[] = { FG_RUNNER_BIN, "run", "--engine", "docker", "--image", "img:1",
				       "--workspace", w.ws, "--step", "impl", "--result", res,
				       "--skills-dir", colon, NULL };
	const char *no_entrypoint[] = { FG_RUNNER_BIN, "run", "--engine", "local", "--workspace", w.ws,
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

/* The entrypoint's configuration error ("FORGE_REVIEWER_CMD is not
 * set") was an INFO output line and run_exit only said exit_code=2. With the
 * real entrypoint: the line is an ERROR and run_exit's reason repeats it. */
Test(cli_run, entrypoint_configuration_error_is_an_error_line_and_the_reason)
{
	struct fgw w;

	fgw_init(&w);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", w.ws, "--step", "impl", "--skills-dir", w.skills,
			       "--entrypoint", FG_ENTRYPOINT_BIN, "--log-format", "json", "--log-file", w.log,
			       "--log-level", "warn", NULL };
	const char *env[] = { "FORGE_WORKER_CMD=/bin/true", "FORGE_REVIEWER_CMD", "FORGE_LOG_LEVEL",
			      "AUTO_REVIEW_MAX_RETRIES", "FORGE_SKILL_NAME", "FORGE_TASK_FILE", NULL };
	struct fgt_proc p;
	const cJSON *e;

	fgw_write(&w, "ws/README", "workspace\n");
	fgw_review_md(&w, "default", "Check.\n");
	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 30), 0);
	fgt_assert_exit(&p, 2);
	fgw_load(&w, 1);
	e = fge_find_event(w.events, "output", NULL, NULL);
	cr_assert_not_null(e, "%s", w.logtext);
	cr_expect_str_eq(fge_jstr(e, "level"), "error");
	cr_expect(strstr(fge_jstr(e, "line"), "forge-entrypoint: error: FORGE_REVIEWER_CMD is not set") ==
		  fge_jstr(e, "line"), "%s", w.logtext);
	e = fge_find_event(w.events, "run_exit", NULL, NULL);
	cr_assert_not_null(e);
	cr_expect(strstr(fge_jstr(e, "reason"), "error: FORGE_REVIEWER_CMD is not set") == fge_jstr(e, "reason"),
		  "%s", w.logtext);
	fgw_release_run(&w, &p);
}

/* Container limits: given to the local engine they are refused (a limit
 * silently not applied is worse); bad values are usage errors; their
 * environment twins are ignored by the local engine. */
Test(cli_run, container_options_checked_and_refused_for_the_local_engine)
{
	static const struct { const char *opt, *val, *engine, *env, *want; } cases[] = {
		{ "--memory", "4g", "local", NULL, "'--memory' applies to the docker, podman and kubernetes engines only" },
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

Test(cli_run, workspace_volume_needs_a_container_engine_and_no_workspace)
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

Test(cli_run, cycle_dir_that_leaves_the_workspace_is_a_usage_error)
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

/* Unknown options and commands get a "did you mean", in both
 * programs, and stay usage errors (exit 2). */
Test(cli_run, typos_get_a_did_you_mean_in_both_programs)
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

/* FORGE_WORKER_CMD=R/worker.sh (owned), a worker that leaves ws/ran. */
static char *ran_worker_env(const struct fgw *w)
{
	char *worker = fgw_script(w, "worker.sh", NULL, "echo ran > \"$FORGE_WORKSPACE/ran\"");
	char *env = fgt_fmt("FORGE_WORKER_CMD=%s", worker);

	free(worker);
	return env;
}

/* A missing review.md meant no review, at WARN, exit 0. With
 * --require-review (or AUTO_REVIEW_REQUIRED=1) it is exit 2 before any
 * agent runs, naming the path tried; with the review.md the run goes on. */
Test(cli_run, require_review_without_a_review_md_is_exit_2_before_any_agent)
{
	struct fgw w;

	fgw_init(&w);
	char *ws = w.ws, *skills = w.skills, *wenv = ran_worker_env(&w);
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
	free(wenv);
}

/* The local engine without --skills-dir only said "cannot use
 * skills directory '/skills'". The runner finds it first and names the fix. */
Test(cli_run, local_engine_without_a_skills_dir_says_pass_skills_dir)
{
	struct fgw w;

	fgw_init(&w);
	char *missing = fgt_fmt("FORGE_SKILLS_DIR=%s/none", w.root);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", w.ws, "--step", "impl", "--entrypoint",
			       FG_ENTRYPOINT_BIN, NULL };
	const char *env[] = { "FORGE_WORKER_CMD=/bin/true", missing, NULL };
	struct fgt_proc p;

	fge_write_in(w.ws, "README", "workspace\n");
	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 30), 0);
	cr_expect_eq(p.exit_code, 2, "%s", p.err);
	fgt_assert_has(p.err, "the local engine has no skills directory", "pass --skills-dir DIR");
	cr_expect(!fge_exists_in(w.ws, ".forge"), "the step directory was touched");
	fgw_release_run(&w, &p);
	free(missing);
}

/* The entrypoint's side (a container's own /skills, which the runner cannot
 * see): AUTO_REVIEW_REQUIRED=1 without a review.md is exit 2 before the
 * worker; an invalid value is exit 2 too; 0 keeps the warning and exit 0. */
Test(cli_run, entrypoint_honours_auto_review_required)
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
	char *ws = w.ws, *skills = w.skills, *wenv = ran_worker_env(&w);
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
	free(wenv);
}

/* run takes the step from the task file's step_name, as the entrypoint
 * does, when --step is not given. */
Test(cli_run, the_step_comes_from_the_task_files_step_name)
{
	struct fgr r = { 0 };

	fgr_init(&r, "cyc 1 approved\n");
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
	fgr_release(&r);
}

/* A container run whose agent command names a path of this host (a
 * script beside the workspace, under /tmp here) is refused before the
 * engine is called, with where the container looks instead. */
Test(cli_run, a_host_path_in_a_container_agent_command_is_refused_at_preflight)
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
