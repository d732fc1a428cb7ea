/*
 * watch.c - inotify + poll detection of cycle files (see watch.h).
 *
 * Events are matched to directories by scanning the directory array: O(number
 * of directories) per event, which stays far below a microsecond per event
 * for a thousand directories and needs no second index to keep consistent.
 * Ancestor watches that are no longer needed are left in place (watches are
 * shared between directories with a common parent, and an extra watch only
 * costs an ignored event); closing the descriptor drops them all.
 */
#include "watch.h"

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

#define WATCH_BUF_SIZE (64 * 1024)
#define DIR_MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | \
		  IN_ONLYDIR | IN_DONT_FOLLOW | IN_MASK_ADD)
#define ANC_MASK (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | \
		  IN_ONLYDIR | IN_MASK_ADD)
#define GONE_MASK (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)

enum {
	E_HAVE_ID = 1,      /* ino/size/mtime hold the last examined identity */
	E_REPORTED = 2,     /* hash/len hold the last reported content */
	E_PENDING = 4,      /* the examined identity did not parse */
	E_FOREIGN = 8,      /* the examined identity had another run_id (warned) */
	E_CORRUPT = 16,     /* the examined identity was reported corrupt */
};

struct rn_watch_entry {
	int n;
	unsigned flags;
	ino_t ino;
	off_t size;
	long long mtime_ns;
	uint64_t hash;
	size_t len;
};

struct rn_watch_dir {
	char *path;        /* absolute: base + "/" + rel (for logs and ancestor watches) */
	const char *step;  /* opts.step, else the last component (into path) */
	char *base;        /* owned: the trusted directory, absolute */
	int basefd;        /* owned descriptor of base, or -1: base is opened by path */
	char *rel;         /* owned: components below base, none followed if a symlink */
	int dfd;           /* owned descriptor of the directory itself, or < 0: not open */
	int refused;       /* step_dir_refused was logged for the current refusal */
	int wd;            /* watch on the directory, -1 when none */
	int anc_wd;        /* watch on the parent or nearest existing ancestor */
	char *anc_next;    /* owned: child of the ancestor on the way to path */
	int fallback;      /* inotify unavailable for it: polled only (logged) */
	int rearm;         /* re-arm and rescan after the current event batch */
	struct rn_watch_entry *e;  /* sorted by n, at most RN_WATCH_MAX_CYCLE_FILES */
	size_t ne, cap;
	unsigned char *dropped;    /* owned bitmap over 1..FG_CYCLE_NUMBER_MAX, or NULL */
	size_t ndropped;           /* bits set in it */
};

int rn_watch_init(struct rn_watch *w, uv_loop_t *loop, const struct rn_watch_opts *opts)
{
	memset(w, 0, sizeof(*w));
	w->loop = loop;
	w->opts = *opts;
	w->ifd = -1;
	return 0;
}

static char *absolute_path(const char *dir)
{
	char buf[PATH_MAX];
	char *p;
	size_t n;

	/* An existing directory is resolved once, so a symlink the user named
	 * is followed here and never later (the watches use IN_DONT_FOLLOW). */
	if (realpath(dir, buf))
		return fg_xstrdup(buf);
	if (dir[0] == '/' || !getcwd(buf, sizeof(buf)))
		p = fg_xstrdup(dir);
	else
		p = fg_path_join(buf, dir);
	n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	return p;
}

static struct rn_watch_dir *dir_new(struct rn_watch *w, char *path, char *base, char *rel,
				    int basefd)
{
	struct rn_watch_dir *d;
	char *slash;

	for (size_t i = 0; i < w->ndirs; i++) {
		if (!strcmp(w->dirs[i].path, path)) {
			free(path);
			free(base);
			free(rel);
			if (basefd >= 0)
				close(basefd);
			return NULL;
		}
	}
	FG_ALLOC_GROW(w->dirs, w->ndirs + 1, w->dirs_cap);
	d = &w->dirs[w->ndirs++];
	memset(d, 0, sizeof(*d));
	d->path = path;
	slash = strrchr(path, '/');
	d->step = w->opts.step ? w->opts.step : slash ? slash + 1 : path;
	d->base = base;
	d->basefd = basefd;
	d->rel = rel;
	d->dfd = -1;
	d->wd = -1;
	d->anc_wd = -1;
	return d;
}

int rn_watch_add(struct rn_watch *w, const char *dir)
{
	char *path = absolute_path(dir);
	char *base, *rel;

	/* The operator named the parent: it is trusted as named, and only the
	 * last component is refused when it is a symlink. */
	if (fg_path_split(path, &base, &rel)) {
		free(path);
		return -EINVAL;
	}
	dir_new(w, path, base, rel, -1);
	return 0;
}

