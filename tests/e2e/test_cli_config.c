/*
 * test_cli_config.c - forge-entrypoint run's configuration: placeholders
 * and spaces in the agents' commands and the workspace, each configuration
 * error (exit 2 before any agent, naming the setting), usage errors, and
 * the preflight of an unwritable cycle directory.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(cli_config, .timeout = 180);

Test(cli_config, placeholders_with_spaces_and_quotes_stay_single_arguments)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, NULL);
	char *rec = fgw_script(&w, "rec args.sh", NULL,
			      "for a in \"$@\"; do printf '%s\\n' \"$a\"; done > ../args.txt\n"
			      "cat \"$3\" > ../promptfile.txt");
	char *cmd = fgt_fmt("'%s' \"--label=it's {step}\" {workspace} {prompt_file} {cycle}/{skill}/{task_key} "
			    "'{system_prompt_file}' {unknown}", rec);
	fgw_entrypoint(&w, &p, cmd, NULL, NULL);
	fgt_assert_exit(&p, 0);
	char *args = fgw_read(&w, "args.txt");
	char *lines[8] = { 0 };
	int n = 0;
	for (char *s = args, *nl; s && *s && n < 8; s = nl + 1) {
		nl = strchr(s, '\n');
		cr_assert(nl);
		*nl = '\0';
		lines[n++] = s;
	}
	cr_assert_eq(n, 6, "args:\n%s", args);
	cr_assert_str_eq(lines[0], "--label=it's impl");
	cr_assert_str_eq(lines[1], w.ws);
	cr_assert(strstr(lines[2], "worker-prompt.md"), "%s", lines[2]);
	cr_assert_str_eq(lines[3], "0/impl/ABC-12");
	cr_assert_str_eq(lines[4], "");
	cr_assert_str_eq(lines[5], "{unknown}");
	char *pf = fgw_read(&w, "promptfile.txt");
	cr_assert(strstr(pf, "Add a greeting"), "%s", pf);
	/* The prompt files live outside the workspace and are gone afterwards. */
	cr_assert(strncmp(lines[2], w.ws, strlen(w.ws)) != 0);
	cr_assert(!fgt_exists(lines[2]), "prompt file left behind: %s", lines[2]);
	free(pf); free(args); free(cmd); free(rec);
	fgw_release_run(&w, &p);
}

Test(cli_config, workspace_with_spaces)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, NULL);
	char *spaced = fgt_fmt("%s/my \"odd\" ws", w.root);
	char *keep = fgt_fmt("%s/.keep", spaced);
	fgt_write(keep, "");
	char *rec = fgw_script(&w, "rec.sh", NULL, "printf '%s|%s' \"$1\" \"$(pwd)\" > \"$1/../where.txt\"");
	char *cmd = fgt_fmt("%s {workspace}", rec);
	char *wsenv = fgt_fmt("FORGE_WORKSPACE=%s", spaced);
	const char *argv[] = { FG_ENTRYPOINT_BIN, "--step", "impl", NULL };
	const char *env[] = { wsenv, "FORGE_SKILLS_DIR", "FORGE_TASK_FILE", "FORGE_SKILL_NAME", "FORGE_TASK_KEY",
			      "FORGE_REVIEWER_CMD", NULL };
	char *wcmd = fgt_fmt("FORGE_WORKER_CMD=%s", cmd);
	const char *env2[8];
	memcpy(env2, env, sizeof(env));
	env2[6] = wcmd;
	env2[7] = NULL;
	char *skills = fgt_fmt("FORGE_SKILLS_DIR=%s", w.skills);
	env2[1] = skills;
	cr_assert_eq(fgt_run(&p, argv, env2, NULL, NULL, 60), 0);
	fgt_assert_exit(&p, 0);
	char *where = fgw_read(&w, "where.txt");
	char *want = fgt_fmt("%s|%s", spaced, spaced);
	cr_assert_str_eq(where, want);
	free(where); free(want); free(skills); free(wcmd); free(wsenv); free(cmd); free(rec); free(keep); free(spaced);
	fgw_release_run(&w, &p);
}

