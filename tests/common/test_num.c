/*
 * test_num.c - strict number and boolean parsing (forge/num.h).
 */
#include <criterion/criterion.h>
#include <errno.h>

#include "forge/num.h"

TestSuite(num, .timeout = 30);

Test(num, strict_parsing)
{
	static const struct { const char *in; int ret; long val; } cases[] = {
		{ "3", 0, 3 }, { "0", 0, 0 }, { "-1", -ERANGE, 0 }, { "", -EINVAL, 0 },
		{ "3x", -EINVAL, 0 }, { " 3", -EINVAL, 0 }, { "abc", -EINVAL, 0 },
		{ "99999999999999999999999", -ERANGE, 0 }, { "101", -ERANGE, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long v = -7;
		int r = fg_parse_long(cases[i].in, 0, 100, &v);

		cr_assert_eq(r, cases[i].ret, "input '%s'", cases[i].in);
		cr_assert_eq(v, r ? -7 : cases[i].val, "input '%s'", cases[i].in);
	}
}

Test(num, doubles_and_bools)
{
	double d = 0;
	int b = -1;

	cr_assert_eq(fg_parse_double("0.5", 0, 10, &d), 0);
	cr_assert_float_eq(d, 0.5, 1e-9);
	cr_assert_eq(fg_parse_double("nan", 0, 10, &d), -EINVAL);
	cr_assert_eq(fg_parse_double("inf", 0, 10, &d), -ERANGE);
	cr_assert_eq(fg_parse_bool("TRUE", &b), 0);
	cr_assert_eq(b, 1);
	cr_assert_eq(fg_parse_bool("off", &b), 0);
	cr_assert_eq(b, 0);
	cr_assert_eq(fg_parse_bool("maybe", &b), -EINVAL);
}
