/*
 * test_fsutil_write.c - atomic writes (replacing, failing cleanly, never
 * through a planted temp file), clearing whatever stands at a name, and
 * fg_open_beneath()'s walk that follows no link.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgcheck.h"
#include "fgtest.h"
#include "forge/buf.h"
#include "forge/fsutil.h"
#include "tmp_fixture.h"

TestSuite(fsutil, .init = tmp_init, .fini = tmp_fini, .timeout = 30);

Test(fsutil, write_atomic_creates_and_replaces_without_leftovers)
{
	char *dir = fgt_tmpdir();
	char *p = fgt_fmt("%s/out.json", dir);
	struct stat st;
	mode_t old = umask(022);

	cr_assert_eq(fg_write_atomic(dir, "out.json", "first", 5), 0);
	expect_content(p, "first");
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0644);
	cr_assert_eq(fg_write_atomic(dir, "out.json", "second!", 7), 0);
	expect_content(p, "second!");
	cr_assert_eq(fgt_count_entries(dir), 1);
	/* Empty content is a valid write too. */
	cr_assert_eq(fg_write_atomic(dir, "empty", "", 0), 0);
	free(p);
	p = fgt_fmt("%s/empty", dir);
	expect_content(p, "");
	umask(old);
	fgt_rm_rf(dir);
	free(p);
	free(dir);
}

Test(fsutil, write_atomic_with_empty_dir_means_current_directory)
{
	char *cwd = getcwd(NULL, 0);
	char *got;

	cr_assert_eq(chdir(tmp_dir), 0);
	cr_assert_eq(fg_write_atomic("", "here.json", "x", 1), 0);
	got = fgt_read("here.json", NULL);
	cr_assert_str_eq(got, "x");
	free(got);
	cr_assert_eq(fgt_count_entries("."), 1);
	cr_assert_eq(chdir(cwd), 0);
	free(cwd);
}

Test(fsutil, write_atomic_into_missing_dir_fails_cleanly)
{
	char *missing = tmp_path("nope");

	cr_assert_eq(fg_write_atomic(missing, "f.json", "x", 1), -ENOENT);
	cr_assert_eq(fgt_count_entries(tmp_dir), 0);
}

Test(fsutil, write_atomic_failed_rename_keeps_old_and_removes_temp)
{
	char *inner = tmp_path("out.json/keep");
	int r;

	/* The target is a non-empty directory: rename() fails even as root. */
	fgt_write(inner, "old");
	r = fg_write_atomic(tmp_dir, "out.json", "new", 3);
	cr_assert_lt(r, 0);
	cr_assert(r == -EISDIR || r == -ENOTEMPTY || r == -EEXIST, "r=%d", r);
	expect_content(inner, "old");
	cr_assert_eq(fgt_count_entries(tmp_dir), 1, "a temp file was left behind");
}

static int write_new(void *dir)
{
	return -fg_write_atomic(dir, "out.json", "new", 3);
}

Test(fsutil, write_atomic_in_read_only_dir_fails_cleanly)
{
	char *p = tmp_path("out.json");

	fgt_write(p, "old");
	cr_assert_eq(chmod(tmp_dir, 0555), 0);
	/* As nobody when we are root, who would bypass the directory's mode. */
	cr_assert_eq(fgt_as_nobody(write_new, tmp_dir), EACCES);
	chmod(tmp_dir, 0755);
	expect_content(p, "old");
	cr_assert_eq(fgt_count_entries(tmp_dir), 1);
}

Test(fsutil, write_atomic_never_writes_through_a_planted_temp)
{
	char *victim = tmp_path("victim");
	char *tmpname = fg_atomic_tmp_name("out.json");
	/* What an agent would plant: the pid-named temp of earlier versions,
	 * and one more of the current shape. */
	char *tmp = tmp_path(".out.json.tmp.%ld", (long)getpid());
	char *tmp2 = tmp_path("%s", tmpname);
	char *out = tmp_path("out.json");

	fgt_write(victim, "precious");
	/* A hard link at a temp name: truncating it would destroy victim. */
	cr_assert_eq(link(victim, tmp), 0);
	cr_assert_eq(fg_write_atomic(tmp_dir, "out.json", "new", 3), 0);
	expect_content(victim, "precious");
	/* A symlink at a temp name is not followed. */
	cr_assert_eq(symlink(victim, tmp2), 0);
	cr_assert_eq(fg_write_atomic(tmp_dir, "out.json", "newer", 5), 0);
	expect_content(victim, "precious");
	expect_content(out, "newer");
	/* Another writer's entries are not ours: never opened nor removed. */
	cr_assert(fgt_exists(tmp));
	cr_assert(fgt_exists(tmp2));
	cr_assert_eq(fgt_count_entries(tmp_dir), 4);
	free(tmpname);
}

/* A directory at the temp name an agent could predict (".NAME.tmp.<pid>")
 * does not make the write fail (EISDIR): temp names are random. */
Test(fsutil, a_directory_at_the_old_temp_name_does_not_block_the_write)
{
	char *planted = tmp_path(".review_summary.json.tmp.%ld/x", (long)getpid());
	char *out = tmp_path("review_summary.json");

	fgt_write(planted, "");
	cr_assert_eq(fg_write_atomic(tmp_dir, "review_summary.json", "{}", 2), 0);
	expect_content(out, "{}");
	cr_assert(fgt_exists(planted));
}

