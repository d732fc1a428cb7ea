/*
 * frame.c - frames on standard error (see forge/frame.h).
 */
#include "forge/json.h"
#include "forge/frame.h"
#include "forge/seal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/text.h"
#include "forge/util.h"
#include "internal.h"

#define TYPE_CYCLE "review_cycle"
#define TYPE_SUMMARY "review_summary"
#define TYPE_EVENT "event"

/* What a cycle keeps in its smallest frame. */
static const char *const KEEP_MIN[] = {
	"cycle", "max_cycles", "verdict", "feedback", "skill", "elapsed_seconds", "timestamp",
	"run_id", "synthetic", "stalled",
};

void fg_frame_init(struct fg_frame *f)
{
	memset(f, 0, sizeof(*f));
	fg_cycle_init(&f->cycle);
	fg_summary_init(&f->summary);
}

void fg_frame_release(struct fg_frame *f)
{
	free(f->run_id);
	free(f->step);
	fg_cycle_release(&f->cycle);
	fg_summary_release(&f->summary);
	free(f->event);
	cJSON_Delete(f->fields);
	fg_frame_init(f);
}

/* "@@forge-review " + the compact JSON of o (sealed with k for b when k is
 * set) + "\n"; NULL when over FG_FRAME_MAX. */
static char *frame_text(const cJSON *o, const struct fg_seal_key *k, const struct fg_seal_bind *b,
			size_t *len)
{
	char *printed = cJSON_PrintUnformatted(o), *json;
	size_t n;
	char *line;

	if (!printed)
		abort();
	json = fg_seal_take(k, FG_SEAL_FRAME, b, fg_xstrdup(printed), &n);
	cJSON_free(printed);
	n += FG_FRAME_PREFIX_LEN + 1;
	if (n > FG_FRAME_MAX) {
		free(json);
		return NULL;
	}
	line = fg_xasprintf("%s%s\n", FG_FRAME_PREFIX, json);
	free(json);
	*len = n;
	return line;
}

static cJSON *frame_head(const char *type, const char *run_id, const char *step, const char *file)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		abort();
	cJSON_AddNumberToObject(o, "v", FG_FRAME_VERSION);
	cJSON_AddStringToObject(o, "type", type);
	cJSON_AddStringToObject(o, "run_id", run_id ? run_id : "");
	cJSON_AddStringToObject(o, "step", step ? step : "");
	cJSON_AddStringToObject(o, "file", file);
	return o;
}

static int kept_in_min(const char *key)
{
	return FG_NAME_INDEX(KEEP_MIN, key, 0) >= 0;
}

/* Shrinks the cycle object one stage: 1 empties the feedback, 2 drops every
 * field but KEEP_MIN. */
static void shrink(cJSON *cyc, int stage)
{
	if (stage == 1) {
		cJSON_ReplaceItemInObjectCaseSensitive(cyc, "feedback", cJSON_CreateString(""));
		return;
	}
	for (cJSON *it = cyc->child, *next; it; it = next) {
		next = it->next;
		if (!it->string || !kept_in_min(it->string))
			cJSON_Delete(cJSON_DetachItemViaPointer(cyc, it));
	}
}

char *fg_frame_cycle_line(const struct fg_cycle *c, const char *step, const struct fg_seal_key *k,
			  size_t *len)
{
	char *file = fg_cycle_file_name(c->cycle);
	struct fg_seal_bind b = { .run_id = c->run_id, .step = step, .file = file, .cycle = c->cycle };
	cJSON *o = frame_head(TYPE_CYCLE, c->run_id, step, file);
	cJSON *cyc = fg_cycle_to_cjson(c);
	char *line;

	cJSON_AddItemToObject(o, "cycle", cyc);
	line = frame_text(o, k, &b, len);
	for (int stage = 1; !line && stage <= 2; stage++) {
		fg_json_add_true_if(o, "truncated", stage == 1);
		shrink(cyc, stage);
		line = frame_text(o, k, &b, len);
	}
	cJSON_Delete(o);
	free(file);
	return line;
}

struct cJSON *fg_frame_cycle_min(const struct fg_cycle *c)
{
	cJSON *cyc = fg_cycle_to_cjson(c);

