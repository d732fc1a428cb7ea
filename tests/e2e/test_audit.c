/*
 * test_audit.c - the held-out audit end to end (review.md audit:),
 * through the real forge-runner (`run --engine local`) starting the real
 * forge-entrypoint, with scripted /bin/sh agents in a git workspace.
 *
 * The scenario: calc.sh subtracts where the task says add;
 * the worker never fixes it and argues instead (its stdout and a note it
 * leaves outside the workspace); the stand-in reviewer rejects cycles 1 and
 * 2 and, once the worker argued twice, gives in and approves cycle 3. The
 * audit (the same reviewer command, FORGE_REVIEWER_ROLE=audit) runs the
 * test itself and rejects. Every reviewer run saves what it was given
 * (stdin, the prompt file, the system prompt file, the feedback file if
 * any, its FORGE_ environment) under $SAVE, so the tests assert on what
 * the audit really saw.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"
#include "forge/alloc.h"
#include "forge/audit.h"

TestSuite(audit, .timeout = 240);

#define TASK "{\"task_key\":\"ABC-12\",\"summary\":\"Make calc add\",\"description\":" \
	"\"calc.sh A B must print A + B (TASK-TEXT).\",\"skill_name\":\"impl\",\"step_name\":\"impl\"}\n"

/* Argues instead of fixing: its words go to stdout and to $SAVE. */
static const char WORKER[] =
	"cat > /dev/null\n"
	"echo \"turn $FORGE_CYCLE\" >> turns.txt\n"
	"if [ \"$FORGE_CYCLE\" -ge 1 ]; then\n"
	"  echo \"WORKER-ARGUES-$FORGE_CYCLE: subtracting is what the caller wants; the reviewer is wrong\"\n"
	"  echo argued > \"$SAVE/argued_$FORGE_CYCLE\"\n"
	"fi\n";

/* Saves what it got, then answers in Claude Code's json envelope: the
 * loop's reviewer costs $0.01 a run, the audit $0.25. */
static const char REVIEWER[] =
	"role=${FORGE_REVIEWER_ROLE:-none} n=$FORGE_CYCLE\n"
	"cat > \"$SAVE/stdin_${role}_$n\"\n"
	"cp \"$FORGE_PROMPT_FILE\" \"$SAVE/prompt_${role}_$n\"\n"
	"cp \"$FORGE_SYSTEM_PROMPT_FILE\" \"$SAVE/system_${role}_$n\"\n"
	"[ -n \"$FORGE_FEEDBACK_FILE\" ] && cp \"$FORGE_FEEDBACK_FILE\" \"$SAVE/feedback_${role}_$n\"\n"
	"env | grep '^FORGE_' | sort > \"$SAVE/env_${role}_$n\"\n"
	"printf '%s' \"${TRACEPARENT:-}\" > \"$SAVE/traceparent_${role}_$n\"\n"
	"echo \"$role\" >> \"$SAVE/calls\"\n"
	"say() { printf '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"%s\","
	"\"total_cost_usd\":%s,\"usage\":{\"input_tokens\":1000,\"output_tokens\":100}}\\n' \"$1\" \"$2\"; }\n"
	"if [ \"$role\" = audit ]; then\n"
	"  if [ \"$(sh calc.sh 2 3)\" = 5 ] || [ \"$AUDIT\" = approve ]; then say 'calc.sh adds.\\n\\nAPPROVED' 0.25\n"
	"  else say 'REJECTED\\n\\n- calc.sh:1: prints 2 - 3 = -1 for calc.sh 2 3, the task wants 5 (AUDIT-FOUND)' 0.25; fi\n"
	"  exit 0\n"
	"fi\n"
	"if [ \"$(ls \"$SAVE\" | grep -c '^argued_')\" -ge 2 ]; then say 'The worker explained it.\\n\\nAPPROVED' 0.01\n"
	"else say \"REJECTED\\\\n\\\\nLOOP-FEEDBACK-$n: calc.sh subtracts\" 0.01; fi\n";

struct au {
	struct fgw w;
	char *save, *worker, *reviewer;
	const char *trace;    /* --trace-file, or NULL */
};

