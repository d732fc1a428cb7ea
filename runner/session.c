/*
 * session.c - one run on a private libuv loop (see session.h).
 *
 * Order matters: the watch is armed before the engine starts, so nothing the
 * engine writes can precede our watches. When the engine exits, the inotify
 * queue is drained first (what the kernel already told us counts as seen by
 * the watch), then the remaining output is read until EOF (bounded by a
 * short drain timer: a leftover grandchild may hold the pipe), then the final
 * sweep runs and every handle is closed.
 *
 * Stopping (timeout, SIGINT, SIGTERM) goes through the engine's ops table
 * (engine.h): ops->stop(force 0) is a command to run (`docker stop`) or a
 * signal for the process group (local: SIGTERM); after ops->stop_grace_ms,
 * ops->stop(force 1) (`docker kill`, local: SIGKILL) and SIGKILL to the
 * group in any case. After the exit, an engine with kill_group_after_exit
 * (local) has its process group sent SIGKILL so no straggler survives, and
 * an engine with reap commands (containers) is reaped on this same loop
 * (reap.h) while the output drains: signals and timers keep being served,
 * and the session finishes only once the container is gone or the reap
 * gave up.
 */
#include "session.h"
#include "session_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events.h"
#include "internal_util.h"
#include "output.h"
#include "reap.h"
#include "watch.h"
#include "forge/alloc.h"
#include "forge/exit.h"
#include "forge/frame.h"
#include "forge/fsutil.h"
#include "forge/seal.h"
#include "forge/timeutil.h"
#include "stream.h"

extern char **environ;

static void on_closed(uv_handle_t *h)
{
	(void)h;
}

/* ---- output ---- */

static void tail_add(struct fg_buf *t, const char *p, size_t n)
{
	if (n >= t->max) {
		p += n - t->max / 2;
		n = t->max / 2;
	}
	if (t->len + n > t->max) {
		/* Keep the newest half: amortised O(1) per byte. */
		size_t drop = t->len + n - t->max / 2;

		fg_buf_drop_front(t, drop);
	}
	fg_buf_add(t, p, n);
}

/* Logs line[idx] as an output event; last: it ends its line. A frame line
 * on stderr (recognised by its first piece only, i.e. at the start of a
 * line) is the stream source's: it is reported as a cycle, not as output.
 * A later piece of a long line is output and nothing else, whatever it
 * begins with (a frame's later pieces included). */
static void emit_line(struct session *s, int idx, int last)
{
	const char *stream = idx ? "stderr" : "stdout";

	if (idx == 1 && !s->piece[1])
		s->frame_line = fg_frame_is(s->line[1].data, s->line[1].len);
	if (!(idx == 1 && s->frame_line)) {
		if (s->piece[idx])
			rn_output_piece(&s->output, stream, fg_buf_str(&s->line[idx]));
		else
			rn_output_line(&s->output, stream, fg_buf_str(&s->line[idx]));
	}
	fg_buf_reset(&s->line[idx]);
	s->piece[idx] = !last;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	(void)h;
	(void)suggested;
	buf->base = fg_xmalloc(16384);
	buf->len = 16384;
}

static void maybe_finish(struct session *s);

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
	struct session *s = st->data;
	int idx = st == (uv_stream_t *)&s->out[1];
	ssize_t fed = 0;

	for (ssize_t i = 0; i < n; i++) {
		char c = buf->base[i];

		if (c == '\n') {
			/* The stream source sees each line before the line is
			 * logged, so a frame takes effect in order (`started`:
			 * the lines after it are not read). */
			if (idx == 1)
				rn_stream_feed(&s->stream, buf->base + fed, (size_t)(i + 1 - fed));
			fed = i + 1;
			if (s->line[idx].len)
				emit_line(s, idx, 1);
			s->piece[idx] = 0;
			continue;
		}
		/* A line longer than the cap is logged in pieces. */
		if (fg_buf_addc(&s->line[idx], c) < 0) {
			emit_line(s, idx, 0);
			fg_buf_addc(&s->line[idx], c);
		}
	}
	if (n > 0) {
		tail_add(&s->tail, buf->base, (size_t)n);
		if (idx == 1 && fed < n)
			rn_stream_feed(&s->stream, buf->base + fed, (size_t)(n - fed));
	}
	free(buf->base);
	if (n < 0) {
		if (idx == 1)
			rn_stream_end(&s->stream);
		if (s->line[idx].len)
			emit_line(s, idx, 1);
		uv_close((uv_handle_t *)st, on_closed);
		s->out_open[idx] = 0;
		maybe_finish(s);
	}
}

