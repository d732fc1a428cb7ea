/*
 * test_agent_loop.c - real agent CLIs' structured output through the whole
 * chain: `forge-runner run --engine local` starts the real forge-entrypoint,
 * whose presets (FORGE_WORKER_AGENT / FORGE_REVIEWER_AGENT=claude) run a
 * stand-in `claude` found first on PATH. The stand-in prints what Claude
 * Code prints (stream-json lines, from ../shared/agent-transcripts/) and
 * switches on FORGE_ROLE and a counter file, so each test scripts a run:
 * a worker whose result says is_error with exit 0, a reviewer whose REJECTED
 * is inside its result, a budget crossed in cycle 2 of 5, a reviewer asked
 * once more for a verdict. Asserts on exit codes, cycle files, the summary,
 * the result, the metrics and the report.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(agent_loop, .timeout = 120);

struct lp {
	struct fgw w;       /* the tree: ws, skills, bin (the stand-in CLIs), result, metrics, log */
	struct fgt_proc p;
	cJSON *result;
	char *logtext;      /* the runner's log: the entrypoint's stderr is in it */
};

/* The stand-in's common head: the run number of this role, stdin drained
 * (the preset closes it after the prompt), the arguments recorded, and as
 * the worker a change to the workspace (a turn that changes nothing costs
 * no review). */
static const char STANDIN_HEAD[] =
	"#!/bin/sh\n"
	"cat > /dev/null\n"
	"C=\"$FORGE_WORKSPACE/../count.$FORGE_ROLE\"\n"
	"n=$(cat \"$C\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$C\"\n"
	"echo \"$*\" > \"$FORGE_WORKSPACE/../args.$FORGE_ROLE\"\n"
	"if [ \"$FORGE_ROLE\" = worker ]; then echo \"turn $n\" >> \"$FORGE_WORKSPACE/work.txt\"; fi\n"
	"init() { echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-1\"}'; }\n"
	"result() { printf '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":%s,"
	"\"result\":\"%s\",\"session_id\":\"s-%s\",\"num_turns\":1,\"duration_ms\":100,"
	"\"total_cost_usd\":%s,\"usage\":{\"input_tokens\":10,\"cache_creation_input_tokens\":0,"
	"\"cache_read_input_tokens\":5,\"output_tokens\":%s}}\\n' \"$1\" \"$2\" \"$FORGE_ROLE\" \"$3\" \"$4\"; }\n";

static void lp_setup(struct lp *l, const char *review_md, const char *standin_body)
{
	fgw_init(&l->w);
	fgw_review_md(&l->w, "default", review_md);
	free(fge_script(l->w.bin, "claude", STANDIN_HEAD, standin_body));
	l->result = NULL;
}

/* A stand-in codex beside the claude one (codex exec --json lines). */
static void lp_codex(struct lp *l, const char *body)
{
	free(fge_script(l->w.bin, "codex", "#!/bin/sh\n"
			"cat > \"$FORGE_WORKSPACE/../stdin.$FORGE_ROLE\"\n"
			"echo \"$*\" > \"$FORGE_WORKSPACE/../args.$FORGE_ROLE\"\n"
			"echo '{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}'\n", body));
}

static void lp_run(struct lp *l, const char *const *extra_env)
{
	const char *argv[] = { FG_RUNNER_BIN, "run", "--engine", "local", "--workspace", l->w.ws,
			       "--step", "impl", "--skill", "impl", "--skills-dir", l->w.skills,
			       "--entrypoint", FG_ENTRYPOINT_BIN, "--result", l->w.result,
			       "--metrics-file", l->w.metrics, "--log-format", "json", "--log-file", l->w.log,
			       NULL };
	char *path = fgt_fmt("PATH=%s:/usr/local/bin:/usr/bin:/bin", l->w.bin);
	static const char *const defaults[] = {
		"FORGE_WORKER_AGENT=claude", "FORGE_REVIEWER_AGENT=claude", "FORGE_WORKER_CMD",
		"FORGE_REVIEWER_CMD", "FORGE_WORKER_OUTPUT", "FORGE_REVIEWER_OUTPUT",
		"AUTO_REVIEW_MAX_COST_USD", "AUTO_REVIEW_REASK", "AUTO_REVIEW_MAX_RETRIES",
		"AUTO_REVIEW_FAIL_ON_EXHAUSTION", "FORGE_WORKER_ARGS", "FORGE_REVIEWER_ARGS", "IS_SANDBOX",
		"GEMINI_CLI_TRUST_WORKSPACE", "ANTHROPIC_API_KEY=sk-test-anthropic", "CODEX_API_KEY=test-codex",
		"GEMINI_API_KEY=test-gemini",
	};
	const char *env[32] = { path };
	size_t n = 1;
	char *text;

	/* The test's own settings first: the first of two equal names wins. */
	for (size_t i = 0; extra_env && extra_env[i]; i++)
		env[n++] = extra_env[i];
	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		bool set = false;

		for (size_t j = 0; extra_env && extra_env[j]; j++)
			set = set || (strcspn(extra_env[j], "=") == strcspn(defaults[i], "=") &&
				      !strncmp(extra_env[j], defaults[i], strcspn(defaults[i], "=")));
		if (!set)
			env[n++] = defaults[i];
	}
	env[n] = NULL;
	cr_assert_eq(fgt_run(&l->p, argv, env, NULL, NULL, 60), 0);
	cr_assert(!l->p.timed_out);
	text = fgt_read(l->w.result, NULL);
	cr_assert_not_null(text, "no result file; stderr:\n%s", l->p.err);
	l->result = cJSON_Parse(text);
	cr_assert_not_null(l->result, "result not JSON: %s", text);
	free(text);
	l->logtext = fgt_read(l->w.log, NULL);
	cr_assert_not_null(l->logtext, "no runner log");
	free(path);
}

