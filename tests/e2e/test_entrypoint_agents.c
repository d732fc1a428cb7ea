/*
 * test_entrypoint_agents.c - agents as processes, PID 1 duties and
 * configuration errors, through the real forge-entrypoint.
 */
#include <errno.h>
#include <sys/stat.h>

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

TestSuite(entrypoint_agents, .timeout = 180);

static long read_pid(struct fgw *w, const char *name)
{
	char *s = fgw_read(w, name);
	long pid;

	cr_assert(s, "missing %s", name);
	pid = strtol(s, NULL, 10);
	free(s);
	return pid;
}

Test(entrypoint_agents, sigterm_forwards_and_exits_143_without_strays)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "Check.\n");
	/* The agent starts a grandchild, then has its parent (forge-entrypoint)
	 * receive SIGTERM (from outside its tree: issue 22), and waits. */
	char *body = fgt_fmt("%s"
			     "sleep 300 &\n"
			     "echo $! > ../gc.pid\n"
			     "echo $$ > ../agent.pid\n"
			     "outside_kill TERM $PPID\n"
			     "wait\n", FGE_OUTSIDE_KILL);
	char *wk = fgw_script(&w, "worker.sh", NULL, body);
	char *rv = fgw_script(&w, "reviewer.sh", NULL, "echo ran > ../reviewer_ran.txt; echo APPROVED");
	free(body);
	fgw_entrypoint_signalled(&w, &p, wk, rv, NULL);
	cr_assert(p.exited, "forge-entrypoint died by signal %d", p.signal);
	fgt_assert_exit(&p, 143);
	long agent = read_pid(&w, "agent.pid"), gc = read_pid(&w, "gc.pid");
	cr_assert_eq(fgt_count_group((pid_t)agent), 0, "a process of the agent's group is left");
	cr_assert(kill((pid_t)gc, 0) < 0 && errno == ESRCH, "grandchild %ld still exists", gc);
	cr_assert(!fgw_exists(&w, "reviewer_ran.txt"), "nothing runs after SIGTERM");
	/* The summary says how the step ended: interrupted, not "no review". */
	char *why = fgw_summary_failure(&w, "interrupted");
	cr_assert(strstr(why, "stopped by signal 15"), "%s", why);
	free(why);
	free(wk); free(rv);
	fgw_release_run(&w, &p);
}

/* SIGHUP (a closed terminal, outside a container) and SIGQUIT stop a run
 * like SIGTERM: forwarded to the agent, nothing left behind, exit 128+N. */
Test(entrypoint_agents, sighup_and_sigquit_stop_the_run_like_sigterm)
{
	static const struct {
		const char *name;
		int code;
	} sigs[] = { { "HUP", 129 }, { "QUIT", 131 } };

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct fgw w;
		struct fgt_proc p;
		char *body = fgt_fmt("%s"
				     "sleep 300 &\n"
				     "echo $$ > ../agent.pid\n"
				     "outside_kill %s $PPID\n"
				     "wait\n", FGE_OUTSIDE_KILL, sigs[i].name);

		fgw_init(&w);
		fgw_task(&w, NULL);
		fgw_review_md(&w, "default", "Check.\n");
		char *wk = fgw_script(&w, "worker.sh", NULL, body);
		char *rv = fgw_script(&w, "reviewer.sh", NULL, "echo ran > ../reviewer_ran.txt; echo APPROVED");
		fgw_entrypoint_signalled(&w, &p, wk, rv, NULL);
		cr_assert(p.exited, "[%s] forge-entrypoint died by signal %d", sigs[i].name, p.signal);
		cr_assert_eq(p.exit_code, sigs[i].code, "[%s] stderr:\n%s", sigs[i].name, p.err);
		long agent = read_pid(&w, "agent.pid");
		cr_assert_eq(fgt_count_group((pid_t)agent), 0, "[%s] a process of the agent's group is left",
			     sigs[i].name);
		cr_assert(!fgw_exists(&w, "reviewer_ran.txt"), "[%s] nothing runs after the signal",
			  sigs[i].name);
		free(wk);
		free(rv);
		free(body);
		fgt_proc_release(&p);
		fgw_release(&w);
	}
}

