/*
 * fsutil.c - bounded, symlink-safe reads and atomic writes (see fsutil.h).
 */
#include "forge/fsutil.h"

#include <errno.h>
#include <ftw.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/sys.h"
#include "forge/text.h"
#include "forge/timeutil.h"
#include "internal.h"

/* Puts out back as it was before the read: its text and its error (the
 * refused append of a read that went past out's max is not out's failure:
 * the read failed and says so). */
static void restore_buf(struct fg_buf *out, size_t start, int had_data, int err)
{
	if (!had_data)
		fg_buf_release(out);
	fg_buf_rewind(out, start, err);
}

static int read_all(int fd, size_t max, struct fg_buf *out)
{
	char chunk[65536];
	size_t start = out->len;
	int had_data = out->data != NULL, err = out->err;
	size_t total = 0;

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = -errno;

			restore_buf(out, start, had_data, err);
			return e;
		}
		if (n == 0)
			return 0;
		/* The file may grow while we read: the bound holds for what we read. */
		if (total + (size_t)n > max || fg_buf_add(out, chunk, (size_t)n) < 0) {
			restore_buf(out, start, had_data, err);
			return -EFBIG;
		}
		total += (size_t)n;
	}
}

static int open_file(int dirfd, const char *name, unsigned flags)
{
	int oflags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
	int fd;

	if (!(flags & FG_READ_FOLLOW))
		oflags |= O_NOFOLLOW;
	/* O_NONBLOCK: opening a FIFO for reading must not wait for a writer,
	 * and opening a device must not wait for a carrier. */
	do
		fd = openat(dirfd, name, oflags);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

/* 0 when st is a regular file of at most max bytes, else why not. */
static int check_file(const struct stat *st, size_t max)
{
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (!S_ISREG(st->st_mode))
		return -EINVAL;
	if ((unsigned long long)st->st_size > (unsigned long long)max)
		return -EFBIG;
	return 0;
}

int fg_read_file_at(int dirfd, const char *name, size_t max, unsigned flags, struct fg_buf *out,
		    struct stat *st)
{
	struct stat sb;
	int fd, r, fl;

	fd = open_file(dirfd, name, flags);
	if (fd < 0)
		return fd;
	r = fstat(fd, &sb) < 0 ? -errno : check_file(&sb, max);
	if (r) {
		close(fd);
		return r;
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

/* Says in err why name below dirfd cannot be opened as a directory. */
static int why_refused(int dirfd, const char *name, char *err, size_t errlen)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		fg__seterr(err, errlen, "'%s' is a symbolic link", name);
	else
		fg__seterr(err, errlen, "'%s' is not a directory", name);
	return -ENOTDIR;
}

/* Opens (and with FG_BENEATH_CREATE, creates) the one component comp below
 * fd. A descriptor or a negative errno, err filled for a refusal. */
static int open_component(int fd, const char *comp, unsigned flags, char *err, size_t errlen)
{
	for (int tries = 0; tries < 8; tries++) {
		int next = fg_open_dir(fd, comp, FG_DIR_NOFOLLOW);

		if (next >= 0)
			return next;
		/* A symlink says ELOOP, or ENOTDIR with O_DIRECTORY. */
		if (next == -ELOOP || next == -ENOTDIR)
			return why_refused(fd, comp, err, errlen);
		if (next != -ENOENT || !(flags & FG_BENEATH_CREATE))
			return next;
		/* mkdirat() never follows a symlink at comp (EEXIST); what it
		 * made, or what another process made meanwhile, is opened above
		 * with O_NOFOLLOW again. */
		if (mkdirat(fd, comp, 0755) < 0 && errno != EEXIST && errno != EINTR) {
			int e = -errno;

			fg__seterr(err, errlen, "cannot create '%s': %s", comp, strerror(-e));
			return e;
		}
	}
	/* Created and removed again eight times in a row: someone is racing us. */
	fg__seterr(err, errlen, "'%s' keeps disappearing", comp);
	return -ENOENT;
}

int fg_open_beneath(int basefd, const char *rel, unsigned flags, char *err, size_t errlen)
{
	char comp[NAME_MAX + 1];
	const char *p = rel;
	int fd = basefd;

	while (*p == '/')
		p++;
	if (!*p) {
		fg__seterr(err, errlen, "no directory name");
		return -EINVAL;
	}
	while (*p) {
		size_t n = strcspn(p, "/");
		int next;

		if (n == 0 || n > NAME_MAX || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.')) {
			fg__seterr(err, errlen, "'%.*s' is not a plain name", (int)(n > 64 ? 64 : n), p);
			next = -EINVAL;
		} else {
			memcpy(comp, p, n);
			comp[n] = '\0';
			next = open_component(fd, comp, flags, err, errlen);
		}
		if (fd != basefd)
			close(fd);
		if (next < 0)
			return next;
		fd = next;
		p += n;
		while (*p == '/')
			p++;
	}
	return fd;
}

/* 64 bits nobody can guess (the kernel's random source); without one, the
 * clock and the pid, which are at least unique. */
static unsigned long long random_u64(void)
{
	unsigned long long v;

	if (fg_random_bytes(&v, sizeof(v)) < 0)
		v = fg_monotonic_ns() ^ ((unsigned long long)getpid() << 40);
	return v;
}

/* What stands between a temp file's name and its random digits. */
#define TMP_MARK ".tmp."
#define TMP_MARK_LEN (sizeof(TMP_MARK) - 1)

char *fg_atomic_tmp_name(const char *name)
{
	return fg_xasprintf(".%s" TMP_MARK "%llu", name, random_u64());
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
	/* Before the digits ".tmp.", and before that at least one byte after
	 * the leading '.'. */
	if (p == name + len || (size_t)(p - name) <= TMP_MARK_LEN + 1)
		return 0;
	return fg_skip_prefix(p - TMP_MARK_LEN, TMP_MARK, NULL);
}

int fg_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t k = write(fd, c, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		/* A zero-length write of a non-empty buffer would loop forever. */
		if (k == 0)
			return -EIO;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

int fg_open_dir(int dirfd, const char *path, unsigned flags)
{
	int oflags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (flags & FG_DIR_NOFOLLOW ? O_NOFOLLOW : 0);
	int fd;

	do
		fd = openat(dirfd, *path ? path : ".", oflags);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

/* Lists fd (taken: closed on failure too). */
static int dir_take(struct fg_dir *it, int fd)
{
	it->d = fd < 0 ? NULL : fdopendir(fd);
	it->err = 0;
	if (!it->d) {
		it->err = fd < 0 ? fd : -errno;
		if (fd >= 0)
			close(fd);
	}
	return it->err;
}

int fg_dir_open(struct fg_dir *it, int dirfd, const char *path, unsigned flags)
{
	return dir_take(it, fg_open_dir(dirfd, path, flags));
}

int fg_dir_open_fd(struct fg_dir *it, int dirfd)
{
	int fd = dup(dirfd);

	if (dir_take(it, fd < 0 ? -errno : fd))
		return it->err;
	/* The duplicate shares dirfd's offset: start from the beginning. */
	rewinddir(it->d);
	return 0;
}

const char *fg_dir_next(struct fg_dir *it)
{
	struct dirent *de;

	if (!it->d)
		return NULL;
	do {
		errno = 0;
		de = readdir(it->d);
	} while (de && (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")));
	if (!de && errno)
		it->err = -errno;
	return de ? de->d_name : NULL;
}

int fg_dir_fd(const struct fg_dir *it)
{
	return it->d ? dirfd(it->d) : -1;
}

void fg_dir_close(struct fg_dir *it)
{
	if (it->d)
		closedir(it->d);
	it->d = NULL;
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

/*
 * Creates a temp file for name exclusively under a fresh unpredictable
 * name (*tmp, owned). Something at that name (planted by a writer who
 * guessed it, or a leftover) is never opened, truncated or removed: a
 * new name is drawn instead.
 */
static int create_tmp(int dirfd, const char *name, char **tmp)
{
	for (int tries = 0; tries < 8; tries++) {
		int fd;

		*tmp = fg_atomic_tmp_name(name);
		fd = openat(dirfd, *tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0)
			return fd;
		fd = -errno;
		free(*tmp);
		*tmp = NULL;
		if (fd != -EEXIST && fd != -EINTR)
			return fd;
	}
	return -EEXIST;
}

/* The directory's own fsync: through dirfd, or "." for AT_FDCWD. */
static int fsync_dir(int dirfd)
{
	int fd = dirfd, r;

	if (dirfd == AT_FDCWD)
		fd = fg_open_dir(AT_FDCWD, ".", 0);
	if (fd < 0)
		return fd;
	r = fsync_fd(fd);
	if (fd != dirfd)
		close(fd);
	return r;
}

/* Writes, syncs and closes the temp file fd; *st gets its identity. */
static int fill_tmp(int fd, const void *data, size_t len, struct stat *st)
{
	int r = fg_write_all(fd, data, len);

	if (!r)
		r = fsync_fd(fd);
	if (!r && fstat(fd, st) < 0)
		r = -errno;
	/* close() is not retried on EINTR: on Linux the descriptor is gone. */
	if (close(fd) < 0 && !r && errno != EINTR)
		r = -errno;
	return r;
}

/*
 * Renames tmp over name. With FG_WRITE_CLEAR, what stands under name and
 * makes the rename fail (a directory: EISDIR, ENOTEMPTY, EEXIST) is
 * cleared away (fg_clear_at) and the rename tried again. Then checks that
 * name is the file we wrote (st): a writer who swapped another file in at
 * the temp name between our close and our rename is caught (-EAGAIN).
 */
static int put_in_place(int dirfd, const char *tmp, const char *name, const struct stat *st,
			unsigned flags)
{
	struct stat now;
	int r = 0;

	for (int tries = 0; tries < 4; tries++) {
		char *aside = NULL;

		r = renameat(dirfd, tmp, dirfd, name) < 0 ? -errno : 0;
		if (!r)
			break;
		if (!(flags & FG_WRITE_CLEAR) || (r != -EISDIR && r != -ENOTEMPTY && r != -EEXIST))
			return r;
		r = fg_clear_at(dirfd, name, &aside);
		free(aside);
		if (r < 0)
			return r;
	}
	if (r)
		return r;
	if (fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return now.st_dev == st->st_dev && now.st_ino == st->st_ino ? 0 : -EAGAIN;
}

int fg_write_atomic_flags_at(int dirfd, const char *name, const void *data, size_t len,
			     unsigned flags)
{
	struct stat st;
	char *tmp;
	int fd, r;

	/* -EAGAIN: another file was swapped in for ours; write ours again. */
	for (int tries = 0; tries < 3; tries++) {
		fd = create_tmp(dirfd, name, &tmp);
		if (fd < 0)
			return fd;
		r = fill_tmp(fd, data, len, &st);
		if (!r)
			r = put_in_place(dirfd, tmp, name, &st, flags);
		if (r)
			unlinkat(dirfd, tmp, 0);
		free(tmp);
		if (r != -EAGAIN)
			break;
	}
	return r ? r : fsync_dir(dirfd);
}

int fg_write_atomic_at(int dirfd, const char *name, const void *data, size_t len)
{
	return fg_write_atomic_flags_at(dirfd, name, data, len, 0);
}

int fg_write_atomic(const char *dir, const char *name, const void *data, size_t len)
{
	int dfd, r;

	/* "" is the current directory, as fg_path_join() treats it. */
	dfd = fg_open_dir(AT_FDCWD, dir, 0);
	if (dfd < 0)
		return dfd;
	r = fg_write_atomic_at(dfd, name, data, len);
	close(dfd);
	return r;
}

int fg_write_atomic_path(const char *path, const void *data, size_t len)
{
	char *dir, *base;
	int r = fg_path_split(path, &dir, &base);

	if (!r)
		r = fg_write_atomic(dir, base, data, len);
	free(dir);
	free(base);
	return r;
}

/*
 * Removes the directory name below dfd with everything in it, never
 * following a link: each level is opened with fg_open_beneath() and
 * emptied with unlinkat(), which removes a symlink as an entry. Depth is
 * bounded (RM_DEPTH_MAX levels): a deeper tree is -ELOOP, left to the
 * caller (set aside). 0 or a negative errno.
 */
#define RM_DEPTH_MAX 16

static int remove_tree(int dfd, const char *name, int depth)
{
	struct fg_dir it;
	const char *e;
	int fd, r = 0;

	if (depth >= RM_DEPTH_MAX)
		return -ELOOP;
	fd = fg_open_beneath(dfd, name, 0, NULL, 0);
	if (fd < 0)
		return fd;
	r = fg_dir_open_fd(&it, fd);
	close(fd);
	if (r)
		return r;
	fd = fg_dir_fd(&it);
	while (!r && (e = fg_dir_next(&it)) != NULL) {
		if (unlinkat(fd, e, 0) == 0 || errno == ENOENT)
			continue;
		r = errno == EISDIR ? remove_tree(fd, e, depth + 1) : -errno;
	}
	fg_dir_close(&it);
	if (!r && unlinkat(dfd, name, AT_REMOVEDIR) < 0)
		r = -errno;
	return r;
}

int fg_clear_at(int dirfd, const char *name, char **aside)
{
	struct stat st;
	int r;

	*aside = NULL;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		r = unlinkat(dirfd, name, 0) < 0 ? -errno : 0;
	else
		r = remove_tree(dirfd, name, 0);
	if (!r || r == -ENOENT)
		return 0;
	*aside = fg_xasprintf(".stale.%s.%llu", name, random_u64());
	if (renameat(dirfd, name, dirfd, *aside) == 0)
		return 1;
	r = -errno;
	free(*aside);
	*aside = NULL;
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

int fg_path_split(const char *path, char **dir, char **base)
{
	const char *slash = strrchr(path, '/');

	if (dir)
		*dir = NULL;
	if (base)
		*base = NULL;
	if (!*path || (slash && !slash[1]))
		return -EISDIR;
	if (dir && !slash)
		*dir = fg_xstrdup(".");
	else if (dir)
		*dir = slash == path ? fg_xstrdup("/") : fg_xstrndup(path, (size_t)(slash - path));
	if (base)
		*base = fg_xstrdup(slash ? slash + 1 : path);
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void fg_rm_tree(const char *path)
{
	struct stat st;

	/* nftw() on a symlink with FTW_PHYS visits the link itself: removed. */
	if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
