/*
 * prompt.h - the text the agents get.
 *
 *   worker, first run:  the task summary and description (and the keys of
 *                       earlier tasks, when given);
 *   worker, retry:      the same, then "## Reviewer Feedback" with the last
 *                       rejection (structured findings as a list, blocking
 *                       first, with file:line), then the list of the cycles
 *                       so far (number, verdict, one line of feedback);
 *   reviewer system:    a fixed verdict-protocol preamble, then the review.md
 *                       body (a panel role: then its role section and file);
 *   reviewer prompt:    what to review (the task, the workspace); from cycle 2
 *                       on the previous cycle's feedback and, when it had
 *                       structured findings, "Its findings:" as a list
 *                       (file:line and title), with the request to confirm
 *                       each item fixed and report regressions;
 *   audit system:       the auditor's preamble (find the defect the approval
 *                       missed), the verdict protocol, the review.md body,
 *                       then the audit's own instructions file;
 *   audit prompt:       the task and the request to find the defect; never
 *                       anything of the loop (feedback, verdicts, the
 *                       worker's words);
 *   reviewer re-ask:    the reviewer prompt, then a short section saying
 *                       the answer held no verdict and what a valid last
 *                       line looks like.
 * Every function returns an owned NUL-terminated string (bounded by
 * EP_PROMPT_MAX: longer input is cut).
 */
#ifndef EP_PROMPT_H
#define EP_PROMPT_H

#include <stddef.h>

#include "forge/buf.h"
#include "forge/cycle.h"
#include "task.h"

#define EP_PROMPT_MAX (8u * 1024 * 1024)
#define EP_FEEDBACK_LINE_CHARS 200

/* Borrowed t. */
char *ep_prompt_worker(const struct ep_task *t);
/* hist[0..n-1] are the cycles so far, oldest first, n >= 1; hist[n-1] is the
 * rejection to address. Borrowed. */
char *ep_prompt_worker_retry(const struct ep_task *t, const struct fg_cycle *hist, size_t n);
/* instructions: the review.md body (may be ""). */
char *ep_prompt_reviewer_system(const char *instructions);
/* A panel role's system prompt: the above, then "## Your role: ROLE" with
 * the OUT OF SCOPE rule and the role file's text (may be ""). */
char *ep_prompt_reviewer_role_system(const char *instructions, const char *role,
				     const char *role_instructions);
/* The audit's system prompt: instructions the review.md body,
 * audit_instructions its audit file's text (either may be ""). */
char *ep_prompt_audit_system(const char *instructions, const char *audit_instructions);
/* The audit's prompt: what to audit, the task, its job. Borrowed t. */
char *ep_prompt_audit(const struct ep_task *t);
/* hist as above, n may be 0 (first cycle). */
char *ep_prompt_reviewer(const struct ep_task *t, const struct fg_cycle *hist, size_t n);
/* A panel role's re-review: the reviewer prompt with the role's own previous
 * rejection last (borrowed), of cycle n of max, as the previous review. */
char *ep_prompt_reviewer_again(const struct ep_task *t, int n, int max, const struct fg_judgement *last);
/* The reviewer prompt again (borrowed), with a short section saying that
 * the previous answer held no verdict and what a valid last line is. */
char *ep_prompt_reask(const char *prompt);
/* The feedback of a cycle rejected under require_evidence because the
 * approval rested on nothing executed, even when asked once more. */
#define EP_NO_EVIDENCE_FEEDBACK "approval without executed evidence: the reviewer approved twice " \
	"without a '**Verified:** <command> -> <result>' line naming something it ran, and no check " \
	"passed (review.md require_evidence: true)"
/* The reviewer prompt again (borrowed), with a section saying that the
 * approval must rest on something executed in this pass. */
char *ep_prompt_evidence_reask(const char *prompt);
/* system, a separator, then prompt: for a CLI that takes no system prompt. */
char *ep_prompt_with_system(const char *system, const char *prompt);
/* What a worker retry must address: findings as a list when the cycle has
 * them, else its feedback; a panel's cycle (reviews) as one list, blocking
 * first, grouped by role ("#### role"), with file:line. Appends to b. */
void ep_prompt_feedback(struct fg_buf *b, const struct fg_cycle *c);

/* One line of s for progress lines and lists: whitespace runs become one
 * space, trimmed, cut after max_chars UTF-8 characters ("..." appended).
 * Writes into out (always NUL-terminated). */
void ep_one_line(char *out, size_t outlen, const char *s, size_t max_chars);

#endif