static void lp_teardown(struct lp *l)
{
	cJSON_Delete(l->result);
	free(l->logtext);
	fgt_proc_release(&l->p);
	fgw_release(&l->w);
}

/* dir/name (the test's root), read; owned, "" when absent. */
static char *lp_read(const struct lp *l, const char *name)
{
	char *t = fge_read_in(l->w.root, name);

	return t ? t : strdup("");
}

static cJSON *lp_json(const struct lp *l, const char *name)
{
	char *path = fgt_fmt("%s/%s", l->w.step_dir, name);
	cJSON *o = fge_json_file(path, l->logtext);

	free(path);
	return o;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	cr_assert(cJSON_IsNumber(v), "'%s' is not a number", k);
	return v->valuedouble;
}

static const cJSON *path2(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b);

	cr_assert_not_null(v, "no %s.%s", a, b);
	return v;
}

Test(agent_loop, a_claude_worker_reporting_is_error_with_exit_0_fails_the_task)
{
	struct lp l;

	lp_setup(&l, "---\nmax_retries: 3\n---\nCheck.\n",
		 "init\nresult true 'API Error: 529 Overloaded' 0.002 0\nexit 0\n");
	lp_run(&l, NULL);
	cr_assert_eq(l.p.exit_code, 1, "log:\n%s", l.logtext);
	cr_assert(strstr(l.logtext, "the task failed: API Error: 529 Overloaded (its claude output names a "
			  "failure, exit status 0)"), "the reason is not said:\n%s", l.logtext);
	/* The review phase was never reached: no cycle, no reviewer run. */
	cr_assert_not(fgt_exists(l.w.step_dir) && fge_exists_in(l.w.step_dir, "review_cycle_1.json"));
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(l.result, "review_cycles")), 0);
	cr_assert_eq(fge_jint(l.result, "exit_code"), 1);
	lp_teardown(&l);
}

/* promtool's verdict on a metrics file's text (when promtool is installed). */
static void promtool_check(const char *m)
{
	if (fgt_exists("/usr/bin/promtool")) {
		const char *argv[] = { "/usr/bin/promtool", "check", "metrics", NULL };
		struct fgt_proc p;

		cr_assert_eq(fgt_run(&p, argv, NULL, NULL, m, 30), 0);
		cr_assert_eq(p.exit_code, 0, "promtool: %s%s\n%s", p.out, p.err, m);
		fgt_proc_release(&p);
	} else {
		cr_log_warn("promtool check skipped: /usr/bin/promtool is missing");
	}
}

/* The metrics file: tokens by role and kind, cost by role, and valid for
 * promtool (when installed) and for the runner's own merge (a second run
 * adds to it). */
static void check_metrics(const struct lp *l)
{
	char *m = fgt_read(l->w.metrics, NULL);

	cr_assert_not_null(m, "no metrics file");
	cr_assert(strstr(m, "forge_review_agent_cost_usd_total{skill=\"impl\",step=\"impl\",role=\"reviewer\"} 1\n"),
		  "%s", m);
	cr_assert(strstr(m, "forge_review_agent_cost_usd_total{skill=\"impl\",step=\"impl\",role=\"worker\"} 0.5\n"),
		  "%s", m);
	cr_assert(strstr(m, "forge_review_agent_tokens_total{skill=\"impl\",step=\"impl\",role=\"worker\","
			    "kind=\"cached_input\"} 10\n"), "%s", m);
	cr_assert(strstr(m, "forge_review_agent_tokens_total{skill=\"impl\",step=\"impl\",role=\"reviewer\","
			    "kind=\"output\"} 10\n"), "%s", m);
	cr_assert(strstr(m, "# TYPE forge_review_agent_tokens_total counter"), "%s", m);
	promtool_check(m);
	free(m);
}

