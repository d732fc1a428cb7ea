/*
 * watch_internal.h - what the two halves of the watch share: watch.c
 * (directories, inotify arming and events, the poll timer, the final
 * sweep, closing) and watch_scan.c (the identity table, examining one file,
 * opening a directory from its trusted base, scanning it). watch.h is the
 * module's contract. Loop thread only.
 */
#ifndef RN_WATCH_INTERNAL_H
#define RN_WATCH_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "watch.h"
#include "forge/buf.h"

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
	unsigned reports;   /* distinct contents delivered (opts.limit_reports) */
};

struct rn_watch_dir {
	char *path;        /* absolute: base + "/" + rel (for logs and ancestor watches) */
	const char *step;  /* opts.step, else the last component (into path) */
	char *base;        /* owned: the trusted directory, absolute */
	int basefd;        /* owned descriptor of base, or -1: base is opened by path */
	char *rel;         /* owned: components below base, none followed if a symlink */
	int dfd;           /* owned descriptor of the directory itself, or < 0: not open */
	int refused;       /* step_dir_refused was logged for the current refusal */
	struct fg_strvec comp;  /* owned: the components of rel, in order */
	/* The watch chain: chain[0] watches the base, chain[i] the directory
	 * base/comp[0]/.../comp[i-1], chain[comp.n] the directory itself; the
	 * first `armed` levels are watched (the deepest one that exists ends
	 * the chain and reports its next component appearing). One watch per
	 * component at most, each held in the watch table (struct rn_watch_wd). */
	int *chain;
	size_t armed;
	/* A base opened by path (`watch DIR`: DIR's parent) that does not
	 * exist yet: its nearest existing ancestor is watched for the next
	 * component on the way (above_next, owned), or -1. */
	int above_wd;
	char *above_next;
	int fallback;      /* inotify unavailable for it: polled only (logged) */
	int rearm;         /* re-arm and rescan after the current event batch */
	struct rn_watch_entry *e;  /* sorted by n, at most RN_WATCH_MAX_CYCLE_FILES */
	size_t ne, cap;
	unsigned char *dropped;    /* owned bitmap over 1..FG_CYCLE_NUMBER_MAX, or NULL */
	size_t ndropped;           /* bits set in it */
};

/* How examine() treats a file. */
enum {
	/* The final sweep: a file that still does not parse is reported
	 * cycle_corrupt (before it, it stays pending). */
	EX_FINAL = 1,
	/* inotify says the file was just written or moved into place: read it
	 * even when its identity looks unchanged. */
	EX_WRITTEN = 2,
};

/* The directory's descriptor (kept open, or opened for this use): >= 0, or a
 * negative errno; give it back with rn__watch_dir_done(). */
int rn__watch_dir_open(struct rn_watch *w, struct rn_watch_dir *d);
/* Gives back a descriptor rn__watch_dir_open() returned (closed unless kept). */
void rn__watch_dir_done(struct rn_watch_dir *d, int fd);
/* Drops the directory's kept descriptor (it moved, or before a rescan). */
void rn__watch_dir_close(struct rn_watch *w, struct rn_watch_dir *d);
/* Examines the one file name of d (an inotify event), reported as source. */
void rn__watch_examine_one(struct rn_watch *w, struct rn_watch_dir *d, const char *name,
			   enum rn_source source);
/* Rescans every cycle file of d; how: EX_* flags. */
void rn__watch_scan(struct rn_watch *w, struct rn_watch_dir *d, enum rn_source source,
		    unsigned how);

#endif
