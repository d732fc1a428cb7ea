/*
 * audit.c - the held-out audit once the loop approved (see audit.h).
 */
#include "audit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "checks.h"
#include "cli.h"
#include "judge.h"
#include "prompt.h"
#include "tracker.h"
#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/rules.h"
#include "forge/timeutil.h"

#define AUDIT_PROMPT "reviewer-prompt." FG_AUDIT_ROLE ".md"

void ep_audit_release(struct ep_loop *l)
{
	if (l->audit)
		fg_audit_release(l->audit);
	FG_FREE_AND_NULL(l->audit);
	FG_FREE_AND_NULL(l->audit_system);
}

/* The reason a run is not audited, into why, or false when it is. */
static bool not_sampled(const struct ep_loop *l, struct fg_audit *a, char *why, size_t n)
{
	a->draw = fg_audit_draw(l->t->run_id, l->t->step, l->t->skill);
	if (a->draw < a->sample)
		return false;
	snprintf(why, n, "not sampled: the run's draw %.4f is not below sample %g (run id '%s')", a->draw,
		 a->sample, l->t->run_id);
	return true;
}

/* The audit would pass max_cost_usd: what the step spent plus what its
 * last review cost (the audit is one more review of the same work). */
static bool over_budget(const struct ep_loop *l, char *why, size_t n)
{
	const struct fg_usage *last = &l->hist[l->nhist - 1].usage.reviewer;
	double spent = 0, guess = (last->have & FG_USAGE_COST) ? last->cost_usd : 0;

	if (l->cfg.max_cost_usd < 0)
		return false;
	/* Sets spent whenever a cost was reported. */
	fg_rules_over_budget(l->cfg.max_cost_usd, &l->total, &spent);
	if (spent + guess <= l->cfg.max_cost_usd)
		return false;
	snprintf(why, n, "the audit would pass the budget: the step spent $%.4f, the last review cost $%.4f, "
		 "max_cost_usd is $%.4f", spent, guess, l->cfg.max_cost_usd);
	return true;
}

/* The audit's prompt: the task and its job, the change set since the
 * step began (ev), the approving cycle's checks. Owned. */
static char *audit_prompt(const struct ep_loop *l, const struct fg_evidence *ev)
{
	char *p = ep_prompt_audit(l->t), *both;
	struct fg_buf b;

	fg_buf_init(&b, EP_PROMPT_MAX);
	fg_buf_adds(&b, p);
	free(p);
	ep_tracker_prompt(&b, ev, l->t->cycle_dir);
	ep_checks_prompt(&b, &l->checks, &l->hist[l->nhist - 1].ev);
	p = fg_buf_detach(&b, NULL);
	if (!l->t->reviewer_system_in_prompt)
		return p;
	both = ep_prompt_with_system(l->audit_system, p);
	free(p);
	return both;
}

/* The audit's system prompt, kept for its run: ep_call_run() writes it into
 * the audit's own prompt directory (call.h), as it does a panel role's. */
static void make_system(struct ep_loop *l)
{
	free(l->audit_system);
	l->audit_system = ep_prompt_audit_system(l->cfg.instructions, l->cfg.audit.instructions);
}

/* jc's answer into a: a verdict, or failed with the reason (its feedback,
 * or the files the audit changed). */
static void take(struct fg_audit *a, const struct ep_judge_call *jc, const struct fg_strvec *changed)
{
	struct fg_buf why;

	fg_usage_add(&a->usage, &jc->usage);
	if (!jc->failed && !changed->n && !(jc->j.has_format && jc->j.format == FG_FORMAT_NONE)) {
		fg_audit_take_judgement(a, &jc->j);
		return;
	}
	a->outcome = FG_AUDIT_FAILED;
	fg_buf_init(&why, FG_AUDIT_REASON_MAX + 1);
	if (changed->n) {
		fg_buf_adds(&why, "the audit changed the workspace, which it must not do:");
		for (size_t i = 0; i < changed->n; i++)
			fg_buf_addf(&why, "%s %s", i ? "," : "", changed->v[i]);
	} else {
		fg_buf_adds(&why, jc->j.feedback && *jc->j.feedback ? jc->j.feedback : "the audit gave no verdict");
	}
	fg_audit_set_reason(a, fg_buf_str(&why));
	fg_buf_release(&why);
}

