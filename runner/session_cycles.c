/*
 * session_cycles.c - the sink of a run's cycles (session_internal.h):
 * whichever source reports a cycle (the watch, the poll net, the sweep, the
 * stream), it is classified against the run's one table (rn_cycles: new,
 * rewritten, the same, a fuller form of a shortened frame), then stored,
 * logged, counted in the metrics and recorded once.
 */
#include "session_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events.h"
#include "output.h"
#include "reap.h"
#include "watch.h"
#include "forge/alloc.h"
#include "forge/exit.h"
#include "forge/frame.h"
#include "forge/fsutil.h"
#include "stream.h"

/* ---- cycles ---- */

/* The label of a check name read from a cycle file (the sandbox's): the
 * first FG_CHECKS_MAX distinct names of the run (review.md allows no
 * more), "other" after, so rewritten files cannot grow the series. */
static const char *check_label(struct session *s, const char *name)
{
	for (size_t i = 0; i < s->nchecks; i++)
		if (!strcmp(s->checks[i], name))
			return s->checks[i];
	if (s->nchecks == FG_CHECKS_MAX)
		return "other";
	snprintf(s->checks[s->nchecks], sizeof(s->checks[0]), "%s", name);
	return s->checks[s->nchecks++];
}

/* Each check result of the cycle counts once. */
static void observe_checks(struct session *s, const char *step, const struct fg_cycle *c)
{
	for (size_t i = 0; i < c->ev.nchecks; i++) {
		const struct fg_check_result *k = &c->ev.checks[i];

		rn_metrics_observe_check(s->p->metrics, s->p->skill, step, check_label(s, k->name),
					 k->exit_code == 0 ? "passed" : k->timed_out ? "timed_out" : "failed");
	}
}

/* A panel's role verdicts: each review made in this cycle counts once (a
 * review that stands from an earlier cycle was counted then). */
static void observe_roles(struct rn_metrics *m, const char *skill, const char *step,
			  const struct fg_cycle *c)
{
	for (size_t i = 0; i < c->nreviews; i++) {
		const struct fg_review *r = &c->reviews[i];

		if (!r->from_cycle)
			rn_metrics_observe_role(m, skill, step, r->role,
						r->failed ? "failed" : fg_role_verdict_name(fg_review_verdict(r)));
	}
}

/* Keeps the content for the result, as first reported by source; the
 * first cycle_limit is logged. */
static void store(struct session *s, const struct rn_cycle_report *r, enum rn_source source)
{
	if (rn_cycles_put(s->p->cycles, r->cycle, r->truncated, source) && !s->budget_logged) {
		s->budget_logged = 1;
		rn_log(s->p->log, RN_LOG_WARN, "cycle_limit", RN_LS("dir", r->dir),
		       RN_LS("step", r->step), RN_LS("file", r->name), RN_LS("limit", "retained_bytes"),
		       RN_LI("max", (long long)s->p->cycles->max_bytes));
	}
}

static void record(struct session *s, const struct rn_cycle_report *r)
{
	const struct rn_run_config *cfg = s->p->cfg;

	if (cfg->record == RN_RECORD_LOG) {
		rn_log(s->p->log, RN_LOG_INFO, "cycle_recorded", RN_LS("file", r->name),
		       RN_LS("content", r->raw));
	} else if (cfg->record == RN_RECORD_COPY) {
		int e = rn_record_copy(cfg->recording_dir, cfg->step, s->p->run_id, r->name, r->raw,
				       r->raw_len);

		if (e)
			rn_log(s->p->log, RN_LOG_WARN, "record_error", RN_LS("file", r->name),
			       RN_LS("error", strerror(-e)));
	}
}

/* A cycle another source reported first (debug: cycle_seen_again). The
 * whole content of one the stream only had shortened replaces it silently. */
static void seen_again(struct session *s, const struct rn_cycle_report *r,
		       enum rn_source first_source, enum rn_cycle_news news)
{
	rn_log(s->p->log, RN_LOG_DEBUG, "cycle_seen_again", RN_LS("step", r->step),
	       RN_LS("file", r->name), RN_LS("source", rn_source_name(r->source)),
	       RN_LS("first_source",
		     first_source == RN_SOURCE_NONE ? "" : rn_source_name(first_source)));
	if (news == RN_CYCLE_FULLER) {
		store(s, r, first_source);
		record(s, r);
	}
}

/* What rejected cycle c: its checks (no reviewer ran), a turn that changed
 * nothing, the loop's own marker (a failed retry, a spent budget), or the
 * reviewer. Apart, so an alert on reviewers is not one on a failing lint. */
static const char *rejected_by(const struct fg_cycle *c)
{
	if (c->j.has_format && c->j.format == FG_FORMAT_CHECKS)
		return "checks";
	if (c->ev.no_change)
		return "no_change";
	if (c->synthetic)
		return "synthetic";
	return "reviewer";
}

/* Every source delivers here (watch.c's inotify, poll and sweep, and
 * stream.c): one cycle is reported once, whichever saw it first. */
