/*
 * test_docker_stream.c - how a container run is reported: on a bind mount
 * (each cycle once though two sources saw it), on a named volume by the
 * stream alone (usage, cost and metrics as on a bind mount), the
 * orchestrator's cycle directory, one trace, the audit. Skips without an
 * engine.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fgdocker.h"
#include "fge2e.h"
#include "fgrbox.h"
#include "fgtest.h"
#include "fgws.h"
#include "forge/audit.h"

TestSuite(docker_stream, .timeout = 1700);

Test(docker_stream, bind_mount_run_reports_each_cycle_once_though_two_sources_saw_it)
{
	struct fgrb b;

	fgd_ensure_image(FGD_IMAGE);
	fgrb_init(&b, "docker", "---\nmax_retries: 3\n---\nCheck that work.log has two lines.\n");
	fgrb_agent(&b, "worker.sh", FGRB_WORKER_APPEND);
	fgrb_agent(&b, "reviewer.sh", FGRB_REVIEWER_REJECT_THEN_APPROVE);
	int code = fgrb_wait(&b, fgrb_spawn(&b, (const char *const[]){ "--log-level", "debug", NULL }));
	cr_assert_eq(code, 0, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	cJSON *res = fgrb_result(&b);
	cJSON *ev = fgw_log_events(&b.w);
	fgrb_check_result_approved(res);
	cr_assert_eq(fgrb_count_events(ev, "review_cycle", NULL, NULL), 2, "log:\n%s", fgt_read_or_empty(b.w.log));
	for (int c = 1; c <= 2; c++) {
		char *file = fgt_fmt("review_cycle_%d.json", c);
		const cJSON *first = fge_find_cycle_event(ev, "review_cycle", c);
		const cJSON *e;
		int again = 0;

		/* The other source saw the same cycle and said so, at debug only. */
		cJSON_ArrayForEach(e, ev) {
			if (!strcmp(fgrb_jstr(e, "event"), "cycle_seen_again") && !strcmp(fgrb_jstr(e, "file"), file)) {
				cr_assert_str_eq(fgrb_jstr(e, "first_source"), fgrb_jstr(first, "source"));
				again += !strcmp(fgrb_jstr(e, "source"), "stream") || !strcmp(fgrb_jstr(e, "source"), "watch");
			}
		}
		cr_assert_geq(again, 1, "cycle %d: no second source; log:\n%s", c, fgt_read_or_empty(b.w.log));
		free(file);
	}
	cr_assert_eq(fgrb_by_source(res, "watch") + fgrb_by_source(res, "stream"), 2);
	cr_assert_eq(fgrb_count_events(ev, "detection_sources", "sources", "watch,poll,sweep,stream"), 1);
	const cJSON *e;

	cJSON_ArrayForEach(e, ev) {
		if (!strcmp(fgrb_jstr(e, "event"), "output"))
			cr_assert(strncmp(fgrb_jstr(e, "line"), "@@forge-review ", 15), "a frame logged as output");
	}
	cJSON_Delete(ev);
	cJSON_Delete(res);
	fgrb_release(&b);
}

/*
 * On a named volume the result had "usage": null, the metrics no
 * forge_review_agent_* series, the report no cost, while the same run on a
 * bind mount had them all. Both runs here, real Docker, a worker that
 * reports its usage as Claude Code does ($0.25 per run, two runs): the same
 * usage, series and cost.
 */