Test(entrypoint_agents, orphans_are_reaped)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nmax_retries: 1\n---\nCheck.\n");
	/* A double fork: the short sleep is re-parented to forge-entrypoint
	 * (subreaper) and exits while the worker still runs. */
	char *wk = fgw_script(&w, "worker.sh", NULL, "(sleep 0.2 &)\nsleep 1\n");
	/* The reviewer counts zombie children of its parent. */
	char *rv = fgw_script(&w, "reviewer.sh", NULL,
			     "z=$(cat /proc/[0-9]*/stat 2>/dev/null | awk -v pp=$PPID '$4 == pp && $3 == \"Z\"' | wc -l)\n"
			     "if [ \"$z\" -eq 0 ]; then echo APPROVED; else echo \"REJECTED: $z zombies\"; fi\n");
	fgw_entrypoint(&w, &p, wk, rv, NULL);
	fgt_assert_exit(&p, 0);
	cJSON *c = fgw_step_json(&w, "review_cycle_1.json");
	cr_assert_str_eq(fge_jstr(c, "verdict"), "approved", "%s", fge_jstr(c, "feedback"));
	cJSON_Delete(c); free(wk); free(rv);
	fgw_release_run(&w, &p);
}

Test(entrypoint_agents, hundred_megabytes_of_output_do_not_block)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nmax_retries: 1\n---\nCheck.\n");
	char *wk = fgw_script(&w, "worker.sh", NULL, "head -c 1000000 /dev/zero | tr '\\0' 'w'; echo");
	char *rv = fgw_script(&w, "reviewer.sh", NULL,
			     "head -c 100000000 /dev/zero | tr '\\0' 'y'\necho\necho 'All fine. APPROVED'\n");
	/* 100 MB through a sanitizer build on a loaded machine can take longer
	 * than the suite's usual 30 s agent timeout: this test is about not
	 * blocking, not about the timeout. */
	fgw_entrypoint(&w, &p, wk, rv, (const char *const[]){ "FORGE_AGENT_TIMEOUT=110",
							      "FORGE_AGENT_IDLE_TIMEOUT=110", NULL });
	cr_assert_eq(p.exit_code, 0, "stderr tail:\n%s", p.err_len > 2000 ? p.err + p.err_len - 2000 : p.err);
	cJSON *c = fgw_step_json(&w, "review_cycle_1.json");
	cr_assert_str_eq(fge_jstr(c, "verdict"), "approved");
	/* Streamed live (in chunks, prefixed) and the raw log capped at 32 MiB. */
	cr_assert_gt(p.err_len, 100000000u);
	char *path = fgt_fmt("%s/review_cycle_1.reviewer.log", w.step_dir);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_lt(st.st_size, 32 * 1024 * 1024 + 1024);
	cr_assert_gt(st.st_size, 32 * 1024 * 1024 - 1);
	free(path);
	cJSON_Delete(c); free(wk); free(rv);
	fgw_release_run(&w, &p);
}

Test(entrypoint_agents, placeholders_with_spaces_and_quotes_stay_single_arguments)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init(&w);
	fgw_task(&w, NULL);
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

Test(entrypoint_agents, workspace_with_spaces)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init(&w);
	fgw_task(&w, NULL);
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

/* The preflight (issue 24): a worker that cannot be found is a
 * configuration error, exit 2, before anything is created. */
Test(entrypoint_agents, missing_worker_binary_fails_the_task_clearly)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init(&w);
	fgw_task(&w, NULL);
	fgw_entrypoint(&w, &p, "xyz-no-such-agent --go", NULL, NULL);
	fgt_assert_exit(&p, 2);
	cr_assert(strstr(p.err, "error: cannot run worker 'xyz-no-such-agent': not found in PATH (PATH="), "%s", p.err);
	cr_assert(!strstr(p.err, "relative path"), "a PATH lookup is not a relative path: %s", p.err);
	cr_assert(!strstr(p.err, "running the worker"), "%s", p.err);
	fgt_proc_release(&p);

	/* Issue 18: a relative path is taken from the workspace; the error says so. */
	fgw_entrypoint(&w, &p, "agents/worker.sh --go", NULL, NULL);
	fgt_assert_exit(&p, 2);
	char *want = fgt_fmt("error: cannot run worker 'agents/worker.sh': no executable file '%s/agents/worker.sh' "
			     "(a relative path is resolved from the workspace)", w.ws);
	cr_assert(strstr(p.err, want), "%s", p.err);
	free(want);
	fgw_release_run(&w, &p);
}

Test(entrypoint_agents, worker_idle_timeout_fails_the_task)
{
	struct fgw w;
	struct fgt_proc p;
	const char *extra[] = { "FORGE_AGENT_IDLE_TIMEOUT=0.3", NULL };

	fgw_init(&w);
	fgw_task(&w, NULL);
	char *wk = fgw_script(&w, "worker.sh", NULL, "echo working; exec sleep 60");
	fgw_entrypoint(&w, &p, wk, NULL, extra);
	fgt_assert_exit(&p, 1);
	cr_assert(strstr(p.err, "FORGE_AGENT_IDLE_TIMEOUT"), "%s", p.err);
	free(wk);
	fgw_release_run(&w, &p);
}

