/*
 * test_rules.c - the review loop's pure rules (rules.h), case by case: the
 * stall rule, fitting a panel's cycle under its file bound, the budget.
 * The end-to-end tests keep only what proves the loop applies them
 * (tests/e2e/test_review_loop.c, test_review_panel.c, test_agent_loop.c).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/rules.h"
#include "forge/util.h"

TestSuite(rules, .timeout = 30);

/* ---- the stall rule ---------------------------------------------------- */

/* One side of a stall case: its verdict, feedback, and findings as
 * "file|title" strings ("-" for no file: NULL; "" for an empty one);
 * listed: the cycle carried a findings array (has_findings). */
struct side {
	bool approved;
	bool failed;
	const char *feedback;
	bool listed;
	const char *findings[4];
};

static void make_cycle(struct fg_cycle *c, int n, const struct side *s)
{
	fg_cycle_init(c);
	c->cycle = n;
	c->max_cycles = 5;
	c->j.verdict = s->approved ? FG_VERDICT_APPROVED : FG_VERDICT_REJECTED;
	c->j.feedback = fg_xstrdup(s->feedback);
	c->j.has_findings = s->listed;
	for (size_t i = 0; i < ARRAY_SIZE(s->findings) && s->findings[i]; i++) {
		const char *bar = strchr(s->findings[i], '|');
		struct fg_finding *f;

		c->j.findings = fg_xreallocarray(c->j.findings, c->j.nfindings + 1, sizeof(*f));
		f = &c->j.findings[c->j.nfindings++];
		memset(f, 0, sizeof(*f));
		f->line = -1;
		f->file_path = !strncmp(s->findings[i], "-|", 2) ? NULL
			       : fg_xstrndup(s->findings[i], (size_t)(bar - s->findings[i]));
		f->title = fg_xstrdup(bar + 1);
		f->description = fg_xasprintf("described differently in cycle %d", n);
	}
}

struct stall_case {
	const char *name;
	struct side a, b;
	bool stalled;
};

static const struct stall_case STALL[] = {
	/* Plain feedback: equal after collapsing whitespace runs and trimming. */
	{ "same feedback, whitespace varied",
	  { false, false, "  Missing   tests for\tparse.c \n", false, { NULL } },
	  { false, false, "Missing tests\nfor parse.c\n\n", false, { NULL } }, true },
	{ "same feedback, padded", { false, false, "  the   greeting is wrong  ", false, { NULL } },
	  { false, false, "the greeting is wrong", false, { NULL } }, true },
	{ "both empty", { false, false, "", false, { NULL } }, { false, false, " \n", false, { NULL } },
	  true },
	{ "changing feedback", { false, false, "Problem number 1 remains.", false, { NULL } },
	  { false, false, "Problem number 2 remains.", false, { NULL } }, false },
	/* A, B, A: each consecutive pair differs. */
	{ "A then B", { false, false, "Problem 1 remains.", false, { NULL } },
	  { false, false, "Problem 0 remains.", false, { NULL } }, false },
	{ "B then A", { false, false, "Problem 0 remains.", false, { NULL } },
	  { false, false, "Problem 1 remains.", false, { NULL } }, false },
	{ "inner whitespace counts", { false, false, "ab", false, { NULL } },
	  { false, false, "a b", false, { NULL } }, false },
	{ "a prefix is not equal", { false, false, "a", false, { NULL } },
	  { false, false, "ab", false, { NULL } }, false },
	/* Structured findings: only the (file, title) set decides. */
	{ "same findings reworded",
	  { false, false, "## Review 1\nThree problems.", true,
	    { "src/parse.c|Off-by-one in parse_line", "README.md|Typo" } },
	  { false, false, "## Review 2\nTwo problems remain.", true,
	    { "src/parse.c|Off-by-one in parse_line", "README.md|Typo" } }, true },
	{ "same findings, other order, repeated",
	  { false, false, "x", true, { "a.c|One", "b.c|Two", "a.c|One" } },
	  { false, false, "y", true, { "b.c|Two", "a.c|One" } }, true },
	{ "no file and an empty file are the same",
	  { false, false, "x", true, { "-|General" } }, { false, false, "y", true, { "|General" } }, true },
	{ "findings with new titles",
	  { false, false, "same", true, { "src/parse.c|Off-by-one, take 1" } },
	  { false, false, "same", true, { "src/parse.c|Off-by-one, take 2" } }, false },
	{ "a finding in another file", { false, false, "same", true, { "a.c|One" } },
	  { false, false, "same", true, { "b.c|One" } }, false },
	{ "one more finding", { false, false, "same", true, { "a.c|One" } },
	  { false, false, "same", true, { "a.c|One", "a.c|Two" } }, false },
	/* Findings on one side only: the feedback decides. */
	{ "findings on one side only, same feedback", { false, false, "Fix it.", true, { "a.c|One" } },
	  { false, false, "Fix  it.", false, { NULL } }, true },
	{ "an empty findings array, other feedback", { false, false, "Fix it.", true, { NULL } },
	  { false, false, "Fix that.", true, { NULL } }, false },
	{ "an empty findings array, same feedback", { false, false, "Fix it.", true, { NULL } },
	  { false, false, "Fix it.", true, { NULL } }, true },
	/* Only two rejections by reviewers that completed. */
	{ "first approved", { true, false, "", false, { NULL } }, { false, false, "", false, { NULL } },
	  false },
	{ "second approved", { false, false, "", false, { NULL } }, { true, false, "", false, { NULL } },
	  false },
	{ "first reviewer failed",
	  { false, true, "The review could not be completed: Reached maximum number of turns (1).", false,
	    { NULL } },
	  { false, false, "The review could not be completed: Reached maximum number of turns (1).", false,
	    { NULL } }, false },
	{ "both reviewers failed",
	  { false, true, "The review could not be completed: x.", false, { NULL } },
	  { false, true, "The review could not be completed: x.", false, { NULL } }, false },
	{ "second reviewer failed, same findings", { false, false, "x", true, { "a.c|One" } },
	  { false, true, "x", true, { "a.c|One" } }, false },
};

