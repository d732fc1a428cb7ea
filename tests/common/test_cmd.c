/*
 * test_cmd.c - the subcommand table (cmd.h): lookup, suggestion, and the
 * help text made from it, internal rows left out.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "forge/buf.h"
#include "forge/cmd.h"
#include "forge/opts.h"
#include "forge/util.h"

TestSuite(cmd, .timeout = 10);

static int run_a(int argc, char **argv)
{
	return 3;
}

static const struct fg_opt OPTS[] = {
	{ 1, "depth", 0, "N", NULL, "how deep" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

static const struct fg_opt *opts(void)
{
	return OPTS;
}

static const struct fg_cmd CMDS[] = {
	{ "watch", run_a, "watch DIR...", "follow directories", opts },
	{ "internal", run_a, NULL, NULL, NULL },
	{ "sweep", run_a, "sweep DIR", "read once", NULL },
	{ "report", run_a, "report FILE...", "merge", NULL },
};

Test(cmd, find_and_suggest_see_only_what_they_should)
{
	cr_assert_eq(fg_cmd_find(CMDS, ARRAY_SIZE(CMDS), "sweep"), &CMDS[2]);
	cr_assert_eq(fg_cmd_find(CMDS, ARRAY_SIZE(CMDS), "internal"), &CMDS[1], "dispatched");
	cr_assert_null(fg_cmd_find(CMDS, ARRAY_SIZE(CMDS), "swep"));
	cr_assert_null(fg_cmd_find(CMDS, ARRAY_SIZE(CMDS), NULL));
	cr_assert_str_eq(fg_cmd_suggest(CMDS, ARRAY_SIZE(CMDS), "swep"), "sweep");
	cr_assert_null(fg_cmd_suggest(CMDS, ARRAY_SIZE(CMDS), "internl"), "never suggested");
	cr_assert_eq(CMDS[0].run(0, NULL), 3);
}

/* What fill appends to an empty buffer. */
static char *text_of(void (*fill)(struct fg_buf *, const struct fg_cmd *, size_t))
{
	struct fg_buf b;

	fg_buf_init(&b, 4096);
	fill(&b, CMDS, ARRAY_SIZE(CMDS));
	return fg_buf_detach(&b, NULL);
}

static void usage_of(struct fg_buf *b, const struct fg_cmd *cmds, size_t n)
{
	fg_cmd_usage(b, "prog", cmds, n);
}

Test(cmd, help_text_is_made_from_the_listed_rows)
{
	static const struct {
		void (*fill)(struct fg_buf *, const struct fg_cmd *, size_t);
		const char *want;
	} cases[] = {
		{ fg_cmd_names, "watch, sweep or report" },
		{ usage_of, "usage: prog watch DIR...\n       prog sweep DIR\n       prog report FILE...\n"
			    "       prog --help | --version\n" },
		{ fg_cmd_list, "commands:\n  watch   follow directories\n  sweep   read once\n  report  merge\n" },
	};
	char *opts;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *got = text_of(cases[i].fill);

		cr_expect_str_eq(got, cases[i].want, "case %zu", i);
		free(got);
	}
	opts = text_of(fg_cmd_options);
	cr_expect(!strncmp(opts, "\nwatch options:\n", 16), "%s", opts);
	cr_expect(strstr(opts, "--depth N"), "%s", opts);
	free(opts);
}