/* A directory under the final name blocks a plain write (-EISDIR, nothing
 * changed); FG_WRITE_CLEAR removes it, never following a link inside. */
Test(fsutil, write_clear_removes_a_directory_under_the_name_without_following_links)
{
	char *outside = tmp_path("outside");
	char *keep = tmp_path("outside/keep");
	char *ws = tmp_path("ws");
	char *deep = tmp_path("ws/out.json/a/b/file");
	char *link1 = tmp_path("ws/out.json/a/to-outside");
	char *out = tmp_path("ws/out.json");
	int dfd;

	fgt_write(keep, "precious");
	fgt_write(deep, "x");
	cr_assert_eq(symlink(outside, link1), 0);
	dfd = open(ws, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(dfd, 0);
	cr_assert_eq(fg_write_atomic_at(dfd, "out.json", "new", 3), -EISDIR);
	cr_assert(fgt_exists(deep));
	cr_assert_eq(fgt_count_entries(ws), 1, "a temp file was left behind");
	cr_assert_eq(fg_write_atomic_flags_at(dfd, "out.json", "new", 3, FG_WRITE_CLEAR), 0);
	close(dfd);
	expect_content(out, "new");
	expect_content(keep, "precious");
	cr_assert_eq(fgt_count_entries(ws), 1);
}

Test(fsutil, clear_at_takes_away_any_kind_of_entry)
{
	char *fifo = tmp_path("fifo");
	char *file = tmp_path("file");
	char *aside = NULL;
	int dfd = open(tmp_dir, O_RDONLY | O_DIRECTORY);

	cr_assert_geq(dfd, 0);
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	fgt_write(file, "x");
	cr_assert_eq(fg_clear_at(dfd, "fifo", &aside), 0);
	cr_assert_null(aside);
	cr_assert_eq(fg_clear_at(dfd, "file", &aside), 0);
	cr_assert_eq(fg_clear_at(dfd, "nothing-here", &aside), 0);
	cr_assert_eq(fgt_count_entries(tmp_dir), 0);
	close(dfd);
}

Test(fsutil, open_beneath_walks_without_following_links)
{
	char *dir = fgt_tmpdir();
	char *outside = fgt_tmpdir();
	char *sub = fgt_fmt("%s/a/b", dir);
	char *link = fgt_fmt("%s/a/l", dir);
	char *file = fgt_fmt("%s/a/f", dir);
	char err[256] = "";
	int base = open(dir, O_RDONLY | O_DIRECTORY), fd;

	cr_assert_eq(fg_mkdir_p(sub, 0755), 0);
	fgt_write(file, "x");
	cr_assert_eq(symlink(outside, link), 0);
	fd = fg_open_beneath(base, "a/b", 0, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	close(fd);
	fd = fg_open_beneath(base, "a//b/", 0, err, sizeof(err));
	cr_assert_geq(fd, 0, "repeated and trailing '/' are fine: %s", err);
	close(fd);
	cr_assert_eq(fg_open_beneath(base, "a/l", 0, err, sizeof(err)), -ENOTDIR);
	cr_assert_str_eq(err, "'l' is a symbolic link");
	cr_assert_eq(fg_open_beneath(base, "a/l/x", FG_BENEATH_CREATE, err, sizeof(err)), -ENOTDIR);
	cr_assert_eq(fgt_count_entries(outside), 0, "nothing created behind the link");
	cr_assert_eq(fg_open_beneath(base, "a/f", 0, err, sizeof(err)), -ENOTDIR);
	cr_assert_str_eq(err, "'f' is not a directory");
	cr_assert_eq(fg_open_beneath(base, "a/../a", 0, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "'..' is not a plain name");
	cr_assert_eq(fg_open_beneath(base, "", 0, err, sizeof(err)), -EINVAL);
	cr_assert_eq(fg_open_beneath(base, "a/missing", 0, NULL, 0), -ENOENT);
	close(base);
	fgt_rm_rf(dir);
	fgt_rm_rf(outside);
	free(sub);
	free(link);
	free(file);
	free(dir);
	free(outside);
}

Test(fsutil, open_beneath_creates_missing_components)
{
	char *deep = tmp_path(".forge/step");
	char err[256] = "";
	int base = open(tmp_dir, O_RDONLY | O_DIRECTORY), fd;
	struct stat st;

	fd = fg_open_beneath(base, ".forge/step", FG_BENEATH_CREATE, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	close(fd);
	cr_assert_eq(stat(deep, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	/* Existing components are simply opened. */
	fd = fg_open_beneath(base, ".forge/step", FG_BENEATH_CREATE, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	close(fd);
	close(base);
}

Test(fsutil, write_atomic_at_and_path)
{
	char *p = tmp_path("out.json");
	char *slash = tmp_path("%s", "");
	int dfd = open(tmp_dir, O_RDONLY | O_DIRECTORY);

	cr_assert_eq(fg_write_atomic_at(dfd, "out.json", "at", 2), 0);
	expect_content(p, "at");
	cr_assert_eq(fg_write_atomic_path(p, "path", 4), 0);
	expect_content(p, "path");
	cr_assert_eq(fg_write_atomic_path(slash, "x", 1), -EISDIR);
	cr_assert_eq(fg_write_atomic_path("", "x", 1), -EISDIR);
	cr_assert_eq(fgt_count_entries(tmp_dir), 1);
	close(dfd);
}
