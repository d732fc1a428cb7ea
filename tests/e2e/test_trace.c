/*
 * test_trace.c - the trace of a run (runner/trace.c, runner/otlp.c):
 * a two-cycle run with a check and a two-role panel, with the real
 * entrypoint and stand-in agents that report usage as Claude Code does,
 * gives one trace whose spans, parents, order, attributes and token and
 * cost figures match the result file; each agent saw a TRACEPARENT naming
 * its own span. Read back from --trace-file and from a real Jaeger
 * (tests/jaeger/jaeger.sh builds it; started here on 127.0.0.1 with
 * in-memory storage and stopped after). A collector that refuses, never
 * answers, answers 500 or 429 changes nothing of the run but one WARN, and
 * leaves nothing running.
 */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(trace, .timeout = 240);

/* The review: a check after every worker turn and a panel of two roles. */
static const char REVIEW_MD[] =
	"---\nmax_retries: 3\nchecks:\n  - name: unit\n    run: sh check.sh\n    timeout_seconds: 20\n"
	"reviewers:\n  - role: correctness\n  - role: security\n---\nReview it.\n";

/* Each agent records who it is and the TRACEPARENT it saw, then answers in
 * Claude Code's JSON: tokens and a cost. */
static const char AGENT_HEAD[] =
	"#!/bin/sh\n"
	"cat > /dev/null\n"
	"echo \"tp: $FORGE_ROLE ${FORGE_REVIEWER_ROLE:--} $FORGE_CYCLE ${TRACEPARENT:-none}\" >&2\n"
	"result() { printf '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
	"\"result\":\"%s\",\"session_id\":\"s\",\"num_turns\":1,\"duration_ms\":10,"
	"\"total_cost_usd\":%s,\"usage\":{\"input_tokens\":%s,\"cache_creation_input_tokens\":0,"
	"\"cache_read_input_tokens\":4,\"output_tokens\":%s}}\\n' \"$1\" \"$2\" \"$3\" \"$4\"; }\n";

/* The worker changes the file each turn; correctness rejects cycle 1. */
static const char WORKER[] = "echo \"turn $FORGE_CYCLE\" >> work.txt\nresult done 0.25 100 20\n";
static const char REVIEWER[] =
	"if [ \"$FORGE_REVIEWER_ROLE\" = correctness ] && [ \"$FORGE_CYCLE\" = 1 ]; then\n"
	"  result 'REJECTED\\\\n\\\\nThe second turn is missing.' 0.125 40 8\n"
	"else result APPROVED 0.0625 30 6; fi\n";

struct span {
	char name[96], id[17], parent[17], trace[33];
	long long start, end;
	const cJSON *attrs;   /* borrowed from the documents */
	int code;             /* status code */
};

struct tr {
	struct fgw w;
	cJSON *docs;          /* the OTLP documents the spans come from */
	struct span s[64];
	size_t n;
};

static void tr_init(struct tr *t)
{
	memset(t, 0, sizeof(*t));
	fgw_init(&t->w);
	fgw_runner_tree(&t->w);
	fgw_review_md(&t->w, "default", REVIEW_MD);
	fge_write_in(t->w.ws, "check.sh", "grep -q turn work.txt\n");
	free(fgw_script(&t->w, "worker.sh", AGENT_HEAD, WORKER));
	free(fgw_script(&t->w, "reviewer.sh", AGENT_HEAD, REVIEWER));
	t->docs = cJSON_CreateArray();
}

static void tr_release(struct tr *t)
{
	cJSON_Delete(t->docs);
	fgw_release(&t->w);
}

/* The environment of a traced run: the agents, their format, no OTEL_*
 * of the host's, then more (may be NULL). Returns the runner's pid (its
 * process group: gone by now). */
static pid_t tr_run(struct tr *t, const char *const *extra, const char *const *more)
{
	char *worker = fgw_path(&t->w, "worker.sh"), *reviewer = fgw_path(&t->w, "reviewer.sh");
	const char *env[32] = {
		"FORGE_WORKER_OUTPUT=claude", "FORGE_REVIEWER_OUTPUT=claude",
		"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER",
		"TRACEPARENT",
	};
	size_t n = 6;
	pid_t pid;

	/* fgw_runner_start() takes 11 entries after its own. */
	for (size_t i = 0; more && more[i] && n < 11; i++)
		env[n++] = more[i];
	env[n] = NULL;
	pid = fgw_runner_start(&t->w, FGW_RUN(.args = extra, .worker = worker, .reviewer = reviewer,
		.env = env));
	fgw_wait(&t->w, pid, 120);
	fgw_load(&t->w, 1);
	free(worker);
	free(reviewer);
	return pid;
}