Test(entrypoint_agents, agent_ignoring_sigterm_is_killed_after_grace)
{
	struct fgw w;
	struct fgt_proc p;
	const char *extra[] = { "FORGE_AGENT_TIMEOUT=0.3", "FORGE_AGENT_KILL_GRACE=0.2", NULL };

	fgw_init(&w);
	fgw_task(&w, NULL);
	char *wk = fgw_script(&w, "worker.sh", NULL, "trap '' TERM\nwhile :; do sleep 1; done");
	fgw_entrypoint(&w, &p, wk, NULL, extra);
	fgt_assert_exit(&p, 1);
	cr_assert(strstr(p.err, "worker timed out after 0.3 s"), "%s", p.err);
	free(wk);
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

Test(entrypoint_agents, invalid_timeout_is_a_config_error)
{
	const char *e[] = { "FORGE_AGENT_TIMEOUT=abc", NULL };

	config_error(e, "impl", "invalid FORGE_AGENT_TIMEOUT 'abc'");
}

Test(entrypoint_agents, invalid_idle_timeout_is_a_config_error)
{
	const char *e[] = { "FORGE_AGENT_IDLE_TIMEOUT=-5", NULL };

	config_error(e, "impl", "FORGE_AGENT_IDLE_TIMEOUT");
}

Test(entrypoint_agents, invalid_fail_on_exhaustion_is_a_config_error)
{
	const char *e[] = { "AUTO_REVIEW_FAIL_ON_EXHAUSTION=maybe", NULL };

	config_error(e, "impl", "AUTO_REVIEW_FAIL_ON_EXHAUSTION");
}

Test(entrypoint_agents, hostile_step_name_is_a_config_error)
{
	config_error(NULL, "../../etc", "invalid step name");
}

Test(entrypoint_agents, hostile_task_key_is_a_config_error)
{
	const char *e[] = { "FORGE_TASK_KEY=../../etc-1", NULL };

	config_error(e, "impl", "task key");
}

Test(entrypoint_agents, hostile_skill_name_is_a_config_error)
{
	const char *e[] = { "FORGE_SKILL_NAME=a/b", NULL };

	config_error(e, "impl", "invalid skill name");
}

Test(entrypoint_agents, unset_worker_cmd_is_a_config_error)
{
	const char *e[] = { "FORGE_WORKER_CMD=", NULL };

	config_error(e, "impl", "FORGE_WORKER_CMD is not set");
}

Test(entrypoint_agents, unterminated_quote_is_a_config_error)
{
	const char *e[] = { "FORGE_REVIEWER_CMD=claude 'oops", NULL };

	config_error(e, "impl", "invalid FORGE_REVIEWER_CMD: unterminated single quote");
}

Test(entrypoint_agents, unset_reviewer_cmd_with_review_md_is_a_config_error)
{
	const char *e[] = { "FORGE_REVIEWER_CMD=", NULL };

	config_error(e, "impl", "FORGE_REVIEWER_CMD is not set");
}

Test(entrypoint_agents, missing_skills_dir_is_a_config_error)
{
	const char *e[] = { "FORGE_SKILLS_DIR=/nonexistent/skills", NULL };
	struct fgw w;
	struct fgt_proc p;

	/* --skills-dir wins over the env: run without it here. */
	fgw_init(&w);	fgw_task(&w, NULL);
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

Test(entrypoint_agents, bad_task_file_is_a_config_error)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init(&w);
	fgw_task(&w, NULL);
	char *task = fgt_fmt("%s/task.json", w.root);
	fgt_write(task, "{\"summary\": 42}");
	fgw_entrypoint(&w, &p, "/bin/true", NULL, NULL);
	fgt_assert_exit(&p, 2);
	cr_assert(strstr(p.err, "'summary' must be a string"), "%s", p.err);
	free(task);
	fgw_release_run(&w, &p);
}

Test(entrypoint_agents, usage_errors_exit_2_with_hint)
{
	struct fgt_proc p;
	const char *argv[] = { FG_ENTRYPOINT_BIN, "run", "--no-such-option", NULL };

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 30), 0);
	cr_assert_eq(p.exit_code, 2);
	cr_assert(strstr(p.err, "forge-entrypoint: unknown option '--no-such-option'"), "%s", p.err);
	cr_assert(strstr(p.err, "try 'forge-entrypoint --help'"), "%s", p.err);
	fgt_proc_release(&p);
}
