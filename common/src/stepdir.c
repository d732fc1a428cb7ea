/*
 * stepdir.c - clearing an earlier run's files from a step directory (see
 * forge/stepdir.h).
 */
#include "forge/stepdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/cycle.h"
#include "forge/fsutil.h"
#include "forge/summary.h"

int fg_step_stale_kind(const char *name)
{
	int n;

	if (fg_cycle_name_parse(name, &n))
		return 1;
	if (!strcmp(name, FG_SUMMARY_FILE) || fg_is_atomic_tmp_name(name) ||
	    fg_reviewer_log_name_parse(name, &n) || fg_evidence_file_name_parse(name, &n))
		return 2;
	return 0;
}

static const char *type_name(mode_t m)
{
	if (S_ISDIR(m))
		return "directory";
	if (S_ISFIFO(m))
		return "fifo";
	if (S_ISSOCK(m))
		return "socket";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "device";
	return "file";
}

/*
 * Removes the directory name below dfd with everything in it, never
 * following a link: each level is opened with fg_open_beneath() and emptied with unlinkat(), which removes a symlink as an entry. Depth
 * is bounded (RM_DEPTH_MAX levels); deeper trees are left to the caller
 * (set aside). 0 or a negative errno.
 */
#define RM_DEPTH_MAX 16

static int remove_tree(int dfd, const char *name, int depth)
{
	struct dirent *de;
	DIR *d;
	int fd, r = 0;

	if (depth >= RM_DEPTH_MAX)
		return -ELOOP;
	fd = fg_open_beneath(dfd, name, 0, NULL, 0);
	if (fd < 0)
		return fd;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while (!r && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(fd, de->d_name, 0) == 0 || errno == ENOENT)
			continue;
		r = errno == EISDIR ? remove_tree(fd, de->d_name, depth + 1) : -errno;
	}
	closedir(d);
	if (!r && unlinkat(dfd, name, AT_REMOVEDIR) < 0)
		r = -errno;
	return r;
}

/*
 * Something other than a regular file or a symlink stands under a name the
 * run writes (a directory planted by an earlier step would make every cycle
 * write fail with EISDIR): removed, or when it cannot be, renamed aside to
 * ".stale.NAME.PID" (a name no run writes). Reported to cb either way. 0 or -errno.
 */
static int clear_special(int dfd, const char *name, const struct stat *st, fg_stale_special_cb cb,
			 void *data)
{
	char *aside = NULL;
	int r = S_ISDIR(st->st_mode) ? remove_tree(dfd, name, 0) : 0;

	if (!S_ISDIR(st->st_mode) && unlinkat(dfd, name, 0) < 0)
		r = errno == ENOENT ? 0 : -errno;
	if (r && r != -ENOENT) {
		aside = fg_xasprintf(".stale.%s.%ld", name, (long)getpid());
		r = renameat(dfd, name, dfd, aside) < 0 ? -errno : 0;
	}
	if (cb) {
		struct fg_stale_special e = {
			.name = name, .type = type_name(st->st_mode),
			.action = r ? "failed" : aside ? "set_aside" : "removed", .to = r ? NULL : aside,
			.error = r,
		};

		cb(&e, data);
	}
	free(aside);
	return r;
}

int fg_step_clear_stale(int dfd, long *cycles_removed, fg_stale_special_cb cb, void *data)
{
	struct dirent *de;
	int r = 0;
	DIR *dir = fg_dir_stream_at(dfd, &r);

	if (!dir)
		return r;
	for (errno = 0; (de = readdir(dir)) != NULL; errno = 0) {
		int kind = fg_step_stale_kind(de->d_name), e = 0;
		struct stat st;

		if (!kind || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		/* unlinkat() never follows: a symlink goes as an entry. */
		if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
			e = unlinkat(dfd, de->d_name, 0) < 0 && errno != ENOENT ? -errno : 0;
		else
			e = clear_special(dfd, de->d_name, &st, cb, data);
		if (e && !r)
			r = e;
		if (!e && kind == 1)
			(*cycles_removed)++;
	}
	/* A listing cut short would leave stale files to be taken for new ones. */
	if (errno && !r)
		r = -errno;
	closedir(dir);
	return r;
}

