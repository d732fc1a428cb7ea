/*
 * test_agent_usage.c - what the agents' structured output carries through
 * the loop, end to end with stand-in CLIs: usage and cost in the cycle
 * files, the summary, the result, the log, the metrics and the report; the
 * budget; the second ask of a reviewer without a verdict; denied tools; a
 * panel's roles counted one by one.
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

TestSuite(agent_usage, .timeout = 120);

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
static void check_metrics(const struct fga *l)
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
static void check_report(const struct fga *l)
{
	const char *json[] = { FG_RUNNER_BIN, "report", l->w.result, NULL };
	const char *md[] = { FG_RUNNER_BIN, "report", "--format", "markdown", l->w.result, NULL };
	struct fgt_proc p;
	cJSON *o;

	cr_assert_eq(fgt_run(&p, json, NULL, NULL, NULL, 30), 0);
	fgt_assert_exit(&p, 0);
	o = cJSON_Parse(p.out);
	cr_assert_not_null(o, "%s", p.out);
	cr_assert_float_eq(fga_num(fga_path2(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "entries"), "__impl"),
				     "usage", "reviewer"), "cost_usd"), 1.0, 1e-9);
	cJSON_Delete(o);
	fgt_proc_release(&p);
	cr_assert_eq(fgt_run(&p, md, NULL, NULL, NULL, 30), 0);
	fgt_assert_exit(&p, 0);
	fgt_assert_has(p.out, "**Cost:** $1.5000 (worker $0.5000, reviewer $1.0000)",
		       "**Tokens:** 60 in (20 cached), 90 out");
	fgt_proc_release(&p);
}

/* The reviewer's verdict is inside its result (stream-json); cycle 1
 * rejects with that feedback, cycle 2 approves. Usage everywhere. */
Test(agent_usage, a_rejection_inside_the_stream_result_gives_a_rejected_cycle_with_usage)
{
	struct fga l;
	cJSON *c1, *sum, *u;

	fga_init(&l, "---\nmax_retries: 3\n---\nCheck.\n",
		 "init\n"
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.25 40; exit 0; fi\n"
		 "echo '{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"thinking\"}]}}'\n"
		 "if [ $n = 1 ]; then result false 'REJECTED: tests/calc.sh fails for add' 0.5 7;\n"
		 "else result false 'All good. APPROVED' 0.5 3; fi\n");
	fga_run_exit(&l, NULL, 0);
	c1 = fga_json(&l, "review_cycle_1.json");
	fge_assert_strs(c1, "verdict", "rejected", "feedback", "tests/calc.sh fails for add");
	u = cJSON_GetObjectItem(c1, "usage");
	cr_assert_not_null(u, "no usage in cycle 1");
	cr_assert_float_eq(fga_num(cJSON_GetObjectItem(u, "worker"), "cost_usd"), 0.25, 1e-9);
	cr_assert_eq(fga_num(cJSON_GetObjectItem(u, "worker"), "input_tokens"), 15);
	cr_assert_eq(fga_num(cJSON_GetObjectItem(u, "worker"), "cached_input_tokens"), 5);
	cr_assert_eq(fga_num(cJSON_GetObjectItem(u, "reviewer"), "output_tokens"), 7);
	cr_assert_float_eq(fga_num(cJSON_GetObjectItem(u, "reviewer"), "cost_usd"), 0.5, 1e-9);
	/* The log keeps the raw stream and, after it, the final text. */
	char *logtext = fge_read_in(l.w.step_dir, "review_cycle_1.reviewer.log");
	cr_assert(logtext && strstr(logtext, "\"type\":\"result\"") &&
		  strstr(logtext, "final text (claude output) -----\nREJECTED: tests/calc.sh fails for add"),
		  "%s", logtext);
	free(logtext);
	/* The summary: totals over both cycles (2 worker runs, 2 reviewer runs). */
	sum = fga_json(&l, "review_summary.json");
	cr_assert_str_eq(fge_jstr(sum, "state"), "approved");
	cr_assert_float_eq(fga_num(fga_path2(sum, "usage", "worker"), "cost_usd"), 0.5, 1e-9);
	cr_assert_float_eq(fga_num(fga_path2(sum, "usage", "reviewer"), "cost_usd"), 1.0, 1e-9);
	cr_assert_eq(fga_num(fga_path2(sum, "usage", "reviewer"), "turns"), 2);
	/* The result: the step's totals. */
	cr_assert_float_eq(fga_num(fga_path2(l.result, "usage", "reviewer"), "cost_usd"), 1.0, 1e-9);
	cr_assert_eq(fga_num(fga_path2(l.result, "usage", "worker"), "output_tokens"), 80);
	/* The review_cycle log event of cycle 1 shows its usage. */
	cJSON *evs = fge_json_lines(l.logtext);
	const cJSON *ev = fge_find_event(evs, "review_cycle", "verdict", "rejected");
	cr_assert_not_null(ev, "no rejected review_cycle event");
	cr_assert_float_eq(fga_num(ev, "worker_cost_usd"), 0.25, 1e-9);
	cr_assert_float_eq(fga_num(ev, "reviewer_cost_usd"), 0.5, 1e-9);
	cr_assert_eq(fga_num(ev, "input_tokens"), 30);
	cr_assert_eq(fga_num(ev, "output_tokens"), 47);
	cr_assert_eq(fga_num(ev, "cached_input_tokens"), 10);
	cJSON_Delete(evs);
	check_metrics(&l);
	check_report(&l);
	/* The reviewer preset put the system prompt on its command line. */
	char *args = fga_read(&l, "args.reviewer");
	cr_assert(args && strstr(args, "--append-system-prompt You are the reviewer"), "%s", args);
	free(args);
	cJSON_Delete(c1);
	cJSON_Delete(sum);
	fga_release(&l);
}

