/*
 * log.c - the runner's operator log (see log.h).
 *
 * Every line is built in a bounded buffer and written with one fwrite()
 * followed by fflush(), so a line is never interleaved with another writer's
 * partial line and `tail -f` sees whole events. String values are capped at
 * RN_LOG_VALUE_MAX bytes: a hostile container cannot make one event huge.
 */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "forge/text.h"
#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/timeutil.h"
#include "forge/util.h"

#define RN_LOG_VALUE_MAX 8192
#define RN_LOG_LINE_MAX (256 * 1024)

static const char *const level_upper[] = { "DEBUG", "INFO", "WARN", "ERROR" };
static const char *const level_lower[] = { "debug", "info", "warn", "error" };

int rn_log_init(struct rn_log *l, enum rn_log_format format, enum rn_log_level level, FILE *fp)
{
	*l = (struct rn_log){ .format = format, .level = level, .fp = fp };
	return 0;
}

void rn_log_set_context(struct rn_log *l, const char *run_id, const char *step, const char *skill,
			const char *task_key)
{
	const char *keys[RN_LOG_CTX_MAX] = { "run_id", "step", "skill", "task_key" };
	const char *vals[RN_LOG_CTX_MAX] = { run_id, step, skill, task_key };

	for (size_t i = 0; i < l->nctx; i++)
		free(l->ctx_val[i]);
	l->nctx = 0;
	for (size_t i = 0; i < RN_LOG_CTX_MAX; i++) {
		if (!vals[i] || !*vals[i])
			continue;
		l->ctx_key[l->nctx] = keys[i];
		l->ctx_val[l->nctx++] = fg_xstrdup(vals[i]);
	}
}

static int open_append(const char *path, FILE **out)
{
	int fd;
	FILE *fp;

	do
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	fp = fdopen(fd, "a");
	if (!fp) {
		int e = -errno;

		close(fd);
		return e;
	}
	*out = fp;
	return 0;
}

int rn_log_open_file(struct rn_log *l, const char *path)
{
	FILE *fp = NULL;
	int r = open_append(path, &fp);

	if (r)
		return r;
	if (l->owns_fp)
		fclose(l->fp);
	free(l->path);
	l->fp = fp;
	l->owns_fp = 1;
	l->path = fg_xstrdup(path);
	return 0;
}

int rn_log_reopen(struct rn_log *l)
{
	FILE *fp = NULL;
	int r;

	if (!l->path)
		return 0;
	/* Open the new file before closing the old one: on failure we keep
	 * logging to the old (possibly renamed) file rather than nowhere. */
	r = open_append(l->path, &fp);
	if (r)
		return r;
	if (l->owns_fp)
		fclose(l->fp);
	l->fp = fp;
	l->owns_fp = 1;
	return 0;
}

void rn_log_close(struct rn_log *l)
{
	if (l->owns_fp && l->fp)
		fclose(l->fp);
	FG_FREE_AND_NULL(l->path);
	l->fp = NULL;
	l->owns_fp = 0;
	rn_log_set_context(l, NULL, NULL, NULL, NULL);
}

int rn_log_level_parse(const char *s, enum rn_log_level *out)
{
	/* "warning" is the other spelling of warn: the level words of msg.h. */
	static const char *const also[] = { [RN_LOG_WARN] = "warning" };

	if (FG_NAME_PARSE(level_lower, s, FG_NAME_ANYCASE, out) == 0)
		return 0;
	return FG_NAME_PARSE(also, s, FG_NAME_ANYCASE, out);
}

int rn_log_format_parse(const char *s, enum rn_log_format *out)
{
	static const char *const formats[] = { [RN_LOG_TEXT] = "text", [RN_LOG_JSON] = "json" };

	return FG_NAME_PARSE(formats, s, 0, out);
}

static int text_needs_quotes(const char *s, size_t n)
{
	if (n == 0)
		return 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= 0x20 || c >= 0x7f || c == '"' || c == '=' || c == '\\')
			return 1;
	}
	return 0;
}

static void text_escape(struct fg_buf *b, const char *s, size_t n)
{
	if (!text_needs_quotes(s, n)) {
		fg_buf_add(b, s, n);
		return;
	}
	fg_buf_addc(b, '"');
	fg_escape_controls(b, s, n, FG_ESC_QUOTES);
	fg_buf_addc(b, '"');
}

/* JSON string: control characters as \uXXXX, invalid UTF-8 as U+FFFD, so
 * every line is valid UTF-8 JSON whatever bytes a cycle file held. */
static void json_escape(struct fg_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	fg_buf_addc(b, '"');
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		size_t len = fg_utf8_seq(u + i, n - i);

		if (fg_escape_common(b, c)) {
			len = 1;
		} else if (c < 0x20 || c == 0x7f) {
			fg_buf_addf(b, "\\u%04x", c);
		} else if (len == 0) {
			fg_buf_adds(b, "\\ufffd");
			len = 1;
		} else if (len > 1 && fg_utf8_is_control(u + i, len)) {
			fg_buf_adds(b, "\\ufffd");
		} else {
			fg_buf_add(b, u + i, len);
		}
		i += len ? len : 1;
	}
	fg_buf_addc(b, '"');
}

