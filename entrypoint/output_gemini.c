/*
 * output_gemini.c - Gemini CLI's headless output (`gemini --output-format
 * json|stream-json`; see output.h and docs/guide/agents.md).
 *
 * json: one object {"response", "stats": {"models": {NAME: {"tokens":
 * {prompt, candidates, cached, thoughts, ...}}}}, "session_id"?} or, on
 * failure, {"error": {"type", "message", "code"}}.
 * stream-json: init {session_id}, message {role, content, delta}, tool_use,
 * tool_result, error {message} (non-fatal), result {status, error?, stats:
 * {input_tokens, output_tokens, cached?, duration_ms, ...}}.
 * Outcome: a top-level `error` object, or a result whose status is not
 * "success", is a failure (the error's message is the reason; a result
 * without one keeps the message of the error event before it); a result
 * with status "success" or a json object with `response` is success.
 * Answer: `response`; in a stream, the assistant message text after the
 * last tool call (delta messages are concatenated, a non-delta one
 * replaces).
 * Usage: json: tokens summed over stats.models (input = prompt, cached =
 * cached, output = candidates + thoughts: both are generated and billed
 * as output, reasoning = thoughts); stream: stats.input_tokens, cached
 * when given, duration_ms; its output_tokens count the candidates only
 * (0.53.1), the thoughts are the rest of total_tokens: reasoning =
 * total_tokens - input_tokens - output_tokens, output = output_tokens +
 * reasoning, so both formats count the same. Gemini reports no cost and
 * no turn count: null.
 */
#include "output.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forge/json.h"
#include "forge/alloc.h"

static void add_count(struct fg_usage *u, enum fg_usage_field f, int64_t *cur, double v)
{
	if (isnan(v))
		return;
	fg_usage_set(u, f, (u->have & f ? (double)*cur : 0) + v);
}

static void models_usage(struct ep_output *o, const cJSON *stats)
{
	const cJSON *model;
	struct fg_usage *u = &o->usage;

	cJSON_ArrayForEach(model, fg_json_get(stats, "models")) {
		const cJSON *t = fg_json_get(model, "tokens");
		double c = fg_json_num(t, "candidates"), th = fg_json_num(t, "thoughts");

		add_count(u, FG_USAGE_INPUT, &u->input_tokens, fg_json_num(t, "prompt"));
		add_count(u, FG_USAGE_CACHED, &u->cached_input_tokens, fg_json_num(t, "cached"));
		add_count(u, FG_USAGE_REASONING, &u->reasoning_tokens, th);
		if (!isnan(c) || !isnan(th))
			add_count(u, FG_USAGE_OUTPUT, &u->output_tokens,
				  (isnan(c) ? 0 : c) + (isnan(th) ? 0 : th));
	}
}

static void stream_usage(struct ep_output *o, const cJSON *stats)
{
	struct fg_usage u;

	double in = fg_json_num(stats, "input_tokens"), out = fg_json_num(stats, "output_tokens");
	double total = fg_json_num(stats, "total_tokens");
	double thoughts = !isnan(in) && !isnan(out) && total > in + out ? total - in - out : NAN;

	fg_usage_init(&u);
	fg_usage_set(&u, FG_USAGE_INPUT, in);
	fg_usage_set(&u, FG_USAGE_OUTPUT, isnan(thoughts) ? out : out + thoughts);
	fg_usage_set(&u, FG_USAGE_REASONING, thoughts);
	fg_usage_set(&u, FG_USAGE_CACHED, fg_json_num(stats, "cached"));
	fg_usage_set(&u, FG_USAGE_DURATION, fg_json_num(stats, "duration_ms"));
	o->usage = u;
}