/* 0.3 per worker run and 0.2 per review: 0.5 after cycle 1, 1.0 after
 * cycle 2 > 0.9; cycle 2 of 5 is the last, marked over_budget. */
Test(agent_usage, a_budget_crossed_in_cycle_2_of_5_ends_over_budget)
{
	static const char *fail[] = { "AUTO_REVIEW_FAIL_ON_EXHAUSTION=1", NULL };
	struct fga l;
	cJSON *c2, *sum;

	fga_init(&l, "---\nmax_retries: 5\nmax_cost_usd: 0.9\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.3 1; exit 0; fi\n"
		 "result false 'REJECTED: not yet' 0.2 1\n");
	fga_run_exit(&l, fail, 3);
	cr_assert_not(fge_exists_in(l.w.step_dir, "review_cycle_3.json"));
	c2 = fga_json(&l, "review_cycle_2.json");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c2, "over_budget")));
	cr_assert_eq(fge_jint(c2, "max_cycles"), 5);
	sum = fga_json(&l, "review_summary.json");
	cr_assert_str_eq(fge_jstr(sum, "state"), "over_budget");
	cr_assert_float_eq(fga_num(sum, "max_cost_usd"), 0.9, 1e-9);
	cr_assert_str_eq(fge_jstr(l.result, "review_state"), "over_budget");
	cr_assert(strstr(l.logtext, "review over_budget after 2 cycle(s): exit 3 (the agents reported $1.0000)"),
		  "%s", l.logtext);
	/* No worker run after the budget was spent: two worker runs in all. */
	char *count = fga_read(&l, "count.worker");
	cr_assert_str_eq(count, "2\n");
	free(count);
	cJSON_Delete(c2);
	cJSON_Delete(sum);
	fga_release(&l);
}

Test(agent_usage, a_reviewer_without_a_verdict_is_asked_once_more)
{
	struct fga l;
	cJSON *c1;

	fga_init(&l, "---\nmax_retries: 2\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
		 "if [ $n = 1 ]; then result false 'I looked at the code.' 0.1 1; else\n"
		 "  grep -q 'had no verdict' \"$FORGE_PROMPT_FILE\" && result false 'Fine. APPROVED' 0.1 1 ||\n"
		 "  result false 'still nothing' 0.1 1; fi\n");
	fga_run_exit(&l, NULL, 0);
	cr_assert_not(fge_exists_in(l.w.step_dir, "review_cycle_2.json"));
	c1 = fga_json(&l, "review_cycle_1.json");
	cr_assert_str_eq(fge_jstr(c1, "verdict"), "approved");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c1, "reask")));
	cr_assert_float_eq(fga_num(fga_path2(c1, "usage", "reviewer"), "cost_usd"), 0.2, 1e-9);
	cJSON_Delete(c1);
	fga_release(&l);
}

Test(agent_usage, reask_off_makes_an_answer_without_verdict_a_rejection)
{
	static const char *off[] = { "AUTO_REVIEW_REASK=0", NULL };
	struct fga l;
	cJSON *c1;

	fga_init(&l, "---\nmax_retries: 1\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
		 "result false 'I looked at the code.' 0.1 1\n");
	fga_run_exit(&l, off, 0);
	c1 = fga_json(&l, "review_cycle_1.json");
	cr_assert_str_eq(fge_jstr(c1, "verdict"), "rejected");
	cr_assert_null(cJSON_GetObjectItem(c1, "reask"));
	char *count = fga_read(&l, "count.reviewer");
	cr_assert_str_eq(count, "1\n");
	free(count);
	cJSON_Delete(c1);
	fga_release(&l);
}