/* ---- stopping ---- */

/* The stopper handle is reusable only once its close callback ran: a handle
 * spawned again while closing corrupts the loop (libuv aborts). */
static void on_stopper_closed(uv_handle_t *h)
{
	struct session *s = h->data;

	s->stopper_running = 0;
}

static void on_stopper_exit(uv_process_t *p, int64_t status, int sig)
{
	(void)status;
	(void)sig;
	uv_close((uv_handle_t *)p, on_stopper_closed);
}

static void kill_group(struct session *s, int sig)
{
	if (s->proc_pid > 0)
		kill(-s->proc_pid, sig);
}

/* The engine's stop (force 0) or kill (force 1): a command, or a signal. */
static void stop_engine(struct session *s, int force)
{
	struct fg_strvec argv;
	uv_process_options_t o = { 0 };
	int r;

	fg_strvec_init(&argv);
	r = s->ops->stop(&s->ep, force, &argv);
	if (r > 0 || s->stopper_running) {
		if (r > 0)
			kill_group(s, r);
		fg_strvec_release(&argv);
		return;
	}
	o.file = argv.v[0];
	o.args = argv.v;
	o.exit_cb = on_stopper_exit;
	s->stopper.data = s;
	s->stopper_running = 1;
	r = uv_spawn(&s->loop, &s->stopper, &o);
	if (r) {
		rn_log(s->p->log, RN_LOG_ERROR, "stop_error", RN_LS("command", argv.v[0]),
		       RN_LS("error", uv_strerror(r)));
		uv_close((uv_handle_t *)&s->stopper, on_stopper_closed);
	}
	fg_strvec_release(&argv);
}

static void on_grace(uv_timer_t *t)
{
	struct session *s = t->data;

	if (s->exited)
		return;
	s->stop_phase = 2;
	rn_log(s->p->log, RN_LOG_WARN, "stop_kill", RN_LS("engine", s->ops->name));
	stop_engine(s, 1);
	kill_group(s, SIGKILL);
}

static void begin_stop(struct session *s)
{
	if (s->exited || s->stop_phase)
		return;
	s->stop_phase = 1;
	stop_engine(s, 0);
	uv_timer_start(&s->grace_timer, on_grace, (uint64_t)s->ops->stop_grace_ms, 0);
}

static void on_timeout(uv_timer_t *t)
{
	struct session *s = t->data;

	if (s->exited)
		return;
	s->res->timed_out = 1;
	rn_log(s->p->log, RN_LOG_WARN, "timeout", RN_LN("timeout_seconds", s->p->cfg->timeout),
	       RN_LS("stopped_by", "runner"));
	begin_stop(s);
}

static void on_signal(uv_signal_t *h, int signum)
{
	struct session *s = h->data;

	if (signum == SIGHUP) {
		int r = rn_log_reopen(s->p->log);

		rn_log_event(s->p->log, r ? RN_LOG_ERROR : RN_LOG_INFO,
			     r ? "log_reopen_error" : "log_reopened", NULL, 0);
		return;
	}
	rn_log(s->p->log, RN_LOG_WARN, "signal", RN_LS("signal", sigabbrev_np(signum)));
	if (!s->res->signal)
		s->res->signal = signum;
	if (s->stop_phase == 1)
		on_grace(&s->grace_timer);  /* a second signal: do not wait */
	else
		begin_stop(s);
}

/* ---- exit and finish ---- */

static void stop_signal_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

/* The engine's end of the lifeline goes with it: closed once it exited. */
static void close_stdin(struct session *s)
{
	if (s->in_open)
		uv_close((uv_handle_t *)&s->in, on_closed);
	s->in_open = 0;
}

