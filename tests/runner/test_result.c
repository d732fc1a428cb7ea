/*
 * test_result.c - the review state of a run (from the summary, else derived
 * from the cycles) and its spelling in the result file.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "fgtest.h"
#include "forge/util.h"
#include "result.h"

TestSuite(result, .timeout = 30);

static void put(struct rn_cycles *s, int n, int max, enum fg_verdict_kind v, bool stalled)
{
	struct fg_cycle c;

	fg_cycle_init(&c);
	c.cycle = n;
	c.max_cycles = max;
	c.verdict = v;
	c.stalled = stalled;
	c.feedback = strdup(v == FG_VERDICT_APPROVED ? "" : "fix it");
	c.skill = strdup("implement-task");
	rn_cycles_put(s, &c);
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
		/* The result still says "none" for both until that word is retired. */
		{ FG_STATE_DISABLED, "none" },     { FG_STATE_NO_REVIEW, "none" },
	};

	cr_assert_eq(ARRAY_SIZE(cases), FG_STATE_COUNT);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct rn_result r = { .exit_code = 0, .review_state = cases[i].s };
		char *json = rn_result_to_json(&r);
		char *want = fgt_fmt("\"review_state\":\t\"%s\"", cases[i].word);

		cr_expect_str_eq(rn_result_state_name(cases[i].s), cases[i].word);
		cr_expect_not_null(strstr(json, want), "%s", json);
		free(want);
		free(json);
	}
}
