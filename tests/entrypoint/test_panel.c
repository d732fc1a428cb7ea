/*
 * test_panel.c - a reviewer panel's decisions on cycles: which roles run
 * again, the merged verdict, feedback and findings, blocked; and the
 * merged worker feedback (prompt.c) of a panel's cycle.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "panel.h"
#include "prompt.h"

TestSuite(panel, .timeout = 10);

/* One finding "SEV path:line title". */
static void finding(struct fg_review *r, const char *sev, const char *path, int line,
		    const char *title)
{
	struct fg_finding *f;

	r->j.findings = fg_xreallocarray(r->j.findings, r->j.nfindings + 1, sizeof(*r->j.findings));
	f = &r->j.findings[r->j.nfindings++];
	memset(f, 0, sizeof(*f));
	f->severity = fg_xstrdup(sev);
	f->file_path = path ? fg_xstrdup(path) : NULL;
	f->line = line;
	f->title = fg_xstrdup(title);
	r->j.has_findings = true;
}

static struct fg_review *add_review(struct fg_cycle *c, const char *role, enum fg_role_verdict v,
				    const char *feedback)
{
	struct fg_review *r;

	c->reviews = fg_xreallocarray(c->reviews, c->nreviews + 1, sizeof(*c->reviews));
	r = &c->reviews[c->nreviews++];
	fg_review_init(r);
	snprintf(r->role, sizeof(r->role), "%s", role);
	fg_review_set_verdict(r, v);
	r->j.feedback = fg_xstrdup(feedback);
	c->has_reviews = true;
	return r;
}

static void new_cycle(struct fg_cycle *c, int n)
{
	fg_cycle_init(c);
	c->cycle = n;
	c->max_cycles = 3;
	c->j.feedback = fg_xstrdup("");
	c->skill = fg_xstrdup("s");
}

Test(panel, merge_rejects_when_any_role_rejects_and_keeps_roles_on_findings)
{
	struct fg_cycle c;
	struct fg_review *r;

	new_cycle(&c, 1);
	add_review(&c, "security", FG_ROLE_OUT_OF_SCOPE, "");
	r = add_review(&c, "correctness", FG_ROLE_REJECTED, "Fix the leak.");
	finding(r, "BLOCKING", "a.c", 3, "Leak");
	ep_panel_merge(&c);
	cr_assert_eq(c.j.verdict, FG_VERDICT_REJECTED);
	cr_assert_str_eq(c.j.feedback, "[correctness] Fix the leak.");
	cr_assert(c.j.has_findings);
	cr_assert_eq(c.j.nfindings, 1);
	cr_assert_str_eq(c.j.findings[0].role, "correctness");
	/* Merging again (a rewrite) gives the same, without leaking. */
	ep_panel_merge(&c);
	cr_assert_eq(c.j.nfindings, 1);
	fg_cycle_release(&c);

	new_cycle(&c, 1);
	add_review(&c, "a", FG_ROLE_APPROVED, "");
	add_review(&c, "b", FG_ROLE_OUT_OF_SCOPE, "");
	ep_panel_merge(&c);
	cr_assert_eq(c.j.verdict, FG_VERDICT_APPROVED);
	cr_assert_str_eq(c.j.feedback, "");
	cr_assert_not(c.j.has_findings);
	fg_cycle_release(&c);
}

/* A role whose feedback does not fit gets its heading and where the whole
 * text is; every later role still gets its own part (the sticky error of
 * the merged buffer once dropped them all). */
Test(panel, merge_keeps_every_role_after_one_whose_feedback_does_not_fit)
{
	struct fg_cycle c;
	char *huge = fg_xmalloc(FG_FEEDBACK_MAX + 2);
	struct fg_review *r;

	memset(huge, 'x', FG_FEEDBACK_MAX + 1);
	huge[FG_FEEDBACK_MAX + 1] = '\0';
	new_cycle(&c, 1);
	add_review(&c, "a", FG_ROLE_REJECTED, "short");
	r = add_review(&c, "b", FG_ROLE_REJECTED, huge);
	r->reviewer_log = fg_xstrdup("review_cycle_1.b.reviewer.log");
	add_review(&c, "c", FG_ROLE_REJECTED, "third");
	add_review(&c, "d", FG_ROLE_REJECTED, "fourth");
	ep_panel_merge(&c);
	cr_assert_str_eq(c.j.feedback,
			 "[a] short\n\n"
			 "[b] (feedback too long: see review_cycle_1.b.reviewer.log)\n\n"
			 "[c] third\n\n"
			 "[d] fourth");
	free(huge);
	fg_cycle_release(&c);
}

