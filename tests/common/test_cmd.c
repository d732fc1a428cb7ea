/*
 * test_cmd.c - the subcommand table (cmd.h): lookup, suggestion, and the
 * help text made from it, internal rows left out.
 */
#include <criterion/criterion.h>
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

static const struct fg_cmd CMDS[] = {
	{ "watch", run_a, "watch DIR...", "follow directories", OPTS },
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

Test(cmd, help_text_is_made_from_the_listed_rows)
{
	struct fg_buf b;

	fg_buf_init(&b, 4096);
	fg_cmd_names(&b, CMDS, ARRAY_SIZE(CMDS));
	cr_expect_str_eq(fg_buf_str(&b), "watch, sweep or report");
	fg_buf_reset(&b);
	fg_cmd_usage(&b, "prog", CMDS, ARRAY_SIZE(CMDS));
	cr_expect_str_eq(fg_buf_str(&b), "usage: prog watch DIR...\n"
					 "       prog sweep DIR\n"
					 "       prog report FILE...\n"
					 "       prog --help | --version\n");
	fg_buf_reset(&b);
	fg_cmd_list(&b, CMDS, ARRAY_SIZE(CMDS));
	cr_expect_str_eq(fg_buf_str(&b), "commands:\n"
					 "  watch   follow directories\n"
					 "  sweep   read once\n"
					 "  report  merge\n");
	fg_buf_reset(&b);
	fg_cmd_options(&b, CMDS, ARRAY_SIZE(CMDS));
	cr_expect(!strncmp(fg_buf_str(&b), "\nwatch options:\n", 16), "%s", fg_buf_str(&b));
	cr_expect(strstr(fg_buf_str(&b), "--depth N"), "%s", fg_buf_str(&b));
	fg_buf_release(&b);
}
