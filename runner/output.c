/*
 * output.c - levels, failure reason, engine hints and the cap of the
 * sandbox's output lines (see output.h).
 */
#include "output.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/msg.h"
#include "forge/util.h"

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

/* The engine's hint for one of its own lines, logged once per run. */
static void engine_hint(struct rn_output *o, const char *line)
{
	char *hint;
	int kind = RN_HINT_OTHER;

	if (o->hint || !o->ops || !o->ops->hint || !o->ep)
		return;
	hint = o->ops->hint(o->ep, line, &kind);
	o->engine_down |= kind == RN_HINT_DOWN;
	o->engine_runtime |= kind == RN_HINT_RUNTIME;
	if (!hint)
		return;
	o->hint = hint;
	rn_log(o->log, RN_LOG_WARN, "engine_hint", RN_LS("engine", o->ops->name), RN_LS("hint", hint));
}

/*
 * When line is head, a name of 1 to size - 1 bytes and sep: the name copied
 * into name (size bytes) and what follows sep returned; NULL otherwise.
 */
static const char *after_name(const char *line, const char *head, const char *sep, char *name,
			      size_t size)
{
	size_t hl = strlen(head);
	const char *s = line + hl, *p;

	if (strncmp(line, head, hl))
		return NULL;
	p = strstr(s, sep);
	if (!p || p == s || (size_t)(p - s) >= size)
		return NULL;
	memcpy(name, s, (size_t)(p - s));
	name[p - s] = '\0';
	return p + strlen(sep);
}

/*
 * The entrypoint's heartbeat, "forge-entrypoint: agent_running: ROLE for N
 * s, L lines, B bytes of output" (agent.h), logged as an agent_running
 * event. 1 when line was one, 0 otherwise (then it is an ordinary line).
 */
static int heartbeat(struct rn_output *o, const char *line)
{
	char *end, name[65];
	const char *p = after_name(line, FG_MSG_PREFIX "agent_running: ", " for ", name, sizeof(name));
	double secs;
	long long lines, bytes;

	if (!p)
		return 0;
	secs = strtod(p, &end);
	if (end == p || strncmp(end, " s, ", 4))
		return 0;
	lines = strtoll(end + 4, &end, 10);
	if (strncmp(end, " lines, ", 8))
		return 0;
	bytes = strtoll(end + 8, &end, 10);
	if (strcmp(end, " bytes of output"))
		return 0;
	rn_log(o->log, RN_LOG_INFO, "agent_running", RN_LS("role", name),
	       RN_LN("seconds", secs), RN_LI("lines", lines), RN_LI("bytes", bytes));
	return 1;
}

/*
 * "forge-entrypoint: warning: signal_ignored: SIGTERM from pid N, WHY; ..."
 * (entrypoint/pid1.h: a stop signal one of the agents' processes sent to
 * the entrypoint or a panel helper), logged as a signal_ignored event. 1
 * when line was one, 0 otherwise.
 */
static int signal_ignored(struct rn_output *o, const char *line)
{
	char name[16], *end;
	const char *p = after_name(line, FG_MSG_PREFIX "warning: signal_ignored: SIG", " from pid ", name,
				   sizeof(name));
	long long pid;

	if (!p)
		return 0;
	pid = strtoll(p, &end, 10);
	if (end == p || strncmp(end, ", ", 2))
		return 0;
	rn_log(o->log, RN_LOG_WARN, "signal_ignored", RN_LS("signal", name), RN_LI("sender_pid", pid),
	       RN_LS("reason", end + 2));
	return 1;
}

/*
 * "forge-entrypoint: warning: role_failed: ROLE: WHY" (entrypoint/panel.h:
 * a panel role whose helper process died, stopped or passed its
 * deadline), logged as a role_failed event. 1 when line was one.
 */
static int role_failed(struct rn_output *o, const char *line)
{
	char name[65];
	const char *p = after_name(line, FG_MSG_PREFIX "warning: role_failed: ", ": ", name, sizeof(name));

	if (!p)
		return 0;
	rn_log(o->log, RN_LOG_WARN, "role_failed", RN_LS("role", name), RN_LS("reason", p));
	return 1;
}

/* "forge-entrypoint: isolation: {json}" (entrypoint/loop.c), logged as the
 * isolation event, kept for the result. 1 when line was one. */
static int isolation(struct rn_output *o, const char *line)
{
	static const char head[] = FG_MSG_PREFIX "isolation: {";
	struct fg_isolation iso;
	char scoped[128];
	cJSON *j;
	int rc;

	if (strncmp(line, head, sizeof(head) - 2))
		return 0;
	j = cJSON_Parse(line + sizeof(head) - 2);
	rc = j ? fg_isolation_from_cjson(&iso, j) : -1;
	cJSON_Delete(j);
	if (rc < 0 || o->isolation.known)
		return 0;
	o->isolation = iso;
	fg_isolation_scope_names(iso.scoped, scoped, sizeof(scoped));
	rn_log(o->log, iso.landlock ? RN_LOG_INFO : RN_LOG_WARN, "isolation",
	       RN_LS("mechanism", iso.landlock ? "landlock" : "none"), RN_LI("abi", iso.abi),
	       RN_LS("scoped", scoped), RN_LI("agent_uid", iso.agent_uid), RN_LB("root_dropped", iso.root_dropped),
	       RN_LS_OPT("reason", iso.landlock ? NULL : iso.reason));
	return 1;
}

void rn_output_line(struct rn_output *o, const char *stream, const char *line)
{
	const char *reason;
	enum rn_log_level level = rn_output_level(line, &reason);
	size_t n = strlen(line);
	uint64_t room;

	if (heartbeat(o, line) || signal_ignored(o, line) || role_failed(o, line) || isolation(o, line))
		return;
	/* Agent lines start with "[role] " and the entrypoint's with its name:
	 * anything else comes from the engine's CLI, whose errors ("docker:
	 * Error response from daemon: ...", podman's "Error: ...") are raised. */
	if (line[0] != '[' && strncmp(line, FG_MSG_PREFIX, FG_MSG_PREFIX_LEN) && o->ops && o->ops->cli) {
		size_t k = strlen(o->ops->cli);

		if ((!strncmp(line, o->ops->cli, k) && !strncmp(line + k, ": ", 2)) ||
		    !strncmp(line, "Error: ", 7)) {
			level = RN_LOG_ERROR;
			reason = line;
		}
		engine_hint(o, line);
	}
	if (reason)
		keep(&o->reason, reason);
	else if (level == RN_LOG_INFO && !strncmp(line, FG_MSG_PREFIX, FG_MSG_PREFIX_LEN))
		keep(&o->last_said, line + FG_MSG_PREFIX_LEN);
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
	FG_FREE_AND_NULL(o->hint);
}
