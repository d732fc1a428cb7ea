/*
 * fsutil.h - careful file I/O for a directory shared with an untrusted writer.
 *
 * Reads never follow a symlink in the last component, never block on a FIFO
 * or device, and never read more than a caller-given bound. Writes are
 * atomic: temp file in the same directory (a name starting with '.' and
 * ending in ".tmp.<pid>", so it never matches review_cycle_*.json), write,
 * fsync, rename, fsync of the directory.
 */
#ifndef FORGE_FSUTIL_H
#define FORGE_FSUTIL_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "forge/buf.h"

/*
 * Reads the regular file name relative to dirfd (AT_FDCWD for a path) into
 * out (appending; out's own max also applies). Opens with
 * O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC. st (may be NULL) receives its fstat.
 * Returns 0, -ELOOP (a symlink), -EINVAL (not a regular file: FIFO,
 * directory, device), -EFBIG (larger than max bytes), or another -errno.
 * On failure out is left as it was.
 */
int fg_read_file_at(int dirfd, const char *name, size_t max, struct fg_buf *out, struct stat *st);

/*
 * Writes data atomically to dir/name with mode 0644 (minus umask).
 * Returns 0 or a negative errno (e.g. -ENOSPC, -EROFS, -EACCES); on failure
 * the temp file is removed and any earlier dir/name is untouched. One
 * exception: when only the final fsync of the directory fails, the new
 * content is already in place (but may not survive a crash) and that
 * error is returned. The temp file is created with O_EXCL; a leftover at
 * its name (a symlink, a hard link) is unlinked, never written through.
 */
int fg_write_atomic(const char *dir, const char *name, const void *data, size_t len);

/* Temp name used by fg_write_atomic() for name: "." name ".tmp." pid. Owned. */
char *fg_atomic_tmp_name(const char *name);
/* 1 if name looks like one of our temp files (".<anything>.tmp.<digits>"). */
int fg_is_atomic_tmp_name(const char *name);

/* mkdir -p with mode; 0 or negative errno (-ENOTDIR when a component is a file). */
int fg_mkdir_p(const char *path, mode_t mode);
/* Owned "a/b" (one '/' between them). */
char *fg_path_join(const char *a, const char *b);

#endif