/* The progress lines of the audit's outcome. */
static void say(const struct ep_loop *l, const struct fg_audit *a)
{
	char line[1024];

	if (a->outcome == FG_AUDIT_AGREED) {
		ep_log(FG_MSG_PLAIN, "Audit: AGREED - the approval of cycle %zu stands", l->nhist);
		return;
	}
	if (a->outcome != FG_AUDIT_DISAGREED) {
		ep_log(FG_MSG_WARN, "audit %s: %s; the approval stands", fg_audit_outcome_name(a->outcome),
		       a->reason ? a->reason : "");
		return;
	}
	ep_one_line(line, sizeof(line), a->feedback, EP_FEEDBACK_LINE_CHARS);
	ep_log(FG_MSG_PLAIN, "Audit: DISAGREED - %s%s", line,
	       a->blocks ? " (blocks: the step is audit_rejected)" : " (advisory: the approval stands)");
	for (size_t i = 0; i < a->nfindings; i++) {
		const struct fg_finding *f = &a->findings[i];

		ep_one_line(line, sizeof(line), f->title ? f->title : "", EP_FEEDBACK_LINE_CHARS);
		ep_log(FG_MSG_PLAIN, "  [%s] %s%s%s", f->severity ? f->severity : "NOTE",
		       f->file_path ? f->file_path : "", f->file_path ? ": " : "", line);
	}
}

/* The reviewer's run as the audit, judged into a. 0 or EP_STOP_SIGNAL. */
static int run(struct ep_loop *l, struct fg_audit *a)
{
	uint64_t t0 = fg_monotonic_ns();
	struct fg_evidence ev;
	struct fg_strvec changed;
	struct ep_judge_call jc;
	char *prompt;
	int rc;

	fg_evidence_init(&ev);
	fg_strvec_init(&changed);
	ep_tracker_since_start(&l->tr, &l->pid1, l->step_dir, FG_AUDIT_DIFF, &ev);
	make_system(l);
	prompt = audit_prompt(l, &ev);
	ep_judge_call_init(&jc, (int)l->nhist, AUDIT_PROMPT, FG_AUDIT_ROLE, ep_judge_open_log(l, FG_AUDIT_LOG));
	ep_log(FG_MSG_INFO, "running the audit (the loop approved in cycle %zu/%d; sample %g)", l->nhist,
	       l->max, a->sample);
	rc = ep_judge_answer(l, &jc, prompt);
	if (rc != EP_STOP_SIGNAL) {
		ep_tracker_after_reviewer(&l->tr, &l->pid1, &changed);
		take(a, &jc, &changed);
		a->runs = jc.runs;
		a->reviewer_log = jc.log_fd >= 0 ? fg_xstrdup(FG_AUDIT_LOG) : NULL;
		a->elapsed_seconds = fg_seconds_since(t0);
	}
	ep_judge_call_release(&jc);
	fg_strvec_release(&changed);
	fg_evidence_release(&ev);
	free(prompt);
	return rc;
}

int ep_audit_step(struct ep_loop *l)
{
	struct fg_audit *a;
	char why[FG_AUDIT_REASON_MAX];
	int rc;

	if (!l->cfg.audit.on || !l->nhist)
		return 0;
	a = l->audit = fg_xmalloc(sizeof(*l->audit));
	fg_audit_init(a);
	a->sample = l->cfg.audit.sample;
	a->blocks = l->cfg.audit.blocks;
	if (not_sampled(l, a, why, sizeof(why)) || over_budget(l, why, sizeof(why))) {
		fg_audit_set_reason(a, why);
		ep_log(FG_MSG_INFO, "audit skipped: %s", why);
		return 0;
	}
	rc = run(l, a);
	if (rc == EP_STOP_SIGNAL) {
		/* A summary written after this (the lifeline ended) says so. */
		a->outcome = FG_AUDIT_FAILED;
		fg_audit_set_reason(a, "the run was stopped during the audit");
		return rc;
	}
	say(l, a);
	return a->blocks && a->outcome == FG_AUDIT_DISAGREED ? 1 : 0;
}
