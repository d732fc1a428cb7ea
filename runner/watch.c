/*
 * watch.c - inotify + poll detection of cycle files (see watch.h).
 *
 * Events are matched to directories by scanning the directory array and
 * each one's chain: O(directories x depth) per event, which stays far below
 * a microsecond per event for a thousand directories and needs no second
 * index to keep consistent. The kernel keeps one watch per inode and
 * inotify descriptor, so directories with a common ancestor share its
 * watch: the table w->wds counts who holds each, and a watch is removed
 * (inotify_rm_watch) when its last holder lets it go. Every watch uses the
 * same mask, so sharing never narrows what one of them reports.
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
/* Files written or renamed in (the directory itself), a component created,
 * deleted, moved in or away (its parent), the component itself gone. */
#define WATCH_MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | \
		    IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
#define CHILD_MASK (IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)
#define SELF_MASK (IN_DELETE_SELF | IN_MOVE_SELF)

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
	fg_strvec_init(&d->comp);
	for (char *c = rel, *e; *c; c = *e ? e + 1 : e) {
		e = strchrnul(c, '/');
		if (e > c)
			fg_strvec_push_take(&d->comp, fg_xstrndup(c, (size_t)(e - c)));
	}
	d->chain = fg_xcalloc(d->comp.n + 1, sizeof(*d->chain));
	d->above_wd = -1;
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

/* ---- the watch table ---- */

static struct rn_watch_wd *wd_find(struct rn_watch *w, int wd)
{
	for (size_t i = 0; i < w->nwds; i++)
		if (w->wds[i].wd == wd)
			return &w->wds[i];
	return NULL;
}

/* One more holder of wd (just returned by inotify_add_watch). */
static void wd_take(struct rn_watch *w, int wd)
{
	struct rn_watch_wd *t = wd_find(w, wd);

	if (t) {
		t->refs++;
		return;
	}
	FG_ALLOC_GROW(w->wds, w->nwds + 1, w->wds_cap);
	w->wds[w->nwds++] = (struct rn_watch_wd){ .wd = wd, .refs = 1 };
}

/* One holder less; the last one removes the watch. gone: the kernel
 * already removed it (IN_IGNORED). */
