/*
 * outcome.c - the loop's conclusions from its history and a cycle's
 * progress lines (see outcome.h).
 */
#include "outcome.h"

#include <string.h>

#include "cli.h"
#include "judge.h"
#include "panel.h"
#include "prompt.h"
#include "forge/rules.h"
#include "forge/text.h"

bool ep_outcome_stalled(const struct fg_review_config *cfg, const struct fg_cycle *hist, size_t n)
{
	const struct fg_cycle *a, *b;

	if (!cfg->stop_when_stalled || n < 2)
		return false;
	a = &hist[n - 2];
	b = &hist[n - 1];
	/* Turns that changed nothing: two in a row are a stall. */
	if (b->ev.no_change)
		return a->ev.no_change;
	return fg_rules_stalled(a, ep_panel_any_failed(a), b, ep_panel_any_failed(b));
}

const char *ep_outcome_unstartable(const struct fg_cycle *c)
{
	static const size_t n = sizeof(EP_JUDGE_UNSTARTABLE) - 1;

	if (!c->has_reviews && ep_panel_any_failed(c) && c->j.feedback &&
	    !strncmp(c->j.feedback, EP_JUDGE_UNSTARTABLE, n))
		return c->j.feedback;
	for (size_t i = 0; i < c->nreviews; i++) {
		const struct fg_review *r = &c->reviews[i];

		if (r->failed && !r->from_cycle && r->j.feedback && !strncmp(r->j.feedback, EP_JUDGE_UNSTARTABLE, n))
			return r->j.feedback;
	}
	return NULL;
}

/* A panel role's review that judged nothing: it failed, or its answer held
 * no verdict (after the re-ask). */
static bool role_useless(const struct fg_review *r)
{
	return !r->from_cycle && (r->failed || (r->j.has_format && r->j.format == FG_FORMAT_NONE));
}

const char *ep_outcome_useless_twice(const struct fg_review_config *cfg, const struct fg_cycle *hist,
				     size_t n)
{
	const struct fg_cycle *a, *b;

	if (n < 2)
		return NULL;
	a = &hist[n - 2];
	b = &hist[n - 1];
	/* A cycle no reviewer ran in (the worker's turn changed nothing) says
	 * nothing about the reviewer. */
	if (a->ev.no_change || b->ev.no_change)
		return NULL;
	if (!cfg->nreviewers)
		return (ep_panel_any_failed(a) || a->j.format == FG_FORMAT_NONE) &&
		       (ep_panel_any_failed(b) || b->j.format == FG_FORMAT_NONE) ? "reviewer" : NULL;
	for (size_t i = 0; i < b->nreviews; i++) {
		const struct fg_review *rb = &b->reviews[i];

		for (size_t j = 0; role_useless(rb) && j < a->nreviews; j++)
			if (!strcmp(a->reviews[j].role, rb->role) && role_useless(&a->reviews[j]))
				return rb->role;
	}
	return NULL;
}

void ep_outcome_progress(const struct fg_cycle *c)
{
	char line[1024];

	if (c->j.verdict == FG_VERDICT_APPROVED && c->ev.advice_only) {
		ep_log(FG_MSG_PLAIN, "Review cycle %d/%d: APPROVED - %zu advice finding(s), not looped on",
		       c->cycle, c->max_cycles, c->j.nfindings);
	} else if (c->j.verdict == FG_VERDICT_APPROVED) {
		ep_log(FG_MSG_PLAIN, "Review cycle %d/%d: APPROVED", c->cycle, c->max_cycles);
	} else {
		ep_one_line(line, sizeof(line), c->j.feedback, EP_FEEDBACK_LINE_CHARS);
		ep_log(FG_MSG_PLAIN, "Review cycle %d/%d: REJECTED - %s%s%s", c->cycle, c->max_cycles, line,
		       c->stalled ? " (stalled: same findings as the previous cycle)" : "",
		       c->over_budget ? " (over budget: the step's cost passed max_cost_usd)" : "");
	}
	for (size_t i = 0; i < c->nreviews; i++) {
		const struct fg_review *r = &c->reviews[i];

		if (r->from_cycle)
			ep_log(FG_MSG_PLAIN, "  %s: %s (cycle %d stands)", r->role,
			       fg_role_verdict_name(fg_review_verdict(r)), r->from_cycle);
		else
			ep_log(FG_MSG_PLAIN, "  %s: %s%s, %zu finding(s), %.1f s", r->role,
			       fg_role_verdict_name(fg_review_verdict(r)), r->failed ? " (failed)" : "",
			       r->j.nfindings, r->elapsed_seconds);
	}
}
