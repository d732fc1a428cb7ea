/*
 * test_alloc.c - the growth rule of FG_ALLOC_GROW (git's ALLOC_GROW).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "forge/alloc.h"

TestSuite(alloc, .timeout = 30);

Test(alloc, alloc_nr_grows_geometrically_and_covers_the_need)
{
	static const struct { size_t alloc, nr, want; } cases[] = {
		{ 0, 1, 24 }, { 24, 25, 60 }, { 60, 61, 114 }, { 0, 100, 100 },
		{ 10, 1000, 1000 }, { SIZE_MAX - 10, SIZE_MAX - 5, SIZE_MAX - 5 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_assert_eq(fg_alloc_nr(cases[i].alloc, cases[i].nr), cases[i].want, "case %zu", i);
}

Test(alloc, alloc_grow_keeps_the_elements_and_grows_rarely)
{
	int *v = NULL;
	size_t n = 0, cap = 0, grows = 0;

	for (int i = 0; i < 10000; i++) {
		size_t before = cap;

		FG_ALLOC_GROW(v, n + 1, cap);
		grows += cap != before;
		cr_assert_geq(cap, n + 1);
		v[n++] = i;
	}
	for (int i = 0; i < 10000; i++)
		cr_assert_eq(v[i], i);
	/* Half as much again each time: a few dozen reallocations, not 10000. */
	cr_assert_lt(grows, 30, "%zu reallocations", grows);
	/* A need within the capacity changes nothing. */
	{
		int *same = v;
		size_t c = cap;

		FG_ALLOC_GROW(v, 5, cap);
		cr_assert_eq(v, same);
		cr_assert_eq(cap, c);
	}
	free(v);
}