	shrink(cyc, 1);
	shrink(cyc, 2);
	return cyc;
}

char *fg_frame_summary_line(const struct fg_summary *s, const struct fg_seal_key *k, size_t *len)
{
	struct fg_seal_bind b = { .run_id = s->run_id, .step = s->step, .file = FG_SUMMARY_FILE };
	cJSON *o = frame_head(TYPE_SUMMARY, s->run_id, s->step, FG_SUMMARY_FILE);
	char *line;

	cJSON_AddItemToObject(o, "summary", fg_summary_to_cjson(s));
	line = frame_text(o, k, &b, len);
	cJSON_Delete(o);
	return line;
}

char *fg_frame_event_line(const char *run_id, const char *step, const char *name, int seq,
			  const struct cJSON *fields, const struct fg_seal_key *k, size_t *len)
{
	struct fg_seal_bind b = { .run_id = run_id, .step = step, .file = FG_FRAME_EVENT_FILE,
				  .cycle = seq };
	cJSON *o = frame_head(TYPE_EVENT, run_id, step, FG_FRAME_EVENT_FILE);
	cJSON *ev = cJSON_AddObjectToObject(o, "event");
	cJSON *fs = fields ? cJSON_Duplicate(fields, 1) : cJSON_CreateObject();
	char *line;

	if (!ev || !fs)
		abort();
	cJSON_AddStringToObject(ev, "name", name);
	cJSON_AddNumberToObject(ev, "seq", seq);
	cJSON_AddItemToObject(ev, "fields", fs);
	line = frame_text(o, k, &b, len);
	cJSON_Delete(o);
	return line;
}

int fg_frame_is(const char *line, size_t len)
{
	return len >= FG_FRAME_PREFIX_LEN && !memcmp(line, FG_FRAME_PREFIX, FG_FRAME_PREFIX_LEN);
}

/* The object member key as compact JSON text, validated by parse(). */
static int parse_member(const cJSON *o, const char *key, struct fg_frame *f, char *err,
			size_t errlen)
{
	const cJSON *m = fg_json_get(o, key);
	char *text;
	int r;

	if (!cJSON_IsObject(m)) {
		fg__seterr(err, errlen, "field '%s' must be an object", key);
		return -EINVAL;
	}
	/* The very readers of the files validate what the frame carries: the
	 * stream accepts exactly what a cycle or summary file may hold. */
	text = cJSON_PrintUnformatted(m);
	if (!text)
		abort();
	if (f->type == FG_FRAME_CYCLE)
		r = fg_cycle_parse(&f->cycle, text, strlen(text), err, errlen);
	else
		r = fg_summary_parse(&f->summary, text, strlen(text), err, errlen);
	cJSON_free(text);
	return r;
}

/* An event's name: lower-case letters and '_', 1 to FG_FRAME_EVENT_NAME_MAX. */
static bool event_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > FG_FRAME_EVENT_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_'))
			return false;
	return true;
}

/* The event member of an event frame (fg_frame_event_line()). */
static int parse_event(const cJSON *o, const char *file, struct fg_frame *f, char *err, size_t errlen)
{
	const cJSON *ev = fg_json_get(o, "event");
	const cJSON *name = fg_json_get(ev, "name");
	const cJSON *seq = fg_json_get(ev, "seq");
	const cJSON *fs = fg_json_get(ev, "fields"), *it;

	if (strcmp(file, FG_FRAME_EVENT_FILE) || !cJSON_IsObject(ev) || !cJSON_IsString(name) ||
	    !event_name_ok(name->valuestring) || !cJSON_IsNumber(seq) || seq->valuedouble < 1 ||
	    seq->valuedouble > 2147483647.0 || seq->valuedouble != (double)(int)seq->valuedouble ||
	    !cJSON_IsObject(fs)) {
		fg__seterr(err, errlen, "field 'event' must be {name, seq, fields} of file 'event'");
		return -EINVAL;
	}
	cJSON_ArrayForEach(it, fs) {
		if (!cJSON_IsString(it) && !cJSON_IsNumber(it)) {
			fg__seterr(err, errlen, "event fields are strings and numbers");
			return -EINVAL;
		}
	}
	f->event = fg_xstrdup(name->valuestring);
	f->seq = seq->valueint;
	f->fields = cJSON_Duplicate(fs, 1);
	if (!f->fields)
		abort();
	return 0;
}

