/*
 * test_buf.c - bounded buffers (their invariants checked after every
 * mutation, fgc_buf_check) and string vectors.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "fgcheck.h"
#include "forge/buf.h"

TestSuite(buf, .timeout = 30);

Test(buf, append_respects_max)
{
	struct fg_buf b;

	fg_buf_init(&b, 8);
	fgc_buf_check(&b);
	cr_assert_eq(fg_buf_adds(&b, "abcd"), 0);
	fgc_buf_check(&b);
	cr_assert_eq(fg_buf_adds(&b, "efgh"), 0);
	fgc_buf_check(&b);
	cr_assert_eq(fg_buf_addc(&b, 'x'), -E2BIG);
	fgc_buf_check(&b);
	cr_assert_str_eq(fg_buf_str(&b), "abcdefgh");
	cr_assert_eq(fg_buf_addf(&b, "%d", 1), -E2BIG);
	fgc_buf_check(&b);
	cr_assert_eq(b.len, 8);
	cr_assert_leq(b.cap, 9);
	fg_buf_release(&b);
	fgc_buf_check(&b);
	cr_assert_null(b.data);
}

Test(buf, detach_hands_over_and_reinits)
{
	struct fg_buf b;
	size_t len;
	char *s;

	fg_buf_init(&b, 100);
	fg_buf_addf(&b, "%s-%d", "x", 42);
	fgc_buf_check(&b);
	s = fg_buf_detach(&b, &len);
	fgc_buf_check(&b);
	cr_assert_str_eq(s, "x-42");
	cr_assert_eq(len, 4);
	cr_assert_null(b.data);
	cr_assert_eq(b.max, 100);
	free(s);
	s = fg_buf_detach(&b, NULL);
	cr_assert_str_eq(s, "");
	free(s);
}

Test(buf, strvec_is_null_terminated)
{
	struct fg_strvec v;

	fg_strvec_init(&v);
	for (int i = 0; i < 20; i++)
		fg_strvec_pushf(&v, "a%d", i);
	cr_assert_eq(v.n, 20);
	cr_assert_str_eq(v.v[19], "a19");
	cr_assert_null(v.v[20]);
	cr_assert(fg_strvec_has(&v, "a7"));
	cr_assert_not(fg_strvec_has(&v, "a"));
	cr_assert_not(fg_strvec_has(&v, "a20"));
	fg_strvec_release(&v);
	cr_assert_not(fg_strvec_has(&v, "a0"), "an empty vector holds nothing");
}


Test(buf, a_failed_append_is_sticky_until_reset)
{
	struct fg_buf b;

	fg_buf_init(&b, 10);
	cr_assert_eq(fg_buf_adds(&b, "head "), 0);
	cr_assert_eq(fg_buf_error(&b), 0);
	cr_assert_eq(fg_buf_room(&b), 5);
	/* The middle piece does not fit: the later, smaller one must not land
	 * after it as if nothing had been lost. */
	cr_assert_eq(fg_buf_adds(&b, "middle piece"), -E2BIG);
	fgc_buf_check(&b);
	cr_assert_eq(fg_buf_adds(&b, "tail"), -E2BIG);
	fgc_buf_check(&b);
	cr_assert_eq(fg_buf_addc(&b, '.'), -E2BIG);
	cr_assert_eq(fg_buf_addf(&b, "%d", 1), -E2BIG);
	cr_assert_str_eq(fg_buf_str(&b), "head ");
	cr_assert_eq(fg_buf_error(&b), -E2BIG);
	cr_assert_eq(fg_buf_room(&b), 0);
	fg_buf_reset(&b);
	fgc_buf_check(&b);
	cr_assert_eq(fg_buf_error(&b), 0);
	cr_assert_eq(fg_buf_adds(&b, "again"), 0);
	cr_assert_str_eq(fg_buf_str(&b), "again");
	cr_assert_eq(fg_buf_adds(&b, "way too long"), -E2BIG);
	fg_buf_release(&b);
	fgc_buf_check(&b);
	cr_assert_eq(fg_buf_error(&b), 0);
	cr_assert_eq(b.max, 10);
}

Test(buf, a_meant_cut_is_accepted_explicitly)
{
	struct fg_buf b;

	fg_buf_init(&b, 8);
	cr_assert_eq(fg_buf_accept_cut(&b), 0);
	fg_buf_adds(&b, "key=");
	fg_buf_adds(&b, "a value too long");
	cr_assert_eq(fg_buf_accept_cut(&b), 1);
	fgc_buf_check(&b);
	cr_assert_eq(fg_buf_error(&b), 0);
	/* Still bounded by max after the cut was accepted. */
	cr_assert_eq(fg_buf_adds(&b, "1234"), 0);
	cr_assert_eq(fg_buf_addc(&b, 'x'), -E2BIG);
	cr_assert_str_eq(fg_buf_str(&b), "key=1234");
	fgc_buf_check(&b);
	fg_buf_release(&b);
}

