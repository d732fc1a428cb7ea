/*
 * test_reviewmd_panel.c - review.md's reviewer panel: reviewers: and
 * rereview:, the entries skipped with a diagnostic, the role files read
 * beside review.md and never outside, the role slug rule.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fgtest.h"
#include "forge/buf.h"
#include "forge/alloc.h"
#include "forge/reviewmd.h"

#include "reviewmd_sample.h"
#include "tmp_fixture.h"

TestSuite(reviewmd, .init = tmp_init, .fini = tmp_fini, .timeout = 60);

/* ---- the reviewer panel (reviewers:, rereview:) ------------------------ */

Test(reviewmd, panel_roles_and_rereview_are_read)
{
	const char *t = "---\nrereview: all\nreviewers:\n  - role: correctness\n    instructions: c.md\n"
			"  - role: security\n---\nBody\n";
	struct fg_review_config c;

	fg_review_config_init(&c);
	fg_review_config_parse(&c, t, strlen(t), NULL);
	cr_assert_eq(c.diags.n, 0, "%s", c.diags.n ? c.diags.v[0].msg : "");
	cr_assert_eq(c.nreviewers, 2);
	cr_assert_str_eq(c.reviewers[0].role, "correctness");
	cr_assert_str_eq(c.reviewers[0].instructions_file, "c.md");
	cr_assert_eq(c.reviewers[0].line, 4);
	cr_assert_str_eq(c.reviewers[1].role, "security");
	cr_assert_null(c.reviewers[1].instructions_file);
	cr_assert_eq(c.rereview, FG_REREVIEW_ALL);
	cr_assert_str_eq(c.instructions, "Body");
	fg_review_config_release(&c);
}

struct panel_case {
	const char *what;
	const char *fm;            /* the frontmatter lines */
	size_t nroles;
	const char *diag;          /* substring of an error on some line, or NULL: none */
	int fallback;              /* the "no valid entry" warning is expected */
};

Test(reviewmd, panel_invalid_entries_are_skipped_with_a_diagnostic)
{
	static const struct panel_case cases[] = {
		{ "no panel", "max_retries: 2\n", 0, NULL, 0 },
		{ "not a list", "reviewers: correctness\n", 0, "invalid 'reviewers' value", 0 },
		{ "empty list", "reviewers: []\n", 0, NULL, 1 },
		{ "not a mapping", "reviewers:\n  - correctness\n  - role: ok\n", 1, "expected a mapping", 0 },
		{ "missing role", "reviewers:\n  - instructions: a.md\n", 0, "'role' is missing", 1 },
		{ "upper case", "reviewers:\n  - role: Safety\n", 0, "not a slug", 1 },
		{ "leading dash", "reviewers:\n  - role: -x\n", 0, "not a slug", 1 },
		{ "underscore", "reviewers:\n  - role: a_b\n", 0, "not a slug", 1 },
		{ "too long", "reviewers:\n  - role: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 0,
		  "not a slug", 1 },
		{ "a number role", "reviewers:\n  - role: 7\n", 1, NULL, 0 },
		{ "a list role", "reviewers:\n  - role: [a]\n", 0, "'role' is missing", 1 },
		{ "duplicate", "reviewers:\n  - role: a\n  - role: a\n", 1, "is repeated", 0 },
		{ "nine roles",
		  "reviewers:\n  - role: a\n  - role: b\n  - role: c\n  - role: d\n  - role: e\n"
		  "  - role: f\n  - role: g\n  - role: h\n  - role: i\n", 8, "one more than the 8", 0 },
		{ "absolute file", "reviewers:\n  - role: a\n    instructions: /etc/passwd\n", 0,
		  "escapes the directory", 1 },
		{ "dot-dot file", "reviewers:\n  - role: a\n    instructions: x/../../s.md\n", 0,
		  "escapes the directory", 1 },
		{ "file not a string", "reviewers:\n  - role: a\n    instructions: [x]\n", 0,
		  "not a string", 1 },
		{ "bad rereview", "rereview: some\n", 0, "invalid 'rereview' value", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct panel_case *k = &cases[i];
		char *t = fgt_fmt("---\n%s---\nBody\n", k->fm);
		struct fg_review_config c;

		fg_review_config_init(&c);
		fg_review_config_parse(&c, t, strlen(t), NULL);
		cr_assert_eq(c.nreviewers, k->nroles, "%s: %zu roles", k->what, c.nreviewers);
		if (k->diag)
			cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, -1, k->diag), "%s: no '%s'", k->what,
				  k->diag);
		else
			cr_assert_eq(fg_diags_count(&c.diags, FG_DIAG_ERROR), 0, "%s", k->what);
		cr_assert_eq(has_diag(&c.diags, FG_DIAG_WARNING, 0, "has no valid entry"), k->fallback,
			     "%s", k->what);
		cr_assert_eq(c.rereview, FG_REREVIEW_REJECTED, "%s", k->what);
		fg_review_config_release(&c);
		free(t);
	}
}

