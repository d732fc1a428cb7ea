/*
 * test_result.c - the review state of a run (from the summary, else derived
 * from the cycles) and its spelling in the result file.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cycles_check.h"
#include "fgtest.h"
#include "forge/util.h"
#include "result.h"
#include "watch.h"

#include "../common/cycle_sample.h"

TestSuite(result, .timeout = 30);

static void put(struct rn_cycles *s, int n, int max, enum fg_verdict_kind v, bool stalled)
{
	struct fg_cycle c;

	fg_cycle_init(&c);
	c.cycle = n;
	c.max_cycles = max;
	c.j.verdict = v;
	c.stalled = stalled;
	c.j.feedback = strdup(v == FG_VERDICT_APPROVED ? "" : "fix it");
	c.skill = strdup("implement-task");
	rn_cycles_put(s, &c, false, RN_SOURCE_WATCH);
	rnc_cycles_check(s);
	fg_cycle_release(&c);
}

Test(result, state_derived_from_the_cycles_without_a_summary)
{
	struct rn_cycles s;

	rn_cycles_init(&s);
	cr_expect_eq(rn_review_state(&s, NULL), FG_STATE_NO_REVIEW);
	put(&s, 1, 3, FG_VERDICT_REJECTED, false);
	cr_expect_eq(rn_review_state(&s, NULL), FG_STATE_FAILED, "ended early");
	put(&s, 2, 3, FG_VERDICT_REJECTED, true);
	cr_expect_eq(rn_review_state(&s, NULL), FG_STATE_STALLED);
	put(&s, 3, 3, FG_VERDICT_REJECTED, false);
	cr_expect_eq(rn_review_state(&s, NULL), FG_STATE_EXHAUSTED);
	put(&s, 3, 3, FG_VERDICT_APPROVED, false);
	cr_expect_eq(rn_review_state(&s, NULL), FG_STATE_APPROVED, "a newer content replaces");
	rn_cycles_release(&s);
}

Test(result, summary_state_wins_over_the_cycles)
{
	struct rn_cycles s;
	struct fg_summary sum;

	rn_cycles_init(&s);
	fg_summary_init(&sum);
	put(&s, 1, 3, FG_VERDICT_APPROVED, false);
	for (int st = 0; st < FG_STATE_COUNT; st++) {
		sum.state = (enum fg_review_state)st;
		cr_expect_eq(rn_review_state(&s, &sum), (enum fg_review_state)st);
	}
	fg_summary_release(&sum);
	rn_cycles_release(&s);
}

Test(result, result_file_names_every_state)
{
	static const struct { enum fg_review_state s; const char *word; } cases[] = {
		{ FG_STATE_APPROVED, "approved" }, { FG_STATE_EXHAUSTED, "exhausted" },
		{ FG_STATE_STALLED, "stalled" },   { FG_STATE_BLOCKED, "blocked" },
		{ FG_STATE_OVER_BUDGET, "over_budget" }, { FG_STATE_FAILED, "failed" },
		/* One name per state: disabled and no_review are not both "none". */
		{ FG_STATE_DISABLED, "disabled" }, { FG_STATE_NO_REVIEW, "no_review" },
		{ FG_STATE_AUDIT_REJECTED, "audit_rejected" },
	};

	cr_assert_eq(ARRAY_SIZE(cases), FG_STATE_COUNT);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct rn_result r = { .exit_code = 0, .review_state = cases[i].s };
		char *json = rn_result_to_json(&r);
		char *want = fgt_fmt("\"review_state\":\t\"%s\"", cases[i].word);

		cr_expect_not_null(strstr(json, want), "%s", json);
		free(want);
		free(json);
	}
}

static void make(struct fg_cycle *c, int n, const char *feedback, enum fg_verdict_kind v)
{
	cycle_make(c, n, v, feedback);
}