/* A configuration error exits 2 and runs nothing. */
static void config_error(const char *const *extra, const char *step, const char *want)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "Check.\n");
	char *wk = fgw_script(&w, "worker.sh", NULL, "echo ran > ../worker_ran.txt");
	char *wcmd = fgt_fmt("FORGE_WORKER_CMD=%s", wk);
	char *rcmd = fgt_fmt("FORGE_REVIEWER_CMD=%s", wk);
	const char *env[16];
	size_t n = 0;
	for (size_t i = 0; extra && extra[i]; i++)
		env[n++] = extra[i];
	env[n++] = wcmd;
	env[n++] = rcmd;
	env[n++] = "FORGE_AGENT_TIMEOUT=30";
	env[n] = NULL;
	const char *argv[] = { FG_ENTRYPOINT_BIN, "--workspace", w.ws, "--skills-dir", w.skills,
			       "--step", step, NULL };
	cr_assert_eq(fgt_run(&p, argv, env, w.root, NULL, 60), 0);
	fgt_assert_exit(&p, 2);
	cr_assert(strstr(p.err, want), "want '%s' in:\n%s", want, p.err);
	cr_assert(!fgw_exists(&w, "worker_ran.txt"), "no agent may run on a configuration error");
	free(wk); free(wcmd); free(rcmd);
	fgw_release_run(&w, &p);
}

/* Each bad setting (a variable, or the step name on the command line) and
 * the words its error must hold. */
static const struct config_case {
	const char *env;  /* NAME=value, or NULL */
	const char *step;
	const char *want;
} CONFIG_CASES[] = {
	{ "FORGE_AGENT_TIMEOUT=abc", "impl", "invalid FORGE_AGENT_TIMEOUT 'abc'" },
	{ "FORGE_AGENT_IDLE_TIMEOUT=-5", "impl", "FORGE_AGENT_IDLE_TIMEOUT" },
	{ "AUTO_REVIEW_FAIL_ON_EXHAUSTION=maybe", "impl", "AUTO_REVIEW_FAIL_ON_EXHAUSTION" },
	{ NULL, "../../etc", "invalid step name" },
	{ "FORGE_TASK_KEY=../../etc-1", "impl", "task key" },
	{ "FORGE_SKILL_NAME=a/b", "impl", "invalid skill name" },
	{ "FORGE_WORKER_CMD=", "impl", "FORGE_WORKER_CMD is not set" },
	{ "FORGE_REVIEWER_CMD=claude 'oops", "impl", "invalid FORGE_REVIEWER_CMD: unterminated single quote" },
	/* With a review.md (config_error writes one), no reviewer is an error. */
	{ "FORGE_REVIEWER_CMD=", "impl", "FORGE_REVIEWER_CMD is not set" },
};

Test(cli_config, each_bad_setting_is_a_config_error)
{
	for (size_t i = 0; i < sizeof(CONFIG_CASES) / sizeof(CONFIG_CASES[0]); i++) {
		const struct config_case *c = &CONFIG_CASES[i];
		const char *e[] = { c->env, NULL };

		config_error(c->env ? e : NULL, c->step, c->want);
	}
}

Test(cli_config, missing_skills_dir_is_a_config_error)
{
	const char *e[] = { "FORGE_SKILLS_DIR=/nonexistent/skills", NULL };
	struct fgw w;
	struct fgt_proc p;

	/* --skills-dir wins over the env: run without it here. */
	fgw_init_step(&w, NULL);
	char *wk = fgw_script(&w, "worker.sh", NULL, "echo ran > ../worker_ran.txt");
	char *wcmd = fgt_fmt("FORGE_WORKER_CMD=%s", wk);
	const char *env[] = { e[0], wcmd, NULL };
	const char *argv[] = { FG_ENTRYPOINT_BIN, "run", "--workspace", w.ws, "--step", "impl", NULL };
	cr_assert_eq(fgt_run(&p, argv, env, w.root, NULL, 60), 0);
	fgt_assert_exit(&p, 2);
	cr_assert(strstr(p.err, "/nonexistent/skills"), "%s", p.err);
	cr_assert(!fgw_exists(&w, "worker_ran.txt"));
	free(wk); free(wcmd);
	fgw_release_run(&w, &p);
}

Test(cli_config, bad_task_file_is_a_config_error)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init(&w);
	fgw_task(&w, "{\"summary\": 42}");
	fgw_entrypoint(&w, &p, "/bin/true", NULL, NULL);
	fgt_assert_exit(&p, 2);
	cr_assert(strstr(p.err, "'summary' must be a string"), "%s", p.err);
	fgw_release_run(&w, &p);
}

Test(cli_config, usage_errors_exit_2_with_hint)
{
	struct fgt_proc p;
	const char *argv[] = { FG_ENTRYPOINT_BIN, "run", "--no-such-option", NULL };

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 30), 0);
	cr_assert_eq(p.exit_code, 2);
	fgt_assert_has(p.err, "forge-entrypoint: unknown option '--no-such-option'",
		       "try 'forge-entrypoint --help'");
	fgt_proc_release(&p);
}