static void au_init(struct au *a, const char *audit_yaml)
{
	char *rmd = fgt_fmt("---\nmax_retries: 3\n%s---\nThe task must be done; run calc.sh.\n", audit_yaml);

	fgw_init(&a->w);
	a->trace = NULL;   /* only the trace test sets it */
	a->save = fgw_path(&a->w, "save");
	fge_write_in(a->save, ".keep", "");
	fge_write_in(a->w.ws, "calc.sh", "echo $(($1 - $2))\n");
	fge_git_commit_all(a->w.ws);
	fgw_task(&a->w, TASK);
	fgw_review_md(&a->w, "default", rmd);
	free(fgw_script(&a->w, "work.sh", NULL, WORKER));
	free(fgw_script(&a->w, "rev.sh", NULL, REVIEWER));
	a->worker = fgt_fmt("sh %s/work.sh", a->w.root);
	a->reviewer = fgt_fmt("sh %s/rev.sh", a->w.root);
	free(rmd);
}

static void au_release(struct au *a)
{
	fgw_release(&a->w);
	FG_FREE_ALL(a->save, a->worker, a->reviewer);
}

/* One run with --run-id id (NULL: none) and the metrics file; env extra. */
static void au_run(struct au *a, const char *id, const char *audit_env)
{
	char *save = fgt_fmt("SAVE=%s", a->save);
	char *aenv = fgt_fmt("AUDIT=%s", audit_env ? audit_env : "");
	const char *extra[7] = { "--metrics-file", a->w.metrics };
	size_t n = 2;

	if (a->trace) {
		extra[n++] = "--trace-file";
		extra[n++] = a->trace;
	}
	if (id) {
		extra[n++] = "--run-id";
		extra[n++] = id;
	}
	/* The agents' environment is an allow-list: the stand-ins' own
	 * variables are named to it. */
	const char *env[] = { save, aenv, "FORGE_AGENT_ENV=SAVE AUDIT",
			      "FORGE_REVIEWER_OUTPUT=claude", "TRACEPARENT", "OTEL_TRACES_EXPORTER",
			      "OTEL_EXPORTER_OTLP_ENDPOINT", NULL };

	fgw_runner(&a->w, FGW_RUN(.args = extra, .worker = a->worker, .reviewer = a->reviewer, .env = env));
	free(save);
	free(aenv);
}

static char *saved(const struct au *a, const char *name)
{
	char *t = fge_read_in(a->save, name);

	cr_assert_not_null(t, "the stand-in did not save %s; stderr:\n%s", name, a->w.err);
	return t;
}

static const cJSON *audit_of(const cJSON *o)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "audit");

	cr_assert(cJSON_IsObject(v), "no audit object");
	return v;
}

static char *report_md(const struct au *a)
{
	const char *argv[] = { FG_RUNNER_BIN, "report", a->w.result, "--format", "markdown", NULL };
	struct fgt_proc p;
	char *out;

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 30), 0);
	cr_assert(p.exited && p.exit_code == 0, "report exited %d: %s", p.exit_code, p.err);
	out = p.out;
	p.out = NULL;
	fgt_proc_release(&p);
	return out;
}

/* The metric line's value, or -1 when there is none. */
static double metric(const char *text, const char *series)
{
	const char *p = strstr(text, series);

	return p ? strtod(p + strlen(series), NULL) : -1;
}

/* Done when: approved in cycle 3 after the worker argued, audited with
 * none of the loop's history in what the audit got; the metric, the report
 * line and the cost totals agree with the result file. */
