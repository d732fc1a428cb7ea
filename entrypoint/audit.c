/*
 * audit.c - the held-out audit once the loop approved: its decision, its
 * prompts, its run and its record (see audit.h).
 */
#include "audit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks.h"
#include "cli.h"
#include "judge.h"
#include "prompt.h"
#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/timeutil.h"

#define AUDIT_PROMPT "reviewer-prompt." FG_AUDIT_ROLE ".md"

/* The reason a run is not audited, into why, or false when it is. */
static bool not_sampled(const struct ep_stage_in *in, struct fg_audit *a, char *why, size_t n)
{
	a->draw = fg_audit_draw(in->t->run_id, in->t->step, in->t->skill);
	if (a->draw < a->sample)
		return false;
	snprintf(why, n, "not sampled: the run's draw %.4f is not below sample %g (run id '%s')", a->draw,
		 a->sample, in->t->run_id);
	return true;
}

/* The audit would pass max_cost_usd: what the step spent plus what its
 * last review cost (the audit is one more review of the same work). */
static bool over_budget(const struct ep_stage_in *in, char *why, size_t n)
{
	const struct fg_usage *last = &in->hist[in->nhist - 1].usage.reviewer;
	double spent = 0, guess = (last->have & FG_USAGE_COST) ? last->cost_usd : 0;

	if (in->cfg->max_cost_usd < 0)
		return false;
	/* Sets spent whenever a cost was reported. */
	ep_stage_over_budget(in, NULL, &spent);
	if (spent + guess <= in->cfg->max_cost_usd)
		return false;
	snprintf(why, n, "the audit would pass the budget: the step spent $%.4f, the last review cost $%.4f, "
		 "max_cost_usd is $%.4f", spent, guess, in->cfg->max_cost_usd);
	return true;
}

/* The audit's prompt: the task and its job, the change set since the
 * step began (ev), the approving cycle's checks, after its system prompt
 * sys when the task puts it there. Owned. */
static char *audit_prompt(const struct ep_stage_in *in, const struct fg_evidence *ev, const char *sys)
{
	char *p = ep_prompt_audit(in->t), *both;
	struct fg_buf b;

	fg_buf_init(&b, EP_PROMPT_MAX);
	fg_buf_adds(&b, p);
	free(p);
	ep_tracker_prompt(&b, ev, in->t->cycle_dir);
	ep_checks_prompt(&b, in->checks, &in->hist[in->nhist - 1].ev);
	p = fg_buf_detach(&b, NULL);
	if (!in->t->reviewer_system_in_prompt)
		return p;
	both = ep_prompt_with_system(sys, p);
	free(p);
	return both;
}

/* an's answer into a: a verdict, or failed with the reason (its feedback,
 * or the files the audit changed). */
static void take(struct fg_audit *a, const struct ep_answer *an, const struct fg_strvec *changed)
{
	struct fg_buf why;

	fg_usage_add(&a->usage, &an->usage);
	if (!an->failed && !changed->n && !(an->j.has_format && an->j.format == FG_FORMAT_NONE)) {
		fg_audit_take_judgement(a, &an->j);
		return;
	}
	a->outcome = FG_AUDIT_FAILED;
	fg_buf_init(&why, FG_AUDIT_REASON_MAX + 1);
	if (changed->n) {
		fg_buf_adds(&why, "the audit changed the workspace, which it must not do:");
		for (size_t i = 0; i < changed->n; i++)
			fg_buf_addf(&why, "%s %s", i ? "," : "", changed->v[i]);
	} else {
		fg_buf_adds(&why, an->j.feedback && *an->j.feedback ? an->j.feedback : "the audit gave no verdict");
	}
	fg_audit_set_reason(a, fg_buf_str(&why));
	fg_buf_release(&why);
}

/* The progress lines of the audit's outcome. */
static void say(const struct ep_stage_in *in, const struct fg_audit *a)
{
	char line[1024];

	if (a->outcome == FG_AUDIT_AGREED) {
		ep_log(FG_MSG_PLAIN, "Audit: AGREED - the approval of cycle %zu stands", in->nhist);
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

/* The reviewer's run as the audit, judged into out->audit. 0 or
 * EP_STOP_SIGNAL. */
static int run(const struct ep_stage_in *in, struct ep_tracker *tr, struct ep_audit_out *out)
{
	struct fg_audit *a = out->audit;
	uint64_t t0 = fg_monotonic_ns();
	char *sys = ep_prompt_audit_system(in->cfg->instructions, in->cfg->audit.instructions);
	struct fg_evidence ev;
	struct fg_strvec changed;
	struct ep_ask ask = { NULL, AUDIT_PROMPT, FG_AUDIT_ROLE, sys, -1 };
	struct ep_answer an;
	char *prompt;
	int rc;

	fg_evidence_init(&ev);
	fg_strvec_init(&changed);
	ep_answer_init(&an);
	ep_tracker_since_start(tr, in->pid1, in->step_dir, FG_AUDIT_DIFF, &ev);
	prompt = audit_prompt(in, &ev, sys);
	ask.prompt = prompt;
	ask.log_fd = ep_step_log_open(in->step_dir, FG_AUDIT_LOG);
	ep_log(FG_MSG_INFO, "running the audit (the loop approved in cycle %zu/%d; sample %g)", in->nhist,
	       in->max, a->sample);
	rc = ep_judge_answer(in, &ask, &an);
	fg_usage_add(&out->spent, &an.usage);
	if (rc != EP_STOP_SIGNAL) {
		ep_tracker_after_reviewer(tr, in->pid1, &changed);
		take(a, &an, &changed);
		a->runs = an.runs;
		a->reviewer_log = ask.log_fd >= 0 ? fg_xstrdup(FG_AUDIT_LOG) : NULL;
		out->elapsed = fg_seconds_since(t0);
	}
	if (ask.log_fd >= 0)
		close(ask.log_fd);
	ep_answer_release(&an);
	fg_strvec_release(&changed);
	fg_evidence_release(&ev);
	free(prompt);
	free(sys);
	return rc;
}

int ep_audit_step(const struct ep_stage_in *in, struct ep_tracker *tr, struct ep_audit_out *out)
{
	struct fg_audit *a;
	char why[FG_AUDIT_REASON_MAX];
	int rc;

	out->audit = NULL;
	fg_usage_init(&out->spent);
	out->elapsed = -1;
	if (!in->cfg->audit.on || !in->nhist)
		return 0;
	a = out->audit = fg_xmalloc(sizeof(*out->audit));
	fg_audit_init(a);
	a->sample = in->cfg->audit.sample;
	a->blocks = in->cfg->audit.blocks;
	if (not_sampled(in, a, why, sizeof(why)) || over_budget(in, why, sizeof(why))) {
		fg_audit_set_reason(a, why);
		ep_log(FG_MSG_INFO, "audit skipped: %s", why);
		return 0;
	}
	rc = run(in, tr, out);
	if (rc == EP_STOP_SIGNAL) {
		/* A summary written after this (the lifeline ended) says so. */
		a->outcome = FG_AUDIT_FAILED;
		fg_audit_set_reason(a, "the run was stopped during the audit");
		return rc;
	}
	say(in, a);
	return a->blocks && a->outcome == FG_AUDIT_DISAGREED ? 1 : 0;
}
