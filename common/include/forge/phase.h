/*
 * phase.h - when each phase of a step began and ended: every agent run
 * (a worker turn, each reviewer call, a re-ask included) and every check,
 * as the cycle files and the summary record them (docs/reference/
 * cycle-files.md#phase-times).
 *
 * JSON: "started_at" and "ended_at", UTC RFC 3339 with milliseconds
 * ("2026-01-15T10:30:00.125Z"), written only when known. An agent run is
 * {started_at, ended_at, failed: true (only when true), usage: U (only
 * when it reported any, usage.h), span_id: 16 lowercase hex digits (only
 * in a traced run: the span the run's TRACEPARENT named, trace.h),
 * provider: gen_ai.provider.name (only when its output format names one)}.
 * Reading is lenient like every optional member: a time that is not of
 * that exact shape, a span id that is not 16 lowercase hex digits (or is
 * all zeros) and an unknown provider count as absent; at most
 * FG_AGENT_RUNS_MAX runs of a list are kept.
 *
 * Tier: domain (util.h). Uses json, usage, timeutil and tracectx.
 */
#ifndef FORGE_PHASE_H
#define FORGE_PHASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "forge/usage.h"

struct cJSON;

/* Calls of one reviewer in one cycle: its answer and at most two re-asks
 * (no verdict, then no evidence), with room to spare. */
#define FG_AGENT_RUNS_MAX 4
#define FG_SPAN_ID_HEX 16
#define FG_PROVIDER_MAX 24

/* A phase: Unix milliseconds, 0 when not known. */
struct fg_phase {
	int64_t started_ms;
	int64_t ended_ms;
};

struct fg_agent_run {
	struct fg_phase t;
	bool failed;
	struct fg_usage usage;
	char span_id[FG_SPAN_ID_HEX + 1];     /* "" when none */
	char provider[FG_PROVIDER_MAX];       /* "" when none */
};

/* The calls of one role in one cycle, in order. */
struct fg_agent_runs {
	size_t n;
	struct fg_agent_run v[FG_AGENT_RUNS_MAX];
};

/* True when both ends are known. */
bool fg_phase_known(const struct fg_phase *p);
/* Adds "started_at" and "ended_at" to o (borrowed) when p is known. */
void fg_phase_add_to(struct cJSON *o, const struct fg_phase *p);
/* Reads o's "started_at" and "ended_at" (both, or p is left unknown). */
void fg_phase_from(struct fg_phase *p, const struct cJSON *o);

void fg_agent_run_init(struct fg_agent_run *r);
/* The run as a new object (owned). */
struct cJSON *fg_agent_run_to_cjson(const struct fg_agent_run *r);
/* Fills r (initialised first) from o (borrowed): true when o is an object
 * with a known phase, else false (r left initialised). */
bool fg_agent_run_from(struct fg_agent_run *r, const struct cJSON *o);

/* Appends a copy of run; past FG_AGENT_RUNS_MAX it is dropped (false). */
bool fg_agent_runs_push(struct fg_agent_runs *rs, const struct fg_agent_run *run);
/* Adds key: [runs] to o when rs holds any. */
void fg_agent_runs_add_to(struct cJSON *o, const char *key, const struct fg_agent_runs *rs);
/* Reads the array arr (borrowed; not an array: none) into rs (emptied
 * first), skipping entries fg_agent_run_from() refuses. */
void fg_agent_runs_from(struct fg_agent_runs *rs, const struct cJSON *arr);

/* True when s is 16 lowercase hex digits, not all zeros (a W3C span id). */
bool fg_span_id_valid(const char *s);
/* gen_ai.provider.name of a known provider ("anthropic", "openai",
 * "gcp.gemini"): true when s is one. */
bool fg_provider_valid(const char *s);

#endif
