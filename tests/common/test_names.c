/*
 * test_names.c - step, skill and task-key validation; ticket project keys.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "forge/names.h"
#include "forge/util.h"

TestSuite(names, .timeout = 30);

Test(names, kind_strings)
{
	cr_assert_str_eq(fg_name_kind_str(FG_NAME_STEP), "step");
	cr_assert_str_eq(fg_name_kind_str(FG_NAME_SKILL), "skill");
	cr_assert_str_eq(fg_name_kind_str(FG_NAME_TASK_KEY), "task key");
}

Test(names, check_table)
{
	static const struct {
		const char *name;
		size_t len;          /* 0: strlen(name) */
		int ok;
		const char *why;     /* substring of the message when refused */
	} cases[] = {
		{ "implement_task", 0, 1, NULL },
		{ "local-code-review", 0, 1, NULL },
		{ "MYPROJECT-123", 0, 1, NULL },
		{ "a.b", 0, 1, NULL },
		{ "a", 0, 1, NULL },
		{ "caf\xc3\xa9", 0, 1, NULL },
		{ "", 0, 0, "is empty" },
		{ "a/b", 0, 0, "contains '/'" },
		{ "/abs", 0, 0, "contains '/'" },
		{ "a\\b", 0, 0, "contains '\\'" },
		{ ".", 0, 0, "is '.'" },
		{ "..", 0, 0, "is '..'" },
		{ "a..b", 0, 0, "contains '..'" },
		{ "../../etc-1", 0, 0, "contains '/'" },
		{ "..etc", 0, 0, "contains '..'" },
		{ ".hidden", 0, 0, "starts with '.'" },
		{ "a b", 0, 0, "whitespace" },
		{ "a\tb", 0, 0, "control character" },
		{ "a\nb", 0, 0, "control character" },
		{ "a\x7f", 0, 0, "control character" },
		{ "a\0b", 3, 0, "NUL byte" },
		{ "\xff\xfe", 0, 0, "UTF-8" },
		{ "\xc0\xaf", 0, 0, "UTF-8" },
		{ "\xed\xa0\x80", 0, 0, "UTF-8" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "untouched";
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].name);
		int r = fg_name_check(FG_NAME_SKILL, cases[i].name, len, err, sizeof(err));

		if (cases[i].ok) {
			cr_assert_eq(r, 0, "case %zu refused: %s", i, err);
			cr_assert_str_eq(err, "untouched", "case %zu", i);
			continue;
		}
		cr_assert_eq(r, -EINVAL, "case %zu accepted", i);
		cr_assert(strstr(err, cases[i].why), "case %zu: '%s' lacks '%s'", i, err, cases[i].why);
		cr_assert(!strncmp(err, "invalid skill name '", 20), "case %zu: %s", i, err);
	}
}

Test(names, message_format_and_kind)
{
	char err[256];

	cr_assert_eq(fg_name_check(FG_NAME_STEP, "a/b", 3, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "invalid step name 'a/b': contains '/'");
	cr_assert_eq(fg_name_check(FG_NAME_TASK_KEY, "../../etc-1", 11, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "invalid task key name '../../etc-1': contains '/'");
}

Test(names, message_escapes_unprintable_bytes)
{
	char err[256];

	cr_assert_eq(fg_name_check(FG_NAME_STEP, "a\nb'c", 5, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "invalid step name 'a\\x0ab\\x27c': contains a control character");
	cr_assert_null(strchr(err, '\n'));
}

Test(names, length_bound)
{
	char name[FG_NAME_MAX + 2];
	char err[512];

	memset(name, 'x', sizeof(name));
	cr_assert_eq(fg_name_check(FG_NAME_STEP, name, FG_NAME_MAX, err, sizeof(err)), 0);
	cr_assert_eq(fg_name_check(FG_NAME_STEP, name, FG_NAME_MAX + 1, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "longer than 128 bytes"), "%s", err);
	/* The echoed name is cut, so a hostile name cannot flood a log line. */
	cr_assert_lt(strlen(err), 120);
	cr_assert(strstr(err, "...'"), "%s", err);
}

Test(names, null_and_small_error_buffers)
{
	char err[8];

	cr_assert_eq(fg_name_check(FG_NAME_SKILL, NULL, 0, err, sizeof(err)), -EINVAL);
	cr_assert_eq(strlen(err), 7);
	cr_assert_eq(fg_name_check(FG_NAME_SKILL, "a/b", 3, NULL, 0), -EINVAL);
	cr_assert_eq(fg_name_check(FG_NAME_SKILL, "ok", 2, NULL, 0), 0);
}

/* fg_ticket_project() of key: ret, and project in the output ("" on a refusal). */
static void expect_project(const char *key, int ret, const char *project)
{
	char out[64] = "garbage";
	int r = fg_ticket_project(key, out, sizeof(out));

	cr_assert_eq(r, ret, "key '%s': %d", key, r);
	cr_assert_str_eq(out, project, "key '%s'", key);
}

Test(names, ticket_project_table)
{
	static const struct { const char *key, *project; } named[] = {
		{ "MYPROJECT-123", "myproject" }, { "AISOS-456", "aisos" }, { "ab_2C-7", "ab_2c" },
		{ "x-0", "x" }, { "Proj-99999999999999999999", "proj" }, { "myproject-1", "myproject" },
	};
	/* Keys that name no project (-ENOENT) and keys that are no key at all (-EINVAL). */
	static const char *const none[] = {
		"my-project-1", "PROJ-", "PROJ-12a", "PROJ_123", "-123", "1PROJ-123", "_P-1", "PROJ123",
		"caf\xc3\xa9-1",
	};
	static const char *const invalid[] = { "../../etc-1", "a/b-1", ".P-1", "P-1\n", "" };

	for (size_t i = 0; i < ARRAY_SIZE(named); i++)
		expect_project(named[i].key, 0, named[i].project);
	for (size_t i = 0; i < ARRAY_SIZE(none); i++)
		expect_project(none[i], -ENOENT, "");
	for (size_t i = 0; i < ARRAY_SIZE(invalid); i++)
		expect_project(invalid[i], -EINVAL, "");
	cr_assert_eq(fg_ticket_project(NULL, NULL, 0), -EINVAL);
}

Test(names, ticket_project_buffer_too_small)
{
	char out[4] = "zzz";

	cr_assert_eq(fg_ticket_project("ABCD-1", out, sizeof(out)), -ENAMETOOLONG);
	cr_assert_str_eq(out, "");
	cr_assert_eq(fg_ticket_project("ABC-1", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "abc");
}