/* An error object's message (with its type when given). Owned. */
static char *error_text(const cJSON *err)
{
	const char *msg = fg_json_str(err, "message");
	const char *type = fg_json_str(err, "type");

	if (cJSON_IsString(err) && *err->valuestring)
		return fg_xstrdup(err->valuestring);
	if (msg && *msg && type && *type)
		return fg_xasprintf("%s (%s)", msg, type);
	if (msg && *msg)
		return fg_xstrdup(msg);
	return fg_xstrdup("gemini reported an error");
}

static void fail_with(struct ep_output *o, const cJSON *err)
{
	char *why = error_text(err);

	ep_output_fail(o, why);
	free(why);
}

static void on_result(struct ep_output *o, const cJSON *m)
{
	const char *status = fg_json_str(m, "status");
	const cJSON *err = fg_json_get(m, "error");

	stream_usage(o, fg_json_get(m, "stats"));
	if (status && !strcmp(status, "success") && !err)
		o->outcome = EP_OUTCOME_OK;
	else if ((!err || cJSON_IsNull(err)) && o->retry_note)
		ep_output_fail(o, o->retry_note);   /* the error event said why */
	else
		fail_with(o, err);
}

static void on_message(struct ep_output *o, const cJSON *m)
{
	const char *role = fg_json_str(m, "role");
	const char *content = fg_json_str(m, "content");

	if (!role || strcmp(role, "assistant") || !content)
		return;
	if (o->last_stale || !fg_json_true(m, "delta"))
		fg_buf_reset(&o->last);
	o->last_stale = false;
	fg_buf_adds(&o->last, content);
}

/* The json format's single document. */
static void on_document(struct ep_output *o, const cJSON *m)
{
	const cJSON *err = fg_json_get(m, "error");
	const char *resp = fg_json_str(m, "response");

	models_usage(o, fg_json_get(m, "stats"));
	if (err && !cJSON_IsNull(err)) {
		fail_with(o, err);
		ep_output_set_answer(o, resp);
	} else if (resp) {
		o->outcome = EP_OUTCOME_OK;
		ep_output_set_answer(o, resp);
	}
}

/* The answer is what the assistant says after its last tool call. */
static void on_tool_use(struct ep_output *o, const cJSON *m)
{
	(void)m;
	o->last_stale = true;
}

/* The event's own "type" is "error": its message alone says why. */
static void on_error(struct ep_output *o, const cJSON *m)
{
	const char *msg = fg_json_str(m, "message");

	free(o->retry_note);
	o->retry_note = fg_xstrdup(msg && *msg ? msg : "gemini reported an error");
}

static const struct ep_output_on gemini_events[] = {
	{ "result", on_result }, { "message", on_message }, { "tool_use", on_tool_use },
	{ "error", on_error }, { NULL, NULL },
};

/* One JSON document without a "type" is the --output-format json answer. */
static void gemini_message(struct ep_output *o, const cJSON *m)
{
	ep_output_set_session(o, fg_json_str(m, "session_id"));
	if (!fg_json_str(m, "type"))
		on_document(o, m);
	else
		ep_output_on_type(o, m, gemini_events);
}

/* Gemini CLI's exit codes (docs/cli/headless.md; FatalError subclasses in
 * packages/core/src/utils/errors.ts, checked at 0.53). 55 is printed on
 * standard error only, before any JSON. */
static const char *gemini_exit(int status)
{
	switch (status) {
	case 41: return "gemini: authentication failed";
	case 42: return "gemini: invalid input";
	case 44: return "gemini: sandbox error";
	case 52: return "gemini: configuration error";
	case 53: return "gemini: turn limit reached";
	case 54: return "gemini: tool execution failed";
	case 55: return "gemini: the workspace is not a trusted folder (--skip-trust or "
			"GEMINI_CLI_TRUST_WORKSPACE=true)";
	case 130: return "gemini: cancelled";
	default: return NULL;
	}
}

const struct ep_output_ops ep_output_gemini = {
	.name = "gemini",
	.message = gemini_message,
	.finish = NULL,
	.exit_meaning = gemini_exit,
};
