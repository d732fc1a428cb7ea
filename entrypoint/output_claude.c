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
 * its is_error/result/subtype members.
 * Usage: tokens from modelUsage summed over every model (it covers the
 * helper models that `usage` leaves out), else from `usage`; input_tokens
 * = input + cache creation + cache read tokens, cached_input_tokens =
 * cache read tokens. cost_usd = total_cost_usd; turns = num_turns;
 * duration_ms = duration_ms.
 */
#include "output.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forge/json.h"
#include "forge/alloc.h"

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
	const cJSON *mu = cJSON_GetObjectItemCaseSensitive(m, "modelUsage");
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
		tokens_from(&u, cJSON_GetObjectItemCaseSensitive(m, "usage"), "input_tokens",
			    "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens");
	}
	fg_usage_set_cost(&u, cost);
	fg_usage_set(&u, FG_USAGE_TURNS, fg_json_num(m, "num_turns"));
	fg_usage_set(&u, FG_USAGE_DURATION, fg_json_num(m, "duration_ms"));
	/* A result carries the run's totals: the last one replaces, never adds. */
	o->usage = u;
}

/* "errors" joined with "; ", or NULL. Owned. */
static char *errors_text(const cJSON *m)
{
	const cJSON *errs = cJSON_GetObjectItemCaseSensitive(m, "errors"), *e;
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

static void on_result(struct ep_output *o, const cJSON *m)
{
	const char *subtype = fg_json_str(m, "subtype");
	const char *result = fg_json_str(m, "result");
	bool failed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "is_error")) ||
		      (subtype && !strncmp(subtype, "error", 5));

	result_usage(o, m);
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
	free(o->reason);
	o->reason = NULL;
	ep_output_set_answer(o, result && *result ? result : NULL);
}

/* The text blocks of an assistant message, kept as the fallback answer. */
static void on_assistant(struct ep_output *o, const cJSON *m)
{
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "message"), "content");
	const cJSON *block;
	bool first = true;

	cJSON_ArrayForEach(block, content) {
		const char *t = fg_json_str(block, "text");

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

static bool untyped_result(const cJSON *m)
{
	return cJSON_GetObjectItemCaseSensitive(m, "is_error") ||
	       cJSON_GetObjectItemCaseSensitive(m, "result") ||
	       cJSON_GetObjectItemCaseSensitive(m, "subtype");
}

static void claude_message(struct ep_output *o, const cJSON *m)
{
	const char *type = fg_json_str(m, "type");
	const char *sid = fg_json_str(m, "session_id");

	if (sid && *sid) {
		free(o->session_id);
		o->session_id = fg_xstrdup(sid);
	}
	if (!type && untyped_result(m))
		on_result(o, m);
	else if (type && !strcmp(type, "result"))
		on_result(o, m);
	else if (type && !strcmp(type, "assistant"))
		on_assistant(o, m);
}

const struct ep_output_ops ep_output_claude = {
	.name = "claude",
	.message = claude_message,
	.finish = NULL,
};
