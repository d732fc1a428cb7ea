/*
 * metrics.h - Prometheus metrics of review cycles and runner health.
 *
 * Metric families (text exposition format 0.0.4):
 *   forge_review_agent_cost_usd_total{skill,step,role}  counter (US dollars the agents reported)
 *   forge_review_agent_tokens_total{skill,step,role,kind}  counter, kind one of
 *                                                       input|output|cached_input|reasoning
 *   forge_review_audits_total{skill,step,outcome}       counter, the audit of an approved step;
 *                                                       outcome agreed|disagreed|failed|skipped
 *   forge_review_cycles_total{skill,step}               counter
 *   forge_review_verdicts_total{skill,step,verdict}     counter
 *   forge_review_duration_seconds{skill,step}           histogram, buckets
 *                                                       1 5 10 30 60 120 300 600 +Inf
 *   forge_review_exhausted_total{skill,step}            counter
 *   forge_review_role_verdicts_total{skill,step,role,verdict}
 *                                                       counter, a panel's reviews by role;
 *                                                       verdict approved|rejected|out_of_scope|failed
 *   forge_review_sweep_caught_total{skill,step}         counter (cycles seen only by the final sweep)
 *   forge_runner_forged_records_total{skill,step,source} counter (records without a valid
 *                                                       seal: record_forged)
 *   forge_review_rejections_total{skill,step,by}        counter, rejected cycles by what
 *                                                       rejected them: reviewer|checks|no_change|synthetic
 *   forge_runner_runs_total{step,outcome,skill,engine}  counter, outcome a review state or
 *                                                       timeout|error (skill and engine read
 *                                                       as "" from a file written before them)
 *   forge_runner_run_duration_seconds{skill,step,engine} histogram, buckets
 *                                                       10 30 60 300 600 1800 3600 7200 +Inf
 *   forge_runner_last_success_timestamp_seconds{skill,step} gauge (merged: the later time)
 *
 * Protocol: rn_metrics_init() -> rn_metrics_*() observations during a run ->
 * rn_metrics_merge_file() once at the end (adds this run's values to the
 * ones already in the file, under an exclusive lock, written atomically) ->
 * rn_metrics_release(). Label values are escaped per the exposition format.
 * Not thread-safe; call from the loop thread.
 */
#ifndef RN_METRICS_H
#define RN_METRICS_H

#include <stddef.h>

#include "forge/buf.h"
#include "forge/usage.h"

struct rn_metric_series;

struct rn_metrics {
	struct rn_metric_series *series;  /* owned; opaque to callers */
	size_t n;
	size_t cap;
};

void rn_metrics_init(struct rn_metrics *m);
void rn_metrics_release(struct rn_metrics *m);

/* One detected cycle: cycles_total, verdicts_total{verdict} and the duration histogram.
 * verdict is "approved" or "rejected". Strings are borrowed (copied). */
void rn_metrics_observe_cycle(struct rn_metrics *m, const char *skill, const char *step,
			      const char *verdict, double elapsed_seconds);
/* Adds 1 to forge_review_role_verdicts_total{skill,step,role,verdict}.
 * Strings are borrowed (copied). */
void rn_metrics_observe_role(struct rn_metrics *m, const char *skill, const char *step,
			     const char *role, const char *verdict);
/* Adds 1 to forge_review_check_results_total{skill,step,check,outcome}.
 * Strings are borrowed (copied). */
void rn_metrics_observe_check(struct rn_metrics *m, const char *skill, const char *step,
			      const char *check, const char *outcome);
/* Adds n to forge_review_sweep_caught_total. */
void rn_metrics_add_sweep_caught(struct rn_metrics *m, const char *skill, const char *step, unsigned n);
/* Adds 1 to forge_review_audits_total{skill,step,outcome}. */
void rn_metrics_add_audit(struct rn_metrics *m, const char *skill, const char *step, const char *outcome);
/* Adds 1 to forge_review_exhausted_total. */
void rn_metrics_add_exhausted(struct rn_metrics *m, const char *skill, const char *step);
/* Adds 1 to forge_runner_forged_records_total{skill,step,source}. */
void rn_metrics_add_forged(struct rn_metrics *m, const char *skill, const char *step,
			   const char *source);
/* Adds 1 to forge_review_rejections_total{skill,step,by}. */
void rn_metrics_add_rejection(struct rn_metrics *m, const char *skill, const char *step, const char *by);

/* One run, for rn_metrics_add_run(); strings borrowed. */
struct rn_metrics_run {
	const char *skill, *step, *engine, *outcome;
	double seconds;          /* the run's wall time; < 0: not known, not observed */
	double succeeded_at;     /* Unix time when the run succeeded, else 0 */
};
/* Adds 1 to forge_runner_runs_total{step,outcome,skill,engine}, observes
 * the run duration and, when it succeeded, sets the step's last success. */
void rn_metrics_add_run(struct rn_metrics *m, const struct rn_metrics_run *r);

/* Adds one role's usage (role "worker" or "reviewer") to the agent token
 * and cost counters; fields the agents did not report add nothing (no
 * series is created for them). */
void rn_metrics_add_usage(struct rn_metrics *m, const char *skill, const char *step, const char *role,
			  const struct fg_usage *u);

/* Renders every family (with # HELP and # TYPE) into out. 0 or -E2BIG. */
int rn_metrics_render(const struct rn_metrics *m, struct fg_buf *out);

/*
 * Merges m into the textfile at path: takes an exclusive flock on
 * "path.lock", parses the existing file (if any; families it does not know
 * are kept as they are), adds m's counters and histograms, writes the result
 * atomically (temp + fsync + rename) and unlocks. Two runners sharing the
 * file never lose an update. Returns 0, or a negative errno with err filled
 * (a corrupt existing file is -EINVAL and is left untouched).
 */
int rn_metrics_merge_file(const struct rn_metrics *m, const char *path, char *err, size_t errlen);

#endif