Test(reviewmd, role_files_are_read_beside_review_md_and_never_outside)
{
	char *skill = tmp_path("skill");
	char *rmd = fgt_fmt("%s/review.md", skill);
	struct fg_review_config c;

	fgt_write(rmd, "---\nreviewers:\n  - role: a\n    instructions: roles/a.md\n"
		       "  - role: b\n    instructions: link.md\n  - role: c\n    instructions: none.md\n"
		       "  - role: d\n    instructions: bin.md\n---\nShared\n");
	char *paths[4] = { fgt_fmt("%s/roles/a.md", skill), fgt_fmt("%s/secret.md", tmp_dir),
			   fgt_fmt("%s/link.md", skill), fgt_fmt("%s/bin.md", skill) };

	fgt_write(paths[0], "\nCheck A.\r\n\n");
	fgt_write(paths[1], "outside\n");
	cr_assert_eq(symlink("../secret.md", paths[2]), 0);
	fgt_write_bytes(paths[3], "a\0b", 3);
	for (int i = 0; i < 4; i++)
		free(paths[i]);
	fg_review_config_init(&c);
	cr_assert_eq(fg_review_config_load(&c, rmd, NULL), 0);
	cr_assert_eq(c.nreviewers, 1);
	cr_assert_str_eq(c.reviewers[0].role, "a");
	cr_assert_str_eq(c.reviewers[0].instructions, "Check A.");
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 5, "role file 'link.md' of role 'b' refused"));
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 7, "role file 'none.md' of role 'c' refused"));
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 9, "NUL byte"));
	fg_review_config_release(&c);

	/* Every role refused: one reviewer, said once. */
	fgt_write(rmd, "---\nreviewers:\n  - role: b\n    instructions: link.md\n---\nShared\n");
	fg_review_config_init(&c);
	fg_review_config_load(&c, rmd, NULL);
	cr_assert_eq(c.nreviewers, 0);
	cr_assert(has_diag(&c.diags, FG_DIAG_WARNING, 0, "has no valid entry"));
	fg_review_config_release(&c);

	/* lint fails on a refused role file. */
	struct fg_diags out;

	fg_diags_init(&out);
	cr_assert_eq(fg_review_lint_file(rmd, &out), 1);
	fg_diags_release(&out);
	free(rmd);
}

Test(reviewmd, role_slug_rule)
{
	cr_assert(fg_role_valid("a"));
	cr_assert(fg_role_valid("0-correctness-2"));
	cr_assert_not(fg_role_valid(""));
	cr_assert_not(fg_role_valid("-a"));
	cr_assert_not(fg_role_valid("a b"));
	cr_assert_not(fg_role_valid("a/b"));
	cr_assert_not(fg_role_valid("A"));
	cr_assert_str_eq(fg_rereview_name(FG_REREVIEW_ALL), "all");
	cr_assert_str_eq(fg_rereview_name(FG_REREVIEW_REJECTED), "rejected");
}