Test(rules, stall_rule_table)
{
	for (size_t i = 0; i < ARRAY_SIZE(STALL); i++) {
		const struct stall_case *k = &STALL[i];
		struct fg_cycle a, b;

		make_cycle(&a, 1, &k->a);
		make_cycle(&b, 2, &k->b);
		cr_expect_eq(fg_rules_stalled(&a, k->a.failed, &b, k->b.failed), k->stalled, "%s", k->name);
		/* The rule is symmetric in its two cycles. */
		cr_expect_eq(fg_rules_stalled(&b, k->b.failed, &a, k->a.failed), k->stalled, "%s (swapped)",
			     k->name);
		fg_cycle_release(&a);
		fg_cycle_release(&b);
	}
}

/* ---- fitting a panel's cycle -------------------------------------------- */

/* A panel cycle of two roles; each role's feedback and each finding's
 * description, evidence and fix hold text_len bytes. */
static void make_panel(struct fg_cycle *c, bool reviews, size_t text_len)
{
	char *text = fg_xmalloc(text_len + 1);

	memset(text, 'x', text_len);
	text[text_len] = '\0';
	fg_cycle_init(c);
	c->cycle = 1;
	c->max_cycles = 3;
	c->skill = fg_xstrdup("impl");
	c->j.feedback = fg_xstrdup("[a] merged feedback");
	c->j.has_findings = true;
	c->j.nfindings = 1;
	c->j.findings = fg_xcalloc(1, sizeof(*c->j.findings));
	c->j.findings[0] = (struct fg_finding){ fg_xstrdup("BLOCKING"), 1, fg_xstrdup("a.c"), 3,
						fg_xstrdup("Title"), fg_xstrdup(text), fg_xstrdup(text),
						fg_xstrdup(text), fg_xstrdup("a") };
	c->has_reviews = reviews;
	c->nreviews = reviews ? 2 : 0;
	c->reviews = reviews ? fg_xcalloc(2, sizeof(*c->reviews)) : NULL;
	for (size_t i = 0; i < c->nreviews; i++) {
		struct fg_review *r = &c->reviews[i];

		fg_review_init(r);
		r->role[0] = (char)('a' + i);
		r->j.feedback = fg_xstrdup(text);
		r->j.has_findings = true;
		r->j.nfindings = 1;
		r->j.findings = fg_xcalloc(1, sizeof(*r->j.findings));
		fg_finding_copy(&r->j.findings[0], &c->j.findings[0]);
	}
	free(text);
}

static size_t json_len(const struct fg_cycle *c)
{
	char *text = fg_cycle_to_json(c);
	size_t n = strlen(text);

	free(text);
	return n;
}

