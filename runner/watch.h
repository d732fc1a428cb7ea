/*
 * watch.h - detection of review cycle files in step directories, on libuv.
 *
 * A raw inotify descriptor (IN_NONBLOCK|IN_CLOEXEC) is read through a
 * uv_poll_t; uv_fs_event is not used because on Linux it drops
 * IN_Q_OVERFLOW, has no IN_CLOSE_WRITE and goes deaf when the watched
 * directory is deleted. Per directory, a chain of watches, one per path
 * component from its trusted base down (base, base/.forge, base/.forge/STEP
 * for a run), each set on the directory the walk opened (never through a
 * path that could be followed):
 *   - the directory itself reports IN_CLOSE_WRITE|IN_MOVED_TO (a file
 *     written in place or renamed into place);
 *   - each component reports its next one appearing, disappearing, moved
 *     away or replaced (mv .forge attic; mkdir -p .forge/STEP, git clean
 *     -fdx), and itself deleted or moved: the chain is walked again from
 *     the base, the watches it no longer needs are removed
 *     (inotify_rm_watch: 2,000 such moves leave the same few watches, not
 *     2,000), and the directory is rescanned. While the directory does not
 *     exist the chain ends at its deepest existing component. Watches are
 *     shared between directories (the kernel keeps one per inode: counted);
 *   - IN_Q_OVERFLOW rescans every directory;
 *   - when the kernel's watch limit is reached (ENOSPC) the directory falls
 *     back to polling, logged once as a `watch_fallback` warning;
 *   - a poll timer (poll_interval seconds) rescans everything as a safety
 *     net for filesystems where inotify sees nothing; no_inotify makes it
 *     the only mechanism.
 * Detection happens in the inotify callback itself: no debouncing timer.
 *
 * Identity: a file is its canonical name (review_cycle_N.json, nothing else)
 * plus (inode, size, mtime in ns). When the identity changes, or inotify
 * reports the file written or moved in (the identity alone misses a rewrite
 * of the same length within one timestamp tick, a carried-over mtime, or a
 * reused inode), the file is re-read (bounded, O_NOFOLLOW, never blocking on
 * a FIFO); polling relies on the identity alone. Each distinct
 * content is reported once: a rewrite with new content under the same name
 * is reported again (with limit_reports, up to RN_CYCLE_MAX_REPORTS
 * contents per number), an identical rewrite is not. A file that does not parse
 * yet stays pending and is retried on the next event or poll; the final
 * sweep reports it as `cycle_corrupt` and skips it (with corrupt_when_stable
 * already the first poll scan that finds it unchanged). A cycle whose run_id
 * differs from the expected one is ignored with a `cycle_ignored` warning,
 * once per identity; a cycle without run_id is accepted.
 *
 * The step directory is never opened by its full path: each directory has a
 * trusted base, opened as the operator named it, and below it every
 * component is opened with openat(O_NOFOLLOW|O_DIRECTORY) (fg_open_beneath),
 * for every scan, every file read and the inotify watch itself (set through
 * /proc/self/fd on that descriptor). That descriptor is kept while the
 * directory stays where it was (up to RN_WATCH_MAX_OPEN_DIRS directories),
 * so an event costs no open of the directory; it is dropped and the walk
 * done again when the directory or an ancestor is deleted or moved, on a
 * queue overflow, and before every poll scan and the final sweep. For a
 * run the base is the workspace,
 * opened once at the start and held, so W/.forge or W/.forge/STEP replaced
 * by a symlink mid-run is refused (logged once as `step_dir_refused`) and
 * nothing behind it is read. For `watch DIR` the base is DIR's parent as
 * named (opened again by path each time): only DIR itself must not be a
 * symlink.
 *
 * Memory (the files come from an untrusted sandbox): per directory at most
 * RN_WATCH_MAX_CYCLE_FILES cycle numbers are tracked, each as a fixed-size
 * identity and a 64-bit content hash (no content is kept; one file is read
 * at a time into a buffer of at most FG_CYCLE_MAX_BYTES). A cycle file with
 * a number beyond them is never read: it is counted once per number
 * (rn_watch_dropped()) and the first one is logged as a `cycle_limit`
 * warning.
 *
 * Protocol (loop thread only):
 *   1. rn_watch_init(); rn_watch_add() once per directory;
 *   2. rn_watch_start(): arms inotify, scans what is already there (source
 *      poll), starts the timer;
 *   3. reports arrive through opts.cb while the loop runs;
 *   4. optionally rn_watch_drain() (process queued events now, e.g. when
 *      the container exited) and rn_watch_sweep() (synchronous final scan,
 *      source sweep);
 *   5. rn_watch_close(): closes every handle; close_cb runs once all are
 *      closed and the watcher's memory is freed; then w may be freed.
 */
