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
#include "forge/stepdir.h"
#include "forge/summary.h"
#include "forge/sys.h"
#include "log.h"

void rn_run_id_generate(char out[RN_RUN_ID_LEN + 1])
{
	unsigned char b[RN_RUN_ID_LEN / 2];

	if (fg_random_bytes(b, sizeof(b)) < 0) {
		/* No entropy source: time and pid still make a unique-enough id. */
		unsigned long long v = fg_monotonic_ns() ^ ((unsigned long long)getpid() << 40);

		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (unsigned char)(v >> (8 * (i % 8)));
	}
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* Logs an entry fg_step_clear_stale() removed or set aside. */
static void on_special(const struct fg_stale_special *e, void *data)
{
	const struct rn_prepare *p = data;

	rn_log(p->log, e->error ? RN_LOG_ERROR : RN_LOG_WARN, "stale_special", RN_LS("dir", p->dir),
	       RN_LS("file", e->name), RN_LS("type", e->type), RN_LS("action", e->action),
	       RN_LS_OPT("to", e->to), RN_LS_OPT("error", e->error ? strerror(-e->error) : NULL));
}

/* Gives the step directory dfd and its ancestors up to rel's first
 * component, where root owns them, to uid:gid. 0 or a negative errno. */
static int give_components(const struct rn_prepare *p, int dfd)
{
	size_t n = 1;
	int fd = dup(dfd), rc = 0;

	for (const char *c = p->rel; *c; c++)
		n += *c == '/' && c[1] && c[1] != '/';
	for (size_t i = 0; fd >= 0 && i < n && !rc; i++) {
		struct stat st;
		int up;

		if (fstat(fd, &st) == 0 && st.st_uid == 0 && fchown(fd, p->uid, p->gid) < 0)
			rc = -errno;
		up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = up;
	}
	if (fd >= 0)
		close(fd);
	return rc;
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
	r = fg_step_clear_stale(dfd, cycles_removed, on_special, (void *)p);
	if (r)
		snprintf(err, errlen, "cannot clear stale files: %s", strerror(-r));
	if (!r && p->give) {
		r = give_components(p, dfd);
		if (r)
			snprintf(err, errlen, "cannot give it to the sandbox's uid %ld: %s", (long)p->uid,
				 strerror(-r));
	}
	close(dfd);
	return r;
}
