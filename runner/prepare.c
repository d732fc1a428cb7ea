/*
 * prepare.c - the step directory before a run: created, stale files removed
 * (see prepare.h), and the run id.
 *
 * Stale files from an earlier run must never be reported as this run's: the
 * reference design read them on a retry and then ignored the new files that
 * replaced them. The directory is reached from the workspace descriptor with
 * fg_open_beneath() (created there when missing), removal goes through that
 * descriptor, and unlinkat() never follows the entry it removes.
 */
#include "prepare.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/cycle.h"
#include "forge/fsutil.h"
#include "forge/summary.h"
#include "log.h"

void rn_run_id_generate(char out[RN_RUN_ID_LEN + 1])
{
	unsigned char b[RN_RUN_ID_LEN / 2];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* No entropy source: time and pid still make a unique-enough id. */
			unsigned long long v = fg_monotonic_ns() ^ ((unsigned long long)getpid() << 40);

			for (size_t i = got; i < sizeof(b); i++)
				b[i] = (unsigned char)(v >> (8 * (i % 8)));
			break;
		}
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* 1 = a cycle file, 2 = another name a run writes, 0 = keep. */
static int stale_kind(const char *name)
{
	int n;

	if (fg_cycle_name_parse(name, &n))
		return 1;
	if (!strcmp(name, FG_SUMMARY_FILE) || fg_is_atomic_tmp_name(name) ||
	    fg_reviewer_log_name_parse(name, &n))
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
 * following a link: each level is opened with openat(O_NOFOLLOW|O_DIRECTORY)
 * and emptied with unlinkat(), which removes a symlink as an entry. Depth
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
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
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
 * ".stale.NAME.PID" (a name no run writes). Logged either way. 0 or -errno.
 */
static int clear_special(int dfd, const char *name, const struct stat *st,
			 const struct rn_prepare *p)
{
	char *aside = NULL;
	int r = S_ISDIR(st->st_mode) ? remove_tree(dfd, name, 0) : 0;

	if (!S_ISDIR(st->st_mode) && unlinkat(dfd, name, 0) < 0)
		r = errno == ENOENT ? 0 : -errno;
	if (r && r != -ENOENT) {
		aside = fg_xasprintf(".stale.%s.%ld", name, (long)getpid());
		r = renameat(dfd, name, dfd, aside) < 0 ? -errno : 0;
	}
	if (p->log)
		rn_log(p->log, r ? RN_LOG_ERROR : RN_LOG_WARN, "stale_special", RN_LS("dir", p->dir),
		       RN_LS("file", name), RN_LS("type", type_name(st->st_mode)),
		       RN_LS("action", r ? "failed" : aside ? "set_aside" : "removed"),
		       RN_LS_OPT("to", r ? NULL : aside), RN_LS_OPT("error", r ? strerror(-r) : NULL));
	free(aside);
	return r;
}

static int clear_stale(int dfd, const struct rn_prepare *p, long *cycles_removed)
{
	int dup_fd = dup(dfd);
	DIR *dir = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *de;
	int r = 0;

	if (!dir) {
		r = -errno;
		if (dup_fd >= 0)
			close(dup_fd);
		return r;
	}
	for (errno = 0; (de = readdir(dir)) != NULL; errno = 0) {
		int kind = stale_kind(de->d_name), e = 0;
		struct stat st;

		if (!kind || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		/* unlinkat() never follows: a symlink goes as an entry. */
		if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
			e = unlinkat(dfd, de->d_name, 0) < 0 && errno != ENOENT ? -errno : 0;
		else
			e = clear_special(dfd, de->d_name, &st, p);
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

int rn_prepare_step_dir(const struct rn_prepare *p, long *cycles_removed, char *err, size_t errlen)
{
	int dfd, r;

	*cycles_removed = 0;
	/* From the workspace descriptor, one component at a time: a .forge or
	 * step directory swapped for a symlink (even mid-way, by a process still
	 * running in the workspace) is refused, and a missing component is
	 * created with mkdirat() beneath, never at the end of a link. */
	dfd = fg_open_beneath(p->wsfd, p->rel, FG_BENEATH_CREATE, err, errlen);
	if (dfd < 0)
		return dfd;
	r = clear_stale(dfd, p, cycles_removed);
	if (r)
		snprintf(err, errlen, "cannot clear stale files: %s", strerror(-r));
	close(dfd);
	return r;
}
