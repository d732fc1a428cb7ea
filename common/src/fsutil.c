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

static int read_all(int fd, size_t max, struct fg_buf *out, size_t expect)
{
	char chunk[65536];
	size_t start = out->len;
	size_t total = 0;

	(void)expect;
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = -errno;

			out->len = start;
			if (out->data)
				out->data[start] = '\0';
			return e;
		}
		if (n == 0)
			return 0;
		/* The file may grow while we read: the bound holds for what we read. */
		if (total + (size_t)n > max || fg_buf_add(out, chunk, (size_t)n) < 0) {
			out->len = start;
			if (out->data)
				out->data[start] = '\0';
			return -EFBIG;
		}
		total += (size_t)n;
	}
}

int fg_read_file_at(int dirfd, const char *name, size_t max, struct fg_buf *out, struct stat *st)
{
	struct stat sb;
	int fd, r;

	/* O_NONBLOCK: opening a FIFO for reading must not wait for a writer. */
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
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
	r = read_all(fd, max, out, (size_t)sb.st_size);
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
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0 && errno != EINVAL)
		r = -errno;
	close(fd);
	return r;
}

int fg_write_atomic(const char *dir, const char *name, const void *data, size_t len)
{
	char *tmp = fg_atomic_tmp_name(name);
	char *tmp_path = fg_path_join(dir, tmp);
	char *final_path = fg_path_join(dir, name);
	int fd, r;

	free(tmp);
	fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	r = write_full(fd, data, len);
	if (!r && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && !r)
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
	return fg_xasprintf("%.*s/%s", (int)la, a, b);
}
