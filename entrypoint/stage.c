/*
 * stage.c - the stages' shared output and the two rules every reviewing
 * stage applies to its input: the budget and the evidence section of its
 * prompts (see stage.h).
 */
#include "stage.h"

#include <stdlib.h>

#include "prompt.h"
#include "tracker.h"
#include "forge/buf.h"
#include "forge/rules.h"

void ep_stage_out_init(struct ep_stage_out *o)
{
	fg_cycle_init(&o->c);
	fg_usage_init(&o->spent);
	o->elapsed = 0;
	o->reason = NULL;
}

void ep_stage_out_release(struct ep_stage_out *o)
{
	fg_cycle_release(&o->c);
	free(o->reason);
	o->reason = NULL;
}

bool ep_stage_over_budget(const struct ep_stage_in *in, const struct fg_usage *own, double *spent)
{
	struct fg_usage_pair t = *in->total;

	if (own)
		fg_usage_add(&t.reviewer, own);
	return fg_rules_over_budget(in->cfg->max_cost_usd, &t, spent);
}

char *ep_stage_with_evidence(const struct ep_stage_in *in, char *prompt)
{
	struct fg_buf b;

	if (!in->ev || (!in->ev->nchecks && !in->ev->has_changes))
		return prompt;
	fg_buf_init(&b, EP_PROMPT_MAX);
	fg_buf_adds(&b, prompt);
	ep_tracker_prompt(&b, in->ev, in->t->cycle_dir);
	ep_checks_prompt(&b, in->checks, in->ev);
	free(prompt);
	return fg_buf_detach(&b, NULL);
}
