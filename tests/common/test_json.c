/*
 * test_json.c - json.h's getters: each reads a member of its own type and
 * any other as absent.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "forge/json.h"

TestSuite(json, .timeout = 10);

static const char DOC[] = "{\"s\":\"x\",\"n\":2.5,\"t\":true,\"f\":false,\"a\":[1],\"o\":{}}";

Test(json, getters_read_their_type_and_nothing_else)
{
	cJSON *o = fg_json_parse_exact(DOC, strlen(DOC));

	cr_assert_not_null(o);
	cr_expect_not_null(fg_json_get(o, "n"));
	cr_expect_null(fg_json_get(o, "missing"));
	cr_expect_null(fg_json_get(NULL, "n"));
	cr_expect_not_null(fg_json_arr(o, "a"));
	cr_expect_null(fg_json_arr(o, "o"));
	cr_expect(fg_json_true(o, "t"));
	cr_expect(!fg_json_true(o, "f"));
	cr_expect(!fg_json_true(o, "s"));
	cr_expect(!fg_json_true(o, "missing"));
	cr_expect_str_eq(fg_json_str_or(o, "s", "d"), "x");
	cr_expect_str_eq(fg_json_str_or(o, "n", "d"), "d");
	cr_expect_eq(fg_json_num_in(o, "n", 0, 3, -1), 2.5);
	cr_expect_eq(fg_json_num_in(o, "n", 0, 2, -1), -1);
	cr_expect_eq(fg_json_num_in(o, "s", 0, 3, -1), -1);
	cr_expect(isnan(fg_json_num(o, "s")));
	cJSON_Delete(o);
}