static void on_cycle(struct session *s, const struct rn_cycle_report *r)
{
	const struct rn_run_config *cfg = s->p->cfg;
	const struct fg_cycle *c = r->cycle;
	enum rn_source first_source;
	enum rn_cycle_news news;
	unsigned *reports;

	/* Only what the entrypoint sealed is a cycle. */
	if (r->seal != FG_SEAL_OK) {
		rn__session_forged(s, r->name, r->source, r->seal);
		return;
	}
	news = rn_cycles_classify(s->p->cycles, c, r->truncated, &first_source);
	reports = rn_cycles_reports(s->p->cycles, c->cycle);

	if (news == RN_CYCLE_SAME || news == RN_CYCLE_FULLER) {
		seen_again(s, r, first_source, news);
		return;
	}
	/* A rewrite past the limit is neither reported, nor counted, nor kept. */
	if (reports && !rn_cycle_report_admit(s->p->log, reports, r))
		return;
	rn_event_cycle(s->p->log, RN_LOG_INFO, r, 0);
	rn_event_verdict_unparsed(s->p->log, r, 0);
	rn_event_cost_invalid(s->p->log, r->step, r->name, rn_source_name(r->source), &c->usage);
	rn_event_findings(s->p->log, RN_LOG_INFO, r);
	rn_event_reviewer_changed(s->p->log, r);
	record(s, r);
	/* One skill label per run, decided before any cycle (cmd_run.c): a
	 * label taken from the sandbox's files would let rewritten files with
	 * ever new skills grow the series without bound, and make the cycle
	 * and exhaustion metrics of one run disagree. */
	rn_metrics_observe_cycle(s->p->metrics, s->p->skill, cfg->step,
				 fg_verdict_kind_name(c->j.verdict), c->elapsed_seconds);
	if (c->j.verdict == FG_VERDICT_REJECTED)
		rn_metrics_add_rejection(s->p->metrics, s->p->skill, cfg->step, rejected_by(c));
	observe_roles(s->p->metrics, s->p->skill, cfg->step, c);
	observe_checks(s, cfg->step, c);
	store(s, r, r->source);
	if (s->p->trace)
		rn_trace_cycle(s->p->trace, c);
	s->res->cycles_by_source[r->source]++;
	if (r->source == RN_SOURCE_SWEEP)
		s->res->sweep_caught++;
}

void rn__session_watch_cycle(struct rn_watch *w, const struct rn_cycle_report *r)
{
	on_cycle(w->opts.data, r);
}

void rn__session_stream_cycle(void *data, const struct rn_cycle_report *r)
{
	on_cycle(data, r);
}

/* The summary frame: how the review ended, for a run whose workspace the
 * runner cannot read (the file, when readable, says the same). All of it:
 * the usage (the result's usage, the metrics' agent series, the report's
 * cost), the budget, the questions and the audit too, so a run on a volume reports
 * what a bind-mount run does (the usage was once lost there). */
void rn__session_forged(struct session *s, const char *file, enum rn_source source,
			enum fg_seal_status seal)
{
	enum fg_seal_status why = seal == FG_SEAL_UNVERIFIED ? FG_SEAL_UNSEALED : seal;

	rn_event_forged(s->p->log, s->p->cfg->step, s->p->step_dir, file, source, why);
	if (s->p->trace)
		rn_trace_forged(s->p->trace, file, rn_source_name(source), fg_seal_status_name(why));
	rn_metrics_add_forged(s->p->metrics, s->p->skill, s->p->cfg->step, rn_source_name(source));
	s->res->forged_records++;
}

void rn__session_stream_summary(void *data, const struct fg_summary *sum, enum fg_seal_status seal)
{
	struct session *s = data;
	struct fg_summary *copy = s->res->stream_summary;

	if (seal != FG_SEAL_OK) {
		rn__session_forged(s, FG_SUMMARY_FILE, RN_SOURCE_STREAM, seal);
		return;
	}
	rn_event_cost_invalid(s->p->log, s->p->cfg->step, FG_SUMMARY_FILE, "stream", &sum->usage);
	if (!copy)
		copy = s->res->stream_summary = fg_xcalloc(1, sizeof(*copy));
	fg_summary_release(copy);
	copy->state = sum->state;
	copy->cycles = sum->cycles;
	copy->max_cycles = sum->max_cycles;
	copy->step = fg_xstrdup(sum->step);
	copy->skill = fg_xstrdup(sum->skill);
	copy->task_key = fg_xstrdup(sum->task_key);
	copy->run_id = fg_xstrdup(sum->run_id);
	copy->review_md = sum->review_md ? fg_xstrdup(sum->review_md) : NULL;
	copy->usage = sum->usage;
	copy->max_cost_usd = sum->max_cost_usd;
	copy->t = sum->t;
	for (size_t i = 0; i < sum->nquestions; i++)
		fg_summary_add_question(copy, &sum->questions[i]);
	if (sum->audit)
		fg_summary_set_audit(copy, sum->audit);
}
