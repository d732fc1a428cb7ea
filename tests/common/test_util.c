/*
 * test_util.c - the name-table lookup (util.h).
 */
#include <criterion/criterion.h>

#include "forge/util.h"

TestSuite(util, .timeout = 30);

static const char *const NAMES[] = { "none", NULL, "log", "Copy" };

Test(util, name_index_table)
{
	static const struct { const char *s; unsigned flags; int want; } cases[] = {
		{ "none", 0, 0 }, { "log", 0, 2 }, { "Copy", 0, 3 }, { "copy", 0, -1 },
		{ "copy", FG_NAME_ANYCASE, 3 }, { "LOG", FG_NAME_ANYCASE, 2 }, { "", 0, -1 },
		{ NULL, 0, -1 }, { "nonex", 0, -1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		cr_assert_eq(FG_NAME_INDEX(NAMES, cases[i].s, cases[i].flags), cases[i].want, "case %zu", i);
}

Test(util, name_of_falls_back_out_of_range)
{
	cr_assert_str_eq(FG_NAME_OF(NAMES, 2, "x"), "log");
	cr_assert_str_eq(FG_NAME_OF(NAMES, 4, "x"), "x");
	cr_assert_str_eq(FG_NAME_OF(NAMES, -1, "x"), "x");
}
