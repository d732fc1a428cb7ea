/*
 * cycle.c - review_cycle_N.json: names, JSON shape, validation, atomic
 * writes and directory listings (see cycle.h and docs/reference/cycle-files.md).
 */
#include "forge/json.h"
#include "forge/text.h"
#include "forge/cycle.h"
#include "forge/seal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/fsutil.h"
#include "forge/names.h"
#include "forge/util.h"
#include "internal.h"

#define CYCLE_PREFIX "review_cycle_"
#define CYCLE_SUFFIX ".json"
#define REVIEWER_LOG_SUFFIX ".reviewer.log"

void fg_cycle_init(struct fg_cycle *c)
{
	memset(c, 0, sizeof(*c));
	fg_judgement_init(&c->j);
	fg_evidence_init(&c->ev);
}

void fg_cycle_release(struct fg_cycle *c)
{
	fg_judgement_reset(&c->j);
	free(c->skill);
	free(c->run_id);
	free(c->reviewer_log);
	for (size_t i = 0; i < c->nreviews; i++)
		fg_review_release(&c->reviews[i]);
	free(c->reviews);
	fg_evidence_release(&c->ev);
	fg_denied_release(&c->denied);
	fg_cycle_init(c);
}

/* Parses the canonical decimal N at *p (no leading zeros, at most
 * FG_CYCLE_NUMBER_MAX) and moves *p past it. 0 when there is none. */
static int parse_number(const char **pp)
{
	const char *p = *pp;
	long v = 0;
	int ndig = 0;

	/* No leading zeros: the name of cycle N is unique, so one file per cycle. */
	if (*p < '1' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9') {
		/* Seven digits already exceed FG_CYCLE_NUMBER_MAX; stop before overflow. */
		if (++ndig > 7)
			return 0;
		v = v * 10 + (*p - '0');
		p++;
	}
	if (v > FG_CYCLE_NUMBER_MAX)
		return 0;
	*pp = p;
	return (int)v;
}

int fg_cycle_name_parse(const char *name, int *n)
{
	const char *p;
	int v;

	if (!fg_skip_prefix(name, CYCLE_PREFIX, &p))
		return 0;
	v = parse_number(&p);
	if (!v || strcmp(p, CYCLE_SUFFIX))
		return 0;
	*n = v;
	return 1;
}

char *fg_cycle_file_name(int n)
{
	return fg_xasprintf(CYCLE_PREFIX "%d" CYCLE_SUFFIX, n);
}

char *fg_reviewer_log_name(int n, const char *role)
{
	if (role)
		return fg_xasprintf(CYCLE_PREFIX "%d.%s" REVIEWER_LOG_SUFFIX, n, role);
	return fg_xasprintf(CYCLE_PREFIX "%d" REVIEWER_LOG_SUFFIX, n);
}

int fg_reviewer_log_name_parse(const char *name, int *n)
{
	const size_t slen = sizeof(REVIEWER_LOG_SUFFIX) - 1;
	const char *p;
	size_t rest;
	int v;

	if (!fg_skip_prefix(name, CYCLE_PREFIX, &p))
		return 0;
	v = parse_number(&p);
	rest = v ? strlen(p) : 0;
	if (rest < slen || strcmp(p + rest - slen, REVIEWER_LOG_SUFFIX) || strchr(p, '/'))
		return 0;
	/* Either nothing between N and the suffix, or ".ROLE" with a ROLE. */
	if (rest != slen && (p[0] != '.' || rest < slen + 2))
		return 0;
	*n = v;
	return 1;
}

/* The value of the placeholder at p ("{step}" ...), its length in *len;
 * NULL with *len 0 when p starts no known placeholder. */
static const char *placeholder(const char *p, const struct fg_cycle_dir_vars *v, size_t *len,
			       int *known)
{
	static const char *const keys[] = { "{step}", "{task_key}", "{skill}" };
	const char *vals[] = { v->step, v->task_key, v->skill };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		size_t n = strlen(keys[i]);

		if (!strncmp(p, keys[i], n)) {
			*len = n;
			*known = 1;
			return vals[i] && *vals[i] ? vals[i] : NULL;
		}
	}
	*len = 0;
	*known = 0;
	return NULL;
}

