/*
 * audit.c - the audit's record and its sampling (see audit.h).
 */
#include "forge/audit.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/json.h"
#include "forge/text.h"
#include "forge/util.h"
#include "internal.h"

static const char *const outcome_names[] = {
	[FG_AUDIT_AGREED] = "agreed",
	[FG_AUDIT_DISAGREED] = "disagreed",
	[FG_AUDIT_FAILED] = "failed",
	[FG_AUDIT_SKIPPED] = "skipped",
};

_Static_assert(ARRAY_SIZE(outcome_names) == FG_AUDIT_OUTCOME_COUNT, "an audit outcome without a name");

FG_NAME_FUNCS(enum fg_audit_outcome, outcome_names, "failed", fg_audit_outcome_name,
	      fg_audit_outcome_parse)

void fg_audit_init(struct fg_audit *a)
{
	memset(a, 0, sizeof(*a));
	a->outcome = FG_AUDIT_SKIPPED;
	a->verdict = FG_VERDICT_REJECTED;
	a->sample = 1;
	fg_usage_init(&a->usage);
}

void fg_audit_release(struct fg_audit *a)
{
	FG_FREE_ALL(a->feedback, a->reason, a->reviewer_log);
	fg_findings_free(a->findings, a->nfindings);
	fg_audit_init(a);
}

/* *s cut to max bytes in place. */
static void recut(char **s, size_t max)
{
	char *c;

	if (!*s || strlen(*s) <= max)
		return;
	c = fg_utf8_cut(*s, max);
	free(*s);
	*s = c;
}

static void set_findings(struct fg_audit *a, const struct fg_finding *f, size_t n)
{
	fg_findings_free(a->findings, a->nfindings);
	a->nfindings = n < FG_AUDIT_FINDINGS_MAX ? n : FG_AUDIT_FINDINGS_MAX;
	a->findings = a->nfindings ? fg_xcalloc(a->nfindings, sizeof(*a->findings)) : NULL;
	for (size_t i = 0; i < a->nfindings; i++) {
		struct fg_finding *d = &a->findings[i];

		fg_finding_copy(d, &f[i]);
		/* What a finding may carry is cut, so the record stays small:
		 * the reviewer log keeps it whole. */
		FG_FREE_ALL(d->evidence, d->fix);
		d->evidence = d->fix = NULL;
		recut(&d->title, FG_AUDIT_TITLE_MAX);
		recut(&d->file_path, FG_AUDIT_TITLE_MAX);
		recut(&d->description, FG_AUDIT_REASON_MAX);
	}
}

void fg_audit_copy(struct fg_audit *dst, const struct fg_audit *src)
{
	fg_audit_release(dst);
	*dst = *src;
	dst->feedback = fg_utf8_cut(src->feedback, FG_AUDIT_FEEDBACK_MAX);
	dst->reason = fg_utf8_cut(src->reason, FG_AUDIT_REASON_MAX);
	dst->reviewer_log = src->reviewer_log ? fg_xstrdup(src->reviewer_log) : NULL;
	dst->findings = NULL;
	dst->nfindings = 0;
	set_findings(dst, src->findings, src->nfindings);
}

void fg_audit_take_judgement(struct fg_audit *a, const struct fg_judgement *j)
{
	a->has_verdict = true;
	a->verdict = j->verdict;
	a->outcome = j->verdict == FG_VERDICT_APPROVED ? FG_AUDIT_AGREED : FG_AUDIT_DISAGREED;
	free(a->feedback);
	a->feedback = fg_utf8_cut(j->feedback ? j->feedback : "", FG_AUDIT_FEEDBACK_MAX);
	set_findings(a, j->findings, j->nfindings);
}

void fg_audit_set_reason(struct fg_audit *a, const char *why)
{
	free(a->reason);
	a->reason = fg_utf8_cut(why, FG_AUDIT_REASON_MAX);
}

