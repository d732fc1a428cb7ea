/*
 * usage.h - what an agent run consumed, as its CLI reported it.
 *
 * Fields: input_tokens (every prompt token the model read, the cached ones
 * included), output_tokens (every token the model generated, its thinking
 * included: what is billed as output), cached_input_tokens (the part of
 * input_tokens served from a cache), cost_usd, turns, duration_ms,
 * reasoning_tokens (the part of output_tokens the model spent thinking:
 * counted once, in output_tokens, and named here; null when the CLI does
 * not tell them apart). Each field is either
 * reported or absent: `have` holds one FG_USAGE_* bit per reported field.
 * Nothing is invented: an absent field is written as JSON null and never
 * counts as 0; a sum of two usages has a field when either had it.
 *
 * JSON shape: {"input_tokens": int|null, "output_tokens": int|null,
 * "cached_input_tokens": int|null, "cost_usd": number|null,
 * "turns": int|null, "duration_ms": int|null, "reasoning_tokens": int|null}.
 * A reader takes each field
 * that is a finite number >= 0 (integers for the counts) and treats any
 * other value as absent; it never fails.
 *
 * A cost is a sandbox's word: one agent run, or the sum a cycle or the
 * summary holds, above FG_USAGE_COST_MAX US dollars is a lie (two runs
 * reporting total_cost_usd 1e308 left the cost counter at +Inf for
 * good). Such a cost, and a negative or non-finite one, is refused: absent
 * (written as null, counted nowhere), its bit set in `refused` and its value
 * kept in refused_cost_usd, so whoever read it can say so (the entrypoint's
 * warning, the runner's cost_invalid event). A sum of accepted costs stays
 * finite (at most FG_USAGE_COST_MAX per run).
 */
#ifndef FORGE_USAGE_H
#define FORGE_USAGE_H

#include <stdbool.h>
#include <stdint.h>

struct cJSON;

enum fg_usage_field {
	FG_USAGE_INPUT = 1u << 0,
	FG_USAGE_OUTPUT = 1u << 1,
	FG_USAGE_CACHED = 1u << 2,
	FG_USAGE_COST = 1u << 3,
	FG_USAGE_TURNS = 1u << 4,
	FG_USAGE_DURATION = 1u << 5,
	FG_USAGE_REASONING = 1u << 6
};

/* Counts are capped at 2^53 so every value survives a JSON double. */
#define FG_USAGE_COUNT_MAX 9007199254740992.0
/* The most a cost may be, in US dollars (see above). */
#define FG_USAGE_COST_MAX 1e6

struct fg_usage {
	unsigned have;                /* FG_USAGE_* bits of the reported fields */
	int64_t input_tokens;
	int64_t output_tokens;
	int64_t cached_input_tokens;
	double cost_usd;
	int64_t turns;
	int64_t duration_ms;
	int64_t reasoning_tokens;
	unsigned refused;             /* FG_USAGE_COST when a reported cost was refused */
	double refused_cost_usd;      /* that cost, as reported */
};

/* Nothing reported. */
void fg_usage_init(struct fg_usage *u);
/* True when no field is reported. */
bool fg_usage_empty(const struct fg_usage *u);
/* Sets one count field (FG_USAGE_INPUT, _OUTPUT, _CACHED, _TURNS,
 * _DURATION, _REASONING) to v; a negative or non-finite v leaves it absent. */
void fg_usage_set(struct fg_usage *u, enum fg_usage_field f, double v);
/* Sets cost_usd. NAN (not reported) leaves it absent; a negative, infinite
 * or above FG_USAGE_COST_MAX value leaves it absent and is refused (above). */
void fg_usage_set_cost(struct fg_usage *u, double usd);
/* total += u, field by field; a field absent from both stays absent. A
 * refusal in u is kept in total. */
void fg_usage_add(struct fg_usage *total, const struct fg_usage *u);

/* The JSON object of the header (owned by the caller; never NULL). */
struct cJSON *fg_usage_to_cjson(const struct fg_usage *u);
/* Fills u from a JSON object (borrowed; NULL or not an object: nothing
 * reported), lenient as the header says. */
void fg_usage_from_cjson(struct fg_usage *u, const struct cJSON *o);

/*
 * A role pair as cycle files, the summary and the result carry it:
 * {"worker": usage, "reviewer": usage}; a role with nothing reported is
 * left out, and the pair is omitted by writers when both are empty.
 */
struct fg_usage_pair {
	struct fg_usage worker;
	struct fg_usage reviewer;
};

void fg_usage_pair_init(struct fg_usage_pair *p);
bool fg_usage_pair_empty(const struct fg_usage_pair *p);
void fg_usage_pair_add(struct fg_usage_pair *total, const struct fg_usage_pair *p);
/* Adds the pair under "usage" to o when it is not empty. */
void fg_usage_pair_add_to(struct cJSON *o, const struct fg_usage_pair *p);
/* Reads o's "usage" member (absent or malformed: empty pair). */
void fg_usage_pair_from(struct fg_usage_pair *p, const struct cJSON *o);
/* Reported cost of both roles: *usd set and true when either reported one. */
bool fg_usage_pair_cost(const struct fg_usage_pair *p, double *usd);

#endif
