/*
 * test_cycle_disk.c - review_cycle_N.json on disk: atomic replacement,
 * reading with fg_cycle_read_at() (the fixtures, unsafe files, the raw
 * bytes) and listing a directory's cycles in order.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgtest.h"
#include "forge/cycle.h"
#include "forge/fsutil.h"
#include "forge/util.h"

#include "cycle_sample.h"
#include "tmp_fixture.h"

TestSuite(cycle, .init = tmp_init, .fini = tmp_fini, .timeout = 60);

/* fg_cycle_list_at() on dir, opened for the call. */
static int list_dir(const char *dir, struct fg_cycle_entry **e, size_t *n)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r;

	if (dfd < 0)
		return -errno;
	r = fg_cycle_list_at(dfd, e, n);
	close(dfd);
	return r;
}

/* ---- atomicity ---- */

Test(cycle, write_replaces_old_file_and_leaves_only_canonical_names)
{
	struct fg_cycle c;
	struct fg_cycle_entry *e = NULL;
	size_t n = 0;
	DIR *d;
	struct dirent *de;

	cycle_fill(&c, 1, 3, FG_VERDICT_REJECTED);
	cr_assert_eq(fg_cycle_write(tmp_dir, &c), 0);
	c.j.verdict = FG_VERDICT_APPROVED;
	cr_assert_eq(fg_cycle_write(tmp_dir, &c), 0);
	d = opendir(tmp_dir);
	for (de = readdir(d); de; de = readdir(d)) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		cr_assert_str_eq(de->d_name, "review_cycle_1.json");
	}
	closedir(d);
	cr_assert_eq(list_dir(tmp_dir, &e, &n), 0);
	cr_assert_eq(n, 1);
	fg_cycle_entries_free(e, n);
	fg_cycle_release(&c);
}

Test(cycle, temp_name_of_every_cycle_misses_the_glob)
{
	for (int i = 1; i <= 12; i++) {
		char *name = fg_cycle_file_name(i);
		char *tmp = fg_atomic_tmp_name(name);
		int n;

		cr_assert_neq(fnmatch("review_cycle_*.json", tmp, 0), 0, "%s", tmp);
		cr_assert_neq(fnmatch("review_cycle_*.json", tmp, FNM_PERIOD), 0, "%s", tmp);
		cr_assert_eq(fg_cycle_name_parse(tmp, &n), 0, "%s", tmp);
		free(tmp);
		free(name);
	}
}

Test(cycle, failed_write_keeps_old_file_and_leaves_no_temp)
{
	char *missing = tmp_path("gone");
	char *blocker = tmp_path("review_cycle_4.json/x");
	struct fg_cycle c;

	cycle_fill(&c, 4, 4, FG_VERDICT_REJECTED);
	cr_assert_eq(fg_cycle_write(missing, &c), -ENOENT);
	/* The name is taken by a non-empty directory: rename fails, even as root. */
	fgt_write(blocker, "old");
	cr_assert_lt(fg_cycle_write(tmp_dir, &c), 0);
	expect_content(blocker, "old");
	cr_assert_eq(fgt_count_entries(tmp_dir), 1, "a temp file was left behind");
	fg_cycle_release(&c);
}

/* ---- fixtures and reading from disk ---- */

static void read_fixture(const char *name, struct fg_cycle *c)
{
	int dfd = open(FG_FIXTURES_DIR "/cycle", O_RDONLY | O_DIRECTORY);
	char err[256] = "";

	cr_assert_geq(dfd, 0);
	fg_cycle_init(c);
	cr_assert_eq(fg_cycle_read_at(dfd, name, c, NULL, err, sizeof(err)), 0, "%s: %s", name, err);
	close(dfd);
}

Test(cycle, fixture_minimal)
{
	struct fg_cycle c;

	read_fixture("minimal.json", &c);
	cr_assert_eq(c.cycle, 1);
	cr_assert_eq(c.max_cycles, 3);
	cr_assert_eq(c.j.verdict, FG_VERDICT_REJECTED);
	cr_assert_str_eq(c.j.feedback, "Missing tests for the parser.");
	cr_assert_str_eq(c.skill, "implement-task");
	cr_assert_eq(c.elapsed_seconds, 45.2);
	cr_assert_str_eq(c.timestamp, "2026-01-15T10:30:00Z");
	cr_assert_null(c.run_id);
	cr_assert_not(c.j.has_format);
	cr_assert_not(c.j.has_findings);
	fg_cycle_release(&c);
}

