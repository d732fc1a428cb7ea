/*
 * summary.c - review_summary.json (see summary.h and
 * docs/reference/cycle-files.md).
 */
#include "forge/json.h"
#include "forge/text.h"
#include "forge/summary.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/cycle.h"
#include "forge/names.h"
#include "forge/seal.h"
#include "forge/fsutil.h"
#include "forge/util.h"
#include "internal.h"

/* Indexed by enum fg_review_state; the spec's spelling. */
static const char *const state_names[] = {
	[FG_STATE_APPROVED] = "approved",
	[FG_STATE_EXHAUSTED] = "exhausted",
	[FG_STATE_STALLED] = "stalled",
	[FG_STATE_BLOCKED] = "blocked",
	[FG_STATE_OVER_BUDGET] = "over_budget",
	[FG_STATE_FAILED] = "failed",
	[FG_STATE_DISABLED] = "disabled",
	[FG_STATE_NO_REVIEW] = "no_review",
	[FG_STATE_AUDIT_REJECTED] = "audit_rejected",
};

_Static_assert(ARRAY_SIZE(state_names) == FG_STATE_COUNT, "a review state without a name");

FG_NAME_FUNCS(enum fg_review_state, state_names, "failed", fg_review_state_name,
	      fg_review_state_parse)

static const char *const cause_names[] = {
	[FG_CAUSE_NONE] = "none",
	[FG_CAUSE_TIMEOUT] = "timeout",
	[FG_CAUSE_INTERRUPTED] = "interrupted",
	[FG_CAUSE_WORKER_FAILED] = "worker_failed",
	[FG_CAUSE_REVIEWER_FAILED] = "reviewer_failed",
	[FG_CAUSE_CONFIG_ERROR] = "config_error",
	[FG_CAUSE_ENGINE_ERROR] = "engine_error",
};

_Static_assert(ARRAY_SIZE(cause_names) == FG_CAUSE_COUNT, "a failure cause without a name");

FG_NAME_FUNCS(enum fg_failure_cause, cause_names, "none", fg_failure_cause_name,
	      fg_failure_cause_parse)

void fg_summary_set_failure(struct fg_summary *s, enum fg_failure_cause cause, const char *reason)
{
	char *c = fg_utf8_cut(reason, FG_FAILURE_REASON_MAX);

	free(s->reason);
	s->cause = cause;
	s->reason = c ? fg_utf8_scrub(c, strlen(c)) : NULL;
	free(c);
}

struct cJSON *fg_failure_to_cjson(enum fg_failure_cause cause, const char *reason)
{
	cJSON *o;

	if (cause == FG_CAUSE_NONE)
		return NULL;
	o = cJSON_CreateObject();
	if (!o)
		abort();
	cJSON_AddStringToObject(o, "cause", fg_failure_cause_name(cause));
	fg_json_add_str_or_null(o, "reason", reason);
	return o;
}

void fg_summary_init(struct fg_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->state = FG_STATE_NO_REVIEW;
	s->max_cost_usd = -1;
}

void fg_summary_release(struct fg_summary *s)
{
	FG_FREE_ALL(s->step, s->skill, s->task_key, s->run_id, s->review_md, s->reason);
	fg_findings_free(s->questions, s->nquestions);
	fg_findings_free(s->advice, s->nadvice);
	if (s->audit)
		fg_audit_release(s->audit);
	free(s->audit);
	fg_summary_init(s);
}

/* A copy of t cut to FG_SUMMARY_TEXT_MAX bytes on a UTF-8 boundary, or NULL. */
static char *cut(const char *t)
{
	return fg_utf8_cut(t, FG_SUMMARY_TEXT_MAX);
}

/* Appends a trimmed copy of f to the list *v of *n findings, *alloc its
 * capacity (at most FG_SUMMARY_QUESTIONS_MAX). */
static void keep_finding(struct fg_finding **v, size_t *n, size_t *alloc, const struct fg_finding *f)
{
	struct fg_finding *q;

	if (*n >= FG_SUMMARY_QUESTIONS_MAX)
		return;
	FG_ALLOC_GROW(*v, *n + 1, *alloc);
	q = &(*v)[(*n)++];
	memset(q, 0, sizeof(*q));
	q->severity = cut(f->severity);
	q->ordinal = f->ordinal;
	q->file_path = cut(f->file_path);
	q->line = f->line;
	q->title = cut(f->title);
	q->role = cut(f->role);
}

void fg_summary_add_question(struct fg_summary *s, const struct fg_finding *f)
{
	keep_finding(&s->questions, &s->nquestions, &s->questions_alloc, f);
}

void fg_summary_add_advice(struct fg_summary *s, const struct fg_finding *f)
{
	keep_finding(&s->advice, &s->nadvice, &s->advice_alloc, f);
}

void fg_summary_set_audit(struct fg_summary *s, const struct fg_audit *a)
{
	if (!s->audit) {
		s->audit = fg_xmalloc(sizeof(*s->audit));
		fg_audit_init(s->audit);
	}
	fg_audit_copy(s->audit, a);
}