/* The value of the span's attribute key as OTLP JSON puts it (its member
 * type, e.g. "stringValue"), or NULL when absent. */
static const cJSON *attr(const struct span *s, const char *key, const char *type)
{
	const cJSON *a = fge_find_by(s->attrs, "key", key);

	return a ? cJSON_GetObjectItem(cJSON_GetObjectItem(a, "value"), type) : NULL;
}

static const char *str_attr(const struct span *s, const char *key)
{
	const cJSON *v = attr(s, key, "stringValue");

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* An int attribute (OTLP JSON: a string), or -1 when absent. */
static long long int_attr(const struct span *s, const char *key)
{
	const cJSON *v = attr(s, key, "intValue");

	return cJSON_IsString(v) ? atoll(v->valuestring) : cJSON_IsNumber(v) ? (long long)v->valuedouble : -1;
}

static double dbl_attr(const struct span *s, const char *key)
{
	const cJSON *v = attr(s, key, "doubleValue");

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void copy_hex(char *dst, size_t n, const cJSON *o, const char *k)
{
	const char *v = fge_jstr_or_null(o, k);

	snprintf(dst, n, "%s", v ? v : "");
}

/* A span's status code: a number, or (Jaeger's JSON) the enum's name. */
static int status_code(const cJSON *c)
{
	if (cJSON_IsNumber(c))
		return c->valueint;
	return cJSON_IsString(c) && strstr(c->valuestring, "ERROR") ? 2 : 0;
}

/* Every span of an OTLP document (doc: borrowed, kept in t->docs). */
static void add_doc(struct tr *t, cJSON *doc)
{
	const cJSON *rs, *ss, *sp;

	cJSON_AddItemToArray(t->docs, doc);
	cJSON_ArrayForEach(rs, cJSON_GetObjectItem(doc, "resourceSpans"))
		cJSON_ArrayForEach(ss, cJSON_GetObjectItem(rs, "scopeSpans"))
			cJSON_ArrayForEach(sp, cJSON_GetObjectItem(ss, "spans")) {
				struct span *s = &t->s[t->n++];

				cr_assert(t->n < 64);
				snprintf(s->name, sizeof(s->name), "%s", fge_jstr(sp, "name"));
				copy_hex(s->id, sizeof(s->id), sp, "spanId");
				copy_hex(s->parent, sizeof(s->parent), sp, "parentSpanId");
				copy_hex(s->trace, sizeof(s->trace), sp, "traceId");
				s->start = atoll(fge_jstr(sp, "startTimeUnixNano"));
				s->end = atoll(fge_jstr(sp, "endTimeUnixNano"));
				s->attrs = cJSON_GetObjectItem(sp, "attributes");
				s->code = status_code(cJSON_GetObjectItem(cJSON_GetObjectItem(sp, "status"), "code"));
			}
}

/* The line at *p (cut there), *p moved past it; NULL at the end. */
static char *next_line(char **p)
{
	char *line = *p, *nl;

	if (!line || !*line)
		return NULL;
	nl = strchr(line, '\n');
	*p = nl ? nl + 1 : NULL;
	if (nl)
		*nl = '\0';
	return line;
}

static void load_trace_file(struct tr *t, const char *path)
{
	char *text = fgt_read(path, NULL), *p = text, *line;

	cr_assert_not_null(text, "no trace file %s", path);
	for (line = next_line(&p); line; line = next_line(&p))
		if (*line)
			add_doc(t, cJSON_Parse(line));
	free(text);
}

static const struct span *find(const struct tr *t, const char *name, int cycle)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->s[i].name, name) && (cycle < 0 || int_attr(&t->s[i], "forge.cycle") == cycle))
			return &t->s[i];
	return NULL;
}

static const cJSON *usage_of(const cJSON *res, const char *role)
{
	return cJSON_GetObjectItem(cJSON_GetObjectItem(res, "usage"), role);
}