struct cJSON *fg_audit_to_cjson(const struct fg_audit *a)
{
	cJSON *o = cJSON_CreateObject();
	double usd;

	if (!o)
		abort();
	cJSON_AddStringToObject(o, "outcome", fg_audit_outcome_name(a->outcome));
	fg_json_add_str_or_null(o, "verdict", a->has_verdict ? fg_verdict_kind_name(a->verdict) : NULL);
	cJSON_AddStringToObject(o, "feedback", a->feedback ? a->feedback : "");
	cJSON_AddItemToObject(o, "findings", fg_findings_to_json(a->findings, a->nfindings));
	if (fg_usage_empty(&a->usage))
		cJSON_AddNullToObject(o, "usage");
	else
		cJSON_AddItemToObject(o, "usage", fg_usage_to_cjson(&a->usage));
	usd = a->usage.cost_usd;
	if (a->usage.have & FG_USAGE_COST)
		cJSON_AddNumberToObject(o, "cost_usd", usd);
	else
		cJSON_AddNullToObject(o, "cost_usd");
	fg_agent_runs_add_to(o, "runs", &a->runs);
	cJSON_AddNumberToObject(o, "elapsed_seconds", fg__seconds_for_file(a->elapsed_seconds));
	cJSON_AddNumberToObject(o, "sample", a->sample);
	cJSON_AddNumberToObject(o, "draw", a->draw);
	cJSON_AddBoolToObject(o, "blocks", a->blocks);
	fg_json_add_str_or_null(o, "reason", a->reason);
	fg_json_add_str_or_null(o, "reviewer_log", a->reviewer_log);
	return o;
}

int fg_audit_from_cjson(struct fg_audit *a, const struct cJSON *o)
{
	const char *s = fg_json_str(o, "outcome"), *v = fg_json_str(o, "verdict");
	const cJSON *arr = fg_json_get(o, "findings");
	struct fg_finding *f = NULL;
	size_t n = 0;

	fg_audit_release(a);
	if (!cJSON_IsObject(o) || !s || fg_audit_outcome_parse(s, &a->outcome)) {
		fg_audit_init(a);
		return -EINVAL;
	}
	a->has_verdict = v && !fg_verdict_kind_parse(v, &a->verdict);
	a->feedback = fg_utf8_cut(fg_json_str(o, "feedback") ? fg_json_str(o, "feedback") : "", FG_AUDIT_FEEDBACK_MAX);
	if (cJSON_IsArray(arr))
		fg_findings_from_json(arr, &f, &n);
	set_findings(a, f, n);
	fg_findings_free(f, n);
	fg_usage_from_cjson(&a->usage, fg_json_obj(o, "usage"));
	fg_agent_runs_from(&a->runs, fg_json_get(o, "runs"));
	a->elapsed_seconds = fg_json_num_in(o, "elapsed_seconds", 0, 1e9, 0);
	a->sample = fg_json_num_in(o, "sample", 0, 1, 1);
	a->draw = fg_json_num_in(o, "draw", 0, 1, 0);
	a->blocks = fg_json_true(o, "blocks");
	a->reason = fg_utf8_cut(fg_json_str(o, "reason"), FG_AUDIT_REASON_MAX);
	a->reviewer_log = fg_utf8_cut(fg_json_str(o, "reviewer_log"), FG_AUDIT_REASON_MAX);
	return 0;
}

/* FNV-1a 64 as published (offset basis 14695981039346656037): the draw is
 * documented so an orchestrator can compute it, and fg_hash64()'s basis
 * differs from the published one (a fingerprint need not match it; a
 * documented draw must). */
static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (; s && *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

double fg_audit_draw(const char *run_id, const char *step, const char *skill)
{
	uint64_t h = 0xcbf29ce484222325ull;

	h = fnv1a(h, run_id);
	h = fnv1a(h, "\n");
	h = fnv1a(h, step);
	h = fnv1a(h, "\n");
	h = fnv1a(h, skill);
	return (double)(h >> 11) / 9007199254740992.0;
}