/* forge-runner report, JSON and Markdown, shows the step's usage. */
static void check_report(const struct lp *l)
{
	const char *json[] = { FG_RUNNER_BIN, "report", l->w.result, NULL };
	const char *md[] = { FG_RUNNER_BIN, "report", "--format", "markdown", l->w.result, NULL };
	struct fgt_proc p;
	cJSON *o;

	cr_assert_eq(fgt_run(&p, json, NULL, NULL, NULL, 30), 0);
	fgt_assert_exit(&p, 0);
	o = cJSON_Parse(p.out);
	cr_assert_not_null(o, "%s", p.out);
	cr_assert_float_eq(num(path2(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "entries"), "__impl"),
				     "usage", "reviewer"), "cost_usd"), 1.0, 1e-9);
	cJSON_Delete(o);
	fgt_proc_release(&p);
	cr_assert_eq(fgt_run(&p, md, NULL, NULL, NULL, 30), 0);
	fgt_assert_exit(&p, 0);
	cr_assert(strstr(p.out, "**Cost:** $1.5000 (worker $0.5000, reviewer $1.0000)"), "%s", p.out);
	cr_assert(strstr(p.out, "**Tokens:** 60 in (20 cached), 90 out"), "%s", p.out);
	fgt_proc_release(&p);
}

/* The reviewer's verdict is inside its result (stream-json); cycle 1
 * rejects with that feedback, cycle 2 approves. Usage everywhere. */
Test(agent_loop, a_rejection_inside_the_stream_result_gives_a_rejected_cycle_with_usage)
{
	struct lp l;
	cJSON *c1, *sum, *u;

	lp_setup(&l, "---\nmax_retries: 3\n---\nCheck.\n",
		 "init\n"
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.25 40; exit 0; fi\n"
		 "echo '{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"thinking\"}]}}'\n"
		 "if [ $n = 1 ]; then result false 'REJECTED: tests/calc.sh fails for add' 0.5 7;\n"
		 "else result false 'All good. APPROVED' 0.5 3; fi\n");
	lp_run(&l, NULL);
	cr_assert_eq(l.p.exit_code, 0, "log:\n%s", l.logtext);
	c1 = lp_json(&l, "review_cycle_1.json");
	cr_assert_str_eq(fge_jstr(c1, "verdict"), "rejected");
	cr_assert_str_eq(fge_jstr(c1, "feedback"), "tests/calc.sh fails for add");
	u = cJSON_GetObjectItem(c1, "usage");
	cr_assert_not_null(u, "no usage in cycle 1");
	cr_assert_float_eq(num(cJSON_GetObjectItem(u, "worker"), "cost_usd"), 0.25, 1e-9);
	cr_assert_eq(num(cJSON_GetObjectItem(u, "worker"), "input_tokens"), 15);
	cr_assert_eq(num(cJSON_GetObjectItem(u, "worker"), "cached_input_tokens"), 5);
	cr_assert_eq(num(cJSON_GetObjectItem(u, "reviewer"), "output_tokens"), 7);
	cr_assert_float_eq(num(cJSON_GetObjectItem(u, "reviewer"), "cost_usd"), 0.5, 1e-9);
	/* The log keeps the raw stream and, after it, the final text. */
	char *logtext = fge_read_in(l.w.step_dir, "review_cycle_1.reviewer.log");
	cr_assert(logtext && strstr(logtext, "\"type\":\"result\"") &&
		  strstr(logtext, "final text (claude output) -----\nREJECTED: tests/calc.sh fails for add"),
		  "%s", logtext);
	free(logtext);
	/* The summary: totals over both cycles (2 worker runs, 2 reviewer runs). */
	sum = lp_json(&l, "review_summary.json");
	cr_assert_str_eq(fge_jstr(sum, "state"), "approved");
	cr_assert_float_eq(num(path2(sum, "usage", "worker"), "cost_usd"), 0.5, 1e-9);
	cr_assert_float_eq(num(path2(sum, "usage", "reviewer"), "cost_usd"), 1.0, 1e-9);
	cr_assert_eq(num(path2(sum, "usage", "reviewer"), "turns"), 2);
	/* The result: the step's totals. */
	cr_assert_float_eq(num(path2(l.result, "usage", "reviewer"), "cost_usd"), 1.0, 1e-9);
	cr_assert_eq(num(path2(l.result, "usage", "worker"), "output_tokens"), 80);
	/* The review_cycle log event of cycle 1 shows its usage. */
	cJSON *evs = fge_json_lines(l.logtext);
	const cJSON *ev = fge_find_event(evs, "review_cycle", "verdict", "rejected");
	cr_assert_not_null(ev, "no rejected review_cycle event");
	cr_assert_float_eq(num(ev, "worker_cost_usd"), 0.25, 1e-9);
	cr_assert_float_eq(num(ev, "reviewer_cost_usd"), 0.5, 1e-9);
	cr_assert_eq(num(ev, "input_tokens"), 30);
	cr_assert_eq(num(ev, "output_tokens"), 47);
	cr_assert_eq(num(ev, "cached_input_tokens"), 10);
	cJSON_Delete(evs);
	check_metrics(&l);
	check_report(&l);
	/* The reviewer preset put the system prompt on its command line. */
	char *args = lp_read(&l, "args.reviewer");
	cr_assert(args && strstr(args, "--append-system-prompt You are the reviewer"), "%s", args);
	free(args);
	cJSON_Delete(c1);
	cJSON_Delete(sum);
	lp_teardown(&l);
}

/* 0.3 per worker run and 0.2 per review: 0.5 after cycle 1, 1.0 after
 * cycle 2 > 0.9; cycle 2 of 5 is the last, marked over_budget. */