/* The spans against the run's result: the Done-when of the trace. */
static void check_trace(const struct tr *t)
{
	const struct span *wf = find(t, "invoke_workflow forge-review", -1);
	const cJSON *res = t->w.res;
	long long in = 0, out = 0;
	double cost = 0;
	const char *order[] = { "invoke_agent worker", "execute_tool check unit", "invoke_agent reviewer correctness" };

	cr_assert_not_null(res, "no result; log:\n%s", t->w.logtext);
	cr_assert_str_eq(fge_jstr(res, "review_state"), "approved", "log:\n%s", t->w.logtext);
	cr_assert_not_null(wf, "no workflow span");
	cr_expect_str_eq(wf->parent, "", "the workflow span is the root");
	cr_expect_str_eq(str_attr(wf, "forge.run_id"), fge_jstr(res, "run_id"));
	cr_expect_str_eq(str_attr(wf, "forge.review_state"), "approved");
	cr_expect_eq(int_attr(wf, "forge.cycles"), 2);
	for (size_t i = 0; i < t->n; i++) {
		const struct span *s = &t->s[i];

		cr_expect_str_eq(s->trace, wf->trace, "one trace: %s", s->name);
		cr_expect(s->end >= s->start, "%s ends after it starts", s->name);
		cr_expect(s->start >= wf->start && s->end <= wf->end, "%s within the run", s->name);
		if (s == wf)
			continue;
		cr_expect_str_eq(s->parent, wf->id, "%s is a child of the workflow span", s->name);
		cr_expect_str_eq(str_attr(s, "forge.step"), "impl");
		if (strncmp(s->name, "invoke_agent ", 13))
			continue;
		cr_expect_str_eq(str_attr(s, "gen_ai.operation.name"), "invoke_agent");
		cr_expect_str_eq(str_attr(s, "gen_ai.agent.name"), s->name + 13);
		cr_expect_str_eq(str_attr(s, "gen_ai.provider.name"), "anthropic");
		in += int_attr(s, "gen_ai.usage.input_tokens");
		out += int_attr(s, "gen_ai.usage.output_tokens");
		cost += dbl_attr(s, "forge.cost_usd");
	}
	/* Two cycles: worker, check, then the roles (security's approval of
	 * cycle 1 stands in cycle 2 unless rereviewed). */
	for (int c = 1; c <= 2; c++) {
		long long prev = 0;

		for (size_t i = 0; i < 3; i++) {
			const struct span *s = find(t, order[i], c);

			cr_assert_not_null(s, "no span %s in cycle %d", order[i], c);
			cr_expect(s->start >= prev, "%s of cycle %d in time order", order[i], c);
			prev = s->end;
		}
	}
	cr_assert_not_null(find(t, "invoke_agent reviewer security", 1));
	cr_expect_str_eq(str_attr(find(t, "invoke_agent reviewer correctness", 1), "forge.verdict"), "rejected");
	cr_expect_str_eq(str_attr(find(t, "invoke_agent reviewer correctness", 2), "forge.verdict"), "approved");
	cr_expect_str_eq(str_attr(find(t, "execute_tool check unit", 1), "gen_ai.tool.name"), "check unit");
	cr_expect(find(t, "invoke_agent worker", 1)->end <= find(t, "invoke_agent worker", 2)->start);
	/* The figures are the result's. */
	cr_expect_eq(in, fge_jint(usage_of(res, "worker"), "input_tokens") +
			 fge_jint(usage_of(res, "reviewer"), "input_tokens"));
	cr_expect_eq(out, fge_jint(usage_of(res, "worker"), "output_tokens") +
			  fge_jint(usage_of(res, "reviewer"), "output_tokens"));
	cr_expect_float_eq(cost, cJSON_GetObjectItem(usage_of(res, "worker"), "cost_usd")->valuedouble +
				 cJSON_GetObjectItem(usage_of(res, "reviewer"), "cost_usd")->valuedouble, 1e-9);
	cr_expect_eq(int_attr(wf, "gen_ai.usage.input_tokens"), in);
	cr_expect_float_eq(dbl_attr(wf, "forge.cost_usd"), cost, 1e-9);
}

/* The TRACEPARENT lines the agents printed on stderr ("tp: ROLE PANEL
 * CYCLE TP", in the log's output events), one a line (owned). */
