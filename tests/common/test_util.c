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

struct ops {
	int id;
	const char *name;
};

static const struct ops OPS_A = { 1, "alpha" }, OPS_B = { 2, "Beta" }, OPS_NONAME = { 3, NULL };
static const struct ops *const OPS[] = { &OPS_A, NULL, &OPS_NONAME, &OPS_B };

Test(util, name_index_ops_reads_the_name_member)
{
	cr_assert_eq(FG_NAME_INDEX_OPS(OPS, name, "alpha", 0), 0);
	cr_assert_eq(FG_NAME_INDEX_OPS(OPS, name, "Beta", 0), 3);
	cr_assert_eq(FG_NAME_INDEX_OPS(OPS, name, "beta", 0), -1);
	cr_assert_eq(FG_NAME_INDEX_OPS(OPS, name, "beta", FG_NAME_ANYCASE), 3);
	cr_assert_eq(FG_NAME_INDEX_OPS(OPS, name, NULL, 0), -1);
	cr_assert_eq(FG_NAME_INDEX_OPS(OPS, name, "gamma", 0), -1);
}
