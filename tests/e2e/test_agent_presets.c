/*
 * test_agent_presets.c - the agent presets end to end (claude, codex,
 * gemini): stand-in CLIs first on PATH, run through forge-runner and the
 * real entrypoint: their command lines, the system prompt's place, a failed
 * turn or error result, the CLI or credentials missing, and each agent's
 * own vendor's credentials.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgagent.h"
#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(agent_presets, .timeout = 120);

/* A stand-in codex beside the claude one (codex exec --json lines). */
static void lp_codex(struct fga *l, const char *body)
{
	free(fge_script(l->w.bin, "codex", "#!/bin/sh\n"
			"cat > \"$FORGE_WORKSPACE/../stdin.$FORGE_ROLE\"\n"
			"echo \"$*\" > \"$FORGE_WORKSPACE/../args.$FORGE_ROLE\"\n"
			"echo '{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}'\n", body));
}

Test(agent_presets, a_claude_worker_reporting_is_error_with_exit_0_fails_the_task)
{
	struct fga l;

	fga_init(&l, "---\nmax_retries: 3\n---\nCheck.\n",
		 "init\nresult true 'API Error: 529 Overloaded' 0.002 0\nexit 0\n");
	fga_run_exit(&l, NULL, 1);
	cr_assert(strstr(l.logtext, "the task failed: API Error: 529 Overloaded (its claude output names a "
			  "failure, exit status 0)"), "the reason is not said:\n%s", l.logtext);
	/* The review phase was never reached: no cycle, no reviewer run. */
	cr_assert_not(fgt_exists(l.w.step_dir) && fge_exists_in(l.w.step_dir, "review_cycle_1.json"));
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(l.result, "review_cycles")), 0);
	cr_assert_eq(fge_jint(l.result, "exit_code"), 1);
	fga_release(&l);
}

/* The codex preset: prompt on stdin (the system prompt in front, Codex has
 * no option for it), "-" as the prompt argument, Codex's own sandbox off
 * (the container is the sandbox: its bubblewrap cannot start in Docker);
 * a turn.failed is a rejected cycle; Codex reports no cost, so a budget
 * never stops it. */
Test(agent_presets, codex_preset_reviewer_gets_the_system_prompt_in_front_and_a_failed_turn_rejects)
{
	static const char *codex[] = { "FORGE_WORKER_AGENT=codex", "FORGE_REVIEWER_AGENT=codex",
				       "AUTO_REVIEW_MAX_COST_USD=0", NULL };
	struct fga l;
	cJSON *c1, *c2;
	char *in, *args;

	fga_init(&l, "---\nmax_retries: 2\n---\nCheck the calculator.\n", "exit 1\n");
	lp_codex(&l, "if [ $FORGE_ROLE = reviewer ] && [ ! -f \"$FORGE_WORKSPACE/../failed\" ]; then\n"
		     "  touch \"$FORGE_WORKSPACE/../failed\"\n"
		     "  echo '{\"type\":\"error\",\"message\":\"Reconnecting... 1/5\"}'\n"
		     "  echo '{\"type\":\"turn.failed\",\"error\":{\"message\":\"stream disconnected\"}}'; exit 0\n"
		     "fi\n"
		     "echo '{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"APPROVED\"}}'\n"
		     "echo '{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":9,\"cached_input_tokens\":4,\"output_tokens\":2}}'\n");
	fga_run_exit(&l, codex, 0);
	c1 = fga_json(&l, "review_cycle_1.json");
	cr_assert_str_eq(fge_jstr(c1, "verdict"), "rejected");
	cr_assert(strstr(fge_jstr(c1, "feedback"), "stream disconnected"), "%s", fge_jstr(c1, "feedback"));
	c2 = fga_json(&l, "review_cycle_2.json");
	cr_assert_str_eq(fge_jstr(c2, "verdict"), "approved");
	cr_assert_eq(fga_num(fga_path2(c2, "usage", "reviewer"), "cached_input_tokens"), 4);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(fga_path2(c2, "usage", "reviewer"), "cost_usd")));
	in = fga_read(&l, "stdin.reviewer");
	cr_assert(!strncmp(in, "You are the reviewer", 20), "%.200s", in);
	cr_assert(strstr(in, "Check the calculator."), "the review.md body is missing");
	args = fga_read(&l, "args.reviewer");
	/* The clean reviewer: no AGENTS.md the worker could have written. */
	cr_assert_str_eq(args, "exec --json --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check "
			 "-c project_doc_max_bytes=0 -\n");
	free(in);
	free(args);
	cJSON_Delete(c1);
	cJSON_Delete(c2);
	fga_release(&l);
}

