/*
 * kube_cmd.h - one kubectl child process on a libuv loop, for the
 * kubernetes-job child (kube_job.c): optional standard input written and
 * closed, standard output and error collected (bounded), a deadline, one
 * callback once every handle is closed. One command per struct at a time.
 *
 * With lines set, standard output is not collected but handed to lines()
 * line by line as it arrives (kubectl logs -f).
 */
#ifndef RN_KUBE_CMD_H
#define RN_KUBE_CMD_H

#include <uv.h>

#include "forge/buf.h"

#define RN_KUBE_CMD_OUT_MAX (8 * 1024 * 1024)
#define RN_KUBE_CMD_ERR_MAX 4096
/* A log line longer than this is handed over in pieces (frames are at most
 * 64 KiB; the timestamp comes before them). */
#define RN_KUBE_LINE_MAX (64 * 1024 + 128)

struct rn_kube_cmd;
typedef void (*rn_kube_cmd_cb)(struct rn_kube_cmd *c);
/* A line of standard output without its newline; piece: not its end. */
typedef void (*rn_kube_line_cb)(struct rn_kube_cmd *c, const char *line, size_t n, int piece);

struct rn_kube_cmd {
	/* Outcome, in done(): the exit code (128+N for signal N, -errno when
	 * it could not be started), what it wrote. */
	int code;
	struct fg_buf out, err;
	void *data;
	rn_kube_line_cb lines;   /* set before start for a streamed stdout */
	int keep_input;          /* set before start: stdin stays open after the input
				  * (closed when the command exits: kubectl attach's lifeline) */

	/* private */
	uv_loop_t *loop;
	uv_process_t proc;
	uv_pipe_t pipes[3];
	uv_timer_t timer;
	uv_write_t wreq;
	char *input;
	int open;                /* handles not closed yet */
	int running;
	int killed;
	struct fg_buf line;
	rn_kube_cmd_cb done;
};

/*
 * Runs argv (argv[0] looked up in PATH) with input (may be NULL: stdin is
 * /dev/null) on loop; killed after timeout_ms (0: none). done(c) once it
 * ended and its handles are closed; c must stay in place until then.
 * Returns 0, or a negative errno (nothing started, done not called).
 */
int rn_kube_cmd_start(struct rn_kube_cmd *c, uv_loop_t *loop, char *const *argv, const char *input,
		      int timeout_ms, rn_kube_cmd_cb done, void *data);
/* Kills the running command (SIGKILL); done still follows. */
void rn_kube_cmd_kill(struct rn_kube_cmd *c);
/* 1 while a command runs or its handles close. */
int rn_kube_cmd_busy(const struct rn_kube_cmd *c);
/* The first line of what it wrote on stderr (for messages). Owned. */
char *rn_kube_cmd_error(const struct rn_kube_cmd *c);
void rn_kube_cmd_release(struct rn_kube_cmd *c);
/* Runs argv to its end on a loop of its own (for one-shot commands such as
 * `forge-runner reap`): its exit code, or a negative errno when it could
 * not be started; c holds the output (release it). */
int rn_kube_cmd_run(struct rn_kube_cmd *c, char *const *argv, const char *input, int timeout_ms);

#endif
