/*
 * evidence.c - a cycle's checks, change set, verified lines and markers
 * (see evidence.h and docs/reference/cycle-files.md).
 */
#include "forge/evidence.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/json.h"
#include "forge/cycle.h"
#include "forge/reviewmd.h"
#include "forge/text.h"
#include "forge/util.h"
#include "forge/verdict.h"
#include "internal.h"

static const char *const STATUS[] = { "added", "modified", "deleted", "renamed" };

void fg_evidence_init(struct fg_evidence *e)
{
	memset(e, 0, sizeof(*e));
	fg_strvec_init(&e->verified);
	fg_strvec_init(&e->reviewer_changed);
}

void fg_evidence_release(struct fg_evidence *e)
{
	for (size_t i = 0; i < e->nchecks; i++) {
		free(e->checks[i].output_tail);
		free(e->checks[i].log);
	}
	free(e->checks);
	for (size_t i = 0; i < e->nchanges; i++) {
		free(e->changes[i].path);
		free(e->changes[i].old_path);
	}
	free(e->changes);
	free(e->diff);
	fg_strvec_release(&e->verified);
	fg_strvec_release(&e->reviewer_changed);
	fg_evidence_init(e);
}

FG_NAME_FUNCS(enum fg_change_status, STATUS, "modified", fg_change_status_name, fg_change_status_parse)

struct fg_check_result *fg_evidence_add_check(struct fg_evidence *e, const char *name)
{
	struct fg_check_result *r;

	if (e->nchecks >= FG_CHECKS_MAX)
		return NULL;
	FG_ALLOC_GROW(e->checks, e->nchecks + 1, e->checks_cap);
	r = &e->checks[e->nchecks++];
	memset(r, 0, sizeof(*r));
	fg__strlcpy(r->name, name, sizeof(r->name));
	r->exit_code = -1;
	r->output_tail = fg_xstrdup("");
	e->has_checks = true;
	return r;
}

void fg_evidence_add_change(struct fg_evidence *e, enum fg_change_status st, const char *path,
			    const char *old_path, long added, long deleted)
{
	struct fg_change *c;

	e->has_changes = true;
	if (e->nchanges >= FG_CHANGES_MAX) {
		e->changes_truncated = true;
		return;
	}
	FG_ALLOC_GROW(e->changes, e->nchanges + 1, e->changes_cap);
	c = &e->changes[e->nchanges++];
	c->path = fg_utf8_scrub(path, strlen(path));
	c->old_path = old_path ? fg_utf8_scrub(old_path, strlen(old_path)) : NULL;
	c->status = st;
	c->added = added;
	c->deleted = deleted;
}

const struct fg_check_result *fg_evidence_failed_check(const struct fg_evidence *e)
{
	for (size_t i = 0; i < e->nchecks; i++)
		if (e->checks[i].exit_code != 0)
			return &e->checks[i];
	return NULL;
}

/* ---- file names -------------------------------------------------------- */

char *fg_check_log_name(int n, const char *name)
{
	return fg_xasprintf("review_cycle_%d.check.%s.log", n, name);
}

char *fg_diff_name(int n)
{
	return fg_xasprintf("review_cycle_%d.diff", n);
}

int fg_evidence_file_name_parse(const char *name, int *n)
{
	const char *p, *check;
	long v = 0;

	if (!fg_skip_prefix(name, "review_cycle_", &p) || *p < '1' || *p > '9')
		return 0;
	for (; *p >= '0' && *p <= '9' && v <= FG_CYCLE_NUMBER_MAX; p++)
		v = v * 10 + (*p - '0');
	if (v > FG_CYCLE_NUMBER_MAX || strchr(p, '/'))
		return 0;
	/* ".check.NAME.log" with a NAME of at least one byte. */
	if (strcmp(p, ".diff") && !(fg_skip_prefix(p, ".check.", &check) && strlen(check) > 4 &&
				    !strcmp(check + strlen(check) - 4, ".log")))
		return 0;
	*n = (int)v;
	return 1;
}

/* ---- writing ----------------------------------------------------------- */

static void check_json(cJSON *c, const void *elem)
{
	const struct fg_check_result *r = elem;

	cJSON_AddStringToObject(c, "name", r->name);
	cJSON_AddNumberToObject(c, "exit_code", r->exit_code);
	cJSON_AddNumberToObject(c, "duration_seconds", fg__seconds_for_file(r->duration_seconds));
	cJSON_AddStringToObject(c, "output_tail", r->output_tail ? r->output_tail : "");
	fg_json_add_str_or_null(c, "log", r->log);
	fg_json_add_true_if(c, "timed_out", r->timed_out);
	fg_phase_add_to(c, &r->t);
}

static void change_json(cJSON *c, const void *elem)
{
	const struct fg_change *ch = elem;

	cJSON_AddStringToObject(c, "path", ch->path);
	cJSON_AddStringToObject(c, "status", fg_change_status_name(ch->status));
	fg_json_add_str_if(c, "old_path", ch->old_path);
	if (ch->added >= 0)
		cJSON_AddNumberToObject(c, "added", (double)ch->added);
	if (ch->deleted >= 0)
		cJSON_AddNumberToObject(c, "deleted", (double)ch->deleted);
}

static void add_checks(cJSON *o, const struct fg_evidence *e)
{
	fg_json_add_objects(o, "checks", e->checks, e->nchecks, sizeof(e->checks[0]), check_json);
}