static const char WORKER_REPORTS_USAGE[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"echo \"worker cycle $FORGE_CYCLE\" >> work.log\n"
	"echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"done\","
	"\"total_cost_usd\":0.25,\"usage\":{\"input_tokens\":1000,\"output_tokens\":200}}'\n";

/* The run's result "usage" (printed, owned), and its metrics and report. */
static char *usage_run(int volume, char **metrics, char **report)
{
	struct fgrb b;
	char *mfile, *usage;
	struct fgt_proc p;

	fgrb_init(&b, "docker", "---\nmax_retries: 3\n---\nCheck that work.log has two lines.\n");
	b.worker_output = "claude";
	fgrb_agent(&b, "worker.sh", WORKER_REPORTS_USAGE);
	fgrb_agent(&b, "reviewer.sh", FGRB_REVIEWER_REJECT_THEN_APPROVE);
	if (volume) {
		b.volume = fgt_fmt("forge-test-usage-%ld-%lx", (long)getpid(), (unsigned long)time(NULL));
		fgrb_fill_volume(&b);
	}
	mfile = b.w.metrics;
	int code = fgrb_wait(&b, fgrb_spawn(&b, (const char *const[]){ "--metrics-file", mfile, NULL }));
	cr_assert_eq(code, 0, "runner exited %d; stderr:\n%s\nlog:\n%s", code, fgt_read_or_empty(b.w.stderr_path),
		     fgt_read_or_empty(b.w.log));
	cJSON *res = fgrb_result(&b);
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(res, "usage");
	cr_assert(cJSON_IsObject(u), "%s run: no usage in the result", volume ? "volume" : "bind-mount");
	usage = cJSON_PrintUnformatted(u);
	*metrics = fgt_read_or_empty(mfile);
	const char *argv[] = { FG_RUNNER_BIN, "report", b.w.result, "--format", "markdown", NULL };
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 30), 0);
	*report = p.out;
	p.out = NULL;
	fgt_proc_release(&p);
	cJSON_Delete(res);
	fgrb_release(&b);
	return usage;
}

Test(docker_stream, volume_run_reports_usage_cost_and_metrics_like_a_bind_mount_run)
{
	char *m[2], *rep[2], *u[2];

	fgd_ensure_image(FGD_IMAGE);
	for (int i = 0; i < 2; i++) {
		u[i] = usage_run(i, &m[i], &rep[i]);
		cr_expect_not_null(strstr(m[i], "forge_review_agent_cost_usd_total{"), "run %d:\n%s", i, m[i]);
		cr_expect_not_null(strstr(m[i], "forge_review_agent_tokens_total{"), "run %d:\n%s", i, m[i]);
		cr_expect_not_null(strstr(rep[i], "**Cost:** $0.5000"), "run %d: no cost in the report:\n%s", i, rep[i]);
	}
	cr_expect_str_eq(u[1], u[0], "the volume run's usage differs from the bind-mount run's");
	cr_expect_not_null(strstr(u[0], "\"cost_usd\":0.5,"), "%s", u[0]);
	for (int i = 0; i < 2; i++) {
		free(m[i]);
		free(rep[i]);
		free(u[i]);
	}
}

Test(docker_stream, named_volume_run_is_reported_by_the_stream_alone)
{
	fgd_ensure_image(FGD_IMAGE);
	fgrb_volume_run("docker");
}

/* ---- beside the Forge orchestrator: .forge/reviews/{task_key}__{skill} ---- */

#define ORCH_TEMPLATE ".forge/reviews/{task_key}__{skill}"
#define ORCH_DIR ".forge/reviews/DEMO-1__" FGRB_SKILL

/* Our entrypoint in a container writes where the orchestrator's poller
 * looks, and the runner sees every cycle there live. */
Test(docker_stream, cycle_dir_our_container_writes_the_orchestrators_layout)
{
	struct fgrb b;

	fgd_ensure_image(FGD_IMAGE);
	fgrb_init(&b, "docker", "---\nmax_retries: 3\n---\nCheck that work.log has two lines.\n");
	fgrb_agent(&b, "worker.sh", FGRB_WORKER_APPEND);
	fgrb_agent(&b, "reviewer.sh", FGRB_REVIEWER_REJECT_THEN_APPROVE);
	cJSON *res = fgrb_run_approved(&b, (const char *const[]){ "--cycle-dir", ORCH_TEMPLATE, NULL }, 2);
	cJSON *ev = fgw_log_events(&b.w);
	fgrb_check_cycle_events(ev, &b);
	char *dir = fgt_fmt("%s/" ORCH_DIR, b.w.ws);
	cr_assert(fge_exists_in(dir, "review_cycle_1.json") && fge_exists_in(dir, "review_cycle_2.json") &&
		  fge_exists_in(dir, "review_summary.json"), "not in %s", dir);
	cr_assert(!fge_exists_in(b.w.ws, ".forge/" FGRB_STEP), ".forge/{step} was written too");
	free(dir);
	cJSON_Delete(ev);
	cJSON_Delete(res);
	fgrb_release(&b);
}

