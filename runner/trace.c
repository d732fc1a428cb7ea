/*
 * trace.c - a run's spans from its sealed records (see trace.h).
 */
#include "trace.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/audit.h"
#include "forge/fsutil.h"
#include "forge/json.h"
#include "forge/timeutil.h"
#include "forge/verdict.h"

#define SPAN_KIND_INTERNAL 1
#define STATUS_ERROR 2

/* ---- attributes ---- */

static void attr_str(cJSON *attrs, const char *key, const char *v)
{
	cJSON *a = fg_json_push_object(attrs);

	if (!v)
		v = "";
	cJSON_AddStringToObject(a, "key", key);
	cJSON_AddStringToObject(fg_json_add_object(a, "value"), "stringValue", v);
}

/* int64 values are strings in OTLP JSON (the protobuf JSON mapping). */
static void attr_int(cJSON *attrs, const char *key, long long v)
{
	cJSON *a = fg_json_push_object(attrs);
	char num[32];

	snprintf(num, sizeof(num), "%lld", v);
	cJSON_AddStringToObject(a, "key", key);
	cJSON_AddStringToObject(fg_json_add_object(a, "value"), "intValue", num);
}

static void attr_double(cJSON *attrs, const char *key, double v)
{
	cJSON *a = fg_json_push_object(attrs);

	cJSON_AddStringToObject(a, "key", key);
	cJSON_AddNumberToObject(fg_json_add_object(a, "value"), "doubleValue", v);
}

static void attr_bool(cJSON *attrs, const char *key, bool v)
{
	cJSON *a = fg_json_push_object(attrs);

	cJSON_AddStringToObject(a, "key", key);
	cJSON_AddBoolToObject(fg_json_add_object(a, "value"), "boolValue", v);
}

/* The usage of one run: the GenAI names for tokens, forge.cost_usd. */
static void attr_usage(cJSON *attrs, const struct fg_usage *u)
{
	if (u->have & FG_USAGE_INPUT)
		attr_int(attrs, "gen_ai.usage.input_tokens", u->input_tokens);
	if (u->have & FG_USAGE_OUTPUT)
		attr_int(attrs, "gen_ai.usage.output_tokens", u->output_tokens);
	if (u->have & FG_USAGE_CACHED)
		attr_int(attrs, "gen_ai.usage.cache_read.input_tokens", u->cached_input_tokens);
	if (u->have & FG_USAGE_REASONING)
		attr_int(attrs, "gen_ai.usage.reasoning.output_tokens", u->reasoning_tokens);
	if (u->have & FG_USAGE_COST)
		attr_double(attrs, "forge.cost_usd", u->cost_usd);
}

/* forge.step, forge.skill, forge.run_id (and forge.task_key when set). */
static void attr_run(const struct rn_trace *t, cJSON *attrs)
{
	attr_str(attrs, "forge.step", t->p.step);
	attr_str(attrs, "forge.skill", t->p.skill);
	attr_str(attrs, "forge.run_id", t->p.run_id);
	if (t->p.task_key && *t->p.task_key)
		attr_str(attrs, "forge.task_key", t->p.task_key);
}

/* ---- spans ---- */

static void add_nanos(cJSON *o, const char *key, int64_t ms)
{
	char num[32];

	snprintf(num, sizeof(num), "%lld000000", (long long)(ms < 0 ? 0 : ms));
	cJSON_AddStringToObject(o, key, num);
}

/* A new span named name, child of the workflow span (or, for the workflow
 * span itself, of the caller's), span id span (NULL or invalid: a new one);
 * its attributes array is *attrs. */
static cJSON *span_new(const struct rn_trace *t, const char *name, const char *span, const struct fg_phase *ph,
		       cJSON **attrs)
{
	cJSON *s = cJSON_CreateObject();
	char id[17];
	bool root = !strcmp(name, "invoke_workflow forge-review");

	if (!s)
		abort();
	if (root)
		snprintf(id, sizeof(id), "%s", t->ctx.span_id);
	else if (span && fg_trace_hex_valid(span, 16))
		snprintf(id, sizeof(id), "%s", span);
	else
		fg_trace_random_hex(id, 16);
	cJSON_AddStringToObject(s, "traceId", t->ctx.trace_id);
	cJSON_AddStringToObject(s, "spanId", id);
	if (!root || t->parent[0])
		cJSON_AddStringToObject(s, "parentSpanId", root ? t->parent : t->ctx.span_id);
	cJSON_AddStringToObject(s, "name", name);
	cJSON_AddNumberToObject(s, "kind", SPAN_KIND_INTERNAL);
	add_nanos(s, "startTimeUnixNano", ph->started_ms);
	add_nanos(s, "endTimeUnixNano", ph->ended_ms);
	*attrs = cJSON_AddArrayToObject(s, "attributes");
	if (!*attrs)
		abort();
	attr_run(t, *attrs);
	return s;
}