Test(cycle, fixture_full)
{
	struct fg_cycle c;

	read_fixture("full.json", &c);
	cr_assert_eq(c.cycle, 2);
	cr_assert_str_eq(c.run_id, "run-20260115-103000-ab12");
	cr_assert(c.j.has_format);
	cr_assert_eq(c.j.format, FG_FORMAT_JSON_SHADOW);
	cr_assert(c.j.has_findings);
	cr_assert_eq(c.j.nfindings, 1);
	cr_assert_str_eq(c.j.findings[0].file_path, "src/parser.c");
	cr_assert_eq(c.j.findings[0].line, 42);
	cr_assert_str_eq(c.reviewer_log, "review_cycle_2.reviewer.log");
	fg_cycle_release(&c);
}

Test(cycle, fixture_foreign_writer_is_tolerated)
{
	struct fg_cycle c;

	read_fixture("foreign.json", &c);
	cr_assert_eq(c.cycle, 3);
	cr_assert_eq(c.j.verdict, FG_VERDICT_APPROVED);
	cr_assert_str_eq(c.j.feedback, "");
	cr_assert_null(c.run_id);
	cr_assert_not(c.synthetic);
	cr_assert_not(c.stalled);
	cr_assert_not(c.j.has_format);
	cr_assert_not(c.j.has_findings);
	cr_assert_null(c.reviewer_log);
	fg_cycle_release(&c);
}

struct refuse_case { const char *name; int want; const char *err; };

Test(cycle, read_at_refuses_unsafe_files)
{
	static const struct refuse_case cases[] = {
		{ "review_cycle_1.json", -ELOOP, "'review_cycle_1.json' is a symbolic link" },
		{ "review_cycle_2.json", -EINVAL, "'review_cycle_2.json' is not a regular file" },
		{ "review_cycle_3.json", -EINVAL, "'review_cycle_3.json' is not a regular file" },
		{ "review_cycle_4.json", -EFBIG, "'review_cycle_4.json' is larger than 8388608 bytes" },
		{ "review_cycle_5.json", -ENOENT, "cannot read 'review_cycle_5.json': No such file or directory" },
	};
	char *p1 = tmp_path("review_cycle_1.json");
	char *p2 = tmp_path("review_cycle_2.json");
	char *p3 = tmp_path("review_cycle_3.json");
	char *p4 = tmp_path("review_cycle_4.json");
	char *big = calloc(1, FG_CYCLE_MAX_BYTES + 1);
	int dfd;

	cr_assert_eq(symlink(FG_FIXTURES_DIR "/cycle/minimal.json", p1), 0);
	cr_assert_eq(mkfifo(p2, 0600), 0);
	cr_assert_eq(mkdir(p3, 0700), 0);
	memset(big, ' ', FG_CYCLE_MAX_BYTES + 1);
	fgt_write_bytes(p4, big, FG_CYCLE_MAX_BYTES + 1);
	dfd = open(tmp_dir, O_RDONLY | O_DIRECTORY);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fg_cycle c;
		struct fg_buf raw;
		char err[256] = "";

		fg_cycle_init(&c);
		fg_buf_init(&raw, FG_CYCLE_MAX_BYTES);
		cr_expect_eq(fg_cycle_read_at(dfd, cases[i].name, &c, &raw, err, sizeof(err)), cases[i].want,
			     "%s", cases[i].name);
		cr_expect_str_eq(err, cases[i].err);
		cr_expect_eq(raw.len, 0);
		cr_expect_null(c.j.feedback);
		fg_buf_release(&raw);
		fg_cycle_release(&c);
	}
	close(dfd);
	free(big);
}

