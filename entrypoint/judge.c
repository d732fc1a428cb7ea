/*
 * judge.c - judging a review: the verdict, the re-ask, the reviewer log,
 * the single reviewer's cycle (see judge.h).
 */
#include "judge.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "call.h"
#include "checks.h"
#include "cycle_evidence.h"
#include "cli.h"
#include "prompt.h"
#include "forge/fsutil.h"
#include "forge/alloc.h"
#include "forge/timeutil.h"

void ep_judge_call_init(struct ep_judge_call *jc, int k, const char *prompt_name,
			const char *panel_role, int log_fd)
{
	memset(jc, 0, sizeof(*jc));
	jc->k = k;
	jc->prompt_name = prompt_name;
	jc->panel_role = panel_role;
	jc->log_fd = log_fd;
	fg_judgement_init(&jc->j);
	fg_strvec_init(&jc->denied);
}

void ep_judge_call_release(struct ep_judge_call *jc)
{
	fg_judgement_reset(&jc->j);
	fg_strvec_release(&jc->denied);
	if (jc->log_fd >= 0)
		close(jc->log_fd);
	jc->log_fd = -1;
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

int ep_judge_open_log(const struct ep_loop *l, const char *name)
{
	return ep_step_log_open(l->step_dir, name);
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

/* An answer with no verdict at all (not a rejection) is asked for once more. */
static bool want_reask(const struct ep_loop *l, const struct ep_judge_call *jc)
{
	return l->t->reask && !jc->failed && jc->j.format == FG_FORMAT_NONE &&
	       !ep_loop_over_budget(l, NULL);
}

/* One reviewer run judged into jc (its usage added). 0 or EP_STOP_SIGNAL. */
static int reviewer_run(struct ep_loop *l, struct ep_judge_call *jc, const char *prompt)
{
	struct ep_output out;
	struct ep_call call = { "reviewer", jc->k, prompt, jc->prompt_name, true, false, &out,
				jc->log_fd, jc->panel_role, NULL, NULL };
	struct ep_agent_result r;
	struct fg_agent_run run;
	int rc;

	call.run = &run;
	rc = ep_call_run(l, &call, &r);
	if (rc != EP_STOP_SIGNAL) {
		judge(&r, &out, &jc->j, &jc->failed, l->t->advice_approves);
		run.failed = jc->failed;
		fg_agent_runs_push(&jc->runs, &run);
		log_final_text(jc->log_fd, &out);
		fg_usage_add(&jc->usage, &out.usage);
		fg_denied_merge(&jc->denied, &out.denied);
	}
	ep_output_release(&out);
	return rc;
}

/* An approval that rests on nothing executed: no passing check ran and
 * the review has no "**Verified:**" line naming something that ran
 * ("nothing executable" does not count). Only with require_evidence. */
static bool lacks_evidence(const struct ep_loop *l, const struct ep_judge_call *jc)
{
	if (!l->cfg.require_evidence || jc->failed || jc->j.verdict != FG_VERDICT_APPROVED ||
	    l->checks_passed)
		return false;
	for (size_t i = 0; i < jc->j.verified.n; i++)
		if (strncasecmp(jc->j.verified.v[i], "nothing executable", 18))
			return false;
	return true;
}

/* Why a reviewer is asked once more in the same cycle. */
enum ask_why { ASK_NO_VERDICT, ASK_NO_EVIDENCE };

/* Asks the reviewer once more (the prompt with a section saying why), the
 * new answer judged into jc. 0 or EP_STOP_SIGNAL. */
static int ask_again(struct ep_loop *l, struct ep_judge_call *jc, const char *prompt, enum ask_why why)
{
	static const char *const notes[] = {
		"\n----- forge-entrypoint: no verdict, asked once more -----\n",
		"\n----- forge-entrypoint: approval without evidence, asked once more -----\n",
	};
	static const char *const says[] = { "'s answer holds no verdict", " approved without executed evidence" };
	char *again = why == ASK_NO_VERDICT ? ep_prompt_reask(prompt) : ep_prompt_evidence_reask(prompt);
	int rc;

	ep_log(FG_MSG_INFO, "the reviewer%s%s%s: asking once more (cycle %d/%d)",
	       jc->panel_role ? " " : "", jc->panel_role ? jc->panel_role : "", says[why], jc->k, l->max);
	log_note(jc->log_fd, notes[why], strlen(notes[why]));
	jc->reask = true;
	rc = reviewer_run(l, jc, again);
	free(again);
	return rc;
}

/* require_evidence: an approval without executed evidence is asked for
 * once more; still none, the answer is a rejection. 0 or EP_STOP_SIGNAL. */
static int evidence_answer(struct ep_loop *l, struct ep_judge_call *jc, const char *prompt)
{
	int rc = ask_again(l, jc, prompt, ASK_NO_EVIDENCE);

	if (rc == EP_STOP_SIGNAL || !lacks_evidence(l, jc))
		return rc;
	jc->j.verdict = FG_VERDICT_REJECTED;
	free(jc->j.feedback);
	jc->j.feedback = fg_xstrdup(EP_NO_EVIDENCE_FEEDBACK);
	return rc;
}

int ep_judge_answer(struct ep_loop *l, struct ep_judge_call *jc, const char *prompt)
{
	int rc = reviewer_run(l, jc, prompt);

	if (rc != EP_STOP_SIGNAL && want_reask(l, jc))
		rc = ask_again(l, jc, prompt, ASK_NO_VERDICT);
	if (rc != EP_STOP_SIGNAL && lacks_evidence(l, jc))
		return evidence_answer(l, jc, prompt);
	return rc;
}

static char *reviewer_prompt(const struct ep_loop *l)
{
	char *p = ep_evidence_prompt(l, ep_prompt_reviewer(l->t, l->hist, l->nhist)), *both;

	if (!l->t->reviewer_system_in_prompt || !l->system_prompt)
		return p;
	both = ep_prompt_with_system(l->system_prompt, p);
	free(p);
	return both;
}

int ep_judge_review(struct ep_loop *l, int k, struct fg_cycle *c, bool *failed)
{
	uint64_t t0 = fg_monotonic_ns();
	char *prompt = reviewer_prompt(l);
	char *logname = fg_reviewer_log_name(k, NULL);
	struct ep_judge_call jc;
	int rc;

	ep_judge_call_init(&jc, k, "reviewer-prompt.md", NULL, ep_judge_open_log(l, logname));
	fg_cycle_init(c);
	ep_log(FG_MSG_INFO, "running the reviewer (cycle %d/%d)", k, l->max);
	rc = ep_judge_answer(l, &jc, prompt);
	if (rc != EP_STOP_SIGNAL) {
		fg_judgement_move(&c->j, &jc.j);
		/* The cycle file keeps the "**Verified:**" lines with its evidence. */
		fg_strvec_release(&c->ev.verified);
		c->ev.verified = c->j.verified;
		fg_strvec_init(&c->j.verified);
		fg_usage_add(&c->usage.reviewer, &jc.usage);
		fg_denied_merge(&c->denied.reviewer, &jc.denied);
		c->reask = jc.reask;
		c->reviewer_runs = jc.runs;
		*failed = jc.failed;
		c->reviewer_log = jc.log_fd >= 0 ? fg_xstrdup(logname) : NULL;
		ep_loop_stamp(l, c, k, fg_seconds_since(t0));
	}
	ep_judge_call_release(&jc);
	free(logname);
	free(prompt);
	return rc;
}