static void wd_release(struct rn_watch *w, int wd, int gone)
{
	struct rn_watch_wd *t = wd_find(w, wd);

	if (!t || (--t->refs && !gone))
		return;
	if (!gone)
		inotify_rm_watch(w->ifd, wd);
	*t = w->wds[--w->nwds];
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

/* Lets go of the chain's levels from `from` down. */
static void disarm(struct rn_watch *w, struct rn_watch_dir *d, size_t from)
{
	while (d->armed > from) {
		size_t level = --d->armed;

		if (level == d->comp.n)
			w->nwatches--;
		wd_release(w, d->chain[level], 0);
	}
}

/* The path of the chain's level (owned): only for a watch set by path,
 * when /proc is not mounted. */
static char *level_path(const struct rn_watch_dir *d, size_t level)
{
	char *p = fg_xstrdup(d->base);

	for (size_t i = 0; i < level; i++) {
		char *q = fg_path_join(p, d->comp.v[i]);

		free(p);
		p = q;
	}
	return p;
}

/* Watches the directory fd of the chain's level through /proc/self/fd (so
 * nothing is followed), by path only when /proc is not mounted. A watch
 * already held at that level stays when it is the same (the kernel gives
 * the same descriptor for the same inode); another one replaces it, and
 * the levels below go. 0, or a negative errno. */
static int arm_level(struct rn_watch *w, struct rn_watch_dir *d, size_t level, int fd)
{
	char proc[64];
	int wd;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	wd = inotify_add_watch(w->ifd, proc, WATCH_MASK);
	if (wd < 0 && errno == ENOENT) {
		char *path = level_path(d, level);

		wd = inotify_add_watch(w->ifd, path, WATCH_MASK | IN_DONT_FOLLOW);
		free(path);
	}
	if (wd < 0)
		return -errno;
	if (level < d->armed && d->chain[level] == wd)
		return 0;
	disarm(w, d, level);
	if (level == d->comp.n && w->opts.max_watches && w->nwatches >= w->opts.max_watches) {
		/* The test-only limit: as if the kernel's were reached. */
		if (!wd_find(w, wd))
			inotify_rm_watch(w->ifd, wd);
		return -ENOSPC;
	}
	wd_take(w, wd);
	d->chain[level] = wd;
	d->armed = level + 1;
	w->nwatches += level == d->comp.n;
	return 0;
}

static void unwatch_above(struct rn_watch *w, struct rn_watch_dir *d)
{
	if (d->above_wd >= 0)
		wd_release(w, d->above_wd, 0);
	d->above_wd = -1;
	free(d->above_next);
	d->above_next = NULL;
}

/* A base opened by path that is not there: its nearest existing ancestor
 * is watched for the next component appearing. 1 when that component
 * exists once the watch is in place (created between our look and the
 * watch, so its event was never queued): the caller walks again. */
static int watch_above(struct rn_watch *w, struct rn_watch_dir *d)
{
	char *p = fg_xstrdup(d->base);
	int raced = 0;

	unwatch_above(w, d);
	for (char *slash = strrchr(p, '/'); slash; slash = strrchr(p, '/')) {
		int wd;
		struct stat st;

		free(d->above_next);
		d->above_next = fg_xstrdup(slash + 1);
		slash[slash == p] = '\0';
		wd = inotify_add_watch(w->ifd, p, WATCH_MASK);
		if (wd >= 0) {
			char *next = fg_path_join(p, d->above_next);

			wd_take(w, wd);
			d->above_wd = wd;
			raced = fstatat(AT_FDCWD, next, &st, AT_SYMLINK_NOFOLLOW) == 0;
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

/*
 * Walks d from its base, one component at a time (openat, O_NOFOLLOW),
 * and watches each directory it opens; a component that is missing or not
 * a directory (a symlink is refused) ends the chain, its parent's watch
 * saying when it appears. The watch is set on each directory before its
 * child is looked up, so a child created meanwhile is never missed.
 */
static void arm(struct rn_watch *w, struct rn_watch_dir *d)
{
	int fd = d->basefd >= 0 ? d->basefd : fg_open_dir(AT_FDCWD, d->base, 0);

	/* A few rounds when the base's ancestors grow while we look. */
	for (int round = 0; fd < 0 && round < 8 && w->ifd >= 0 && !d->fallback; round++) {
		disarm(w, d, 0);
		if (!watch_above(w, d))
			return;
		fd = fg_open_dir(AT_FDCWD, d->base, 0);
	}
	if (fd >= 0)
		unwatch_above(w, d);
	if (w->ifd < 0 || d->fallback || fd < 0) {
		if (fd >= 0 && fd != d->basefd)
			close(fd);
		disarm(w, d, 0);
		return;
	}
	for (size_t level = 0;; level++) {
		int r = arm_level(w, d, level, fd), child = -1;

		if (r == 0 && level < d->comp.n)
			child = fg_open_dir(fd, d->comp.v[level], FG_DIR_NOFOLLOW);
		if (fd != d->basefd)
			close(fd);
		if (r < 0) {
			disarm(w, d, 0);
			fallback(w, d, -r);
			return;
		}
		if (child < 0) {
			disarm(w, d, level + 1);
			return;
		}
		fd = child;
	}
}

/* ---- inotify events ---- */

/* The kernel removed wd (its directory was deleted): whoever held it lets
 * go of the levels below it and walks again. */
static void on_ignored(struct rn_watch *w, int wd)
{
	if (!wd_find(w, wd))
		return;   /* one we removed ourselves */
	for (size_t i = 0; i < w->ndirs; i++) {
		struct rn_watch_dir *d = &w->dirs[i];

		for (size_t level = 0; level < d->armed; level++) {
			if (d->chain[level] != wd)
				continue;
			disarm(w, d, level + 1);
			/* The lost level itself is not released: it is gone. */
			w->nwatches -= level == d->comp.n;
			d->armed = level;
			d->rearm = 1;
			break;
		}
	}
	for (size_t i = 0; i < w->ndirs; i++) {
		if (w->dirs[i].above_wd == wd) {
			w->dirs[i].above_wd = -1;
			w->dirs[i].rearm = 1;
		}
	}
	wd_release(w, wd, 1);
}

/* An event of the watch at the chain's level of d. */
static void on_level_event(struct rn_watch *w, struct rn_watch_dir *d, size_t level,
			   const struct inotify_event *ev)
{
	if (level == d->comp.n && (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO)) && ev->len)
		rn__watch_examine_one(w, d, ev->name, RN_SOURCE_WATCH);
	if (level < d->comp.n && (ev->mask & CHILD_MASK) && ev->len &&
	    !strcmp(ev->name, d->comp.v[level])) {
		/* The next component appeared, went or was replaced. The
		 * descriptor we hold keeps a deleted directory (and so its
		 * ancestors) alive, which holds back their IN_DELETE_SELF
		 * until it is closed. */
		rn__watch_dir_close(w, d);
		d->rearm = 1;
	}
	if (ev->mask & SELF_MASK) {
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
	if (ev->mask & IN_IGNORED) {
		on_ignored(w, ev->wd);
		return;
	}
	for (size_t i = 0; i < w->ndirs; i++) {
		struct rn_watch_dir *d = &w->dirs[i];

		for (size_t level = 0; level < d->armed; level++)
			if (ev->wd == d->chain[level])
				on_level_event(w, d, level, ev);
		if (ev->wd == d->above_wd && ((ev->mask & SELF_MASK) ||
		    (ev->len && (ev->mask & CHILD_MASK) && !strcmp(ev->name, d->above_next))))
			d->rearm = 1;
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
		 * directory replaced, or one that appeared, where inotify could
		 * not tell us; the chain follows it. */
		rn__watch_dir_close(w, d);
		if (w->ifd >= 0)
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
		fg_strvec_release(&w->dirs[i].comp);
		FG_FREE_ALL(w->dirs[i].chain, w->dirs[i].above_next, w->dirs[i].e,
			    w->dirs[i].dropped);
	}
	FG_FREE_AND_NULL(w->dirs);
	/* Closing the descriptor removes every watch. */
	FG_FREE_AND_NULL(w->wds);
	w->nwds = 0;
	w->ndirs = 0;
	w->dirs_cap = 0;
	FG_FREE_AND_NULL(w->buf);
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
