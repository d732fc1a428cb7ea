/*
 * phase.c - phase times and agent runs in the records (see phase.h).
 */
#include "forge/phase.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "forge/json.h"
#include "forge/timeutil.h"
#include "forge/tracectx.h"
#include "forge/util.h"
#include "internal.h"

bool fg_phase_known(const struct fg_phase *p)
{
	return p->started_ms > 0 && p->ended_ms >= p->started_ms;
}

void fg_phase_add_to(cJSON *o, const struct fg_phase *p)
{
	char ts[FG_TIMESTAMP_LEN];

	if (!fg_phase_known(p))
		return;
	fg_time_rfc3339_ms_at(ts, p->started_ms);
	cJSON_AddStringToObject(o, "started_at", ts);
	fg_time_rfc3339_ms_at(ts, p->ended_ms);
	cJSON_AddStringToObject(o, "ended_at", ts);
}

void fg_phase_from(struct fg_phase *p, const cJSON *o)
{
	struct fg_phase t = { 0, 0 };

	p->started_ms = p->ended_ms = 0;
	if (fg_time_rfc3339_ms_parse(fg_json_str(o, "started_at"), &t.started_ms) < 0 ||
	    fg_time_rfc3339_ms_parse(fg_json_str(o, "ended_at"), &t.ended_ms) < 0 || !fg_phase_known(&t))
		return;
	*p = t;
}

bool fg_span_id_valid(const char *s)
{
	return fg_trace_hex_valid(s, FG_SPAN_ID_HEX);
}

bool fg_provider_valid(const char *s)
{
	static const char *const known[] = { "anthropic", "openai", "gcp.gemini" };

	return FG_NAME_INDEX(known, s, 0) >= 0;
}

void fg_agent_run_init(struct fg_agent_run *r)
{
	memset(r, 0, sizeof(*r));
	fg_usage_init(&r->usage);
}

cJSON *fg_agent_run_to_cjson(const struct fg_agent_run *r)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		abort();
	fg_phase_add_to(o, &r->t);
	fg_json_add_true_if(o, "failed", r->failed);
	if (!fg_usage_empty(&r->usage))
		cJSON_AddItemToObject(o, "usage", fg_usage_to_cjson(&r->usage));
	if (fg_span_id_valid(r->span_id))
		cJSON_AddStringToObject(o, "span_id", r->span_id);
	if (fg_provider_valid(r->provider))
		cJSON_AddStringToObject(o, "provider", r->provider);
	return o;
}

bool fg_agent_run_from(struct fg_agent_run *r, const cJSON *o)
{
	const char *s;

	fg_agent_run_init(r);
	if (!cJSON_IsObject(o))
		return false;
	fg_phase_from(&r->t, o);
	if (!fg_phase_known(&r->t))
		return false;
	r->failed = fg_json_true(o, "failed");
	fg_usage_from_cjson(&r->usage, fg_json_get(o, "usage"));
	s = fg_json_str(o, "span_id");
	if (fg_span_id_valid(s))
		fg__strlcpy(r->span_id, s, sizeof(r->span_id));
	s = fg_json_str(o, "provider");
	if (fg_provider_valid(s))
		fg__strlcpy(r->provider, s, sizeof(r->provider));
	return true;
}

bool fg_agent_runs_push(struct fg_agent_runs *rs, const struct fg_agent_run *run)
{
	if (rs->n >= FG_AGENT_RUNS_MAX)
		return false;
	rs->v[rs->n++] = *run;
	return true;
}

void fg_agent_runs_add_to(cJSON *o, const char *key, const struct fg_agent_runs *rs)
{
	cJSON *arr;

	if (!rs->n)
		return;
	arr = cJSON_AddArrayToObject(o, key);
	if (!arr)
		abort();
	for (size_t i = 0; i < rs->n; i++)
		cJSON_AddItemToArray(arr, fg_agent_run_to_cjson(&rs->v[i]));
}

void fg_agent_runs_from(struct fg_agent_runs *rs, const cJSON *arr)
{
	const cJSON *it;

	rs->n = 0;
	if (!cJSON_IsArray(arr))
		return;
	cJSON_ArrayForEach(it, arr)
		if (rs->n < FG_AGENT_RUNS_MAX && fg_agent_run_from(&rs->v[rs->n], it))
			rs->n++;
}
