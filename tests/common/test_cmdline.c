/*
 * test_cmdline.c - splitting agent commands and expanding placeholders.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "forge/buf.h"
#include "forge/cmdline.h"

TestSuite(cmdline, .timeout = 30);

#define MAXW 10

struct split_case {
	const char *cmd;
	const char *words[MAXW];   /* NULL-terminated */
};

static void check_split(const struct split_case *c)
{
	struct fg_strvec v;
	char err[128] = "";
	size_t n = 0;

	fg_strvec_init(&v);
	cr_assert_eq(fg_cmdline_split(c->cmd, &v, err, sizeof(err)), 0, "[%s]: %s", c->cmd, err);
	while (c->words[n])
		n++;
	cr_expect_eq(v.n, n, "[%s]: %zu words", c->cmd, v.n);
	for (size_t i = 0; i < n && i < v.n; i++)
		cr_expect_str_eq(v.v[i], c->words[i], "[%s] word %zu", c->cmd, i);
	cr_expect_null(v.v[v.n]);
	fg_strvec_release(&v);
}

Test(cmdline, split_quoting)
{
	static const struct split_case t[] = {
		{ "claude -p", { "claude", "-p" } },
		{ "  a \t b\n c  ", { "a", "b", "c" } },
		{ "'a b' c", { "a b", "c" } },
		{ "\"a b\" c", { "a b", "c" } },
		{ "a'b c'd", { "ab cd" } },
		{ "'' x", { "", "x" } },
		{ "\"\"", { "" } },
		{ "'$HOME \\n \"x\"'", { "$HOME \\n \"x\"" } },
		{ "\"\\\" \\\\ \\$ \\` \\n\"", { "\" \\ $ ` \\n" } },
		{ "\"it's\"", { "it's" } },
		{ "'say \"hi\"'", { "say \"hi\"" } },
		{ "a\\ b", { "a b" } },
		{ "\\'x\\'", { "'x'" } },
		{ "\\\\", { "\\" } },
		{ "a \\\n b", { "a", "b" } },
		{ "a\\\nb", { "ab" } },
		{ "\"a\\\nb\"", { "ab" } },
		{ "echo a;b | c > d && e", { "echo", "a;b", "|", "c", ">", "d", "&&", "e" } },
		{ "*.c $X `id` ~", { "*.c", "$X", "`id`", "~" } },
		{ "run --prompt={prompt_file}", { "run", "--prompt={prompt_file}" } },
		{ "\"multi\nline\"", { "multi\nline" } },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		check_split(&t[i]);
}

Test(cmdline, split_errors_have_exact_texts)
{
	static const struct {
		const char *cmd;
		const char *err;
	} t[] = {
		{ "a 'b", "unterminated single quote" },
		{ "'", "unterminated single quote" },
		{ "a \"b", "unterminated double quote" },
		{ "\"a\\\"", "unterminated double quote" },
		{ "a \\", "trailing backslash" },
		{ "", "empty command" },
		{ " \t\n ", "empty command" },
		{ "\\\n", "empty command" },
		{ NULL, "empty command" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct fg_strvec v;
		char err[128] = "";

		fg_strvec_init(&v);
		fg_strvec_push(&v, "kept");
		cr_assert_eq(fg_cmdline_split(t[i].cmd, &v, err, sizeof(err)), -EINVAL, "[%s]", t[i].cmd);
		cr_expect_str_eq(err, t[i].err, "[%s]", t[i].cmd);
		/* On failure the caller's vector is left as it was. */
		cr_expect_eq(v.n, 1);
		cr_expect_str_eq(v.v[0], "kept");
		fg_strvec_release(&v);
	}
}

Test(cmdline, split_appends_and_tolerates_no_err_buffer)
{
	struct fg_strvec v;

	fg_strvec_init(&v);
	fg_strvec_push(&v, "first");
	cr_assert_eq(fg_cmdline_split("x y", &v, NULL, 0), 0);
	cr_assert_eq(v.n, 3);
	cr_assert_str_eq(v.v[2], "y");
	cr_assert_eq(fg_cmdline_split("'x", &v, NULL, 0), -EINVAL);
	cr_assert_eq(v.n, 3);
	fg_strvec_release(&v);
}

Test(cmdline, split_is_bounded)
{
	size_t n = FG_CMDLINE_MAX_BYTES + 1;
	char *big = malloc(n + 1);
	struct fg_strvec v;
	char err[64];

	fg_strvec_init(&v);
	memset(big, 'a', n);
	big[n] = '\0';
	cr_assert_eq(fg_cmdline_split(big, &v, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "too long");
	big[n - 1] = '\0';
	cr_assert_eq(fg_cmdline_split(big, &v, err, sizeof(err)), 0);
	cr_assert_eq(v.n, 1);
	cr_assert_eq(strlen(v.v[0]), FG_CMDLINE_MAX_BYTES);
	fg_strvec_release(&v);

	/* FG_CMDLINE_MAX_ARGS one-letter words fit, one more does not. */
	for (size_t i = 0; i < 2 * FG_CMDLINE_MAX_ARGS; i += 2) {
		big[i] = 'w';
		big[i + 1] = ' ';
	}
	big[2 * FG_CMDLINE_MAX_ARGS] = '\0';
	cr_assert_eq(fg_cmdline_split(big, &v, err, sizeof(err)), 0);
	cr_assert_eq(v.n, FG_CMDLINE_MAX_ARGS);
	fg_strvec_release(&v);
	big[2 * FG_CMDLINE_MAX_ARGS] = 'w';
	big[2 * FG_CMDLINE_MAX_ARGS + 1] = '\0';
	cr_assert_eq(fg_cmdline_split(big, &v, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "too many arguments");
	cr_assert_eq(v.n, 0);
	fg_strvec_release(&v);
	free(big);
}

static const struct fg_placeholder ph[] = {
	{ "prompt_file", "/tmp/my prompts/p 1.md" },
	{ "system_prompt_file", "/tmp/sys \"quoted\" 'x'.md" },
	{ "workspace", "/work space" },
	{ "cycle", "2" },
	{ "step", "implement_task" },
	{ "skill", "implement-task" },
	{ "task_key", NULL },
};

Test(cmdline, expand_placeholders)
{
	static const struct split_case t[] = {
		{ "agent --prompt {prompt_file}", { "agent", "--prompt", "/tmp/my prompts/p 1.md" } },
		{ "agent --system={system_prompt_file}", { "agent", "--system=/tmp/sys \"quoted\" 'x'.md" } },
		{ "'{workspace}/out' \"{cycle}\"", { "/work space/out", "2" } },
		{ "x {step}-{skill}-{cycle}", { "x", "implement_task-implement-task-2" } },
		{ "{cycle}{cycle}", { "22" } },
		{ "{unknown} {task_key} {Cycle}", { "{unknown}", "{task_key}", "{Cycle}" } },
		{ "{ cycle} {cycle {} {{cycle}} }{", { "{", "cycle}", "{cycle", "{}", "{2}", "}{" } },
		{ "{prompt_file", { "{prompt_file" } },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct fg_strvec v;
		size_t n = 0;

		fg_strvec_init(&v);
		cr_assert_eq(fg_cmdline_split(t[i].cmd, &v, NULL, 0), 0);
		fg_cmdline_expand(&v, ph, sizeof(ph) / sizeof(ph[0]));
		while (t[i].words[n])
			n++;
		cr_expect_eq(v.n, n, "[%s]", t[i].cmd);
		for (size_t k = 0; k < n && k < v.n; k++)
			cr_expect_str_eq(v.v[k], t[i].words[k], "[%s] word %zu", t[i].cmd, k);
		fg_strvec_release(&v);
	}
}

Test(cmdline, values_are_not_expanded_again)
{
	static const struct fg_placeholder self[] = {
		{ "a", "{b}" },
		{ "b", "B" },
	};
	struct fg_strvec v;

	fg_strvec_init(&v);
	fg_strvec_push(&v, "{a}{b}");
	fg_cmdline_expand(&v, self, 2);
	cr_assert_str_eq(v.v[0], "{b}B");
	fg_cmdline_expand(&v, NULL, 0);
	cr_assert_str_eq(v.v[0], "{b}B");
	fg_strvec_release(&v);
}
