/*
 * output_claude.c - Claude Code's headless output (`claude -p
 * --output-format json|stream-json`; see output.h and docs/guide/agents.md).
 *
 * Messages: {"type":"system","subtype":"init","session_id"}, assistant and
 * user messages, and one {"type":"result"} at the end; `--output-format
 * json` prints the result alone, or (verbose) an array of every message.
 * Outcome (the last result message decides):
 *   - is_error true, or a subtype beginning with "error" (error_max_turns,
 *     error_during_execution): failure; the reason is `errors` joined, else
 *     `result`, else the subtype. Claude reports API errors (404, 429, 529),
 *     usage limits and a bad key as subtype "success" with is_error true,
 *     and some versions exit 0 then: is_error wins.
 *   - otherwise success; the answer is `result`, or when that is empty or
 *     missing the text of the last assistant message.
 * A result message without "type" (abbreviated output) is recognised by
 * its is_error/result/subtype members; "type" may come anywhere in an
 * object (2.1.226 puts it near the end of the result).
 * Denied tools: the result's permission_denials [{tool_name, ...}] and
 * {"type":"system","subtype":"permission_denied","tool_name"} lines; a run
 * with no permission mode ends is_error false / success even when every
 * tool call was denied (2.1.220), so the denials are kept beside the
 * outcome (output.h), never folded into it. Tool calls are the tool_use
 * blocks of assistant messages.
 * Progress, not outcome: system/api_retry {attempt, max_retries, error,
 * error_status} (counted; the last is named when no result follows),
 * rate_limit_event and system/thinking_tokens (an estimate: not usage).
 * Usage: tokens from modelUsage summed over every model (it covers the
 * helper models that `usage` leaves out), else from `usage`; input_tokens
 * = input + cache creation + cache read tokens, cached_input_tokens =
 * cache read tokens. cost_usd = total_cost_usd; turns = num_turns;
 * duration_ms = duration_ms. reasoning_tokens = the result's
 * usage.output_tokens_details.thinking_tokens where Claude reports it (the
 * part of output_tokens spent thinking, as Codex's reasoning_output_tokens),
 * else null.
 */
#include "output.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/json.h"
#include "forge/alloc.h"
#include "forge/text.h"

static double num_or0(const cJSON *m, const char *key, bool *seen)
{
	double v = fg_json_num(m, key);

	if (isnan(v))
		return 0;
	*seen = true;
	return v;
}

static void tokens_from(struct fg_usage *u, const cJSON *x, const char *in, const char *out,
			const char *cread, const char *ccreate)
{
	bool seen_in = false, seen_out = false, seen_c = false;
	double i = num_or0(x, in, &seen_in), o = num_or0(x, out, &seen_out);
	double r = num_or0(x, cread, &seen_c), w = num_or0(x, ccreate, &seen_in);

	if (seen_in || seen_c)
		fg_usage_set(u, FG_USAGE_INPUT, (u->have & FG_USAGE_INPUT ? (double)u->input_tokens : 0) + i + r + w);
	if (seen_out)
		fg_usage_set(u, FG_USAGE_OUTPUT, (u->have & FG_USAGE_OUTPUT ? (double)u->output_tokens : 0) + o);
	if (seen_c)
		fg_usage_set(u, FG_USAGE_CACHED, (u->have & FG_USAGE_CACHED ? (double)u->cached_input_tokens : 0) + r);
}

static void result_usage(struct ep_output *o, const cJSON *m)
{
	const cJSON *mu = fg_json_get(m, "modelUsage");
	const cJSON *model;
	struct fg_usage u;
	double cost = fg_json_num(m, "total_cost_usd");

	fg_usage_init(&u);
	if (cJSON_IsObject(mu) && mu->child) {
		cJSON_ArrayForEach(model, mu) {
			tokens_from(&u, model, "inputTokens", "outputTokens", "cacheReadInputTokens",
				    "cacheCreationInputTokens");
		}
	} else {
		tokens_from(&u, fg_json_get(m, "usage"), "input_tokens",
			    "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens");
	}
	fg_usage_set_cost(&u, cost);
	fg_usage_set(&u, FG_USAGE_TURNS, fg_json_num(m, "num_turns"));
	fg_usage_set(&u, FG_USAGE_DURATION, fg_json_num(m, "duration_ms"));
	fg_usage_set(&u, FG_USAGE_REASONING,
		     fg_json_num(fg_json_obj(fg_json_obj(m, "usage"), "output_tokens_details"), "thinking_tokens"));
	/* A result carries the run's totals: the last one replaces, never adds. */
	o->usage = u;
}