/* The orchestrator's own container stand-in: it knows nothing of
 * FORGE_CYCLE_DIR and writes its cycle files where its poller looks, as its
 * code does. Started with --engine-arg --entrypoint=...: the runner's
 * arguments (run --workspace ... --step ...) reach it unchanged. */
static const char ORCHESTRATOR_CONTAINER[] =
	"DIR=$W/" ORCH_DIR "\n"
	"mkdir -p \"$DIR\"\n"
	"cyc 1 rejected\ncyc 2 approved\nexit 0\n";

/* The runner clears, watches and sweeps what that container writes. */
Test(docker_stream, cycle_dir_runner_watches_the_orchestrators_container)
{
	struct fgrb b;

	fgd_ensure_image(FGD_IMAGE);
	fgrb_init(&b, "docker", "Review.\n");
	char *agents = fgt_fmt("%s/agents", b.w.ws);
	free(fge_script(agents, "orchestrator.sh", FGE_FAKE_EP_HEAD, ORCHESTRATOR_CONTAINER));
	{
		/* The stand-in seals its records as our entrypoint would: fg-seal
		 * beside it, in the container (the image has its libraries). */
		size_t n = 0;
		char *bin = fgt_read(FG_SEAL_BIN, &n), *to = fgt_fmt("%s/fg-seal", agents);

		cr_assert_not_null(bin, "%s", FG_SEAL_BIN);
		fgt_write_bytes(to, bin, n);
		fgt_chmod_x(to);
		free(bin);
		free(to);
	}
	char *dir = fgt_fmt("%s/" ORCH_DIR, b.w.ws);
	fge_write_in(dir, "review_cycle_3.json", "{\"left\": \"by an earlier run\"}\n");
	/* The stale tree belongs to the runner's user, as a real one would. */
	char *d = fgt_fmt("%s/.forge", b.w.ws), *owner = fgt_fmt("%ld:%ld", (long)b.uid, (long)b.gid);
	const char *chown_argv[] = { "/bin/chown", "-R", owner, d, NULL };
	struct fgt_proc cp;
	cr_assert_eq(fgt_run(&cp, chown_argv, NULL, NULL, NULL, 30), 0);
	cr_assert_eq(cp.exit_code, 0, "chown: %s", cp.err);
	fgt_proc_release(&cp);
	free(owner);
	cJSON *res = fgrb_run_approved(&b, (const char *const[]){ "--cycle-dir", ORCH_TEMPLATE,
		"--engine-arg", "--entrypoint=/workspace/agents/orchestrator.sh", NULL }, 2);
	cr_assert_eq(fgrb_jnum(res, "stale_files_cleared"), 1);
	cr_assert_eq(fgrb_jnum(res, "sweep_caught"), 0, "not seen while the container ran");
	cr_assert(!fge_exists_in(dir, "review_cycle_3.json"), "the stale cycle file stayed");
	free(d);
	free(dir);
	free(agents);
	cJSON_Delete(res);
	fgrb_release(&b);
}

/*
 * The trace of a container run (runner/trace.c): a bind-mount run and a
 * named-volume run (the stream alone), each with --trace-file: one trace,
 * the workflow span the parent of two worker turns and two reviewer calls
 * in time order, the worker's cost on its spans equal to the result's;
 * on the bind mount each agent's TRACEPARENT names its own span.
 */