/* The header fields: v, type, run_id, step, file (the last checked by the caller). */
static int parse_head(const cJSON *o, struct fg_frame *f, const char **file, char *err,
		      size_t errlen)
{
	const cJSON *v = fg_json_get(o, "v");
	const char *type, *run_id, *step;
	int r;

	if (!cJSON_IsNumber(v) || v->valuedouble != FG_FRAME_VERSION) {
		fg__seterr(err, errlen, "field 'v' must be %d", FG_FRAME_VERSION);
		return -EINVAL;
	}
	r = fg_json_req_strs(o, FG_JSON_FIELDS({ "type", &type }, { "run_id", &run_id },
						{ "step", &step }, { "file", file }), err, errlen);
	if (r)
		return r;
	if (!strcmp(type, TYPE_CYCLE)) {
		f->type = FG_FRAME_CYCLE;
	} else if (!strcmp(type, TYPE_SUMMARY)) {
		f->type = FG_FRAME_SUMMARY;
	} else if (!strcmp(type, TYPE_EVENT)) {
		f->type = FG_FRAME_EVENT;
	} else {
		fg__seterr(err, errlen, "field 'type' must be " TYPE_CYCLE ", " TYPE_SUMMARY " or " TYPE_EVENT);
		return -EINVAL;
	}
	f->run_id = fg_xstrdup(run_id);
	f->step = fg_xstrdup(step);
	f->truncated = fg_json_true(o, "truncated");
	return 0;
}

/* The file named and the run id inside the payload agree with the header. */
static int check_payload(const struct fg_frame *f, const char *file, char *err, size_t errlen)
{
	const char *inner = f->type == FG_FRAME_CYCLE ? f->cycle.run_id : f->summary.run_id;
	char *want = f->type == FG_FRAME_CYCLE ? fg_cycle_file_name(f->cycle.cycle)
					      : fg_xstrdup(FG_SUMMARY_FILE);
	int ok = !strcmp(file, want);

	free(want);
	if (!ok) {
		fg__seterr(err, errlen, "field 'file' does not name the %s it carries",
			   f->type == FG_FRAME_CYCLE ? "cycle" : "summary");
		return -EINVAL;
	}
	if (inner && *inner && strcmp(inner, f->run_id)) {
		fg__seterr(err, errlen, "the run_id inside the %s differs from the frame's",
			   f->type == FG_FRAME_CYCLE ? "cycle" : "summary");
		return -EINVAL;
	}
	return 0;
}

int fg_frame_parse(struct fg_frame *f, const char *line, size_t len, char *err, size_t errlen)
{
	const char *file = NULL;
	cJSON *o;
	int r;

	fg_frame_release(f);
	if (!fg_frame_is(line, len)) {
		fg__seterr(err, errlen, "not a frame");
		return -EINVAL;
	}
	if (len > FG_FRAME_MAX) {
		fg__seterr(err, errlen, "longer than %d bytes", FG_FRAME_MAX);
		return -EINVAL;
	}
	o = fg_json_parse_exact(line + FG_FRAME_PREFIX_LEN, len - FG_FRAME_PREFIX_LEN);
	if (!cJSON_IsObject(o)) {
		fg__seterr(err, errlen, o ? "not a JSON object" : "not valid JSON");
		cJSON_Delete(o);
		return -EINVAL;
	}
	r = parse_head(o, f, &file, err, errlen);
	if (!r && f->type == FG_FRAME_EVENT) {
		r = parse_event(o, file, f, err, errlen);
	} else if (!r) {
		r = parse_member(o, f->type == FG_FRAME_CYCLE ? "cycle" : "summary", f, err, errlen);
		if (!r)
			r = check_payload(f, file, err, errlen);
	}
	cJSON_Delete(o);
	if (r)
		fg_frame_release(f);
	return r;
}
