/*
 * test_usage.c - agent usage (usage.h): nothing invented, sums, JSON.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "forge/usage.h"

TestSuite(usage, .timeout = 10);

Test(usage, absent_fields_are_null_and_never_zero)
{
	struct fg_usage u;
	cJSON *j;

	fg_usage_init(&u);
	fg_usage_set(&u, FG_USAGE_OUTPUT, 0);
	fg_usage_set(&u, FG_USAGE_INPUT, -1);
	fg_usage_set_cost(&u, NAN);
	j = fg_usage_to_cjson(&u);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "input_tokens")));
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "cost_usd")));
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "turns")));
	cr_assert_eq(cJSON_GetObjectItem(j, "output_tokens")->valuedouble, 0);
	cJSON_Delete(j);
}

Test(usage, sums_keep_a_field_when_either_side_has_it)
{
	struct fg_usage a, b;

	fg_usage_init(&a);
	fg_usage_init(&b);
	fg_usage_set(&a, FG_USAGE_INPUT, 10);
	fg_usage_set_cost(&b, 0.1);
	fg_usage_set(&b, FG_USAGE_INPUT, 5);
	fg_usage_add(&a, &b);
	cr_assert_eq(a.input_tokens, 15);
	cr_assert_float_eq(a.cost_usd, 0.1, 1e-12);
	cr_assert_not(a.have & FG_USAGE_OUTPUT);
	fg_usage_add(&a, &b);
	cr_assert_float_eq(a.cost_usd, 0.2, 1e-12);
}

Test(usage, reader_is_lenient_and_round_trips)
{
	cJSON *o = cJSON_Parse("{\"input_tokens\":3,\"output_tokens\":1.5,\"cost_usd\":0.3,"
			       "\"turns\":\"2\",\"duration_ms\":-4,\"cached_input_tokens\":null}");
	struct fg_usage u, back;
	cJSON *j;

	fg_usage_from_cjson(&u, o);
	cr_assert_eq(u.have, FG_USAGE_INPUT | FG_USAGE_COST);
	j = fg_usage_to_cjson(&u);
	fg_usage_from_cjson(&back, j);
	cr_assert_eq(back.have, u.have);
	cr_assert_eq(back.input_tokens, 3);
	cJSON_Delete(j);
	cJSON_Delete(o);
	fg_usage_from_cjson(&u, NULL);
	cr_assert(fg_usage_empty(&u));
}

Test(usage, pair_is_omitted_when_empty_and_roles_are_kept_apart)
{
	struct fg_usage_pair p, back;
	cJSON *o = cJSON_CreateObject();
	double usd = -1;

	fg_usage_pair_init(&p);
	fg_usage_pair_add_to(o, &p);
	cr_assert_null(cJSON_GetObjectItem(o, "usage"));
	cr_assert_not(fg_usage_pair_cost(&p, &usd));
	fg_usage_set_cost(&p.reviewer, 0.25);
	fg_usage_set(&p.worker, FG_USAGE_TURNS, 2);
	fg_usage_pair_add_to(o, &p);
	cr_assert_not_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "usage"), "worker"));
	fg_usage_pair_from(&back, o);
	cr_assert_eq(back.worker.turns, 2);
	cr_assert(fg_usage_pair_cost(&back, &usd));
	cr_assert_float_eq(usd, 0.25, 1e-12);
	cJSON_Delete(o);
}

Test(usage, reasoning_tokens_round_trip_and_add)
{
	struct fg_usage a, b;
	cJSON *j;

	fg_usage_init(&a);
	fg_usage_set(&a, FG_USAGE_REASONING, 643);
	j = fg_usage_to_cjson(&a);
	cr_assert_eq(cJSON_GetObjectItem(j, "reasoning_tokens")->valuedouble, 643);
	fg_usage_from_cjson(&b, j);
	cr_assert_eq(b.have, FG_USAGE_REASONING);
	fg_usage_add(&b, &a);
	cr_assert_eq(b.reasoning_tokens, 1286);
	cJSON_Delete(j);
}

/* A cost is a sandbox's word. Above FG_USAGE_COST_MAX (1e6 USD),
 * negative or not finite, it is refused: absent (null), and said (refused,
 * with the value); NAN is "not reported", no refusal. A sum keeps the
 * refusal and stays finite. */
Test(usage, a_cost_above_the_bound_is_refused_and_said)
{
	struct fg_usage u, t;
	cJSON *o = cJSON_Parse("{\"cost_usd\":1e308,\"output_tokens\":3}");
	static const double bad[] = { 1e308, 1000000.01, -0.5, INFINITY };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fg_usage_init(&u);
		fg_usage_set_cost(&u, bad[i]);
		cr_assert_not(u.have & FG_USAGE_COST, "%g accepted", bad[i]);
		cr_assert(u.refused & FG_USAGE_COST, "%g not said", bad[i]);
		cr_assert_eq(u.refused_cost_usd, bad[i]);
	}
	fg_usage_init(&u);
	fg_usage_set_cost(&u, NAN);
	cr_assert_eq(u.refused, 0);
	fg_usage_set_cost(&u, 1e6);
	cr_assert(u.have & FG_USAGE_COST);
	cr_assert_eq(u.cost_usd, 1e6);
	fg_usage_from_cjson(&u, o);
	cr_assert_eq(u.have, FG_USAGE_OUTPUT);
	cr_assert(u.refused & FG_USAGE_COST);
	fg_usage_init(&t);
	fg_usage_add(&t, &u);
	cr_assert(t.refused & FG_USAGE_COST);
	cr_assert_eq(t.refused_cost_usd, 1e308);
	cr_assert_not(t.have & FG_USAGE_COST);
	cJSON_Delete(o);
}