static char *agent_lines(const struct tr *t)
{
	const cJSON *ev;
	size_t n = 0;
	char *out = calloc(1, 65536);

	cr_assert_not_null(out);
	cJSON_ArrayForEach(ev, t->w.events) {
		const char *line = fge_jstr_or_null(ev, "line"), *tp = line ? strstr(line, "tp: ") : NULL;

		if (!tp || strcmp(fge_jstr(ev, "event"), "output") || n + strlen(tp) + 2 > 65536)
			continue;
		n += (size_t)snprintf(out + n, 65536 - n, "%s\n", tp + 4);
	}
	return out;
}

/* Each agent's TRACEPARENT named its own span: the worker of FORGE_CYCLE k
 * is cycle k+1's worker turn, a reviewer of FORGE_CYCLE k cycle k's. */
static void check_traceparents(const struct tr *t)
{
	char *text = agent_lines(t), *p = text, *line;
	const struct span *wf = find(t, "invoke_workflow forge-review", -1);
	int lines = 0;

	for (line = next_line(&p); line; line = next_line(&p)) {
		char role[32], panel[32], tp[80], name[96];
		int cycle;
		const struct span *s;

		cr_assert_eq(sscanf(line, "%31s %31s %d %79s", role, panel, &cycle, tp), 4, "%s", line);
		if (!strcmp(role, "worker"))
			snprintf(name, sizeof(name), "invoke_agent worker"), cycle++;
		else
			snprintf(name, sizeof(name), "invoke_agent reviewer %s", panel);
		s = find(t, name, cycle);
		cr_assert_not_null(s, "no span for %s", line);
		cr_expect_eq(strlen(tp), 55, "%s", line);
		cr_expect(!strncmp(tp, "00-", 3) && !strncmp(tp + 3, wf->trace, 32) && !strncmp(tp + 36, s->id, 16),
			  "%s: TRACEPARENT %s names span %s of trace %s", name, tp, s->id, wf->trace);
		lines++;
	}
	cr_expect_geq(lines, 5, "every agent run printed its TRACEPARENT");
	free(text);
}

Test(trace, a_two_cycle_panel_run_with_checks_is_one_trace_in_the_trace_file)
{
	struct tr t;
	char *file;

	tr_init(&t);
	file = fgw_path(&t.w, "trace.jsonl");
	tr_run(&t, (const char *const[]){ "--trace-file", file, NULL }, NULL);
	cr_assert_eq(fgw_code(&t.w), 0, "log:\n%s", t.w.logtext);
	load_trace_file(&t, file);
	cr_expect_geq(cJSON_GetArraySize(t.docs), 3, "a batch per cycle and the workflow span's");
	check_trace(&t);
	check_traceparents(&t);
	free(file);
	tr_release(&t);
}

/* ---- collectors that fail ---- */

enum bad { REFUSE, SILENT, STATUS_500, STATUS_429 };

/* A loopback server of the test's own that fails the way bad says; its
 * port in *port. Returns its pid (0 for REFUSE: nothing listens). */
static pid_t bad_collector(enum bad bad, int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	pid_t pid;

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	if (bad == REFUSE) {
		close(fd);
		return 0;
	}
	cr_assert_eq(listen(fd, 16), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		/* It dies with the test, and holds none of its output. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(null, 1);
		dup2(null, 2);
		for (;;) {
			int c = accept(fd, NULL, NULL);
			char buf[65536];
			const char *answer = bad == STATUS_500
				? "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
				: "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 60\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

			if (c < 0)
				continue;
			if (read(c, buf, sizeof(buf)) < 0 || bad == SILENT)
				continue;   /* keep it open, never answer */
			if (write(c, answer, strlen(answer)) < 0)
				_exit(1);
			close(c);
		}
	}
	close(fd);
	return pid;
}