/* Caps a value at RN_LOG_VALUE_MAX bytes, backing off to a UTF-8 boundary. */
static size_t capped_len(const char *s)
{
	size_t n = strlen(s);

	if (n <= RN_LOG_VALUE_MAX)
		return n;
	n = RN_LOG_VALUE_MAX;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

static void add_number(struct fg_buf *b, double v, int json)
{
	if (!isfinite(v)) {
		fg_buf_adds(b, json ? "null" : "nan");
		return;
	}
	/* %.15g round-trips every decimal a person wrote (45.2 stays 45.2). */
	fg_buf_addf(b, "%.15g", v);
}

static void add_value(struct fg_buf *b, const struct rn_log_field *f, int json)
{
	switch (f->type) {
	case RN_LF_STR:
		if (!f->str)
			fg_buf_adds(b, json ? "null" : "\"\"");
		else if (json)
			json_escape(b, f->str, capped_len(f->str));
		else
			text_escape(b, f->str, capped_len(f->str));
		break;
	case RN_LF_INT:
		fg_buf_addf(b, "%lld", f->integer);
		break;
	case RN_LF_NUM:
		add_number(b, f->num, json);
		break;
	case RN_LF_BOOL:
		fg_buf_adds(b, f->integer ? "true" : "false");
		break;
	case RN_LF_JSON:
		/* Never cut: a cut JSON value would break the line. */
		if (json)
			fg_buf_adds(b, f->str ? f->str : "null");
		else
			text_escape(b, f->str ? f->str : "", capped_len(f->str ? f->str : ""));
		break;
	}
}

/* Whether one of the nfields fields is named key. */
static int has_field(const struct rn_log_field *fields, size_t nfields, const char *key)
{
	for (size_t i = 0; i < nfields; i++)
		if (!strcmp(fields[i].key, key) && !(fields[i].optional && !fields[i].str))
			return 1;
	return 0;
}

static void add_field(struct fg_buf *b, const struct rn_log_field *f, int json)
{
	if (json) {
		fg_buf_addc(b, ',');
		json_escape(b, f->key, strlen(f->key));
		fg_buf_addc(b, ':');
	} else {
		fg_buf_addc(b, ' ');
		fg_buf_adds(b, f->key);
		fg_buf_addc(b, '=');
	}
	add_value(b, f, json);
}

static void build_line(const struct rn_log *l, struct fg_buf *b, enum rn_log_level level,
		       const char *event, const struct rn_log_field *fields, size_t nfields)
{
	char ts[FG_TIMESTAMP_LEN];
	int json = l->format == RN_LOG_JSON;

	fg_time_rfc3339_ms(ts);
	if (json) {
		fg_buf_addf(b, "{\"ts\":\"%s\",\"level\":\"%s\",\"event\":", ts, level_lower[level]);
		json_escape(b, event, strlen(event));
	} else {
		fg_buf_addf(b, "%s %s ", ts, level_upper[level]);
		text_escape(b, event, strlen(event));
	}
	for (size_t i = 0; i < nfields; i++) {
		if (fields[i].optional && !fields[i].str)
			continue;
		add_field(b, &fields[i], json);
	}
	for (size_t i = 0; i < l->nctx; i++)
		if (!has_field(fields, nfields, l->ctx_key[i]))
			add_field(b, &RN_LS(l->ctx_key[i], l->ctx_val[i]), json);
	if (json)
		fg_buf_addc(b, '}');
}

int rn_log_event_room(struct rn_log *l, enum rn_log_level level, const char *event,
		      const struct rn_log_field *fields, size_t nfields, uint64_t *room)
{
	struct fg_buf b;
	int r = 0;

	if (!l || level < l->level || !l->fp)
		return 0;
	/* The newline is reserved up front so a line that hit the cap still ends. */
	fg_buf_init(&b, RN_LOG_LINE_MAX);
	build_line(l, &b, level, event, fields, nfields);
	/* A line at the cap is cut where the first field that did not fit
	 * would have begun; it is still a line. */
	fg_buf_accept_cut(&b);
	b.max = RN_LOG_LINE_MAX + 1;
	fg_buf_addc(&b, '\n');
	if (room && b.len > *room) {
		r = -E2BIG;
	} else {
		fwrite(fg_buf_str(&b), 1, b.len, l->fp);
		fflush(l->fp);
		if (room)
			*room -= b.len;
	}
	fg_buf_release(&b);
	return r;
}

void rn_log_event(struct rn_log *l, enum rn_log_level level, const char *event,
		  const struct rn_log_field *fields, size_t nfields)
{
	rn_log_event_room(l, level, event, fields, nfields, NULL);
}