Test(agent_loop, a_budget_crossed_in_cycle_2_of_5_ends_over_budget)
{
	static const char *fail[] = { "AUTO_REVIEW_FAIL_ON_EXHAUSTION=1", NULL };
	struct lp l;
	cJSON *c2, *sum;

	lp_setup(&l, "---\nmax_retries: 5\nmax_cost_usd: 0.9\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.3 1; exit 0; fi\n"
		 "result false 'REJECTED: not yet' 0.2 1\n");
	lp_run(&l, fail);
	cr_assert_eq(l.p.exit_code, 3, "log:\n%s", l.logtext);
	cr_assert_not(fge_exists_in(l.w.step_dir, "review_cycle_3.json"));
	c2 = lp_json(&l, "review_cycle_2.json");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c2, "over_budget")));
	cr_assert_eq(fge_jint(c2, "max_cycles"), 5);
	sum = lp_json(&l, "review_summary.json");
	cr_assert_str_eq(fge_jstr(sum, "state"), "over_budget");
	cr_assert_float_eq(num(sum, "max_cost_usd"), 0.9, 1e-9);
	cr_assert_str_eq(fge_jstr(l.result, "review_state"), "over_budget");
	cr_assert(strstr(l.logtext, "review over_budget after 2 cycle(s): exit 3 (the agents reported $1.0000)"),
		  "%s", l.logtext);
	/* No worker run after the budget was spent: two worker runs in all. */
	char *count = lp_read(&l, "count.worker");
	cr_assert_str_eq(count, "2\n");
	free(count);
	cJSON_Delete(c2);
	cJSON_Delete(sum);
	lp_teardown(&l);
}

Test(agent_loop, a_reviewer_without_a_verdict_is_asked_once_more)
{
	struct lp l;
	cJSON *c1;

	lp_setup(&l, "---\nmax_retries: 2\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
		 "if [ $n = 1 ]; then result false 'I looked at the code.' 0.1 1; else\n"
		 "  grep -q 'had no verdict' \"$FORGE_PROMPT_FILE\" && result false 'Fine. APPROVED' 0.1 1 ||\n"
		 "  result false 'still nothing' 0.1 1; fi\n");
	lp_run(&l, NULL);
	cr_assert_eq(l.p.exit_code, 0, "log:\n%s", l.logtext);
	cr_assert_not(fge_exists_in(l.w.step_dir, "review_cycle_2.json"));
	c1 = lp_json(&l, "review_cycle_1.json");
	cr_assert_str_eq(fge_jstr(c1, "verdict"), "approved");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c1, "reask")));
	cr_assert_float_eq(num(path2(c1, "usage", "reviewer"), "cost_usd"), 0.2, 1e-9);
	cJSON_Delete(c1);
	lp_teardown(&l);
}

Test(agent_loop, reask_off_makes_an_answer_without_verdict_a_rejection)
{
	static const char *off[] = { "AUTO_REVIEW_REASK=0", NULL };
	struct lp l;
	cJSON *c1;

	lp_setup(&l, "---\nmax_retries: 1\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
		 "result false 'I looked at the code.' 0.1 1\n");
	lp_run(&l, off);
	cr_assert_eq(l.p.exit_code, 0, "log:\n%s", l.logtext);
	c1 = lp_json(&l, "review_cycle_1.json");
	cr_assert_str_eq(fge_jstr(c1, "verdict"), "rejected");
	cr_assert_null(cJSON_GetObjectItem(c1, "reask"));
	char *count = lp_read(&l, "count.reviewer");
	cr_assert_str_eq(count, "1\n");
	free(count);
	cJSON_Delete(c1);
	lp_teardown(&l);
}

/* A reviewer whose output says it failed (exit 0) is a rejected cycle
 * saying why, and two such cycles never count as a stall. */
Test(agent_loop, a_failed_reviewer_output_is_a_rejection_that_never_stalls)
{
	struct lp l;
	cJSON *c2;

	lp_setup(&l, "---\nmax_retries: 2\nstop_when_stalled: true\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
		 "echo '{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"is_error\":true,"
		 "\"errors\":[\"Reached maximum number of turns (1)\"]}'\n");
	lp_run(&l, NULL);
	/* Issue 25: a reviewer that failed in two cycles in a row ends the loop
	 * failed (exit 1) instead of exhausted (exit 0); never stalled either. */
	cr_assert_eq(l.p.exit_code, 1, "log:\n%s", l.logtext);
	c2 = lp_json(&l, "review_cycle_2.json");
	cr_assert_str_eq(fge_jstr(c2, "verdict"), "rejected");
	cr_assert(strstr(fge_jstr(c2, "feedback"), "Reached maximum number of turns (1)"), "%s",
		  fge_jstr(c2, "feedback"));
	cr_assert_null(cJSON_GetObjectItem(c2, "stalled"));
	cr_assert_str_eq(fge_jstr(l.result, "review_state"), "failed");
	cJSON_Delete(c2);
	lp_teardown(&l);
}

/* The codex preset: prompt on stdin (the system prompt in front, Codex has
 * no option for it), "-" as the prompt argument, Codex's own sandbox off
 * (the container is the sandbox: its bubblewrap cannot start in Docker);
 * a turn.failed is a rejected cycle; Codex reports no cost, so a budget
 * never stops it. */
