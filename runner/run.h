/*
 * run.h - `forge-runner run`: configuration, preparation and the session.
 *
 * Protocol (run.c drives it):
 *   1. rn_run_config from options and environment (run.c);
 *   2. rn_prepare_step_dir(): W/.forge/{step}/ created, stale files removed
 *      and counted; rn_run_id_generate();
 *   3. rn_session_run(): one libuv loop: watch armed first, then the engine
 *      spawned, output streamed into the log, timeout and signals handled;
 *      after the exit: queued inotify events drained, final sweep, every
 *      handle closed, uv_loop_close() == 0;
 *   4. result file, metrics (run.c).
 */
#ifndef RN_RUN_H
#define RN_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "engine.h"
#include "forge/buf.h"
#include "log.h"
#include "metrics.h"
#include "record.h"
#include "result.h"
#include "watch.h"

#define RN_RUN_ID_LEN 16
#define RN_OUTPUT_TAIL_MAX (8 * 1024)
#define RN_OUTPUT_LINE_MAX 4096
#define RN_OUTPUT_DRAIN_MS 1000

struct rn_run_config {
	enum rn_engine_kind engine;
	char *workspace;        /* owned, absolute, resolved */
	const char *step, *skill, *task_key;   /* borrowed from argv/env */
	char *task_file;        /* owned absolute or NULL */
	char *skills_dir;       /* owned absolute or NULL */
	const char *image;
	char *entrypoint;       /* owned: local engine's binary */
	double timeout;         /* seconds, 0: none */
	double poll_interval;
	int no_inotify;
	enum rn_record_mode record;
	const char *recording_dir;
	const char *result_path;
	const char *metrics_file;
	struct fg_strvec extra_env;  /* --env NAMEs */
};

void rn_run_config_release(struct rn_run_config *c);

/* Fills out with RN_RUN_ID_LEN lowercase hex characters and a NUL (getrandom). */
void rn_run_id_generate(char out[RN_RUN_ID_LEN + 1]);

/*
 * Creates dir (mkdir -p, 0755) and removes stale files directly in it:
 * canonical review_cycle_N.json, review_summary.json,
 * review_cycle_*.reviewer.log and our atomic temp files. Only regular files
 * and symlinks are removed (unlinkat: a symlink is removed as an entry and
 * never followed); directories, FIFOs and devices are left alone (a FIFO
 * named like a cycle is later reported corrupt and skipped). Neither the
 * directory nor its parent (W/.forge) may be a symlink (-ELOOP, nothing
 * created). *cycles_removed counts removed cycle files.
 * 0 or negative errno.
 */
int rn_prepare_step_dir(const char *dir, long *cycles_removed);

/* Outcome of a session. */
struct rn_session_result {
	int exit_code;          /* the process exit code of `run` */
	int timed_out;
	int signal;             /* runner ended by this signal, 0 if not */
	int failed;             /* the runner itself failed (FG_EXIT_RUNTIME) */
	char *error_message;    /* owned or NULL */
	long sweep_caught;
	/* Set when the session blocked SIGINT, SIGTERM and SIGHUP before closing
	 * its signal handlers (their disposition reverts to the default): the
	 * caller writes the result and metrics, then rn_session_unblock_signals(). */
	int signals_blocked;
	sigset_t saved_mask;
};

/* Everything the session needs; borrowed. */
struct rn_session_params {
	const struct rn_run_config *cfg;
	const char *run_id;
	const char *step_dir;
	struct rn_log *log;
	struct rn_metrics *metrics;
	struct rn_cycles *cycles;   /* receives every reported cycle */
};

/* Runs the engine to completion on a private loop. Returns 0 (see res), or
 * a negative errno when the loop could not be set up. res->error_message is
 * owned by the caller. */
int rn_session_run(const struct rn_session_params *p, struct rn_session_result *res);

/* After the result is written: discards a pending SIGHUP (the log was not
 * being reopened any more) and restores res->saved_mask, so a SIGINT or
 * SIGTERM that arrived meanwhile now takes its default effect. No-op when
 * res->signals_blocked is 0. */
void rn_session_unblock_signals(struct rn_session_result *res);

#endif
