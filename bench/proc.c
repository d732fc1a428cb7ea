/*
 * proc.c - children with a stdout pipe, a line reader stamped with
 * CLOCK_MONOTONIC, /proc readers and the cycle-file writer.
 */
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/buf.h"

extern char **environ;

uint64_t fb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void fb_sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Extra entries first: getenv() returns the first match. */
static char **merged_env(char *const extra[])
{
	size_t n = 0, m = 0, k = 0;
	char **v;

	while (extra && extra[n])
		n++;
	while (environ[m])
		m++;
	v = fg_xcalloc(n + m + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[k++] = extra[i];
	for (size_t i = 0; i < m; i++)
		v[k++] = environ[i];
	return v;
}

int fb_child_start(struct fb_child *c, const char *const argv[], char *const env[], const char *errpath)
{
	return fb_child_start_in(c, argv, env, errpath, "/dev/null");
}

int fb_child_start_in(struct fb_child *c, const char *const argv[], char *const env[],
		      const char *errpath, const char *inpath)
{
	posix_spawn_file_actions_t fa;
	int p[2], r;
	char **envp;

	memset(c, 0, sizeof(*c));
	c->pid = -1;
	snprintf(c->errpath, sizeof(c->errpath), "%s", errpath);
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, inpath, O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	envp = merged_env(env);
	/* posix_spawn's argv is not const for historical reasons; it is not written. */
	r = posix_spawnp(&c->pid, argv[0], &fa, NULL, (char *const *)(uintptr_t)argv, envp);
	free(envp);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (r) {
		close(p[0]);
		c->pid = -1;
		return -r;
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	c->out_fd = p[0];
	return 0;
}

static void split_lines(struct fb_child *c, uint64_t t, fb_line_cb cb, void *data)
{
	size_t start = 0;

	for (size_t i = 0; i < c->len; i++) {
		if (c->buf[i] != '\n')
			continue;
		c->buf[i] = '\0';
		if (cb)
			cb(data, c->buf + start, i - start, t);
		start = i + 1;
	}
	memmove(c->buf, c->buf + start, c->len - start);
	c->len -= start;
	/* A line longer than the buffer is not ours to measure: drop it. */
	if (c->len == sizeof(c->buf) - 1)
		c->len = 0;
}

int fb_child_read(struct fb_child *c, int timeout_ms, fb_line_cb cb, void *data)
{
	struct pollfd pfd = { .fd = c->out_fd, .events = POLLIN };
	int got = 0;

	if (c->out_fd < 0)
		return -EPIPE;
	if (poll(&pfd, 1, timeout_ms) < 0)
		return errno == EINTR ? 0 : -errno;
	for (;;) {
		ssize_t n = read(c->out_fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
		uint64_t t = fb_now_ns();

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return (errno == EAGAIN || errno == EWOULDBLOCK) ? got : -errno;
		if (n == 0)
			return -EPIPE;
		c->len += (size_t)n;
		got = 1;
		split_lines(c, t, cb, data);
	}
}

int fb_child_stop(struct fb_child *c, int grace_ms, fb_line_cb cb, void *data)
{
	uint64_t deadline = fb_now_ns() + (uint64_t)grace_ms * 1000000u;
	int st = 0, r = 0;

	if (c->pid <= 0)
		return -ECHILD;
	kill(c->pid, SIGTERM);
	while (r != -EPIPE && fb_now_ns() < deadline) {
		r = fb_child_read(c, 50, cb, data);
		if (r < 0 && r != -EPIPE)
			break;
	}
	if (r != -EPIPE)
		kill(c->pid, SIGKILL);
	while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
		;
	c->pid = -1;
	if (c->out_fd >= 0)
		close(c->out_fd);
	c->out_fd = -1;
	return st;
}

long fb_proc_status_kib(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t flen = strlen(field);
	long v = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, flen) && line[flen] == ':') {
			v = strtol(line + flen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

int64_t fb_proc_cpu_ticks_ns(pid_t pid)
{
	char path[64], buf[2048], *p;
	unsigned long long ut = 0, st = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	/* comm may contain spaces; fields restart after the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -EIO;
	return (int64_t)((ut + st) * (1000000000ull / (unsigned long long)sysconf(_SC_CLK_TCK)));
}

int64_t fb_proc_cpu_sched_ns(pid_t pid)
{
	char path[320];
	struct dirent *de;
	int64_t sum = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	for (de = readdir(d); de; de = readdir(d)) {
		unsigned long long run = 0;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &run) == 1)
			sum += (int64_t)run;
		fclose(f);
	}
	closedir(d);
	return sum;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Appends the inode of every watch held by the inotify fd fdname of pid. */
static void collect_watched(pid_t pid, const char *fdname, uint64_t **inos, size_t *n, size_t *cap)
{
	char path[320], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", (int)pid, fdname);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, " ino:");

		if (strncmp(line, "inotify wd:", 11) || !p)
			continue;
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 256;
			*inos = fg_xreallocarray(*inos, *cap, sizeof(**inos));
		}
		(*inos)[(*n)++] = strtoull(p + 5, NULL, 16);
	}
	fclose(f);
}

static int all_present(const uint64_t *inos, size_t n, const char *const dirs[], size_t ndirs)
{
	for (size_t i = 0; i < ndirs; i++) {
		struct stat st;
		uint64_t key;

		if (stat(dirs[i], &st) < 0)
			return 0;
		key = (uint64_t)st.st_ino;
		if (!bsearch(&key, inos, n, sizeof(*inos), cmp_u64))
			return 0;
	}
	return 1;
}

int fb_inotify_ready(pid_t pid, const char *const dirs[], size_t ndirs)
{
	char path[320], target[64];
	uint64_t *inos = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int ok;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	for (de = readdir(d); de; de = readdir(d)) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pid, de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (!strcmp(target, "anon_inode:inotify"))
			collect_watched(pid, de->d_name, &inos, &n, &cap);
	}
	closedir(d);
	if (n)
		qsort(inos, n, sizeof(*inos), cmp_u64);
	ok = n && all_present(inos, n, dirs, ndirs);
	free(inos);
	return ok;
}

int fb_wait_inotify_ready(pid_t pid, const char *const dirs[], size_t ndirs, int timeout_ms)
{
	uint64_t deadline = fb_now_ns() + (uint64_t)timeout_ms * 1000000u;

	while (fb_now_ns() < deadline) {
		if (fb_inotify_ready(pid, dirs, ndirs))
			return 0;
		fb_sleep_ns(2000000);
	}
	return -ETIMEDOUT;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void cycle_paths(const char *dir, int n, char *tmp, size_t tsz, char *dst, size_t dsz)
{
	snprintf(tmp, tsz, "%s/.review_cycle_%d.json.tmp.%d", dir, n, (int)getpid());
	snprintf(dst, dsz, "%s/review_cycle_%d.json", dir, n);
}

int fb_write_cycle_temp(const char *dir, int n, int max_cycles)
{
	char tmp[600], dst[600], body[512];
	int len, fd, r;

	cycle_paths(dir, n, tmp, sizeof(tmp), dst, sizeof(dst));
	len = snprintf(body, sizeof(body),
		       "{\"cycle\": %d, \"max_cycles\": %d, \"verdict\": \"rejected\", "
		       "\"feedback\": \"bench cycle %d: add the missing test\", \"skill\": \"bench\", "
		       "\"elapsed_seconds\": 0.001, \"timestamp\": \"2026-01-15T10:30:00Z\"}\n",
		       n, max_cycles, n);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	r = write_all(fd, body, (size_t)len);
	close(fd);
	if (r)
		unlink(tmp);
	return r;
}

int fb_rename_cycle(const char *dir, int n, uint64_t *t_ns)
{
	char tmp[600], dst[600];

	cycle_paths(dir, n, tmp, sizeof(tmp), dst, sizeof(dst));
	if (t_ns)
		*t_ns = fb_now_ns();
	if (rename(tmp, dst) < 0) {
		int r = -errno;

		unlink(tmp);
		return r;
	}
	return 0;
}

int fb_write_cycle(const char *dir, int n, int max_cycles, uint64_t *t_ns)
{
	int r = fb_write_cycle_temp(dir, n, max_cycles);

	return r ? r : fb_rename_cycle(dir, n, t_ns);
}

int fb_mkdirs(const char *path)
{
	char buf[4096];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		if (i < len)
			buf[i] = '/';
	}
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void fb_rmtree(const char *path)
{
	nftw(path, rm_one, 64, FTW_DEPTH | FTW_PHYS);
}

void fb_dump_tail(const char *path, const char *what)
{
	char buf[2048];
	ssize_t n;
	off_t size;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	lseek(fd, size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0, SEEK_SET);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	fprintf(stderr, "forge-bench: --- %s (%s) ---\n%s\n", what, path, buf);
}
