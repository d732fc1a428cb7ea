/*
 * session.h - one run's libuv session: the watch armed first, then the
 * engine spawned, its output streamed into the log, the timeout and the
 * signals handled; after the exit the queued inotify events drained, a
 * final sweep, every handle closed and uv_loop_close() == 0 (session.c).
 */
#ifndef RN_SESSION_H
#define RN_SESSION_H

#include <signal.h>

#include "log.h"
#include "metrics.h"
#include "result.h"
#include "run.h"
#include "trace.h"
#include "watch.h"
#include "forge/isolation.h"
#include "forge/summary.h"

#define RN_OUTPUT_TAIL_MAX (8 * 1024)
#define RN_OUTPUT_LINE_MAX 4096
#define RN_OUTPUT_DRAIN_MS 1000

/* Outcome of a session. */
struct rn_session_result {
	int exit_code;          /* the process exit code of `run` */
	int timed_out;
	int signal;             /* runner ended by this signal, 0 if not */
	int failed;             /* the runner itself failed (FG_EXIT_RUNTIME) */
	char *error_message;    /* owned or NULL */
	/* owned or NULL: the entrypoint's (or the engine CLI's) last error line
	 * when the run failed, "the task failed: ..." (output.h) */
	char *reason;
	long sweep_caught;
	long cycles_by_source[RN_SOURCE_COUNT];  /* cycles reported, by the source that saw each first */
	struct fg_summary *stream_summary;       /* owned or NULL: the sealed summary frame (release and free) */
	long forged_records;    /* records not believed (record_forged) during the session */
	struct fg_isolation isolation;  /* the entrypoint's isolation event frame (output.h); known false without one */
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
	const char *step_rel;       /* step_dir below the workspace (fg_cycle_dir()) */
	const char *skill;          /* the run's one skill: every metric label (a valid name) */
	struct rn_log *log;
	struct rn_metrics *metrics;
	struct rn_cycles *cycles;   /* receives every reported cycle */
	/* The launch: built by the caller from cfg (rn_run_engine_params());
	 * the session never builds them itself, so it calls nothing back. */
	const struct rn_engine_params *ep;
	/* The run's seal key: written as the first line of the engine's
	 * stdin, which stays open as its lifeline until the engine exits. */
	const struct fg_seal_key *key;
	/* The run's trace (trace.h; may be off): each cycle's spans, each
	 * forgery an event. */
	struct rn_trace *trace;
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
