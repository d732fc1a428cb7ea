/*
 * fsutil.c - bounded, symlink-safe reads and atomic writes (see fsutil.h).
 */
#include "forge/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"

/* Puts out back to its state before a failed read: same length, and no
 * allocation left behind when it had none, so "left as it was" holds. */
static void restore_buf(struct fg_buf *out, size_t start, int had_data)
{
	if (!had_data) {
		fg_buf_release(out);
		return;
	}
	out->len = start;
	out->data[start] = '\0';
}

static int read_all(int fd, size_t max, struct fg_buf *out)
{
	char chunk[65536];
	size_t start = out->len;
	int had_data = out->data != NULL;
	size_t total = 0;

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = -errno;

			restore_buf(out, start, had_data);
			return e;
		}
		if (n == 0)
			return 0;
		/* The file may grow while we read: the bound holds for what we read. */
		if (total + (size_t)n > max || fg_buf_add(out, chunk, (size_t)n) < 0) {
			restore_buf(out, start, had_data);
			return -EFBIG;
		}
		total += (size_t)n;
	}
}

static int open_nofollow(int dirfd, const char *name)
{
	int fd;

	/* O_NONBLOCK: opening a FIFO for reading must not wait for a writer,
	 * and opening a device must not wait for a carrier. */
	do
		fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

int fg_read_file_at(int dirfd, const char *name, size_t max, struct fg_buf *out, struct stat *st)
{
	struct stat sb;
	int fd, r, fl;

	fd = open_nofollow(dirfd, name);
	if (fd < 0)
		return fd;
	if (fstat(fd, &sb) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((unsigned long long)sb.st_size > (unsigned long long)max) {
		close(fd);
		return -EFBIG;
	}
	/* A regular file: blocking reads are fine again, and a non-blocking
	 * descriptor could fail with EAGAIN on a mandatory-locked file. */
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	r = read_all(fd, max, out);
	close(fd);
	if (r == 0 && st)
		*st = sb;
	return r;
}

char *fg_atomic_tmp_name(const char *name)
{
	return fg_xasprintf(".%s.tmp.%ld", name, (long)getpid());
}

int fg_is_atomic_tmp_name(const char *name)
{
	const char *p;
	size_t len = strlen(name);

	if (len < 7 || name[0] != '.')
		return 0;
	p = name + len;
	while (p > name && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p == name + len || (size_t)(p - name) < 6)
		return 0;
	return !strncmp(p - 5, ".tmp.", 5) && (p - 5) > name + 1;
}

static int write_full(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		/* A zero-length write of a non-empty buffer would loop forever. */
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fsync_fd(int fd)
{
	while (fsync(fd) < 0) {
		if (errno == EINTR)
			continue;
		/* Some filesystems cannot sync a directory; that is not our error. */
		if (errno == EINVAL || errno == EROFS)
			return 0;
		return -errno;
	}
	return 0;
}

static int fsync_dir(const char *dir)
{
	/* "" is the current directory, as fg_path_join() treats it. */
	int fd = open(*dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	r = fsync_fd(fd);
	close(fd);
	return r;
}

/*
 * Creates the temp file exclusively. A leftover with the same name (a crash
 * of an earlier process that had our pid, or something planted by another
 * writer of the directory) is unlinked, never truncated in place: truncating
 * could write through a hard link into an unrelated file.
 */
static int create_tmp(const char *tmp_path)
{
	for (int tries = 0; tries < 3; tries++) {
		int fd = open(tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

		if (fd >= 0)
			return fd;
		if (errno == EINTR)
			continue;
		if (errno != EEXIST)
			return -errno;
		if (unlink(tmp_path) < 0 && errno != ENOENT)
			return -errno;
	}
	return -EEXIST;
}

int fg_write_atomic(const char *dir, const char *name, const void *data, size_t len)
{
	char *tmp = fg_atomic_tmp_name(name);
	char *tmp_path = fg_path_join(dir, tmp);
	char *final_path = fg_path_join(dir, name);
	int fd, r;

	free(tmp);
	fd = create_tmp(tmp_path);
	if (fd < 0) {
		r = fd;
		goto out;
	}
	r = write_full(fd, data, len);
	if (!r)
		r = fsync_fd(fd);
	/* close() is not retried on EINTR: on Linux the descriptor is gone. */
	if (close(fd) < 0 && !r && errno != EINTR)
		r = -errno;
	if (!r && rename(tmp_path, final_path) < 0)
		r = -errno;
	if (r)
		unlink(tmp_path);
	else
		r = fsync_dir(dir);
out:
	free(tmp_path);
	free(final_path);
	return r;
}

int fg_mkdir_p(const char *path, mode_t mode)
{
	char *p;
	struct stat st;
	int r = 0;

	if (!*path)
		return -ENOENT;
	p = fg_xstrdup(path);

	for (char *s = p + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST) {
			r = -errno;
			break;
		}
		if (stat(p, &st) < 0) {
			r = -errno;
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			r = -ENOTDIR;
			break;
		}
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	return r;
}

char *fg_path_join(const char *a, const char *b)
{
	size_t la = strlen(a);

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (*b == '/')
		b++;
	/* "" joins to a relative name and "/" must not become "//b". */
	if (la == 0)
		return fg_xstrdup(b);
	if (la == 1 && a[0] == '/')
		return fg_xasprintf("/%s", b);
	return fg_xasprintf("%.*s/%s", (int)la, a, b);
}
