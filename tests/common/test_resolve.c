/*
 * test_resolve.c - choosing the review.md for a skill and a ticket: project
 * override, default, none; refused symlinks and names.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgtest.h"
#include "forge/buf.h"
#include "forge/resolve.h"

TestSuite(resolve, .timeout = 30);

static char *tmp;      /* the test's temporary directory */
static char *skills;   /* tmp/skills */

static void setup(void)
{
	tmp = fgt_tmpdir();
	skills = fgt_fmt("%s/skills", tmp);
	cr_assert_eq(mkdir(skills, 0755), 0);
}

static void teardown(void)
{
	fgt_rm_rf(tmp);
	free(skills);
	free(tmp);
}

/* Writes skills/rel with some content. */
static void put(const char *rel)
{
	char *p = fgt_fmt("%s/%s", skills, rel);

	fgt_write(p, "Review it.\n");
	free(p);
}

/* Creates skills/rel as a symlink to target (parents created). */
static void link_at(const char *target, const char *rel)
{
	char *p = fgt_fmt("%s/%s", skills, rel);
	char *dir = fgt_fmt("%s/%s", skills, rel);

	char *keep;

	*strrchr(dir, '/') = '\0';
	keep = fgt_fmt("%s/.keep", dir);
	fgt_write(keep, "");
	cr_assert_eq(symlink(target, p), 0, "symlink %s", p);
	free(keep);
	free(p);
	free(dir);
}

/* Runs the resolver; returns its code and the found path relative to skills. */
static int run(const char *skill, const char *ticket, char *rel, size_t rellen, struct fg_diags *d)
{
	char *path = (char *)"sentinel";
	int r = fg_resolve_review_md(skills, skill, ticket, &path, d);

	rel[0] = '\0';
	if (r == 0) {
		cr_assert(!strncmp(path, skills, strlen(skills)), "%s", path);
		snprintf(rel, rellen, "%s", path + strlen(skills) + 1);
		free(path);
	} else {
		cr_assert_null(path, "out_path must be reset on failure");
	}
	return r;
}

static int has_diag(const struct fg_diags *d, enum fg_diag_level level, const char *sub)
{
	for (size_t i = 0; i < d->n; i++) {
		if (d->v[i].level == level && strstr(d->v[i].msg, sub))
			return 1;
	}
	return 0;
}

/* Resolving skill (of ticket, or none) finds no review.md, with a warning
 * that holds why. */
static void expect_not_found(const char *skill, const char *ticket, const char *why)
{
	struct fg_diags d;
	char rel[256];

	fg_diags_init(&d);
	cr_assert_eq(run(skill, ticket, rel, sizeof(rel), &d), -ENOENT, "%s", skill);
	cr_assert(has_diag(&d, FG_DIAG_WARNING, why), "no warning '%s'", why);
	fg_diags_release(&d);
}

Test(resolve, precedence_table, .init = setup, .fini = teardown)
{
	static const struct {
		const char *skill;
		const char *ticket;
		int ret;
		const char *found;
		const char *warn;   /* expected warning, or NULL for none */
	} cases[] = {
		{ "implement-task", "MYPROJECT-123", 0, "myproject/implement-task/review.md", NULL },
		{ "implement-task", "myproject-9", 0, "myproject/implement-task/review.md", NULL },
		{ "implement-task", "OTHER-1", 0, "default/implement-task/review.md", NULL },
		{ "implement-task", NULL, 0, "default/implement-task/review.md", NULL },
		{ "implement-task", "", 0, "default/implement-task/review.md", NULL },
		{ "implement-task", "not_a_ticket", 0, "default/implement-task/review.md", "no project key" },
		{ "project-only", "MYPROJECT-5", 0, "myproject/project-only/review.md", NULL },
		{ "project-only", "OTHER-5", -ENOENT, "", NULL },
		{ "no-review", "MYPROJECT-1", -ENOENT, "", NULL },
		{ "dir-not-file", NULL, -ENOENT, "", "not a regular file" },
		{ "dir-not-file", "MYPROJECT-2", 0, "myproject/dir-not-file/review.md", NULL },
		{ "wrong-case", NULL, -ENOENT, "", NULL },
		{ "implement-task", "DEFAULT-3", 0, "default/implement-task/review.md", NULL },
	};

	put("default/implement-task/review.md");
	put("default/implement-task/SKILL.md");
	put("myproject/implement-task/review.md");
	put("myproject/project-only/review.md");
	put("default/no-review/SKILL.md");
	put("default/dir-not-file/review.md/inner");
	put("myproject/dir-not-file/review.md");
	put("default/wrong-case/Review.md");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fg_diags d;
		char rel[256];
		int r;

		fg_diags_init(&d);
		r = run(cases[i].skill, cases[i].ticket, rel, sizeof(rel), &d);
		cr_assert_eq(r, cases[i].ret, "case %zu: %d", i, r);
		cr_assert_str_eq(rel, cases[i].found, "case %zu", i);
		if (cases[i].warn)
			cr_assert(has_diag(&d, FG_DIAG_WARNING, cases[i].warn), "case %zu: no '%s'", i,
				  cases[i].warn);
		else
			cr_assert_eq(d.n, 0, "case %zu: '%s'", i, d.n ? d.v[0].msg : "");
		fg_diags_release(&d);
	}
}