/* Every '/'-separated component of rel is a plain name. */
static int components_ok(const char *rel)
{
	if (!*rel || *rel == '/')
		return 0;
	for (const char *c = rel; c;) {
		const char *end = strchr(c, '/');
		size_t n = end ? (size_t)(end - c) : strlen(c);

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		c = end ? end + 1 : NULL;
	}
	return 1;
}

static int too_long(const char *tmpl, const struct fg_buf *b, char *err, size_t errlen)
{
	(void)tmpl;  /* not quoted: it is the long thing */
	fg__seterr(err, errlen, "cycle dir longer than %zu bytes", b->max);
	return -EINVAL;
}

static int expand(const char *tmpl, const struct fg_cycle_dir_vars *v, struct fg_buf *b,
		  char *err, size_t errlen)
{
	for (const char *p = tmpl; *p;) {
		size_t len;
		int known;
		const char *val = placeholder(p, v, &len, &known);

		if (known && !val) {
			fg__seterr(err, errlen, "cycle dir '%s': %.*s has no value here", tmpl, (int)len, p);
			return -EINVAL;
		}
		if (val) {
			if (fg_buf_adds(b, val) < 0)
				return too_long(tmpl, b, err, errlen);
			p += len;
			continue;
		}
		if (*p == '{' || *p == '}' || (unsigned char)*p < 0x20 || *p == 0x7f) {
			fg__seterr(err, errlen, "cycle dir '%s': unexpected %s (placeholders: {step}, "
				   "{task_key}, {skill})", tmpl, *p == '{' || *p == '}' ? "brace" :
				   "control character");
			return -EINVAL;
		}
		if (fg_buf_addc(b, *p++) < 0)
			return too_long(tmpl, b, err, errlen);
	}
	return 0;
}

int fg_cycle_dir(const char *tmpl, const struct fg_cycle_dir_vars *v, char **out, char *err,
		 size_t errlen)
{
	struct fg_buf b;
	int r;

	tmpl = tmpl ? tmpl : FG_CYCLE_DIR_DEFAULT;
	fg_buf_init(&b, PATH_MAX - 1);
	r = expand(tmpl, v, &b, err, errlen);
	if (!r && !components_ok(fg_buf_str(&b))) {
		fg__seterr(err, errlen, "cycle dir '%s' is '%s': it must stay below the workspace "
			   "(relative, no empty, '.' or '..' component)", tmpl, fg_buf_str(&b));
		r = -EINVAL;
	}
	if (r)
		fg_buf_release(&b);
	else
		*out = fg_buf_detach(&b, NULL);
	return r;
}

/* Rounds a wall time to milliseconds for the file. Non-finite or negative
 * values (a clock gone wrong) are written as 0 so that our own reader never
 * rejects what we wrote; huge values are left as they are. */
double fg__seconds_for_file(double x)
{
	if (!isfinite(x) || x < 0)
		return 0;
	if (x >= 1e12)
		return x;
	return (double)(long long)(x * 1000.0 + 0.5) / 1000.0;
}

static void add_optional(cJSON *o, const struct fg_cycle *c)
{
	fg_json_add_str_if(o, "run_id", c->run_id);
	fg_json_add_true_if(o, "synthetic", c->synthetic);
	fg_json_add_true_if(o, "stalled", c->stalled);
	fg_json_add_true_if(o, "over_budget", c->over_budget);
	fg_json_add_true_if(o, "reask", c->reask);
	fg_denied_add_to(o, &c->denied);
	if (c->j.has_format)
		cJSON_AddStringToObject(o, "format", fg_verdict_format_name(c->j.format));
	if (c->j.has_findings)
		cJSON_AddItemToObject(o, "findings", fg_findings_to_json(c->j.findings, c->j.nfindings));
	fg_json_add_str_if(o, "reviewer_log", c->reviewer_log);
	if (c->has_reviews)
		fg__cycle_add_reviews(o, c);
	fg_usage_pair_add_to(o, &c->usage);
	fg_evidence_add_to(o, &c->ev);
	if (fg_phase_known(&c->worker_run.t))
		cJSON_AddItemToObject(o, "worker_run", fg_agent_run_to_cjson(&c->worker_run));
	fg_agent_runs_add_to(o, "reviewer_runs", &c->reviewer_runs);
}

