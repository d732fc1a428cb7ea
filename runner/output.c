/*
 * output.c - levels, failure reason, engine hints and the cap of the
 * sandbox's output lines (see output.h).
 */
#include "output.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "forge/alloc.h"
#include "forge/json.h"
#include "forge/msg.h"
#include "forge/util.h"
#include "forge/text.h"

void rn_output_init(struct rn_output *o, struct rn_log *log, const struct rn_engine_ops *ops,
		    const struct rn_engine_params *ep)
{
	memset(o, 0, sizeof(*o));
	o->log = log;
	o->ops = ops;
	o->ep = ep;
	o->max = RN_OUTPUT_LOG_MAX;
}

enum rn_log_level rn_output_level(const char *line, const char **reason)
{
	const char *text;
	enum fg_msg_level m = fg_msg_level_of(line, &text);
	bool error = m == FG_MSG_ERROR || m == FG_MSG_FAILED;

	if (reason)
		*reason = error ? text : NULL;
	return error ? RN_LOG_ERROR : m == FG_MSG_WARN ? RN_LOG_WARN : RN_LOG_INFO;
}

/* Replaces *slot with text cut to RN_OUTPUT_REASON_MAX bytes. */
static void keep(char **slot, const char *text)
{
	size_t n = strlen(text);

	if (n > RN_OUTPUT_REASON_MAX) {
		n = RN_OUTPUT_REASON_MAX;
		while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;
	}
	free(*slot);
	*slot = fg_xstrndup(text, n);
}

const char *rn_output_reason(const struct rn_output *o)
{
	return o->reason ? o->reason : o->last_said;
}

/* The engine's hint for one of its own lines: 1 when line got one (it is
 * then at least a warning), else 0. Every line is classified (a runtime
 * failure may follow an earlier hint's line); the first hint is kept and
 * logged, except that the first runtime failure's replaces a hint of
 * another kind: the run then exits as the engine's failure, and its hint
 * says why. */
static int engine_hint(struct rn_output *o, const char *line)
{
	char *hint;
	int kind = RN_HINT_OTHER;

	if (!o->ops || !o->ops->hint || !o->ep)
		return 0;
	hint = o->ops->hint(o->ep, line, &kind);
	if (hint && o->hint && (kind != RN_HINT_RUNTIME || o->engine_runtime))
		FG_FREE_AND_NULL(hint);
	o->engine_down |= kind == RN_HINT_DOWN;
	o->engine_runtime |= kind == RN_HINT_RUNTIME;
	if (!hint)
		return 0;
	free(o->hint);
	o->hint = hint;
	rn_log(o->log, RN_LOG_WARN, "engine_hint", RN_LS("engine", o->ops->name), RN_LS("hint", hint));
	return 1;
}

static void log_line(struct rn_output *o, const char *stream, const char *line,
		     enum rn_log_level level);

/* The entrypoint's error, from its frame: the failure reason, and its line
 * logged as `output` at ERROR, as the entrypoint wrote it; the same line
 * that follows on stderr is then not logged twice. */
static void error_frame(struct rn_output *o, const char *reason)
{
	keep(&o->reason, reason);
	free(o->said);
	o->said = fg_xasprintf("%s%s", FG_MSG_PREFIX, reason);
	log_line(o, "stderr", o->said, RN_LOG_ERROR);
}

/* The isolation event frame: kept (the first) and logged. */
static void isolation_frame(struct rn_output *o, const struct fg_frame *fr)
{
	struct fg_isolation iso;
	char scoped[128];

	if (o->isolation.known || fg_isolation_from_fields(&iso, fr->fields) < 0)
		return;
	o->isolation = iso;
	fg_isolation_scope_names(iso.scoped, scoped, sizeof(scoped));
	rn_log(o->log, iso.landlock ? RN_LOG_INFO : RN_LOG_WARN, "isolation",
	       RN_LS("mechanism", iso.landlock ? "landlock" : "none"), RN_LI("abi", iso.abi),
	       RN_LS("scoped", scoped), RN_LI("agent_uid", iso.agent_uid), RN_LB("root_dropped", iso.root_dropped),
	       RN_LS_OPT("reason", iso.landlock ? NULL : iso.reason));
}

/* The largest count or pid an event frame's field is read as (an integer a
 * double holds exactly); a negative or larger one reads as 0. */
#define COUNT_MAX 9007199254740992.0