Test(agent_loop, codex_preset_reviewer_gets_the_system_prompt_in_front_and_a_failed_turn_rejects)
{
	static const char *codex[] = { "FORGE_WORKER_AGENT=codex", "FORGE_REVIEWER_AGENT=codex",
				       "AUTO_REVIEW_MAX_COST_USD=0", NULL };
	struct lp l;
	cJSON *c1, *c2;
	char *in, *args;

	lp_setup(&l, "---\nmax_retries: 2\n---\nCheck the calculator.\n", "exit 1\n");
	lp_codex(&l, "if [ $FORGE_ROLE = reviewer ] && [ ! -f \"$FORGE_WORKSPACE/../failed\" ]; then\n"
		     "  touch \"$FORGE_WORKSPACE/../failed\"\n"
		     "  echo '{\"type\":\"error\",\"message\":\"Reconnecting... 1/5\"}'\n"
		     "  echo '{\"type\":\"turn.failed\",\"error\":{\"message\":\"stream disconnected\"}}'; exit 0\n"
		     "fi\n"
		     "echo '{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"APPROVED\"}}'\n"
		     "echo '{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":9,\"cached_input_tokens\":4,\"output_tokens\":2}}'\n");
	lp_run(&l, codex);
	cr_assert_eq(l.p.exit_code, 0, "log:\n%s", l.logtext);
	c1 = lp_json(&l, "review_cycle_1.json");
	cr_assert_str_eq(fge_jstr(c1, "verdict"), "rejected");
	cr_assert(strstr(fge_jstr(c1, "feedback"), "stream disconnected"), "%s", fge_jstr(c1, "feedback"));
	c2 = lp_json(&l, "review_cycle_2.json");
	cr_assert_str_eq(fge_jstr(c2, "verdict"), "approved");
	cr_assert_eq(num(path2(c2, "usage", "reviewer"), "cached_input_tokens"), 4);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(path2(c2, "usage", "reviewer"), "cost_usd")));
	in = lp_read(&l, "stdin.reviewer");
	cr_assert(!strncmp(in, "You are the reviewer", 20), "%.200s", in);
	cr_assert(strstr(in, "Check the calculator."), "the review.md body is missing");
	args = lp_read(&l, "args.reviewer");
	/* The clean reviewer: no AGENTS.md the worker could have written. */
	cr_assert_str_eq(args, "exec --json --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check "
			 "-c project_doc_max_bytes=0 -\n");
	free(in);
	free(args);
	cJSON_Delete(c1);
	cJSON_Delete(c2);
	lp_teardown(&l);
}

/* A reviewer panel through the claude preset: each role's usage comes back
 * from its helper process into the cycle and the step's totals, and a role
 * asked once more for a verdict marks its review and the cycle. */
Test(agent_loop, a_panel_counts_every_roles_usage_and_reask)
{
	struct lp l;
	cJSON *c1, *sum;
	const cJSON *reviews, *b;

	lp_setup(&l, "---\nmax_retries: 2\nreviewers:\n  - role: alpha\n  - role: beta\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.5 1; exit 0; fi\n"
		 "R=\"$FORGE_WORKSPACE/../count.$FORGE_REVIEWER_ROLE\"\n"
		 "m=$(cat \"$R\" 2>/dev/null || echo 0); m=$((m+1)); echo $m > \"$R\"\n"
		 "if [ $FORGE_REVIEWER_ROLE = beta ] && [ $m = 1 ]; then result false 'Looked at it.' 0.1 1; exit 0; fi\n"
		 "result false 'Fine. APPROVED' 0.1 1\n");
	lp_run(&l, NULL);
	cr_assert_eq(l.p.exit_code, 0, "log:\n%s", l.logtext);
	c1 = lp_json(&l, "review_cycle_1.json");
	cr_assert_str_eq(fge_jstr(c1, "verdict"), "approved");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c1, "reask")));
	reviews = cJSON_GetObjectItem(c1, "reviews");
	cr_assert_eq(cJSON_GetArraySize(reviews), 2);
	b = cJSON_GetArrayItem(reviews, 1);
	cr_assert_str_eq(fge_jstr(b, "role"), "beta");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(b, "reask")));
	cr_assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(reviews, 0), "reask"));
	cr_assert_float_eq(num(cJSON_GetObjectItem(b, "usage"), "cost_usd"), 0.2, 1e-9);
	cr_assert_float_eq(num(path2(c1, "usage", "reviewer"), "cost_usd"), 0.3, 1e-9);
	sum = lp_json(&l, "review_summary.json");
	cr_assert_float_eq(num(path2(sum, "usage", "reviewer"), "cost_usd"), 0.3, 1e-9);
	cr_assert_float_eq(num(path2(sum, "usage", "worker"), "cost_usd"), 0.5, 1e-9);
	cJSON_Delete(c1);
	cJSON_Delete(sum);
	lp_teardown(&l);
}