static void failing_collector(enum bad bad, const char *why)
{
	struct tr t;
	int port = 0;
	pid_t srv = bad_collector(bad, &port);
	char *endpoint = fgt_fmt("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:%d", port);
	const cJSON *ev;
	pid_t runner;

	tr_init(&t);
	runner = tr_run(&t, NULL, (const char *const[]){ endpoint, NULL });
	cr_assert_eq(fgw_code(&t.w), 0, "%s: log:\n%s", why, t.w.logtext);
	cr_assert_str_eq(fge_jstr(t.w.res, "review_state"), "approved");
	cr_assert_eq(cJSON_GetArraySize(fgw_cycles(&t.w)), 2, "%s", why);
	cr_assert_eq(fge_count_events(t.w.events, "trace_export_failed", NULL, NULL), 1,
		     "%s: one WARN; log:\n%s", why, t.w.logtext);
	ev = fge_find_event(t.w.events, "trace_export_failed", NULL, NULL);
	cr_expect_str_eq(fge_jstr(ev, "level"), "warn");
	cr_expect_not_null(strstr(fge_jstr(ev, "endpoint"), "/v1/traces"));
	cr_expect_eq(fge_jint(fge_find_event(t.w.events, "run_exit", NULL, NULL), "exit_code"), 0);
	cr_expect_eq(fge_count_events(t.w.events, "trace_export_failed", NULL, NULL) +
			     fge_count_events(t.w.events, "trace_config", NULL, NULL) +
			     fge_count_events(t.w.events, "trace_file_error", NULL, NULL), 1, "no other warning");
	/* Nothing of the run is left: the exporter child was in its group. */
	errno = 0;
	cr_expect(kill(-runner, 0) < 0 && errno == ESRCH, "%s: a process of the run is still there", why);
	if (srv > 0) {
		kill(srv, SIGKILL);
		waitpid(srv, NULL, 0);
	}
	free(endpoint);
	tr_release(&t);
}

Test(trace, a_collector_that_refuses_changes_nothing_but_one_warning)
{
	failing_collector(REFUSE, "refused");
}

Test(trace, a_collector_that_never_answers_changes_nothing_but_one_warning)
{
	failing_collector(SILENT, "silent");
}

Test(trace, a_collector_that_answers_500_changes_nothing_but_one_warning)
{
	failing_collector(STATUS_500, "500");
}

Test(trace, a_collector_that_answers_429_changes_nothing_but_one_warning)
{
	failing_collector(STATUS_429, "429");
}

/* ---- the real Jaeger ---- */

static const char JAEGER_CONFIG[] =
	"service:\n  extensions: [jaeger_storage, jaeger_query]\n  pipelines:\n    traces:\n"
	"      receivers: [otlp]\n      processors: []\n      exporters: [jaeger_storage_exporter]\n"
	"  telemetry:\n    metrics:\n      level: none\n    logs:\n      level: warn\n"
	"extensions:\n  jaeger_query:\n    storage:\n      traces: mem\n    http:\n      endpoint: 127.0.0.1:%d\n"
	"    grpc:\n      endpoint: 127.0.0.1:%d\n  jaeger_storage:\n    backends:\n      mem:\n        memory:\n"
	"          max_traces: 1000\nreceivers:\n  otlp:\n    protocols:\n      http:\n        endpoint: 127.0.0.1:%d\n"
	"exporters:\n  jaeger_storage_exporter:\n    trace_storage: mem\n";

/* The binary tests/jaeger/jaeger.sh builds (FORGE_JAEGER_BIN overrides). */
static char *jaeger_bin(void)
{
	const char *env = getenv("FORGE_JAEGER_BIN");
	char *cached = fgt_fmt("%s/jaeger-v1.75.0/bin/jaeger",
			       getenv("FORGE_K8S_CACHE_ROOT") ? getenv("FORGE_K8S_CACHE_ROOT") : "/var/cache/forge-review");

	if (env && *env) {
		free(cached);
		return strdup(env);
	}
	return cached;
}

/* A port nothing listens on now (bound to 0, then closed). */
static int free_port(void)
{
	int port = 0;
	pid_t none = bad_collector(REFUSE, &port);

	(void)none;
	return port;
}

static bool port_open(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;

	if (fd >= 0)
		close(fd);
	return ok;
}

struct jaeger {
	pid_t pid;
	int otlp, query;
};