struct cJSON *fg_cycle_to_cjson(const struct fg_cycle *c)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		abort();
	cJSON_AddNumberToObject(o, "cycle", c->cycle);
	cJSON_AddNumberToObject(o, "max_cycles", c->max_cycles);
	cJSON_AddStringToObject(o, "verdict", c->j.verdict == FG_VERDICT_APPROVED ? "approved" : "rejected");
	cJSON_AddStringToObject(o, "feedback", c->j.feedback ? c->j.feedback : "");
	cJSON_AddStringToObject(o, "skill", c->skill ? c->skill : "");
	cJSON_AddNumberToObject(o, "elapsed_seconds", fg__seconds_for_file(c->elapsed_seconds));
	cJSON_AddStringToObject(o, "timestamp", c->timestamp);
	add_optional(o, c);
	return o;
}

char *fg_cycle_to_json(const struct fg_cycle *c)
{
	cJSON *o = fg_cycle_to_cjson(c);
	char *out = fg_json_print(o);

	cJSON_Delete(o);
	return out;
}

/* An integer-valued JSON number in [lo, hi]. JSON does not tell 1 from 1.0,
 * so an integral value written either way is accepted. */
static int get_int(const cJSON *o, const char *key, long lo, long hi, int *out, char *err, size_t errlen)
{
	double d;

	if (fg_json_req_num(o, key, &d, err, errlen))
		return -EINVAL;
	if (isfinite(d) && d > (double)hi) {
		fg__seterr(err, errlen, "field '%s' must be at most %ld", key, hi);
		return -EINVAL;
	}
	/* The range is checked before the cast, which is undefined out of range. */
	if (!isfinite(d) || d < (double)lo || d != (double)(long)d) {
		fg__seterr(err, errlen, "field '%s' must be an integer >= %ld", key, lo);
		return -EINVAL;
	}
	*out = (int)d;
	return 0;
}

static int get_verdict(const cJSON *o, struct fg_cycle *c, char *err, size_t errlen)
{
	const char *s;
	int r = fg_json_req_str(o, "verdict", &s, err, errlen);

	/* Exactly the two lower-case words of the spec, nothing looser. */
	if (!r && fg_verdict_kind_parse(s, &c->j.verdict) < 0) {
		fg__seterr(err, errlen, "field 'verdict' must be \"approved\" or \"rejected\"");
		r = -EINVAL;
	}
	return r;
}

static int get_elapsed(const cJSON *o, struct fg_cycle *c, char *err, size_t errlen)
{
	const cJSON *v = fg_json_get(o, "elapsed_seconds");

	if (!v) {
		fg__seterr(err, errlen, "missing field 'elapsed_seconds'");
		return -EINVAL;
	}
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
	    v->valuedouble > FG_CYCLE_ELAPSED_MAX) {
		fg__seterr(err, errlen, "field 'elapsed_seconds' must be a number from 0 to %.0f",
			   FG_CYCLE_ELAPSED_MAX);
		return -EINVAL;
	}
	c->elapsed_seconds = v->valuedouble;
	return 0;
}

static int get_timestamp(const cJSON *o, struct fg_cycle *c, char *err, size_t errlen)
{
	const char *s;
	int r = fg_json_req_str(o, "timestamp", &s, err, errlen);

	if (r)
		return r;
	if (!fg_time_iso_valid(s)) {
		fg__seterr(err, errlen, "field 'timestamp' must be UTC 'YYYY-MM-DDTHH:MM:SSZ'");
		return -EINVAL;
	}
	fg__strlcpy(c->timestamp, s, sizeof(c->timestamp));
	return 0;
}

/* The required fields, checked in the spec's table order so the reason
 * names the first problem a reader of the table would find. */
static int parse_required(const cJSON *o, struct fg_cycle *c, char *err, size_t errlen)
{
	const char *feedback, *skill;
	int r;

	r = get_int(o, "cycle", 1, FG_CYCLE_NUMBER_MAX, &c->cycle, err, errlen);
	if (!r)
		r = get_int(o, "max_cycles", 1, FG_CYCLE_NUMBER_MAX, &c->max_cycles, err, errlen);
	if (!r)
		r = get_verdict(o, c, err, errlen);
	if (!r)
		r = fg_json_req_strs(o, FG_JSON_FIELDS({ "feedback", &feedback }, { "skill", &skill }),
				     err, errlen);
	if (!r)
		r = fg__name_field(FG_NAME_SKILL, "skill", skill, err, errlen);
	if (!r)
		r = get_elapsed(o, c, err, errlen);
	if (!r)
		r = get_timestamp(o, c, err, errlen);
	if (r)
		return r;
	c->j.feedback = fg_xstrdup(feedback);
	c->skill = fg_xstrdup(skill);
	return 0;
}