/* A reviewer whose output says it failed (exit 0) is a rejected cycle
 * saying why, and two such cycles never count as a stall. */
Test(agent_usage, a_failed_reviewer_output_is_a_rejection_that_never_stalls)
{
	struct fga l;
	cJSON *c2;

	fga_init(&l, "---\nmax_retries: 2\nstop_when_stalled: true\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
		 "echo '{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"is_error\":true,"
		 "\"errors\":[\"Reached maximum number of turns (1)\"]}'\n");
	/* A reviewer that failed in two cycles in a row ends the loop
	 * failed (exit 1) instead of exhausted (exit 0); never stalled either. */
	fga_run_exit(&l, NULL, 1);
	c2 = fga_json(&l, "review_cycle_2.json");
	cr_assert_str_eq(fge_jstr(c2, "verdict"), "rejected");
	cr_assert(strstr(fge_jstr(c2, "feedback"), "Reached maximum number of turns (1)"), "%s",
		  fge_jstr(c2, "feedback"));
	cr_assert_null(cJSON_GetObjectItem(c2, "stalled"));
	cr_assert_str_eq(fge_jstr(l.result, "review_state"), "failed");
	cJSON_Delete(c2);
	fga_release(&l);
}

/* A reviewer panel through the claude preset: each role's usage comes back
 * from its helper process into the cycle and the step's totals, and a role
 * asked once more for a verdict marks its review and the cycle. */
Test(agent_usage, a_panel_counts_every_roles_usage_and_reask)
{
	struct fga l;
	cJSON *c1, *sum;
	const cJSON *reviews, *b;

	fga_init(&l, "---\nmax_retries: 2\nreviewers:\n  - role: alpha\n  - role: beta\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.5 1; exit 0; fi\n"
		 "R=\"$FORGE_WORKSPACE/../count.$FORGE_REVIEWER_ROLE\"\n"
		 "m=$(cat \"$R\" 2>/dev/null || echo 0); m=$((m+1)); echo $m > \"$R\"\n"
		 "if [ $FORGE_REVIEWER_ROLE = beta ] && [ $m = 1 ]; then result false 'Looked at it.' 0.1 1; exit 0; fi\n"
		 "result false 'Fine. APPROVED' 0.1 1\n");
	fga_run_exit(&l, NULL, 0);
	c1 = fga_json(&l, "review_cycle_1.json");
	cr_assert_str_eq(fge_jstr(c1, "verdict"), "approved");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c1, "reask")));
	reviews = cJSON_GetObjectItem(c1, "reviews");
	cr_assert_eq(cJSON_GetArraySize(reviews), 2);
	b = cJSON_GetArrayItem(reviews, 1);
	cr_assert_str_eq(fge_jstr(b, "role"), "beta");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(b, "reask")));
	cr_assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(reviews, 0), "reask"));
	cr_assert_float_eq(fga_num(cJSON_GetObjectItem(b, "usage"), "cost_usd"), 0.2, 1e-9);
	cr_assert_float_eq(fga_num(fga_path2(c1, "usage", "reviewer"), "cost_usd"), 0.3, 1e-9);
	sum = fga_json(&l, "review_summary.json");
	cr_assert_float_eq(fga_num(fga_path2(sum, "usage", "reviewer"), "cost_usd"), 0.3, 1e-9);
	cr_assert_float_eq(fga_num(fga_path2(sum, "usage", "worker"), "cost_usd"), 0.5, 1e-9);
	cJSON_Delete(c1);
	cJSON_Delete(sum);
	fga_release(&l);
}

/* Asked once more and still no verdict: a rejected cycle, as before the
 * re-ask existed, with reask recorded; the next cycle asks again. */
Test(agent_usage, a_second_answer_without_verdict_is_a_rejected_cycle)
{
	struct fga l;
	cJSON *c1;
	char *count;

	fga_init(&l, "---\nmax_retries: 2\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
		 "result false 'I looked at the code.' 0.1 1\n");
	/* No verdict in two cycles in a row ends the loop failed. */
	fga_run_exit(&l, NULL, 1);
	c1 = fga_json(&l, "review_cycle_1.json");
	fge_assert_strs(c1, "verdict", "rejected", "format", "none");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c1, "reask")));
	cr_assert_str_eq(fge_jstr(l.result, "review_state"), "failed");
	count = fga_read(&l, "count.reviewer");
	cr_assert_str_eq(count, "4\n", "two asks in each of the two cycles");
	free(count);
	cJSON_Delete(c1);
	fga_release(&l);
}

