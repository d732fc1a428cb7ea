/*
 * watch_scan.c - the watch's reading side (watch_internal.h): the identity
 * of each cycle file, examining one file (bounded read, run id, content
 * hash, one report per distinct content), a directory opened from its
 * trusted base one component at a time, and the scan of a directory.
 */
#include "watch_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/fsutil.h"
#include "forge/text.h"

/* ---- identity table ---- */

/* The entry for n, or the index where it would be inserted (*at). */
static struct rn_watch_entry *entry_find(struct rn_watch_dir *d, int n, size_t *at)
{
	size_t lo = 0, hi = d->ne;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->e[mid].n == n)
			return &d->e[mid];
		if (d->e[mid].n < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return NULL;
}

/* The entry for n, added if new; NULL when the directory already tracks
 * RN_WATCH_MAX_CYCLE_FILES numbers. */
static struct rn_watch_entry *entry_get(struct rn_watch_dir *d, int n)
{
	size_t lo = 0;
	struct rn_watch_entry *e = entry_find(d, n, &lo);

	if (e)
		return e;
	if (d->ne >= RN_WATCH_MAX_CYCLE_FILES)
		return NULL;
	FG_ALLOC_GROW(d->e, d->ne + 1, d->cap);
	memmove(&d->e[lo + 1], &d->e[lo], (d->ne - lo) * sizeof(*d->e));
	memset(&d->e[lo], 0, sizeof(*d->e));
	d->e[lo].n = n;
	d->ne++;
	return &d->e[lo];
}

/* A cycle file past the per-directory cap: never read, counted once per
 * number (a bitmap of FG_CYCLE_NUMBER_MAX bits, 12.5 KiB), and the first
 * one is logged as cycle_limit. */
static void drop_file(struct rn_watch *w, struct rn_watch_dir *d, const char *name, int n)
{
	unsigned char bit = (unsigned char)(1u << (n % 8));

	if (!d->dropped)
		d->dropped = fg_xcalloc(FG_CYCLE_NUMBER_MAX / 8 + 1, 1);
	if (d->dropped[n / 8] & bit)
		return;
	d->dropped[n / 8] |= bit;
	if (d->ndropped++ == 0)
		rn_log(w->opts.log, RN_LOG_WARN, "cycle_limit", RN_LS("dir", d->path),
		       RN_LS("step", d->step), RN_LS("file", name), RN_LS("limit", "cycle_files"),
		       RN_LI("max", RN_WATCH_MAX_CYCLE_FILES));
}

size_t rn_watch_dropped(const struct rn_watch *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->ndirs; i++)
		n += w->dirs[i].ndropped;
	return n;
}