Test(buf, detach_of_a_failed_buffer_reinits_it_clean)
{
	struct fg_buf b;
	char *s;

	fg_buf_init(&b, 3);
	fg_buf_adds(&b, "abcd");
	cr_assert_eq(fg_buf_error(&b), -E2BIG);
	s = fg_buf_detach(&b, NULL);
	cr_assert_str_eq(s, "");
	fgc_buf_check(&b);
	cr_assert_eq(fg_buf_error(&b), 0);
	free(s);
}

/* A format the C library cannot render (a wide character with no multibyte
 * form in the C locale) fails the append and, like a text that did not
 * fit, every later one: the text never loses a piece from its middle. */
Test(buf, a_formatting_failure_is_sticky_too)
{
	static const wchar_t bad[] = { (wchar_t)0xD800, 0 };
	struct fg_buf b;

	fg_buf_init(&b, 64);
	cr_assert_eq(fg_buf_adds(&b, "a"), 0);
	cr_assert_eq(fg_buf_addf(&b, "%ls", bad), -EINVAL);
	cr_assert_eq(fg_buf_error(&b), -EINVAL);
	cr_assert_eq(fg_buf_adds(&b, "b"), -EINVAL, "later appends fail with the first error");
	cr_assert_str_eq(fg_buf_str(&b), "a");
	fg_buf_release(&b);
}

/* fg_buf_rewind() puts a buffer back to an earlier state of its own: text
 * and error, the NUL where the text ends. */
Test(buf, rewind_restores_an_earlier_state)
{
	struct fg_buf b;
	size_t at;
	int err;

	fg_buf_init(&b, 8);
	fg_buf_adds(&b, "abc");
	at = b.len;
	err = fg_buf_error(&b);
	cr_assert_eq(fg_buf_adds(&b, "defghijk"), -E2BIG);
	fg_buf_adds(&b, "");
	fg_buf_rewind(&b, at, err);
	cr_assert_eq(fg_buf_error(&b), 0);
	cr_assert_eq(fg_buf_addc(&b, 'd'), 0);
	cr_assert_str_eq(fg_buf_str(&b), "abcd");
	fg_buf_rewind(&b, 1, 0);
	cr_assert_eq(b.len, 1);
	cr_assert_str_eq(fg_buf_str(&b), "a");
	fg_buf_rewind(&b, 100, 0);
	cr_assert_eq(b.len, 1, "a rewind never lengthens the text");
	fg_buf_release(&b);
}

Test(buf, drop_front_keeps_the_newest_part_and_the_nul)
{
	struct fg_buf b;

	fg_buf_init(&b, 8);
	fg_buf_drop_front(&b, 3);
	cr_assert_eq(b.len, 0, "dropping from an empty buffer is nothing");
	fg_buf_adds(&b, "abcdefgh");
	fg_buf_drop_front(&b, 5);
	cr_assert_eq(b.len, 3);
	cr_assert_str_eq(fg_buf_str(&b), "fgh");
	cr_assert_eq(fg_buf_adds(&b, "ijklm"), 0, "the room dropped is room again");
	cr_assert_str_eq(fg_buf_str(&b), "fghijklm");
	cr_assert_eq(fg_buf_addc(&b, 'n'), -E2BIG);
	fg_buf_drop_front(&b, 100);
	cr_assert_eq(b.len, 0);
	cr_assert_str_eq(fg_buf_str(&b), "");
	cr_assert_eq(fg_buf_error(&b), -E2BIG, "the sticky error stays");
	fg_buf_release(&b);
}

Test(buf, strvec_sort_puts_names_in_strcmp_order)
{
	struct fg_strvec s;

	fg_strvec_init(&s);
	fg_strvec_sort(&s);
	fg_strvec_pushl(&s, "b.conf", "a.conf", "B", "a", NULL);
	fg_strvec_sort(&s);
	cr_assert_str_eq(s.v[0], "B");
	cr_assert_str_eq(s.v[1], "a");
	cr_assert_str_eq(s.v[2], "a.conf");
	cr_assert_str_eq(s.v[3], "b.conf");
	cr_assert_null(s.v[4]);
	fg_strvec_release(&s);
}