/* A reviewer whose every tool call was denied (Claude 2.1.220 without a
 * permission mode: is_error false, permission_denials [Bash]) is no clean
 * review: the cycle is a failed review naming the tool, denied_tools keeps
 * it, and the log says so at WARN. */
Test(agent_usage, a_reviewer_whose_every_tool_call_was_denied_is_no_clean_review)
{
	struct fga l;
	cJSON *c1;
	const cJSON *rv;

	fga_init(&l, "---\nmax_retries: 1\n---\nRun the tests.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
		 "echo '{\"subtype\":\"success\",\"is_error\":false,\"permission_denials\":"
		 "[{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"make test\"}}],"
		 "\"result\":\"The command needs your approval. APPROVED\"}'\n");
	fga_run_exit(&l, NULL, 0);
	c1 = fga_json(&l, "review_cycle_1.json");
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
	fga_release(&l);
}

/* A panel role whose every tool call was denied: its review failed, its
 * denials are in its review and in the cycle's denied_tools. */
Test(agent_usage, a_panel_roles_denied_tools_reach_its_review_and_the_cycle)
{
	struct fga l;
	cJSON *c1;
	const cJSON *b, *rv;

	fga_init(&l, "---\nmax_retries: 1\nreviewers:\n  - role: alpha\n  - role: beta\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 0.1 1; exit 0; fi\n"
		 "if [ $FORGE_REVIEWER_ROLE = beta ]; then echo '{\"type\":\"result\",\"subtype\":\"success\","
		 "\"is_error\":false,\"result\":\"APPROVED\",\"permission_denials\":[{\"tool_name\":\"Bash\"}]}'; exit 0; fi\n"
		 "result false 'Fine. APPROVED' 0.1 1\n");
	fga_run_exit(&l, NULL, 0);
	c1 = fga_json(&l, "review_cycle_1.json");
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
	fga_release(&l);
}

/* Two runs whose agents report total_cost_usd
 * 1e308 left forge_review_agent_cost_usd_total at +Inf for good (the next
 * merge refuses a file holding +Inf: every later run's metrics were lost).
 * A cost above 1e6 USD for one agent run is refused: null in the cycle, the
 * summary and the result, a warning from the entrypoint, nothing added to
 * the metrics; the tokens still count, and the file stays valid. */
Test(agent_usage, a_cost_of_1e308_is_refused_and_never_makes_a_metric_infinite)
{
	struct fga l;
	cJSON *c1;
	char *m;

	fga_init(&l, "---\nmax_retries: 2\n---\nCheck.\n",
		 "if [ $FORGE_ROLE = worker ]; then result false 'done' 1e308 40; exit 0; fi\n"
		 "result false 'APPROVED' 1e308 3\n");
	for (int run = 1; run <= 2; run++) {
		if (run == 2) {
			cJSON_Delete(l.result);
			free(l.logtext);
			fgt_proc_release(&l.p);
		}
		fga_run(&l, NULL);
		cr_assert_eq(l.p.exit_code, 0, "run %d; log:\n%s", run, l.logtext);
		cr_assert(strstr(l.logtext, "worker: reported cost 1e+308 USD refused (above 1e+06 USD for "
				 "one agent run"), "run %d: no warning:\n%s", run, l.logtext);
		cr_assert(strstr(l.logtext, "reviewer: reported cost 1e+308 USD refused"), "%s", l.logtext);
		c1 = fga_json(&l, "review_cycle_1.json");
		cr_assert(cJSON_IsNull(cJSON_GetObjectItem(fga_path2(c1, "usage", "worker"), "cost_usd")),
			  "cycle 1's worker cost is not null");
		cr_assert_eq(fga_num(fga_path2(c1, "usage", "worker"), "output_tokens"), 40);
		cJSON_Delete(c1);
		cr_assert(cJSON_IsNull(cJSON_GetObjectItem(fga_path2(l.result, "usage", "worker"), "cost_usd")));
	}
	m = fgt_read(l.w.metrics, NULL);
	cr_assert_not_null(m, "no metrics file");
	fgt_assert_lacks(m, "Inf\n", "NaN", "forge_review_agent_cost_usd_total{");
	cr_assert(strstr(m, "forge_review_agent_tokens_total{skill=\"impl\",step=\"impl\",role=\"worker\","
			    "kind=\"output\"} 80\n"), "%s", m);
	cr_assert(strstr(m, "forge_runner_runs_total{step=\"impl\",outcome=\"approved\",skill=\"impl\",engine=\"local\"} 2\n"), "%s", m);
	promtool_check(m);
	free(m);
	fga_release(&l);
}