Test(audit, cycle_3_approval_after_argument_is_audited_without_the_loops_history)
{
	static const char *const history[] = {
		"LOOP-FEEDBACK", "WORKER-ARGUES", "Previous review", "Reviewer Feedback", "cycles so far",
		"The worker explained it", "rejected your work", "argued",
	};
	static const char *const seen[] = { "stdin_audit_3", "prompt_audit_3", "system_audit_3" };
	struct au a;
	char *env, *rep, *m;
	const cJSON *au, *u;

	au_init(&a, "audit:\n  sample: 1\n");
	au_run(&a, "audit-e2e-1", NULL);
	cr_assert_eq(fgw_code(&a.w), 0, "stderr:\n%s", a.w.err);
	cr_assert_str_eq(fge_jstr(a.w.res, "review_state"), "approved", "advisory: the approval stands");
	cr_assert_eq(cJSON_GetArraySize(fgw_cycles(&a.w)), 3);
	/* The loop really gave in after the worker argued twice. */
	cr_assert(fge_exists_in(a.save, "argued_1") && fge_exists_in(a.save, "argued_2"));
	for (size_t i = 0; i < sizeof(seen) / sizeof(seen[0]); i++) {
		char *t = saved(&a, seen[i]);

		for (size_t j = 0; j < sizeof(history) / sizeof(history[0]); j++)
			cr_assert_null(strstr(t, history[j]), "the audit's %s holds '%s':\n%s", seen[i], history[j], t);
		free(t);
	}
	/* The reviewer of cycle 3 did see the loop's history (the contrast). */
	m = saved(&a, "stdin_default_3");
	cr_assert_not_null(strstr(m, "LOOP-FEEDBACK-2"), "%s", m);
	free(m);
	/* What the audit got instead: the task, the change set since the start. */
	m = saved(&a, "stdin_audit_3");
	fgt_assert_has(m, "TASK-TEXT", "Files changed since the step began", "turns.txt",
		       "review_audit.diff", "Find the defect that approval missed");
	free(m);
	m = saved(&a, "system_audit_3");
	fgt_assert_has(m, "find the defect the approval missed", "The task must be done; run calc.sh.");
	free(m);
	env = saved(&a, "env_audit_3");
	fgt_assert_has(env, "FORGE_ROLE=reviewer\n", "FORGE_REVIEWER_ROLE=audit\n");
	cr_assert_null(strstr(env, "FORGE_FEEDBACK_FILE="), "%s", env);
	cr_assert_not(fge_exists_in(a.save, "feedback_audit_3"));
	free(env);
	/* The worker never heard of it: no fourth turn. */
	m = fge_read_in(a.w.ws, "turns.txt");
	cr_assert_str_eq(m, "turn 0\nturn 1\nturn 2\n");
	free(m);
	cr_assert(fgw_step_exists(&a.w, "review_audit.reviewer.log"));
	cr_assert(fgw_step_exists(&a.w, "review_audit.diff"));

	/* The record: summary and result agree. */
	cJSON *sum = fgw_step_json(&a.w, "review_summary.json");

	au = audit_of(a.w.res);
	fge_assert_strs(au, "outcome", "disagreed", "verdict", "rejected");
	cr_assert_not_null(strstr(fge_jstr(au, "feedback"), "AUDIT-FOUND"));
	cr_assert_float_eq(cJSON_GetObjectItem(au, "cost_usd")->valuedouble, 0.25, 1e-9);
	cr_assert_str_eq(fge_jstr(audit_of(sum), "outcome"), "disagreed");
	cJSON_Delete(sum);
	/* Costs: three loop reviews at $0.01 and the audit's $0.25 in the totals. */
	u = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(a.w.res, "usage"), "reviewer");
	cr_assert_float_eq(cJSON_GetObjectItem(u, "cost_usd")->valuedouble, 0.28, 1e-9);
	cr_assert_eq(fge_jint(u, "input_tokens"), 4000);
	/* The event, the metric, the report. */
	const cJSON *ev = fge_find_event(a.w.events, "audit", NULL, NULL);

	cr_assert_not_null(ev, "no audit event:\n%s", a.w.logtext);
	fge_assert_strs(ev, "outcome", "disagreed", "level", "warn");
	cr_assert_eq(fge_jint(ev, "cycles"), 3);
	m = fgt_read_or_empty(a.w.metrics);
	cr_assert_float_eq(metric(m, "forge_review_audits_total{skill=\"impl\",step=\"impl\",outcome=\"disagreed\"} "),
			   1, 1e-9, "%s", m);
	cr_assert_float_eq(metric(m, "forge_review_agent_cost_usd_total{skill=\"impl\",step=\"impl\",role=\"reviewer\"} "),
			   0.28, 1e-9, "%s", m);
	free(m);
	rep = report_md(&a);
	cr_assert_not_null(strstr(rep, "**Audit:** approved by the loop in 3 cycles; the audit disagreed"), "%s", rep);
	/* Agent text in the report is inert Markdown: its punctuation escaped. */
	fgt_assert_has(rep, "AUDIT\\-FOUND", "**Cost:** $0.2800");
	free(rep);
	au_release(&a);
}

/* blocks: true turns the approval into audit_rejected, exit 4 (a workflow
 * does not move on); an agreeing audit leaves the approval and exit 0. */
