/*
 * output_codex.c - Codex CLI's JSON lines (`codex exec --json`; see
 * output.h and docs/guide/agents.md).
 *
 * Events: thread.started {thread_id}, turn.started, item.started /
 * item.updated / item.completed {item: {type, text, ...}}, turn.completed
 * {usage}, turn.failed {error: {message}}, error {message}.
 * Outcome: turn.failed is a failure whatever the exit status (its message
 * is the reason); turn.completed is success. `error` events are not an
 * outcome: "Reconnecting... 1/5" is a retry (counted in retries); the last
 * one is kept and named when the output ends with no outcome at all.
 * Answer: the text of the last item.completed whose item is an
 * agent_message (not necessarily the last line).
 * Usage: turn.completed usage is the thread's running total (Codex counts
 * per thread, so a second turn's usage includes the first's): the last one
 * stands. input_tokens (cached and cache writes included, as Codex counts
 * them: cache_write_input_tokens is not added again), cached_input_tokens,
 * output_tokens (reasoning included), reasoning_tokens =
 * reasoning_output_tokens (0.141+); turns = completed turns. Codex reports
 * no cost and no duration: null.
 * Exit status 2 is its argument parser refusing the command line (an
 * option this version does not know, such as --full-auto since ~0.146).
 * Session: thread_id.
 */
#include "output.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forge/json.h"
#include "forge/alloc.h"
#include "forge/text.h"

static void on_turn_completed(struct ep_output *o, const cJSON *m)
{
	const cJSON *u = fg_json_get(m, "usage");
	struct fg_usage *t = &o->usage;
	int64_t turns = t->turns;
	bool had_turns = t->have & FG_USAGE_TURNS;

	fg_usage_init(t);
	fg_usage_set(t, FG_USAGE_INPUT, fg_json_num(u, "input_tokens"));
	fg_usage_set(t, FG_USAGE_CACHED, fg_json_num(u, "cached_input_tokens"));
	fg_usage_set(t, FG_USAGE_OUTPUT, fg_json_num(u, "output_tokens"));
	fg_usage_set(t, FG_USAGE_REASONING, fg_json_num(u, "reasoning_output_tokens"));
	fg_usage_set(t, FG_USAGE_TURNS, (had_turns ? (double)turns : 0) + 1);
	/* A failed turn stays a failure: a later turn does not undo it. */
	if (o->outcome != EP_OUTCOME_FAILED)
		o->outcome = EP_OUTCOME_OK;
}

static void on_turn_failed(struct ep_output *o, const cJSON *m)
{
	const char *msg = fg_json_str(fg_json_get(m, "error"), "message");

	ep_output_fail(o, msg && *msg ? msg : "codex reported a failed turn");
}

static void on_item_completed(struct ep_output *o, const cJSON *m)
{
	const cJSON *item = fg_json_get(m, "item");
	const char *type = fg_json_str(item, "type");
	const char *text = fg_json_str(item, "text");

	/* Older versions spelled it "assistant_message". */
	if (!type || !text || (strcmp(type, "agent_message") && strcmp(type, "assistant_message")))
		return;
	fg_buf_reset(&o->last);
	fg_buf_adds(&o->last, text);
}

static void on_thread_started(struct ep_output *o, const cJSON *m)
{
	ep_output_set_session(o, fg_json_str(m, "thread_id"));
}

static void on_error(struct ep_output *o, const cJSON *m)
{
	const char *msg = fg_json_str(m, "message");

	if (msg && fg_skip_prefix(msg, "Reconnecting", NULL))
		o->retries++;
	if (msg && *msg) {
		free(o->retry_note);
		o->retry_note = fg_xstrdup(msg);
	}
}

static const struct ep_output_on codex_events[] = {
	{ "thread.started", on_thread_started }, { "item.completed", on_item_completed },
	{ "turn.completed", on_turn_completed }, { "turn.failed", on_turn_failed },
	{ "error", on_error }, { NULL, NULL },
};

static void codex_message(struct ep_output *o, const cJSON *m)
{
	ep_output_on_type(o, m, codex_events);
}

static const char *codex_exit(int status)
{
	return status == 2 ? "codex: the command line was refused (an option this Codex version does not "
			     "accept: see docs/guide/agents.md#presets)" : NULL;
}

const struct ep_output_ops ep_output_codex = {
	.name = "codex",
	.message = codex_message,
	.finish = NULL,
	.exit_meaning = codex_exit,
};
