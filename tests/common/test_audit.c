/*
 * test_audit.c - the audit's record and its sampling (forge/audit.h).
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "forge/audit.h"
#include "forge/json.h"

TestSuite(audit, .timeout = 30);

Test(audit, outcome_names_and_parse)
{
	static const char *const names[] = { "agreed", "disagreed", "failed", "skipped" };
	enum fg_audit_outcome o = FG_AUDIT_AGREED;

	for (int i = 0; i < FG_AUDIT_OUTCOME_COUNT; i++) {
		cr_expect_str_eq(fg_audit_outcome_name((enum fg_audit_outcome)i), names[i]);
		cr_expect_eq(fg_audit_outcome_parse(names[i], &o), 0);
		cr_expect_eq((int)o, i);
	}
	cr_expect_eq(fg_audit_outcome_parse("Agreed", &o), -EINVAL);
	cr_expect_eq(fg_audit_outcome_parse("", &o), -EINVAL);
	cr_expect_str_eq(fg_audit_outcome_name(FG_AUDIT_OUTCOME_COUNT), "failed");
}

/* The draw is a pure function of run id, step and skill: the same inputs
 * give the same figure (a rerun with --run-id decides alike), the
 * documented FNV-1a of "RUN\nSTEP\nSKILL" (so an orchestrator can predict
 * it), in [0, 1), and spread: of 2000 run ids about a fifth fall below 0.2. */
Test(audit, draw_is_reproducible_and_spread)
{
	int below = 0;

	cr_assert_eq(fg_audit_draw("build-42", "impl", "impl"), fg_audit_draw("build-42", "impl", "impl"));
	cr_assert_neq(fg_audit_draw("build-42", "impl", "impl"), fg_audit_draw("build-43", "impl", "impl"));
	cr_assert_neq(fg_audit_draw("build-42", "impl", "impl"), fg_audit_draw("build-42", "impl2", "impl"));
	/* NULL reads as "". */
	cr_assert_eq(fg_audit_draw(NULL, "s", "k"), fg_audit_draw("", "s", "k"));
	/* FNV-1a 64 of "" is its offset basis 0xcbf29ce484222325; of "\n\n"
	 * (empty run id, step and skill) computed by hand below. */
	{
		unsigned long long h = 0xcbf29ce484222325ull;

		h ^= '\n';
		h *= 0x100000001b3ull;
		h ^= '\n';
		h *= 0x100000001b3ull;
		cr_assert_eq(fg_audit_draw("", "", ""), (double)(h >> 11) / 9007199254740992.0);
	}
	for (int i = 0; i < 2000; i++) {
		char id[32];
		double d;

		snprintf(id, sizeof(id), "run-%d", i);
		d = fg_audit_draw(id, "implement_task", "implement-task");
		cr_assert(d >= 0 && d < 1);
		below += d < 0.2;
	}
	cr_assert(below > 300 && below < 500, "%d of 2000 below 0.2", below);
}

Test(audit, json_round_trip_and_lenient_reader)
{
	struct fg_audit a, b;
	cJSON *o;

	fg_audit_init(&a);
	cr_assert_eq(a.outcome, FG_AUDIT_SKIPPED);
	cr_assert_float_eq(a.sample, 1, 1e-12);
	a.outcome = FG_AUDIT_FAILED;
	fg_audit_set_reason(&a, "the audit gave no verdict");
	a.sample = 0.5;
	o = fg_audit_to_cjson(&a);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "verdict")));
	cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "usage")));
	cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "cost_usd")));
	fg_audit_init(&b);
	cr_assert_eq(fg_audit_from_cjson(&b, o), 0);
	cr_assert_eq(b.outcome, FG_AUDIT_FAILED);
	cr_assert_not(b.has_verdict);
	cr_assert_str_eq(b.reason, "the audit gave no verdict");
	cr_assert_float_eq(b.sample, 0.5, 1e-12);
	cJSON_Delete(o);
	/* Out-of-range numbers fall back; no outcome: refused, left empty. */
	o = fg_json_parse_exact("{\"outcome\":\"agreed\",\"sample\":7,\"draw\":-1,\"elapsed_seconds\":\"x\"}", 63);
	cr_assert_not_null(o);
	cr_assert_eq(fg_audit_from_cjson(&b, o), 0);
	cr_assert_float_eq(b.sample, 1, 1e-12);
	cr_assert_float_eq(b.draw, 0, 1e-12);
	cr_assert_str_eq(b.feedback, "");
	cJSON_Delete(o);
	o = fg_json_parse_exact("{\"verdict\":\"approved\"}", 22);
	cr_assert_eq(fg_audit_from_cjson(&b, o), -EINVAL);
	cr_assert_eq(b.outcome, FG_AUDIT_SKIPPED);
	cJSON_Delete(o);
	fg_audit_release(&a);
	fg_audit_release(&b);
}
