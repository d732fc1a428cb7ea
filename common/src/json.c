/*
 * json.c - bounded parsing, the member getters and the printer (see json.h).
 */
#include "forge/json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/text.h"
#include "internal.h"

/* Counts structural tokens outside strings, stopping past max. */
static size_t count_tokens(const char *data, size_t len, size_t max)
{
	size_t n = 0;
	int in_str = 0;

	for (size_t i = 0; i < len && n <= max; i++) {
		char c = data[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == '{' || c == '[' || c == ',' || c == ':') {
			n++;
		}
	}
	return n;
}

/* Why data cannot be handed to cJSON, or NULL. reason must hold 64 bytes. */
static const char *precheck(const char *data, size_t len, size_t max_tokens, char *reason)
{
	size_t bad = 0;

	if (!len)
		return "not valid JSON";
	if (memchr(data, '\0', len))
		return "contains a NUL byte";
	if (fg_utf8_check(data, len, &bad)) {
		snprintf(reason, 64, "not valid UTF-8 at byte %zu", bad);
		return reason;
	}
	if (count_tokens(data, len, max_tokens) > max_tokens) {
		snprintf(reason, 64, "more than %zu JSON tokens", max_tokens);
		return reason;
	}
	return NULL;
}

cJSON *fg_json_parse_bounded(const char *data, size_t len, size_t max_tokens, char *err,
			     size_t errlen)
{
	char reason[64];
	const char *why = precheck(data, len, max_tokens, reason);
	const char *end = NULL;
	cJSON *o;

	if (why) {
		fg__seterr(err, errlen, "%s", why);
		return NULL;
	}
	/* cJSON's own trailing-garbage check wants the NUL inside the length,
	 * so the end is checked here. */
	o = cJSON_ParseWithLengthOpts(data, len, &end, 0);
	for (; o && end && end < data + len; end++) {
		if (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\r') {
			cJSON_Delete(o);
			o = NULL;
		}
	}
	if (!o)
		fg__seterr(err, errlen, "not valid JSON");
	return o;
}

cJSON *fg_json_parse_exact(const char *data, size_t len)
{
	return fg_json_parse_bounded(data, len, FG_JSON_MAX_TOKENS, NULL, 0);
}

char *fg_json_print(const cJSON *o)
{
	char *text = cJSON_Print(o);
	size_t n;
	char *out;

	/* cJSON returns NULL only when its allocation failed. */
	if (!text)
		abort();
	/* cJSON copies string bytes as they are: a string that did not come
	 * from a validated file (an agent's last output line in an error
	 * message, a path) may hold bytes that are not UTF-8. The structure
	 * is ASCII, so such bytes can only be inside strings, and each becomes
	 * U+FFFD: what we print is always valid UTF-8, so always valid JSON. */
	n = strlen(text);
	out = fg_utf8_check(text, n, NULL) ? fg_utf8_scrub(text, n) : fg_xstrdup(text);
	cJSON_free(text);
	text = fg_xasprintf("%s\n", out);
	free(out);
	return text;
}

int fg_json_req_str(const cJSON *o, const char *key, const char **out, char *err, size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v) {
		fg__seterr(err, errlen, "missing field '%s'", key);
		return -EINVAL;
	}
	if (!cJSON_IsString(v) || !v->valuestring) {
		fg__seterr(err, errlen, "field '%s' must be a string", key);
		return -EINVAL;
	}
	*out = v->valuestring;
	return 0;
}

const cJSON *fg_json_get(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

const cJSON *fg_json_arr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsArray(v) ? v : NULL;
}

bool fg_json_true(const cJSON *o, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

const char *fg_json_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *fg_json_str_or(const cJSON *o, const char *key, const char *dflt)
{
	const char *v = fg_json_str(o, key);

	return v ? v : dflt;
}

double fg_json_num_in(const cJSON *o, const char *key, double lo, double hi, double dflt)
{
	double d = fg_json_num(o, key);

	return isfinite(d) && d >= lo && d <= hi ? d : dflt;
}

const cJSON *fg_json_obj(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsObject(v) ? v : NULL;
}

double fg_json_num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

int fg_json_req_num(const cJSON *o, const char *key, double *out, char *err, size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v) {
		fg__seterr(err, errlen, "missing field '%s'", key);
		return -EINVAL;
	}
	*out = cJSON_IsNumber(v) ? v->valuedouble : NAN;
	return 0;
}

int fg_json_opt_str(const cJSON *o, const char *key, const char **out, char *err, size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (v && !cJSON_IsNull(v) && !cJSON_IsString(v)) {
		fg__seterr(err, errlen, "field '%s' must be a string or null", key);
		return -EINVAL;
	}
	*out = v && cJSON_IsString(v) ? v->valuestring : NULL;
	return 0;
}

int fg_json_req_strs(const cJSON *o, const struct fg_json_field *f, size_t n, char *err,
		     size_t errlen)
{
	int r = 0;

	for (size_t i = 0; !r && i < n; i++)
		r = fg_json_req_str(o, f[i].key, f[i].out, err, errlen);
	return r;
}

cJSON *fg_json_add_object(cJSON *o, const char *key)
{
	cJSON *v = cJSON_AddObjectToObject(o, key);

	if (!v)
		abort();
	return v;
}

void fg_json_add_str_or_null(cJSON *o, const char *key, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

void fg_json_add_str_if(cJSON *o, const char *key, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, key, v);
}

void fg_json_add_true_if(cJSON *o, const char *key, bool b)
{
	if (b)
		cJSON_AddTrueToObject(o, key);
}

cJSON *fg_json_push_object(cJSON *arr)
{
	cJSON *v = cJSON_CreateObject();

	if (!v || !cJSON_AddItemToArray(arr, v))
		abort();
	return v;
}

cJSON *fg_json_add_objects(cJSON *o, const char *key, const void *base, size_t n, size_t size,
			   void (*fill)(cJSON *item, const void *elem))
{
	cJSON *arr = cJSON_AddArrayToObject(o, key);

	if (!arr)
		abort();
	for (size_t i = 0; i < n; i++)
		fill(fg_json_push_object(arr), (const char *)base + i * size);
	return arr;
}