struct nobody_run {
	const char *const *argv;
	const char *const *envp;
	const char *err_file;
};

/* In the child, as nobody: the entrypoint with stderr to err_file. */
static int exec_entrypoint(void *arg)
{
	const struct nobody_run *r = arg;
	int fd = open(r->err_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

	if (fd < 0 || dup2(fd, 2) < 0)
		return 126;
	execve(r->argv[0], (char *const *)r->argv, (char *const *)r->envp);
	return 127;
}

Test(cli_config, an_unwritable_cycle_dir_stops_the_run_before_any_agent_and_names_the_fix)
{
	struct fgw w;
	char *task, *wk, *marker, *errf, *err, *out_dir, *wcmd, *rcmd, *skills;
	int code;

	fge_skip_unless_root("needs root to run the entrypoint as another uid (nobody) on a root-owned workspace");
	fgw_init_step(&w, NULL);
	fgw_review_md(&w, "default", "---\nmax_retries: 1\n---\nCheck.\n");
	marker = fgt_fmt("%s/ran", w.root);
	wk = fgw_script(&w, "worker.sh", NULL, "echo ran > \"$FORGE_WORKSPACE/../ran\"\n");
	out_dir = fgt_fmt("%s/out", w.root);
	cr_assert_eq(mkdir(out_dir, 0777), 0);
	cr_assert_eq(chmod(out_dir, 0777), 0);
	/* Everything readable by nobody, the workspace not writable by it. */
	cr_assert_eq(chmod(w.root, 0755), 0);
	cr_assert_eq(chmod(w.ws, 0755), 0);
	errf = fgt_fmt("%s/stderr", out_dir);
	task = fgt_fmt("%s/task.json", w.root);
	wcmd = fgt_fmt("FORGE_WORKER_CMD=%s", wk);
	rcmd = fgt_fmt("FORGE_REVIEWER_CMD=no-such-reviewer-xyz");
	skills = fgt_fmt("FORGE_SKILLS_DIR=%s", w.skills);
	const char *argv[] = { FG_ENTRYPOINT_BIN, "run", "--workspace", w.ws, "--step", "impl", "--task-file", task,
			       NULL };
	const char *envp[] = { "PATH=/usr/bin:/bin", wcmd, rcmd, skills, "FORGE_RUN_ID=test-run", NULL };
	struct nobody_run r = { argv, envp, errf };

	code = fgt_as_nobody(exec_entrypoint, &r);
	err = fgt_read(errf, NULL);
	cr_assert_not_null(err);
	cr_assert_eq(code, 2, "exit %d; stderr:\n%s", code, err);
	char *want = fgt_fmt("error: cannot write the cycle directory '%s/.forge/impl': '%s' is owned by 0:0 (mode "
			     "0755) and forge-entrypoint runs as uid:gid 65534:65534 (%s); run the container as its "
			     "owner (forge-runner run --engine-arg --user=0:0) or give the workspace to 65534:65534 "
			     "(chown -R 65534:65534 on the host)", w.ws, w.ws, strerror(EACCES));
	cr_assert(strstr(err, want), "want:\n%s\nstderr:\n%s", want, err);
	/* Every problem at once: the reviewer is missing too. */
	cr_assert(strstr(err, "cannot run reviewer 'no-such-reviewer-xyz': not found in PATH (PATH=/usr/bin:/bin;"),
		  "%s", err);
	cr_assert_not(fgt_exists(marker), "the worker ran");
	cr_assert_not(fgt_exists(w.step_dir), "the cycle directory was created");
	free(want);
	free(err);

	/* In a pod (the kubelet sets KUBERNETES_SERVICE_HOST) the fix is the
	 * kubernetes engine's: its --engine-arg and --run-as 0 are refused. */
	const char *kenvp[] = { "PATH=/usr/bin:/bin", wcmd, rcmd, skills, "FORGE_RUN_ID=test-run",
				"KUBERNETES_SERVICE_HOST=in-cluster", NULL };
	struct nobody_run kr = { argv, kenvp, errf };

	code = fgt_as_nobody(exec_entrypoint, &kr);
	err = fgt_read(errf, NULL);
	cr_assert_eq(code, 2, "exit %d; stderr:\n%s", code, err);
	cr_assert(strstr(err, "on Kubernetes give the claim to the pod's group (forge-runner run --fs-group 65534"),
		  "%s", err);
	cr_assert_null(strstr(err, "--engine-arg"), "%s", err);
	free(err);
	free(errf);
	free(task);
	free(wcmd);
	free(rcmd);
	free(skills);
	free(out_dir);
	free(marker);
	free(wk);
	fgw_release(&w);
}