static const char WORKER_TRACED[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"echo \"worker cycle $FORGE_CYCLE\" >> work.log\n"
	"echo \"worker $FORGE_CYCLE ${TRACEPARENT:-none}\" >> tp.txt\n"
	"echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"done\","
	"\"total_cost_usd\":0.25,\"usage\":{\"input_tokens\":1000,\"output_tokens\":200}}'\n";

static void traced_run(int volume)
{
	struct fgrb b;
	char *file, *text, *p, *line, *tp;
	cJSON *res;
	const cJSON *rs;
	char wf[17] = "", trace[33] = "", workers[2][17] = { "", "" };
	int nworker = 0, nreviewer = 0, nspans = 0;
	double cost = 0;
	long long last_start = 0;

	fgrb_init(&b, "docker", "---\nmax_retries: 3\n---\nCheck that work.log has two lines.\n");
	b.worker_output = "claude";
	fgrb_agent(&b, "worker.sh", WORKER_TRACED);
	fgrb_agent(&b, "reviewer.sh", FGRB_REVIEWER_REJECT_THEN_APPROVE);
	if (volume) {
		b.volume = fgt_fmt("forge-test-trace-%ld-%lx", (long)getpid(), (unsigned long)time(NULL));
		fgrb_fill_volume(&b);
	}
	file = fgt_fmt("%s/trace.jsonl", b.w.out);
	int code = fgrb_wait(&b, fgrb_spawn(&b, (const char *const[]){ "--trace-file", file, NULL }));
	cr_assert_eq(code, 0, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	res = fgrb_result(&b);
	text = fgt_read(file, NULL);
	cr_assert_not_null(text, "no trace file");
	/* Two passes over the spans: the workflow span first. */
	for (int pass = 0; pass < 2; pass++) {
		char *copy = strdup(text);

		for (p = copy, line = p; line && *line; line = p) {
			char *nl = strchr(line, '\n');
			cJSON *doc;

			p = nl ? nl + 1 : NULL;
			if (nl)
				*nl = '\0';
			doc = cJSON_Parse(line);
			cJSON_ArrayForEach(rs, cJSON_GetObjectItem(doc, "resourceSpans")) {
				const cJSON *ss, *sp, *a;

				cJSON_ArrayForEach(ss, cJSON_GetObjectItem(rs, "scopeSpans"))
				cJSON_ArrayForEach(sp, cJSON_GetObjectItem(ss, "spans")) {
					const char *name = fgrb_jstr(sp, "name");
					long long start = atoll(fgrb_jstr(sp, "startTimeUnixNano"));

					if (pass == 0 && !strcmp(name, "invoke_workflow forge-review")) {
						snprintf(wf, sizeof(wf), "%s", fgrb_jstr(sp, "spanId"));
						snprintf(trace, sizeof(trace), "%s", fgrb_jstr(sp, "traceId"));
					}
					if (pass == 0 || !strcmp(name, "invoke_workflow forge-review"))
						continue;
					nspans++;
					cr_expect_str_eq(fgrb_jstr(sp, "traceId"), trace);
					cr_expect_str_eq(fgrb_jstr(sp, "parentSpanId"), wf, "%s", name);
					cr_expect_geq(start, last_start, "%s in time order", name);
					last_start = start;
					if (!strcmp(name, "invoke_agent worker") && nworker < 2)
						snprintf(workers[nworker++], 17, "%s", fgrb_jstr(sp, "spanId"));
					nreviewer += !strcmp(name, "invoke_agent reviewer");
					cJSON_ArrayForEach(a, cJSON_GetObjectItem(sp, "attributes"))
						if (!strcmp(fgrb_jstr(a, "key"), "forge.cost_usd") && !strcmp(name, "invoke_agent worker"))
							cost += cJSON_GetObjectItem(cJSON_GetObjectItem(a, "value"),
										    "doubleValue")->valuedouble;
				}
			}
			cJSON_Delete(doc);
		}
		free(copy);
	}
	cr_assert(wf[0], "no workflow span:\n%s", text);
	cr_expect_eq(nworker, 2, "two worker turns:\n%s", text);
	cr_expect_eq(nreviewer, 2, "two reviewer calls");
	cr_expect_eq(nspans, 4);
	cr_expect_float_eq(cost, cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "usage"), "worker"),
						   "cost_usd")->valuedouble, 1e-9);
	tp = volume ? NULL : fge_read_in(b.w.ws, "tp.txt");
	for (int i = 0; tp && i < 2; i++) {
		char *want = fgt_fmt("worker %d 00-%s-%s-01", i, trace, workers[i]);

		cr_expect_not_null(strstr(tp, want), "no '%s' in:\n%s", want, tp);
		free(want);
	}
	free(tp);
	free(text);
	free(file);
	cJSON_Delete(res);
	fgrb_release(&b);
}

Test(docker_stream, a_traced_container_run_on_a_bind_mount_and_on_a_volume_is_one_trace)
{
	fgd_ensure_image(FGD_IMAGE);
	traced_run(0);
	traced_run(1);
}