struct cJSON *fg_summary_to_cjson(const struct fg_summary *s)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		abort();
	cJSON_AddStringToObject(o, "state", fg_review_state_name(s->state));
	cJSON_AddNumberToObject(o, "cycles", s->cycles);
	cJSON_AddNumberToObject(o, "max_cycles", s->max_cycles);
	cJSON_AddStringToObject(o, "step", s->step ? s->step : "");
	cJSON_AddStringToObject(o, "skill", s->skill ? s->skill : "");
	cJSON_AddStringToObject(o, "task_key", s->task_key ? s->task_key : "");
	cJSON_AddStringToObject(o, "run_id", s->run_id ? s->run_id : "");
	fg_json_add_str_or_null(o, "review_md", s->review_md);
	if (s->max_cost_usd >= 0)
		cJSON_AddNumberToObject(o, "max_cost_usd", s->max_cost_usd);
	fg_usage_pair_add_to(o, &s->usage);
	fg_phase_add_to(o, &s->t);
	if (s->nquestions)
		cJSON_AddItemToObject(o, "questions", fg_findings_to_json(s->questions, s->nquestions));
	if (s->nadvice)
		cJSON_AddItemToObject(o, "advice", fg_findings_to_json(s->advice, s->nadvice));
	if (s->audit)
		cJSON_AddItemToObject(o, "audit", fg_audit_to_cjson(s->audit));
	if (s->cause != FG_CAUSE_NONE)
		cJSON_AddItemToObject(o, "failure", fg_failure_to_cjson(s->cause, s->reason));
	if (s->isolation.known)
		cJSON_AddItemToObject(o, "isolation", fg_isolation_to_cjson(&s->isolation));
	return o;
}

int fg_summary_write_sealed(const char *dir, const struct fg_summary *s,
			    const struct fg_seal_key *k)
{
	struct fg_seal_bind b = { .run_id = s->run_id, .step = s->step, .file = FG_SUMMARY_FILE };
	cJSON *o = fg_summary_to_cjson(s);
	size_t len;
	char *text = fg_seal_take(k, FG_SEAL_FILE, &b, fg_json_print(o), &len);
	int dfd = fg_open_dir(AT_FDCWD, dir, 0), r = dfd;

	/* The step directory is shared with the agents: a directory planted
	 * under the summary's name is cleared away, never left to block it. */
	if (dfd >= 0) {
		r = fg_write_atomic_flags_at(dfd, FG_SUMMARY_FILE, text, len, FG_WRITE_CLEAR);
		close(dfd);
	}
	cJSON_Delete(o);
	free(text);
	return r;
}

int fg_summary_write(const char *dir, const struct fg_summary *s)
{
	return fg_summary_write_sealed(dir, s, NULL);
}

static int get_count(const cJSON *o, const char *key, int *out, char *err, size_t errlen)
{
	double d;

	if (fg_json_req_num(o, key, &d, err, errlen))
		return -EINVAL;
	/* Range first: the cast below is undefined outside int's range. */
	if (!isfinite(d) || d < 0 || d > FG_CYCLE_NUMBER_MAX || d != (double)(int)d) {
		fg__seterr(err, errlen, "field '%s' must be an integer from 0 to %d", key,
			   FG_CYCLE_NUMBER_MAX);
		return -EINVAL;
	}
	*out = (int)d;
	return 0;
}

/* Required name of kind: owned copy in *out. */
static int get_name(const cJSON *o, const char *key, int kind, char **out, char *err, size_t errlen)
{
	const char *s;
	int r = fg_json_req_str(o, key, &s, err, errlen);

	if (!r)
		r = fg__name_field(kind, key, s, err, errlen);
	if (!r)
		*out = fg_xstrdup(s);
	return r;
}

/* Optional string: a missing field, null or a wrong type yields dflt
 * (NULL or a copy of it). */
static char *opt_string(const cJSON *o, const char *key, const char *dflt)
{
	const char *v = fg_json_str(o, key);

	return v ? fg_xstrdup(v) : dflt ? fg_xstrdup(dflt) : NULL;
}

/* Optional name of kind ("" when absent, null or of another type): a value
 * given must be valid, like the required names. */
static int opt_name(const cJSON *o, const char *key, int kind, char **out, char *err, size_t errlen)
{
	*out = opt_string(o, key, "");
	return **out ? fg__name_field(kind, key, *out, err, errlen) : 0;
}

/* The optional findings list key of o ("questions", "advice") into *v,
 * bounded and trimmed as when written. */
static void read_findings(const cJSON *o, const char *key, struct fg_finding **v, size_t *nv,
			  size_t *alloc)
{
	const cJSON *arr = fg_json_get(o, key);
	struct fg_finding *f = NULL;
	size_t n = 0;

	if (!cJSON_IsArray(arr))
		return;
	fg_findings_from_json(arr, &f, &n);
	for (size_t i = 0; i < n; i++)
		keep_finding(v, nv, alloc, &f[i]);
	fg_findings_free(f, n);
}

/* The optional "failure" member: an unknown cause is none (a newer
 * writer's name), the reason bounded as when written. */