static void span_error(cJSON *s, cJSON *attrs, const char *type, const char *message)
{
	cJSON *st = fg_json_add_object(s, "status");

	cJSON_AddNumberToObject(st, "code", STATUS_ERROR);
	cJSON_AddStringToObject(st, "message", message);
	attr_str(attrs, "error.type", type);
}

/* One agent run's span: name "invoke_agent AGENT". Returns its attributes
 * (borrowed from spans), where a caller adds what it alone knows. */
static cJSON *agent_span(const struct rn_trace *t, cJSON *spans, const char *agent, int cycle,
		       const struct fg_agent_run *run, size_t call)
{
	char name[96];
	cJSON *attrs, *s;

	snprintf(name, sizeof(name), "invoke_agent %s", agent);
	s = span_new(t, name, run->span_id, &run->t, &attrs);
	attr_str(attrs, "gen_ai.operation.name", "invoke_agent");
	attr_str(attrs, "gen_ai.agent.name", agent);
	if (run->provider[0])
		attr_str(attrs, "gen_ai.provider.name", run->provider);
	attr_int(attrs, "forge.cycle", cycle);
	if (call > 0)
		attr_bool(attrs, "forge.reask", true);
	attr_usage(attrs, &run->usage);
	if (run->failed)
		span_error(s, attrs, "agent_failed", "the agent run failed");
	cJSON_AddItemToArray(spans, s);
	return attrs;
}

/* The attributes of a verdict: the last call of a reviewer carries it. */
static void last_verdict(cJSON *attrs, const char *verdict, const struct fg_judgement *j)
{
	attr_str(attrs, "forge.verdict", verdict);
	if (j->has_format)
		attr_str(attrs, "forge.format", fg_verdict_format_name(j->format));
}

static void check_spans(const struct rn_trace *t, cJSON *spans, const struct fg_cycle *c)
{
	for (size_t i = 0; i < c->ev.nchecks; i++) {
		const struct fg_check_result *k = &c->ev.checks[i];
		char name[FG_CHECK_NAME_MAX + 32], tool[FG_CHECK_NAME_MAX + 8];
		cJSON *attrs, *s;

		if (!fg_phase_known(&k->t))
			continue;
		snprintf(tool, sizeof(tool), "check %s", k->name);
		snprintf(name, sizeof(name), "execute_tool %s", tool);
		s = span_new(t, name, NULL, &k->t, &attrs);
		attr_str(attrs, "gen_ai.operation.name", "execute_tool");
		attr_str(attrs, "gen_ai.tool.name", tool);
		attr_str(attrs, "gen_ai.tool.type", "function");
		attr_int(attrs, "forge.cycle", c->cycle);
		attr_int(attrs, "forge.check.exit_code", k->exit_code);
		if (k->exit_code != 0)
			span_error(s, attrs, k->timed_out ? "timeout" : "exit_code",
				   k->timed_out ? "the check timed out" : "the check failed");
		cJSON_AddItemToArray(spans, s);
	}
}

static void reviewer_spans(const struct rn_trace *t, cJSON *spans, const struct fg_cycle *c)
{
	cJSON *last = NULL;

	for (size_t i = 0; i < c->reviewer_runs.n; i++)
		last = agent_span(t, spans, "reviewer", c->cycle, &c->reviewer_runs.v[i], i);
	if (last)
		last_verdict(last, fg_verdict_kind_name(c->j.verdict), &c->j);
	for (size_t r = 0; r < c->nreviews; r++) {
		const struct fg_review *rv = &c->reviews[r];
		char agent[FG_ROLE_MAX + 16];

		if (rv->from_cycle)
			continue;
		snprintf(agent, sizeof(agent), "reviewer %s", rv->role);
		last = NULL;
		for (size_t i = 0; i < rv->runs.n; i++)
			last = agent_span(t, spans, agent, c->cycle, &rv->runs.v[i], i);
		if (last)
			last_verdict(last, fg_role_verdict_name(fg_review_verdict(rv)), &rv->j);
	}
}

/* The cycle's spans, in the order they ran. */
static cJSON *cycle_spans(const struct rn_trace *t, const struct fg_cycle *c)
{
	cJSON *spans = cJSON_CreateArray();

	if (!spans)
		abort();
	if (fg_phase_known(&c->worker_run.t)) {
		cJSON *attrs = agent_span(t, spans, "worker", c->cycle, &c->worker_run, 0);

		if (c->ev.no_change)
			attr_bool(attrs, "forge.no_change", true);
	}
	check_spans(t, spans, c);
	reviewer_spans(t, spans, c);
	return spans;
}

/* ---- the resource ---- */