Test(resolve, invalid_names_table, .init = setup, .fini = teardown)
{
	static const struct {
		const char *skill;
		const char *ticket;
		const char *msg;
	} cases[] = {
		{ "a/b", NULL, "invalid skill name 'a/b': contains '/'" },
		{ "..", NULL, "invalid skill name '..': is '..'" },
		{ "../default/x", NULL, "invalid skill name '../default/x': contains '/'" },
		{ "", NULL, "invalid skill name '': is empty" },
		{ NULL, NULL, "invalid skill name '': is empty" },
		{ ".hidden", NULL, "invalid skill name '.hidden': starts with '.'" },
		{ "ok", "../../etc-1", "invalid task key name '../../etc-1': contains '/'" },
		{ "ok", "..-1", "invalid task key name '..-1': contains '..'" },
		{ "ok", "A-1\n", "invalid task key name 'A-1\\x0a': contains a control character" },
	};

	put("default/ok/review.md");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fg_diags d;
		char rel[256];

		fg_diags_init(&d);
		cr_assert_eq(run(cases[i].skill, cases[i].ticket, rel, sizeof(rel), &d), -EINVAL, "case %zu", i);
		cr_assert_eq(d.n, 1, "case %zu", i);
		cr_assert_eq(d.v[0].level, FG_DIAG_ERROR);
		cr_assert_str_eq(d.v[0].msg, cases[i].msg, "case %zu", i);
		fg_diags_release(&d);
	}
}

Test(resolve, symlink_to_etc_is_refused, .init = setup, .fini = teardown)
{
	struct fg_diags d;
	char rel[256];

	if (access("/etc/passwd", R_OK) != 0)
		cr_skip("no readable /etc/passwd on this machine");
	link_at("/etc/passwd", "myproject/evil/review.md");
	put("default/evil/review.md");
	fg_diags_init(&d);
	/* The project candidate is refused; the default one is used instead. */
	cr_assert_eq(run("evil", "MYPROJECT-1", rel, sizeof(rel), &d), 0);
	cr_assert_str_eq(rel, "default/evil/review.md");
	cr_assert(has_diag(&d, FG_DIAG_WARNING, "leads to '/etc/passwd', outside the skills directory"),
		  "%s", d.n ? d.v[0].msg : "");
	fg_diags_release(&d);
}

Test(resolve, symlinked_directory_leading_out_is_refused, .init = setup, .fini = teardown)
{
	char *outside = fgt_fmt("%s/outside/sk/review.md", tmp);
	char *deflt = fgt_fmt("%s/default", skills);

	/* skills/default -> ../outside: every default candidate leads out. */
	fgt_write(outside, "Review it.\n");
	cr_assert_eq(symlink("../outside", deflt), 0);
	free(deflt);
	expect_not_found("sk", NULL, "outside the skills directory");
	free(outside);
}

Test(resolve, dotdot_symlink_leading_out_is_refused, .init = setup, .fini = teardown)
{
	char *secret = fgt_fmt("%s/secret.md", tmp);

	fgt_write(secret, "secret\n");
	free(secret);
	link_at("../../../secret.md", "default/sk/review.md");
	expect_not_found("sk", NULL, "refusing");
}

Test(resolve, symlink_inside_the_tree_is_followed, .init = setup, .fini = teardown)
{
	struct fg_diags d;
	char rel[256];

	put("default/sk/review.md");
	link_at("../../default/sk/review.md", "myproject/sk/review.md");
	fg_diags_init(&d);
	cr_assert_eq(run("sk", "MYPROJECT-1", rel, sizeof(rel), &d), 0);
	/* The path is returned as found, not canonicalised. */
	cr_assert_str_eq(rel, "myproject/sk/review.md");
	cr_assert_eq(d.n, 0);
	fg_diags_release(&d);
}

Test(resolve, dangling_and_looping_symlinks, .init = setup, .fini = teardown)
{
	link_at("nowhere.md", "myproject/sk/review.md");
	link_at("review.md", "default/sk/review.md");
	expect_not_found("sk", "MYPROJECT-1", "cannot resolve");
}

