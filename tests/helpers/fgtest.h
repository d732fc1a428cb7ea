/*
 * fgtest.h - helpers shared by the Criterion tests.
 *
 * Temporary directories, whole-file reads and writes, and running a real
 * program with captured output, exit status and a hard timeout (a test never
 * hangs: the child's process group is killed and the test fails).
 */
#ifndef FGTEST_H
#define FGTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* New directory under $TMPDIR (or /tmp), "fgtest.XXXXXX". Owned path. */
char *fgt_tmpdir(void);
/* rm -rf path (never follows symlinks). 0 or -errno. */
int fgt_rm_rf(const char *path);
/* Writes content to path, creating parent directories. Fails the test on error. */
void fgt_write(const char *path, const char *content);
void fgt_write_bytes(const char *path, const void *data, size_t len);
/* Whole file, NUL-terminated, owned; NULL if it cannot be read. */
char *fgt_read(const char *path, size_t *len);
/* Whole file (owned), or an owned "" when it cannot be read: for messages. */
char *fgt_read_or_empty(const char *path);
/* Sleeps ms milliseconds (EINTR retried). */
void fgt_sleep_ms(long ms);
/* Owned printf-style string. */
char *fgt_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 1 if path exists (lstat). */
int fgt_exists(const char *path);
/* Number of entries in dir other than . and .. (fails the test if dir cannot be opened). */
int fgt_count_entries(const char *dir);
/* Expects (cr_expect) every file of dir but README.md and dot files to be
 * one for which has(name, ctx) is true, naming each that is not; asserts
 * there is at least one. For sample folders whose every file needs a case. */
void fgt_expect_every_file(const char *dir, bool (*has)(const char *name, void *ctx), void *ctx);
/* Appends the NULL-terminated more (NULL: nothing) to v, which holds *n
 * strings and has room for cap, and NULL-terminates v; fails the test when
 * they do not fit. For argv and environment arrays. */
void fgt_strs_add(const char **v, size_t *n, size_t cap, const char *const *more);
/* Makes path executable (chmod 0755). */
void fgt_chmod_x(const char *path);

struct fgt_proc {
	pid_t pid;
	int exited;      /* 1 if it exited normally */
	int exit_code;   /* valid when exited */
	int signal;      /* terminating signal, 0 if exited */
	int timed_out;   /* 1 if fgt_run had to kill it */
	char *out;       /* captured stdout, NUL-terminated, owned */
	size_t out_len;
	char *err;       /* captured stderr, NUL-terminated, owned */
	size_t err_len;
};

/*
 * Runs argv[0] (a path) with argv, in cwd (NULL: inherit), with the current
 * environment changed by env ("NAME=value" sets, "NAME" alone unsets; NULL-
 * terminated, may be NULL), stdin from stdin_data (NULL: /dev/null), in its
 * own process group. Captures up to 256 MiB of each stream. Kills the group
 * with SIGKILL after timeout_s seconds. Returns 0, or -errno if it could not
 * start. Output capture is drained concurrently, so large output never blocks.
 */
int fgt_run(struct fgt_proc *p, const char *const argv[], const char *const env[],
	    const char *cwd, const char *stdin_data, double timeout_s);
void fgt_proc_release(struct fgt_proc *p);

/* Fails the test (naming the caller's file and line, with p's stderr)
 * unless p exited normally with code. */
#define fgt_assert_exit(p, code) fgt_assert_exit_at((p), (code), __FILE__, __LINE__)
void fgt_assert_exit_at(const struct fgt_proc *p, int code, const char *file, int line);

/*
 * Runs fn(arg) in a forked child that, when we are root, first drops to
 * uid/gid 65534 (nobody), so permission checks that root bypasses really
 * happen. Returns the child's exit status (fn's return value & 0xff), or
 * -1 if it could not fork, drop privileges or exit normally. fn must not
 * use cr_assert (it runs in a separate process): return a code instead.
 */
int fgt_as_nobody(int (*fn)(void *arg), void *arg);

/* Fails the test (naming the caller's file and line, and text) unless text
 * holds every one of the NULL-terminated needles; text may be NULL. */
#define fgt_assert_has(text, ...) \
	fgt_assert_has_at((text), (const char *const[]){ __VA_ARGS__, NULL }, __FILE__, __LINE__)
void fgt_assert_has_at(const char *text, const char *const *needles, const char *file, int line);

/* The same, unless text holds none of the needles. */
#define fgt_assert_lacks(text, ...) \
	fgt_assert_lacks_at((text), (const char *const[]){ __VA_ARGS__, NULL }, __FILE__, __LINE__)
void fgt_assert_lacks_at(const char *text, const char *const *needles, const char *file, int line);

/* 1 while pid runs: it exists and is not a zombie (one waiting for its
 * parent counts as gone). */
int fgt_alive(pid_t pid);

/* Number of zombie or live processes whose parent is ppid (reads /proc);
 * -1 when /proc cannot be read. */
int fgt_count_children(pid_t ppid);
/* Number of live or zombie processes whose process group is pgid (fails
 * the test when /proc cannot be read). */
int fgt_count_group(pid_t pgid);

/* Moves this test process (and what it starts) into a private mount
 * namespace, so mounts vanish with it even when an assertion ends the test;
 * skips the test with the reason when it cannot (not root, no namespaces). */
void fgt_private_mounts(void);

/* The names in dir, one a line as `ls -A1` prints them (owned). */
char *fgt_listing(const char *dir);

#endif