/* OTEL_RESOURCE_ATTRIBUTES ("key=value,...", percent-decoded), then
 * service.name (OTEL_SERVICE_NAME, default forge-runner), which wins. */
static cJSON *resource_new(void)
{
	const char *v = getenv("OTEL_RESOURCE_ATTRIBUTES"), *svc = getenv("OTEL_SERVICE_NAME");
	cJSON *res = cJSON_CreateObject(), *attrs = res ? cJSON_AddArrayToObject(res, "attributes") : NULL;

	if (!attrs)
		abort();
	while (v && *v) {
		const char *end = strchr(v, ','), *eq;
		size_t n = end ? (size_t)(end - v) : strlen(v);
		char key[256], value[1024];

		eq = memchr(v, '=', n);
		if (eq && rn_otlp_decode(v, (size_t)(eq - v), key, sizeof(key)) && *key &&
		    strcmp(key, "service.name") &&
		    rn_otlp_decode(eq + 1, n - (size_t)(eq + 1 - v), value, sizeof(value)))
			attr_str(attrs, key, value);
		v = end ? end + 1 : NULL;
	}
	attr_str(attrs, "service.name", svc && *svc ? svc : "forge-runner");
	attr_str(attrs, "service.version", FORGE_VERSION);
	return res;
}

char *rn_trace_batch(const struct rn_trace *t, cJSON *spans)
{
	cJSON *doc = cJSON_CreateObject(), *rs, *ss, *scope;
	char *line;

	if (!doc)
		abort();
	rs = fg_json_push_object(cJSON_AddArrayToObject(doc, "resourceSpans"));
	cJSON_AddItemToObject(rs, "resource", cJSON_Duplicate(t->resource, 1));
	ss = fg_json_push_object(cJSON_AddArrayToObject(rs, "scopeSpans"));
	scope = fg_json_add_object(ss, "scope");
	cJSON_AddStringToObject(scope, "name", "forge-runner");
	cJSON_AddStringToObject(scope, "version", FORGE_VERSION);
	cJSON_AddItemToObject(ss, "spans", spans);
	line = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	if (!line)
		abort();
	return line;
}

/* ---- the run ---- */

