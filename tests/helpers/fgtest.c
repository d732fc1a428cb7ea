/*
 * fgtest.c - helpers shared by the Criterion tests (see fgtest.h).
 */
#include "fgtest.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/fsutil.h"

extern char **environ;

char *fgt_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *tmpl = fg_xasprintf("%s/fgtest.XXXXXX", base && *base ? base : "/tmp");

	cr_assert_not_null(mkdtemp(tmpl), "mkdtemp failed: %s", strerror(errno));
	return tmpl;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) ? 0 : 0;
	return unlink(path) ? 0 : 0;
}

int fgt_rm_rf(const char *path)
{
	/* Directories that a test made read-only must become writable first. */
	if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
		return -errno;
	return 0;
}

void fgt_write_bytes(const char *path, const void *data, size_t len)
{
	char *dir = fg_xstrdup(path);
	char *slash = strrchr(dir, '/');
	FILE *f;

	if (slash && slash != dir) {
		*slash = '\0';
		fg_mkdir_p(dir, 0755);
	}
	free(dir);
	f = fopen(path, "wb");
	cr_assert_not_null(f, "cannot write '%s': %s", path, strerror(errno));
	cr_assert_eq(fwrite(data, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

void fgt_write(const char *path, const char *content)
{
	fgt_write_bytes(path, content, strlen(content));
}

char *fgt_read(const char *path, size_t *len)
{
	struct fg_buf b;

	fg_buf_init(&b, 512u * 1024 * 1024);
	if (fg_read_file_at(AT_FDCWD, path, b.max, 0, &b, NULL) < 0) {
		fg_buf_release(&b);
		return NULL;
	}
	return fg_buf_detach(&b, len);
}

char *fgt_read_or_empty(const char *path)
{
	char *s = fgt_read(path, NULL);

	return s ? s : fgt_fmt("%s", "");
}

void fgt_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

char *fgt_fmt(const char *fmt, ...)
{
	va_list ap;
	char *p = NULL;

	va_start(ap, fmt);
	cr_assert(vasprintf(&p, fmt, ap) >= 0);
	va_end(ap);
	return p;
}

int fgt_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

int fgt_count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d, "cannot open '%s': %s", dir, strerror(errno));
	for (de = readdir(d); de; de = readdir(d)) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	}
	closedir(d);
	return n;
}

void fgt_expect_every_file(const char *dir, bool (*has)(const char *name, void *ctx), void *ctx)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int seen = 0;

	cr_assert_not_null(d, "cannot open '%s': %s", dir, strerror(errno));
	for (de = readdir(d); de; de = readdir(d)) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "README.md"))
			continue;
		cr_expect(has(de->d_name, ctx), "no expectation for the sample '%s'", de->d_name);
		seen++;
	}
	closedir(d);
	cr_assert_gt(seen, 0, "no sample in %s", dir);
}

void fgt_chmod_x(const char *path)
{
	cr_assert_eq(chmod(path, 0755), 0, "chmod '%s': %s", path, strerror(errno));
}

/* Environment for the child: a copy of environ with env's changes applied. */
static char **make_env(const char *const env[])
{
	struct fg_strvec v;

	fg_strvec_init(&v);
	for (char **e = environ; *e; e++) {
		int drop = 0;

		for (size_t i = 0; env && env[i]; i++) {
			const char *eq = strchr(env[i], '=');
			size_t n = eq ? (size_t)(eq - env[i]) : strlen(env[i]);

			if (!strncmp(*e, env[i], n) && (*e)[n] == '=')
				drop = 1;
		}
		if (!drop)
			fg_strvec_push(&v, *e);
	}
	for (size_t i = 0; env && env[i]; i++)
		if (strchr(env[i], '='))
			fg_strvec_push(&v, env[i]);
	if (!v.v)
		v.v = fg_xcalloc(1, sizeof(*v.v));
	return v.v;
}

