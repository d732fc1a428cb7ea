/*
 * result.c - cycles of a run and the result file (see result.h).
 */
#include "result.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "forge/json.h"
#include "forge/text.h"
#include "forge/alloc.h"
#include "forge/exit.h"
#include "forge/frame.h"
#include "forge/fsutil.h"
#include "forge/num.h"
#include "internal_util.h"

void rn_cycles_init(struct rn_cycles *s)
{
	memset(s, 0, sizeof(*s));
	s->max_bytes = RN_CYCLES_MAX_BYTES;
}

size_t rn_cycles_test_bound(struct rn_cycles *s)
{
	s->max_bytes = (size_t)rn__test_bound("FORGE_TEST_CYCLES_MAX_BYTES", s->max_bytes);
	return s->max_bytes;
}

void rn_cycles_release(struct rn_cycles *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].c.skill);
		cJSON_Delete(s->v[i].obj);
	}
	free(s->v);
	rn_cycles_init(s);
}

/* Length of s as cJSON prints it between quotes: control characters take
 * up to six bytes (\u001b), '"' and '\\' two. */
static size_t json_len(const char *s)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += *p == '"' || *p == '\\' ? 2 : *p >= 0x20 ? 1 : strchr("\b\f\n\r\t", *p) ? 2 : 6;
	return n;
}

/*
 * What a cJSON tree at depth (its members are printed with that many tabs)
 * costs, as an upper bound of both the heap it holds (a node each, its key
 * and string) and the pretty-printed text it becomes in the result (tabs,
 * quotes, escapes, a number of at most 32 characters); *nodes counts its
 * nodes. The result reader's bounds derive from these (result.h). O(nodes).
 */
static size_t tree_cost(const cJSON *o, size_t depth, size_t *nodes)
{
	size_t n = 0;

	for (; o; o = o->next) {
		n += sizeof(*o) + 2 * depth + 40;
		if (o->string)
			n += json_len(o->string);
		if (o->valuestring)
			n += json_len(o->valuestring);
		++*nodes;
		n += tree_cost(o->child, depth + 1, nodes);
	}
	return n;
}

static struct rn_cycle_rec *slot(struct rn_cycles *s, int cycle)
{
	size_t i = 0;

	while (i < s->n && s->v[i].c.cycle < cycle)
		i++;
	if (i < s->n && s->v[i].c.cycle == cycle) {
		free(s->v[i].c.skill);
		cJSON_Delete(s->v[i].obj);
		s->bytes -= s->v[i].bytes;
		s->nodes -= s->v[i].nodes;
	} else {
		FG_ALLOC_GROW(s->v, s->n + 1, s->cap);
		memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(*s->v));
		s->n++;
		s->v[i].reports = 1;
	}
	return &s->v[i];
}

/* Fingerprint of the compact text of o, which is deleted. */
static uint64_t fingerprint(cJSON *o)
{
	char *text = cJSON_PrintUnformatted(o);
	uint64_t h;

	if (!text)
		abort();
	h = fg_hash64(text, strlen(text));
	cJSON_free(text);
	cJSON_Delete(o);
	return h;
}

static const struct rn_cycle_rec *find(const struct rn_cycles *s, int cycle)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].c.cycle == cycle)
			return &s->v[i];
	}
	return NULL;
}

enum rn_cycle_news rn_cycles_classify(const struct rn_cycles *s, const struct fg_cycle *c,
				      bool shortened, enum rn_source *first_source)
{
	const struct rn_cycle_rec *r = find(s, c->cycle);

	if (first_source)
		*first_source = r ? r->source : RN_SOURCE_NONE;
	if (!r)
		return RN_CYCLE_NEW;
	/* A shortened form is the same cycle when what it kept agrees: its
	 * feedback and optional fields are unknown, not different. */
	if (shortened || r->shortened) {
		if (fingerprint(fg_frame_cycle_min(c)) != r->h_min)
			return RN_CYCLE_REWRITE;
		return !shortened && r->shortened ? RN_CYCLE_FULLER : RN_CYCLE_SAME;
	}
	return fingerprint(fg_cycle_to_cjson(c)) == r->h_full ? RN_CYCLE_SAME : RN_CYCLE_REWRITE;
}

