/*
 * test_fsutil.c - bounded symlink-safe reads, temp names, mkdir -p, path
 * joining and splitting, fg_open_dir() and fg_write_all(). Atomic writes
 * and fg_open_beneath(): test_fsutil_write.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fgcheck.h"
#include "fgtest.h"
#include "forge/buf.h"
#include "forge/fsutil.h"
#include "tmp_fixture.h"

TestSuite(fsutil, .init = tmp_init, .fini = tmp_fini, .timeout = 30);

/* Reads path expecting error want; checks that a pre-filled buffer and an
 * empty one are both left exactly as they were. */
static void expect_read_refused(const char *path, size_t max, int want)
{
	struct fg_buf b, empty;

	fg_buf_init(&b, 1024);
	fg_buf_init(&empty, 1024);
	fg_buf_adds(&b, "keep");
	cr_assert_eq(fg_read_file_at(AT_FDCWD, path, max, 0, &b, NULL), want, "%s", path);
	cr_assert_str_eq(fg_buf_str(&b), "keep");
	cr_assert_eq(b.len, 4);
	/* Left as it was includes its error: the refused read is not b's. */
	fgc_buf_check(&b);
	cr_assert_eq(fg_buf_error(&b), 0);
	cr_assert_eq(fg_read_file_at(AT_FDCWD, path, max, 0, &empty, NULL), want);
	cr_assert_null(empty.data);
	cr_assert_eq(empty.len, 0);
	fgc_buf_check(&empty);
	cr_assert_eq(fg_buf_error(&empty), 0);
	fg_buf_release(&b);
	fg_buf_release(&empty);
}

Test(fsutil, read_appends_regular_file_and_fills_stat)
{
	char *p = tmp_path("f");
	struct fg_buf b;
	struct stat st;
	int dfd = open(tmp_dir, O_RDONLY | O_DIRECTORY);

	fgt_write(p, "hello\n");
	fg_buf_init(&b, 100);
	fg_buf_adds(&b, ">");
	cr_assert_eq(fg_read_file_at(dfd, "f", 100, 0, &b, &st), 0);
	cr_assert_str_eq(fg_buf_str(&b), ">hello\n");
	cr_assert_eq(st.st_size, 6);
	cr_assert(S_ISREG(st.st_mode));
	/* Exactly max bytes is allowed. */
	fg_buf_reset(&b);
	cr_assert_eq(fg_read_file_at(dfd, "f", 6, 0, &b, NULL), 0);
	cr_assert_str_eq(fg_buf_str(&b), "hello\n");
	close(dfd);
	fg_buf_release(&b);
}

Test(fsutil, read_keeps_nul_bytes)
{
	char *p = tmp_path("bin");
	struct fg_buf b;

	fgt_write_bytes(p, "a\0b", 3);
	fg_buf_init(&b, 100);
	cr_assert_eq(fg_read_file_at(AT_FDCWD, p, 100, 0, &b, NULL), 0);
	cr_assert_eq(b.len, 3);
	cr_assert_eq(memcmp(b.data, "a\0b", 3), 0);
	fg_buf_release(&b);
}

Test(fsutil, read_refuses_symlink)
{
	char *target = tmp_path("target");
	char *link = tmp_path("link");

	fgt_write(target, "secret");
	cr_assert_eq(symlink(target, link), 0);
	expect_read_refused(link, 100, -ELOOP);
}

Test(fsutil, read_refuses_fifo_without_blocking)
{
	char *fifo = tmp_path("fifo");

	/* No writer ever opens it: a blocking open would hang until the
	 * suite's timeout fails the test. */
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	expect_read_refused(fifo, 100, -EINVAL);
}

Test(fsutil, read_refuses_directory_and_device)
{

	expect_read_refused(tmp_dir, 100, -EISDIR);
	expect_read_refused("/dev/null", 100, -EINVAL);
}

Test(fsutil, read_refuses_file_over_max)
{
	char *p = tmp_path("big");

	fgt_write(p, "0123456789");
	expect_read_refused(p, 9, -EFBIG);
}

