/*
 * reap.h - after a container engine's CLI exited: make sure the container is
 * gone, on the session's own event loop.
 *
 * `run --rm` normally removes the container before the CLI returns, but the
 * removal can lag, and a CLI that was killed leaves it behind. The reap runs
 * the engine's list command (ops->reap_list) every RN_REAP_POLL_MS until its
 * output is empty; still listed after RN_REAP_FORCE_AFTER_MS: the remove
 * command (ops->reap_remove) once, then listing again. Each command is a
 * uv_spawn on the caller's loop with stdin and stderr on /dev/null, so the
 * loop keeps serving signals and timers meanwhile; a command still running
 * at the deadline is killed (the container counts as still there when an
 * earlier listing showed it, else the CLI did not answer).
 *
 * Protocol: rn_reap_start() on the loop thread -> done(r) is called once,
 * after every handle of the reap is closed; r->result and r->err then say
 * how it went. The struct must stay in place until done ran.
 */
#ifndef RN_REAP_H
#define RN_REAP_H

#include <stdint.h>
#include <uv.h>

#include "engine.h"
#include "forge/buf.h"

#define RN_REAP_POLL_MS 200
#define RN_REAP_FORCE_AFTER_MS 1000
/* How long the runner waits, after the CLI exited, for the container to go. */
#define RN_REAP_TIMEOUT_MS 15000

struct rn_reap;
typedef void (*rn_reap_done_cb)(struct rn_reap *r);

struct rn_reap {
	/* Outcome, valid in done(): 0 gone (at once, or after the lag), 1
	 * removed by the remove command, -EBUSY still listed at the deadline,
	 * or a negative errno when a command could not be run, failed or did
	 * not answer (-ETIMEDOUT); err then holds the message. */
	int result;
	char err[256];
	void *data;             /* the caller's */

	/* private */
	uv_loop_t *loop;
	const struct rn_engine_params *p;
	const struct rn_engine_ops *ops;
	rn_reap_done_cb done;
	uv_process_t proc;
	uv_pipe_t out;
	uv_timer_t timer;
	uint64_t t0, deadline;  /* uv_now() milliseconds */
	char what[64];          /* the running command, "docker ps", for messages */
	int removing;           /* the running command is the remove command */
	int forced;
	int running;            /* the command's process has not exited yet */
	int killed;             /* the running command was killed at the deadline */
	int listed;             /* a listing showed the container */
	int proc_open, out_open, timer_open;
	int exit_code;
	size_t nout;
	int finished;
};

/*
 * Starts the reap for p's engine on loop (p and ops borrowed until done).
 * timeout_ms bounds the whole reap. An engine without reap commands
 * finishes at once with result 0 (done is still called from the loop).
 * Loop thread only.
 */
void rn_reap_start(struct rn_reap *r, uv_loop_t *loop, const struct rn_engine_params *p,
		   int timeout_ms, rn_reap_done_cb done, void *data);

#endif
