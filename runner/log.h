/*
 * log.h - the runner's operator log: one line per event, flushed per line.
 *
 * Text (default, for tail -f):
 *   2026-01-15T10:30:00.123Z INFO review_cycle step=implement_task cycle=1/3 ...
 * values that contain spaces, quotes, '=', control characters or non-ASCII
 * bytes are double-quoted with C-style escapes (\n, \", \\, \x1b), so one
 * event is always one line and no escape sequence reaches a terminal.
 * JSON (--log-format json): one object per line with ts, level, event, then
 * the fields (strings intact, numbers as numbers).
 *
 * Levels: debug < info < warn < error; FORGE_LOG_LEVEL picks the threshold.
 * --log-file appends; rn_log_reopen() (on SIGHUP) reopens it (logrotate).
 * Single-threaded: call from the loop thread.
 */
#ifndef RN_LOG_H
#define RN_LOG_H

#include <stdint.h>
#include <stdio.h>

#include "forge/util.h"

enum rn_log_level { RN_LOG_DEBUG, RN_LOG_INFO, RN_LOG_WARN, RN_LOG_ERROR };
enum rn_log_format { RN_LOG_TEXT, RN_LOG_JSON };

/* A field of an event. Exactly one of str/num/integer is used, per type. */
enum rn_log_ftype { RN_LF_STR, RN_LF_INT, RN_LF_NUM, RN_LF_BOOL, RN_LF_JSON };
struct rn_log_field {
	const char *key;
	enum rn_log_ftype type;
	const char *str;     /* RN_LF_STR; NULL logs as null / empty, or not at all when
	                      * optional. RN_LF_JSON: a compact JSON value the caller
	                      * built (valid, small), written as is in JSON logs and as
	                      * a string in text */
	long long integer;   /* RN_LF_INT, RN_LF_BOOL */
	double num;          /* RN_LF_NUM */
	int optional;        /* 1: a NULL str leaves the field out of the line */
};

#define RN_LS(k, v) ((struct rn_log_field){ .key = (k), .type = RN_LF_STR, .str = (v) })
/* An optional string field: absent from the line when v is NULL. */
#define RN_LS_OPT(k, v) ((struct rn_log_field){ .key = (k), .type = RN_LF_STR, .str = (v), .optional = 1 })
/* A JSON value the caller built (see str above). */
#define RN_LJ(k, v) ((struct rn_log_field){ .key = (k), .type = RN_LF_JSON, .str = (v) })
#define RN_LI(k, v) ((struct rn_log_field){ .key = (k), .type = RN_LF_INT, .integer = (v) })
#define RN_LN(k, v) ((struct rn_log_field){ .key = (k), .type = RN_LF_NUM, .num = (v) })
#define RN_LB(k, v) ((struct rn_log_field){ .key = (k), .type = RN_LF_BOOL, .integer = !!(v) })

/* The run's context fields, added to every event that lacks them. */
#define RN_LOG_CTX_MAX 4

struct rn_log {
	enum rn_log_format format;
	enum rn_log_level level;
	FILE *fp;            /* where lines go (stderr, stdout, or the log file) */
	char *path;          /* owned; NULL when not a file */
	int owns_fp;
	/* rn_log_set_context(): keys static, values owned. */
	const char *ctx_key[RN_LOG_CTX_MAX];
	char *ctx_val[RN_LOG_CTX_MAX];
	size_t nctx;
};

/* Sets up logging to fp (borrowed, e.g. stderr). 0. */
int rn_log_init(struct rn_log *l, enum rn_log_format format, enum rn_log_level level, FILE *fp);
/* Switches to appending to path (created 0644). 0 or negative errno. */
int rn_log_open_file(struct rn_log *l, const char *path);
/* Reopens the log file (after logrotate moved it). 0 or negative errno; no-op without a file. */
int rn_log_reopen(struct rn_log *l);
void rn_log_close(struct rn_log *l);
/* From now on every event carries run_id, step, skill and task_key (values
 * copied; a NULL or "" value is left out), after its own fields, unless it
 * has a field of that name already: one shared --log-file stays
 * attributable line by line. Released by rn_log_close(). */
void rn_log_set_context(struct rn_log *l, const char *run_id, const char *step, const char *skill,
			const char *task_key);

/* Parses "debug|info|warn|error" / "text|json". 0 or -EINVAL. */
int rn_log_level_parse(const char *s, enum rn_log_level *out);
int rn_log_format_parse(const char *s, enum rn_log_format *out);

/* Writes one event line if level passes the threshold, then flushes: the
 * nfields fields (borrowed; NULL when 0) in order, optional ones whose
 * value is NULL left out. l may be NULL: nothing is logged. */
void rn_log_event(struct rn_log *l, enum rn_log_level level, const char *event,
		  const struct rn_log_field *fields, size_t nfields);

/* rn_log_event() within a budget: the whole line (escapes, JSON, newline
 * included) is written only when it fits in *room bytes, and *room is then
 * lowered by its length; -E2BIG (nothing written, *room untouched) when it
 * does not fit. 0 also when the level is below the threshold (nothing
 * written, nothing spent). A NULL room is no budget. */
int rn_log_event_room(struct rn_log *l, enum rn_log_level level, const char *event,
		      const struct rn_log_field *fields, size_t nfields, uint64_t *room);

/*
 * The usual way to log: rn_log(l, level, "event", RN_LS(...), RN_LI(...), ...)
 * is rn_log_event() over those fields, counted by the compiler, so a field
 * added or made conditional cannot be cut off by a stale count. At least
 * one field; an event without fields is rn_log_event(l, level, event, NULL, 0).
 * The field list is expanded twice, the second time inside sizeof, so its
 * expressions are evaluated once.
 */
#define rn_log(l, level, event, ...)                                                   \
	rn_log_event((l), (level), (event), (const struct rn_log_field[]){ __VA_ARGS__ }, \
		     ARRAY_SIZE(((const struct rn_log_field[]){ __VA_ARGS__ })))
/* rn_log() within a budget: rn_log_event_room() over the fields. */
#define rn_log_room(l, level, event, room, ...)                                        \
	rn_log_event_room((l), (level), (event), (const struct rn_log_field[]){ __VA_ARGS__ }, \
			  ARRAY_SIZE(((const struct rn_log_field[]){ __VA_ARGS__ })), (room))

#endif