Test(fsutil, read_refuses_file_over_buffer_max)
{
	char *p = tmp_path("big");
	struct fg_buf b;

	fgt_write(p, "0123456789");
	fg_buf_init(&b, 12);
	fg_buf_adds(&b, "abcd");
	/* The caller's max allows it, the buffer's own max does not. */
	cr_assert_eq(fg_read_file_at(AT_FDCWD, p, 100, 0, &b, NULL), -EFBIG);
	cr_assert_str_eq(fg_buf_str(&b), "abcd");
	fgc_buf_check(&b);
	cr_assert_eq(fg_buf_error(&b), 0);
	cr_assert_eq(fg_buf_adds(&b, "ef"), 0);
	fg_buf_release(&b);
}

Test(fsutil, read_missing_file_is_enoent)
{
	char *p = tmp_path("none");

	expect_read_refused(p, 100, -ENOENT);
}

struct tmp_case {
	const char *name;
	int want;
};

Test(fsutil, is_atomic_tmp_name_table)
{
	static const struct tmp_case cases[] = {
		{ ".review_cycle_1.json.tmp.123", 1 },
		{ ".x.tmp.1", 1 },
		{ ".review_summary.json.tmp.4194304", 1 },
		{ "..tmp.1", 0 },            /* nothing between the dot and .tmp. */
		{ ".tmp.1", 0 },
		{ ".x.tmp.", 0 },            /* no pid */
		{ ".x.tmp.12a", 0 },
		{ ".x.tmp", 0 },
		{ "x.tmp.1", 0 },            /* no leading dot */
		{ "review_cycle_1.json.tmp", 0 },
		{ "review_cycle_1.json", 0 },
		{ ".x.tmpx1", 0 },
		{ ".x_tmp.1", 0 },
		{ "", 0 },
		{ ".", 0 },
		{ "..", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(fg_is_atomic_tmp_name(cases[i].name), cases[i].want, "'%s'", cases[i].name);
}

Test(fsutil, tmp_name_never_matches_cycle_glob)
{
	static const char *const names[] = { "review_cycle_1.json", "review_cycle_10.json",
					     "review_summary.json", "x" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *t = fg_atomic_tmp_name(names[i]);
		char *again = fg_atomic_tmp_name(names[i]);
		char *head = fgt_fmt(".%s.tmp.", names[i]);
		char *pidname = fgt_fmt(".%s.tmp.%ld", names[i], (long)getpid());

		/* "." NAME ".tmp." and a random number, never the pid
		 * an agent can read from $PPID, never twice the same. */
		cr_assert_eq(strncmp(t, head, strlen(head)), 0, "%s", t);
		cr_assert_gt(strlen(t), strlen(head), "%s", t);
		cr_assert_eq(strspn(t + strlen(head), "0123456789"), strlen(t + strlen(head)), "%s", t);
		cr_assert_str_neq(t, pidname);
		cr_assert_str_neq(t, again);
		cr_assert(fg_is_atomic_tmp_name(t), "%s", t);
		/* The glob as a shell or a watcher matches it, leading dot or not. */
		cr_assert_neq(fnmatch("review_cycle_*.json", t, 0), 0, "%s", t);
		cr_assert_neq(fnmatch("*review_cycle_*.json", t, 0), 0, "%s", t);
		free(t);
		free(again);
		free(head);
		free(pidname);
	}
}

Test(fsutil, mkdir_p_creates_nested_and_refuses_files)
{
	/* In order (the second call finds the directories there); paths in
	 * tmp_dir but "" and "/"; 'file' is a regular file. */
	static const struct { const char *path; int want; } cases[] = {
		{ "a/b/c/", 0 }, { "a/b/c/", 0 }, { "file", -ENOTDIR }, { "file/sub", -ENOTDIR },
		{ "", -ENOENT }, { "/", 0 },
	};
	struct stat st;

	fgt_write(tmp_path("file"), "x");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *rel = cases[i].path;
		const char *path = rel[0] && rel[0] != '/' ? tmp_path("%s", rel) : rel;

		cr_assert_eq(fg_mkdir_p(path, 0755), cases[i].want, "case %zu '%s'", i, rel);
		if (!cases[i].want)
			cr_assert(stat(path, &st) == 0 && S_ISDIR(st.st_mode), "'%s' is no directory", rel);
	}
}

struct join_case {
	const char *a, *b, *want;
};

Test(fsutil, path_join_table)
{
	static const struct join_case cases[] = {
		{ "a", "b", "a/b" },
		{ "a/", "b", "a/b" },
		{ "a//", "/b", "a/b" },
		{ "/", "b", "/b" },
		{ "/", "/b", "/b" },
		{ "", "b", "b" },
		{ "/w/.forge", "step/x", "/w/.forge/step/x" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = fg_path_join(cases[i].a, cases[i].b);

		cr_expect_str_eq(got, cases[i].want, "join('%s', '%s')", cases[i].a, cases[i].b);
		free(got);
	}
}

Test(fsutil, read_follows_a_symlink_only_when_asked)
{
	char *target = tmp_path("target");
	char *link = tmp_path("link");
	char *dlink = tmp_path("dlink");
	struct fg_buf b;

	fgt_write(target, "named by the user");
	cr_assert_eq(symlink(target, link), 0);
	cr_assert_eq(symlink(tmp_dir, dlink), 0);
	fg_buf_init(&b, 100);
	cr_assert_eq(fg_read_file_at(AT_FDCWD, link, 100, 0, &b, NULL), -ELOOP);
	cr_assert_eq(fg_read_file_at(AT_FDCWD, link, 100, FG_READ_FOLLOW, &b, NULL), 0);
	cr_assert_str_eq(fg_buf_str(&b), "named by the user");
	/* Following never turns a directory or a FIFO into something readable. */
	cr_assert_eq(fg_read_file_at(AT_FDCWD, dlink, 100, FG_READ_FOLLOW, &b, NULL), -EISDIR);
	cr_assert_eq(fg_read_file_at(AT_FDCWD, link, 5, FG_READ_FOLLOW, &b, NULL), -EFBIG);
	cr_assert_str_eq(fg_buf_str(&b), "named by the user", "left as it was");
	fg_buf_release(&b);
}

struct split_case {
	const char *path, *dir, *base;
	int r;
};

Test(fsutil, path_split_table)
{
	static const struct split_case cases[] = {
		{ "a/b/c", "a/b", "c", 0 }, { "c", ".", "c", 0 }, { "/c", "/", "c", 0 },
		{ "/a/b", "/a", "b", 0 }, { "a/", NULL, NULL, -EISDIR }, { "", NULL, NULL, -EISDIR },
		{ "/", NULL, NULL, -EISDIR },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = (char *)1, *b = (char *)1;

		cr_assert_eq(fg_path_split(cases[i].path, &d, &b), cases[i].r, "'%s'", cases[i].path);
		if (cases[i].r) {
			cr_assert_null(d);
			cr_assert_null(b);
			continue;
		}
		cr_assert_str_eq(d, cases[i].dir, "'%s'", cases[i].path);
		cr_assert_str_eq(b, cases[i].base, "'%s'", cases[i].path);
		free(d);
		free(b);
	}
}

Test(fsutil, open_dir_opens_directories_only)
{
	char *f = fgt_fmt("%s/file", tmp_dir), *l = fgt_fmt("%s/link", tmp_dir);
	int fd;

	fgt_write(f, "x");
	cr_assert_eq(symlink(".", l), 0);
	fd = fg_open_dir(AT_FDCWD, tmp_dir, 0);
	cr_assert_geq(fd, 0);
	cr_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	cr_assert_eq(fg_open_dir(fd, "file", 0), -ENOTDIR);
	cr_assert_eq(fg_open_dir(fd, "missing", 0), -ENOENT);
	/* A symlink to a directory is followed unless told not to. */
	{
		int via = fg_open_dir(fd, "link", 0);

		cr_assert_geq(via, 0);
		close(via);
	}
	cr_assert(fg_open_dir(fd, "link", FG_DIR_NOFOLLOW) == -ELOOP ||
		  fg_open_dir(fd, "link", FG_DIR_NOFOLLOW) == -ENOTDIR);
	close(fd);
	free(f);
	free(l);
}

Test(fsutil, open_dir_of_empty_path_is_the_current_directory)
{
	struct stat a, b;
	int fd = fg_open_dir(AT_FDCWD, "", 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(fstat(fd, &a), 0);
	cr_assert_eq(stat(".", &b), 0);
	cr_assert_eq(a.st_ino, b.st_ino);
	close(fd);
}

Test(fsutil, write_all_writes_everything_or_says_why)
{
	int p[2];
	char big[200000], back[200000];
	size_t got = 0;
	pid_t pid;

	memset(big, 'q', sizeof(big));
	cr_assert_eq(pipe(p), 0);
	/* More than a pipe holds: short writes until the reader drains it. */
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(p[0]);
		_exit(fg_write_all(p[1], big, sizeof(big)) ? 1 : 0);
	}
	close(p[1]);
	while (got < sizeof(back)) {
		ssize_t n = read(p[0], back + got, sizeof(back) - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(p[0]);
	cr_assert_eq(got, sizeof(big));
	cr_assert_eq(memcmp(big, back, sizeof(big)), 0);
	{
		int st;

		cr_assert_eq(waitpid(pid, &st, 0), pid);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	/* A reader that is gone: -EPIPE (SIGPIPE ignored, as both programs do). */
	cr_assert_eq(pipe(p), 0);
	close(p[0]);
	cr_assert_eq(sigaction(SIGPIPE, &(struct sigaction){ .sa_handler = SIG_IGN }, NULL), 0);
	cr_assert_eq(fg_write_all(p[1], "x", 1), -EPIPE);
	close(p[1]);
	cr_assert_eq(fg_write_all(-1, "x", 1), -EBADF);
	cr_assert_eq(fg_write_all(-1, "", 0), 0);
}

Test(fsutil, dir_lists_every_entry_but_dot_and_dotdot_from_the_start)
{
	char *dir = fgt_tmpdir();
	char *a = fgt_fmt("%s/a", dir), *sub = fgt_fmt("%s/sub", dir), *link = fgt_fmt("%s/ln", dir);
	struct fg_dir it;
	const char *name;
	int seen = 0, fd;
	struct stat st;

	fgt_write(a, "x");
	cr_assert_eq(mkdir(sub, 0755), 0);
	cr_assert_eq(symlink(sub, link), 0);
	cr_assert_eq(fg_dir_open(&it, AT_FDCWD, dir, 0), 0);
	while ((name = fg_dir_next(&it)) != NULL) {
		cr_expect(strcmp(name, ".") && strcmp(name, ".."), "listed '%s'", name);
		cr_expect_eq(fstatat(fg_dir_fd(&it), name, &st, AT_SYMLINK_NOFOLLOW), 0, "%s", name);
		seen |= !strcmp(name, "a") ? 1 : !strcmp(name, "sub") ? 2 : !strcmp(name, "ln") ? 4 : 8;
	}
	cr_expect_eq(seen, 7);
	cr_expect_eq(it.err, 0);
	fg_dir_close(&it);
	fg_dir_close(&it);

	/* A descriptor already read to its end is listed from its start. */
	fd = fg_open_dir(AT_FDCWD, dir, 0);
	cr_assert_geq(fd, 0);
	for (int pass = 0; pass < 2; pass++) {
		seen = 0;
		cr_assert_eq(fg_dir_open_fd(&it, fd), 0);
		while (fg_dir_next(&it))
			seen++;
		fg_dir_close(&it);
		cr_expect_eq(seen, 3, "pass %d", pass);
	}
	cr_expect_eq(fcntl(fd, F_GETFD), FD_CLOEXEC, "still open: borrowed");
	close(fd);

	/* NOFOLLOW refuses the link; a failed open lists nothing. */
	cr_expect_lt(fg_dir_open(&it, AT_FDCWD, link, FG_DIR_NOFOLLOW), 0);
	cr_expect_null(fg_dir_next(&it));
	cr_expect_eq(fg_dir_fd(&it), -1);
	fg_dir_close(&it);
	cr_expect_eq(fg_dir_open(&it, AT_FDCWD, a, 0), -ENOTDIR);
	cr_expect_eq(it.err, -ENOTDIR);
	fg_dir_close(&it);
	fgt_rm_rf(dir);
	free(a);
	free(sub);
	free(link);
	free(dir);
}