int rn_watch_add_beneath(struct rn_watch *w, const char *base, const char *rel)
{
	char *abase = absolute_path(base);
	int fd;

	fd = fg_open_dir(AT_FDCWD, abase, 0);
	if (fd < 0) {
		free(abase);
		return fd;
	}
	dir_new(w, fg_path_join(abase, rel), abase, fg_xstrdup(rel), fd);
	return 0;
}

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

/* How examine() treats a file. */
enum {
	/* The final sweep: a file that still does not parse is reported
	 * cycle_corrupt (before it, it stays pending). */
	EX_FINAL = 1,
	/* inotify says the file was just written or moved into place: read it
	 * even when its identity looks unchanged. */
	EX_WRITTEN = 2,
};

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
		    enum rn_source source)
{
	uint64_t h = fg_hash64(fg_buf_str(raw), raw->len);
	struct rn_cycle_report r = {
		.dir = d->path, .step = d->step, .name = name, .n = e->n, .cycle = c,
		.raw = fg_buf_str(raw), .raw_len = raw->len, .source = source,
		.first = !(e->flags & E_REPORTED),
	};

	if ((e->flags & E_REPORTED) && e->hash == h && e->len == raw->len)
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
	if (r == -ENOENT) {
		e->flags &= ~(unsigned)E_HAVE_ID;
	} else if (r == 0 && c.cycle != n) {
		snprintf(err, sizeof(err), "field 'cycle' is %d, the file name says %d", c.cycle, n);
		bad_file(w, d, e, name, err, how);
	} else if (r) {
		bad_file(w, d, e, name, err[0] ? err : strerror(-r), how);
	} else if (!is_foreign(w, d, e, name, &c)) {
		deliver(w, d, e, name, &c, &raw, source);
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
 * passes it to dir_done() when finished (which closes one that was not
 * kept).
 */
static int dir_open(struct rn_watch *w, struct rn_watch_dir *d)
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

static void dir_done(struct rn_watch_dir *d, int fd)
{
	if (fd >= 0 && fd != d->dfd)
		close(fd);
}

static void dir_close(struct rn_watch *w, struct rn_watch_dir *d)
{
	if (d->dfd >= 0) {
		close(d->dfd);
		w->nopen--;
	}
	d->dfd = -1;
}

static void examine_one(struct rn_watch *w, struct rn_watch_dir *d, const char *name,
			enum rn_source source)
{
	int n, dfd;

	if (!fg_cycle_name_parse(name, &n))
		return;
	dfd = dir_open(w, d);
	if (dfd < 0)
		return;
	examine(w, d, dfd, name, n, source, EX_WRITTEN);
	dir_done(d, dfd);
}

/* Reads the directory through the descriptor we examine files with, so the
 * listing and the reads concern the same directory even if it is replaced.
 * how: EX_FINAL or 0. */
static void scan(struct rn_watch *w, struct rn_watch_dir *d, enum rn_source source, unsigned how)
{
	struct fg_cycle_entry *v = NULL;
	size_t nv = 0;
	int dfd = dir_open(w, d);

	if (dfd < 0)
		return;
	if (fg_cycle_list_at(dfd, &v, &nv) == 0) {
		for (size_t i = 0; i < nv; i++)
			examine(w, d, dfd, v[i].name, v[i].n, source, how);
		fg_cycle_entries_free(v, nv);
	}
	dir_done(d, dfd);
}

/* ---- arming ---- */

static void fallback(struct rn_watch *w, struct rn_watch_dir *d, int err)
{
	if (d->fallback)
		return;
	d->fallback = 1;
	rn_log(w->opts.log, RN_LOG_WARN, "watch_fallback", RN_LS("dir", d->path),
	       RN_LS("step", d->step), RN_LS("reason", strerror(err)),
	       RN_LN("poll_interval", w->opts.poll_interval));
}

/* Watches the directory dir_open() reaches, through /proc/self/fd, so a
 * symlink swapped in above it is never followed by the watch either; the
 * path (last component not followed) only when /proc is not mounted.
 * 0, or a negative errno (-ENOENT, -ENOTDIR: not there or refused). */
static int add_dir_watch(struct rn_watch *w, struct rn_watch_dir *d)
{
	char proc[64];
	int wd, dfd;

	if (w->opts.max_watches && w->nwatches >= w->opts.max_watches)
		return -ENOSPC;
	dfd = dir_open(w, d);
	if (dfd < 0)
		return dfd;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dfd);
	wd = inotify_add_watch(w->ifd, proc, DIR_MASK & ~(uint32_t)IN_DONT_FOLLOW);
	if (wd < 0 && errno == ENOENT)
		wd = inotify_add_watch(w->ifd, d->path, DIR_MASK);
	if (wd < 0)
		wd = -errno;
	dir_done(d, dfd);
	if (wd < 0)
		return wd;
	w->nwatches++;
	d->wd = wd;
	return 0;
}

/* Watches the nearest existing ancestor of d for the next component
 * appearing. Returns 1 when that component exists once the watch is in
 * place: it was created between our failed look and the watch, so its
 * creation event was never queued and the caller must arm again. */
static int arm_ancestor(struct rn_watch *w, struct rn_watch_dir *d)
{
	char *p = fg_xstrdup(d->path);
	int raced = 0;

	for (;;) {
		char *slash = strrchr(p, '/');
		int wd;

		if (!slash)
			break;
		free(d->anc_next);
		d->anc_next = fg_xstrdup(slash + 1);
		if (slash == p)
			slash[1] = '\0';
		else
			*slash = '\0';
		/* Below the base (W/.forge for a run) a symlink is not followed:
		 * the nearest real directory above it is watched instead. */
		wd = inotify_add_watch(w->ifd, p, strlen(p) > strlen(d->base) ?
				       ANC_MASK | IN_DONT_FOLLOW : ANC_MASK);
		if (wd >= 0) {
			struct stat st;

			char *next = fg_path_join(p, d->anc_next);

			d->anc_wd = wd;
			raced = d->wd < 0 && fstatat(AT_FDCWD, next, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
				S_ISDIR(st.st_mode);
			free(next);
			break;
		}
		if (errno == ENOSPC || errno == ENOMEM) {
			fallback(w, d, errno);
			break;
		}
		if (slash == p)
			break;
	}
	free(p);
	return raced;
}

static void arm(struct rn_watch *w, struct rn_watch_dir *d)
{
	/* A few rounds: each one that races with the tree growing (mkdir -p
	 * of W/.forge/STEP while we arm) goes one level deeper. */
	for (int round = 0; round < 8; round++) {
		int r = 0;

		if (w->ifd < 0 || d->fallback)
			return;
		if (d->wd < 0)
			r = add_dir_watch(w, d);
		if (r < 0 && r != -ENOENT && r != -ENOTDIR)
			fallback(w, d, -r);
		if (d->fallback || !arm_ancestor(w, d))
			return;
	}
}

/* ---- inotify events ---- */

static void on_dir_event(struct rn_watch *w, struct rn_watch_dir *d,
			 const struct inotify_event *ev)
{
	if ((ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO)) && ev->len)
		examine_one(w, d, ev->name, RN_SOURCE_WATCH);
	if (ev->mask & GONE_MASK) {
		/* A directory moved away keeps its watch on the moved inode: drop it,
		 * or its events would be taken for ours. */
		if ((ev->mask & IN_MOVE_SELF) && d->wd >= 0)
			inotify_rm_watch(w->ifd, d->wd);
		d->wd = -1;
		d->rearm = 1;
		dir_close(w, d);
	}
}

static void on_anc_event(struct rn_watch *w, struct rn_watch_dir *d,
			 const struct inotify_event *ev)
{
	if (ev->mask & GONE_MASK) {
		d->anc_wd = -1;
		d->rearm = 1;
		dir_close(w, d);
	} else if (ev->len && d->anc_next && !strcmp(ev->name, d->anc_next)) {
		/* The next component appeared, or was deleted: the descriptor we
		 * hold keeps a deleted directory (and so its ancestors) alive,
		 * which holds back their IN_DELETE_SELF until it is closed. */
		if (ev->mask & IN_DELETE)
			dir_close(w, d);
		d->rearm = 1;
	}
}

static void on_event(struct rn_watch *w, const struct inotify_event *ev)
{
	if (ev->mask & IN_Q_OVERFLOW) {
		rn_log_event(w->opts.log, RN_LOG_WARN, "watch_overflow", NULL, 0);
		for (size_t i = 0; i < w->ndirs; i++)
			w->dirs[i].rearm = 1;
		return;
	}
	for (size_t i = 0; i < w->ndirs; i++) {
		struct rn_watch_dir *d = &w->dirs[i];

		if (ev->wd == d->wd)
			on_dir_event(w, d, ev);
		if (ev->wd == d->anc_wd)
			on_anc_event(w, d, ev);
	}
}

static void rearm_marked(struct rn_watch *w)
{
	for (size_t i = 0; i < w->ndirs; i++) {
		struct rn_watch_dir *d = &w->dirs[i];

		if (!d->rearm)
			continue;
		d->rearm = 0;
		dir_close(w, d);
		arm(w, d);
		scan(w, d, RN_SOURCE_WATCH, 0);
	}
}

/* Reads until the queue is empty, one bounded buffer at a time. */
void rn_watch_drain(struct rn_watch *w)
{
	if (w->ifd < 0)
		return;
	for (;;) {
		ssize_t n = read(w->ifd, w->buf, WATCH_BUF_SIZE);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (char *p = w->buf; p < w->buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(void *)p;

			on_event(w, ev);
			p += sizeof(*ev) + ev->len;
		}
		rearm_marked(w);
	}
}

static void on_inotify(uv_poll_t *h, int status, int events)
{
	(void)events;
	if (status < 0)
		return;
	rn_watch_drain(h->data);
}

static void on_poll_timer(uv_timer_t *t)
{
	struct rn_watch *w = t->data;

	for (size_t i = 0; i < w->ndirs; i++) {
		struct rn_watch_dir *d = &w->dirs[i];

		/* Walked down from the base again: the safety net also notices a
		 * directory replaced where inotify could not tell us. */
		dir_close(w, d);
		/* A directory that appeared where inotify could not tell us. */
		if (w->ifd >= 0 && d->wd < 0)
			arm(w, d);
		scan(w, d, RN_SOURCE_POLL, 0);
	}
}

static void start_inotify(struct rn_watch *w)
{
	int r;

	w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->ifd < 0) {
		for (size_t i = 0; i < w->ndirs; i++)
			fallback(w, &w->dirs[i], errno);
		return;
	}
	r = uv_poll_init(w->loop, &w->poll, w->ifd);
	if (r == 0) {
		w->poll.data = w;
		r = uv_poll_start(&w->poll, UV_READABLE, on_inotify);
		w->pending_closes |= 1;
	}
	if (r) {
		for (size_t i = 0; i < w->ndirs; i++)
			fallback(w, &w->dirs[i], -r);
	}
}

