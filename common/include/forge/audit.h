/*
 * audit.h - the held-out audit of an approved step (review.md `audit:`;
 * docs/guide/auto-review.md, "The audit"): what the summary and the
 * result record of it, and whether a run is audited at all.
 *
 * Once the loop approved, one more reviewer run (FORGE_REVIEWER_ROLE=audit)
 * looks at the final workspace with none of the loop's history. Its record,
 * in review_summary.json and the runner's result as "audit":
 *   {"outcome": "agreed"|"disagreed"|"failed"|"skipped",
 *    "verdict": "approved"|"rejected"|null, "feedback": string,
 *    "findings": [...], "usage": usage|null, "cost_usd": number|null,
 *    "elapsed_seconds": number, "sample": number, "draw": number,
 *    "blocks": bool, "reason": string|null, "reviewer_log": string|null}
 * agreed: the audit approved too; disagreed: it rejected; failed: it could
 * not give a verdict (the approval stands); skipped: it did not run, reason
 * says why (not sampled, or it would pass the budget).
 *
 * Sampling is a pure function of the run id, the step and the skill
 * (fg_audit_draw()), so the same --run-id decides the same everywhere.
 * Every text is bounded (FG_AUDIT_FEEDBACK_MAX, FG_AUDIT_FINDINGS_MAX) so
 * the record fits in the summary (FG_SUMMARY_MAX_BYTES) and its frame.
 */
#ifndef FORGE_AUDIT_H
#define FORGE_AUDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "forge/phase.h"
#include "forge/usage.h"
#include "forge/verdict.h"

struct cJSON;

#define FG_AUDIT_FEEDBACK_MAX 4096
#define FG_AUDIT_FINDINGS_MAX 20
#define FG_AUDIT_REASON_MAX 512
#define FG_AUDIT_TITLE_MAX 200
/* The panel role name the audit runs under (FORGE_REVIEWER_ROLE, {role});
 * no panel role may take it. */
#define FG_AUDIT_ROLE "audit"
#define FG_AUDIT_LOG "review_audit.reviewer.log"
#define FG_AUDIT_DIFF "review_audit.diff"

enum fg_audit_outcome {
	FG_AUDIT_AGREED,
	FG_AUDIT_DISAGREED,
	FG_AUDIT_FAILED,
	FG_AUDIT_SKIPPED
};
#define FG_AUDIT_OUTCOME_COUNT (FG_AUDIT_SKIPPED + 1)

struct fg_audit {
	enum fg_audit_outcome outcome;
	bool has_verdict;               /* the audit gave one (agreed, disagreed) */
	enum fg_verdict_kind verdict;
	char *feedback;                 /* owned, "" when none (cut to FG_AUDIT_FEEDBACK_MAX) */
	struct fg_finding *findings;    /* owned, at most FG_AUDIT_FINDINGS_MAX */
	size_t nfindings;
	struct fg_usage usage;          /* what its runs reported */
	struct fg_agent_runs runs;      /* its reviewer calls: times, span ids ("runs") */
	double elapsed_seconds;
	double sample;                  /* review.md's sample */
	double draw;                    /* fg_audit_draw() of the run */
	bool blocks;                    /* review.md's blocks */
	char *reason;                   /* owned or NULL: why skipped or failed */
	char *reviewer_log;             /* owned or NULL: FG_AUDIT_LOG when written */
};

/* "agreed", "disagreed", "failed", "skipped"; "failed" out of range. */
const char *fg_audit_outcome_name(enum fg_audit_outcome o);
/* 0, or -EINVAL with *out untouched. */
int fg_audit_outcome_parse(const char *s, enum fg_audit_outcome *out);

void fg_audit_init(struct fg_audit *a);
void fg_audit_release(struct fg_audit *a);
/* A deep copy of src into dst (initialised; released first). */
void fg_audit_copy(struct fg_audit *dst, const struct fg_audit *src);
/* Sets a's verdict, feedback and findings from j (borrowed), bounded as
 * the header says; the outcome follows the verdict. */
void fg_audit_take_judgement(struct fg_audit *a, const struct fg_judgement *j);
/* Sets a->reason to a copy of why, cut to FG_AUDIT_REASON_MAX. */
void fg_audit_set_reason(struct fg_audit *a, const char *why);

/* The record as a new JSON object (owned). */
struct cJSON *fg_audit_to_cjson(const struct fg_audit *a);
/* Reads o (borrowed) into a (released first): 0, or -EINVAL when o is no
 * object or has no valid outcome (a is then empty, outcome skipped). */
int fg_audit_from_cjson(struct fg_audit *a, const struct cJSON *o);

/*
 * The run's draw in [0, 1): the FNV-1a 64-bit hash of
 * "RUN_ID\nSTEP\nSKILL", its top 53 bits over 2^53. A run is audited when
 * draw < sample (sample 1: always; 0: never). Strings borrowed, NULL as "".
 */
double fg_audit_draw(const char *run_id, const char *step, const char *skill);

#endif
