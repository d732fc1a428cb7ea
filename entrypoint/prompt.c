/*
 * prompt.c - worker and reviewer prompts (see prompt.h).
 */
#include "prompt.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char REVIEWER_INTRO[] =
	"You are the reviewer in an automatic review loop. A worker agent has just worked on a\n"
	"task in the current directory (the workspace). Inspect the workspace and judge the work\n"
	"against the review instructions below. Do not change any file.\n";

/* The audit's: it hunts for the defect, and sees nothing of the loop. */
static const char AUDIT_INTRO[] =
	"You are the auditor of an automatic review loop. A worker agent worked on a task in the\n"
	"current directory (the workspace) and the loop's reviewer approved the work. You are a\n"
	"second, independent look: you are told nothing of that review, and you need nothing of\n"
	"it. Your job is to find the defect the approval missed: a requirement of the task that\n"
	"is not met, a bug, a test that does not test what it claims, a regression, a change the\n"
	"task did not ask for. Look for it in earnest: run what can be run. Approve only when\n"
	"you looked and found none. Do not change any file.\n";

static const char VERDICT_PROTOCOL[] =
	"\n"
	"Verdict protocol (your standard output is your review):\n"
	"- End your review with exactly one verdict word in capitals, outside code blocks:\n"
	"  APPROVED when the work meets the instructions, or\n"
	"  REJECTED when it does not.\n"
	"- After REJECTED, list every problem the worker must fix, most important first, each\n"
	"  with the file and line where it applies and what to change. The text after REJECTED\n"
	"  is handed to the worker as its feedback, so make it specific and actionable.\n"
	"- Do not write the other verdict word anywhere in your review.\n"
	"- Say what you ran to reach the verdict, one line each:\n"
	"  **Verified:** <command> -> <result>\n"
	"- Severities (when you list findings): BLOCKING and SUGGESTION (also CRITICAL, HIGH,\n"
	"  MAJOR, MEDIUM) must be fixed; NITPICK and NOTE (also MINOR, LOW, INFO) are advice:\n"
	"  listed for the worker, never a reason to reject on their own.\n";

void ep_one_line(char *out, size_t outlen, const char *s, size_t max_chars)
{
	size_t o = 0, chars = 0;
	bool space = false;

	if (!outlen)
		return;
	while (*s && isspace((unsigned char)*s))
		s++;
	for (; *s && o + 4 < outlen; s++) {
		unsigned char c = (unsigned char)*s;

		if (isspace(c)) {
			space = true;
			continue;
		}
		if ((c & 0xc0) != 0x80 && chars == max_chars) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (space && o + 5 < outlen) {
			out[o++] = ' ';
			chars++;
			space = false;
		}
		if ((c & 0xc0) != 0x80)
			chars++;
		out[o++] = (char)c;
	}
	out[o] = '\0';
}

static void add_task(struct fg_buf *b, const struct ep_task *t)
{
	if (*t->summary)
		fg_buf_addf(b, "%s\n", t->summary);
	if (*t->summary && *t->description)
		fg_buf_addc(b, '\n');
	if (*t->description)
		fg_buf_addf(b, "%s\n", t->description);
	if (!*t->summary && !*t->description)
		fg_buf_adds(b, "(no task summary or description was given)\n");
	if (t->previous.n) {
		fg_buf_adds(b, "\nPrevious tasks:");
		for (size_t i = 0; i < t->previous.n; i++)
			fg_buf_addf(b, "%s %s", i ? "," : "", t->previous.v[i]);
		fg_buf_addc(b, '\n');
	}
}

char *ep_prompt_worker(const struct ep_task *t)
{
	struct fg_buf b;

	fg_buf_init(&b, EP_PROMPT_MAX);
	add_task(&b, t);
	return fg_buf_detach(&b, NULL);
}

/* Listed first in the worker's feedback: the BLOCKING rank of severity.h
 * (BLOCKING, BLOCKER, CRITICAL). HIGH is a SUGGESTION there, as the
 * review-result marker maps it: it rejects too, and is listed after. */
static bool blocking(const struct fg_finding *f)
{
	return fg_finding_rank(f) == FG_RANK_BLOCKING;
}