static void jaeger_start(struct jaeger *j, const struct fgw *w, const char *bin)
{
	int grpc = free_port();
	char *cfg = fgt_fmt(JAEGER_CONFIG, (j->query = free_port()), grpc, (j->otlp = free_port()));
	char *path = fgw_path(w, "jaeger.yaml"), *arg = fgt_fmt("file:%s", path), *logp = fgw_path(w, "jaeger.log");

	fgw_write(w, "jaeger.yaml", cfg);
	j->pid = fork();
	cr_assert_geq(j->pid, 0);
	if (j->pid == 0) {
		int fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(bin, bin, "--config", arg, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 600 && !(port_open(j->otlp) && port_open(j->query)); i++)
		usleep(100 * 1000);
	cr_assert(port_open(j->otlp) && port_open(j->query), "jaeger did not start: %s", fgw_read(w, "jaeger.log"));
	free(cfg);
	free(path);
	free(arg);
	free(logp);
}

static void jaeger_stop(struct jaeger *j)
{
	if (j->pid <= 0)
		return;
	kill(j->pid, SIGTERM);
	waitpid(j->pid, NULL, 0);
	j->pid = 0;
}

/* The trace as Jaeger's query API (v3, OTLP JSON) returns it, once the
 * workflow span is in; added to t. */
static void jaeger_read(struct tr *t, const struct jaeger *j, const char *trace_id)
{
	char *url = fgt_fmt("http://127.0.0.1:%d/api/v3/traces/%s", j->query, trace_id);
	const char *argv[] = { "/usr/bin/curl", "-s", "--max-time", "10", url, NULL };

	for (int i = 0; i < 100; i++) {
		struct fgt_proc p;
		bool whole;
		cJSON *o;

		cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 20), 0);
		o = cJSON_Parse(p.out ? p.out : "");
		whole = p.exit_code == 0 && p.out && strstr(p.out, "invoke_workflow forge-review");
		fgt_proc_release(&p);
		if (o && whole) {
			cJSON *res = cJSON_DetachItemFromObject(o, "result");

			cr_assert_not_null(res, "no result from %s", url);
			add_doc(t, res);
			cJSON_Delete(o);
			free(url);
			return;
		}
		cJSON_Delete(o);
		usleep(200 * 1000);
	}
	cr_assert_fail("jaeger never had the whole trace %s", trace_id);
}

Test(trace, a_two_cycle_panel_run_with_checks_is_one_trace_in_jaeger)
{
	char *bin = jaeger_bin(), *endpoint, *tp, trace_id[33];
	struct jaeger j = { 0 };
	struct tr t;

	if (access(bin, X_OK))
		cr_skip_test("no Jaeger at %s (tests/jaeger/jaeger.sh build makes it)", bin);
	if (access("/usr/bin/curl", X_OK))
		cr_skip_test("no /usr/bin/curl to read Jaeger's query API");
	tr_init(&t);
	jaeger_start(&j, &t.w, bin);
	endpoint = fgt_fmt("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:%d", j.otlp);
	tr_run(&t, NULL, (const char *const[]){ endpoint, "OTEL_SERVICE_NAME=forge-review-test", NULL });
	cr_assert_eq(fgw_code(&t.w), 0, "log:\n%s", t.w.logtext);
	cr_assert_eq(fge_count_events(t.w.events, "trace_export_failed", NULL, NULL), 0, "log:\n%s", t.w.logtext);
	/* The trace id: the one each agent's TRACEPARENT names. */
	tp = agent_lines(&t);
	cr_assert_not_null(strstr(tp, " 00-"), "no TRACEPARENT recorded");
	snprintf(trace_id, sizeof(trace_id), "%.32s", strstr(tp, " 00-") + 4);
	jaeger_read(&t, &j, trace_id);
	jaeger_stop(&j);
	check_trace(&t);
	check_traceparents(&t);
	free(tp);
	free(endpoint);
	free(bin);
	tr_release(&t);
}

/* Only the exporter child maps libcurl and the libraries it brings: every
 * forge-runner process stays small, traced or not. The dynamic loader
 * lists what each program loads (LD_TRACE_LOADED_OBJECTS, as ldd does). */
Test(trace, only_the_exporter_loads_libcurl)
{
	char *dir = strdup(FG_RUNNER_BIN), *exporter;
	const char *const env[] = { "LD_TRACE_LOADED_OBJECTS=1", NULL };
	struct fgt_proc p;

	*strrchr(dir, '/') = '\0';
	exporter = fgt_fmt("%s/forge-otlp-export", dir);
	cr_assert_eq(fgt_run(&p, (const char *const[]){ FG_RUNNER_BIN, "--version", NULL }, env, NULL, NULL, 30), 0);
	cr_assert(strstr(p.out, "libc.so"), "the loader listed nothing: %s", p.out);
	cr_assert_null(strstr(p.out, "libcurl"), "forge-runner loads libcurl:\n%s", p.out);
	fgt_proc_release(&p);
	cr_assert_eq(fgt_run(&p, (const char *const[]){ exporter, NULL }, env, NULL, NULL, 30), 0);
	cr_assert(strstr(p.out, "libcurl"), "the exporter does not load libcurl:\n%s", p.out);
	fgt_proc_release(&p);
	free(exporter);
	free(dir);
}
