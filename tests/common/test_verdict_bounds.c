/*
 * test_verdict_bounds.c - the verdict parser on large and hostile outputs:
 * the feedback cap on a character boundary, fifty megabytes with the marker
 * at either end, backtick runs and JSON blocks that must stay linear, an
 * oversized JSON block.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "forge/verdict.h"

#include "verdict_sample.h"

TestSuite(verdict, .timeout = 120);

static bool valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t k = *p < 0x80 ? 1 : *p >= 0xF0 ? 4 : *p >= 0xE0 ? 3 : *p >= 0xC2 ? 2 : 0;

		if (!k)
			return false;
		for (size_t i = 1; i < k; i++)
			if ((p[i] & 0xC0) != 0x80)
				return false;
		p += k;
	}
	return true;
}

Test(verdict, feedback_is_capped_on_a_character_boundary)
{
	/* 300 KiB of two-byte characters after one odd byte: the cap falls
	 * in the middle of a character. */
	size_t n = 300 * 1024, len = 0;
	char *in = malloc(n + 32);
	struct fg_judgement v;

	len += (size_t)snprintf(in, 32, "REJECTED: x");
	while (len + 2 <= n) {
		in[len++] = '\xC3';
		in[len++] = '\xA9';
	}
	fg_judgement_init(&v);
	fg_verdict_parse(&v, in, len);
	cr_assert_eq(v.verdict, FG_VERDICT_REJECTED);
	cr_assert_leq(strlen(v.feedback), FG_FEEDBACK_MAX);
	cr_assert_geq(strlen(v.feedback), FG_FEEDBACK_MAX - 3);
	cr_assert(valid_utf8(v.feedback));
	cr_assert_eq(v.feedback[0], 'x');
	fg_judgement_reset(&v);
	free(in);
}

/* 50 MB of prose in paragraphs, with inline code and a fence now and then. */
static char *big_output(size_t size, size_t *len)
{
	static const char para[] =
		"The change to `parse_line()` looks careful; see the log below.\n"
		"Nothing here says the word the parser looks for.\n\n"
		"```\nmake test: 120 passed\n```\n\n";
	char *b = malloc(size + 256);
	size_t n = 0;

	cr_assert_not_null(b);
	while (n + sizeof(para) - 1 <= size) {
		memcpy(b + n, para, sizeof(para) - 1);
		n += sizeof(para) - 1;
	}
	*len = n;
	return b;
}

/* Parses the n bytes of b (freed here), which a marker decides: kind and,
 * unless NULL, the feedback. */
static void expect_marker(char *b, size_t n, enum fg_verdict_kind kind, const char *feedback)
{
	struct fg_judgement v;

	fg_judgement_init(&v);
	fg_verdict_parse(&v, b, n);
	cr_assert_eq(v.verdict, kind);
	cr_assert_eq(v.format, FG_FORMAT_MARKER);
	if (feedback)
		cr_assert_str_eq(v.feedback, feedback);
	fg_judgement_reset(&v);
	free(b);
}

Test(verdict, fifty_megabytes_marker_at_the_end)
{
	size_t len;
	char *b = big_output(50u * 1024 * 1024, &len);

	memcpy(b + len, "REJECTED: final words\n", 22);
	expect_marker(b, len + 22, FG_VERDICT_REJECTED, "final words");
}

Test(verdict, fifty_megabytes_marker_at_the_start)
{
	size_t len;
	char *b = big_output(50u * 1024 * 1024, &len);
	struct fg_judgement v;

	memcpy(b, "REJECTED\n", 9);
	fg_judgement_init(&v);
	fg_verdict_parse(&v, b, len);
	cr_assert_eq(v.verdict, FG_VERDICT_REJECTED);
	cr_assert_eq(v.format, FG_FORMAT_MARKER);
	cr_assert_leq(strlen(v.feedback), FG_FEEDBACK_MAX);
	cr_assert(!strncmp(v.feedback, "e to `parse_line()`", 19), "%.40s", v.feedback);
	fg_verdict_parse(&v, b, len);
	memcpy(b, "APPROVED\n", 9);
	fg_verdict_parse(&v, b, len);
	cr_assert_eq(v.verdict, FG_VERDICT_APPROVED);
	fg_judgement_reset(&v);
	free(b);
}

Test(verdict, hostile_backtick_runs_stay_linear)
{
	/* Runs of 1, 2, 3, ... backticks, none closed, in one paragraph:
	 * a naive span matcher rescans the paragraph for every opener. */
	size_t cap = 48u * 1024 * 1024, n = 0;
	char *b = malloc(cap + 64);

	for (size_t k = 1; n + k + 1 < cap; k++) {
		memset(b + n, '`', k);
		n += k;
		b[n++] = k % 2 ? ' ' : 'x';
	}
	memcpy(b + n, "\n\nAPPROVED", 10);
	expect_marker(b, n + 10, FG_VERDICT_APPROVED, NULL);
}

Test(verdict, hostile_single_line_and_many_json_blocks)
{
	static const char blk[] = "```json\n{\"x\":1}\n```\n";
	size_t cap = 40u * 1024 * 1024, n = 0;
	char *b = malloc(cap + 64);
	struct fg_judgement v;

	/* One 40 MB line of single backticks separated by letters. */
	for (; n + 2 < cap; n += 2) {
		b[n] = '`';
		b[n + 1] = 'a';
	}
	memcpy(b + n, " REJECTED: end", 14);
	fg_judgement_init(&v);
	fg_verdict_parse(&v, b, n + 14);
	/* The backticks pair up; an odd one out is literal: the marker is
	 * outside code either way. */
	cr_assert_eq(v.format, FG_FORMAT_MARKER);
	cr_assert_str_eq(v.feedback, "end");
	/* A million small json blocks, none a shadow object. */
	for (n = 0; n + sizeof(blk) < cap / 2; n += sizeof(blk) - 1)
		memcpy(b + n, blk, sizeof(blk) - 1);
	memcpy(b + n, "APPROVED", 8);
	fg_verdict_parse(&v, b, n + 8);
	cr_assert_eq(v.verdict, FG_VERDICT_APPROVED);
	cr_assert_eq(v.format, FG_FORMAT_MARKER);
	fg_judgement_reset(&v);
	free(b);
}

Test(verdict, oversized_json_block_is_skipped)
{
	/* 5 MiB of padding: more than the 4 MiB a JSON block may hold. */
	char *pad = calloc(5u * 1024 * 1024 + 1, 1);
	char *b;

	cr_assert_not_null(pad);
	memset(pad, 'x', 5u * 1024 * 1024);
	b = fgt_fmt("```json\n{\"verdict\":\"approve\",\"pad\":\"%s\"}\n```\nREJECTED: big", pad);
	free(pad);
	expect_marker(b, strlen(b), FG_VERDICT_REJECTED, "big");
}