/* A reviewer log name is opened relative to the step directory by readers,
 * so only a plain file name in that directory is kept. */
int fg__safe_base_name(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

/* run_id decides whose cycle this is: one that is present but not a valid
 * id makes the cycle invalid (counting it as absent would make a foreign
 * cycle acceptable to every run). A wrong type counts as absent, as for
 * every optional field. */
static int parse_run_id(const cJSON *o, struct fg_cycle *c, char *err, size_t errlen)
{
	const cJSON *v = fg_json_get(o, "run_id");

	if (!cJSON_IsString(v) || !v->valuestring)
		return 0;
	if (fg__name_field(FG_NAME_RUN_ID, "run_id", v->valuestring, err, errlen))
		return -EINVAL;
	c->run_id = fg_xstrdup(v->valuestring);
	return 0;
}

/* Optional fields: a wrong type makes the field count as absent (the spec
 * says readers may ignore them), it never rejects the cycle. */
static void parse_optional(const cJSON *o, struct fg_cycle *c)
{
	const cJSON *v;

	c->synthetic = fg_json_true(o, "synthetic");
	c->stalled = fg_json_true(o, "stalled");
	c->over_budget = fg_json_true(o, "over_budget");
	c->reask = fg_json_true(o, "reask");
	fg_usage_pair_from(&c->usage, o);
	fg_denied_from(&c->denied, o);
	fg__judgement_read(o, &c->j);
	v = fg_json_get(o, "reviewer_log");
	if (cJSON_IsString(v) && v->valuestring && fg__safe_base_name(v->valuestring))
		c->reviewer_log = fg_xstrdup(v->valuestring);
	fg__cycle_parse_reviews(fg_json_get(o, "reviews"), c);
	fg_evidence_from(&c->ev, o);
	fg_agent_run_from(&c->worker_run, fg_json_get(o, "worker_run"));
	fg_agent_runs_from(&c->reviewer_runs, fg_json_get(o, "reviewer_runs"));
}

int fg_cycle_parse(struct fg_cycle *c, const char *data, size_t len, char *err, size_t errlen)
{
	struct fg_cycle tmp;
	cJSON *o;
	int r = -EINVAL;

	fg_cycle_release(c);
	fg_cycle_init(&tmp);
	o = fg_json_parse_bounded(data, len, FG_JSON_MAX_TOKENS, err, errlen);
	if (!o)
		return -EINVAL;
	if (!cJSON_IsObject(o)) {
		fg__seterr(err, errlen, "not a JSON object");
		goto out;
	}
	r = parse_required(o, &tmp, err, errlen);
	if (!r)
		r = parse_run_id(o, &tmp, err, errlen);
	if (r)
		goto out;
	parse_optional(o, &tmp);
	*c = tmp;
	fg_cycle_init(&tmp);
out:
	fg_cycle_release(&tmp);
	cJSON_Delete(o);
	return r;
}

/* The sealed text of c and its file name (both owned by the caller), or
 * NULL for a cycle number out of range. */
static char *sealed_text(const struct fg_cycle *c, const struct fg_seal_key *k, const char *step,
			 char **name, size_t *len)
{
	struct fg_seal_bind b = { .run_id = c->run_id, .step = step, .cycle = c->cycle };

	if (c->cycle < 1 || c->cycle > FG_CYCLE_NUMBER_MAX)
		return NULL;
	*name = fg_cycle_file_name(c->cycle);
	b.file = *name;
	return fg_seal_take(k, FG_SEAL_FILE, &b, fg_cycle_to_json(c), len);
}

/* Writes c atomically into the directory dir names when dir is set, else
 * into dirfd's. */
static int write_sealed(int dirfd, const char *dir, const struct fg_cycle *c,
			const struct fg_seal_key *k, const char *step)
{
	char *name = NULL;
	size_t len = 0;
	char *text = sealed_text(c, k, step, &name, &len);
	int r;

	if (!text)
		return -EINVAL;
	r = dir ? fg_write_atomic(dir, name, text, len) : fg_write_atomic_at(dirfd, name, text, len);
	free(name);
	free(text);
	return r;
}

int fg_cycle_write_sealed_at(int dirfd, const struct fg_cycle *c, const struct fg_seal_key *k,
			     const char *step)
{
	return write_sealed(dirfd, NULL, c, k, step);
}

enum fg_seal_status fg_cycle_seal_check(const struct fg_seal_key *k, const char *step, const char *name, int n,
			const struct fg_cycle *c, const char *raw, size_t len)
{
	char *claimed_name = fg_cycle_file_name(c->cycle);
	struct fg_seal_bind where = { c->run_id, step, name, n };
	struct fg_seal_bind claimed = { c->run_id, step, claimed_name, c->cycle };
	enum fg_seal_status st = fg_seal_check(k, FG_SEAL_FILE, &where, &claimed, raw, len);

	free(claimed_name);
	return st;
}

int fg_cycle_write_at(int dirfd, const struct fg_cycle *c)
{
	return fg_cycle_write_sealed_at(dirfd, c, NULL, NULL);
}

int fg_cycle_write_sealed(const char *dir, const struct fg_cycle *c, const struct fg_seal_key *k,
			  const char *step)
{
	return write_sealed(AT_FDCWD, dir, c, k, step);
}

int fg_cycle_write(const char *dir, const struct fg_cycle *c)
{
	return fg_cycle_write_sealed(dir, c, NULL, NULL);
}

int fg_cycle_read_at(int dirfd, const char *name, struct fg_cycle *c, struct fg_buf *raw,
		     char *err, size_t errlen)
{
	struct fg_buf local;
	struct fg_buf *b = raw ? raw : &local;
	int r;

	fg_buf_init(&local, FG_CYCLE_MAX_BYTES);
	if (raw)
		fg_buf_reset(raw);
	r = fg_read_file_at(dirfd, name, FG_CYCLE_MAX_BYTES, 0, b, NULL);
	if (r) {
		/* A read error must not hand back an earlier cycle as if current. */
		fg_cycle_release(c);
		r = fg__read_failed(r, name, FG_CYCLE_MAX_BYTES, err, errlen);
	} else {
		r = fg_cycle_parse(c, fg_buf_str(b), b->len, err, errlen);
	}
	fg_buf_release(&local);
	return r;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct fg_cycle_entry *x = a, *y = b;

	return (x->n > y->n) - (x->n < y->n);
}

int fg_cycle_list_at(int dirfd, struct fg_cycle_entry **out, size_t *count)
{
	struct fg_cycle_entry *v = NULL;
	size_t n = 0, cap = 0;
	struct fg_dir it;
	const char *e;
	int num, r = fg_dir_open_fd(&it, dirfd);

	if (r)
		return r;
	while ((e = fg_dir_next(&it)) != NULL) {
		if (!fg_cycle_name_parse(e, &num))
			continue;
		FG_ALLOC_GROW(v, n + 1, cap);
		v[n].n = num;
		v[n].name = fg_xstrdup(e);
		n++;
	}
	r = it.err;
	fg_dir_close(&it);
	if (r) {
		fg_cycle_entries_free(v, n);
		return r;
	}
	/* Canonical names make N unique, so the order is total. */
	if (n > 1)
		qsort(v, n, sizeof(*v), entry_cmp);
	*out = v;
	*count = n;
	return 0;
}

void fg_cycle_entries_free(struct fg_cycle_entry *e, size_t count)
{
	for (size_t i = 0; e && i < count; i++)
		free(e[i].name);
	free(e);
}

bool fg_cycles_exhausted(const struct fg_cycle *cycles, size_t n)
{
	const struct fg_cycle *last = NULL;

	/* The last cycle is the highest number; among equal numbers the later
	 * element wins, as a rewrite of a file is appended after the original. */
	for (size_t i = 0; i < n; i++) {
		if (!last || cycles[i].cycle >= last->cycle)
			last = &cycles[i];
	}
	return last && last->j.verdict == FG_VERDICT_REJECTED && last->cycle >= last->max_cycles;
}

bool fg_run_id_accepts(const char *expected, const char *got)
{
	return !expected || !got || !strcmp(expected, got);
}