Test(resolve, fifo_is_not_a_review_file, .init = setup, .fini = teardown)
{
	char *p = fgt_fmt("%s/default/sk/review.md", skills);

	put("default/sk/SKILL.md");
	cr_assert_eq(mkfifo(p, 0644), 0);
	expect_not_found("sk", NULL, "not a regular file");
	free(p);
}

Test(resolve, skills_dir_through_a_symlink, .init = setup, .fini = teardown)
{
	struct fg_diags d;
	char *via = fgt_fmt("%s/via", tmp);
	char *path = NULL;

	put("default/sk/review.md");
	cr_assert_eq(symlink("skills", via), 0);
	fg_diags_init(&d);
	cr_assert_eq(fg_resolve_review_md(via, "sk", NULL, &path, &d), 0);
	cr_assert(!strncmp(path, via, strlen(via)), "%s", path);
	cr_assert_str_eq(path + strlen(via), "/default/sk/review.md");
	cr_assert_eq(d.n, 0);
	free(path);
	fg_diags_release(&d);
	free(via);
}

Test(resolve, unusable_skills_dir, .init = setup, .fini = teardown)
{
	struct fg_diags d;
	char *path = (char *)"sentinel";
	char *file = fgt_fmt("%s/file", tmp);
	char *missing = fgt_fmt("%s/missing", tmp);

	fgt_write(file, "x");
	fg_diags_init(&d);
	/* Never -ENOENT: a missing skills dir is a configuration error, not "none". */
	cr_assert_eq(fg_resolve_review_md(missing, "sk", NULL, &path, &d), -ENOTDIR);
	cr_assert_null(path);
	cr_assert(has_diag(&d, FG_DIAG_ERROR, "cannot use skills directory"));
	cr_assert(has_diag(&d, FG_DIAG_ERROR, "no such file or directory"));
	cr_assert_eq(fg_resolve_review_md(file, "sk", NULL, &path, &d), -ENOTDIR);
	cr_assert_eq(fg_resolve_review_md("", "sk", NULL, &path, &d), -ENOTDIR);
	cr_assert_eq(d.n, 3);
	fg_diags_release(&d);
	free(file);
	free(missing);
}

/* A misspelled skill is explained, not only "no review.md": the
 * explanation names the paths tried and the nearest skill with a review.md. */
Test(resolve, explain_missing_names_paths_and_nearest_skill, .init = setup, .fini = teardown)
{
	static const struct {
		const char *skill, *ticket;
		int want_tried;    /* 1: default only, 2: proj then default, 0: not checked */
		const char *want_hint;
	} cases[] = {
		{ "add-licence", NULL, 1, "did you mean 'add-license'?" },
		{ "add-licence", "PROJ-3", 2, "did you mean 'add-license'?" },
		{ "fix-bugz", "PROJ-3", 0, "did you mean 'fix-bugs'?" },   /* only in proj/ */
		{ "zzz", NULL, 0, NULL },                                  /* nothing close */
		{ "no-reviewmd", NULL, 0, NULL },   /* "no-review" has no review.md: not offered */
	};

	put("default/add-license/review.md");
	put("default/add-lic/review.md");         /* farther than add-license */
	put("default/.add-licence/review.md");    /* hidden: never offered */
	put("proj/fix-bugs/review.md");
	put("default/no-review/notes.md");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fg_buf b;
		const char *msg;

		fg_buf_init(&b, 8192);
		fg_resolve_explain_missing(skills, cases[i].skill, cases[i].ticket, &b);
		msg = fg_buf_str(&b);
		char *head = fgt_fmt("no review.md for skill '%s' (tried ", cases[i].skill);
		cr_expect(!strncmp(msg, head, strlen(head)), "case %zu: %s", i, msg);
		if (cases[i].want_tried) {
			char *tried = cases[i].want_tried == 1
				? fgt_fmt("(tried '%s/default/%s/review.md'", skills, cases[i].skill)
				: fgt_fmt("(tried '%s/proj/%s/review.md', '%s/default/%s/review.md'", skills,
					  cases[i].skill, skills, cases[i].skill);

			cr_expect(strstr(msg, tried), "case %zu: %s lacks %s", i, msg, tried);
			free(tried);
		}
		if (cases[i].want_hint)
			cr_expect(strstr(msg, cases[i].want_hint), "case %zu: %s", i, msg);
		else
			cr_expect(!strstr(msg, "did you mean"), "case %zu: %s", i, msg);
		cr_expect_eq(msg[strlen(msg) - 1], ')', "case %zu: %s", i, msg);
		free(head);
		fg_buf_release(&b);
	}
}
