/*
 * stepdir.c - clearing an earlier run's files from a step directory (see
 * forge/stepdir.h).
 */
#include "forge/stepdir.h"

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
 * Something other than a regular file or a symlink stands under a name the
 * run writes (a directory planted by an earlier step would make every cycle
 * write fail with EISDIR): cleared (fg_clear_at: removed, or renamed
 * aside). Reported to cb either way. 0 or -errno.
 */
static int clear_special(int dfd, const char *name, const struct stat *st, fg_stale_special_cb cb,
			 void *data)
{
	char *aside = NULL;
	int r = fg_clear_at(dfd, name, &aside);

	if (cb) {
		struct fg_stale_special e = {
			.name = name, .type = type_name(st->st_mode),
			.action = r < 0 ? "failed" : r ? "set_aside" : "removed", .to = aside,
			.error = r < 0 ? r : 0,
		};

		cb(&e, data);
	}
	free(aside);
	return r < 0 ? r : 0;
}

int fg_step_clear_stale(int dfd, long *cycles_removed, fg_stale_special_cb cb, void *data)
{
	struct fg_dir it;
	const char *name;
	int r = fg_dir_open_fd(&it, dfd);

	if (r)
		return r;
	while ((name = fg_dir_next(&it)) != NULL) {
		int kind = fg_step_stale_kind(name), e = 0;
		struct stat st;

		if (!kind || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		/* unlinkat() never follows: a symlink goes as an entry. */
		if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
			e = unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
		else
			e = clear_special(dfd, name, &st, cb, data);
		if (e && !r)
			r = e;
		if (!e && kind == 1)
			(*cycles_removed)++;
	}
	/* A listing cut short would leave stale files to be taken for new ones. */
	if (it.err && !r)
		r = it.err;
	fg_dir_close(&it);
	return r;
}

