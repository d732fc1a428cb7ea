/*
 * test_opts.c - the option table: parsing and --help (forge/opts.h).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "forge/buf.h"
#include "forge/opts.h"

TestSuite(opts, .timeout = 30);

enum { O_HELP = 1, O_DIR, O_FLAG };
static const struct fg_opt table[] = {
	{ O_HELP, "help", 'h', NULL, NULL, "show help" },
	{ O_DIR, "workspace", 0, "DIR", "FORGE_WORKSPACE", "workspace directory" },
	{ O_FLAG, "no-inotify", 0, NULL, NULL, "poll only" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

Test(opts, parses_all_forms)
{
	char *argv[] = { "prog", "run", "--workspace", "/a", "--workspace=/b", "-h", "--no-inotify", "--", "--x", NULL };
	struct fg_opts_iter it;
	int id, n = 0, ids[16];
	const char *vals[16], *v;
	char err[128];

	fg_opts_init(&it, table, 9, argv, 1);
	while (fg_opts_next(&it, &id, &v, err, sizeof(err)) == 1) {
		ids[n] = id;
		vals[n++] = v;
	}
	cr_assert_eq(n, 6);
	cr_assert_eq(ids[0], FG_OPT_POSITIONAL);
	cr_assert_str_eq(vals[0], "run");
	cr_assert_eq(ids[1], O_DIR);
	cr_assert_str_eq(vals[1], "/a");
	cr_assert_str_eq(vals[2], "/b");
	cr_assert_eq(ids[3], O_HELP);
	cr_assert_eq(ids[4], O_FLAG);
	cr_assert_eq(ids[5], FG_OPT_POSITIONAL);
	cr_assert_str_eq(vals[5], "--x");
}

/* Each usage error with its message; an unknown option near a known one
 * names it ("did you mean"). */
Test(opts, usage_errors)
{
	char *a1[] = { "p", "--bogus", NULL };
	char *a2[] = { "p", "--workspace", NULL };
	char *a3[] = { "p", "--help=1", NULL };
	char *a4[] = { "p", "--worksapce", NULL };
	char *a5[] = { "p", "--workspac=/w", NULL };
	char *a6[] = { "p", "--zzzzzzzz", NULL };
	char **cases[] = { a1, a2, a3, a4, a5, a6 };
	const char *msgs[] = { "unknown option '--bogus'", "option '--workspace' needs a value",
			       "option '--help' takes no value",
			       "unknown option '--worksapce'; did you mean '--workspace'?",
			       "unknown option '--workspac'; did you mean '--workspace'?",
			       "unknown option '--zzzzzzzz'" };

	for (int i = 0; i < 6; i++) {
		struct fg_opts_iter it;
		int id;
		const char *v;
		char err[128] = "";

		fg_opts_init(&it, table, 2, cases[i], 1);
		cr_assert_eq(fg_opts_next(&it, &id, &v, err, sizeof(err)), -EINVAL);
		cr_assert_str_eq(err, msgs[i]);
	}
}

Test(opts, suggest_picks_the_nearest_name_or_none)
{
	static const char *const cmds[] = { "run", "watch", "sweep", "report" };
	static const struct {
		const char *word, *want;
	} cases[] = {
		{ "rnu", "run" }, { "swep", "sweep" }, { "wacth", "watch" }, { "reprot", "report" },
		{ "run", NULL }, { "frobnicate", NULL }, { "", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = fg_suggest(cases[i].word, cmds, 4);

		if (cases[i].want)
			cr_expect(got && !strcmp(got, cases[i].want), "'%s': got %s", cases[i].word,
				  got ? got : "NULL");
		else
			cr_expect_null(got, "'%s': got %s", cases[i].word, got);
	}
	cr_expect_str_eq(fg_opts_suggest(table, "hlep"), "help");
}

Test(opts, help_lists_every_option_and_env)
{
	struct fg_buf b;

	fg_buf_init(&b, 4096);
	fg_opts_help(table, &b);
	cr_assert(strstr(fg_buf_str(&b), "--workspace DIR"));
	cr_assert(strstr(fg_buf_str(&b), "[env: FORGE_WORKSPACE]"));
	cr_assert(strstr(fg_buf_str(&b), "-h, --help"));
	cr_assert(strstr(fg_buf_str(&b), "--no-inotify"));
	fg_buf_release(&b);
}

Test(opts, the_option_loop_ends_done_or_failed)
{
	char *ok[] = { "p", "--workspace", "/a", "x", NULL };
	char *bad[] = { "p", "--workspace", "/a", "--bogus", "y", NULL };
	struct fg_opts_iter it;
	int n = 0;

	fg_opts_init(&it, table, 4, ok, 1);
	cr_assert(!fg_opts_failed(&it));
	cr_assert_str_eq(it.err, "");
	while (fg_opts_each(&it))
		n++;
	cr_assert_eq(n, 2);
	cr_assert(!fg_opts_failed(&it));
	cr_assert_eq(it.id, FG_OPT_POSITIONAL, "the last thing read was the positional");
	cr_assert_str_eq(it.value, "x");
	n = 0;
	fg_opts_init(&it, table, 5, bad, 1);
	while (fg_opts_each(&it))
		n++;
	cr_assert_eq(n, 1, "the loop stops at the usage error");
	cr_assert(fg_opts_failed(&it));
	cr_assert_str_eq(it.err, "unknown option '--bogus'");
}

/* "Did you mean" weighs the value: a directory after an unknown option
 * picks the DIR option, a path-like word the FILE one, a key the other. */
Test(opts, suggestion_weighs_the_value)
{
	static const struct fg_opt t[] = {
		{ 1, "skill", 0, "NAME", NULL, "" }, { 2, "skills-dir", 0, "DIR", NULL, "" },
		{ 3, "task-key", 0, "KEY", NULL, "" }, { 4, "task-file", 0, "FILE", NULL, "" },
		{ 0, NULL, 0, NULL, NULL, NULL },
	};

	cr_expect_str_eq(fg_opts_suggest_value(t, "skills", "/tmp"), "skills-dir");
	cr_expect_str_eq(fg_opts_suggest_value(t, "skills", "review"), "skill");
	cr_expect_str_eq(fg_opts_suggest_value(t, "task", "task.json"), "task-file");
	cr_expect_str_eq(fg_opts_suggest_value(t, "task", "ABC-12"), "task-key");
	cr_expect_str_eq(fg_opts_suggest_value(t, "skil", NULL), "skill");
	cr_expect_null(fg_opts_suggest_value(t, "zz", "/tmp"));
}
