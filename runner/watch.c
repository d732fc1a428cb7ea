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

#define WATCH_BUF_SIZE (64 * 1024)
#define DIR_MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | \
		  IN_ONLYDIR | IN_DONT_FOLLOW | IN_MASK_ADD)
#define ANC_MASK (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | \
		  IN_ONLYDIR | IN_MASK_ADD)
#define GONE_MASK (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)

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

/* Watches the directory rn__watch_dir_open() reaches, through /proc/self/fd, so a
 * symlink swapped in above it is never followed by the watch either; the
 * path (last component not followed) only when /proc is not mounted.
 * 0, or a negative errno (-ENOENT, -ENOTDIR: not there or refused). */
static int add_dir_watch(struct rn_watch *w, struct rn_watch_dir *d)
{
	char proc[64];
	int wd, dfd;

	if (w->opts.max_watches && w->nwatches >= w->opts.max_watches)
		return -ENOSPC;
	dfd = rn__watch_dir_open(w, d);
	if (dfd < 0)
		return dfd;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dfd);
	wd = inotify_add_watch(w->ifd, proc, DIR_MASK & ~(uint32_t)IN_DONT_FOLLOW);
	if (wd < 0 && errno == ENOENT)
		wd = inotify_add_watch(w->ifd, d->path, DIR_MASK);
	if (wd < 0)
		wd = -errno;
	rn__watch_dir_done(d, dfd);
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
		rn__watch_examine_one(w, d, ev->name, RN_SOURCE_WATCH);
	if (ev->mask & GONE_MASK) {
		/* A directory moved away keeps its watch on the moved inode: drop it,
		 * or its events would be taken for ours. */
		if ((ev->mask & IN_MOVE_SELF) && d->wd >= 0)
			inotify_rm_watch(w->ifd, d->wd);
		d->wd = -1;
		d->rearm = 1;
		rn__watch_dir_close(w, d);
	}
}

static void on_anc_event(struct rn_watch *w, struct rn_watch_dir *d,
			 const struct inotify_event *ev)
{
	if (ev->mask & GONE_MASK) {
		d->anc_wd = -1;
		d->rearm = 1;
		rn__watch_dir_close(w, d);
	} else if (ev->len && d->anc_next && !strcmp(ev->name, d->anc_next)) {
		/* The next component appeared, or was deleted: the descriptor we
		 * hold keeps a deleted directory (and so its ancestors) alive,
		 * which holds back their IN_DELETE_SELF until it is closed. */
		if (ev->mask & IN_DELETE)
			rn__watch_dir_close(w, d);
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
		rn__watch_dir_close(w, d);
		arm(w, d);
		rn__watch_scan(w, d, RN_SOURCE_WATCH, 0);
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
		rn__watch_dir_close(w, d);
		/* A directory that appeared where inotify could not tell us. */
		if (w->ifd >= 0 && d->wd < 0)
			arm(w, d);
		rn__watch_scan(w, d, RN_SOURCE_POLL, 0);
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
		rn__watch_scan(w, &w->dirs[i], RN_SOURCE_POLL, 0);
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
		rn__watch_dir_close(w, &w->dirs[i]);
		rn__watch_scan(w, &w->dirs[i], RN_SOURCE_SWEEP, EX_FINAL);
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
		rn__watch_dir_close(w, &w->dirs[i]);
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
