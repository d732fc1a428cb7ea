/*
 * test_json.c - json.h's getters: each reads a member of its own type and
 * any other as absent.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "forge/json.h"

TestSuite(json, .timeout = 10);

static const char DOC[] = "{\"s\":\"x\",\"n\":2.5,\"t\":true,\"f\":false,\"a\":[1],\"o\":{}}";

Test(json, getters_read_their_type_and_nothing_else)
{
	cJSON *o = fg_json_parse_exact(DOC, strlen(DOC));
	static const struct {
		const char *key;
		bool any, arr, is_true;
	} cases[] = {
		{ "n", true, false, false },  { "a", true, true, false }, { "o", true, false, false },
		{ "t", true, false, true },   { "f", true, false, false }, { "s", true, false, false },
		{ "missing", false, false, false },
	};

	cr_assert_not_null(o);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_expect_eq(fg_json_get(o, cases[i].key) != NULL, cases[i].any, "%s", cases[i].key);
		cr_expect_eq(fg_json_arr(o, cases[i].key) != NULL, cases[i].arr, "%s", cases[i].key);
		cr_expect_eq(fg_json_true(o, cases[i].key), cases[i].is_true, "%s", cases[i].key);
	}
	cr_expect_null(fg_json_get(NULL, "n"));
	cr_expect_str_eq(fg_json_str_or(o, "s", "d"), "x");
	cr_expect_str_eq(fg_json_str_or(o, "n", "d"), "d");
	cr_expect_eq(fg_json_num_in(o, "n", 0, 3, -1), 2.5);
	cr_expect_eq(fg_json_num_in(o, "n", 0, 2, -1), -1);
	cr_expect_eq(fg_json_num_in(o, "s", 0, 3, -1), -1);
	cr_expect(isnan(fg_json_num(o, "s")));
	cJSON_Delete(o);
}
