/*
 * test_buf.c - bounded buffers, string vectors, number parsing, options.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "forge/buf.h"
#include "forge/num.h"
#include "forge/opts.h"

TestSuite(buf, .timeout = 30);

Test(buf, append_respects_max)
{
	struct fg_buf b;

	fg_buf_init(&b, 8);
	cr_assert_eq(fg_buf_adds(&b, "abcd"), 0);
	cr_assert_eq(fg_buf_adds(&b, "efgh"), 0);
	cr_assert_eq(fg_buf_addc(&b, 'x'), -E2BIG);
	cr_assert_str_eq(fg_buf_str(&b), "abcdefgh");
	cr_assert_eq(fg_buf_addf(&b, "%d", 1), -E2BIG);
	cr_assert_eq(b.len, 8);
	cr_assert_leq(b.cap, 9);
	fg_buf_release(&b);
	cr_assert_null(b.data);
}

Test(buf, detach_hands_over_and_reinits)
{
	struct fg_buf b;
	size_t len;
	char *s;

	fg_buf_init(&b, 100);
	fg_buf_addf(&b, "%s-%d", "x", 42);
	s = fg_buf_detach(&b, &len);
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
	fg_strvec_release(&v);
}

Test(num, strict_parsing)
{
	static const struct {
		const char *in;
		int ret;
		long val;
	} cases[] = {
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

Test(opts, usage_errors)
{
	char *a1[] = { "p", "--bogus", NULL };
	char *a2[] = { "p", "--workspace", NULL };
	char *a3[] = { "p", "--help=1", NULL };
	char **cases[] = { a1, a2, a3 };
	const char *msgs[] = { "unknown option '--bogus'", "option '--workspace' needs a value",
			       "option '--help' takes no value" };

	for (int i = 0; i < 3; i++) {
		struct fg_opts_iter it;
		int id;
		const char *v;
		char err[128] = "";

		fg_opts_init(&it, table, 2, cases[i], 1);
		cr_assert_eq(fg_opts_next(&it, &id, &v, err, sizeof(err)), -EINVAL);
		cr_assert_str_eq(err, msgs[i]);
	}
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