Test(result, one_cycle_from_several_sources_is_new_once)
{
	struct rn_cycles s;
	struct fg_cycle c, d, e;
	enum rn_source first = RN_SOURCE_WATCH;

	rn_cycles_init(&s);
	make(&c, 1, "fix it", FG_VERDICT_REJECTED);
	make(&d, 1, "", FG_VERDICT_REJECTED);     /* c as a truncated frame carries it */
	make(&e, 1, "fix it", FG_VERDICT_APPROVED);
	cr_expect_eq(rn_cycles_classify(&s, &c, false, &first), RN_CYCLE_NEW);
	cr_expect_eq(first, RN_SOURCE_NONE);
	cr_expect_eq(RN_SOURCE_NONE, -1);
	rn_cycles_put(&s, &c, false, RN_SOURCE_WATCH);
	rnc_cycles_check(&s);
	cr_expect_eq(rn_cycles_classify(&s, &c, false, &first), RN_CYCLE_SAME);
	cr_expect_eq(first, RN_SOURCE_WATCH);
	cr_expect_eq(rn_cycles_classify(&s, &d, true, NULL), RN_CYCLE_SAME, "its shortened form");
	cr_expect_eq(rn_cycles_classify(&s, &d, false, NULL), RN_CYCLE_REWRITE, "really emptied");
	cr_expect_eq(rn_cycles_classify(&s, &e, false, NULL), RN_CYCLE_REWRITE);
	cr_expect_eq(rn_cycles_classify(&s, &e, true, NULL), RN_CYCLE_REWRITE, "the verdict differs");
	rn_cycles_release(&s);

	/* The truncated frame first, then the file. */
	rn_cycles_init(&s);
	rn_cycles_put(&s, &d, true, RN_SOURCE_STREAM);
	rnc_cycles_check(&s);
	cr_expect_eq(rn_cycles_classify(&s, &c, false, &first), RN_CYCLE_FULLER);
	cr_expect_eq(first, RN_SOURCE_STREAM);
	cr_expect_eq(rn_cycles_classify(&s, &d, true, NULL), RN_CYCLE_SAME);
	cr_expect_eq(rn_cycles_classify(&s, &e, false, NULL), RN_CYCLE_REWRITE);
	rn_cycles_release(&s);
	fg_cycle_release(&c);
	fg_cycle_release(&d);
	fg_cycle_release(&e);
}

/* Cycle files of the run while the summary says no review.md applied: the
 * state wins, and review_exhausted never contradicts it. */
Test(result, review_exhausted_follows_the_state)
{
	struct rn_cycles s;

	rn_cycles_init(&s);
	put(&s, 1, 1, FG_VERDICT_REJECTED, false);   /* exhausted cycles */
	cr_expect(!rn_review_exhausted(FG_STATE_NO_REVIEW, &s));
	cr_expect(!rn_review_exhausted(FG_STATE_DISABLED, &s));
	cr_expect(!rn_review_exhausted(FG_STATE_APPROVED, &s));
	cr_expect(rn_review_exhausted(FG_STATE_EXHAUSTED, &s));
	cr_expect(rn_review_exhausted(FG_STATE_STALLED, &s), "a stall on the last allowed cycle");
	cr_expect(rn_review_exhausted(FG_STATE_FAILED, &s));
	rn_cycles_release(&s);
	rn_cycles_init(&s);
	cr_expect(rn_review_exhausted(FG_STATE_EXHAUSTED, &s), "the summary's word without cycles seen");
	cr_expect(!rn_review_exhausted(FG_STATE_STALLED, &s));
	rn_cycles_release(&s);
}

/* Out of order, rewritten, past the byte bound: the invariants hold after
 * every put, a cycle that does not fit keeps its record, and a rewrite
 * gives its bytes back. */
Test(result, cycle_set_invariants_hold_through_puts_past_the_bound)
{
	static const int order[] = { 5, 1, 9, 3, 7, 2, 8, 4, 6, 10, 5, 1 };
	struct rn_cycles s;
	struct fg_cycle c;
	size_t kept = 0;

	rn_cycles_init(&s);
	cr_assert_eq(s.max_bytes, RN_CYCLES_MAX_BYTES);
	s.max_bytes = 10000;
	rnc_cycles_check(&s);
	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		char fb[1000];

		memset(fb, 'a' + (int)i, sizeof(fb) - 1);
		fb[sizeof(fb) - 1] = '\0';
		make(&c, order[i], fb, FG_VERDICT_REJECTED);
		kept += !rn_cycles_put(&s, &c, false, RN_SOURCE_POLL);
		rnc_cycles_check(&s);
		fg_cycle_release(&c);
	}
	cr_assert_eq(s.n, 10);
	cr_assert(kept >= 3 && kept < ARRAY_SIZE(order), "%zu kept", kept);
	kept = 0;
	for (size_t i = 0; i < s.n; i++)
		kept += s.v[i].obj != NULL;
	cr_assert_eq(rn_cycles_dropped(&s), s.n - kept);
	cr_assert(s.bytes > 0 && s.bytes <= 10000);
	rn_cycles_release(&s);
	rnc_cycles_check(&s);
}