Test(audit, blocking_audit_gives_audit_rejected_and_its_exit_code)
{
	struct au a;
	char *rep;

	au_init(&a, "audit:\n  blocks: true\n");
	au_run(&a, NULL, NULL);
	cr_assert_eq(fgw_code(&a.w), 4, "stderr:\n%s", a.w.err);
	cr_assert_str_eq(fge_jstr(a.w.res, "review_state"), "audit_rejected");
	cr_assert_eq(fge_jint(a.w.res, "exit_code"), 4);
	cr_assert_not(fge_jtrue(a.w.res, "success"));
	cr_assert_not(fge_jtrue(a.w.res, "review_exhausted"));
	cr_assert(fge_jtrue(audit_of(a.w.res), "blocks"));
	rep = report_md(&a);
	fgt_assert_has(rep, "**State:** audit_rejected", "the audit disagreed (blocking: audit_rejected)");
	free(rep);

	/* The same work, an audit that agrees: approved, 0. */
	fgt_rm_rf(a.save);
	fge_write_in(a.save, ".keep", "");
	au_run(&a, NULL, "approve");
	cr_assert_eq(fgw_code(&a.w), 0, "stderr:\n%s", a.w.err);
	cr_assert_str_eq(fge_jstr(a.w.res, "review_state"), "approved");
	cr_assert_str_eq(fge_jstr(audit_of(a.w.res), "outcome"), "agreed");
	au_release(&a);
}

/* Two run ids of this test, one drawn below sample 0.5 and one not. */
static void pick_ids(char in[32], char out[32])
{
	in[0] = out[0] = '\0';
	for (int i = 0; i < 200 && (!in[0] || !out[0]); i++) {
		char id[32];

		snprintf(id, sizeof(id), "sample-%d", i);
		if (fg_audit_draw(id, "impl", "impl") < 0.5)
			snprintf(in, 32, "%s", id);
		else
			snprintf(out, 32, "%s", id);
	}
	cr_assert(in[0] && out[0]);
}

/* sample: the run id decides (the documented draw), and a rerun with the
 * same --run-id decides the same. */
Test(audit, sampled_runs_are_reproducible_from_the_run_id)
{
	char in[32], out[32];
	struct au a;

	pick_ids(in, out);
	au_init(&a, "audit:\n  sample: 0.5\n");
	for (int rerun = 0; rerun < 2; rerun++) {
		const cJSON *au;

		au_run(&a, in, NULL);
		cr_assert(a.w.res && cJSON_IsString(cJSON_GetObjectItem(a.w.res, "run_id")), "code %d: %s", fgw_code(&a.w), a.w.err);
		cr_assert_str_eq(fge_jstr(a.w.res, "run_id"), in);
		au = audit_of(a.w.res);
		cr_assert_str_eq(fge_jstr(au, "outcome"), "disagreed", "%s (run %d)", in, rerun);
		cr_assert_float_eq(cJSON_GetObjectItem(au, "draw")->valuedouble, fg_audit_draw(in, "impl", "impl"), 1e-12);
		fgt_rm_rf(a.save);
		fge_write_in(a.save, ".keep", "");
		au_run(&a, out, NULL);
		au = audit_of(a.w.res);
		cr_assert_str_eq(fge_jstr(au, "outcome"), "skipped", "%s (run %d)", out, rerun);
		cr_assert_not_null(strstr(fge_jstr(au, "reason"), "not sampled"));
		cr_assert_float_eq(cJSON_GetObjectItem(au, "draw")->valuedouble, fg_audit_draw(out, "impl", "impl"), 1e-12);
		cr_assert_not(fge_exists_in(a.save, "stdin_audit_3"), "a skipped audit ran no reviewer");
		cr_assert(cJSON_IsNull(cJSON_GetObjectItem(au, "usage")));
		fgt_rm_rf(a.save);
		fge_write_in(a.save, ".keep", "");
	}
	char *m = fgt_read_or_empty(a.w.metrics);

	cr_assert_float_eq(metric(m, "outcome=\"disagreed\"} "), 2, 1e-9, "%s", m);
	cr_assert_float_eq(metric(m, "outcome=\"skipped\"} "), 2, 1e-9, "%s", m);
	free(m);
	au_release(&a);
}

/* An audit that would pass max_cost_usd is skipped and says so: the loop
 * spent $0.03 plus the worker's nothing, the last review cost $0.01, the
 * budget is $0.035. A bad --run-id is a usage error. */
Test(audit, audit_that_would_pass_the_budget_is_skipped)
{
	struct au a;
	const cJSON *au;

	au_init(&a, "max_cost_usd: 0.035\naudit: {}\n");
	au_run(&a, NULL, NULL);
	cr_assert_eq(fgw_code(&a.w), 0, "stderr:\n%s", a.w.err);
	cr_assert_str_eq(fge_jstr(a.w.res, "review_state"), "approved");
	au = audit_of(a.w.res);
	cr_assert_str_eq(fge_jstr(au, "outcome"), "skipped");
	cr_assert_not_null(strstr(fge_jstr(au, "reason"), "would pass the budget"), "%s", fge_jstr(au, "reason"));
	cr_assert_not(fge_exists_in(a.save, "stdin_audit_3"));
	au_run(&a, "Bad_ID", NULL);
	cr_assert_eq(fgw_code(&a.w), 2);
	cr_assert_not_null(strstr(a.w.err, "invalid --run-id 'Bad_ID'"), "%s", a.w.err);
	au_release(&a);
}