static void free_env(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static void drain(int *fd, struct fg_buf *b)
{
	char chunk[65536];
	ssize_t n = read(*fd, chunk, sizeof(chunk));

	if (n > 0) {
		fg_buf_add(b, chunk, (size_t)n);
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		close(*fd);
		*fd = -1;
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void child_exec(const char *const argv[], char **envp, const char *cwd, int in, int out, int err)
{
	setpgid(0, 0);
	dup2(in, 0);
	dup2(out, 1);
	dup2(err, 2);
	if (cwd && chdir(cwd) < 0)
		_exit(126);
	execve(argv[0], (char *const *)argv, envp);
	_exit(127);
}

/* Feeds stdin_data, drains both pipes and waits, killing the group on timeout. */
static void supervise(struct fgt_proc *p, int in_fd, int out_fd, int err_fd, const char *data, double timeout_s)
{
	struct fg_buf ob, eb;
	size_t off = 0, dlen = data ? strlen(data) : 0;
	double deadline = now_s() + timeout_s;
	int status = 0;

	fg_buf_init(&ob, 256u * 1024 * 1024);
	fg_buf_init(&eb, 256u * 1024 * 1024);
	if (in_fd >= 0 && dlen == 0) {
		close(in_fd);
		in_fd = -1;
	}
	while (out_fd >= 0 || err_fd >= 0 || in_fd >= 0) {
		struct pollfd pf[3] = { { out_fd, POLLIN, 0 }, { err_fd, POLLIN, 0 }, { in_fd, POLLOUT, 0 } };
		int left = (int)((deadline - now_s()) * 1000);

		if (left <= 0) {
			p->timed_out = 1;
			kill(-p->pid, SIGKILL);
			break;
		}
		if (poll(pf, 3, left > 200 ? 200 : left) < 0 && errno != EINTR)
			break;
		if (pf[0].revents)
			drain(&out_fd, &ob);
		if (pf[1].revents)
			drain(&err_fd, &eb);
		if (pf[2].revents) {
			ssize_t n = write(in_fd, data + off, dlen - off);

			if (n > 0)
				off += (size_t)n;
			if (n < 0 || off == dlen) {
				close(in_fd);
				in_fd = -1;
			}
		}
	}
	while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
		;
	/* Reap anything of the group left behind so the next test starts clean. */
	kill(-p->pid, SIGKILL);
	for (int fd, i = 0; i < 3; i++) {
		fd = i == 0 ? in_fd : i == 1 ? out_fd : err_fd;
		if (fd >= 0)
			close(fd);
	}
	p->exited = WIFEXITED(status);
	p->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	p->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	p->out = fg_buf_detach(&ob, &p->out_len);
	p->err = fg_buf_detach(&eb, &p->err_len);
}

void fgt_strs_add(const char **v, size_t *n, size_t cap, const char *const *more)
{
	for (size_t i = 0; more && more[i]; i++) {
		cr_assert_lt(*n + 1, cap, "more than %zu strings for an array of %zu", *n + 1, cap);
		v[(*n)++] = more[i];
	}
	cr_assert_lt(*n, cap);
	v[*n] = NULL;
}

int fgt_run(struct fgt_proc *p, const char *const argv[], const char *const env[],
	    const char *cwd, const char *stdin_data, double timeout_s)
{
	int in[2], out[2], err[2];
	char **envp;

	memset(p, 0, sizeof(*p));
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return -errno;
	envp = make_env(env);
	p->pid = fork();
	if (p->pid < 0) {
		free_env(envp);
		return -errno;
	}
	if (p->pid == 0)
		child_exec(argv, envp, cwd, in[0], out[1], err[1]);
	setpgid(p->pid, p->pid);
	free_env(envp);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	supervise(p, in[1], out[0], err[0], stdin_data, timeout_s);
	return 0;
}

void fgt_proc_release(struct fgt_proc *p)
{
	free(p->out);
	free(p->err);
	p->out = p->err = NULL;
}

void fgt_assert_exit_at(const struct fgt_proc *p, int code, const char *file, int line)
{
	if (p->exited && p->exit_code == code)
		return;
	if (p->exited)
		cr_assert_fail("%s:%d: exit %d, not %d; stderr:\n%s", file, line, p->exit_code, code, p->err);
	cr_assert_fail("%s:%d: killed by signal %d (%s), not exit %d; stderr:\n%s", file, line, p->signal,
		       p->timed_out ? "timed out" : "not by the test", code, p->err);
}

void fgt_assert_has_at(const char *text, const char *const *needles, const char *file, int line)
{
	for (size_t i = 0; needles[i]; i++)
		if (!text || !strstr(text, needles[i]))
			cr_assert_fail("%s:%d: no '%s' in:\n%s", file, line, needles[i], text ? text : "(null)");
}

void fgt_assert_lacks_at(const char *text, const char *const *needles, const char *file, int line)
{
	for (size_t i = 0; needles[i]; i++)
		if (text && strstr(text, needles[i]))
			cr_assert_fail("%s:%d: '%s' in:\n%s", file, line, needles[i], text);
}

int fgt_alive(pid_t pid)
{
	char *path = fgt_fmt("/proc/%ld/stat", (long)pid);
	char *s = fgt_read(path, NULL);
	char *rp = s ? strrchr(s, ')') : NULL;
	int live = rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';

	free(s);
	free(path);
	return live;
}

int fgt_as_nobody(int (*fn)(void *arg), void *arg)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0))
			_exit(255);
		_exit(fn(arg) & 0xff);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) != 255 ? WEXITSTATUS(st) : -1;
}

/* Number of processes in /proc whose ppid (pgrp: their process group) is v. */
static int count_procs(int pgrp, pid_t v)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int count = 0;

	if (!d)
		return -1;
	for (de = readdir(d); de; de = readdir(d)) {
		char path[300], buf[512];
		FILE *f;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f)) {
			/* After the ")" that closes the command name: state ppid pgrp. */
			char *rp = strrchr(buf, ')');
			char state;
			int pp, pg;

			if (rp && sscanf(rp + 1, " %c %d %d", &state, &pp, &pg) == 3 && (pgrp ? pg : pp) == v)
				count++;
		}
		fclose(f);
	}
	closedir(d);
	return count;
}

int fgt_count_children(pid_t ppid)
{
	return count_procs(0, ppid);
}

int fgt_count_group(pid_t pgid)
{
	int n = count_procs(1, pgid);

	cr_assert(n >= 0, "cannot read /proc");
	return n;
}

void fgt_private_mounts(void)
{
	if (geteuid() != 0)
		cr_skip("needs root to mount (euid %d)", (int)geteuid());
	if (unshare(CLONE_NEWNS) < 0)
		cr_skip("cannot create a mount namespace: %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		cr_skip("cannot make mounts private: %s", strerror(errno));
}

char *fgt_listing(const char *dir)
{
	struct fgt_proc p;
	const char *argv[] = { "/bin/ls", "-A1", dir, NULL };
	char *s;

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 10), 0);
	s = strdup(p.out ? p.out : "");
	fgt_proc_release(&p);
	return s;
}
