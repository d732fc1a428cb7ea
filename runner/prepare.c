/*
 * prepare.c - the step directory before a run: created, stale files removed
 * (see prepare.h), and the run id.
 *
 * Stale files from an earlier run must never be reported as this run's: the
 * reference design read them on a retry and then ignored the new files that
 * replaced them. Removal goes through a descriptor of the directory opened
 * with O_NOFOLLOW, and unlinkat() never follows the entry it removes.
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

static int ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && !strcmp(s + ls - lx, suffix);
}

/* 1 = a cycle file, 2 = another stale file of ours, 0 = keep. */
static int stale_kind(const char *name)
{
	int n;

	if (fg_cycle_name_parse(name, &n))
		return 1;
	if (!strcmp(name, FG_SUMMARY_FILE) || fg_is_atomic_tmp_name(name))
		return 2;
	if (!strncmp(name, "review_cycle_", 13) && ends_with(name, ".reviewer.log"))
		return 2;
	return 0;
}

static int clear_stale(int dfd, long *cycles_removed)
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
	while ((de = readdir(dir)) != NULL) {
		int kind = stale_kind(de->d_name);
		struct stat st;

		if (!kind || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
			continue;
		if (unlinkat(dfd, de->d_name, 0) < 0) {
			if (errno != ENOENT)
				r = -errno;
			continue;
		}
		if (kind == 1)
			(*cycles_removed)++;
	}
	closedir(dir);
	return r;
}

/* W/.forge lives in the sandbox's workspace: a symlink left there by an
 * earlier container (a link made in the container resolves on the host)
 * would have us create the step directory elsewhere and clear review files
 * of another tree. The workspace itself was resolved by the caller. */
static int check_parent(const char *dir)
{
	char *parent = fg_xstrdup(dir);
	char *slash = strrchr(parent, '/');
	struct stat st;
	int r = 0;

	if (slash && slash != parent) {
		*slash = '\0';
		if (lstat(parent, &st) == 0 && S_ISLNK(st.st_mode))
			r = -ELOOP;
	}
	free(parent);
	return r;
}

int rn_prepare_step_dir(const char *dir, long *cycles_removed)
{
	int dfd, r;

	*cycles_removed = 0;
	r = check_parent(dir);
	if (r)
		return r;
	r = fg_mkdir_p(dir, 0755);
	if (r)
		return r;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		struct stat st;

		/* O_NOFOLLOW|O_DIRECTORY reports a symlinked step dir as
		 * ENOTDIR; say what it really is. */
		r = -errno;
		if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
			r = -ELOOP;
		return r;
	}
	r = clear_stale(dfd, cycles_removed);
	close(dfd);
	return r;
}