static void open_file(struct rn_trace *t)
{
	t->file_fd = -1;
	if (!t->p.trace_file)
		return;
	t->file_fd = open(t->p.trace_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (t->file_fd < 0)
		rn_log(t->p.log, RN_LOG_WARN, "trace_file_error", RN_LS("file", t->p.trace_file),
		       RN_LS("error", strerror(errno)));
}

/* The trace id: the caller's (TRACEPARENT, the workflow span then its
 * child) or a new one; the workflow span's id is always new. */
static void ids(struct rn_trace *t)
{
	struct fg_trace_ctx caller;

	if (!fg_traceparent_parse(getenv("TRACEPARENT"), &caller)) {
		snprintf(t->ctx.trace_id, sizeof(t->ctx.trace_id), "%s", caller.trace_id);
		snprintf(t->parent, sizeof(t->parent), "%s", caller.span_id);
	} else {
		fg_trace_random_hex(t->ctx.trace_id, FG_TRACE_ID_HEX);
	}
	fg_trace_random_hex(t->ctx.span_id, 16);
	t->ctx.sampled = true;
	fg_traceparent_format(t->traceparent, t->ctx.trace_id, t->ctx.span_id, true);
}

void rn_trace_init(struct rn_trace *t, const struct rn_trace_params *p)
{
	int r;

	memset(t, 0, sizeof(*t));
	t->p = *p;
	t->file_fd = -1;
	t->otlp.in_fd = t->otlp.status_fd = -1;
	rn_otlp_config_load(&t->cfg);
	if (t->cfg.warning[0])
		rn_log(p->log, RN_LOG_WARN, "trace_config", RN_LS("error", t->cfg.warning));
	open_file(t);
	if (t->cfg.on) {
		r = rn_otlp_start(&t->otlp, &t->cfg);
		t->exporting = !r;
		if (r)
			rn_log(p->log, RN_LOG_WARN, "trace_export_failed", RN_LS("endpoint", t->cfg.url),
			       RN_LS("reason", r == -ENOSYS ? "no forge-otlp-export beside this forge-runner (built only with libcurl)"
							    : strerror(-r)));
	}
	t->on = t->exporting || t->file_fd >= 0;
	if (!t->on)
		return;
	ids(t);
	t->started_ms = fg_time_now_ms();
	t->resource = resource_new();
	t->events = cJSON_CreateArray();
	if (!t->events)
		abort();
}

const char *rn_trace_traceparent(const struct rn_trace *t)
{
	return t->on ? t->traceparent : NULL;
}

/* One batch out: the file (a line) and the exporter. */
static void emit(struct rn_trace *t, cJSON *spans)
{
	char *line;
	size_t n;

	if (!cJSON_GetArraySize(spans)) {
		cJSON_Delete(spans);
		return;
	}
	line = rn_trace_batch(t, spans);
	n = strlen(line);
	if (t->exporting)
		rn_otlp_send(&t->otlp, line, n);
	if (t->file_fd >= 0 && !t->file_failed) {
		line[n] = '\n';
		if (fg_write_all(t->file_fd, line, n + 1) < 0) {
			t->file_failed = true;
			rn_log(t->p.log, RN_LOG_WARN, "trace_file_error", RN_LS("file", t->p.trace_file),
			       RN_LS("error", strerror(errno)));
		}
		line[n] = '\0';
	}
	free(line);
}

void rn_trace_cycle(struct rn_trace *t, const struct fg_cycle *c)
{
	if (!t->on)
		return;
	for (size_t i = 0; i < t->nseen; i++)
		if (t->seen[i] == c->cycle)
			return;
	if (t->nseen == RN_TRACE_CYCLES_MAX)
		return;
	t->seen[t->nseen++] = c->cycle;
	emit(t, cycle_spans(t, c));
}

void rn_trace_audit(struct rn_trace *t, const struct fg_audit *a, int cycle)
{
	cJSON *spans, *attrs = NULL;

	if (!t->on || !a || !a->runs.n)
		return;
	spans = cJSON_CreateArray();
	if (!spans)
		abort();
	for (size_t i = 0; i < a->runs.n; i++)
		attrs = agent_span(t, spans, FG_AUDIT_ROLE, cycle, &a->runs.v[i], i);
	attr_str(attrs, "forge.audit.outcome", fg_audit_outcome_name(a->outcome));
	if (a->has_verdict)
		attr_str(attrs, "forge.verdict", fg_verdict_kind_name(a->verdict));
	emit(t, spans);
}

void rn_trace_forged(struct rn_trace *t, const char *file, const char *source, const char *reason)
{
	cJSON *ev, *attrs;

	if (!t->on || cJSON_GetArraySize(t->events) >= 128)
		return;
	ev = fg_json_push_object(t->events);
	add_nanos(ev, "timeUnixNano", fg_time_now_ms());
	cJSON_AddStringToObject(ev, "name", "record_forged");
	attrs = cJSON_AddArrayToObject(ev, "attributes");
	if (!attrs)
		abort();
	attr_str(attrs, "forge.file", file);
	attr_str(attrs, "forge.source", source);
	attr_str(attrs, "forge.reason", reason);
}

static cJSON *workflow_span(struct rn_trace *t, const struct rn_trace_end *e)
{
	struct fg_phase ph = { t->started_ms, fg_time_now_ms() };
	struct fg_usage all;
	cJSON *spans = cJSON_CreateArray(), *attrs, *s;

	if (!spans)
		abort();
	s = span_new(t, "invoke_workflow forge-review", NULL, &ph, &attrs);
	attr_str(attrs, "gen_ai.operation.name", "invoke_workflow");
	attr_str(attrs, "forge.review_state", e->review_state);
	attr_str(attrs, "forge.outcome", e->outcome);
	attr_int(attrs, "forge.exit_code", e->exit_code);
	attr_int(attrs, "forge.cycles", e->cycles);
	fg_usage_init(&all);
	fg_usage_add(&all, &e->usage->worker);
	fg_usage_add(&all, &e->usage->reviewer);
	attr_usage(attrs, &all);
	if (cJSON_GetArraySize(t->events)) {
		cJSON_AddItemToObject(s, "events", t->events);
		t->events = NULL;
	}
	if (e->exit_code != 0)
		span_error(s, attrs, e->outcome, "the run did not succeed");
	cJSON_AddItemToArray(spans, s);
	return spans;
}

void rn_trace_finish(struct rn_trace *t, const struct rn_trace_end *e)
{
	char why[700];

	if (!t->on)
		return;
	emit(t, workflow_span(t, e));
	if (t->exporting && rn_otlp_finish(&t->otlp, RN_OTLP_FINISH_MS, why, sizeof(why)) < 0)
		rn_log(t->p.log, RN_LOG_WARN, "trace_export_failed", RN_LS("endpoint", t->cfg.url),
		       RN_LS("reason", why));
	t->exporting = false;
}

void rn_trace_release(struct rn_trace *t)
{
	char why[8];

	if (t->exporting)
		(void)rn_otlp_finish(&t->otlp, 0, why, sizeof(why));
	if (t->file_fd >= 0)
		close(t->file_fd);
	t->file_fd = -1;
	cJSON_Delete(t->resource);
	cJSON_Delete(t->events);
	t->resource = t->events = NULL;
	rn_otlp_config_release(&t->cfg);
}