int rn_cycles_put(struct rn_cycles *s, const struct fg_cycle *c, bool shortened,
		  enum rn_source source)
{
	struct rn_cycle_rec *r = slot(s, c->cycle);
	const char *skill = c->skill ? c->skill : "";

	/* Only scalar fields are kept in the copy; the full content lives in obj. */
	fg_cycle_init(&r->c);
	r->c.cycle = c->cycle;
	r->c.max_cycles = c->max_cycles;
	r->c.j.verdict = c->j.verdict;
	r->c.stalled = c->stalled;
	r->c.synthetic = c->synthetic;
	r->c.over_budget = c->over_budget;
	r->c.usage = c->usage;
	r->c.elapsed_seconds = c->elapsed_seconds;
	r->shortened = shortened;
	r->source = source;
	r->h_min = fingerprint(fg_frame_cycle_min(c));
	r->h_full = shortened ? 0 : fingerprint(fg_cycle_to_cjson(c));
	r->obj = fg_cycle_to_cjson(c);
	r->nodes = 0;
	/* A cycle's members sit at depth 3 of the result: root, review_cycles, cycle. */
	r->bytes = tree_cost(r->obj, 3, &r->nodes) + strlen(skill) + 1;
	if (r->bytes > s->max_bytes - s->bytes || r->nodes > RN_CYCLES_MAX_NODES - s->nodes) {
		/* The tree was built to be measured; the content is dropped, the
		 * record stays so that the review state still counts the cycle. */
		cJSON_Delete(r->obj);
		r->obj = NULL;
		r->bytes = 0;
		r->nodes = 0;
		return 1;
	}
	r->c.skill = fg_xstrdup(skill);
	s->bytes += r->bytes;
	s->nodes += r->nodes;
	return 0;
}

unsigned *rn_cycles_reports(struct rn_cycles *s, int n)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].c.cycle == n)
			return &s->v[i].reports;
	return NULL;
}

size_t rn_cycles_dropped(const struct rn_cycles *s)
{
	size_t n = s->untracked;

	for (size_t i = 0; i < s->n; i++)
		n += !s->v[i].obj;
	return n;
}

bool rn_cycles_exhausted(const struct rn_cycles *s)
{
	struct fg_cycle *v = fg_xcalloc(s->n ? s->n : 1, sizeof(*v));
	bool r;

	for (size_t i = 0; i < s->n; i++)
		v[i] = s->v[i].c;
	r = fg_cycles_exhausted(v, s->n);
	free(v);
	return r;
}

enum fg_review_state rn_review_state(const struct rn_cycles *s, const struct fg_summary *summary)
{
	const struct fg_cycle *last;

	if (summary)
		return summary->state;
	if (s->n == 0)
		return FG_STATE_NO_REVIEW;
	if (rn_cycles_exhausted(s))
		return FG_STATE_EXHAUSTED;
	last = &s->v[s->n - 1].c;
	if (last->stalled)
		return FG_STATE_STALLED;
	if (last->over_budget)
		return FG_STATE_OVER_BUDGET;
	return last->j.verdict == FG_VERDICT_APPROVED ? FG_STATE_APPROVED : FG_STATE_FAILED;
}

enum fg_failure_cause rn_failure_cause(int exit_code, bool timed_out, bool runner_failed, int signal,
				       const struct fg_summary *summary)
{
	if (timed_out)
		return FG_CAUSE_TIMEOUT;
	if (runner_failed || exit_code == FG_EXIT_RUNTIME)
		return FG_CAUSE_ENGINE_ERROR;
	if (signal)
		return FG_CAUSE_INTERRUPTED;
	if (exit_code == FG_EXIT_OK || exit_code == FG_EXIT_EXHAUSTED)
		return FG_CAUSE_NONE;
	if (summary && summary->cause != FG_CAUSE_NONE)
		return summary->cause;
	if (exit_code == FG_EXIT_FAILED)
		return FG_CAUSE_WORKER_FAILED;
	if (exit_code == FG_EXIT_USAGE)
		return FG_CAUSE_CONFIG_ERROR;
	if (exit_code > FG_EXIT_SIGNAL_BASE)
		return FG_CAUSE_INTERRUPTED;
	return FG_CAUSE_ENGINE_ERROR;
}

