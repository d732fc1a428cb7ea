/*
 * events.h - log events shared by run and watch whose text and JSON shapes
 * differ (spec section 3): a detected cycle is
 *   text: review_cycle step=S skill=K cycle=1/3 verdict=rejected elapsed=45.2s
 *         source=watch file=F feedback="..."
 *   json: {"event":"review_cycle","step","skill","cycle","max_cycles","verdict",
 *          "elapsed_seconds","feedback","file","source", "run_id"?}
 * feedback is cut to at most RN_FEEDBACK_LOG_CHARS characters, "..." included
 * when cut (UTF-8 aware).
 */
#ifndef RN_EVENTS_H
#define RN_EVENTS_H

#include <stddef.h>

#include "log.h"
#include "cycle_report.h"
#include "forge/usage.h"

#define RN_FEEDBACK_LOG_CHARS 200
/* review_findings: at most this many findings per event (then a count),
 * each title and location cut to RN_FINDING_LOG_CHARS characters. */
#define RN_FINDINGS_LOG_MAX 50
#define RN_FINDING_LOG_CHARS 200

/*
 * audit (INFO; WARN when it disagreed or failed): the held-out audit of an
 * approved step, from the sealed summary:
 *   text: audit step=S skill=K outcome=disagreed verdict=rejected blocks=true
 *         cycles=3 findings=2 elapsed=12.3s cost_usd=0.04 feedback="..."
 *   json: {"event":"audit","step","skill","outcome","verdict","blocks",
 *          "cycles","findings","elapsed_seconds","cost_usd"?,"sample","draw",
 *          "reason"?,"feedback"}
 * feedback cut as a cycle's.
 */
struct fg_audit;
void rn_event_audit(struct rn_log *l, const char *step, const char *skill, int cycles,
		    const struct fg_audit *a);

/* Logs r as a review_cycle event at level. file is logged as r->name when
 * full_path is 0, else as dir/name. */
void rn_event_cycle(struct rn_log *l, enum rn_log_level level, const struct rn_cycle_report *r,
		    int full_path);

/*
 * record_forged (WARN): a record of the run (a cycle file, the summary, a
 * frame) that is not believed, with step, file, source, reason (unsealed,
 * bad_seal, replayed: fg_seal_status_name()) and cycle_dir. What the record
 * claims is never logged as if it were a cycle.
 */
void rn_event_forged(struct rn_log *l, const char *step, const char *dir, const char *file,
		     enum rn_source source, enum fg_seal_status seal);

/*
 * Logs the structured findings of r's cycle as one review_findings event
 * (nothing when the cycle carries no findings array):
 *   text: review_findings step=S skill=K cycle=2 count=3 shown=3
 *         findings="[security] BLOCKING src/a.c:7 Title | [default] NOTE - Other"
 *   json: {"event":"review_findings","step","skill","cycle","count","shown",
 *          "findings":[{"role","severity","location","title"}, ...]}
 * count is the number of findings, shown how many are listed (at most
 * RN_FINDINGS_LOG_MAX, blocking first in the cycle's order); role is
 * "default" for a single reviewer; location is "path:line", "path" or "-".
 */
void rn_event_findings(struct rn_log *l, enum rn_log_level level, const struct rn_cycle_report *r);

/*
 * verdict_unparsed (WARN) when r's cycle is a rejection because the reviewer
 * printed no verdict the parser knows (format none, feedback
 * FG_VERDICT_UNPARSED_FEEDBACK, not synthetic): such cycles looked like real
 * rejections ("LGTM" gave two of them and `exhausted`). Names the cycle, the
 * reviewer's raw log (review_cycle_N.reviewer.log) and the words expected.
 * Nothing for other cycles. full_path as for rn_event_cycle().
 */
void rn_event_verdict_unparsed(struct rn_log *l, const struct rn_cycle_report *r, int full_path);

/*
 * reviewer_changed_workspace (WARN) when r's cycle says its reviewer changed
 * files (cycle field reviewer_changed: the review failed): step, skill,
 * cycle, count and the first paths. Nothing for other cycles.
 */
void rn_event_reviewer_changed(struct rn_log *l, const struct rn_cycle_report *r);

/*
 * cost_invalid (WARN), once per role of u whose reported cost was refused
 * (usage.h: above FG_USAGE_COST_MAX US dollars, negative or not finite; it
 * counts as not reported: null in the result, nothing in the metrics):
 * step, file (a cycle file, review_summary.json), source (watch, poll,
 * sweep, stream, or summary for the summary file), role, cost_usd (as
 * reported; null in JSON when not finite) and limit. Nothing when no cost
 * was refused.
 */
void rn_event_cost_invalid(struct rn_log *l, const char *step, const char *file,
			   const char *source, const struct fg_usage_pair *u);

/* Owned copy of s if it has at most max_chars UTF-8 characters; else its
 * first max_chars - 3 characters followed by "..." (max_chars in all). */
char *rn_utf8_prefix(const char *s, size_t max_chars);

#endif