/* An audit that changes the workspace, or gives no verdict, has failed:
 * a warning, the approval stands (even with blocks: true), the reason
 * says why; the worker is not sent back. */
Test(audit, an_audit_that_edits_or_says_nothing_fails_and_the_approval_stands)
{
	static const char EDITS[] =
		"cat > /dev/null\n"
		"say() { printf '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"%s\","
		"\"total_cost_usd\":0.01}\\n' \"$1\"; }\n"
		"if [ \"$FORGE_REVIEWER_ROLE\" = audit ]; then\n"
		"  if [ \"$AUDIT\" = edit ]; then echo 'echo $(($1 + $2))' > calc.sh; say 'REJECTED: fixed it myself'\n"
		"  else say 'Looks fine to me.'; fi\n"
		"  exit 0\n"
		"fi\n"
		"say APPROVED\n";
	struct au a;
	const cJSON *au;

	au_init(&a, "audit:\n  blocks: true\n");
	free(fgw_script(&a.w, "rev.sh", NULL, EDITS));
	au_run(&a, NULL, "edit");
	cr_assert_eq(fgw_code(&a.w), 0, "code %d stderr:\n%s\nlog:\n%s", fgw_code(&a.w), a.w.err, a.w.logtext);
	cr_assert_str_eq(fge_jstr(a.w.res, "review_state"), "approved");
	au = audit_of(a.w.res);
	cr_assert_str_eq(fge_jstr(au, "outcome"), "failed");
	cr_assert_not_null(strstr(fge_jstr(au, "reason"), "changed the workspace"), "%s", fge_jstr(au, "reason"));
	cr_assert_not_null(strstr(fge_jstr(au, "reason"), "calc.sh"), "%s", fge_jstr(au, "reason"));
	cr_assert_str_eq(fge_jstr(fge_find_event(a.w.events, "audit", NULL, NULL), "level"), "warn");
	au_run(&a, NULL, "mute");
	cr_assert_eq(fgw_code(&a.w), 0, "stderr:\n%s", a.w.err);
	au = audit_of(a.w.res);
	cr_assert_str_eq(fge_jstr(au, "outcome"), "failed");
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(au, "verdict")));
	cr_assert_eq(cJSON_GetArraySize(fgw_cycles(&a.w)), 1, "no retry after the audit");
	au_release(&a);
}

/* A traced run: the audit is a span of its own, "invoke_agent audit", its
 * id the TRACEPARENT the audit's agent was given and the one the sealed
 * summary records, in the same trace as the workflow's. */
Test(audit, the_audit_is_a_span_of_its_own_in_the_trace)
{
	struct au a;
	const cJSON *runs;
	char *trace, *tp, *want, *text;
	const char *span;

	au_init(&a, "audit:\n  sample: 1\n");
	trace = fgw_path(&a.w, "trace.jsonl");
	a.trace = trace;
	au_run(&a, "audit-trace-1", NULL);
	cr_assert_eq(fgw_code(&a.w), 0, "stderr:\n%s", a.w.err);
	runs = cJSON_GetObjectItem(cJSON_GetObjectItem(a.w.res, "audit"), "runs");
	cr_assert_eq(cJSON_GetArraySize(runs), 1, "result:\n%s", cJSON_Print(a.w.res));
	span = fge_jstr(cJSON_GetArrayItem(runs, 0), "span_id");
	cr_assert_not_null(span);
	cr_assert_eq(strlen(span), 16);
	cr_assert_not_null(fge_jstr(cJSON_GetArrayItem(runs, 0), "started_at"));
	tp = saved(&a, "traceparent_audit_3");
	cr_assert_not_null(strstr(tp, span), "the audit's TRACEPARENT [%s] names another span than %s", tp, span);
	text = fgt_read(trace, NULL);
	cr_assert_not_null(text);
	want = fgt_fmt("\"spanId\":\"%s\"", span);
	cr_assert_not_null(strstr(text, "\"name\":\"invoke_agent audit\""), "%s", text);
	cr_assert_not_null(strstr(text, want), "no span %s in the trace:\n%s", span, text);
	FG_FREE_ALL(trace, tp, want, text);
	au_release(&a);
}

