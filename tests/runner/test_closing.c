/*
 * test_closing.c - the closing line of a run (closing.h).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "closing.h"

TestSuite(closing, .timeout = 30);

Test(closing, says_the_step_state_cycles_cost_time_and_result)
{
	static const struct {
		struct rn_closing c;
		const char *want;
	} cases[] = {
		{ { .step = "implement_task", .outcome = "approved", .cycles = 2, .max_cycles = 3,
		    .have_cost = true, .cost_usd = 0.5512, .seconds = 41.2, .result_path = "/r/result.json" },
		  "implement_task: approved in 2/3 cycles, $0.55, 41 s; result: /r/result.json" },
		{ { .step = "s", .outcome = "no_review", .seconds = 0.25 }, "s: no_review, 0.2 s" },
		/* An approval whose findings were all advice says so. */
		{ { .step = "greet", .outcome = "approved", .cycles = 1, .max_cycles = 3, .advice = 1, .seconds = 0.8 },
		  "greet: approved in 1/3 cycles (1 advice finding, not looped on), 0.8 s" },
		{ { .step = "g", .outcome = "approved", .cycles = 2, .advice = 3, .seconds = 2 },
		  "g: approved in 2 cycles (3 advice findings, not looped on), 2.0 s" },
		{ { .step = "s", .outcome = "exhausted", .cycles = 1, .max_cycles = 1, .have_cost = true,
		    .cost_usd = 0.0042, .seconds = 12 }, "s: exhausted in 1/1 cycle, $0.0042, 12 s" },
		{ { .step = "s", .outcome = "failed", .seconds = 3.2, .exit_code = 1,
		    .reason = "the task failed: worker exited with status 3" },
		  "s: failed, 3.2 s; exit 1: the task failed: worker exited with status 3" },
		/* The held-out audit's outcome, when there was one. */
		{ { .step = "impl", .outcome = "audit_rejected", .cycles = 3, .max_cycles = 3, .audit = "disagreed",
		    .have_cost = true, .cost_usd = 0.28, .seconds = 0.7, .exit_code = 4 },
		  "impl: audit_rejected in 3/3 cycles (the audit disagreed), $0.28, 0.7 s; exit 4" },
		{ { .step = "impl", .outcome = "approved", .cycles = 1, .max_cycles = 3, .audit = "skipped", .seconds = 1 },
		  "impl: approved in 1/3 cycles (the audit was skipped), 1.0 s" },
		/* A sandbox's reason cannot start a line or move the cursor. */
		{ { .step = "s", .outcome = "error", .seconds = 1, .exit_code = 125,
		    .reason = "a\nb\033[2K" }, "s: error, 1.0 s; exit 125: a\\nb\\x1b[2K" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = rn_closing_line(&cases[i].c);

		cr_expect_str_eq(got, cases[i].want, "case %zu", i);
		free(got);
	}
}

Test(closing, a_long_reason_is_cut)
{
	char reason[600];
	struct rn_closing c = { .step = "s", .outcome = "failed", .seconds = 1, .exit_code = 1 };
	char *got;

	memset(reason, 'x', sizeof(reason) - 1);
	reason[sizeof(reason) - 1] = '\0';
	c.reason = reason;
	got = rn_closing_line(&c);
	cr_expect_lt(strlen(got), 300, "%zu bytes", strlen(got));
	cr_expect(strstr(got, "xxx...") != NULL, "%s", got);
	free(got);
}
