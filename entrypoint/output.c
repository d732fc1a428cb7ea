/*
 * output.c - the streaming reader shared by the JSON output adapters, and
 * what every format has in common (see output.h).
 */
#include "output.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "forge/json.h"
#include "forge/alloc.h"
#include "forge/text.h"
#include "forge/util.h"

static const struct ep_output_ops *const FORMATS[] = {
	[EP_OUTPUT_TEXT] = &ep_output_text,
	[EP_OUTPUT_CLAUDE] = &ep_output_claude,
	[EP_OUTPUT_CODEX] = &ep_output_codex,
	[EP_OUTPUT_GEMINI] = &ep_output_gemini,
};

#define NFORMATS ARRAY_SIZE(FORMATS)

int ep_output_format_parse(const char *s, enum ep_output_format *out)
{
	int i = FG_NAME_INDEX_OPS(FORMATS, name, s, 0);

	if (i < 0)
		return -EINVAL;
	*out = (enum ep_output_format)i;
	return 0;
}

const char *ep_output_format_name(enum ep_output_format f)
{
	return (size_t)f < NFORMATS ? FORMATS[f]->name : "text";
}

void ep_output_init(struct ep_output *o, enum ep_output_format f)
{
	memset(o, 0, sizeof(*o));
	o->format = (size_t)f < NFORMATS ? f : EP_OUTPUT_TEXT;
	o->ops = FORMATS[o->format];
	ep_capture_init(&o->capture, EP_CAPTURE_HEAD_MAX, EP_CAPTURE_TAIL_MAX);
	fg_buf_init(&o->line, EP_OUTPUT_LINE_MAX);
	fg_buf_init(&o->doc, EP_OUTPUT_DOC_MAX);
	fg_buf_init(&o->last, EP_OUTPUT_TEXT_MAX);
	fg_usage_init(&o->usage);
	fg_strvec_init(&o->denied);
}

void ep_output_release(struct ep_output *o)
{
	ep_capture_release(&o->capture);
	fg_buf_release(&o->line);
	fg_buf_release(&o->doc);
	fg_buf_release(&o->last);
	FG_FREE_ALL(o->answer, o->reason, o->retry_note, o->session_id, o->error, o->text);
	fg_strvec_release(&o->denied);
	memset(o, 0, sizeof(*o));
}

void ep_output_deny(struct ep_output *o, const char *name)
{
	o->denied_calls++;
	fg_denied_add(&o->denied, name);
}

bool ep_output_all_denied(const struct ep_output *o)
{
	return o->denied_calls > 0 && o->denied_calls >= o->tool_calls;
}

void ep_output_set_answer(struct ep_output *o, const char *s)
{
	free(o->answer);
	o->answer = s ? fg_xstrdup(s) : NULL;
}

void ep_output_set_session(struct ep_output *o, const char *id)
{
	if (!id || !*id)
		return;
	free(o->session_id);
	o->session_id = fg_xstrdup(id);
}

int ep_output_on_type(struct ep_output *o, const cJSON *m, const struct ep_output_on *table)
{
	const char *type = fg_json_str(m, "type");

	for (const struct ep_output_on *on = table; type && on->type; on++) {
		if (!strcmp(on->type, type)) {
			on->fn(o, m);
			return 1;
		}
	}
	return 0;
}

void ep_output_fail(struct ep_output *o, const char *reason)
{
	o->outcome = EP_OUTCOME_FAILED;
	free(o->reason);
	o->reason = fg_xstrdup(reason && *reason ? reason : "the agent reported an error");
}

/* A complete message: parse it and hand it to the adapter, or count it as
 * noise when it is not JSON after all. */
static void emit(struct ep_output *o)
{
	cJSON *m;

	if (o->doc_cut) {
		o->skipped++;
	} else {
		m = fg_json_parse_exact(fg_buf_str(&o->doc), o->doc.len);
		if (cJSON_IsObject(m)) {
			o->messages++;
			o->ops->message(o, m);
		} else {
			o->noise_lines++;
		}
		cJSON_Delete(m);
	}
	fg_buf_reset(&o->doc);
	o->doc_cut = false;
	o->collecting = false;
}

