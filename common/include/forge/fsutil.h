/*
 * fsutil.h - careful file I/O for a directory shared with an untrusted
 * writer: the one family of file primitives both programs use (git's
 * wrapper.c is the model). There is one bounded reader, one way to reach a
 * directory below a trusted one, one way to list a directory (fg_dir_*),
 * one atomic writer and one path splitter;
 * code elsewhere calls these instead of open()/read()/rename() of its own.
 *
 * Reads never block on a FIFO or device and never read more than a
 * caller-given bound; by default they refuse a symlink in the last
 * component (FG_READ_FOLLOW lifts that for files the operator named).
 * Directories below a trusted descriptor are reached one component at a
 * time with openat(O_NOFOLLOW|O_DIRECTORY), so a symlink swapped in at any
 * level is refused, never followed (fg_open_beneath). Writes are atomic:
 * temp file in the same directory under a name nobody can predict (it
 * starts with '.' and ends in ".tmp.<64 random bits in decimal>", so it
 * never matches review_cycle_*.json), write, fsync, rename, a check that
 * the name holds the file written, fsync of the directory. In a directory
 * an untrusted writer shares, FG_WRITE_CLEAR also clears whatever stands
 * under the final name, so no planted entry can block the write.
 *
 * Tier: base (util.h). Uses alloc, buf, sys (random names), timeutil and text.
 */
#ifndef FORGE_FSUTIL_H
#define FORGE_FSUTIL_H

#include <dirent.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "forge/buf.h"

/* Flags of fg_read_file_at(). */
#define FG_READ_FOLLOW 1u   /* follow a symlink in the last component (a file the user named) */

/*
 * Reads the regular file name relative to dirfd (AT_FDCWD for a path) into
 * out (appending; out's own max also applies). Opens with
 * O_NONBLOCK|O_CLOEXEC|O_NOCTTY, plus O_NOFOLLOW unless flags has
 * FG_READ_FOLLOW. st (may be NULL) receives its fstat.
 * Returns 0, -ELOOP (a symlink, without FG_READ_FOLLOW), -EISDIR (a
 * directory), -EINVAL (another file that is not regular: FIFO, device,
 * socket), -EFBIG (larger than max bytes, or out's own max reached), or
 * another -errno. On failure out is left as it was.
 */
int fg_read_file_at(int dirfd, const char *name, size_t max, unsigned flags, struct fg_buf *out,
		    struct stat *st);

/* Flags of fg_open_dir(). */
#define FG_DIR_NOFOLLOW 1u   /* refuse a symlink in the last component (-ELOOP or -ENOTDIR) */

/*
 * Opens the directory path, relative to dirfd (borrowed; AT_FDCWD for the
 * current directory; "" is "."), with O_RDONLY|O_DIRECTORY|O_CLOEXEC, plus
 * O_NOFOLLOW with FG_DIR_NOFOLLOW. EINTR is retried. Returns a new
 * descriptor, or a negative errno (-ENOENT, -ENOTDIR, -EACCES, ...).
 * Intermediate components are followed: for a directory below a trusted
 * descriptor that an untrusted writer shares, use fg_open_beneath().
 */
int fg_open_dir(int dirfd, const char *path, unsigned flags);

/*
 * The one way to list a directory: an iterator over its entries, "." and
 * ".." left out, in the order the filesystem gives (sort what must be
 * sorted). Protocol:
 *   1. fg_dir_open() (a path) or fg_dir_open_fd() (a descriptor);
 *   2. fg_dir_next() until it returns NULL; it->err then tells the end of
 *      the listing (0) from a read error (a negative errno);
 *   3. fg_dir_close(), also after a failed open (then a no-op).
 * fg_dir_fd() is the listed directory's descriptor, for the *at() calls on
 * an entry (fstatat, openat, unlinkat).
 */
struct fg_dir {
	DIR *d;
	int err;    /* why the open or the listing ended early (negative errno), else 0 */
};

/* Opens the directory path relative to dirfd for listing, as fg_open_dir()
 * opens it (flags FG_DIR_NOFOLLOW). 0, or the negative errno (it->err too). */
int fg_dir_open(struct fg_dir *it, int dirfd, const char *path, unsigned flags);
/* Lists the directory dirfd (borrowed: it stays open and the caller's) from
 * its first entry whatever dirfd's offset. 0 or a negative errno. */
int fg_dir_open_fd(struct fg_dir *it, int dirfd);
/* The next entry's name (borrowed until the next call or the close), or
 * NULL at the end or on an error (it->err). */
const char *fg_dir_next(struct fg_dir *it);
/* The listed directory's descriptor (owned by it), or -1 when not open. */
int fg_dir_fd(const struct fg_dir *it);
/* Ends the listing and frees it; safe after a failed open and twice. */
void fg_dir_close(struct fg_dir *it);

/*
 * Writes all n bytes of p to fd, retrying EINTR and short writes. Returns 0,
 * or a negative errno: what write() said (-EPIPE, -ENOSPC, -EAGAIN from a
 * full non-blocking descriptor, ...), -EIO when write() wrote nothing. On
 * failure an unknown prefix of p may have been written.
 */
