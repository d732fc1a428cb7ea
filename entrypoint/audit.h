/*
 * audit.h - the held-out audit, for the loop (loop.h): once the review loop
 * approved, one more reviewer run that sees none of the loop's history
 * (review.md `audit:`, forge/audit.h; docs/guide/auto-review.md, "The
 * audit").
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
 * summary, which carries l->audit); ep_audit_release() at the end.
 */
#ifndef EP_AUDIT_H
#define EP_AUDIT_H

#include "loop.h"

/*
 * Decides and runs the audit, when review.md has audit: (else returns 0
 * and l->audit stays NULL): skipped when the run is not sampled
 * (fg_audit_draw() >= sample) or when its estimated cost would pass
 * max_cost_usd; else the reviewer's run judged (agreed, disagreed, failed;
 * an audit that changed the workspace failed). l->audit holds the record;
 * its usage is in the step's totals. Returns 1 when the audit disagreed
 * and blocks (the approval becomes audit_rejected), 0 otherwise, or
 * EP_STOP_SIGNAL.
 */
int ep_audit_step(struct ep_loop *l);

/* Frees l->audit and the audit's system prompt. */
void ep_audit_release(struct ep_loop *l);

#endif
