/*
 * prepare.h - before a run starts: its run id, and the step directory
 * created and cleared of the files a previous run left (prepare.c).
 */
#ifndef RN_PREPARE_H
#define RN_PREPARE_H

#include <stddef.h>

#define RN_RUN_ID_LEN 16
/* The longest --run-id ("forge-ID-skills" stays a valid kubernetes name). */
#define RN_RUN_ID_MAX 40

/* Fills out with RN_RUN_ID_LEN lowercase hex characters and a NUL (getrandom). */
void rn_run_id_generate(char out[RN_RUN_ID_LEN + 1]);

#include <stdbool.h>
#include <sys/types.h>

struct rn_log;

/* Where rn_prepare_step_dir() works; borrowed. */
struct rn_prepare {
	int wsfd;               /* the workspace, opened by the caller */
	const char *rel;        /* the step directory below it (fg_cycle_dir()) */
	const char *dir;        /* the same as a path, for the log */
	struct rn_log *log;     /* stale_special events (may be NULL) */
	bool give;              /* hand each component of rel owned by root to uid:gid (a runner
	                         * started by root whose sandbox runs as another uid) */
	uid_t uid;
	gid_t gid;
};

/*
 * Opens the step directory p->rel below p->wsfd, creating missing
 * components (fg_open_beneath(): no component may be a symlink, at any
 * moment of the walk), and removes stale files directly in it: every
 * entry under a name a run writes (canonical review_cycle_N.json,
 * review_summary.json, reviewer logs, our atomic temp files). Regular files
 * and symlinks are unlinked (a symlink as an entry, never followed);
 * anything else there (a directory, FIFO, socket or device) is removed
 * too, a directory with its contents and without following links, or,
 * when that fails, renamed aside to ".stale.NAME.PID"; each one is logged
 * as a `stale_special` event. *cycles_removed counts removed entries under
 * cycle names. With p->give, each component of p->rel that root owns
 * (made now, or by an earlier root run) is given to p->uid:p->gid, so the
 * sandbox can write its cycle files. Returns 0, or a negative errno with err saying why (a
 * refused component, a failed creation, a stale entry that could be
 * neither removed nor set aside).
 */
int rn_prepare_step_dir(const struct rn_prepare *p, long *cycles_removed, char *err, size_t errlen);

#endif