static long long mtime_ns(const struct stat *st)
{
	return (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

/* Records st as the entry's identity; returns 1 if it is the one already
 * examined (nothing changed since). A new identity forgets the per-identity
 * warnings, so a new file gets its own. */
static int identity_update(struct rn_watch_entry *e, const struct stat *st)
{
	if ((e->flags & E_HAVE_ID) && e->ino == st->st_ino && e->size == st->st_size &&
	    e->mtime_ns == mtime_ns(st))
		return 1;
	e->flags = (e->flags & E_REPORTED) | E_HAVE_ID;
	e->ino = st->st_ino;
	e->size = st->st_size;
	e->mtime_ns = mtime_ns(st);
	return 0;
}

/* ---- examining one file ---- */

static void log_file_event(struct rn_watch *w, enum rn_log_level level, const char *event,
			   const struct rn_watch_dir *d, const char *name, const char *k,
			   const char *v)
{
	rn_log(w->opts.log, level, event, RN_LS("dir", d->path), RN_LS("step", d->step),
	       RN_LS("file", name), RN_LS(k, v));
}

static void bad_file(struct rn_watch *w, struct rn_watch_dir *d, struct rn_watch_entry *e,
		     const char *name, const char *why, unsigned how)
{
	e->flags |= E_PENDING;
	if (!(how & EX_FINAL)) {
		log_file_event(w, RN_LOG_DEBUG, "cycle_pending", d, name, "error", why);
		return;
	}
	if (!(e->flags & E_CORRUPT)) {
		e->flags |= E_CORRUPT;
		log_file_event(w, RN_LOG_WARN, "cycle_corrupt", d, name, "error", why);
	}
}

static int is_foreign(struct rn_watch *w, struct rn_watch_dir *d, struct rn_watch_entry *e,
		      const char *name, const struct fg_cycle *c)
{
	if (fg_run_id_accepts(w->opts.run_id, c->run_id))
		return 0;
	if (!(e->flags & E_FOREIGN)) {
		e->flags |= E_FOREIGN;
		rn_log(w->opts.log, RN_LOG_WARN, "cycle_ignored", RN_LS("dir", d->path),
		       RN_LS("step", d->step), RN_LS("file", name), RN_LS("run_id", c->run_id),
		       RN_LS("expected_run_id", w->opts.run_id));
	}
	return 1;
}

static void deliver(struct rn_watch *w, struct rn_watch_dir *d, struct rn_watch_entry *e,
		    const char *name, const struct fg_cycle *c, const struct fg_buf *raw,
		    enum rn_source source, enum fg_seal_status seal)
{
	uint64_t h = fg_hash64(fg_buf_str(raw), raw->len);
	struct rn_cycle_report r = {
		.dir = d->path, .step = d->step, .name = name, .n = e->n, .cycle = c,
		.raw = fg_buf_str(raw), .raw_len = raw->len, .source = source,
		.first = !(e->flags & E_REPORTED), .seal = seal,
	};

	if ((e->flags & E_REPORTED) && e->hash == h && e->len == raw->len)
		return;
	if (w->opts.limit_reports && !rn_cycle_report_admit(w->opts.log, &e->reports, &r))
		return;
	e->flags |= E_REPORTED;
	e->hash = h;
	e->len = raw->len;
	if (w->opts.cb)
		w->opts.cb(w, &r);
}

/* Examines cycle file n, name, in dfd (d's descriptor, borrowed); how
 * holds EX_* flags. EX_WRITTEN reads the file even when its identity
 * looks unchanged: an in-place rewrite of the same length within one
 * timestamp tick, an mtime carried over (cp -p, tar, rsync -t) or an inode
 * reused after delete and create keep (inode, size, mtime) while the
 * content differs; deliver() compares the content. */
static void examine(struct rn_watch *w, struct rn_watch_dir *d, int dfd, const char *name, int n,
		    enum rn_source source, unsigned how)
{
	struct rn_watch_entry *e;
	struct stat st;
	struct fg_cycle c;
	struct fg_buf raw;
	char err[256] = "";
	enum fg_seal_status seal;
	int r, same;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	e = entry_get(d, n);
	if (!e) {
		drop_file(w, d, name, n);
		return;
	}
	same = identity_update(e, &st);
	/* Invalid and untouched for a whole poll interval: no writer is still
	 * at work on it, so say it now rather than at the final sweep. */
	if (same && w->opts.corrupt_when_stable && source == RN_SOURCE_POLL &&
	    (e->flags & E_PENDING) && !(e->flags & E_CORRUPT))
		how |= EX_FINAL;
	if (same && !(how & EX_WRITTEN) &&
	    (!(e->flags & E_PENDING) || !(how & EX_FINAL) || (e->flags & E_CORRUPT)))
		return;
	fg_cycle_init(&c);
	fg_buf_init(&raw, FG_CYCLE_MAX_BYTES);
	r = fg_cycle_read_at(dfd, name, &c, &raw, err, sizeof(err));
	/* The record's own run id: one of another run is refused anyway
	 * (cycle_ignored), and the key is the run's own. */
	seal = r ? FG_SEAL_UNVERIFIED
		 : fg_cycle_seal_check(w->opts.key, d->step, name, n, &c,
							    fg_buf_str(&raw), raw.len);
	if (r == -ENOENT) {
		e->flags &= ~(unsigned)E_HAVE_ID;
	} else if (r == 0 && fg_seal_forged(seal)) {
		if (!is_foreign(w, d, e, name, &c))
			deliver(w, d, e, name, &c, &raw, source, seal);
	} else if (r == 0 && c.cycle != n) {
		snprintf(err, sizeof(err), "field 'cycle' is %d, the file name says %d", c.cycle, n);
		bad_file(w, d, e, name, err, how);
	} else if (r) {
		bad_file(w, d, e, name, err[0] ? err : strerror(-r), how);
	} else if (!is_foreign(w, d, e, name, &c)) {
		deliver(w, d, e, name, &c, &raw, source, seal);
	}
	fg_cycle_release(&c);
	fg_buf_release(&raw);
}

/* Opens the directory from its base, component by component, refusing
 * symlinks below the base; the first refusal of a run of them is logged as
 * step_dir_refused. A descriptor, or a negative errno (-ENOENT, or -ENOTDIR
 * for a refused component). */
static int open_dir(struct rn_watch *w, struct rn_watch_dir *d)
{
	char err[NAME_MAX + 64] = "";
	int base = d->basefd, fd;

	if (base < 0) {
		base = fg_open_dir(AT_FDCWD, d->base, 0);
		if (base < 0)
			return base;
	}
	fd = fg_open_beneath(base, d->rel, 0, err, sizeof(err));
	if (base != d->basefd)
		close(base);
	if (fd >= 0) {
		d->refused = 0;
		return fd;
	}
	if (err[0] && !d->refused)
		rn_log(w->opts.log, RN_LOG_WARN, "step_dir_refused", RN_LS("dir", d->path),
		       RN_LS("step", d->step), RN_LS("error", err));
	d->refused = err[0] != '\0';
	return fd;
}

/*
 * The directory's descriptor: opened from its base on first use and kept
 * (for the first RN_WATCH_MAX_OPEN_DIRS directories), so an inotify event
 * costs no open/close of the directory. It is dropped (dir_close) whenever
 * the directory may no longer be the one we opened: it went away or moved
 * (IN_DELETE_SELF, IN_MOVE_SELF, an ancestor's event), the queue
 * overflowed, and before every poll scan and the final sweep, which
 * therefore walk down from the base again and see a component swapped for
 * a symlink. Returns the descriptor, or a negative errno; the caller
 * passes it to rn__watch_dir_done() when finished (which closes one that was not
 * kept).
 */
int rn__watch_dir_open(struct rn_watch *w, struct rn_watch_dir *d)
{
	int fd;

	if (d->dfd >= 0)
		return d->dfd;
	fd = open_dir(w, d);
	if (fd >= 0 && w->nopen < RN_WATCH_MAX_OPEN_DIRS) {
		d->dfd = fd;
		w->nopen++;
	}
	return fd;
}

void rn__watch_dir_done(struct rn_watch_dir *d, int fd)
{
	if (fd >= 0 && fd != d->dfd)
		close(fd);
}

void rn__watch_dir_close(struct rn_watch *w, struct rn_watch_dir *d)
{
	if (d->dfd >= 0) {
		close(d->dfd);
		w->nopen--;
	}
	d->dfd = -1;
}

void rn__watch_examine_one(struct rn_watch *w, struct rn_watch_dir *d, const char *name,
			   enum rn_source source)
{
	int n, dfd;

	if (!fg_cycle_name_parse(name, &n))
		return;
	dfd = rn__watch_dir_open(w, d);
	if (dfd < 0)
		return;
	examine(w, d, dfd, name, n, source, EX_WRITTEN);
	rn__watch_dir_done(d, dfd);
}

/* Reads the directory through the descriptor we examine files with, so the
 * listing and the reads concern the same directory even if it is replaced.
 * how: EX_FINAL or 0. */
void rn__watch_scan(struct rn_watch *w, struct rn_watch_dir *d, enum rn_source source, unsigned how)
{
	struct fg_cycle_entry *v = NULL;
	size_t nv = 0;
	int dfd = rn__watch_dir_open(w, d);

	if (dfd < 0)
		return;
	if (fg_cycle_list_at(dfd, &v, &nv) == 0) {
		for (size_t i = 0; i < nv; i++)
			examine(w, d, dfd, v[i].name, v[i].n, source, how);
		fg_cycle_entries_free(v, nv);
	}
	rn__watch_dir_done(d, dfd);
}