Test(cycle, read_at_hands_back_raw_bytes_even_when_invalid)
{
	char *p = tmp_path("review_cycle_1.json");
	const char *bad = "{\"cycle\": 1, \"verdict\": \"maybe\"}";
	struct fg_cycle c;
	struct fg_buf raw;
	char err[256] = "";
	int dfd = open(tmp_dir, O_RDONLY | O_DIRECTORY);

	fgt_write(p, bad);
	fg_cycle_init(&c);
	fg_buf_init(&raw, FG_CYCLE_MAX_BYTES);
	fg_buf_adds(&raw, "stale");
	cr_assert_eq(fg_cycle_read_at(dfd, "review_cycle_1.json", &c, &raw, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "missing field 'max_cycles'");
	cr_assert_str_eq(fg_buf_str(&raw), bad);
	close(dfd);
	fg_buf_release(&raw);
	fg_cycle_release(&c);
}

/* ---- listing ---- */

Test(cycle, list_sorts_numerically_and_skips_non_canonical_names)
{
	static const char *const files[] = {
		"review_cycle_10.json", "review_cycle_2.json", "review_cycle_11.json",
		"review_cycle_1.json", "review_cycle_9.json",
		/* decoys */
		"review_cycle_0.json", "review_cycle_01.json", "review_cycle_.json",
		"review_cycle_1.json.tmp", ".review_cycle_1.json.tmp.123", "review_cycle_100001.json",
		"review_summary.json", "review_cycle_1.reviewer.log", "REVIEW_CYCLE_3.json",
		"review_cycle_3.json~",
	};
	static const int want[] = { 1, 2, 5, 9, 10, 11 };
	char *sub = tmp_path("review_cycle_5.json");
	struct fg_cycle_entry *e = NULL;
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char *p = tmp_path("%s", files[i]);

		fgt_write(p, "{}");
	}
	/* Listing is by name only: a directory with a cycle name is listed and
	 * the reader refuses it later. */
	cr_assert_eq(mkdir(sub, 0700), 0);
	cr_assert_eq(list_dir(tmp_dir, &e, &n), 0);
	cr_assert_eq(n, ARRAY_SIZE(want));
	for (size_t i = 0; i < n; i++) {
		char *name = fg_cycle_file_name(want[i]);

		cr_expect_eq(e[i].n, want[i], "position %zu", i);
		cr_expect_str_eq(e[i].name, name);
		free(name);
	}
	fg_cycle_entries_free(e, n);
}

Test(cycle, list_empty_directory_and_bad_descriptors)
{
	char *file = tmp_path("review_cycle_1.json");
	struct fg_cycle_entry *e = (void *)1;
	size_t n = 99;
	int fd;

	cr_assert_eq(list_dir(tmp_dir, &e, &n), 0);
	cr_assert_eq(n, 0);
	fg_cycle_entries_free(e, n);
	e = NULL;
	n = 7;
	cr_assert_eq(fg_cycle_list_at(-1, &e, &n), -EBADF);
	fgt_write(file, "{}");
	fd = open(file, O_RDONLY);
	cr_assert_eq(fg_cycle_list_at(fd, &e, &n), -ENOTDIR);
	close(fd);
	cr_assert_null(e, "untouched on failure");
	cr_assert_eq(n, 7);
	fg_cycle_entries_free(NULL, 0);
}

Test(cycle, list_at_starts_from_the_beginning_and_keeps_the_descriptor)
{
	struct fg_cycle_entry *e = NULL;
	size_t n = 0;
	int dfd;

	for (int i = 1; i <= 40; i++) {
		char *p = tmp_path("review_cycle_%d.json", i);

		fgt_write(p, "{}");
	}
	dfd = open(tmp_dir, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(fg_cycle_list_at(dfd, &e, &n), 0);
	cr_assert_eq(n, 40);
	fg_cycle_entries_free(e, n);
	/* Twice through the same descriptor: the second listing is complete too,
	 * and dfd is still open and usable afterwards. */
	cr_assert_eq(fg_cycle_list_at(dfd, &e, &n), 0);
	cr_assert_eq(n, 40);
	cr_assert_eq(e[39].n, 40);
	fg_cycle_entries_free(e, n);
	cr_assert_geq(fcntl(dfd, F_GETFD), 0, "the descriptor is still open");
	close(dfd);
}