static void collect(struct ep_output *o, char ch)
{
	if (o->collecting && !o->doc_cut && fg_buf_addc(&o->doc, ch) < 0)
		o->doc_cut = true;
}

/* Opening bracket at the current depth: a top-level object is collected
 * whole; a top-level array only frames its elements, collected one by one. */
static void open_bracket(struct ep_output *o, char ch)
{
	if (o->depth == 0) {
		o->in_array = ch == '[';
		o->collecting = !o->in_array;
	} else if (o->depth == 1 && o->in_array) {
		o->collecting = true;
	}
	collect(o, ch);
	o->depth++;
}

static void close_bracket(struct ep_output *o, char ch)
{
	collect(o, ch);
	o->depth--;
	if (o->depth == 1 && o->in_array && o->collecting)
		emit(o);
	else if (o->depth == 0 && !o->in_array)
		emit(o);
	if (o->depth == 0)
		o->in_doc = false;
}

/* Feeds one line of an open document, character by character. JSON
 * strings never span lines, so string state starts afresh on each. */
static void doc_line(struct ep_output *o, const char *s, size_t n)
{
	o->in_string = false;
	o->escape = false;
	for (size_t i = 0; i < n && o->in_doc; i++) {
		char ch = s[i];

		if (o->in_string) {
			collect(o, ch);
			if (o->escape)
				o->escape = false;
			else if (ch == '\\')
				o->escape = true;
			else if (ch == '"')
				o->in_string = false;
			continue;
		}
		if (ch == '{' || ch == '[')
			open_bracket(o, ch);
		else if (ch == '}' || ch == ']')
			close_bracket(o, ch);
		else {
			if (ch == '"')
				o->in_string = true;
			collect(o, ch);
		}
	}
	collect(o, '\n');
}