#ifndef RN_WATCH_H
#define RN_WATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "cycle_report.h"
#include "forge/cycle.h"
#include "log.h"
/* Directories whose descriptor stays open between events (one each); the
 * ones past it are opened again for every event. Far below the usual
 * 1,024-descriptor limit. */
#define RN_WATCH_MAX_OPEN_DIRS 256

struct rn_watch;
typedef void (*rn_watch_cb)(struct rn_watch *w, const struct rn_cycle_report *r);
typedef void (*rn_watch_close_cb)(struct rn_watch *w);

struct rn_watch_opts {
	double poll_interval;   /* seconds, > 0 */
	int no_inotify;         /* 1: poll only */
	const char *run_id;     /* expected run_id, NULL: accept any (borrowed, must outlive w) */
	/* The run's seal key (borrowed, must outlive w), or NULL: every report
	 * says FG_SEAL_UNVERIFIED. With a key each file's seal is checked for
	 * its place (run_id, else the file's own; the step; its name and
	 * number) and a forgery is reported once per content with its status
	 * (unsealed, bad_seal, replayed: the seal of another cycle number),
	 * before the checks of its content against its name. */
	const struct fg_seal_key *key;
	size_t max_watches;     /* 0: no limit; else dir watches beyond it behave as ENOSPC (tests) */
	/* 1: a file found invalid and still unchanged (same identity) at a later
	 * poll scan is reported cycle_corrupt then, not only at the final sweep
	 * (`forge-runner watch`, which may run for hours). */
	int corrupt_when_stable;
	/* 1: each cycle number is delivered for at most RN_CYCLE_MAX_REPORTS
	 * distinct contents, then logged once as cycle_rewrite_limit
	 * (rn_cycle_report_admit()) and no more (`forge-runner watch`; a run
	 * applies the limit across all its sources in the session). */
	int limit_reports;
	struct rn_log *log;     /* warnings (borrowed) */
	/* The step every directory's events name (borrowed, must outlive w),
	 * or NULL: each directory's last component. A --cycle-dir such as
	 * .forge/reviews/KEY__skill is not named after the step. */
	const char *step;
	rn_watch_cb cb;
	void *data;             /* for the callback */
};

struct rn_watch_entry;
struct rn_watch_dir;

/* One inotify watch (one per inode: the kernel merges watches on the same
 * inode), shared by the directories whose chains hold it. */
struct rn_watch_wd {
	int wd;
	unsigned refs;
};

struct rn_watch {
	uv_loop_t *loop;
	struct rn_watch_opts opts;
	int ifd;                        /* inotify descriptor, -1 when polling only */
	uv_poll_t poll;
	uv_timer_t timer;
	struct rn_watch_dir *dirs;      /* owned */
	size_t ndirs, dirs_cap;
	struct rn_watch_wd *wds;        /* owned: every watch held, each once */
	size_t nwds, wds_cap;
	size_t nwatches;                /* directories watched themselves (for max_watches) */
	size_t nopen;                   /* directory descriptors kept open */
	int started;
	int pending_closes;
	rn_watch_close_cb close_cb;
	char *buf;                      /* inotify read buffer, fixed size, owned */
};

/* Fills w; nothing is started. opts is copied (its pointers stay borrowed). 0. */
int rn_watch_init(struct rn_watch *w, uv_loop_t *loop, const struct rn_watch_opts *opts);
/* Adds a directory (need not exist yet; made absolute). Before start only.
 * Its parent is the trusted base, opened by path whenever the directory is.
 * A duplicate of an added directory is ignored. 0 or negative errno. */
int rn_watch_add(struct rn_watch *w, const char *dir);
/* Adds base/rel (rel: one or more plain names separated by '/'): base is
 * opened now and the descriptor held until close (-errno when it cannot be
 * opened, nothing added); no component of rel is followed if it is a
 * symlink. Before start only; a duplicate is ignored. */
int rn_watch_add_beneath(struct rn_watch *w, const char *base, const char *rel);
/* Starts watching; inotify problems fall back to polling with a warning. 0 or -errno
 * (a uv error starting the timer). */
int rn_watch_start(struct rn_watch *w);
/* Reads and handles every queued inotify event now (source watch). */
void rn_watch_drain(struct rn_watch *w);
/* Final synchronous scan of every directory (source sweep); files that still
 * do not parse are reported as cycle_corrupt. */
void rn_watch_sweep(struct rn_watch *w);
/* Distinct cycle numbers left untracked (past RN_WATCH_MAX_CYCLE_FILES) in
 * all directories so far. Before rn_watch_close() only. */
size_t rn_watch_dropped(const struct rn_watch *w);
/* Closes all handles; cb (may be NULL) runs when all are closed and memory is freed. */
void rn_watch_close(struct rn_watch *w, rn_watch_close_cb cb);

#endif
