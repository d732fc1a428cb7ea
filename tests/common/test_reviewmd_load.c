/*
 * test_reviewmd_load.c - review.md from disk: the fixtures, files that are
 * treated as empty (binary, too large, not regular, unreadable), symbolic
 * links, and lint's verdict on files and contents.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgtest.h"
#include "forge/buf.h"
#include "forge/alloc.h"
#include "forge/reviewmd.h"

#include "reviewmd_sample.h"
#include "tmp_fixture.h"

TestSuite(reviewmd, .init = tmp_init, .fini = tmp_fini, .timeout = 60);

/* ---- loading files ---------------------------------------------------- */

Test(reviewmd, load_fixture_valid)
{
	struct fg_review_config c;

	fg_review_config_init(&c);
	cr_assert_eq(fg_review_config_load(&c, FIX "valid/review.md", NULL), 0);
	cr_assert_eq(c.max_retries, 5);
	cr_assert(c.stop_when_stalled);
	cr_assert(c.has_frontmatter);
	cr_assert_eq(c.diags.n, 0);
	cr_assert(!strncmp(c.instructions, "# Code Review Checklist\n\nEvaluate", 33));
	cr_assert(strstr(c.instructions, "for the implementer"));
	cr_assert_eq(c.instructions[strlen(c.instructions) - 1], 'r');
	fg_review_config_release(&c);
}

Test(reviewmd, load_fixture_crlf)
{
	struct fg_review_config c;

	fg_review_config_init(&c);
	cr_assert_eq(fg_review_config_load(&c, FIX "crlf/review.md", NULL), 0);
	cr_assert_eq(c.max_retries, 4);
	cr_assert_str_eq(c.instructions, "# Review\n\nCheck the tests.");
	fg_review_config_release(&c);
}

Test(reviewmd, load_missing_file)
{
	struct fg_review_config c;
	struct fg_review_env env = { "4", NULL, NULL };

	fg_review_config_init(&c);
	cr_assert_eq(fg_review_config_load(&c, "/nonexistent/review.md", &env), -ENOENT);
	cr_assert_str_eq(c.instructions, "");
	cr_assert_eq(c.max_retries, 4);
	cr_assert_eq(c.diags.n, 1);
	cr_assert_str_eq(c.diags.v[0].msg, "file does not exist");
	fg_review_config_release(&c);
}

/* Loads path and checks it was treated as empty, with why in the error. */
static void assert_treated_empty(const char *path, const char *why)
{
	struct fg_review_config c;
	struct fg_review_env env = { "2", NULL, NULL };

	fg_review_config_init(&c);
	cr_assert_eq(fg_review_config_load(&c, path, &env), 0, "%s", path);
	cr_assert_str_eq(c.instructions, "");
	cr_assert_eq(c.max_retries, 2, "reviewer still runs with the env value");
	cr_assert_eq(c.source, FG_RETRIES_ENV);
	cr_assert_eq(fg_diags_count(&c.diags, FG_DIAG_ERROR), 1, "%s", path);
	cr_assert(strstr(c.diags.v[0].msg, why), "'%s' lacks '%s'", c.diags.v[0].msg, why);
	cr_assert(strstr(c.diags.v[0].msg, "treated as an empty file"), "%s", c.diags.v[0].msg);
	fg_review_config_release(&c);
}

Test(reviewmd, load_bad_files_are_treated_as_empty)
{
	char *bin = tmp_path("bin/review.md");
	char *big = tmp_path("big/review.md");
	char *fifo = tmp_path("fifo");
	char *latin = tmp_path("latin/review.md");
	unsigned char binary[512];
	size_t n = 2u * 1024 * 1024;
	char *blob = malloc(n);

	/* A binary review.md: an ELF-like header with NUL bytes. */
	for (size_t i = 0; i < sizeof(binary); i++)
		binary[i] = (unsigned char)(i * 7);
	memcpy(binary, "\x7f" "ELF", 4);
	fgt_write_bytes(bin, binary, sizeof(binary));
	memset(blob, 'x', n);
	fgt_write_bytes(big, blob, n);
	fgt_write(latin, "---\nmax_retries: 5\n---\nR\xe9vision\n");
	cr_assert_eq(mkfifo(fifo, 0644), 0);

	assert_treated_empty(bin, "NUL byte");
	assert_treated_empty(big, "larger than 1048576 bytes");
	assert_treated_empty(fifo, "not a regular file");
	assert_treated_empty(tmp_dir, "is a directory");
	assert_treated_empty(latin, "not valid UTF-8");
	assert_treated_empty("/dev/null", "not a regular file");
	free(blob);
}

/* The checks of assert_treated_empty(), as an exit code (0: all hold), for a
 * child process that runs without root's power to read a mode-000 file. */
static int load_unreadable(void *path)
{
	struct fg_review_config c;
	struct fg_review_env env = { "2", NULL, NULL };
	int bad;

	fg_review_config_init(&c);
	bad = fg_review_config_load(&c, path, &env) != 0 || strcmp(c.instructions, "") ||
	      c.max_retries != 2 || c.source != FG_RETRIES_ENV ||
	      fg_diags_count(&c.diags, FG_DIAG_ERROR) != 1 ||
	      !strstr(c.diags.v[0].msg, "cannot read the file: permission denied") ||
	      !strstr(c.diags.v[0].msg, "treated as an empty file");
	fg_review_config_release(&c);
	return bad;
}

Test(reviewmd, load_unreadable_file)
{
	char *path = tmp_path("review.md");

	fgt_write(path, "---\nmax_retries: 5\n---\nbody\n");
	cr_assert_eq(chmod(path, 0), 0);
	/* The directory must be searchable by nobody: the file's mode denies. */
	cr_assert_eq(chmod(tmp_dir, 0755), 0);
	cr_assert_eq(fgt_as_nobody(load_unreadable, path), 0,
		     "an unreadable review.md is not treated as empty with the reason");
}

