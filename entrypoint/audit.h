/*
 * audit.h - the held-out audit, a stage of the loop (stage.h): once the
 * review loop approved, one more reviewer run that sees none of the loop's
 * history (review.md `audit:`, forge/audit.h; docs/guide/auto-review.md,
 * "The audit"). This file owns the decision to audit (sample, budget),
 * the audit's prompts and the judgement of its answer into its record.
 *
 * What the audit gets: the task (from the task file, never from the
 * worker), the review.md body and its audit instructions file, the step's
 * whole change set since it began (review_audit.diff in a git workspace)
 * and the checks of the approving cycle, on the final workspace. What it
 * never gets: the loop's feedback, its verdicts, the reviewer's or the
 * worker's words. It runs FORGE_REVIEWER_CMD with FORGE_ROLE=reviewer,
 * FORGE_REVIEWER_ROLE=audit, FORGE_CYCLE the approving cycle; its raw
 * output goes to review_audit.reviewer.log. The worker never sees what it
 * says: there is no retry.
 *
 * Protocol: ep_audit_step() once, when the loop approved (before the
 * summary, which carries the audit's record), its input's history ending
 * in the approving cycle; the caller adds out->spent to the step's totals
 * and frees out->audit (fg_audit_release, free) at the end.
 */
#ifndef EP_AUDIT_H
#define EP_AUDIT_H

#include "stage.h"
#include "tracker.h"
#include "forge/audit.h"

/* What the audit stage returns. */
struct ep_audit_out {
	struct fg_audit *audit;      /* owned or NULL: the audit's record, once it was decided */
	struct fg_usage spent;       /* the usage of its runs, also of one that was stopped */
	double elapsed;              /* seconds of its run; < 0 when it did not run to the end */
};

/*
 * Decides and runs the audit, when review.md has audit: (else returns 0
 * and out->audit stays NULL): skipped when the run is not sampled
 * (fg_audit_draw() >= sample) or when its estimated cost would pass
 * max_cost_usd; else the reviewer's run judged (agreed, disagreed, failed;
 * an audit that changed the workspace, seen through tr, failed). out is
 * initialised here. Returns 1 when the audit disagreed and blocks (the
 * approval becomes audit_rejected), 0 otherwise, or EP_STOP_SIGNAL.
 */
int ep_audit_step(const struct ep_stage_in *in, struct ep_tracker *tr, struct ep_audit_out *out);

#endif