Test(panel, only_rejected_or_failed_roles_run_again)
{
	struct fg_cycle prev;

	new_cycle(&prev, 1);
	add_review(&prev, "a", FG_ROLE_APPROVED, "");
	add_review(&prev, "b", FG_ROLE_REJECTED, "x")->failed = true;
	add_review(&prev, "c", FG_ROLE_OUT_OF_SCOPE, "");
	add_review(&prev, "d", FG_ROLE_REJECTED, "y");
	cr_assert(ep_panel_runs(NULL, "a", FG_REREVIEW_REJECTED), "cycle 1 runs every role");
	cr_assert_not(ep_panel_runs(&prev, "a", FG_REREVIEW_REJECTED));
	cr_assert(ep_panel_runs(&prev, "b", FG_REREVIEW_REJECTED));
	cr_assert_not(ep_panel_runs(&prev, "c", FG_REREVIEW_REJECTED));
	cr_assert(ep_panel_runs(&prev, "d", FG_REREVIEW_REJECTED));
	cr_assert(ep_panel_runs(&prev, "e", FG_REREVIEW_REJECTED), "a role without a review runs");
	cr_assert(ep_panel_runs(&prev, "a", FG_REREVIEW_ALL));
	cr_assert(ep_panel_any_failed(&prev));
	fg_cycle_release(&prev);
}

struct blocked_case {
	const char *what;
	const char *sev[3];    /* severities of role a's findings (NULL ends) */
	bool a_rejects;
	bool b_rejects_free_text;
	bool a_failed;
	bool want;
};

