/*
 * test_stepdir.c - clearing an earlier run's files from a step directory:
 * files and links unlinked, planted directories and FIFOs removed without
 * following links (or set aside when too deep), each reported; other
 * names kept.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgtest.h"
#include "forge/fsutil.h"
#include "forge/stepdir.h"
#include "forge/util.h"

TestSuite(stepdir, .timeout = 30);

struct seen {
	char text[1024];
	int n;
};

static void record(const struct fg_stale_special *e, void *data)
{
	struct seen *s = data;
	size_t len = strlen(s->text);

	snprintf(s->text + len, sizeof(s->text) - len, "%s %s %s %s %d\n", e->name, e->type, e->action,
		 e->to ? e->to : "-", e->error);
	s->n++;
}

Test(stepdir, kinds_of_names)
{
	/* By kind: 0 not a run's (kept), 1 a cycle file, 2 another file a run writes. */
	static const char *const kinds[3][8] = {
		{ "review_cycle_03.json", "notes.txt", "review_cycle_03.diff", "review_cycle_3.check..log",
		  "review_cycle_100001.diff", "review_cycle_3.diff.txt" },
		{ "review_cycle_3.json" },
		{ "review_summary.json", "review_cycle_3.reviewer.log", "review_cycle_3.security.reviewer.log",
		  ".review_cycle_3.json.tmp.42", "review_cycle_3.check.tests.log", "review_cycle_3.diff" },
	};

	for (int kind = 0; kind < 3; kind++)
		for (size_t i = 0; i < ARRAY_SIZE(kinds[kind]) && kinds[kind][i]; i++)
			cr_expect_eq(fg_step_stale_kind(kinds[kind][i]), kind, "%s", kinds[kind][i]);
}

Test(stepdir, clears_files_links_and_planted_entries_without_following)
{
	char *dir = fgt_tmpdir(), *outside = fgt_tmpdir();
	char *victim = fgt_fmt("%s/precious", outside);
	char *p;
	struct seen s = { "", 0 };
	long removed = 0;
	int dfd;

	fgt_write(victim, "keep");
	p = fgt_fmt("%s/review_cycle_1.json/a/b/file", dir);
	fgt_write(p, "x");
	free(p);
	p = fgt_fmt("%s/review_cycle_1.json/a/link", dir);
	cr_assert_eq(symlink(outside, p), 0);
	free(p);
	p = fgt_fmt("%s/review_cycle_2.json", dir);
	cr_assert_eq(mkfifo(p, 0644), 0);
	free(p);
	p = fgt_fmt("%s/review_cycle_3.json", dir);
	cr_assert_eq(symlink(victim, p), 0);
	free(p);
	p = fgt_fmt("%s/review_cycle_4.json", dir);
	fgt_write(p, "{}");
	free(p);
	p = fgt_fmt("%s/notes.txt", dir);
	fgt_write(p, "mine");
	free(p);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(fg_step_clear_stale(dfd, &removed, record, &s), 0, "%s", s.text);
	close(dfd);
	cr_assert_eq(removed, 4);
	cr_assert_eq(s.n, 2, "%s", s.text);
	cr_assert_not_null(strstr(s.text, "review_cycle_1.json directory removed - 0\n"), "%s", s.text);
	cr_assert_not_null(strstr(s.text, "review_cycle_2.json fifo removed - 0\n"), "%s", s.text);
	cr_assert_eq(fgt_count_entries(dir), 1, "only notes.txt is left");
	p = fgt_read(victim, NULL);
	cr_assert_str_eq(p, "keep", "a link was followed");
	free(p);
	fgt_rm_rf(dir);
	fgt_rm_rf(outside);
	free(victim);
	free(dir);
	free(outside);
}

Test(stepdir, a_tree_too_deep_to_remove_is_set_aside)
{
	char *dir = fgt_tmpdir();
	char *p = fgt_fmt("%s/review_summary.json", dir);
	struct seen s = { "", 0 };
	long removed = 0;
	int dfd;

	/* 20 levels: past the removal's depth bound. */
	for (int i = 0; i < 20; i++) {
		char *q = fgt_fmt("%s/d", p);

		free(p);
		p = q;
	}
	cr_assert_eq(fg_mkdir_p(p, 0755), 0);
	free(p);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(fg_step_clear_stale(dfd, &removed, record, &s), 0, "%s", s.text);
	close(dfd);
	cr_assert_eq(s.n, 1);
	cr_assert_not_null(strstr(s.text, "review_summary.json directory set_aside .stale.review_summary.json."),
			   "%s", s.text);
	p = fgt_fmt("%s/review_summary.json", dir);
	cr_assert_not(fgt_exists(p), "the name a run writes is free");
	free(p);
	cr_assert_eq(fgt_count_entries(dir), 1);
	fgt_rm_rf(dir);
	free(dir);
}