/* The gemini preset: stream-json, workspace trust (--skip-trust and
 * GEMINI_CLI_TRUST_WORKSPACE: an untrusted folder exits 55 headless) and
 * --approval-mode yolo (--yolo is deprecated); a result with status error
 * fails the worker whatever its exit status. */
Test(agent_loop, gemini_preset_command_lines_and_an_error_result_fails_the_worker)
{
	static const char *gem[] = { "FORGE_WORKER_AGENT=gemini", "FORGE_REVIEWER_AGENT=gemini", NULL };
	struct lp l;
	char *args;

	lp_setup(&l, "---\nmax_retries: 2\n---\nCheck.\n", "exit 1\n");
	free(fge_script(l.w.bin, "gemini", "#!/bin/sh\n",
			"cat > /dev/null\n"
			"echo \"$*\" > \"$FORGE_WORKSPACE/../args.$FORGE_ROLE\"\n"
			"echo \"$GEMINI_CLI_TRUST_WORKSPACE\" > \"$FORGE_WORKSPACE/../trust.$FORGE_ROLE\"\n"
			"echo 'Loaded cached credentials.'\n"
			"echo '{\"type\":\"init\",\"session_id\":\"g-1\",\"model\":\"m\"}'\n"
			"echo '{\"type\":\"result\",\"status\":\"error\",\"error\":{\"type\":\"quota\","
			"\"message\":\"Quota exceeded\"},\"stats\":{\"input_tokens\":3,\"output_tokens\":0}}'\n"));
	lp_run(&l, gem);
	cr_assert_eq(l.p.exit_code, 1, "log:\n%s", l.logtext);
	cr_assert(strstr(l.logtext, "the task failed: Quota exceeded (quota) (its gemini output names a failure"),
		  "%s", l.logtext);
	args = lp_read(&l, "args.worker");
	cr_assert_str_eq(args, "--output-format stream-json --skip-trust --approval-mode yolo\n");
	free(args);
	args = lp_read(&l, "trust.worker");
	cr_assert_str_eq(args, "true\n");
	free(args);
	lp_teardown(&l);
}

/* The claude preset's reviewer may run the shell (tests) and read, never
 * edit; as root IS_SANDBOX=1 lets the worker skip permissions; flags in
 * FORGE_*_ARGS are appended to the preset's line. */
Test(agent_loop, claude_preset_reviewer_runs_tools_and_appended_args_keep_working)
{
	static const char *env[] = { "FORGE_REVIEWER_ARGS=--model haiku", "FORGE_WORKER_ARGS=--max-turns 5",
				     NULL };
	struct lp l;
	char *args, *sandbox;
	static const char tail[] = " --allowedTools Bash,Read,Glob,Grep --disallowedTools Edit,Write,NotebookEdit "
				   "--model haiku\n";

	lp_setup(&l, "---\nmax_retries: 1\n---\nCheck.\n",
		 "echo \"${IS_SANDBOX-unset}\" > \"$FORGE_WORKSPACE/../sandbox.$FORGE_ROLE\"\n"
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
		 "result false 'Fine. APPROVED' 0.1 1\n");
	lp_run(&l, env);
	cr_assert_eq(l.p.exit_code, 0, "log:\n%s", l.logtext);
	args = lp_read(&l, "args.worker");
	cr_assert_str_eq(args, "-p --output-format stream-json --verbose --dangerously-skip-permissions "
			 "--max-turns 5\n");
	free(args);
	args = lp_read(&l, "args.reviewer");
	cr_assert(strlen(args) > sizeof(tail) && !strcmp(args + strlen(args) - (sizeof(tail) - 1), tail),
		  "%s", args);
	cr_assert(!strncmp(args, "-p --output-format stream-json --verbose --append-system-prompt ", 64), "%.80s",
		  args);
	free(args);
	sandbox = lp_read(&l, "sandbox.worker");
	cr_assert_str_eq(sandbox, geteuid() == 0 ? "1\n" : "unset\n");
	free(sandbox);
	lp_teardown(&l);
}

/* Asked once more and still no verdict: a rejected cycle, as before the
 * re-ask existed, with reask recorded; the next cycle asks again. */
Test(agent_loop, a_second_answer_without_verdict_is_a_rejected_cycle)
{
	struct lp l;
	cJSON *c1;
	char *count;

	lp_setup(&l, "---\nmax_retries: 2\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
		 "result false 'I looked at the code.' 0.1 1\n");
	lp_run(&l, NULL);
	/* Issue 25: no verdict in two cycles in a row ends the loop failed. */
	cr_assert_eq(l.p.exit_code, 1, "log:\n%s", l.logtext);
	c1 = lp_json(&l, "review_cycle_1.json");
	cr_assert_str_eq(fge_jstr(c1, "verdict"), "rejected");
	cr_assert_str_eq(fge_jstr(c1, "format"), "none");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c1, "reask")));
	cr_assert_str_eq(fge_jstr(l.result, "review_state"), "failed");
	count = lp_read(&l, "count.reviewer");
	cr_assert_str_eq(count, "4\n", "two asks in each of the two cycles");
	free(count);
	cJSON_Delete(c1);
	lp_teardown(&l);
}

