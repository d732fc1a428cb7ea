/*
 * cycle_sample.h - the sample records the unit tests build on: a valid
 * review_cycle_N.json text (cycle_base_json), that text with one field
 * changed or removed (cycle_patched), a filled struct fg_cycle (cycle_fill,
 * cycle_make) or struct fg_summary (summary_fill), a written file read
 * back as an object whose members come in one order (read_keys_in_order),
 * a text parsed (cycle_parse_ok) and a cycle as its compact JSON text
 * (cycle_text), for comparing two cycles whole.
 * Static inline: each test file uses what it needs.
 */
#ifndef CYCLE_SAMPLE_H
#define CYCLE_SAMPLE_H

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>

#include "fgtest.h"
#include "forge/cycle.h"
#include "forge/summary.h"

static const char cycle_base_json[] =
	"{\"cycle\": 2, \"max_cycles\": 3, \"verdict\": \"rejected\", \"feedback\": \"fix it\","
	" \"skill\": \"implement-task\", \"elapsed_seconds\": 1.5,"
	" \"timestamp\": \"2026-01-15T10:30:00Z\"}";

/* cycle_base_json with key set to the JSON text value, or removed when
 * value is NULL. Owned. */
static inline char *cycle_patched(const char *key, const char *value)
{
	cJSON *o = cJSON_Parse(cycle_base_json);
	char *text, *out;

	cr_assert_not_null(o);
	if (value) {
		cJSON *v = cJSON_Parse(value);

		cr_assert_not_null(v, "bad test value %s", value);
		if (cJSON_GetObjectItemCaseSensitive(o, key))
			cJSON_ReplaceItemInObjectCaseSensitive(o, key, v);
		else
			cJSON_AddItemToObject(o, key, v);
	} else {
		cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	}
	text = cJSON_PrintUnformatted(o);
	out = fgt_fmt("%s", text);
	cJSON_free(text);
	cJSON_Delete(o);
	return out;
}

/* Initialises c as cycle n of max with verdict v and every required field. */
static inline void cycle_fill(struct fg_cycle *c, int n, int max, enum fg_verdict_kind v)
{
	fg_cycle_init(c);
	c->cycle = n;
	c->max_cycles = max;
	c->j.verdict = v;
	c->j.feedback = fgt_fmt("%s", v == FG_VERDICT_APPROVED ? "" : "needs work");
	c->skill = fgt_fmt("implement-task");
	c->elapsed_seconds = 2.25;
	snprintf(c->timestamp, sizeof(c->timestamp), "2026-01-15T10:30:0%dZ", n % 10);
}

/* cycle_fill() of cycle n of 3 with verdict v and the feedback given. */
static inline void cycle_make(struct fg_cycle *c, int n, enum fg_verdict_kind v, const char *feedback)
{
	cycle_fill(c, n, 3, v);
	free(c->j.feedback);
	c->j.feedback = fgt_fmt("%s", feedback);
}

/* Initialises s as a summary in state after cycles of max, of step and
 * skill; the other members are left as fg_summary_init() sets them. */
static inline void summary_fill(struct fg_summary *s, enum fg_review_state state, int cycles, int max,
				const char *step, const char *skill)
{
	fg_summary_init(s);
	s->state = state;
	s->cycles = cycles;
	s->max_cycles = max;
	s->step = fgt_fmt("%s", step);
	s->skill = fgt_fmt("%s", skill);
}

/* The JSON object in the file at path, which ends with a newline and has
 * exactly the members keys[0..n), in that order. Owned (cJSON_Delete). */
static inline cJSON *read_keys_in_order(const char *path, const char *const *keys, size_t n)
{
	char *text = fgt_read(path, NULL);
	cJSON *o, *it;
	size_t i = 0;

	cr_assert_not_null(text, "cannot read %s", path);
	cr_assert_eq(text[strlen(text) - 1], '\n', "ends with a newline");
	o = cJSON_Parse(text);
	cr_assert_not_null(o, "%s", text);
	cJSON_ArrayForEach(it, o) {
		cr_assert_lt(i, n, "unexpected field '%s'", it->string);
		cr_assert_str_eq(it->string, keys[i]);
		i++;
	}
	cr_assert_eq(i, n);
	free(text);
	return o;
}

/* Parses text into back (initialised here), failing the test on an error. */
static inline void cycle_parse_ok(struct fg_cycle *back, const char *text)
{
	char err[256] = "";

	fg_cycle_init(back);
	cr_assert_eq(fg_cycle_parse(back, text, strlen(text), err, sizeof(err)), 0, "%s: %s", text, err);
}

/* c as the compact JSON text fg_cycle_to_cjson() makes of it. Owned
 * (cJSON_free). */
static inline char *cycle_text(const struct fg_cycle *c)
{
	cJSON *o = fg_cycle_to_cjson(c);
	char *s = cJSON_PrintUnformatted(o);

	cJSON_Delete(o);
	return s;
}

#endif
