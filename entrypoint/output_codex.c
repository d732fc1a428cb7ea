/*
 * output_codex.c - Codex CLI's JSON lines (`codex exec --json`; see
 * output.h and docs/guide/agents.md).
 *
 * Events: thread.started {thread_id}, turn.started, item.started /
 * item.updated / item.completed {item: {type, text, ...}}, turn.completed
 * {usage}, turn.failed {error: {message}}, error {message}.
 * Outcome: turn.failed is a failure whatever the exit status (its message
 * is the reason); turn.completed is success. `error` events are not an
 * outcome: "Reconnecting... 1/5" is a retry; the last one is kept and named
 * when the output ends with no outcome at all.
 * Answer: the text of the last item.completed whose item is an
 * agent_message (not necessarily the last line).
 * Usage: turn.completed usage summed over turns: input_tokens (cached
 * included, as Codex counts them), cached_input_tokens, output_tokens;
 * turns = completed turns. Codex reports no cost and no duration: null.
 * Session: thread_id.
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

static void on_turn_completed(struct ep_output *o, const cJSON *m)
{
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(m, "usage");
	struct fg_usage *t = &o->usage;

	add_count(t, FG_USAGE_INPUT, &t->input_tokens, fg_json_num(u, "input_tokens"));
	add_count(t, FG_USAGE_CACHED, &t->cached_input_tokens, fg_json_num(u, "cached_input_tokens"));
	add_count(t, FG_USAGE_OUTPUT, &t->output_tokens, fg_json_num(u, "output_tokens"));
	add_count(t, FG_USAGE_TURNS, &t->turns, 1);
	/* A failed turn stays a failure: a later turn does not undo it. */
	if (o->outcome != EP_OUTCOME_FAILED)
		o->outcome = EP_OUTCOME_OK;
}

static void on_turn_failed(struct ep_output *o, const cJSON *m)
{
	const char *msg = fg_json_str(cJSON_GetObjectItemCaseSensitive(m, "error"), "message");

	ep_output_fail(o, msg && *msg ? msg : "codex reported a failed turn");
}

static void on_item_completed(struct ep_output *o, const cJSON *m)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(m, "item");
	const char *type = fg_json_str(item, "type");
	const char *text = fg_json_str(item, "text");

	/* Older versions spelled it "assistant_message". */
	if (!type || !text || (strcmp(type, "agent_message") && strcmp(type, "assistant_message")))
		return;
	fg_buf_reset(&o->last);
	fg_buf_adds(&o->last, text);
}

static void codex_message(struct ep_output *o, const cJSON *m)
{
	const char *type = fg_json_str(m, "type");
	const char *msg;

	if (!type)
		return;
	if (!strcmp(type, "thread.started") && fg_json_str(m, "thread_id")) {
		free(o->session_id);
		o->session_id = fg_xstrdup(fg_json_str(m, "thread_id"));
	} else if (!strcmp(type, "item.completed")) {
		on_item_completed(o, m);
	} else if (!strcmp(type, "turn.completed")) {
		on_turn_completed(o, m);
	} else if (!strcmp(type, "turn.failed")) {
		on_turn_failed(o, m);
	} else if (!strcmp(type, "error")) {
		msg = fg_json_str(m, "message");
		if (msg && *msg) {
			free(o->retry_note);
			o->retry_note = fg_xstrdup(msg);
		}
	}
}

const struct ep_output_ops ep_output_codex = {
	.name = "codex",
	.message = codex_message,
	.finish = NULL,
};