int rn_watch_start(struct rn_watch *w)
{
	uint64_t ms;
	int r;

	w->buf = fg_xmalloc(WATCH_BUF_SIZE);
	w->started = 1;
	if (!w->opts.no_inotify)
		start_inotify(w);
	for (size_t i = 0; i < w->ndirs; i++) {
		arm(w, &w->dirs[i]);
		scan(w, &w->dirs[i], RN_SOURCE_POLL, 0);
	}
	r = uv_timer_init(w->loop, &w->timer);
	if (r)
		return r;
	w->pending_closes |= 2;
	w->timer.data = w;
	ms = (uint64_t)(w->opts.poll_interval * 1000.0 + 0.5);
	if (ms == 0)
		ms = 1;
	return uv_timer_start(&w->timer, on_poll_timer, ms, ms);
}

void rn_watch_sweep(struct rn_watch *w)
{
	for (size_t i = 0; i < w->ndirs; i++) {
		dir_close(w, &w->dirs[i]);
		scan(w, &w->dirs[i], RN_SOURCE_SWEEP, EX_FINAL);
	}
}

static void free_all(struct rn_watch *w)
{
	for (size_t i = 0; i < w->ndirs; i++) {
		free(w->dirs[i].path);
		free(w->dirs[i].base);
		free(w->dirs[i].rel);
		if (w->dirs[i].basefd >= 0)
			close(w->dirs[i].basefd);
		dir_close(w, &w->dirs[i]);
		free(w->dirs[i].anc_next);
		free(w->dirs[i].e);
		free(w->dirs[i].dropped);
	}
	free(w->dirs);
	w->dirs = NULL;
	w->ndirs = 0;
	w->dirs_cap = 0;
	free(w->buf);
	w->buf = NULL;
	if (w->ifd >= 0)
		close(w->ifd);
	w->ifd = -1;
	if (w->close_cb)
		w->close_cb(w);
}

static void on_closed(uv_handle_t *h)
{
	struct rn_watch *w = h->data;

	w->pending_closes &= h == (uv_handle_t *)&w->poll ? ~1 : ~2;
	if (!w->pending_closes)
		free_all(w);
}

void rn_watch_close(struct rn_watch *w, rn_watch_close_cb cb)
{
	w->close_cb = cb;
	if (!w->pending_closes) {
		free_all(w);
		return;
	}
	if (w->pending_closes & 1) {
		w->poll.data = w;
		uv_close((uv_handle_t *)&w->poll, on_closed);
	}
	if (w->pending_closes & 2) {
		w->timer.data = w;
		uv_close((uv_handle_t *)&w->timer, on_closed);
	}
}