/* ---- the held-out audit (review.md audit:) in a container ---- */

/* Rejects cycles 1 and 2, gives in at cycle 3; as the audit (its role
 * audit), saves what it got under .forge/audit-saw/ (left out of the change
 * set: no workspace change) and rejects. */
static const char REVIEWER_GIVES_IN_AUDIT_REJECTS[] =
	"#!/bin/sh\n"
	"say() { printf '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"%s\","
	"\"total_cost_usd\":%s,\"usage\":{\"input_tokens\":1000,\"output_tokens\":100}}\\n' \"$1\" \"$2\"; }\n"
	"if [ \"$FORGE_REVIEWER_ROLE\" = audit ]; then\n"
	"  d=/workspace/.forge/audit-saw; mkdir -p $d\n"
	"  cat > $d/stdin; cp \"$FORGE_SYSTEM_PROMPT_FILE\" $d/system\n"
	"  env | grep '^FORGE_' | sort > $d/env\n"
	"  say 'REJECTED\\n\\n- work.log: the task asked for two lines and the loop gave in (AUDIT-FOUND)' 0.25\n"
	"  exit 0\n"
	"fi\n"
	"cat >/dev/null\n"
	"if [ \"$FORGE_CYCLE\" -lt 3 ]; then say \"REJECTED: LOOP-FEEDBACK-$FORGE_CYCLE work.log\" 0.01; else say APPROVED 0.01; fi\n";

/* One run of the audit scenario with blocks: true (volume: on a named
 * volume, reported by the stream alone): exit 4, audit_rejected, the audit
 * in the result, the event and the metric. Returns the result (owned). */
static cJSON *audit_run(struct fgrb *b, int volume, const char *run_id)
{
	char *mfile = b->w.metrics, *m, *rep;
	cJSON *res, *ev;
	const cJSON *a, *e, *u;
	struct fgt_proc p;

	b->reviewer_output = "claude";
	fgrb_agent(b, "worker.sh", FGRB_WORKER_APPEND);
	fgrb_agent(b, "reviewer.sh", REVIEWER_GIVES_IN_AUDIT_REJECTS);
	if (volume) {
		b->volume = fgt_fmt("forge-test-audit-%ld-%lx", (long)getpid(), (unsigned long)time(NULL));
		fgrb_fill_volume(b);
	}
	int code = fgrb_wait(b, fgrb_spawn(b, (const char *const[]){ "--metrics-file", mfile, "--run-id",
									 run_id, NULL }));
	cr_assert_eq(code, 4, "runner exited %d; stderr:\n%s\nlog:\n%s", code, fgt_read_or_empty(b->w.stderr_path),
		     fgt_read_or_empty(b->w.log));
	res = fgrb_result(b);
	cr_assert_str_eq(fgrb_jstr(res, "review_state"), "audit_rejected");
	cr_assert_str_eq(fgrb_jstr(res, "run_id"), run_id);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(res, "review_cycles")), 3);
	a = cJSON_GetObjectItemCaseSensitive(res, "audit");
	cr_assert(cJSON_IsObject(a), "no audit in the result");
	cr_assert_str_eq(fgrb_jstr(a, "outcome"), "disagreed");
	cr_assert_not_null(strstr(fgrb_jstr(a, "feedback"), "AUDIT-FOUND"));
	cr_assert_float_eq(fgrb_jnum(a, "draw"), fg_audit_draw(run_id, FGRB_STEP, FGRB_SKILL), 1e-12);
	/* The costs: three loop reviews at $0.01 and the audit's $0.25. */
	cr_assert_float_eq(fgrb_jnum(a, "cost_usd"), 0.25, 1e-9);
	u = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "usage"), "reviewer");
	cr_assert_float_eq(fgrb_jnum(u, "cost_usd"), 0.28, 1e-9);
	const char *argv[] = { FG_RUNNER_BIN, "report", b->w.result, "--format", "markdown", NULL };
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 30), 0);
	rep = p.out;
	cr_assert_not_null(strstr(rep, "**Audit:** approved by the loop in 3 cycles; the audit disagreed"), "%s", rep);
	cr_assert_not_null(strstr(rep, "**Cost:** $0.2800"), "%s", rep);
	fgt_proc_release(&p);
	ev = fgw_log_events(&b->w);
	e = fge_find_event(ev, "audit", NULL, NULL);
	cr_assert_not_null(e, "no audit event; log:\n%s", fgt_read_or_empty(b->w.log));
	cr_assert_str_eq(fgrb_jstr(e, "outcome"), "disagreed");
	m = fgt_read_or_empty(mfile);
	cr_assert_not_null(strstr(m, "forge_review_audits_total{skill=\"" FGRB_SKILL "\",step=\"" FGRB_STEP
				      "\",outcome=\"disagreed\"} 1\n"), "%s", m);
	cr_assert_not_null(strstr(m, "forge_review_agent_cost_usd_total{skill=\"" FGRB_SKILL "\",step=\"" FGRB_STEP
				      "\",role=\"reviewer\"} 0.28\n"), "%s", m);
	free(m);
	cJSON_Delete(ev);
	return res;
}

