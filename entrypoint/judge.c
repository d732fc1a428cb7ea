/*
 * judge.c - judging a review: the verdict, the re-ask, the reviewer log,
 * the single reviewer's cycle (see judge.h).
 */
#include "judge.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "call.h"
#include "checks.h"
#include "cli.h"
#include "prompt.h"
#include "forge/fsutil.h"
#include "forge/alloc.h"
#include "forge/timeutil.h"

void ep_answer_init(struct ep_answer *a)
{
	memset(a, 0, sizeof(*a));
	fg_judgement_init(&a->j);
	fg_usage_init(&a->usage);
	fg_strvec_init(&a->denied);
}

void ep_answer_release(struct ep_answer *a)
{
	fg_judgement_reset(&a->j);
	fg_strvec_release(&a->denied);
}

/* The feedback of a review whose every tool call the CLI refused. Owned. */
static char *all_denied_feedback(const struct ep_output *out)
{
	struct fg_buf names;
	char *text;

	fg_buf_init(&names, FG_DENIED_MAX * (FG_DENIED_NAME_MAX + 2) + 1);
	fg_denied_join(&out->denied, &names);
	text = fg_xasprintf("The review could not be completed: the reviewer's CLI refused every tool call "
			    "it made (%s), so it could not run or read anything; give the reviewer those "
			    "tools (docs/guide/agents.md#presets).", names.len ? fg_buf_str(&names) : "?");
	fg_buf_release(&names);
	return text;
}

static bool blank(const char *s)
{
	for (; *s; s++)
		if (!strchr(" \t\r\n\v\f", *s))
			return false;
	return true;
}

/* Turns a reviewer run into j (whatever an earlier run of the same answer
 * put there is released). *failed: the run failed, printed nothing, or
 * had every tool call refused (it judged without running anything). */
static void judge(struct ep_agent_result *r, const struct ep_output *out, struct fg_judgement *j,
		  bool *failed, bool advice_approves)
{
	bool bad_run = ep_call_failed(r, out) || blank(out->text);
	bool denied = !bad_run && ep_output_all_denied(out);
	struct fg_strvec kept;

	*failed = bad_run || denied;
	if (!*failed) {
		fg_verdict_parse(j, out->text, strlen(out->text));
		if (j->advice_only && !advice_approves) {
			/* AUTO_REVIEW_ADVICE_APPROVES=0: the reviewer's rejection stands. */
			j->verdict = FG_VERDICT_REJECTED;
			j->advice_only = false;
			free(j->feedback);
			j->feedback = fg_xstrdup("Only advice findings (see the findings): addressing them was asked "
						 "for (AUTO_REVIEW_ADVICE_APPROVES=0).");
		}
		return;
	}
	/* A failed run says nothing new: the "**Verified:**" lines an earlier
	 * answer of the same cycle gave stay. */
	kept = j->verified;
	fg_strvec_init(&j->verified);
	fg_judgement_reset(j);
	j->verified = kept;
	j->has_format = true;
	if (r->end == EP_AGENT_NOT_STARTED)
		j->feedback = fg_xasprintf("%s%s.", EP_JUDGE_UNSTARTABLE, r->what);
	else if (denied)
		/* It judged without running anything: no clean review. */
		j->feedback = all_denied_feedback(out);
	else
		j->feedback = fg_xasprintf("The review could not be completed: %s.",
					   ep_agent_ok(r) && out->ok ? "the reviewer printed nothing" : r->what);
}

/* Appends s to a reviewer log (best effort: the log is a record). */
static void log_note(int fd, const char *s, size_t n)
{
	if (fd >= 0)
		(void)fg_write_all(fd, s, n);
}

/* After the raw output, the log keeps the final text the verdict parser
 * saw, when an output format extracted it (for text they are the same). */
static void log_final_text(int fd, const struct ep_output *o)
{
	char *head;

	if (o->format == EP_OUTPUT_TEXT)
		return;
	head = fg_xasprintf("\n----- forge-entrypoint: final text (%s output%s%s) -----\n",
			    ep_output_format_name(o->format), o->ok ? "" : ", failed: ",
			    o->ok ? "" : o->error);
	log_note(fd, head, strlen(head));
	log_note(fd, o->text, strlen(o->text));
	log_note(fd, "\n", 1);
	free(head);
}

/* An answer with no verdict at all (not a rejection) is asked for once
 * more, while the budget (the step's totals and this answer's runs) lasts. */
static bool want_reask(const struct ep_stage_in *in, const struct ep_answer *a)
{
	return in->t->reask && !a->failed && a->j.format == FG_FORMAT_NONE &&
	       !ep_stage_over_budget(in, &a->usage, NULL);
}

/* One reviewer run on prompt judged into a (its usage added, also when it
 * was stopped). 0 or EP_STOP_SIGNAL. */
static int reviewer_run(const struct ep_stage_in *in, const struct ep_ask *ask, const char *prompt,
			struct ep_answer *a)
{
	struct ep_output out;
	struct ep_call call = { "reviewer", in->k, prompt, ask->prompt_name, true, ask->system_text, false,
				&out, ask->log_fd, ask->panel_role, NULL, NULL };
	struct ep_agent_result r;
	struct fg_agent_run run;
	int rc;

	call.run = &run;
	rc = ep_call_run(in, &call, &r);
	fg_usage_add(&a->usage, &out.usage);
	if (rc != EP_STOP_SIGNAL) {
		judge(&r, &out, &a->j, &a->failed, in->t->advice_approves);
		run.failed = a->failed;
		fg_agent_runs_push(&a->runs, &run);
		log_final_text(ask->log_fd, &out);
		fg_denied_merge(&a->denied, &out.denied);
	}
	ep_output_release(&out);
	return rc;
}

