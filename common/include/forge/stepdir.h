/*
 * stepdir.h - the step directory's files of an earlier run, cleared before
 * a new run by whoever can reach the directory: the runner on the host
 * (runner/prepare.c), or the entrypoint itself when the runner cannot see
 * the workspace.
 *
 * Everything that stands under a name a run writes goes: regular files
 * and symlinks are unlinked (a symlink as an entry, never followed); a
 * directory, FIFO, socket or device (planted by an earlier step, it would
 * make every later cycle write fail, e.g. with EISDIR) is removed too, a
 * directory with its contents, never following a link at any level, or
 * renamed aside to ".stale.NAME.<random>" (a name no run writes) when it cannot
 * be removed; each such entry is reported to the caller, which logs it
 * (common/ never prints).
 */
#ifndef FORGE_STEPDIR_H
#define FORGE_STEPDIR_H

#include <stddef.h>

/* What name is in a step directory: 1 a cycle file (review_cycle_N.json),
 * 2 another file a run writes (review_summary.json, a reviewer log, a
 * check log or a diff (evidence.h), an atomic temp file), 0 anything else
 * (kept). */
int fg_step_stale_kind(const char *name);

/* One entry that was not a regular file or a symlink; all borrowed for
 * the duration of the callback. */
struct fg_stale_special {
	const char *name;     /* its name in the directory */
	const char *type;     /* "directory", "fifo", "socket", "device" */
	const char *action;   /* "removed", "set_aside" or "failed" */
	const char *to;       /* set_aside: the new name; else NULL */
	int error;            /* failed: the negative errno; else 0 */
};
typedef void (*fg_stale_special_cb)(const struct fg_stale_special *s, void *data);

/*
 * Clears the directory dfd (borrowed, listed through a duplicate from its
 * beginning): every entry of a kind fg_step_stale_kind() names, as the
 * header says. cb (may be NULL) hears about each special entry.
 * *cycles_removed counts the removed entries under cycle names. Returns 0,
 * or the first negative errno (a listing cut short, an entry that could be
 * neither removed nor set aside); the other entries are still tried.
 */
int fg_step_clear_stale(int dfd, long *cycles_removed, fg_stale_special_cb cb, void *data);

#endif