Test(docker_stream, the_audit_runs_in_a_container_and_blocks)
{
	struct fgrb b;
	cJSON *res;
	char *saw, *path;

	char in[32] = "", out[32] = "";

	/* sample 0.5: one run id drawn below it (audited), one above (not). */
	for (int i = 0; i < 200 && (!in[0] || !out[0]); i++) {
		char id[32];

		snprintf(id, sizeof(id), "audit-docker-%d", i);
		snprintf(fg_audit_draw(id, FGRB_STEP, FGRB_SKILL) < 0.5 ? in : out, 32, "%s", id);
	}
	fgd_ensure_image(FGD_IMAGE);
	fgrb_init(&b, "docker", "---\nmax_retries: 3\naudit:\n  blocks: true\n  sample: 0.5\n---\n"
		 "Check that work.log has two lines.\n");
	res = audit_run(&b, 0, in);
	/* What the audit got in the container: none of the loop's history. */
	path = fgt_fmt("%s/.forge/audit-saw/stdin", b.w.ws);
	saw = fgt_read(path, NULL);
	cr_assert_not_null(saw, "the audit saved nothing");
	cr_assert_null(strstr(saw, "LOOP-FEEDBACK"), "%s", saw);
	cr_assert_null(strstr(saw, "Previous review"), "%s", saw);
	cr_assert_not_null(strstr(saw, "Find the defect that approval missed"), "%s", saw);
	free(saw);
	free(path);
	path = fgt_fmt("%s/.forge/audit-saw/env", b.w.ws);
	saw = fgt_read(path, NULL);
	cr_assert_not_null(strstr(saw, "FORGE_REVIEWER_ROLE=audit\n"), "%s", saw);
	cr_assert_null(strstr(saw, "FORGE_FEEDBACK_FILE="), "%s", saw);
	free(saw);
	free(path);
	fgrb_assert_no_container(&b, in);
	cJSON_Delete(res);
	/* The other id is not sampled: no audit runs, the approval stands. */
	fgw_reset_run(&b.w);
	int code = fgrb_wait(&b, fgrb_spawn(&b, (const char *const[]){ "--run-id", out, NULL }));
	cr_assert_eq(code, 0, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	res = fgrb_result(&b);
	cr_assert_str_eq(fgrb_jstr(res, "review_state"), "approved");
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(res, "audit");
	cr_assert_str_eq(fgrb_jstr(a, "outcome"), "skipped");
	cr_assert_not_null(strstr(fgrb_jstr(a, "reason"), "not sampled"));
	cr_assert_float_eq(fgrb_jnum(a, "draw"), fg_audit_draw(out, FGRB_STEP, FGRB_SKILL), 1e-12);
	cJSON_Delete(res);
	fgrb_release(&b);
}

Test(docker_stream, the_audit_of_a_named_volume_run_comes_by_the_stream)
{
	struct fgrb b;
	cJSON *res;

	fgd_ensure_image(FGD_IMAGE);
	fgrb_init(&b, "docker", "---\nmax_retries: 3\naudit:\n  blocks: true\n---\nCheck that work.log has two lines.\n");
	res = audit_run(&b, 1, "audit-docker-volume");
	cr_assert_eq(fgrb_by_source(res, "stream"), 3);
	cJSON_Delete(res);
	fgrb_release(&b);
}