static void read_failure(const cJSON *o, struct fg_summary *s)
{
	const cJSON *f = fg_json_get(o, "failure");
	enum fg_failure_cause c = FG_CAUSE_NONE;

	if (!cJSON_IsObject(f) || fg_failure_cause_parse(fg_json_str(f, "cause"), &c) || c == FG_CAUSE_NONE)
		return;
	fg_summary_set_failure(s, c, fg_json_str(f, "reason"));
}

static int parse_summary(const cJSON *o, struct fg_summary *s, char *err, size_t errlen)
{
	const cJSON *st = fg_json_get(o, "state");
	const cJSON *v;
	int r;

	if (!st) {
		fg__seterr(err, errlen, "missing field 'state'");
		return -EINVAL;
	}
	if (!cJSON_IsString(st) || !st->valuestring || fg_review_state_parse(st->valuestring, &s->state)) {
		fg__seterr(err, errlen, "field 'state' must be one of approved, exhausted, stalled, "
			   "failed, disabled, no_review");
		return -EINVAL;
	}
	r = get_count(o, "cycles", &s->cycles, err, errlen);
	if (!r)
		r = get_count(o, "max_cycles", &s->max_cycles, err, errlen);
	if (!r)
		r = get_name(o, "step", FG_NAME_STEP, &s->step, err, errlen);
	if (!r)
		r = get_name(o, "skill", FG_NAME_SKILL, &s->skill, err, errlen);
	if (!r)
		r = opt_name(o, "task_key", FG_NAME_TASK_KEY, &s->task_key, err, errlen);
	if (!r)
		r = opt_name(o, "run_id", FG_NAME_RUN_ID, &s->run_id, err, errlen);
	if (r)
		return r;
	s->review_md = opt_string(o, "review_md", NULL);
	fg_usage_pair_from(&s->usage, o);
	fg_phase_from(&s->t, o);
	v = fg_json_get(o, "max_cost_usd");
	if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0)
		s->max_cost_usd = v->valuedouble;
	read_findings(o, "questions", &s->questions, &s->nquestions, &s->questions_alloc);
	read_findings(o, "advice", &s->advice, &s->nadvice, &s->advice_alloc);
	v = fg_json_get(o, "audit");
	if (cJSON_IsObject(v)) {
		struct fg_audit a;

		fg_audit_init(&a);
		if (!fg_audit_from_cjson(&a, v))
			fg_summary_set_audit(s, &a);
		fg_audit_release(&a);
	}
	read_failure(o, s);
	fg_isolation_from_cjson(&s->isolation, fg_json_get(o, "isolation"));
	return 0;
}

int fg_summary_parse(struct fg_summary *s, const char *data, size_t len, char *err, size_t errlen)
{
	struct fg_summary tmp;
	cJSON *o;
	int r = -EINVAL;

	fg_summary_init(&tmp);
	o = fg_json_parse_bounded(data, len, FG_JSON_MAX_TOKENS, err, errlen);
	if (!o)
		return -EINVAL;
	if (cJSON_IsObject(o))
		r = parse_summary(o, &tmp, err, errlen);
	else
		fg__seterr(err, errlen, "not a JSON object");
	if (!r) {
		fg_summary_release(s);
		*s = tmp;
		fg_summary_init(&tmp);
	}
	fg_summary_release(&tmp);
	cJSON_Delete(o);
	return r;
}

/* raw NULL: a buffer of its own; else raw (reset) keeps the bytes read. */
static int read_summary(int dirfd, const char *path, struct fg_summary *s, struct fg_buf *raw,
			char *err, size_t errlen)
{
	struct fg_buf own, *bp = raw ? raw : &own;
	int r;

	fg_summary_release(s);
	fg_buf_init(&own, FG_SUMMARY_MAX_BYTES);
	if (raw)
		fg_buf_reset(raw);
	r = fg_read_file_at(dirfd, dirfd == AT_FDCWD ? path : FG_SUMMARY_FILE, FG_SUMMARY_MAX_BYTES, 0, bp,
			    NULL);
	if (r)
		r = fg__read_failed(r, path, FG_SUMMARY_MAX_BYTES, err, errlen);
	else
		r = fg_summary_parse(s, fg_buf_str(bp), bp->len, err, errlen);
	fg_buf_release(&own);
	return r;
}

int fg_summary_read(const char *dir, struct fg_summary *s, char *err, size_t errlen)
{
	char *path = fg_path_join(dir, FG_SUMMARY_FILE);
	int r = read_summary(AT_FDCWD, path, s, NULL, err, errlen);

	free(path);
	return r;
}

int fg_summary_read_at(int dirfd, struct fg_summary *s, char *err, size_t errlen)
{
	return read_summary(dirfd, FG_SUMMARY_FILE, s, NULL, err, errlen);
}

int fg_summary_read_raw_at(int dirfd, struct fg_summary *s, struct fg_buf *raw, char *err,
			   size_t errlen)
{
	return read_summary(dirfd, FG_SUMMARY_FILE, s, raw, err, errlen);
}