/* The gemini preset: stream-json, workspace trust (--skip-trust and
 * GEMINI_CLI_TRUST_WORKSPACE: an untrusted folder exits 55 headless) and
 * --approval-mode yolo (--yolo is deprecated); a result with status error
 * fails the worker whatever its exit status. */
Test(agent_presets, gemini_preset_command_lines_and_an_error_result_fails_the_worker)
{
	static const char *gem[] = { "FORGE_WORKER_AGENT=gemini", "FORGE_REVIEWER_AGENT=gemini", NULL };
	struct fga l;
	char *args;

	fga_init(&l, "---\nmax_retries: 2\n---\nCheck.\n", "exit 1\n");
	free(fge_script(l.w.bin, "gemini", "#!/bin/sh\n",
			"cat > /dev/null\n"
			"echo \"$*\" > \"$FORGE_WORKSPACE/../args.$FORGE_ROLE\"\n"
			"echo \"$GEMINI_CLI_TRUST_WORKSPACE\" > \"$FORGE_WORKSPACE/../trust.$FORGE_ROLE\"\n"
			"echo 'Loaded cached credentials.'\n"
			"echo '{\"type\":\"init\",\"session_id\":\"g-1\",\"model\":\"m\"}'\n"
			"echo '{\"type\":\"result\",\"status\":\"error\",\"error\":{\"type\":\"quota\","
			"\"message\":\"Quota exceeded\"},\"stats\":{\"input_tokens\":3,\"output_tokens\":0}}'\n"));
	fga_run_exit(&l, gem, 1);
	cr_assert(strstr(l.logtext, "the task failed: Quota exceeded (quota) (its gemini output names a failure"),
		  "%s", l.logtext);
	args = fga_read(&l, "args.worker");
	cr_assert_str_eq(args, "--output-format stream-json --skip-trust --approval-mode yolo\n");
	free(args);
	args = fga_read(&l, "trust.worker");
	cr_assert_str_eq(args, "true\n");
	free(args);
	fga_release(&l);
}

/* The claude preset's reviewer may run the shell (tests) and read, never
 * edit; as root IS_SANDBOX=1 lets the worker skip permissions; flags in
 * FORGE_*_ARGS are appended to the preset's line. */
Test(agent_presets, claude_preset_reviewer_runs_tools_and_appended_args_keep_working)
{
	static const char *env[] = { "FORGE_REVIEWER_ARGS=--model haiku", "FORGE_WORKER_ARGS=--max-turns 5",
				     NULL };
	struct fga l;
	char *args, *sandbox;
	static const char tail[] = " --allowedTools Bash,Read,Glob,Grep --disallowedTools Edit,Write,NotebookEdit "
				   "--model haiku\n";

	fga_init(&l, "---\nmax_retries: 1\n---\nCheck.\n",
		 "echo \"${IS_SANDBOX-unset}\" > \"$FORGE_WORKSPACE/../sandbox.$FORGE_ROLE\"\n"
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
		 "result false 'Fine. APPROVED' 0.1 1\n");
	fga_run_exit(&l, env, 0);
	args = fga_read(&l, "args.worker");
	cr_assert_str_eq(args, "-p --output-format stream-json --verbose --dangerously-skip-permissions "
			 "--max-turns 5\n");
	free(args);
	args = fga_read(&l, "args.reviewer");
	cr_assert(strlen(args) > sizeof(tail) && !strcmp(args + strlen(args) - (sizeof(tail) - 1), tail),
		  "%s", args);
	cr_assert(!strncmp(args, "-p --output-format stream-json --verbose --append-system-prompt ", 64), "%.80s",
		  args);
	free(args);
	sandbox = fga_read(&l, "sandbox.worker");
	cr_assert_str_eq(sandbox, geteuid() == 0 ? "1\n" : "unset\n");
	free(sandbox);
	fga_release(&l);
}