static void add_finding(struct fg_buf *b, const struct fg_finding *f)
{
	fg_buf_addf(b, "- [%s] ", f->severity ? f->severity : "NOTE");
	if (f->file_path && f->line > 0)
		fg_buf_addf(b, "%s:%d: ", f->file_path, f->line);
	else if (f->file_path)
		fg_buf_addf(b, "%s: ", f->file_path);
	fg_buf_addf(b, "%s\n", f->title ? f->title : "(untitled finding)");
	if (f->description)
		fg_buf_addf(b, "  %s\n", f->description);
	if (f->evidence)
		fg_buf_addf(b, "  Evidence: %s\n", f->evidence);
	if (f->fix)
		fg_buf_addf(b, "  Fix: %s\n", f->fix);
}

/* A panel's rejection as one list: blocking findings first, then the
 * rest, each part grouped by role in panel order; a rejecting role without
 * structured findings contributes its feedback to the blocking part. Roles
 * whose review stands from an earlier cycle add nothing (it was approved). */
static void panel_feedback(struct fg_buf *b, const struct fg_cycle *c)
{
	static const char *const parts[] = { "Blocking", "Other findings" };

	for (int pass = 0; pass < 2; pass++) {
		bool heading = false;

		for (size_t i = 0; i < c->nreviews; i++) {
			const struct fg_review *r = &c->reviews[i];
			bool role_heading = false;
			bool table = r->j.format == FG_FORMAT_REVIEW_RESULT_MARKER;
			bool text = pass == 0 && r->j.verdict == FG_VERDICT_REJECTED && (!r->j.nfindings || table);

			/* A stale review adds nothing; a review-result report
			 * goes whole (table included) into the blocking part. */
			if (r->from_cycle || (table && pass == 1))
				continue;
			for (size_t j = 0; j < r->j.nfindings || text; j++) {
				if (!text && blocking(&r->j.findings[j]) != (pass == 0))
					continue;
				if (!heading)
					fg_buf_addf(b, "%s### %s\n", b->len ? "\n" : "", parts[pass]);
				if (!role_heading)
					fg_buf_addf(b, "\n#### %s\n\n", r->role);
				heading = role_heading = true;
				if (text) {
					fg_buf_addf(b, "%s\n", *r->j.feedback ? r->j.feedback
									: "(the reviewer gave no details)");
					break;
				}
				add_finding(b, &r->j.findings[j]);
			}
		}
	}
}

/* A single reviewer's rejection (or a panel role's own): the findings as a
 * list when it has them, else its feedback. */