int fg_write_all(int fd, const void *p, size_t n);

/* Flags of fg_open_beneath(). */
#define FG_BENEATH_CREATE 1u   /* create missing components (mkdirat, mode 0755 minus umask) */

/*
 * Opens the directory rel below basefd (borrowed; AT_FDCWD for the current
 * directory) one component at a time with openat(O_NOFOLLOW|O_DIRECTORY),
 * creating missing components with mkdirat() when flags has
 * FG_BENEATH_CREATE (a component created by someone else meanwhile is fine;
 * it is opened the same way, so a symlink put there is still refused).
 * rel is one or more plain names separated by '/' (leading and repeated
 * '/' are skipped: rel is always taken below basefd).
 * Returns a new descriptor (O_RDONLY|O_DIRECTORY|O_CLOEXEC), or a negative
 * errno: -ENOTDIR when a component is a symlink or not a directory,
 * -EINVAL for an empty rel, a "." or ".." component or one longer than
 * NAME_MAX (err, if
 * errlen > 0, then says which: "'.forge' is a symbolic link"), else what
 * openat() or mkdirat() said (-ENOENT without FG_BENEATH_CREATE, -EROFS,
 * -EACCES; err then names the component: "cannot create '.forge': ...").
 */
int fg_open_beneath(int basefd, const char *rel, unsigned flags, char *err, size_t errlen);

/*
 * Writes data atomically as name in the directory dirfd (borrowed;
 * AT_FDCWD for the current directory) with mode 0644 (minus umask).
 * Returns 0 or a negative errno (e.g. -ENOSPC, -EROFS, -EACCES, -EISDIR
 * when a directory stands under name); on failure the temp file is
 * removed and any earlier name is untouched. One exception: when only the
 * final fsync of the directory fails, the new content is already in place
 * (but may not survive a crash) and that error is returned. The temp file
 * gets a fresh unpredictable name (fg_atomic_tmp_name) and is created with
 * O_EXCL|O_NOFOLLOW; whatever another writer put at such a name is never
 * written through, truncated or removed (another name is drawn). After
 * the rename, name must be the very file written (device and inode): a
 * file swapped in at the temp name meanwhile makes the write start over
 * (three times, then -EAGAIN).
 */
int fg_write_atomic_at(int dirfd, const char *name, const void *data, size_t len);

/* Flags of fg_write_atomic_flags_at(). */
#define FG_WRITE_CLEAR 1u   /* clear what stands under name (fg_clear_at) when it blocks the
                             * rename: for a directory an untrusted writer shares, where a
                             * planted directory would otherwise block the write for good */

/* fg_write_atomic_at() with flags (0 is fg_write_atomic_at() itself). */
int fg_write_atomic_flags_at(int dirfd, const char *name, const void *data, size_t len,
			     unsigned flags);

/*
 * Clears name out of the directory dirfd (borrowed): a file, symlink,
 * FIFO, socket or device is unlinked (a symlink as an entry, never
 * followed); a directory is removed with its contents, never following a
 * link at any level; when it cannot be (too deep, an entry we may not
 * remove), it is renamed aside to ".stale.NAME.<random>", a name no run
 * writes. Returns 0 (removed, or nothing was there), 1 (set aside: *aside
 * is the owned new name) or a negative errno (*aside NULL).
 */
int fg_clear_at(int dirfd, const char *name, char **aside);

/* The same in the directory dir ("" is the current directory). */
int fg_write_atomic(const char *dir, const char *name, const void *data, size_t len);
/* The same for a path (split with fg_path_split(); -EISDIR when it ends in '/'). */
int fg_write_atomic_path(const char *path, const void *data, size_t len);

/* A fresh temp name for name: "." name ".tmp." and 64 bits from the kernel's
 * random source in decimal (the clock and the pid without one). Owned. */
char *fg_atomic_tmp_name(const char *name);
/* 1 if name looks like one of our temp files (".<anything>.tmp.<digits>",
 * which also covers the ".tmp.<pid>" names of earlier versions). */
int fg_is_atomic_tmp_name(const char *name);

/* mkdir -p with mode; 0 or negative errno (-ENOTDIR when a component is a file).
 * Follows symlinks: only for directories the operator named (a recording
 * directory), never for one inside a workspace (use fg_open_beneath). */
int fg_mkdir_p(const char *path, mode_t mode);
/* Owned "a/b" (one '/' between them). */
char *fg_path_join(const char *a, const char *b);
/*
 * Splits path at its last '/' into an owned directory and an owned base
 * name: "a/b/c" -> "a/b", "c"; "c" -> ".", "c"; "/c" -> "/", "c".
 * Trailing slashes are not removed: "a/" has no base name. Returns 0, or
 * -EISDIR for "" or a path ending in '/' (*dir and *base set to NULL).
 * dir or base may be NULL when the caller does not want it.
 */
int fg_path_split(const char *path, char **dir, char **base);

/* Removes path and, when it is a directory, everything below it, never
 * following a symlink (a link is removed, not its target); best effort:
 * what cannot be removed stays. For trees of our own that an agent may
 * have written into (its HOME, a private git directory). */
void fg_rm_tree(const char *path);

#endif
