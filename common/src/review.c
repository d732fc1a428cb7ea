/*
 * review.c - one role's review of a reviewer panel (cycle.h): its role
 * verdict, copy, release, and its JSON in the cycle file's "reviews".
 */
#include "forge/cycle.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/fsutil.h"
#include "forge/json.h"
#include "forge/names.h"
#include "forge/util.h"
#include "internal.h"

#define CYCLE_PREFIX "review_cycle_"
#define CYCLE_SUFFIX ".json"
#define REVIEWER_LOG_SUFFIX ".reviewer.log"

/* ---- a panel's reviews ------------------------------------------------- */

static const char *const role_verdict_names[] = { "approved", "rejected", "out_of_scope" };

FG_NAME_FUNCS(enum fg_role_verdict, role_verdict_names, "rejected", fg_role_verdict_name,
	      fg_role_verdict_parse)

void fg_review_init(struct fg_review *r)
{
	memset(r, 0, sizeof(*r));
	fg_judgement_init(&r->j);
}

enum fg_role_verdict fg_review_verdict(const struct fg_review *r)
{
	if (r->j.verdict == FG_VERDICT_REJECTED)
		return FG_ROLE_REJECTED;
	return r->j.out_of_scope ? FG_ROLE_OUT_OF_SCOPE : FG_ROLE_APPROVED;
}

void fg_review_set_verdict(struct fg_review *r, enum fg_role_verdict v)
{
	r->j.verdict = v == FG_ROLE_REJECTED ? FG_VERDICT_REJECTED : FG_VERDICT_APPROVED;
	r->j.out_of_scope = v == FG_ROLE_OUT_OF_SCOPE;
}

void fg_review_release(struct fg_review *r)
{
	fg_judgement_reset(&r->j);
	free(r->reviewer_log);
	cJSON_Delete(r->usage);
	fg_strvec_release(&r->denied);
	fg_review_init(r);
}

void fg_review_copy(struct fg_review *dst, const struct fg_review *src)
{
	fg_review_release(dst);
	*dst = *src;
	dst->j.feedback = fg_xstrdup(src->j.feedback ? src->j.feedback : "");
	fg_judgement_copy_findings(&dst->j, &src->j);
	fg_strvec_init(&dst->j.verified);
	for (size_t i = 0; i < src->j.verified.n; i++)
		fg_strvec_push(&dst->j.verified, src->j.verified.v[i]);
	dst->reviewer_log = src->reviewer_log ? fg_xstrdup(src->reviewer_log) : NULL;
	fg_strvec_init(&dst->denied);
	fg_denied_merge(&dst->denied, &src->denied);
	dst->usage = src->usage ? cJSON_Duplicate(src->usage, 1) : NULL;
	if (src->usage && !dst->usage)
		abort();
}

struct cJSON *fg_review_to_cjson(const struct fg_review *r)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		abort();
	cJSON_AddStringToObject(o, "role", r->role);
	cJSON_AddStringToObject(o, "verdict", fg_role_verdict_name(fg_review_verdict(r)));
	fg_json_add_true_if(o, "failed", r->failed);
	fg_json_add_true_if(o, "reask", r->reask);
	if (r->from_cycle > 0)
		cJSON_AddNumberToObject(o, "from_cycle", r->from_cycle);
	if (r->j.has_format)
		cJSON_AddStringToObject(o, "format", fg_verdict_format_name(r->j.format));
	cJSON_AddStringToObject(o, "feedback", r->j.feedback ? r->j.feedback : "");
	if (r->j.has_findings)
		cJSON_AddItemToObject(o, "findings", fg_findings_to_json(r->j.findings, r->j.nfindings));
	cJSON_AddNumberToObject(o, "elapsed_seconds", fg__seconds_for_file(r->elapsed_seconds));
	fg_json_add_str_if(o, "reviewer_log", r->reviewer_log);
	if (r->usage) {
		cJSON *u = cJSON_Duplicate(r->usage, 1);

		if (!u)
			abort();
		cJSON_AddItemToObject(o, "usage", u);
	}
	if (r->denied.n)
		cJSON_AddItemToObject(o, "denied_tools", fg_denied_array(&r->denied));
	fg_evidence_add_verified(o, &r->j.verified);
	fg_agent_runs_add_to(o, "runs", &r->runs);
	return o;
}

/* The optional members of a review; a wrong type counts as absent. */
static void review_optional(struct fg_review *r, const cJSON *o)
{
	const cJSON *v;

	r->failed = fg_json_true(o, "failed");
	r->reask = fg_json_true(o, "reask");
	fg_denied_read_array(&r->denied, fg_json_get(o, "denied_tools"));
	fg_evidence_read_verified(&r->j.verified, o);
	fg_agent_runs_from(&r->runs, fg_json_get(o, "runs"));
	v = fg_json_get(o, "from_cycle");
	if (cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble <= FG_CYCLE_NUMBER_MAX)
		r->from_cycle = (int)v->valuedouble;
	fg__judgement_read(o, &r->j);
	v = fg_json_get(o, "feedback");
	r->j.feedback = fg_xstrdup(cJSON_IsString(v) && v->valuestring ? v->valuestring : "");
	v = fg_json_get(o, "elapsed_seconds");
	if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0)
		r->elapsed_seconds = v->valuedouble;
	v = fg_json_get(o, "reviewer_log");
	if (cJSON_IsString(v) && v->valuestring && fg__safe_base_name(v->valuestring))
		r->reviewer_log = fg_xstrdup(v->valuestring);
	v = fg_json_get(o, "usage");
	if (cJSON_IsObject(v)) {
		r->usage = cJSON_Duplicate(v, 1);
		if (!r->usage)
			abort();
	}
}

int fg_review_from_cjson(struct fg_review *r, const struct cJSON *o)
{
	const cJSON *role = fg_json_get(o, "role");
	const cJSON *verdict = fg_json_get(o, "verdict");
	enum fg_role_verdict k;

	fg_review_release(r);
	if (!cJSON_IsObject(o) || !cJSON_IsString(role) || !role->valuestring ||
	    !fg_role_valid(role->valuestring) || !cJSON_IsString(verdict) ||
	    fg_role_verdict_parse(verdict->valuestring, &k) < 0)
		return -EINVAL;
	fg__strlcpy(r->role, role->valuestring, sizeof(r->role));
	fg_review_set_verdict(r, k);
	review_optional(r, o);
	return 0;
}

void fg__cycle_add_reviews(cJSON *o, const struct fg_cycle *c)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "reviews");

	if (!arr)
		abort();
	for (size_t i = 0; i < c->nreviews; i++)
		cJSON_AddItemToArray(arr, fg_review_to_cjson(&c->reviews[i]));
}

void fg__cycle_parse_reviews(const cJSON *arr, struct fg_cycle *c)
{
	const cJSON *it;

	if (!cJSON_IsArray(arr))
		return;
	c->has_reviews = true;
	cJSON_ArrayForEach(it, arr) {
		if (c->nreviews == FG_REVIEWERS_MAX)
			break;
		if (!c->reviews)
			c->reviews = fg_xcalloc(FG_REVIEWERS_MAX, sizeof(*c->reviews));
		fg_review_init(&c->reviews[c->nreviews]);
		if (!fg_review_from_cjson(&c->reviews[c->nreviews], it))
			c->nreviews++;
	}
}