static void judgement_feedback(struct fg_buf *b, const struct fg_judgement *j)
{
	/* A review-result marker's findings come from its table (title and
	 * location only): the worker gets the whole report, table included. */
	if (!j->has_findings || !j->nfindings || j->format == FG_FORMAT_REVIEW_RESULT_MARKER) {
		fg_buf_addf(b, "%s\n", *j->feedback ? j->feedback : "(the reviewer gave no details)");
		return;
	}
	/* Blocking findings first, each group in the reviewer's order. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < j->nfindings; i++)
			if (blocking(&j->findings[i]) == (pass == 0))
				add_finding(b, &j->findings[i]);
}

void ep_prompt_feedback(struct fg_buf *b, const struct fg_cycle *c)
{
	if (c->has_reviews)
		panel_feedback(b, c);
	else
		judgement_feedback(b, &c->j);
}

static void add_history(struct fg_buf *b, const struct fg_cycle *hist, size_t n)
{
	char line[1024];

	fg_buf_adds(b, "\n### Review cycles so far\n\n");
	for (size_t i = 0; i < n; i++) {
		ep_one_line(line, sizeof(line), hist[i].j.feedback, EP_FEEDBACK_LINE_CHARS);
		fg_buf_addf(b, "- Cycle %d/%d: %s%s%s\n", hist[i].cycle, hist[i].max_cycles,
			    fg_verdict_kind_name(hist[i].j.verdict), *line ? " - " : "", line);
	}
}

char *ep_prompt_worker_retry(const struct ep_task *t, const struct fg_cycle *hist, size_t n)
{
	struct fg_buf b;

	fg_buf_init(&b, EP_PROMPT_MAX);
	add_task(&b, t);
	fg_buf_adds(&b, "\n## Reviewer Feedback\n\n");
	if (hist[n - 1].ev.no_change)
		fg_buf_addf(&b, "Your last turn changed nothing in the workspace (cycle %d of %d): no reviewer was "
			    "asked again. The findings below still stand: address them.\n\n", hist[n - 1].cycle,
			    hist[n - 1].max_cycles);
	else if (hist[n - 1].ev.reviewer_changed.n)
		fg_buf_addf(&b, "The review of cycle %d of %d failed: the reviewer changed files in the "
			    "workspace. Check them as said below.\n\n", hist[n - 1].cycle, hist[n - 1].max_cycles);
	else if (hist[n - 1].j.format == FG_FORMAT_CHECKS)
		fg_buf_addf(&b, "A check failed after your last turn (cycle %d of %d): no reviewer looked at "
			    "the work yet. Make it pass.\n\n", hist[n - 1].cycle, hist[n - 1].max_cycles);
	else
		fg_buf_addf(&b, "The reviewer rejected your work (cycle %d of %d). Address every point below.\n\n",
			    hist[n - 1].cycle, hist[n - 1].max_cycles);
	ep_prompt_feedback(&b, &hist[n - 1]);
	add_history(&b, hist, n);
	return fg_buf_detach(&b, NULL);
}

char *ep_prompt_reviewer_system(const char *instructions)
{
	struct fg_buf b;

	fg_buf_init(&b, EP_PROMPT_MAX);
	fg_buf_adds(&b, REVIEWER_INTRO);
	fg_buf_adds(&b, VERDICT_PROTOCOL);
	fg_buf_adds(&b, "\n## Review instructions\n\n");
	if (*instructions)
		fg_buf_addf(&b, "%s%s", instructions,
			    instructions[strlen(instructions) - 1] == '\n' ? "" : "\n");
	else
		fg_buf_adds(&b, "(none given: judge whether the task was done correctly and completely)\n");
	return fg_buf_detach(&b, NULL);
}

/* text (may be "") under heading, ending with a line break. */
static void add_section(struct fg_buf *b, const char *heading, const char *text, const char *none)
{
	fg_buf_addf(b, "\n## %s\n\n", heading);
	if (*text)
		fg_buf_addf(b, "%s%s", text, text[strlen(text) - 1] == '\n' ? "" : "\n");
	else if (none)
		fg_buf_adds(b, none);
}

char *ep_prompt_audit_system(const char *instructions, const char *audit_instructions)
{
	struct fg_buf b;

	fg_buf_init(&b, EP_PROMPT_MAX);
	fg_buf_adds(&b, AUDIT_INTRO);
	fg_buf_adds(&b, VERDICT_PROTOCOL);
	add_section(&b, "Review instructions", instructions,
		    "(none given: judge whether the task was done correctly and completely)\n");
	if (*audit_instructions)
		add_section(&b, "Audit instructions", audit_instructions, NULL);
	return fg_buf_detach(&b, NULL);
}

char *ep_prompt_audit(const struct ep_task *t)
{
	struct fg_buf b;

	fg_buf_init(&b, EP_PROMPT_MAX);
	fg_buf_addf(&b, "Audit the work done in the workspace %s for step '%s' (skill '%s')%s%s.\n",
		    t->workspace, t->step, t->skill, *t->task_key ? ", task " : "", t->task_key);
	fg_buf_adds(&b, "\n## Task\n\n");
	add_task(&b, t);
	fg_buf_addf(&b, "\n## Your job\n\n"
		    "This work was approved. Find the defect that approval missed: check the task's every\n"
		    "requirement against the workspace, run the tests and anything else that shows whether\n"
		    "the work is right. End with APPROVED only when you found no defect; otherwise with\n"
		    "REJECTED and each defect, its file and line, and what shows it. Judge the work as it\n"
		    "stands: the records the loop keeps in %s/ are not for you (bar the diff named below).\n",
		    t->cycle_dir);
	return fg_buf_detach(&b, NULL);
}

char *ep_prompt_reviewer_role_system(const char *instructions, const char *role,
				     const char *role_instructions)
{
	char *base = ep_prompt_reviewer_system(instructions);
	struct fg_buf b;

	fg_buf_init(&b, EP_PROMPT_MAX);
	fg_buf_adds(&b, base);
	free(base);
	fg_buf_addf(&b, "\n## Your role: %s\n\n", role);
	fg_buf_addf(&b, "You are the '%s' reviewer of a panel; other reviewers cover other domains. "
		     "Judge the work from your role's point of view. If your domain has nothing to "
		     "assess in this work, end your review with the line 'Verdict: OUT OF SCOPE' "
		     "instead of a verdict word.\n", role);
	if (*role_instructions)
		fg_buf_addf(&b, "\n%s%s", role_instructions,
			    role_instructions[strlen(role_instructions) - 1] == '\n' ? "" : "\n");
	return fg_buf_detach(&b, NULL);
}

/*
 * The previous rejection, for a re-review. Unlike the worker, which gets the
 * findings instead of the report they came from, the reviewer gets both: the
 * report may say things that are in no finding, and the reviewer wrote it.
 */
/* The previous rejection (last, of cycle n of max; panel: the panel's
 * cycle it belongs to, or NULL for a judgement of one reviewer). */
static void add_previous(struct fg_buf *b, int n, int max, const struct fg_judgement *last,
			 const struct fg_cycle *panel)
{
	bool listed = last->has_findings && last->nfindings;

	fg_buf_addf(b, "\n## Previous review (cycle %d of %d)\n\n", n, max);
	fg_buf_adds(b, "The previous review rejected the work with this feedback:\n\n");
	if (listed && *last->feedback)
		fg_buf_addf(b, "%s\n\nIts findings:\n\n", last->feedback);
	if (panel && panel->has_reviews)
		panel_feedback(b, panel);
	else
		judgement_feedback(b, last);
	fg_buf_adds(b, "\nThe worker has tried to address it since. For each item above, confirm "
		       "whether it is fixed now; then report any regression the fixes introduced "
		       "and anything still missing.\n");
}

/* What to review, then (last not NULL) the previous rejection. */
static char *reviewer_prompt(const struct ep_task *t, int n, int max, const struct fg_judgement *last,
			     const struct fg_cycle *panel)
{
	struct fg_buf b;

	fg_buf_init(&b, EP_PROMPT_MAX);
	fg_buf_addf(&b, "Review the work done in the workspace %s for step '%s' (skill '%s')%s%s.\n",
		    t->workspace, t->step, t->skill, *t->task_key ? ", task " : "", t->task_key);
	fg_buf_adds(&b, "\n## Task\n\n");
	add_task(&b, t);
	if (last)
		add_previous(&b, n, max, last, panel);
	return fg_buf_detach(&b, NULL);
}

char *ep_prompt_reviewer(const struct ep_task *t, const struct fg_cycle *hist, size_t n)
{
	const struct fg_cycle *last = n ? &hist[n - 1] : NULL;

	return last ? reviewer_prompt(t, last->cycle, last->max_cycles, &last->j, last)
		    : reviewer_prompt(t, 0, 0, NULL, NULL);
}

char *ep_prompt_reviewer_again(const struct ep_task *t, int n, int max, const struct fg_judgement *last)
{
	return reviewer_prompt(t, n, max, last, NULL);
}

/* prompt (borrowed), then section: an owned prompt. */
static char *with_section(const char *prompt, const char *section)
{
	struct fg_buf b;

	fg_buf_init(&b, EP_PROMPT_MAX);
	fg_buf_adds(&b, prompt);
	fg_buf_adds(&b, section);
	return fg_buf_detach(&b, NULL);
}

char *ep_prompt_reask(const char *prompt)
{
	return with_section(prompt, "\n\n## Your previous answer had no verdict\n\n"
		"You were asked this before and answered without a verdict: neither APPROVED nor\n"
		"REJECTED appeared outside code. Review the work again and end your answer with a\n"
		"last line that is exactly APPROVED, or REJECTED followed by the problems to fix,\n"
		"for example:\n\nREJECTED: tests/test_calc.sh fails: add() returns a - b\n");
}

char *ep_prompt_evidence_reask(const char *prompt)
{
	return with_section(prompt, "\n\n## Your approval needs executed evidence\n\n"
		"You approved without saying what you ran. This review requires an approval to rest\n"
		"on something executed in this pass (tests covering the change, a lint, a\n"
		"reproduction). Run it, then give your verdict with one line per check, for example:\n\n"
		"**Verified:** sh tests/test_calc.sh -> 4 passed, 0 failed\n\nAPPROVED\n");
}

char *ep_prompt_with_system(const char *system, const char *prompt)
{
	struct fg_buf b;

	fg_buf_init(&b, EP_PROMPT_MAX);
	fg_buf_adds(&b, system);
	fg_buf_adds(&b, "\n\n---\n\n");
	fg_buf_adds(&b, prompt);
	return fg_buf_detach(&b, NULL);
}