/* An approval that rests on nothing executed: no passing check ran (in's
 * evidence) and the review has no "**Verified:**" line naming something
 * that ran ("nothing executable" does not count). Only with
 * require_evidence. */
static bool lacks_evidence(const struct ep_stage_in *in, const struct ep_answer *a)
{
	bool checks_passed = in->ev && in->ev->nchecks && !fg_evidence_failed_check(in->ev);

	if (!in->cfg->require_evidence || a->failed || a->j.verdict != FG_VERDICT_APPROVED || checks_passed)
		return false;
	for (size_t i = 0; i < a->j.verified.n; i++)
		if (strncasecmp(a->j.verified.v[i], "nothing executable", 18))
			return false;
	return true;
}

/* Why a reviewer is asked once more in the same cycle. */
enum ask_why { ASK_NO_VERDICT, ASK_NO_EVIDENCE };

/* Asks the reviewer once more (the prompt with a section saying why), the
 * new answer judged into a. 0 or EP_STOP_SIGNAL. */
static int ask_again(const struct ep_stage_in *in, const struct ep_ask *ask, struct ep_answer *a,
		     enum ask_why why)
{
	static const char *const notes[] = {
		"\n----- forge-entrypoint: no verdict, asked once more -----\n",
		"\n----- forge-entrypoint: approval without evidence, asked once more -----\n",
	};
	static const char *const says[] = { "'s answer holds no verdict", " approved without executed evidence" };
	char *again = why == ASK_NO_VERDICT ? ep_prompt_reask(ask->prompt) : ep_prompt_evidence_reask(ask->prompt);
	int rc;

	ep_log(FG_MSG_INFO, "the reviewer%s%s%s: asking once more (cycle %d/%d)",
	       ask->panel_role ? " " : "", ask->panel_role ? ask->panel_role : "", says[why], in->k, in->max);
	log_note(ask->log_fd, notes[why], strlen(notes[why]));
	a->reask = true;
	rc = reviewer_run(in, ask, again, a);
	free(again);
	return rc;
}

/* require_evidence: an approval without executed evidence is asked for
 * once more; still none, the answer is a rejection. 0 or EP_STOP_SIGNAL. */
static int evidence_answer(const struct ep_stage_in *in, const struct ep_ask *ask, struct ep_answer *a)
{
	int rc = ask_again(in, ask, a, ASK_NO_EVIDENCE);

	if (rc == EP_STOP_SIGNAL || !lacks_evidence(in, a))
		return rc;
	a->j.verdict = FG_VERDICT_REJECTED;
	free(a->j.feedback);
	a->j.feedback = fg_xstrdup(EP_NO_EVIDENCE_FEEDBACK);
	return rc;
}

int ep_judge_answer(const struct ep_stage_in *in, const struct ep_ask *ask, struct ep_answer *out)
{
	int rc = reviewer_run(in, ask, ask->prompt, out);

	if (rc != EP_STOP_SIGNAL && want_reask(in, out))
		rc = ask_again(in, ask, out, ASK_NO_VERDICT);
	if (rc != EP_STOP_SIGNAL && lacks_evidence(in, out))
		return evidence_answer(in, ask, out);
	return rc;
}

static char *reviewer_prompt(const struct ep_stage_in *in)
{
	char *p = ep_stage_with_evidence(in, ep_prompt_reviewer(in->t, in->hist, in->nhist)), *both;

	if (!in->t->reviewer_system_in_prompt || !in->system_prompt)
		return p;
	both = ep_prompt_with_system(in->system_prompt, p);
	free(p);
	return both;
}

/* The single reviewer's answer a into cycle c. */
static void take_answer(struct fg_cycle *c, struct ep_answer *a)
{
	fg_judgement_move(&c->j, &a->j);
	/* The cycle file keeps the "**Verified:**" lines with its evidence. */
	fg_strvec_release(&c->ev.verified);
	c->ev.verified = c->j.verified;
	fg_strvec_init(&c->j.verified);
	fg_usage_add(&c->usage.reviewer, &a->usage);
	fg_denied_merge(&c->denied.reviewer, &a->denied);
	c->reask = a->reask;
	c->reviewer_runs = a->runs;
	c->reviewer_failed = a->failed;
}

int ep_judge_review(const struct ep_stage_in *in, struct ep_stage_out *out)
{
	uint64_t t0 = fg_monotonic_ns();
	char *prompt = reviewer_prompt(in);
	char *logname = fg_reviewer_log_name(in->k, NULL);
	struct ep_ask ask = { prompt, "reviewer-prompt.md", NULL, in->system_prompt,
			      ep_step_log_open(in->step_dir, logname) };
	struct ep_answer a;
	int rc;

	ep_answer_init(&a);
	ep_log(FG_MSG_INFO, "running the reviewer (cycle %d/%d)", in->k, in->max);
	rc = ep_judge_answer(in, &ask, &a);
	fg_usage_add(&out->spent, &a.usage);
	if (rc != EP_STOP_SIGNAL) {
		take_answer(&out->c, &a);
		out->c.reviewer_log = ask.log_fd >= 0 ? fg_xstrdup(logname) : NULL;
		out->elapsed = fg_seconds_since(t0);
	}
	if (ask.log_fd >= 0)
		close(ask.log_fd);
	ep_answer_release(&a);
	free(logname);
	free(prompt);
	return rc;
}