static void add_changes(cJSON *o, const struct fg_evidence *e)
{
	fg_json_add_objects(o, "changes", e->changes, e->nchanges, sizeof(e->changes[0]), change_json);
	fg_json_add_true_if(o, "changes_truncated", e->changes_truncated);
	cJSON_AddStringToObject(o, "changes_since", e->since_review ? "review" : "step");
}

static void add_strings(cJSON *o, const char *key, const struct fg_strvec *v)
{
	cJSON *arr = v->n ? cJSON_AddArrayToObject(o, key) : NULL;

	for (size_t i = 0; arr && i < v->n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(v->v[i]));
}

void fg_evidence_add_verified(struct cJSON *o, const struct fg_strvec *v)
{
	add_strings(o, "verified", v);
}

void fg_evidence_add_to(struct cJSON *o, const struct fg_evidence *e)
{
	if (e->has_checks)
		add_checks(o, e);
	if (e->has_changes)
		add_changes(o, e);
	fg_json_add_str_if(o, "diff", e->diff);
	fg_json_add_true_if(o, "no_change", e->no_change);
	fg_json_add_true_if(o, "advice_only", e->advice_only);
	fg_evidence_add_verified(o, &e->verified);
	add_strings(o, "reviewer_changed", &e->reviewer_changed);
}

/* ---- reading ----------------------------------------------------------- */

static long long_of(const cJSON *o, const char *key, long lo, long hi, long dflt)
{
	double d = fg_json_num(o, key);

	if (!isfinite(d) || d < (double)lo || d > (double)hi || d != (double)(long)d)
		return dflt;
	return (long)d;
}

/* A plain file name beside the cycle file (readers open it there). */
static bool base_name(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

static void read_checks(struct fg_evidence *e, const cJSON *arr)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, arr) {
		const char *name = fg_json_str(it, "name"), *tail = fg_json_str(it, "output_tail");
		const cJSON *d = fg_json_get(it, "duration_seconds");
		struct fg_check_result *r;

		/* A slug, as review.md requires: it labels metrics. */
		if (!name || !fg_role_valid(name) || strlen(name) > FG_CHECK_NAME_MAX ||
		    !(r = fg_evidence_add_check(e, name)))
			continue;
		r->exit_code = (int)long_of(it, "exit_code", -1, 255, -1);
		r->timed_out = fg_json_true(it, "timed_out");
		r->duration_seconds = cJSON_IsNumber(d) && isfinite(d->valuedouble) && d->valuedouble >= 0
					      ? d->valuedouble : 0;
		if (tail) {
			free(r->output_tail);
			r->output_tail = fg_xstrdup(tail);
		}
		r->log = base_name(fg_json_str(it, "log")) ? fg_xstrdup(fg_json_str(it, "log")) : NULL;
		fg_phase_from(&r->t, it);
	}
	e->has_checks = true;
}

static void read_changes(struct fg_evidence *e, const cJSON *o, const cJSON *arr)
{
	const cJSON *it;
	const char *since = fg_json_str(o, "changes_since");

	cJSON_ArrayForEach(it, arr) {
		const char *path = fg_json_str(it, "path");
		enum fg_change_status st;

		if (!path || fg_change_status_parse(fg_json_str(it, "status"), &st))
			continue;
		fg_evidence_add_change(e, st, path, fg_json_str(it, "old_path"),
				       long_of(it, "added", 0, 1L << 30, -1),
				       long_of(it, "deleted", 0, 1L << 30, -1));
	}
	e->has_changes = true;
	e->changes_truncated |= fg_json_true(o, "changes_truncated");
	e->since_review = since && !strcmp(since, "review");
}

static void read_strings(const cJSON *arr, struct fg_strvec *out, size_t max)
{
	for (const cJSON *it = cJSON_IsArray(arr) ? arr->child : NULL; it && out->n < max; it = it->next)
		if (cJSON_IsString(it) && it->valuestring)
			fg_strvec_push(out, it->valuestring);
}

void fg_evidence_read_verified(struct fg_strvec *v, const struct cJSON *o)
{
	read_strings(fg_json_get(o, "verified"), v, FG_VERIFIED_MAX);
}

void fg_evidence_merge_verified(struct fg_strvec *dst, const struct fg_strvec *src)
{
	for (size_t i = 0; i < src->n && dst->n < FG_VERIFIED_MAX; i++)
		if (!fg_strvec_has(dst, src->v[i]))
			fg_strvec_push(dst, src->v[i]);
}

void fg_evidence_from(struct fg_evidence *e, const struct cJSON *o)
{
	const cJSON *v;

	fg_evidence_release(e);
	v = fg_json_get(o, "checks");
	if (cJSON_IsArray(v))
		read_checks(e, v);
	v = fg_json_get(o, "changes");
	if (cJSON_IsArray(v))
		read_changes(e, o, v);
	if (base_name(fg_json_str(o, "diff")))
		e->diff = fg_xstrdup(fg_json_str(o, "diff"));
	e->no_change = fg_json_true(o, "no_change");
	e->advice_only = fg_json_true(o, "advice_only");
	fg_evidence_read_verified(&e->verified, o);
	read_strings(fg_json_get(o, "reviewer_changed"), &e->reviewer_changed,
		     FG_CHANGES_MAX);
}