void rn_output_event(struct rn_output *o, const struct fg_frame *fr)
{
	const char *e = fr->event;
	const cJSON *f = fr->fields;

	o->started = 1;
	if (!strcmp(e, "agent_running"))
		rn_log(o->log, RN_LOG_INFO, "agent_running", RN_LS("role", fg_json_str_or(f, "role", "")),
		       RN_LN("seconds", fg_json_num_in(f, "seconds", 0, COUNT_MAX, 0)),
		       RN_LI("lines", (long long)fg_json_num_in(f, "lines", 0, COUNT_MAX, 0)),
		       RN_LI("bytes", (long long)fg_json_num_in(f, "bytes", 0, COUNT_MAX, 0)));
	else if (!strcmp(e, "signal_ignored"))
		rn_log(o->log, RN_LOG_WARN, "signal_ignored", RN_LS("signal", fg_json_str_or(f, "signal", "")),
		       RN_LI("sender_pid", (long long)fg_json_num_in(f, "sender_pid", 0, COUNT_MAX, 0)),
		       RN_LS("reason", fg_json_str_or(f, "reason", "")));
	else if (!strcmp(e, "role_failed"))
		rn_log(o->log, RN_LOG_WARN, "role_failed", RN_LS("role", fg_json_str_or(f, "role", "")),
		       RN_LS("reason", fg_json_str_or(f, "reason", "")));
	else if (!strcmp(e, "error") && *fg_json_str_or(f, "reason", ""))
		error_frame(o, fg_json_str_or(f, "reason", ""));
	else if (!strcmp(e, "isolation"))
		isolation_frame(o, fr);
}

/* Logs line as an output event within the cap, at level. */
static void log_line(struct rn_output *o, const char *stream, const char *line,
		     enum rn_log_level level)
{
	size_t n = strlen(line);
	uint64_t room;

	/* The cap counts what the log gets: the whole event line, escapes
	 * and JSON included (an empty agent line is 9 bytes of text and some
	 * 100 of JSON). */
	room = o->max - o->logged;
	if (rn_log_room(o->log, level, "output", &room, RN_LS("stream", stream),
			RN_LS("line", line))) {
		o->dropped_bytes += n;
		o->dropped_lines++;
		return;
	}
	o->logged = o->max - room;
}

void rn_output_piece(struct rn_output *o, const char *stream, const char *line)
{
	log_line(o, stream, line, RN_LOG_INFO);
}

void rn_output_line(struct rn_output *o, const char *stream, const char *line)
{
	const char *reason, *said;
	enum rn_log_level level;

	/* Once the entrypoint has started (its first sealed frame), agents may
	 * write; nothing of a line is read from then on. */
	if (o->started) {
		if (o->said && !strcmp(line, o->said))
			FG_FREE_AND_NULL(o->said);
		else
			log_line(o, stream, line, RN_LOG_INFO);
		return;
	}
	level = rn_output_level(line, &reason);
	/* Agent lines start with "[role] " and the entrypoint's with its name:
	 * anything else comes from the engine's CLI, whose errors ("docker:
	 * Error response from daemon: ...", podman's "Error: ...") are raised. */
	if (line[0] != '[' && !fg_skip_prefix(line, FG_MSG_PREFIX, NULL) && o->ops && o->ops->cli) {
		const char *after;

		if ((fg_skip_prefix(line, o->ops->cli, &after) && fg_skip_prefix(after, ": ", NULL)) ||
		    fg_skip_prefix(line, "Error: ", NULL)) {
			level = RN_LOG_ERROR;
			reason = line;
		}
		if (engine_hint(o, line) && level < RN_LOG_WARN)
			level = RN_LOG_WARN;
	}
	if (reason)
		keep(&o->reason, reason);
	else if (level == RN_LOG_INFO && fg_skip_prefix(line, FG_MSG_PREFIX, &said))
		keep(&o->last_said, said);
	log_line(o, stream, line, level);
}

void rn_output_finish(struct rn_output *o)
{
	if (!o->dropped_lines)
		return;
	rn_log(o->log, RN_LOG_WARN, "output_dropped", RN_LI("lines", (long long)o->dropped_lines),
	       RN_LI("bytes", (long long)o->dropped_bytes), RN_LI("limit", (long long)o->max));
}

void rn_output_release(struct rn_output *o)
{
	FG_FREE_AND_NULL(o->reason);
	FG_FREE_AND_NULL(o->last_said);
	FG_FREE_AND_NULL(o->said);
	FG_FREE_AND_NULL(o->hint);
}