static size_t skip_blank(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

/* Does s[i..n) open a JSON object or array (not a "[INFO]" log prefix)? */
static bool json_start(const char *s, size_t n, size_t i)
{
	size_t j;

	if (i >= n || (s[i] != '{' && s[i] != '['))
		return false;
	j = skip_blank(s, n, i + 1);
	if (j == n)
		return true;
	if (s[i] == '{')
		return s[j] == '"' || s[j] == '}';
	return s[j] == '{' || s[j] == '[' || s[j] == ']' || s[j] == '"';
}

/* A column-0 line that is a whole JSON object or array by itself. */
static bool whole_json_line(const char *s, size_t n)
{
	cJSON *m;
	bool whole;

	if (!n || (s[0] != '{' && s[0] != '['))
		return false;
	m = fg_json_parse_exact(s, n);
	whole = m && (cJSON_IsObject(m) || cJSON_IsArray(m));
	cJSON_Delete(m);
	return whole;
}

static void reset_doc(struct ep_output *o)
{
	o->in_doc = o->in_array = o->collecting = o->doc_cut = false;
	o->depth = 0;
	fg_buf_reset(&o->doc);
}

static void json_line(struct ep_output *o, const char *s, size_t n)
{
	size_t i;

	while (n && (s[n - 1] == '\r' || s[n - 1] == '\n'))
		n--;
	if (o->in_doc && whole_json_line(s, n)) {
		o->skipped++;
		reset_doc(o);
	}
	if (o->in_doc) {
		doc_line(o, s, n);
		return;
	}
	i = skip_blank(s, n, 0);
	if (json_start(s, n, i)) {
		o->in_doc = true;
		doc_line(o, s + i, n - i);
	} else if (i < n) {
		o->noise_lines++;
	}
}

static void end_line(struct ep_output *o)
{
	if (o->line_cut)
		o->skipped++;
	else
		json_line(o, fg_buf_str(&o->line), o->line.len);
	fg_buf_reset(&o->line);
	o->line_cut = false;
}

void ep_output_feed(struct ep_output *o, const void *p, size_t n)
{
	const char *s = p;

	o->bytes += n;
	if (!o->ops->message) {
		ep_capture_add(&o->capture, p, n);
		return;
	}
	while (n) {
		const char *nl = memchr(s, '\n', n);
		size_t k = nl ? (size_t)(nl - s) : n;

		if (!o->line_cut && fg_buf_add(&o->line, s, k) < 0)
			o->line_cut = true;
		if (!nl)
			break;
		end_line(o);
		s += k + 1;
		n -= k + 1;
	}
}

/* Why output that named no outcome is a failure. */
static char *no_outcome(const struct ep_output *o, bool cut)
{
	if (o->bytes == 0)
		return fg_xstrdup("the agent printed nothing");
	if (cut)
		return fg_xasprintf("the %s output ended inside a JSON document (cut off)", o->ops->name);
	if (!o->messages)
		return fg_xasprintf("no %s JSON in the output (%llu line(s) of other text)%s", o->ops->name,
				    (unsigned long long)o->noise_lines,
				    o->skipped ? ", lines over the size limit skipped" : "");
	if (o->retry_note)
		return fg_xasprintf("the %s output names no outcome; last error: %s", o->ops->name,
				    o->retry_note);
	return fg_xasprintf("the %s output names no outcome (no final result: cut off?)", o->ops->name);
}

/* s with every byte that is not valid UTF-8 replaced by U+FFFD, in place
 * of *s (owned): what the adapters hand on ends up in JSON files and
 * lines, which must be valid UTF-8 whatever the agent printed. */
static void make_utf8(char **s)
{
	size_t n = *s ? strlen(*s) : 0, i = 0, k = 1;
	struct fg_buf b;

	while (i < n && k) {
		k = fg_utf8_seq(*s + i, n - i);
		i += k;
	}
	if (i == n)
		return;
	fg_buf_init(&b, 3 * n + 1);
	fg_buf_add(&b, *s, i);
	while (i < n) {
		k = fg_utf8_seq(*s + i, n - i);
		if (k) {
			fg_buf_add(&b, *s + i, k);
			i += k;
		} else {
			fg_buf_adds(&b, "\xef\xbf\xbd");
			i++;
		}
	}
	free(*s);
	*s = fg_buf_detach(&b, NULL);
}

void ep_output_finish(struct ep_output *o)
{
	bool cut;

	if (o->ops->message) {
		if (o->line.len || o->line_cut)
			end_line(o);
	}
	cut = o->in_doc;
	if (o->ops->finish)
		o->ops->finish(o);
	o->ok = o->outcome == EP_OUTCOME_OK;
	if (o->outcome == EP_OUTCOME_FAILED)
		o->error = fg_xstrdup(o->reason ? o->reason : "the agent reported an error");
	else if (o->outcome == EP_OUTCOME_NONE)
		o->error = no_outcome(o, cut);
	if (o->answer)
		o->text = fg_xstrdup(o->answer);
	else
		o->text = fg_xstrdup(fg_buf_str(&o->last));
	make_utf8(&o->text);
	make_utf8(&o->error);
	make_utf8(&o->session_id);
}

const char *ep_output_exit_meaning(enum ep_output_format f, int status)
{
	const struct ep_output_ops *ops = FORMATS[(size_t)f < NFORMATS ? f : EP_OUTPUT_TEXT];

	return ops->exit_meaning ? ops->exit_meaning(status) : NULL;
}

cJSON *ep_output_to_cjson(const struct ep_output *o)
{
	cJSON *j = cJSON_CreateObject();

	if (!j)
		abort();
	cJSON_AddBoolToObject(j, "ok", o->ok);
	fg_json_add_str_or_null(j, "error", o->error);
	cJSON_AddStringToObject(j, "text", o->text ? o->text : "");
	cJSON_AddItemToObject(j, "usage", fg_usage_to_cjson(&o->usage));
	fg_json_add_str_or_null(j, "session_id", o->session_id);
	cJSON_AddItemToObject(j, "denied_tools", fg_denied_array(&o->denied));
	return j;
}

void ep_output_say_refused_cost(const struct ep_output *o, const char *who)
{
	if (o->usage.refused & FG_USAGE_COST)
		ep_log(FG_MSG_WARN, "%s: reported cost %g USD refused (above %g USD for one agent run, "
		       "negative or not finite): taken as not reported", who, o->usage.refused_cost_usd,
		       FG_USAGE_COST_MAX);
}
