/*
 * kube_cmd.c - one kubectl child process on a libuv loop (kube_cmd.h).
 */
#include "kube_cmd.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/seal.h"

static void maybe_done(struct rn_kube_cmd *c)
{
	if (c->open == 0 && c->done) {
		rn_kube_cmd_cb done = c->done;

		c->done = NULL;
		done(c);
	}
}

static void on_closed(uv_handle_t *h)
{
	struct rn_kube_cmd *c = h->data;

	c->open--;
	maybe_done(c);
}

static void close_handle(struct rn_kube_cmd *c, uv_handle_t *h)
{
	if (!uv_is_closing(h))
		uv_close(h, on_closed);
	(void)c;
}

static void on_exit_cb(uv_process_t *p, int64_t status, int sig)
{
	struct rn_kube_cmd *c = p->data;

	c->code = sig ? 128 + sig : (int)status;
	c->running = 0;
	uv_timer_stop(&c->timer);
	if (c->keep_input && !c->input)
		close_handle(c, (uv_handle_t *)&c->pipes[0]);
	close_handle(c, (uv_handle_t *)p);
	close_handle(c, (uv_handle_t *)&c->timer);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	(void)h;
	(void)suggested;
	buf->base = fg_xmalloc(65536);
	buf->len = 65536;
}

/* Streamed standard output: whole lines to lines(), overlong ones in pieces. */
static void feed_lines(struct rn_kube_cmd *c, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n') {
			c->lines(c, c->line.data ? c->line.data : "", c->line.len, 0);
			fg_buf_reset(&c->line);
		} else if (fg_buf_addc(&c->line, p[i]) < 0) {
			c->lines(c, c->line.data, c->line.len, 1);
			fg_buf_reset(&c->line);
			fg_buf_addc(&c->line, p[i]);
		}
	}
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
	struct rn_kube_cmd *c = st->data;
	int is_out = st == (uv_stream_t *)&c->pipes[1];

	if (n > 0 && is_out && c->lines)
		feed_lines(c, buf->base, (size_t)n);
	else if (n > 0)
		(void)fg_buf_add(is_out ? &c->out : &c->err, buf->base, (size_t)n);
	free(buf->base);
	if (n < 0) {
		if (is_out && c->lines && c->line.len)
			c->lines(c, c->line.data, c->line.len, 0);
		fg_buf_reset(&c->line);
		close_handle(c, (uv_handle_t *)st);
	}
}

static void on_written(uv_write_t *w, int status)
{
	struct rn_kube_cmd *c = w->data;

	(void)status;
	if (c->input)
		fg_seal_wipe(c->input, strlen(c->input));
	free(c->input);
	c->input = NULL;
	if (!c->keep_input || !c->running)
		close_handle(c, (uv_handle_t *)&c->pipes[0]);
}

static void on_deadline(uv_timer_t *t)
{
	rn_kube_cmd_kill(t->data);
}

static void init_pipes(struct rn_kube_cmd *c, uv_stdio_container_t *stdio, const char *input)
{
	for (int i = 0; i < 3; i++) {
		stdio[i].flags = UV_IGNORE;
		if (i == 0 && !input)
			continue;
		uv_pipe_init(c->loop, &c->pipes[i], 0);
		c->pipes[i].data = c;
		c->open++;
		stdio[i].flags = UV_CREATE_PIPE | (i ? UV_WRITABLE_PIPE : UV_READABLE_PIPE);
		stdio[i].data.stream = (uv_stream_t *)&c->pipes[i];
	}
}

static void start_io(struct rn_kube_cmd *c, const char *input, int timeout_ms)
{
	for (int i = 1; i < 3; i++)
		uv_read_start((uv_stream_t *)&c->pipes[i], on_alloc, on_read);
	if (input) {
		uv_buf_t b;

		c->input = fg_xstrdup(input);
		b = uv_buf_init(c->input, (unsigned)strlen(c->input));
		c->wreq.data = c;
		if (uv_write(&c->wreq, (uv_stream_t *)&c->pipes[0], &b, 1, on_written))
			on_written(&c->wreq, -EPIPE);
	}
	if (timeout_ms > 0)
		uv_timer_start(&c->timer, on_deadline, (uint64_t)timeout_ms, 0);
}

int rn_kube_cmd_start(struct rn_kube_cmd *c, uv_loop_t *loop, char *const *argv, const char *input,
		      int timeout_ms, rn_kube_cmd_cb done, void *data)
{
	uv_stdio_container_t stdio[3];
	uv_process_options_t o = { 0 };
	rn_kube_line_cb lines = c->lines;
	int keep = c->keep_input, r;

	memset(c, 0, sizeof(*c));
	c->lines = lines;
	c->keep_input = keep;
	c->loop = loop;
	c->data = data;
	fg_buf_init(&c->out, RN_KUBE_CMD_OUT_MAX);
	fg_buf_init(&c->err, RN_KUBE_CMD_ERR_MAX);
	fg_buf_init(&c->line, RN_KUBE_LINE_MAX);
	init_pipes(c, stdio, input);
	uv_timer_init(loop, &c->timer);
	c->timer.data = c;
	c->open++;
	o.file = argv[0];
	o.args = (char **)argv;
	o.stdio = stdio;
	o.stdio_count = 3;
	o.exit_cb = on_exit_cb;
	/* A group of its own: the session's SIGTERM to the kubernetes-job
	 * child's group must not cut the log stream that brings the summary. */
	o.flags = UV_PROCESS_DETACHED;
	c->proc.data = c;
	c->open++;
	r = uv_spawn(loop, &c->proc, &o);
	if (r) {
		c->done = NULL;
		for (int i = 0; i < 3; i++)
			if (stdio[i].flags != UV_IGNORE)
				close_handle(c, (uv_handle_t *)&c->pipes[i]);
		close_handle(c, (uv_handle_t *)&c->timer);
		close_handle(c, (uv_handle_t *)&c->proc);
		return r;
	}
	c->running = 1;
	c->done = done;
	start_io(c, input, timeout_ms);
	return 0;
}

void rn_kube_cmd_kill(struct rn_kube_cmd *c)
{
	if (c->running && !c->killed) {
		c->killed = 1;
		uv_process_kill(&c->proc, SIGKILL);
	}
}

int rn_kube_cmd_busy(const struct rn_kube_cmd *c)
{
	return c->open > 0;
}

char *rn_kube_cmd_error(const struct rn_kube_cmd *c)
{
	const char *e = fg_buf_str(&c->err);
	size_t n = strcspn(e, "\n");

	if (!n)
		return fg_xasprintf("kubectl exited with code %d", c->code);
	return fg_xstrndup(e, n);
}

void rn_kube_cmd_release(struct rn_kube_cmd *c)
{
	fg_buf_release(&c->out);
	fg_buf_release(&c->err);
	fg_buf_release(&c->line);
	free(c->input);
	c->input = NULL;
}

static void on_sync_done(struct rn_kube_cmd *c)
{
	(void)c;
}

int rn_kube_cmd_run(struct rn_kube_cmd *c, char *const *argv, const char *input, int timeout_ms)
{
	uv_loop_t loop;
	int r = uv_loop_init(&loop);

	if (r)
		return r;
	c->lines = NULL;
	r = rn_kube_cmd_start(c, &loop, argv, input, timeout_ms, on_sync_done, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_loop_close(&loop);
	return r ? r : c->code;
}
