/*
 * usage.c - agent usage and its JSON form (see usage.h).
 */
#include "forge/usage.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forge/json.h"

#include "forge/util.h"

/* The JSON names, indexed by bit number. */
static const char *const NAMES[] = {
	"input_tokens", "output_tokens", "cached_input_tokens", "cost_usd", "turns", "duration_ms",
	"reasoning_tokens",
};

#define NFIELDS ARRAY_SIZE(NAMES)

void fg_usage_init(struct fg_usage *u)
{
	memset(u, 0, sizeof(*u));
}

bool fg_usage_empty(const struct fg_usage *u)
{
	return u->have == 0;
}

static int64_t *count_field(struct fg_usage *u, enum fg_usage_field f)
{
	switch (f) {
	case FG_USAGE_INPUT: return &u->input_tokens;
	case FG_USAGE_OUTPUT: return &u->output_tokens;
	case FG_USAGE_CACHED: return &u->cached_input_tokens;
	case FG_USAGE_TURNS: return &u->turns;
	case FG_USAGE_DURATION: return &u->duration_ms;
	case FG_USAGE_REASONING: return &u->reasoning_tokens;
	case FG_USAGE_COST: break;
	}
	return NULL;
}

void fg_usage_set(struct fg_usage *u, enum fg_usage_field f, double v)
{
	int64_t *p = count_field(u, f);

	if (!p || !isfinite(v) || v < 0 || v > FG_USAGE_COUNT_MAX)
		return;
	*p = (int64_t)v;
	u->have |= (unsigned)f;
}

void fg_usage_set_cost(struct fg_usage *u, double usd)
{
	if (isnan(usd))
		return;
	if (!isfinite(usd) || usd < 0 || usd > FG_USAGE_COST_MAX) {
		u->refused |= FG_USAGE_COST;
		u->refused_cost_usd = usd;
		return;
	}
	u->cost_usd = usd;
	u->have |= FG_USAGE_COST;
}

void fg_usage_add(struct fg_usage *total, const struct fg_usage *u)
{
	if (u->refused & FG_USAGE_COST) {
		total->refused |= FG_USAGE_COST;
		total->refused_cost_usd = u->refused_cost_usd;
	}
	for (size_t i = 0; i < NFIELDS; i++) {
		enum fg_usage_field f = (enum fg_usage_field)(1u << i);
		int64_t *t = count_field(total, f);
		const int64_t *s = count_field((struct fg_usage *)u, f);

		if (!(u->have & f))
			continue;
		if (f == FG_USAGE_COST)
			total->cost_usd = (total->have & f ? total->cost_usd : 0) + u->cost_usd;
		else
			*t = (total->have & f ? *t : 0) + *s;
		total->have |= (unsigned)f;
	}
}

/* Rounded to nano-dollars, finer than any CLI reports, so that sums such
 * as 0.1 + 0.2 do not print 17 digits. Huge values are left as they are. */
static double cost_for_file(double usd)
{
	if (usd >= 1e9)
		return usd;
	return (double)(long long)(usd * 1e9 + 0.5) / 1e9;
}

cJSON *fg_usage_to_cjson(const struct fg_usage *u)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		abort();
	for (size_t i = 0; i < NFIELDS; i++) {
		enum fg_usage_field f = (enum fg_usage_field)(1u << i);
		const int64_t *p = count_field((struct fg_usage *)u, f);

		if (!(u->have & f))
			cJSON_AddNullToObject(o, NAMES[i]);
		else if (f == FG_USAGE_COST)
			cJSON_AddNumberToObject(o, NAMES[i], cost_for_file(u->cost_usd));
		else
			cJSON_AddNumberToObject(o, NAMES[i], (double)*p);
	}
	return o;
}

void fg_usage_from_cjson(struct fg_usage *u, const cJSON *o)
{
	fg_usage_init(u);
	if (!cJSON_IsObject(o))
		return;
	for (size_t i = 0; i < NFIELDS; i++) {
		enum fg_usage_field f = (enum fg_usage_field)(1u << i);
		const cJSON *v = fg_json_get(o, NAMES[i]);

		if (!cJSON_IsNumber(v))
			continue;
		if (f == FG_USAGE_COST)
			fg_usage_set_cost(u, v->valuedouble);
		else if (v->valuedouble >= 0 && v->valuedouble <= FG_USAGE_COUNT_MAX &&
			 v->valuedouble == (double)(int64_t)v->valuedouble)
			fg_usage_set(u, f, v->valuedouble);
	}
}

void fg_usage_pair_init(struct fg_usage_pair *p)
{
	fg_usage_init(&p->worker);
	fg_usage_init(&p->reviewer);
}

bool fg_usage_pair_empty(const struct fg_usage_pair *p)
{
	return fg_usage_empty(&p->worker) && fg_usage_empty(&p->reviewer);
}

void fg_usage_pair_add(struct fg_usage_pair *total, const struct fg_usage_pair *p)
{
	fg_usage_add(&total->worker, &p->worker);
	fg_usage_add(&total->reviewer, &p->reviewer);
}

void fg_usage_pair_add_to(cJSON *o, const struct fg_usage_pair *p)
{
	cJSON *u;

	if (fg_usage_pair_empty(p))
		return;
	u = fg_json_add_object(o, "usage");
	if (!fg_usage_empty(&p->worker))
		cJSON_AddItemToObject(u, "worker", fg_usage_to_cjson(&p->worker));
	if (!fg_usage_empty(&p->reviewer))
		cJSON_AddItemToObject(u, "reviewer", fg_usage_to_cjson(&p->reviewer));
}

void fg_usage_pair_from(struct fg_usage_pair *p, const cJSON *o)
{
	const cJSON *u = fg_json_obj(o, "usage");

	/* Without the member, u is NULL: both sides read as empty. */
	fg_usage_pair_init(p);
	fg_usage_from_cjson(&p->worker, fg_json_get(u, "worker"));
	fg_usage_from_cjson(&p->reviewer, fg_json_get(u, "reviewer"));
}

bool fg_usage_pair_cost(const struct fg_usage_pair *p, double *usd)
{
	struct fg_usage t = p->worker;

	fg_usage_add(&t, &p->reviewer);
	if (!(t.have & FG_USAGE_COST))
		return false;
	*usd = t.cost_usd;
	return true;
}