/* The preflight: a preset's CLI missing from PATH, or its
 * credentials missing, is exit 2 before any agent runs, saying what to do. */
Test(agent_presets, a_preset_without_its_cli_or_credentials_stops_before_any_agent)
{
	static const char *no_gemini[] = { "FORGE_WORKER_AGENT=gemini", NULL };
	static const char *no_key[] = { "FORGE_REVIEWER_AGENT=codex", "CODEX_API_KEY", "OPENAI_API_KEY=sk-x",
					"CODEX_HOME=/nonexistent", NULL };
	struct fga l;
	char *ran;

	fga_init(&l, "---\nmax_retries: 1\n---\nCheck.\n", "result false 'done' 0.1 1\n");
	fga_run_exit(&l, no_gemini, 2);
	cr_assert(strstr(l.logtext, "cannot run worker 'gemini': not found in PATH (the image needs Gemini CLI: "
			 "see docs/guide/container-image.md)"), "%s", l.logtext);
	ran = fga_read(&l, "count.worker");
	cr_assert_str_eq(ran, "", "an agent ran");
	free(ran);
	cJSON_Delete(l.result);
	free(l.logtext);
	fgt_proc_release(&l.p);
	lp_codex(&l, "exit 0\n");
	fga_run_exit(&l, no_key, 2);
	cr_assert(strstr(l.logtext, "the reviewer's Codex CLI (FORGE_REVIEWER_AGENT=codex) has no credentials: set "
			 "CODEX_API_KEY, or log in so that '/nonexistent/auth.json' exists; in a container pass a "
			 "variable in by name: forge-runner run --env CODEX_API_KEY (codex exec reads CODEX_API_KEY, "
			 "not OPENAI_API_KEY)"), "%s", l.logtext);
	ran = fga_read(&l, "count.worker");
	cr_assert_str_eq(ran, "", "an agent ran");
	free(ran);
	fga_release(&l);
}

/* Least privilege: the Codex worker does not see the Claude
 * reviewer's key nor the reviewer Codex's; neither sees the variables of a
 * Claude Code session the run was started from. */
Test(agent_presets, each_agent_gets_only_its_own_vendors_credentials)
{
	static const char *env[] = { "FORGE_WORKER_AGENT=codex", "CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli", NULL };
	static const char rec[] = "echo \"${ANTHROPIC_API_KEY-unset} ${CODEX_API_KEY-unset} ${GEMINI_API_KEY-unset} "
				  "${CLAUDECODE-unset} ${CLAUDE_CODE_ENTRYPOINT-unset}\" > \"$FORGE_WORKSPACE/../env.$FORGE_ROLE\"\n";
	struct fga l;
	char *body = fgt_fmt("%sif [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
			     "result false 'Fine. APPROVED' 0.1 1\n", rec);
	char *cbody = fgt_fmt("%secho '{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"done\"}}'\n"
			      "echo '{\"type\":\"turn.completed\",\"usage\":{}}'\n", rec);
	char *w, *r;

	fga_init(&l, "---\nmax_retries: 1\n---\nCheck.\n", body);
	lp_codex(&l, cbody);
	fga_run_exit(&l, env, 0);
	w = fga_read(&l, "env.worker");
	r = fga_read(&l, "env.reviewer");
	cr_assert_str_eq(w, "unset test-codex unset unset unset\n");
	cr_assert_str_eq(r, "sk-test-anthropic unset unset unset unset\n");
	free(w);
	free(r);
	free(body);
	free(cbody);
	fga_release(&l);
}