static void finish(struct session *s)
{
	sigset_t set;

	s->finished = 1;
	/* Closing the signal handles restores the default disposition: a
	 * SIGTERM while the caller merges metrics or writes the result would
	 * kill us with nothing written. Held until rn_session_unblock_signals(). */
	stop_signal_set(&set);
	if (!s->res->signals_blocked &&
	    sigprocmask(SIG_BLOCK, &set, &s->res->saved_mask) == 0)
		s->res->signals_blocked = 1;
	rn_watch_sweep(&s->watch);
	/* Both sources cap the numbers they track alike: the larger count. */
	s->p->cycles->untracked = rn_watch_dropped(&s->watch) > rn_stream_dropped(&s->stream)
				  ? rn_watch_dropped(&s->watch) : rn_stream_dropped(&s->stream);
	rn_watch_close(&s->watch, NULL);
	uv_close((uv_handle_t *)&s->timeout_timer, on_closed);
	uv_close((uv_handle_t *)&s->grace_timer, on_closed);
	uv_close((uv_handle_t *)&s->drain_timer, on_closed);
	for (int i = 0; i < 3; i++)
		uv_close((uv_handle_t *)&s->sig[i], on_closed);
	for (int i = 0; i < 2; i++) {
		if (s->out_open[i]) {
			uv_close((uv_handle_t *)&s->out[i], on_closed);
			s->out_open[i] = 0;
		}
	}
	close_stdin(s);
}

/* Finished once the engine exited, its output is at EOF (or the drain
 * timer gave up on it) and the reap is over. */
static void maybe_finish(struct session *s)
{
	if (!s->finished && s->exited && !s->reaping &&
	    (s->drain_expired || (!s->out_open[0] && !s->out_open[1])))
		finish(s);
}

static void on_drain_timeout(uv_timer_t *t)
{
	struct session *s = t->data;

	s->drain_expired = 1;
	maybe_finish(s);
}

static void on_reaped(struct rn_reap *r)
{
	struct session *s = r->data;
	char *name = rn_engine_container_name(s->p->run_id);

	/* The engine said its daemon is unreachable: no container was made,
	 * and a failed listing is not a container left behind. */
	if (r->result && !(r->result != -EBUSY && r->result < 0 && s->output.engine_down))
		rn_log(s->p->log, r->result < 0 ? RN_LOG_ERROR : RN_LOG_WARN,
		       r->result < 0 ? "container_left" : "container_removed", RN_LS("container", name),
		       RN_LS_OPT("error", r->result < 0 ? r->err : NULL));
	free(name);
	s->reaping = 0;
	maybe_finish(s);
}

static void on_exit_cb(uv_process_t *p, int64_t status, int sig)
{
	struct session *s = p->data;

	s->exited = 1;
	s->exit_code = sig ? FG_EXIT_SIGNAL_BASE + sig : (int)status;
	if (s->ops->kill_group_after_exit)
		kill_group(s, SIGKILL);
	uv_close((uv_handle_t *)p, on_closed);
	uv_timer_stop(&s->timeout_timer);
	uv_timer_stop(&s->grace_timer);
	/* Events the kernel queued before the exit were seen by the watch. */
	rn_watch_drain(&s->watch);
	uv_timer_start(&s->drain_timer, on_drain_timeout, RN_OUTPUT_DRAIN_MS, 0);
	if (s->ops->reap_list) {
		s->reaping = 1;
		rn_reap_start(&s->reap, &s->loop, &s->ep, RN_REAP_TIMEOUT_MS, on_reaped, s);
	}
	maybe_finish(s);
}

/* ---- start ---- */

/* The key line (forge/seal.h): 65 bytes into an empty pipe, written whole
 * at once. 0 or a uv error. */
static int send_key(struct session *s)
{
	char line[FG_SEAL_KEY_HEX + 2];
	uv_buf_t b = uv_buf_init(line, FG_SEAL_KEY_HEX + 1);
	int r;

	fg_seal_key_hex(s->p->key, line);
	line[FG_SEAL_KEY_HEX] = '\n';
	r = uv_try_write((uv_stream_t *)&s->in, &b, 1);
	fg_seal_wipe(line, sizeof(line));
	return r == FG_SEAL_KEY_HEX + 1 ? 0 : r < 0 ? r : UV_EAGAIN;
}