Test(panel, blocked_only_when_questions_alone_remain)
{
	static const struct blocked_case cases[] = {
		{ "one question", { "QUESTION" }, true, false, false, true },
		{ "question and note", { "question", "NOTE" }, true, false, false, true },
		{ "question and blocking", { "QUESTION", "BLOCKING" }, true, false, false, false },
		{ "question and suggestion", { "QUESTION", "MAJOR" }, true, false, false, false },
		{ "notes only", { "NOTE" }, true, false, false, false },
		{ "no findings", { NULL }, true, false, false, false },
		{ "a free-text rejection too", { "QUESTION" }, true, true, false, false },
		{ "a failed role", { "QUESTION" }, true, false, true, false },
		{ "approved", { "QUESTION" }, false, false, false, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct blocked_case *k = &cases[i];
		struct fg_cycle c;
		struct fg_review *a;

		new_cycle(&c, 1);
		a = add_review(&c, "a", k->a_rejects ? FG_ROLE_REJECTED : FG_ROLE_APPROVED, "q");
		a->failed = k->a_failed;
		for (size_t j = 0; j < 3 && k->sev[j]; j++)
			finding(a, k->sev[j], "x.c", 1, "T");
		add_review(&c, "b", k->b_rejects_free_text ? FG_ROLE_REJECTED : FG_ROLE_APPROVED, "no");
		ep_panel_merge(&c);
		cr_assert_eq(ep_panel_blocked(&c), k->want, "%s", k->what);
		fg_cycle_release(&c);
	}
}

Test(panel, blocked_for_a_single_reviewer_too)
{
	struct fg_cycle c;

	new_cycle(&c, 1);
	c.j.verdict = FG_VERDICT_REJECTED;
	c.j.has_findings = true;
	c.j.nfindings = 1;
	c.j.findings = fg_xcalloc(1, sizeof(*c.j.findings));
	c.j.findings[0].severity = fg_xstrdup("QUESTION");
	c.j.findings[0].line = -1;
	cr_assert(ep_panel_blocked(&c));
	c.synthetic = true;
	cr_assert_not(ep_panel_blocked(&c), "the synthetic exhaustion marker is no question");
	fg_cycle_release(&c);
}

Test(panel, worker_feedback_is_one_list_blocking_first_grouped_by_role)
{
	struct fg_cycle c;
	struct fg_review *r;
	struct fg_buf b;

	new_cycle(&c, 1);
	r = add_review(&c, "correctness", FG_ROLE_REJECTED, "report");
	finding(r, "NOTE", "a.c", 9, "Name");
	finding(r, "BLOCKING", "a.c", 3, "Leak");
	add_review(&c, "docs", FG_ROLE_APPROVED, "")->from_cycle = 1;
	add_review(&c, "security", FG_ROLE_REJECTED, "Input is not bounded.");
	ep_panel_merge(&c);
	fg_buf_init(&b, 1 << 20);
	ep_prompt_feedback(&b, &c);
	cr_assert_str_eq(fg_buf_str(&b),
			 "### Blocking\n"
			 "\n#### correctness\n\n"
			 "- [BLOCKING] a.c:3: Leak\n"
			 "\n#### security\n\n"
			 "Input is not bounded.\n"
			 "\n### Other findings\n"
			 "\n#### correctness\n\n"
			 "- [NOTE] a.c:9: Name\n");
	fg_buf_release(&b);
	fg_cycle_release(&c);
}

/* ---- supervision of the helpers, with real forks ---- */

/* Helper 0 answers and exits 0; helper 1 does what ctx says. */
static int job(void *ctx, size_t i, struct ep_pid1 *p, int out_fd)
{
	const char *how = ctx;

	(void)p;
	if (i == 0 || !strcmp(how, "ok")) {
		(void)!write(out_fd, "{}", 2);
		return 0;
	}
	if (!strcmp(how, "stop"))
		raise(SIGSTOP);
	else if (!strcmp(how, "hang"))
		sleep(30);
	else if (!strcmp(how, "exit3"))
		(void)!write(out_fd, "{}", 2);
	return 3;
}

static void fork_two(const char *how, double deadline_s, struct ep_panel_end *end)
{
	struct ep_pid1 p;
	struct fg_buf out[2];
	pid_t kids[4];

	cr_assert_eq(ep_pid1_init(&p), 0);
	fg_buf_init(&out[0], 1024);
	fg_buf_init(&out[1], 1024);
	cr_assert_eq(ep_panel_fork(&p, 2, job, (void *)how, deadline_s, out, end), 0);
	cr_assert_str_eq(fg_buf_str(&out[0]), "{}");
	cr_assert_not(end[0].failed, "%s", end[0].why);
	/* No helper nor anything of theirs is left. */
	cr_assert_eq(ep_pid1_children(kids, 4), 0);
	fg_buf_release(&out[0]);
	fg_buf_release(&out[1]);
	ep_pid1_release(&p);
}

Test(panel, a_stopped_helper_is_killed_and_its_role_failed)
{
	struct ep_panel_end end[2];

	fork_two("stop", 20, end);
	cr_assert(end[1].failed);
	cr_assert_not_null(strstr(end[1].why, "was stopped by signal 19"), "%s", end[1].why);
}

Test(panel, a_helper_past_its_deadline_is_killed_and_its_role_failed)
{
	struct ep_panel_end end[2];

	fork_two("hang", 0.5, end);
	cr_assert(end[1].failed);
	cr_assert_not_null(strstr(end[1].why, "did not finish within 0.5 s"), "%s", end[1].why);
}

Test(panel, a_helper_that_exits_with_an_error_fails_its_role_whatever_it_wrote)
{
	struct ep_panel_end end[2];

	fork_two("exit3", 20, end);
	cr_assert(end[1].failed);
	cr_assert_str_eq(end[1].why, "its helper process exited with status 3");
	fork_two("ok", 20, end);
	cr_assert_not(end[1].failed, "%s", end[1].why);
}
