/*
 * test_msg.c - the message lines of both programs (msg.h): the prefixes, a
 * line as the writers format it, and an entrypoint line's level read back
 * as the runner reads it.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "forge/msg.h"
#include "forge/util.h"

TestSuite(msg, .timeout = 10);

Test(msg, each_level_has_one_prefix)
{
	static const struct { enum fg_msg_level level; const char *prefix; } t[] = {
		{ FG_MSG_PLAIN, "" }, { FG_MSG_INFO, "" }, { FG_MSG_WARN, "warning: " },
		{ FG_MSG_ERROR, "error: " }, { FG_MSG_FAILED, "the task failed: " },
		{ (enum fg_msg_level)99, "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		cr_expect_str_eq(fg_msg_level_prefix(t[i].level), t[i].prefix, "level %d", (int)t[i].level);
	cr_assert_str_eq(FG_MSG_PREFIX, "forge-entrypoint: ");
	cr_assert_eq(FG_MSG_PREFIX_LEN, strlen(FG_MSG_PREFIX));
}

Test(msg, a_line_reads_back_as_its_level)
{
	static const struct { const char *line; enum fg_msg_level level; size_t text_at; } t[] = {
		{ "forge-entrypoint: error: cannot write 'x'", FG_MSG_ERROR, 18 },
		{ "forge-entrypoint: the task failed: worker exited with status 1", FG_MSG_FAILED, 18 },
		{ "forge-entrypoint: warning: nothing is reviewed", FG_MSG_WARN, 18 },
		{ "forge-entrypoint: running the worker (first run)", FG_MSG_INFO, 18 },
		{ "forge-entrypoint: ", FG_MSG_INFO, 18 },
		{ "forge-entrypoint: Error: not ours", FG_MSG_INFO, 18 },
		{ "forge-entrypoint: errors: not a level", FG_MSG_INFO, 18 },
		{ "Review cycle 1/3: APPROVED", FG_MSG_PLAIN, 0 },
		{ "[reviewer] forge-entrypoint: error: an agent cannot raise a level", FG_MSG_PLAIN, 0 },
		{ " forge-entrypoint: error: indented", FG_MSG_PLAIN, 0 },
		{ "forge-entrypoint:error: no blank", FG_MSG_PLAIN, 0 },
		{ "", FG_MSG_PLAIN, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		const char *text = NULL;

		cr_expect_eq(fg_msg_level_of(t[i].line, &text), t[i].level, "%s", t[i].line);
		cr_expect_eq(text, t[i].line + t[i].text_at, "%s", t[i].line);
		cr_expect_eq(fg_msg_level_of(t[i].line, NULL), t[i].level, "%s", t[i].line);
	}
}

static char *line_of(enum fg_msg_level level, size_t max, size_t *text_len, const char *fmt, ...)
{
	va_list ap;
	char *line;

	va_start(ap, fmt);
	line = fg_msg_vline("prog: ", level, max, fmt, ap, text_len);
	va_end(ap);
	return line;
}

Test(msg, a_line_has_its_prefixes_escaped_controls_and_its_bound)
{
	size_t n = 0;
	char *l;

	l = line_of(FG_MSG_WARN, 100, &n, "cannot read '%s'", "a\nb");
	cr_expect_str_eq(l, "prog: warning: cannot read 'a\\nb'\n");
	cr_expect_eq(n, strlen(l) - 1);
	free(l);
	l = line_of(FG_MSG_PLAIN, 100, NULL, "%s", "Review cycle 1/3");
	cr_expect_str_eq(l, "Review cycle 1/3\n");
	free(l);
	/* The level prefix counts in the bound; a cut line ends in "...". */
	l = line_of(FG_MSG_ERROR, 10, &n, "%s", "0123456789");
	cr_expect_str_eq(l, "prog: error: 012...\n");
	cr_expect_eq(n, strlen("prog: error: 012"));
	free(l);
}
