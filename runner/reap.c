/*
 * reap.c - the container reap on the session's loop (see reap.h).
 *
 * One command runs at a time. It is finished when its process exited and
 * both its handles (process, stdout pipe) are closed; only then is the
 * next one spawned into the same handles (a handle reused while closing
 * corrupts the loop). The one timer is the running command's deadline, or
 * the wait before the next listing.
 */
#include "reap.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"

#include "internal_util.h"

static void run_cmd(struct rn_reap *r, int removing);

static void maybe_done(struct rn_reap *r)
{
	if (r->finished && !r->proc_open && !r->out_open && !r->timer_open)
		r->done(r);
}

static void on_timer_closed(uv_handle_t *h)
{
	struct rn_reap *r = h->data;

	r->timer_open = 0;
	maybe_done(r);
}

static void finish(struct rn_reap *r, int result)
{
	r->result = result;
	r->finished = 1;
	uv_close((uv_handle_t *)&r->timer, on_timer_closed);
}

static void on_poll_timer(uv_timer_t *t)
{
	run_cmd(t->data, 0);
}

/* The listing said the container is still there. */
static void still_listed(struct rn_reap *r)
{
	uint64_t now = uv_now(r->loop);

	if (now + RN_REAP_POLL_MS >= r->deadline) {
		rn__seterr(r->err, sizeof(r->err), "container 'forge-%s' still exists", r->p->run_id);
		finish(r, -EBUSY);
	} else if (!r->forced && now - r->t0 >= RN_REAP_FORCE_AFTER_MS) {
		r->forced = 1;
		run_cmd(r, 1);
	} else {
		uv_timer_start(&r->timer, on_poll_timer, RN_REAP_POLL_MS, 0);
	}
}

/* Both handles of the command are closed: judge it. */
static void cmd_done(struct rn_reap *r)
{
	uv_timer_stop(&r->timer);
	if (r->killed && r->listed) {
		/* The CLI had answered: the last it said is that the container is there. */
		rn__seterr(r->err, sizeof(r->err), "container 'forge-%s' still exists", r->p->run_id);
		finish(r, -EBUSY);
	} else if (r->killed) {
		rn__seterr(r->err, sizeof(r->err), "cannot run '%s': %s", r->what, strerror(ETIMEDOUT));
		finish(r, -ETIMEDOUT);
	} else if (r->removing) {
		/* Its failure ("removal already in progress", "no such
		 * container") is judged by the next listing, not here. */
		run_cmd(r, 0);
	} else if (r->exit_code != 0) {
		rn__seterr(r->err, sizeof(r->err), "'%s' exited with code %d", r->what, r->exit_code);
		finish(r, -EIO);
	} else if (r->nout == 0) {
		finish(r, r->forced);
	} else {
		r->listed = 1;
		still_listed(r);
	}
}

static void on_cmd_closed(uv_handle_t *h)
{
	struct rn_reap *r = h->data;

	if (h == (uv_handle_t *)&r->proc)
		r->proc_open = 0;
	else
		r->out_open = 0;
	if (r->proc_open || r->out_open)
		return;
	if (r->finished)
		maybe_done(r);
	else
		cmd_done(r);
}

static void on_cmd_exit(uv_process_t *proc, int64_t status, int sig)
{
	struct rn_reap *r = proc->data;

	r->exit_code = sig ? 128 + sig : (int)status;
	r->running = 0;
	uv_close((uv_handle_t *)proc, on_cmd_closed);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	(void)h;
	(void)suggested;
	buf->base = fg_xmalloc(512);
	buf->len = 512;
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
	struct rn_reap *r = st->data;

	free(buf->base);
	if (n > 0)
		r->nout += (size_t)n;
	else if (n < 0 && !uv_is_closing((uv_handle_t *)st))
		uv_close((uv_handle_t *)st, on_cmd_closed);
}

static void on_deadline(uv_timer_t *t)
{
	struct rn_reap *r = t->data;

	r->killed = 1;
	/* After its exit there is no pid to signal; a pipe still open then
	 * is held by a leftover of it, and closing it ends the wait. */
	if (r->running)
		uv_process_kill(&r->proc, SIGKILL);
	if (!uv_is_closing((uv_handle_t *)&r->out))
		uv_close((uv_handle_t *)&r->out, on_cmd_closed);
}

static int spawn_cmd(struct rn_reap *r, struct fg_strvec *argv)
{
	uv_stdio_container_t stdio[3] = {
		{ .flags = UV_IGNORE },
		{ .flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&r->out },
		{ .flags = UV_IGNORE },
	};
	uv_process_options_t o = { 0 };
	int e;

	snprintf(r->what, sizeof(r->what), "%s %s", argv->v[0], argv->n > 1 ? argv->v[1] : "");
	uv_pipe_init(r->loop, &r->out, 0);
	r->out.data = r;
	r->proc.data = r;
	r->out_open = 1;
	r->proc_open = 1;
	o.file = argv->v[0];
	o.args = argv->v;
	o.stdio = stdio;
	o.stdio_count = 3;
	o.exit_cb = on_cmd_exit;
	e = uv_spawn(r->loop, &r->proc, &o);
	if (e) {
		uv_close((uv_handle_t *)&r->proc, on_cmd_closed);
		uv_close((uv_handle_t *)&r->out, on_cmd_closed);
		return e;
	}
	r->running = 1;
	uv_read_start((uv_stream_t *)&r->out, on_alloc, on_read);
	return 0;
}

static void run_cmd(struct rn_reap *r, int removing)
{
	struct fg_strvec argv;
	uint64_t now = uv_now(r->loop);
	int e;

	fg_strvec_init(&argv);
	if (removing)
		r->ops->reap_remove(r->p, &argv);
	else
		r->ops->reap_list(r->p, &argv);
	r->removing = removing;
	r->killed = 0;
	r->nout = 0;
	r->exit_code = 0;
	e = spawn_cmd(r, &argv);
	if (e) {
		rn__seterr(r->err, sizeof(r->err), "cannot run '%s': %s", r->what, uv_strerror(e));
		/* -errno on Unix: libuv's convention is the project's. */
		r->finished = 1;
		r->result = e;
		uv_close((uv_handle_t *)&r->timer, on_timer_closed);
	} else {
		uv_timer_start(&r->timer, on_deadline, r->deadline > now ? r->deadline - now : 0, 0);
	}
	fg_strvec_release(&argv);
}

void rn_reap_start(struct rn_reap *r, uv_loop_t *loop, const struct rn_engine_params *p,
		   int timeout_ms, rn_reap_done_cb done, void *data)
{
	memset(r, 0, sizeof(*r));
	r->loop = loop;
	r->p = p;
	r->ops = p->ops;
	r->done = done;
	r->data = data;
	uv_timer_init(loop, &r->timer);
	r->timer.data = r;
	r->timer_open = 1;
	uv_update_time(loop);
	r->t0 = uv_now(loop);
	r->deadline = r->t0 + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
	if (!r->ops->reap_list)
		finish(r, 0);
	else
		run_cmd(r, 0);
}
