/*
 * trace.h - a run's trace, built from the sealed records only, in the
 * OpenTelemetry GenAI semantic conventions (docs/guide/operations.md#traces).
 *
 * Spans (kind INTERNAL, all children of the workflow span):
 *   invoke_workflow forge-review      the run, from the runner's start to its
 *                                     result; its events: each record not
 *                                     believed (record_forged), never a span
 *   invoke_agent worker               each worker turn (a cycle's worker_run)
 *   execute_tool check NAME           each check of a cycle
 *   invoke_agent reviewer             each call of the single reviewer
 *   invoke_agent reviewer ROLE        each call of a panel role
 * Attributes: gen_ai.operation.name, gen_ai.agent.name (the span name's
 * subject), gen_ai.provider.name (from the output format), gen_ai.tool.name,
 * gen_ai.usage.input_tokens, .output_tokens, .cache_read.input_tokens (the
 * run's own usage), forge.step, forge.skill, forge.run_id, forge.cycle,
 * forge.verdict, forge.format, forge.no_change, forge.reask, forge.cost_usd;
 * the workflow span: forge.review_state, forge.exit_code, forge.cycles,
 * forge.outcome and the step's totals. A failed agent run or check has
 * status ERROR (error.type).
 *
 * An agent span's id is the span_id its sealed run names (the TRACEPARENT
 * the entrypoint gave that agent), so a CLI's own spans nest under it.
 *
 * Each cycle's spans leave as one batch when the cycle is first reported
 * (rn_trace_cycle); the workflow span at the end (rn_trace_finish). A batch
 * is one OTLP JSON document {"resourceSpans": [...]}, written as one line
 * to --trace-file and posted by the exporter (otlp.h).
 *
 * Protocol: rn_trace_init() (before the run's loop: it may fork the
 * exporter) -> rn_trace_traceparent() for the engine -> rn_trace_cycle() /
 * rn_trace_forged() on the loop -> rn_trace_finish() -> rn_trace_release().
 */
#ifndef RN_TRACE_H
#define RN_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "log.h"
#include "otlp.h"
#include "forge/audit.h"
#include "forge/cycle.h"
#include "forge/tracectx.h"
#include "forge/usage.h"

struct cJSON;

/* Distinct cycle numbers a run's trace has spans for (as the watch). */
#define RN_TRACE_CYCLES_MAX 1000

struct rn_trace_params {
	const char *step, *skill, *run_id, *task_key;   /* borrowed, for the run's life */
	const char *trace_file;                         /* --trace-file or NULL */
	struct rn_log *log;
};

struct rn_trace {
	bool on;                          /* spans are built (an exporter or a file) */
	struct rn_trace_params p;
	struct fg_trace_ctx ctx;          /* the trace; span_id: the workflow span */
	char parent[17];                  /* the caller's span (TRACEPARENT), "" none */
	char traceparent[FG_TRACEPARENT_LEN];
	int64_t started_ms;
	struct cJSON *resource;           /* owned: the resource object */
	struct cJSON *events;             /* owned: the workflow span's events */
	int seen[RN_TRACE_CYCLES_MAX];    /* cycle numbers with spans */
	size_t nseen;
	int file_fd;                      /* --trace-file, -1 none */
	bool file_failed;
	struct rn_otlp_config cfg;
	struct rn_otlp otlp;
	bool exporting;
};

/* The end of a run, for the workflow span. */
struct rn_trace_end {
	const char *review_state, *outcome;
	int exit_code;
	long cycles;
	const struct fg_usage_pair *usage;
};

/* Sets t up from p and the environment (OTEL_*, TRACEPARENT), opens the
 * trace file and starts the exporter; what cannot be used is logged (WARN)
 * once. t->on false: nothing is traced. Call before the run's loop. */
void rn_trace_init(struct rn_trace *t, const struct rn_trace_params *p);
/* The traceparent to hand the entrypoint (FORGE_TRACEPARENT), or NULL. */
const char *rn_trace_traceparent(const struct rn_trace *t);
/* The spans of a sealed cycle c (borrowed), once per cycle number. */
void rn_trace_cycle(struct rn_trace *t, const struct fg_cycle *c);
/* The spans of the sealed summary's audit a (borrowed): one
 * "invoke_agent audit" per reviewer call it recorded, in cycle `cycle`
 * (the approving one). Call once, before rn_trace_finish(). */
void rn_trace_audit(struct rn_trace *t, const struct fg_audit *a, int cycle);
/* A record not believed: an event on the workflow span. */
void rn_trace_forged(struct rn_trace *t, const char *file, const char *source, const char *reason);
/* The workflow span, then the end of the export (at most RN_OTLP_FINISH_MS;
 * a failure is one WARN trace_export_failed). */
void rn_trace_finish(struct rn_trace *t, const struct rn_trace_end *e);
void rn_trace_release(struct rn_trace *t);

/* The OTLP JSON document of t's resource with spans (owned by the caller:
 * added to the document), as one line (owned). For tests and the report. */
char *rn_trace_batch(const struct rn_trace *t, struct cJSON *spans);

#endif