bool rn_review_exhausted(enum fg_review_state state, const struct rn_cycles *s)
{
	/* A state without a review (or an approved one) is never exhausted,
	 * whatever cycle files stand in the directory: a result once said
	 * no review with review_exhausted true. */
	if (state == FG_STATE_NO_REVIEW || state == FG_STATE_DISABLED || state == FG_STATE_APPROVED)
		return false;
	return state == FG_STATE_EXHAUSTED || rn_cycles_exhausted(s);
}

/* {"watch": n, "poll": n, "sweep": n, "stream": n} */
static cJSON *by_source(const long *counts)
{
	cJSON *o = cJSON_CreateObject();

	for (int i = 0; i < RN_SOURCE_COUNT; i++)
		cJSON_AddNumberToObject(o, rn_source_name(i), counts ? (double)counts[i] : 0);
	return o;
}

char *rn_result_to_json(const struct rn_result *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = cJSON_CreateArray();
	char *out;

	cJSON_AddBoolToObject(o, "success", r->exit_code == 0);
	cJSON_AddNumberToObject(o, "exit_code", r->exit_code);
	fg_json_add_str_or_null(o, "error_message", r->error_message);
	fg_json_add_str_or_null(o, "step", r->step);
	fg_json_add_str_or_null(o, "skill", r->skill);
	fg_json_add_str_or_null(o, "task_key", r->task_key);
	fg_json_add_str_or_null(o, "run_id", r->run_id);
	fg_json_add_str_or_null(o, "engine", r->engine);
	cJSON_AddNumberToObject(o, "duration_seconds", (double)(long long)(r->duration_seconds * 1000.0) / 1000.0);
	/* References, not copies: the retained objects may reach
	 * RN_CYCLES_MAX_BYTES and printing needs memory of its own. */
	for (size_t i = 0; r->cycles && i < r->cycles->n; i++) {
		if (r->cycles->v[i].obj)
			cJSON_AddItemReferenceToArray(arr, r->cycles->v[i].obj);
	}
	cJSON_AddItemToObject(o, "review_cycles", arr);
	cJSON_AddBoolToObject(o, "review_exhausted", r->review_exhausted);
	cJSON_AddStringToObject(o, "review_state", fg_review_state_name(r->review_state));
	cJSON_AddNumberToObject(o, "stale_files_cleared", (double)r->stale_files_cleared);
	cJSON_AddNumberToObject(o, "sweep_caught", (double)r->sweep_caught);
	cJSON_AddItemToObject(o, "cycles_by_source", by_source(r->cycles_by_source));
	cJSON_AddNumberToObject(o, "forged_records", (double)r->forged_records);
	cJSON_AddItemToObject(o, "isolation", r->isolation ? fg_isolation_to_cjson(r->isolation) : cJSON_CreateNull());
	/* A blocked review: the questions only a person can answer. */
	if (r->nquestions)
		cJSON_AddItemToObject(o, "questions", fg_findings_to_json(r->questions, r->nquestions));
	/* An approval's advice, listed, not looped on: kept beside the state
	 * even when the approving cycle's own object was shortened or dropped. */
	if (r->nadvice)
		cJSON_AddItemToObject(o, "advice", fg_findings_to_json(r->advice, r->nadvice));
	if (r->usage)
		fg_usage_pair_add_to(o, r->usage);
	if (r->audit)
		cJSON_AddItemToObject(o, "audit", fg_audit_to_cjson(r->audit));
	/* Absent when nothing was dropped: a normal run's result is unchanged. */
	if (r->cycles && rn_cycles_dropped(r->cycles))
		cJSON_AddNumberToObject(o, "cycles_dropped", (double)rn_cycles_dropped(r->cycles));
	if (r->cause != FG_CAUSE_NONE)
		cJSON_AddItemToObject(o, "failure", fg_failure_to_cjson(r->cause, r->failure_reason));
	fg_json_add_str_if(o, "cycle_dir", r->cycle_dir);
	out = fg_json_print(o);
	cJSON_Delete(o);
	return out;
}

void rn_cycles_usage(const struct rn_cycles *s, struct fg_usage_pair *out)
{
	fg_usage_pair_init(out);
	for (size_t i = 0; i < s->n; i++)
		fg_usage_pair_add(out, &s->v[i].c.usage);
}

int rn_result_write(const char *path, const struct rn_result *r)
{
	char *json = rn_result_to_json(r);
	int ret = fg_write_atomic_path(path, json, strlen(json));

	free(json);
	return ret;
}