/* A reviewer whose every tool call was denied (Claude 2.1.220 without a
 * permission mode: is_error false, permission_denials [Bash]) is no clean
 * review: the cycle is a failed review naming the tool, denied_tools keeps
 * it, and the log says so at WARN. */
Test(agent_loop, a_reviewer_whose_every_tool_call_was_denied_is_no_clean_review)
{
	struct lp l;
	cJSON *c1;
	const cJSON *rv;

	lp_setup(&l, "---\nmax_retries: 1\n---\nRun the tests.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
		 "echo '{\"subtype\":\"success\",\"is_error\":false,\"permission_denials\":"
		 "[{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"make test\"}}],"
		 "\"result\":\"The command needs your approval. APPROVED\"}'\n");
	lp_run(&l, NULL);
	cr_assert_eq(l.p.exit_code, 0, "log:\n%s", l.logtext);
	c1 = lp_json(&l, "review_cycle_1.json");
	cr_assert_str_eq(fge_jstr(c1, "verdict"), "rejected");
	cr_assert(strstr(fge_jstr(c1, "feedback"), "refused every tool call it made (Bash)"), "%s",
		  fge_jstr(c1, "feedback"));
	rv = cJSON_GetObjectItem(cJSON_GetObjectItem(c1, "denied_tools"), "reviewer");
	cr_assert_eq(cJSON_GetArraySize(rv), 1);
	cr_assert_str_eq(cJSON_GetArrayItem(rv, 0)->valuestring, "Bash");
	cr_assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(c1, "denied_tools"), "worker"));
	cr_assert(strstr(l.logtext, "warning: reviewer: tools denied: Bash (1 of 1 tool call(s)"), "%s", l.logtext);
	cr_assert_str_neq(fge_jstr(l.result, "review_state"), "approved");
	cJSON_Delete(c1);
	lp_teardown(&l);
}

/* The preflight (issue 24): a preset's CLI missing from PATH, or its
 * credentials missing, is exit 2 before any agent runs, saying what to do. */
Test(agent_loop, a_preset_without_its_cli_or_credentials_stops_before_any_agent)
{
	static const char *no_gemini[] = { "FORGE_WORKER_AGENT=gemini", NULL };
	static const char *no_key[] = { "FORGE_REVIEWER_AGENT=codex", "CODEX_API_KEY", "OPENAI_API_KEY=sk-x",
					"CODEX_HOME=/nonexistent", NULL };
	struct lp l;
	char *ran;

	lp_setup(&l, "---\nmax_retries: 1\n---\nCheck.\n", "result false 'done' 0.1 1\n");
	lp_run(&l, no_gemini);
	cr_assert_eq(l.p.exit_code, 2, "log:\n%s", l.logtext);
	cr_assert(strstr(l.logtext, "cannot run worker 'gemini': not found in PATH (the image needs Gemini CLI: "
			 "see docs/guide/container-image.md)"), "%s", l.logtext);
	ran = lp_read(&l, "count.worker");
	cr_assert_str_eq(ran, "", "an agent ran");
	free(ran);
	cJSON_Delete(l.result);
	free(l.logtext);
	fgt_proc_release(&l.p);
	lp_codex(&l, "exit 0\n");
	lp_run(&l, no_key);
	cr_assert_eq(l.p.exit_code, 2, "log:\n%s", l.logtext);
	cr_assert(strstr(l.logtext, "the reviewer's Codex CLI (FORGE_REVIEWER_AGENT=codex) has no credentials: set "
			 "CODEX_API_KEY, or log in so that '/nonexistent/auth.json' exists; in a container pass a "
			 "variable in by name: forge-runner run --env CODEX_API_KEY (codex exec reads CODEX_API_KEY, "
			 "not OPENAI_API_KEY)"), "%s", l.logtext);
	ran = lp_read(&l, "count.worker");
	cr_assert_str_eq(ran, "", "an agent ran");
	free(ran);
	lp_teardown(&l);
}

/* Least privilege (issue 24): the Codex worker does not see the Claude
 * reviewer's key nor the reviewer Codex's; neither sees the variables of a
 * Claude Code session the run was started from. */
Test(agent_loop, each_agent_gets_only_its_own_vendors_credentials)
{
	static const char *env[] = { "FORGE_WORKER_AGENT=codex", "CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli", NULL };
	static const char rec[] = "echo \"${ANTHROPIC_API_KEY-unset} ${CODEX_API_KEY-unset} ${GEMINI_API_KEY-unset} "
				  "${CLAUDECODE-unset} ${CLAUDE_CODE_ENTRYPOINT-unset}\" > \"$FORGE_WORKSPACE/../env.$FORGE_ROLE\"\n";
	struct lp l;
	char *body = fgt_fmt("%sif [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
			     "result false 'Fine. APPROVED' 0.1 1\n", rec);
	char *cbody = fgt_fmt("%secho '{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"done\"}}'\n"
			      "echo '{\"type\":\"turn.completed\",\"usage\":{}}'\n", rec);
	char *w, *r;

	lp_setup(&l, "---\nmax_retries: 1\n---\nCheck.\n", body);
	lp_codex(&l, cbody);
	lp_run(&l, env);
	cr_assert_eq(l.p.exit_code, 0, "log:\n%s", l.logtext);
	w = lp_read(&l, "env.worker");
	r = lp_read(&l, "env.reviewer");
	cr_assert_str_eq(w, "unset test-codex unset unset unset\n");
	cr_assert_str_eq(r, "sk-test-anthropic unset unset unset unset\n");
	free(w);
	free(r);
	free(body);
	free(cbody);
	lp_teardown(&l);
}