static int spawn_engine(struct session *s, struct fg_strvec *argv, struct fg_strvec *env)
{
	uv_stdio_container_t stdio[3];
	uv_process_options_t o = { 0 };
	int r;

	stdio[0].flags = UV_IGNORE;
	if (s->p->key) {
		uv_pipe_init(&s->loop, &s->in, 0);
		s->in_open = 1;
		stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
		stdio[0].data.stream = (uv_stream_t *)&s->in;
	}
	for (int i = 0; i < 2; i++) {
		uv_pipe_init(&s->loop, &s->out[i], 0);
		s->out[i].data = s;
		s->out_open[i] = 1;
		stdio[i + 1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
		stdio[i + 1].data.stream = (uv_stream_t *)&s->out[i];
	}
	o.file = argv->v[0];
	o.args = argv->v;
	o.env = env->v;
	o.stdio = stdio;
	o.stdio_count = 3;
	/* Its own session and process group: we can signal the whole group, and
	 * a Ctrl-C at the terminal reaches only us, who stop it in order. */
	o.flags = UV_PROCESS_DETACHED;
	o.exit_cb = on_exit_cb;
	s->proc.data = s;
	r = uv_spawn(&s->loop, &s->proc, &o);
	if (r) {
		uv_close((uv_handle_t *)&s->proc, on_closed);
		close_stdin(s);
		return r;
	}
	s->proc_pid = s->proc.pid;
	if (s->in_open && (r = send_key(s)) != 0)
		rn_log(s->p->log, RN_LOG_ERROR, "seal_key_error", RN_LS("error", uv_strerror(r)));
	for (int i = 0; i < 2; i++)
		uv_read_start((uv_stream_t *)&s->out[i], on_alloc, on_read);
	return 0;
}

static void init_handles(struct session *s)
{
	int signums[3] = { SIGINT, SIGTERM, SIGHUP };
	uv_timer_t *timers[3] = { &s->timeout_timer, &s->grace_timer, &s->drain_timer };

	for (int i = 0; i < 3; i++) {
		uv_timer_init(&s->loop, timers[i]);
		timers[i]->data = s;
		uv_signal_init(&s->loop, &s->sig[i]);
		s->sig[i].data = s;
		uv_signal_start(&s->sig[i], on_signal, signums[i]);
	}
	if (s->p->cfg->timeout > 0)
		uv_timer_start(&s->timeout_timer, on_timeout,
			       (uint64_t)(s->p->cfg->timeout * 1000.0 + 0.5), 0);
}

static void fill_engine_params(struct session *s)
{
	s->ops = s->p->cfg->engine;
	s->ep = *s->p->ep;
	s->ep.sealed = s->p->key != NULL;
	/* The moment the timeout timer (init_handles, next) will fire: the
	 * entrypoint stops itself shortly before it (FORGE_DEADLINE). */
	if (s->p->cfg->timeout > 0) {
		int64_t at = fg_time_now_ms() + (int64_t)(s->p->cfg->timeout * 1000.0 + 0.5);

		snprintf(s->deadline, sizeof(s->deadline), "%lld.%03lld", (long long)(at / 1000),
			 (long long)(at % 1000));
		s->ep.deadline = s->deadline;
	}
}

static void on_event_frame(void *data, const struct fg_frame *fr)
{
	struct session *s = data;

	rn_output_event(&s->output, fr);
}

static void start_stream(struct session *s)
{
	struct rn_stream_opts o = {
		.run_id = s->p->run_id, .step = s->p->cfg->step, .dir = s->p->step_dir,
		.log = s->p->log, .cycle_cb = rn__session_stream_cycle, .summary_cb = rn__session_stream_summary, .data = s,
		.key = s->p->key, .event_cb = on_event_frame,
	};

	rn_stream_init(&s->stream, &o);
}

static void start_watch(struct session *s)
{
	struct rn_watch_opts o = {
		.poll_interval = s->p->cfg->poll_interval, .no_inotify = s->p->cfg->no_inotify,
		.run_id = s->p->run_id, .log = s->p->log, .cb = rn__session_watch_cycle, .data = s,
		.step = s->p->cfg->step, .key = s->p->key,
	};
	const struct rn_run_config *c = s->p->cfg;
	int r;

	rn_watch_init(&s->watch, &s->loop, &o);
	if (!c->workspace_local) {
		/* Nothing on this host to watch or sweep: the watch stays empty
		 * (its drain, sweep and close do nothing) and the frames are the
		 * only source; the summary frame stands in for the sweep. */
		rn_log(s->p->log, RN_LOG_INFO, "detection_sources", RN_LS("sources", "stream"),
		       RN_LS("reason", c->workspace_volume ? "workspace_volume" : "remote_engine"),
		       RN_LS("workspace_volume", c->workspace_volume),
		       RN_LS("engine_host", c->engine_host));
		return;
	}
	rn_log(s->p->log, RN_LOG_INFO, "detection_sources",
	       RN_LS("sources", c->no_inotify ? "poll,sweep,stream" : "watch,poll,sweep,stream"),
	       RN_LS("reason", "local_workspace"), RN_LS("workspace_volume", NULL),
	       RN_LS("engine_host", NULL));
	/* From the workspace, held open from now on: a W/.forge or step
	 * directory the sandbox swaps for a symlink is refused, not followed. */
	r = rn_watch_add_beneath(&s->watch, s->p->cfg->workspace, s->p->step_rel);
	if (r == 0)
		r = rn_watch_start(&s->watch);
	if (r)
		rn_log(s->p->log, RN_LOG_ERROR, "watch_error", RN_LS("error", uv_strerror(r)));
}

static void fail(struct session *s, char *msg)
{
	rn_log(s->p->log, RN_LOG_ERROR, "run_error", RN_LS("error", msg));
	s->res->failed = 1;
	free(s->res->error_message);
	s->res->error_message = msg;
}

/* Builds and spawns; on failure the session is marked failed and finished. */
static void start_engine(struct session *s)
{
	struct fg_strvec argv, env;
	char err[512] = "";
	int r;

	fg_strvec_init(&argv);
	fg_strvec_init(&env);
	r = rn_engine_build(&s->ep, &argv, &env, err, sizeof(err));
	if (r) {
		fail(s, fg_xstrdup(err));
	} else {
		r = spawn_engine(s, &argv, &env);
		if (r)
			fail(s, fg_xasprintf("cannot start '%s': %s", argv.v[0], uv_strerror(r)));
	}
	if (r) {
		s->exited = 1;
		for (int i = 0; i < 2; i++) {
			if (s->out_open[i])
				uv_close((uv_handle_t *)&s->out[i], on_closed);
			s->out_open[i] = 0;
		}
		finish(s);
	}
	fg_strvec_release(&argv);
	fg_strvec_release(&env);
}

/* The CLI's code, except that its 126 or 127 after a line that showed the
 * engine or its runtime failing (rn_output.engine_runtime: rlimits,
 * slirp4netns, cgroups...) is the engine's failure, 125, not the image's
 * entrypoint. */
static int engine_code(const struct session *s)
{
	if ((s->exit_code == 126 || s->exit_code == 127) && s->output.engine_runtime)
		return FG_EXIT_RUNTIME;
	return s->exit_code;
}

/* The entrypoint's own stop at FORGE_DEADLINE ends it with 124 just
 * before the timer would have (its summary says cause timeout): the same
 * timeout for the result, the metrics and the log. No other program the
 * engine runs exits 124 (the entrypoint's codes, exit-codes.md). */
static void take_entrypoint_timeout(struct session *s)
{
	struct rn_session_result *res = s->res;

	if (!s->ep.deadline || res->failed || res->timed_out || res->signal ||
	    engine_code(s) != FG_EXIT_TIMEOUT)
		return;
	res->timed_out = 1;
	s->deadline_kept = 1;
	rn_log(s->p->log, RN_LOG_WARN, "timeout", RN_LN("timeout_seconds", s->p->cfg->timeout),
	       RN_LS("stopped_by", "entrypoint"));
}

static char *exit_message(struct session *s)
{
	const char *tail = fg_buf_str(&s->tail);

	if (s->deadline_kept)
		return fg_xasprintf("timed out: the entrypoint stopped itself shortly before --timeout %gs "
				    "ran out (FORGE_DEADLINE)", s->p->cfg->timeout);
	if (s->res->timed_out)
		return fg_xasprintf("timed out after %gs", s->p->cfg->timeout);
	if (s->res->signal)
		return fg_xasprintf("stopped by %s", sigabbrev_np(s->res->signal));
	if (!*tail)
		return fg_xasprintf("%s exited with code %d", s->ops->name, s->exit_code);
	return fg_xasprintf("%s exited with code %d; last output:\n%s", s->ops->name,
			    s->exit_code, tail);
}

/* The engine's own exit codes (a docker kill from outside is 137) named
 * before the generic message; only when the runner did not stop it. */
static void add_exit_reason(struct session *s)
{
	struct rn_session_result *res = s->res;
	char *why, *msg;

	if (res->failed || res->timed_out || res->signal || !s->ops->exit_reason)
		return;
	why = s->ops->exit_reason(&s->ep, res->exit_code);
	if (!why)
		return;
	msg = fg_xasprintf("%s; %s", why, res->error_message ? res->error_message : "");
	free(res->error_message);
	res->error_message = msg;
	free(why);
}

/* The output's verdict on the run: output_dropped logged, the failure
 * reason and the engine hint handed to the result. */
static void take_output(struct session *s)
{
	struct rn_session_result *res = s->res;

	rn_output_finish(&s->output);
	res->isolation = s->output.isolation;
	/* The entrypoint's last line is the reason only for its configuration
	 * error (exit 2: it says what and stops); otherwise (a timeout, a
	 * container killed) it may be "running the worker", which is no reason. */
	if (s->output.reason)
		res->reason = fg_xstrdup(s->output.reason);
	else if (res->exit_code == FG_EXIT_USAGE && !res->failed && rn_output_reason(&s->output))
		res->reason = fg_xstrdup(rn_output_reason(&s->output));
	if (res->exit_code == 0) {
		FG_FREE_AND_NULL(res->reason);
	}
	if (res->exit_code != 0 && s->output.hint) {
		char *msg = fg_xasprintf("%s; hint: %s", res->error_message ? res->error_message : "",
					 s->output.hint);

		free(res->error_message);
		res->error_message = msg;
	}
	rn_output_release(&s->output);
}

void rn_session_unblock_signals(struct rn_session_result *res)
{
	sigset_t hup;
	struct timespec zero = { 0, 0 };

	if (!res->signals_blocked)
		return;
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	/* Each call takes one pending SIGHUP; standard signals do not queue. */
	(void)sigtimedwait(&hup, NULL, &zero);
	res->signals_blocked = 0;
	sigprocmask(SIG_SETMASK, &res->saved_mask, NULL);
}

int rn_session_run(const struct rn_session_params *p, struct rn_session_result *res)
{
	struct session *s = fg_xcalloc(1, sizeof(*s));
	int r = uv_loop_init(&s->loop);

	if (r) {
		free(s);
		return r;
	}
	s->p = p;
	s->res = res;
	fg_buf_init(&s->line[0], RN_OUTPUT_LINE_MAX);
	fg_buf_init(&s->line[1], RN_OUTPUT_LINE_MAX);
	fg_buf_init(&s->tail, RN_OUTPUT_TAIL_MAX);
	fill_engine_params(s);
	start_stream(s);
	rn_output_init(&s->output, p->log, s->ops, &s->ep);
	s->output.max = rn__test_bound("FORGE_TEST_OUTPUT_LOG_MAX", s->output.max);
	init_handles(s);
	start_watch(s);
	start_engine(s);
	uv_run(&s->loop, UV_RUN_DEFAULT);
	r = uv_loop_close(&s->loop);
	if (r)
		fail(s, fg_xasprintf("event loop still busy at exit: %s", uv_strerror(r)));
	take_entrypoint_timeout(s);
	if (res->failed)
		res->exit_code = FG_EXIT_RUNTIME;
	else if (res->timed_out)
		res->exit_code = FG_EXIT_TIMEOUT;
	else if (res->signal)
		res->exit_code = FG_EXIT_SIGNAL_BASE + res->signal;
	else
		res->exit_code = engine_code(s);
	if (!res->failed && res->exit_code != 0)
		res->error_message = exit_message(s);
	add_exit_reason(s);
	take_output(s);
	fg_buf_release(&s->line[0]);
	fg_buf_release(&s->line[1]);
	rn_stream_release(&s->stream);
	fg_buf_release(&s->tail);
	free(s);
	return 0;
}