struct fit_case {
	const char *name;
	bool reviews;
	size_t text_len;
	size_t max;             /* 0: exactly the cycle's length, unfitted */
	bool findings_short;    /* descriptions, evidence and fixes dropped */
	bool feedback_short;    /* each role's feedback replaced */
};

static const struct fit_case FIT[] = {
	{ "under the bound: untouched", true, 100, 1u << 20, false, false },
	{ "exactly at the bound: untouched", true, 100, 0, false, false },
	{ "without reviews: untouched, whatever its size", false, 5000, 100, false, false },
	/* 2 roles x 3 texts x 5000 bytes go; 2 feedbacks of 5000 stay. */
	{ "findings' texts go first", true, 5000, 13000, true, false },
	{ "then each role's feedback", true, 5000, 4000, true, true },
};

static void check_fit(const struct fit_case *k)
{
	static const char gone[] = "(too long for the cycle file: see the reviewer log)";
	struct fg_cycle c;
	size_t max;

	make_panel(&c, k->reviews, k->text_len);
	max = k->max ? k->max : json_len(&c);
	fg_rules_fit(&c, max);
	cr_expect_eq(c.j.findings[0].description == NULL, k->findings_short, "%s", k->name);
	cr_expect_eq(c.j.findings[0].evidence == NULL, k->findings_short, "%s", k->name);
	cr_expect_eq(c.j.findings[0].fix == NULL, k->findings_short, "%s", k->name);
	cr_expect_str_eq(c.j.findings[0].title, "Title", "%s: the title stays", k->name);
	cr_expect_str_eq(c.j.feedback, "[a] merged feedback", "%s: the merged feedback stays", k->name);
	for (size_t i = 0; i < c.nreviews; i++) {
		const struct fg_review *r = &c.reviews[i];

		cr_expect_eq(r->j.findings[0].description == NULL, k->findings_short, "%s", k->name);
		cr_expect_eq(r->j.findings[0].fix == NULL, k->findings_short, "%s", k->name);
		cr_expect_str_eq(r->j.findings[0].title, "Title", "%s", k->name);
		cr_expect_eq(!strcmp(r->j.feedback, gone), k->feedback_short, "%s", k->name);
	}
	if (k->reviews)
		cr_expect_leq(json_len(&c), max, "%s: fits", k->name);
	fg_cycle_release(&c);
}

Test(rules, fit_table)
{
	for (size_t i = 0; i < ARRAY_SIZE(FIT); i++)
		check_fit(&FIT[i]);
}

/* ---- the budget --------------------------------------------------------- */

struct budget_case {
	const char *name;
	double max;
	bool worker_cost, reviewer_cost;   /* which roles reported a cost */
	double worker, reviewer;
	bool over;
	bool spent_set;
	double spent;
};

static const struct budget_case BUDGET[] = {
	{ "no budget", -1, true, true, 5, 5, false, false, 0 },
	{ "no cost reported", 1, false, false, 0, 0, false, false, 0 },
	{ "at the budget is not over it", 1, true, false, 1, 0, false, true, 1 },
	{ "past it", 1, true, false, 1.5, 0, true, true, 1.5 },
	{ "both roles count", 1, true, true, 0.6, 0.6, true, true, 1.2 },
	{ "the reviewer alone", 0.5, false, true, 0, 0.75, true, true, 0.75 },
	{ "a zero budget, any cost", 0, true, false, 0.0001, 0, true, true, 0.0001 },
	{ "a zero budget, zero cost", 0, true, false, 0, 0, false, true, 0 },
};

Test(rules, budget_table)
{
	for (size_t i = 0; i < ARRAY_SIZE(BUDGET); i++) {
		const struct budget_case *k = &BUDGET[i];
		struct fg_usage_pair p;
		double spent = -42;

		memset(&p, 0, sizeof(p));
		if (k->worker_cost)
			fg_usage_set_cost(&p.worker, k->worker);
		if (k->reviewer_cost)
			fg_usage_set_cost(&p.reviewer, k->reviewer);
		cr_expect_eq(fg_rules_over_budget(k->max, &p, &spent), k->over, "%s", k->name);
		if (k->spent_set)
			cr_expect_float_eq(spent, k->spent, 1e-9, "%s", k->name);
		else
			cr_expect_eq(spent, -42, "%s: spent untouched", k->name);
		cr_expect_eq(fg_rules_over_budget(k->max, &p, NULL), k->over, "%s (no spent)", k->name);
	}
}