/* A panel role whose every tool call was denied: its review failed, its
 * denials are in its review and in the cycle's denied_tools. */
Test(agent_loop, a_panel_roles_denied_tools_reach_its_review_and_the_cycle)
{
	struct lp l;
	cJSON *c1;
	const cJSON *b, *rv;

	lp_setup(&l, "---\nmax_retries: 1\nreviewers:\n  - role: alpha\n  - role: beta\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
		 "if [ $FORGE_REVIEWER_ROLE = beta ]; then echo '{\"type\":\"result\",\"subtype\":\"success\","
		 "\"is_error\":false,\"result\":\"APPROVED\",\"permission_denials\":[{\"tool_name\":\"Bash\"}]}'; exit 0; fi\n"
		 "result false 'Fine. APPROVED' 0.1 1\n");
	lp_run(&l, NULL);
	cr_assert_eq(l.p.exit_code, 0, "log:\n%s", l.logtext);
	c1 = lp_json(&l, "review_cycle_1.json");
	b = cJSON_GetArrayItem(cJSON_GetObjectItem(c1, "reviews"), 1);
	cr_assert_str_eq(fge_jstr(b, "role"), "beta");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(b, "failed")));
	cr_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(b, "denied_tools"), 0)->valuestring, "Bash");
	cr_assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(c1, "reviews"), 0), "denied_tools"));
	rv = cJSON_GetObjectItem(cJSON_GetObjectItem(c1, "denied_tools"), "reviewer");
	cr_assert_eq(cJSON_GetArraySize(rv), 1);
	cr_assert_str_neq(fge_jstr(c1, "verdict"), "approved");
	cr_assert(strstr(l.logtext, "warning: reviewer beta: tools denied: Bash"), "%s", l.logtext);
	cJSON_Delete(c1);
	lp_teardown(&l);
}

/* Reproduction 11 of issue 22: two runs whose agents report total_cost_usd
 * 1e308 left forge_review_agent_cost_usd_total at +Inf for good (the next
 * merge refuses a file holding +Inf: every later run's metrics were lost).
 * A cost above 1e6 USD for one agent run is refused: null in the cycle, the
 * summary and the result, a warning from the entrypoint, nothing added to
 * the metrics; the tokens still count, and the file stays valid. */
Test(agent_loop, a_cost_of_1e308_is_refused_and_never_makes_a_metric_infinite)
{
	struct lp l;
	cJSON *c1;
	char *m;

	lp_setup(&l, "---\nmax_retries: 2\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 1e308 40; exit 0; fi\n"
		 "result false 'APPROVED' 1e308 3\n");
	for (int run = 1; run <= 2; run++) {
		if (run == 2) {
			cJSON_Delete(l.result);
			free(l.logtext);
			fgt_proc_release(&l.p);
		}
		lp_run(&l, NULL);
		cr_assert_eq(l.p.exit_code, 0, "run %d; log:\n%s", run, l.logtext);
		cr_assert(strstr(l.logtext, "worker: reported cost 1e+308 USD refused (above 1e+06 USD for "
				 "one agent run"), "run %d: no warning:\n%s", run, l.logtext);
		cr_assert(strstr(l.logtext, "reviewer: reported cost 1e+308 USD refused"), "%s", l.logtext);
		c1 = lp_json(&l, "review_cycle_1.json");
		cr_assert(cJSON_IsNull(cJSON_GetObjectItem(path2(c1, "usage", "worker"), "cost_usd")),
			  "cycle 1's worker cost is not null");
		cr_assert_eq(num(path2(c1, "usage", "worker"), "output_tokens"), 40);
		cJSON_Delete(c1);
		cr_assert(cJSON_IsNull(cJSON_GetObjectItem(path2(l.result, "usage", "worker"), "cost_usd")));
	}
	m = fgt_read(l.w.metrics, NULL);
	cr_assert_not_null(m, "no metrics file");
	cr_assert_null(strstr(m, "Inf\n"), "a metric is infinite:\n%s", m);
	cr_assert_null(strstr(m, "NaN"), "%s", m);
	cr_assert_null(strstr(m, "forge_review_agent_cost_usd_total{"), "a refused cost was counted:\n%s", m);
	cr_assert(strstr(m, "forge_review_agent_tokens_total{skill=\"impl\",step=\"impl\",role=\"worker\","
			    "kind=\"output\"} 80\n"), "%s", m);
	cr_assert(strstr(m, "forge_runner_runs_total{step=\"impl\",outcome=\"approved\",skill=\"impl\",engine=\"local\"} 2\n"), "%s", m);
	promtool_check(m);
	free(m);
	lp_teardown(&l);
}
