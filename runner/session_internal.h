/*
 * session_internal.h - what the two halves of a run's session share:
 * session.c (the loop, the engine, its output, stopping, the exit) and
 * session_cycles.c (the sink every cycle source delivers to: one report
 * per cycle through rn_cycles, the log, the metrics, the recording).
 * session.h is the module's contract. Loop thread only.
 */
#ifndef RN_SESSION_INTERNAL_H
#define RN_SESSION_INTERNAL_H

#include <uv.h>

#include "cycle_report.h"
#include "output.h"
#include "reap.h"
#include "session.h"
#include "stream.h"
#include "watch.h"

struct session {
	const struct rn_session_params *p;
	struct rn_session_result *res;
	uv_loop_t loop;
	struct rn_watch watch;
	struct rn_stream stream;    /* frames on the engine's stderr */
	struct rn_engine_params ep;
	char deadline[32];          /* ep.deadline's text: FORGE_DEADLINE, "" without --timeout */
	int deadline_kept;          /* the entrypoint stopped itself at it (exit 124) */
	const struct rn_engine_ops *ops;
	uv_process_t proc;
	int proc_pid;
	int exited;
	int exit_code;
	uv_pipe_t out[2];
	int out_open[2];
	uv_pipe_t in;           /* the engine's stdin: the key line, then the lifeline */
	int in_open;
	struct fg_buf line[2];
	int piece[2];           /* line[i] continues a line logged in pieces */
	int frame_line;         /* the current stderr line is a frame: not logged as output */
	struct fg_buf tail;
	struct rn_output output;   /* levels, failure reason, hints, the cap */
	uv_timer_t timeout_timer, grace_timer, drain_timer;
	uv_signal_t sig[3];
	uv_process_t stopper;
	int stopper_running;    /* the stopper handle is in use: running or closing */
	int stop_phase;
	struct rn_reap reap;
	int reaping;            /* the reap runs: the session may not finish yet */
	int drain_expired;      /* the output drain timer fired */
	int finished;
	int budget_logged;      /* cycle_limit (retained_bytes) was logged */
	char checks[FG_CHECKS_MAX][FG_CHECK_NAME_MAX + 1];  /* check names labelled so far */
	size_t nchecks;
};

/* The watch's and the stream's callbacks (data and w->opts.data: the
 * session): the cycle is stored, logged, counted and recorded once. */
void rn__session_watch_cycle(struct rn_watch *w, const struct rn_cycle_report *r);
void rn__session_stream_cycle(void *data, const struct rn_cycle_report *r);
/* The stream's summary frame: kept (a copy) in res->stream_summary when
 * its seal verified, else a forgery. */
void rn__session_stream_summary(void *data, const struct fg_summary *sum, enum fg_seal_status seal);
/* A record not believed: record_forged, the metric, res->forged_records. */
void rn__session_forged(struct session *s, const char *file, enum rn_source source,
			enum fg_seal_status seal);

#endif