Test(reviewmd, load_follows_symlink)
{
	char *target = tmp_path("real.md");
	char *link = tmp_path("review.md");
	struct fg_review_config c;

	fgt_write(target, "---\nmax_retries: 9\n---\nbody\n");
	cr_assert_eq(symlink("real.md", link), 0);
	fg_review_config_init(&c);
	cr_assert_eq(fg_review_config_load(&c, link, NULL), 0);
	cr_assert_eq(c.max_retries, 9);
	fg_review_config_release(&c);
}

/* ---- lint ------------------------------------------------------------- */

struct lcase {
	const char *path;
	size_t errors;
	struct want_diag first;    /* first diagnostic, or sub NULL: no diagnostic at all */
	size_t total;
};

Test(reviewmd, lint_fixtures_table)
{
	static const struct lcase cases[] = {
		{ FIX "valid/review.md", 0, NONE, 0 },
		{ FIX "crlf/review.md", 0, NONE, 0 },
		/* No APPROVED/REJECTED needed: the entrypoint adds the verdict protocol. */
		{ FIX "no-verdict-words/review.md", 0, NONE, 0 },
		{ FIX "typo/review.md", 0, W(2, "unknown field 'max_retry' is ignored (did you mean 'max_retries'?)"), 1 },
		{ FIX "bad-type/review.md", 1, E(3, "invalid 'max_retries' value '3' (a quoted string)"), 1 },
		{ FIX "wrong-name/REVIEW.md", 1, E(0, "must be named exactly 'review.md'"), 1 },
		{ FIX "missing/review.md", 1, E(0, "file does not exist"), 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fg_diags d;
		size_t errors;

		fg_diags_init(&d);
		errors = fg_review_lint_file(cases[i].path, &d);
		cr_assert_eq(errors, cases[i].errors, "%s: %zu errors", cases[i].path, errors);
		cr_assert_eq(d.n, cases[i].total, "%s: %zu diagnostics (first '%s')", cases[i].path, d.n,
			     d.n ? d.v[0].msg : "");
		if (cases[i].first.sub) {
			cr_assert_eq(d.v[0].level, cases[i].first.level, "%s", cases[i].path);
			cr_assert_eq(d.v[0].line, cases[i].first.line, "%s: line %d", cases[i].path, d.v[0].line);
			cr_assert(strstr(d.v[0].msg, cases[i].first.sub), "%s: '%s'", cases[i].path, d.v[0].msg);
		}
		fg_diags_release(&d);
	}
}

struct lcontent {
	const char *what;
	const char *data;
	size_t len;
	size_t errors;
	size_t warnings;
	int line;               /* line of the first diagnostic */
	const char *sub;        /* in the first diagnostic */
};

Test(reviewmd, lint_content_table)
{
	static const struct lcontent cases[] = {
		{ "empty", "", 0, 0, 1, 0, "no review instructions" },
		{ "frontmatter only", "---\nmax_retries: 2\n---\n", 0, 0, 1, 0, "no review instructions" },
		{ "unclosed", "---\nmax_retries: 2\nbody\n", 0, 1, 0, 1, "never closed" },
		{ "malformed", "---\nmax_retries: [\n---\nbody\n", 0, 1, 0, 3, "malformed YAML" },
		{ "leading blank line", "\n---\nmax_retries: 2\n---\nbody\n", 0, 0, 1, 2, "not on the first line" },
		{ "duplicate", "---\nmax_retries: 2\nmax_retries: 3\n---\nbody\n", 0, 0, 1, 3, "repeated (first on line 2)" },
		{ "unknown, no hint", "---\nowner: me\n---\nbody\n", 0, 0, 1, 2, "unknown field 'owner' is ignored" },
		{ "non-scalar key", "---\n? [a]\n: 1\n---\nbody\n", 0, 0, 1, 2, "not a plain name" },
		{ "stalled typo", "---\nstop_when_stall: true\n---\nbody\n", 0, 0, 1, 2, "did you mean 'stop_when_stalled'" },
		{ "binary", "ab\0cd", 5, 1, 0, 1, "NUL byte" },
		{ "above limit", "---\nmax_retries: 1000\n---\nbody\n", 0, 1, 0, 2, "above the limit" },
	};
	char *path = tmp_path("review.md");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct lcontent *k = &cases[i];
		struct fg_diags d;

		fgt_write_bytes(path, k->data, k->len ? k->len : strlen(k->data));
		fg_diags_init(&d);
		cr_assert_eq(fg_review_lint_file(path, &d), k->errors, "%s", k->what);
		cr_assert_eq(fg_diags_count(&d, FG_DIAG_ERROR), k->errors, "%s", k->what);
		cr_assert_eq(fg_diags_count(&d, FG_DIAG_WARNING), k->warnings, "%s: first '%s'", k->what,
			     d.n ? d.v[0].msg : "");
		cr_assert_eq(d.v[0].line, k->line, "%s: line %d", k->what, d.v[0].line);
		cr_assert(strstr(d.v[0].msg, k->sub), "%s: '%s'", k->what, d.v[0].msg);
		fg_diags_release(&d);
	}
}

Test(reviewmd, lint_appends_and_counts_only_its_errors)
{
	struct fg_diags d;

	fg_diags_init(&d);
	fg_diags_add(&d, FG_DIAG_ERROR, 1, "earlier error");
	cr_assert_eq(fg_review_lint_file(FIX "bad-type/review.md", &d), 1);
	cr_assert_eq(d.n, 2);
	cr_assert_str_eq(d.v[0].msg, "earlier error");
	fg_diags_release(&d);
}