/* "errors" joined with "; ", or NULL. Owned. */
static char *errors_text(const cJSON *m)
{
	const cJSON *errs = fg_json_get(m, "errors"), *e;
	struct fg_buf b;

	fg_buf_init(&b, 64 * 1024);
	cJSON_ArrayForEach(e, errs) {
		if (cJSON_IsString(e) && *e->valuestring) {
			if (b.len)
				fg_buf_adds(&b, "; ");
			fg_buf_adds(&b, e->valuestring);
		}
	}
	if (!b.len) {
		fg_buf_release(&b);
		return NULL;
	}
	return fg_buf_detach(&b, NULL);
}

/* The result's permission_denials: the run's whole list, so it stands for
 * the system/permission_denied lines seen before it. */
static void result_denials(struct ep_output *o, const cJSON *m)
{
	const cJSON *d;
	uint64_t n = 0;

	cJSON_ArrayForEach(d, fg_json_get(m, "permission_denials")) {
		fg_denied_add(&o->denied, fg_json_str(d, "tool_name"));
		n++;
	}
	if (n > o->denied_calls)
		o->denied_calls = n;
}

static void on_result(struct ep_output *o, const cJSON *m)
{
	const char *subtype = fg_json_str(m, "subtype");
	const char *result = fg_json_str(m, "result");
	bool failed = fg_json_true(m, "is_error") ||
		      (subtype && fg_skip_prefix(subtype, "error", NULL));

	result_usage(o, m);
	result_denials(o, m);
	if (failed) {
		char *errs = errors_text(m);
		char *why = errs ? errs
			    : result && *result ? fg_xstrdup(result)
			    : fg_xasprintf("claude reported an error (%s)", subtype ? subtype : "is_error");

		ep_output_fail(o, why);
		free(why);
		ep_output_set_answer(o, result && *result ? result : NULL);
		return;
	}
	o->outcome = EP_OUTCOME_OK;
	FG_FREE_AND_NULL(o->reason);
	ep_output_set_answer(o, result && *result ? result : NULL);
}

/* The text blocks of an assistant message, kept as the fallback answer. */
static void on_assistant(struct ep_output *o, const cJSON *m)
{
	const cJSON *content = fg_json_get(fg_json_get(m, "message"), "content");
	const cJSON *block;
	bool first = true;

	cJSON_ArrayForEach(block, content) {
		const char *t = fg_json_str(block, "text");

		if (fg_json_str(block, "type") && !strcmp(fg_json_str(block, "type"), "tool_use"))
			o->tool_calls++;
		if (!t || !*t || strcmp(fg_json_str(block, "type") ? fg_json_str(block, "type") : "", "text"))
			continue;
		if (first)
			fg_buf_reset(&o->last);
		else
			fg_buf_adds(&o->last, "\n\n");
		first = false;
		fg_buf_adds(&o->last, t);
	}
}

/* "API retry 2/10: overloaded (529)": the retry, kept as the last note. */
static void on_api_retry(struct ep_output *o, const cJSON *m)
{
	const char *err = fg_json_str(m, "error");
	double attempt = fg_json_num(m, "attempt"), max = fg_json_num(m, "max_retries");
	double status = fg_json_num(m, "error_status");
	char note[256];
	int k = snprintf(note, sizeof(note), "API retry");

	o->retries++;
	if (!isnan(attempt) && attempt >= 0 && attempt < 1e6)
		k += snprintf(note + k, sizeof(note) - (size_t)k, " %d", (int)attempt);
	if (!isnan(attempt) && !isnan(max) && max >= 0 && max < 1e6)
		k += snprintf(note + k, sizeof(note) - (size_t)k, "/%d", (int)max);
	k += snprintf(note + k, sizeof(note) - (size_t)k, ": %.100s", err && *err ? err : "error");
	if (!isnan(status) && status >= 0 && status < 1000)
		snprintf(note + k, sizeof(note) - (size_t)k, " (%d)", (int)status);
	free(o->retry_note);
	o->retry_note = fg_xstrdup(note);
}

static void on_system(struct ep_output *o, const cJSON *m)
{
	const char *sub = fg_json_str(m, "subtype");

	if (!sub)
		return;
	if (!strcmp(sub, "api_retry"))
		on_api_retry(o, m);
	else if (!strcmp(sub, "permission_denied"))
		ep_output_deny(o, fg_json_str(m, "tool_name"));
}

static bool untyped_result(const cJSON *m)
{
	return fg_json_get(m, "is_error") ||
	       fg_json_get(m, "result") ||
	       fg_json_get(m, "subtype");
}

static const struct ep_output_on claude_events[] = {
	{ "result", on_result }, { "assistant", on_assistant }, { "system", on_system },
	{ NULL, NULL },
};

static void claude_message(struct ep_output *o, const cJSON *m)
{
	ep_output_set_session(o, fg_json_str(m, "session_id"));
	if (!fg_json_str(m, "type") && untyped_result(m))
		on_result(o, m);
	else
		ep_output_on_type(o, m, claude_events);
}

const struct ep_output_ops ep_output_claude = {
	.name = "claude",
	.message = claude_message,
	.finish = NULL,
};
