/*
 * agent.c - run one agent: spawn, stream, watchdogs, group cleanup (see agent.h).
 */
#include "agent.h"
#include "frames.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"
#include "forge/buf.h"
#include "forge/fsutil.h"
#include "forge/msg.h"
#include "forge/text.h"
#include "forge/timeutil.h"

#define TICK_MS 100
#define NS_PER_S 1000000000.0
/* After SIGKILL, how long we keep waiting for pipes held by a process
 * outside the group (it escaped with setsid) before giving up on them. */
#define FORCE_CLOSE_NS (2ull * 1000000000ull)

struct stream {
	int fd;
	bool is_out;
	char line[EP_AGENT_LINE_MAX];
	size_t len;
};

struct run {
	struct ep_pid1 *p;
	const struct ep_agent_spec *s;
	struct ep_agent_result *r;
	pid_t pid;
	bool reaped;
	int status;
	int in_fd;
	size_t in_off;
	struct stream out, err;
	uint64_t start, last_output, reaped_at, kill_at, force_at;
	int stage;                 /* 0 running, 1 SIGTERM sent, 2 SIGKILL sent */
	bool have_reason;
	enum ep_agent_end reason;
	unsigned nterm_seen;
	uint64_t log_written;
	bool log_cut;
	uint64_t next_beat;        /* when the next heartbeat is due; 0: never */
	uint64_t lines;            /* lines echoed so far */
};

struct spawn_err {
	int stage;   /* 0 redirect, 1 chdir, 2 exec, 3 the box */
	int err;
};

static uint64_t secs_ns(double s)
{
	return s <= 0 ? 0 : (uint64_t)(s * NS_PER_S);
}

void ep_write_all(int fd, const void *p, size_t n)
{
	/* A closed stderr must not stop the agent's supervision. */
	(void)fg_write_all(fd, p, n);
}

/* One "[role] " line on echo_fd, control characters escaped as in the
 * runner's log: an agent's "\r\033[2K" would otherwise erase the prefix on a
 * terminal (or in docker/kubectl logs) and show a forged line. One write, so
 * lines from the two streams do not interleave. */
/*
 * Several agents share echo_fd (a reviewer panel): one write() of at most
 * PIPE_BUF bytes to a pipe is never mixed with another's, a longer one may
 * be. A line whose tail landed at the start of a line of its own could
 * pass for one of the entrypoint's frame lines, so a long line goes out as
 * several, each "[role] " + a piece + "\n" in one write of at most
 * PIPE_BUF bytes. b holds the prefix (its first plen bytes, far shorter
 * than PIPE_BUF), the text and the newline; pieces end on a UTF-8 boundary.
 */
static void emit_pieces(int fd, const struct fg_buf *b, size_t plen)
{
	size_t room = PIPE_BUF - plen - 1;
	char piece[PIPE_BUF];

	memcpy(piece, b->data, plen);
	for (size_t i = plen, end = b->len - 1; i < end;) {
		size_t n = end - i < room ? end - i : room;

		while (i + n < end && n > 1 && ((unsigned char)b->data[i + n] & 0xc0) == 0x80)
			n--;
		memcpy(piece + plen, b->data + i, n);
		piece[plen + n] = '\n';
		ep_write_all(fd, piece, plen + n + 1);
		i += n;
	}
}

static void emit_line(struct run *x, struct stream *st)
{
	struct fg_buf b;
	size_t len = st->len, plen;

	st->len = 0;
	x->lines++;
	if (x->s->echo_fd < 0)
		return;
	/* \xNN is the widest escape: four bytes per byte. */
	fg_buf_init(&b, 4 * sizeof(st->line) + 80);
	fg_buf_addf(&b, "[%s] ", x->s->role);
	plen = b.len;
	fg_escape_controls(&b, st->line, len, 0);
	fg_buf_addc(&b, '\n');
	if (x->s->atomic_echo && b.len > PIPE_BUF)
		emit_pieces(x->s->echo_fd, &b, plen);
	else
		ep_write_all(x->s->echo_fd, b.data, b.len);
	fg_buf_release(&b);
}

static void echo_bytes(struct run *x, struct stream *st, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n') {
			emit_line(x, st);
			continue;
		}
		st->line[st->len++] = p[i];
		if (st->len == sizeof(st->line))
			emit_line(x, st);   /* an endless line goes out in chunks */
	}
}

static void log_bytes(struct run *x, const char *p, size_t n)
{
	const struct ep_agent_spec *s = x->s;
	uint64_t room = s->log_max > x->log_written ? s->log_max - x->log_written : 0;
	size_t k = n < room ? n : (size_t)room;

	if (s->log_fd < 0)
		return;
	ep_write_all(s->log_fd, p, k);
	x->log_written += k;
	if (k < n && !x->log_cut) {
		char note[128];
		int m = snprintf(note, sizeof(note),
				 "\n[forge-entrypoint: output truncated here, the log keeps %llu bytes]\n",
				 (unsigned long long)s->log_max);

		ep_write_all(s->log_fd, note, (size_t)m);
		x->log_cut = true;
	}
}

static void on_data(struct run *x, struct stream *st, const char *p, size_t n)
{
	x->last_output = fg_monotonic_ns();
	if (st->is_out) {
		x->r->out_bytes += n;
		if (x->s->capture)
			ep_capture_add(x->s->capture, p, n);
		if (x->s->output)
			ep_output_feed(x->s->output, p, n);
		log_bytes(x, p, n);
	} else {
		x->r->err_bytes += n;
		if (x->s->merge_stderr && x->s->capture)
			ep_capture_add(x->s->capture, p, n);
		if (x->s->merge_stderr)
			log_bytes(x, p, n);
	}
	echo_bytes(x, st, p, n);
}

static void close_stream(struct run *x, struct stream *st)
{
	if (st->fd < 0)
		return;
	close(st->fd);
	st->fd = -1;
	if (st->len)
		emit_line(x, st);
}

static void read_stream(struct run *x, struct stream *st)
{
	char buf[65536];
	ssize_t n = read(st->fd, buf, sizeof(buf));

	if (n > 0)
		on_data(x, st, buf, (size_t)n);
	else if (n == 0 || (errno != EINTR && errno != EAGAIN))
		close_stream(x, st);
}

static void close_input(struct run *x)
{
	if (x->in_fd >= 0)
		close(x->in_fd);
	x->in_fd = -1;
}

static void feed_input(struct run *x)
{
	const struct ep_agent_spec *s = x->s;
	ssize_t n = write(x->in_fd, s->input + x->in_off, s->input_len - x->in_off);

	if (n > 0)
		x->in_off += (size_t)n;
	if ((n < 0 && errno != EINTR && errno != EAGAIN) || x->in_off >= s->input_len)
		close_input(x);   /* EOF right after the prompt; EPIPE: it closed stdin */
}

/* Starts ending the run: signal the group, SIGKILL after the grace. */
static void terminate(struct run *x, enum ep_agent_end why, int sig)
{
	if (!x->have_reason) {
		x->reason = why;
		x->have_reason = true;
	}
	if (x->stage == 0) {
		killpg(x->pid, sig);
		x->stage = 1;
		x->kill_at = fg_monotonic_ns() + secs_ns(x->s->kill_grace_s);
	}
}

/*
 * Sends sig to the agent's process group and, when we are a subreaper, to
 * every child of ours and its group: a descendant that called setsid() (or
 * a shell's job control setpgid()) left the agent's group, and is our child
 * once its parent is gone. We start no other processes, so each child is
 * the agent or a leftover of one. sig 0 only checks. True when anything
 * was there to signal.
 */
static bool signal_leftovers(struct run *x, int sig)
{
	pid_t kids[EP_PID1_CHILDREN_MAX];
	bool any = killpg(x->pid, sig) == 0;
	size_t n;

	if (!x->p->subreaper)
		return any;
	n = ep_pid1_children(kids, EP_PID1_CHILDREN_MAX);
	/* Unreaped children cannot be recycled, so these pids are safe to hit. */
	for (size_t i = 0; i < n; i++) {
		killpg(kids[i], sig);
		any = kill(kids[i], sig) == 0 || any;
	}
	return any;
}

static void kill_hard(struct run *x)
{
	signal_leftovers(x, SIGKILL);
	x->stage = 2;
	x->force_at = fg_monotonic_ns() + FORCE_CLOSE_NS;
}

static void check_signals(struct run *x)
{
	if (x->p->nterm == x->nterm_seen)
		return;
	if (x->nterm_seen == 0)
		terminate(x, EP_AGENT_INTERRUPTED, x->p->term_sig);
	else if (x->stage < 2)
		kill_hard(x);   /* a second SIGTERM: no more grace */
	x->nterm_seen = x->p->nterm;
}

/* The heartbeat's frame: the runner's agent_running event comes from it. */
static void beat_frame(const struct run *x, uint64_t now)
{
	cJSON *f = cJSON_CreateObject();

	if (!f || !cJSON_AddStringToObject(f, "role", x->s->role) ||
	    !cJSON_AddNumberToObject(f, "seconds", (double)((now - x->start) / NS_PER_S)) ||
	    !cJSON_AddNumberToObject(f, "lines", (double)x->lines) ||
	    !cJSON_AddNumberToObject(f, "bytes", (double)(x->r->out_bytes + x->r->err_bytes)))
		abort();
	ep_frame_event("agent_running", f);
	cJSON_Delete(f);
}

/* The heartbeat: which agent has run for how long and how much it printed,
 * one write (well under PIPE_BUF) so that it never splits. */
static void heartbeat(struct run *x, uint64_t now)
{
	char line[256];
	int n;

	if (!x->next_beat || now < x->next_beat || x->reaped || x->s->echo_fd < 0)
		return;
	x->next_beat = now + secs_ns(x->s->heartbeat_s);
	n = snprintf(line, sizeof(line), FG_MSG_PREFIX "agent_running: %s for %.0f s, %llu lines, %llu "
		     "bytes of output\n", x->s->role, (double)(now - x->start) / NS_PER_S,
		     (unsigned long long)x->lines, (unsigned long long)(x->r->out_bytes + x->r->err_bytes));
	if (n > 0 && (size_t)n < sizeof(line))
		ep_write_all(x->s->echo_fd, line, (size_t)n);
	beat_frame(x, now);
}

static void check_clock(struct run *x)
{
	uint64_t now = fg_monotonic_ns();
	const struct ep_agent_spec *s = x->s;

	heartbeat(x, now);
	if (x->stage == 1 && now >= x->kill_at)
		kill_hard(x);
	if (!x->reaped) {
		if (now >= x->start + secs_ns(s->timeout_s))
			terminate(x, EP_AGENT_TIMEOUT, SIGTERM);
		else if (s->idle_timeout_s > 0 && now >= x->last_output + secs_ns(s->idle_timeout_s))
			terminate(x, EP_AGENT_IDLE, SIGTERM);
	} else if (x->stage == 0 && now >= x->reaped_at + secs_ns(s->kill_grace_s)) {
		/* The agent is gone but its leftovers hold the pipes open. */
		signal_leftovers(x, SIGTERM);
		x->stage = 1;
		x->kill_at = now + secs_ns(s->kill_grace_s);
	}
	if (x->stage == 2 && now >= x->force_at) {
		close_stream(x, &x->out);
		close_stream(x, &x->err);
	}
}

/* Supervision itself failed (poll() refused, e.g. ENOMEM): never leave the
 * agent running unwatched, nor report it as a success. Kill everything of
 * it and wait for it: its status then says it was killed. */
static void abandon(struct run *x)
{
	signal_leftovers(x, SIGKILL);
	while (!x->reaped) {
		if (waitpid(x->pid, &x->status, 0) == x->pid) {
			x->reaped = true;
		} else if (errno != EINTR) {
			x->status = SIGKILL;  /* a wait status meaning "killed by SIGKILL" */
			x->reaped = true;
		}
	}
	close_stream(x, &x->out);
	close_stream(x, &x->err);
}

static void supervise(struct run *x)
{
	while (!x->reaped || x->out.fd >= 0 || x->err.fd >= 0) {
		struct pollfd pf[4] = {
			{ x->p->fd, POLLIN, 0 },
			{ x->in_fd, POLLOUT, 0 },
			{ x->out.fd, POLLIN, 0 },
			{ x->err.fd, POLLIN, 0 },
		};

		if (poll(pf, 4, TICK_MS) < 0 && errno != EINTR) {
			abandon(x);
			break;
		}
		if (pf[1].revents)
			feed_input(x);
		if (pf[2].revents)
			read_stream(x, &x->out);
		if (pf[3].revents)
			read_stream(x, &x->err);
		if (!x->reaped && ep_pid1_poll(x->p, x->pid, &x->status)) {
			x->reaped = true;
			x->reaped_at = fg_monotonic_ns();
			close_input(x);
		} else if (x->reaped) {
			ep_pid1_poll(x->p, 0, NULL);
		}
		check_signals(x);
		check_clock(x);
	}
	close_input(x);
}

/* SIGTERM what is left of the group (and of the agent's other leftovers),
 * SIGKILL after the grace, reap it. */
static void clean_group(struct run *x)
{
	uint64_t t0 = fg_monotonic_ns();
	uint64_t grace = secs_ns(x->s->kill_grace_s);
	bool killed = false;

	ep_pid1_poll(x->p, 0, NULL);
	if (!signal_leftovers(x, 0))
		return;
	signal_leftovers(x, SIGTERM);
	while (signal_leftovers(x, 0)) {
		struct pollfd pf = { x->p->fd, POLLIN, 0 };
		uint64_t now = fg_monotonic_ns();

		/* Again after SIGKILL: a leftover's children come to us when it dies. */
		if (killed || now >= t0 + grace) {
			signal_leftovers(x, SIGKILL);
			killed = true;
		}
		if (now >= t0 + grace + FORCE_CLOSE_NS)
			break;   /* not our child any more (no subreaper): init reaps it */
		poll(&pf, 1, 20);
		ep_pid1_poll(x->p, 0, NULL);
		check_signals(x);
	}
}

static void child(const struct ep_pid1 *p, const struct ep_agent_spec *s, const struct ep_box *box,
		  const int fds[3], int errfd)
{
	struct spawn_err e = { 0, 0 };

	ep_pid1_child_reset(p);
	setpgid(0, 0);
	if (dup2(fds[0], 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[2], 2) < 0) {
		e.err = errno;
	} else if (chdir(s->cwd) < 0) {
		e.stage = 1;
		e.err = errno;
	} else {
		/* The box last: its uid may not enter the working directory
		 * of a root entrypoint, its ruleset may not open it. */
		e.err = -ep_box_enter(box);
		e.stage = 3;
		if (!e.err) {
			execvpe(s->argv[0], s->argv, s->envp);
			e.stage = 2;
			e.err = errno;
		}
	}
	ep_write_all(errfd, &e, sizeof(e));
	_exit(127);
}

/* Forks the agent; fds are the child's ends. 0 started, 1 not started
 * (r filled), or a negative errno. */
static int spawn(struct run *x, const struct ep_box *box, const int fds[3])
{
	struct spawn_err e;
	int ep[2];
	ssize_t n;

	if (pipe2(ep, O_CLOEXEC) < 0)
		return -errno;
	x->pid = fork();
	if (x->pid < 0) {
		int err = errno;

		close(ep[0]);
		close(ep[1]);
		return -err;
	}
	if (x->pid == 0)
		child(x->p, x->s, box, fds, ep[1]);
	close(ep[1]);
	setpgid(x->pid, x->pid);   /* both sides: no race with the first killpg */
	do {
		n = read(ep[0], &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(ep[0]);
	if (n != (ssize_t)sizeof(e))
		return 0;
	while (waitpid(x->pid, NULL, 0) < 0 && errno == EINTR)
		;
	x->r->end = EP_AGENT_NOT_STARTED;
	x->r->error = e.err;
	if (e.stage == 1)
		snprintf(x->r->what, sizeof(x->r->what), "cannot run %s: cannot enter '%s': %s",
			 x->s->role, x->s->cwd, strerror(e.err));
	else if (e.stage == 3)
		snprintf(x->r->what, sizeof(x->r->what), "cannot run %s: cannot enter its sandbox: %s",
			 x->s->role, strerror(e.err));
	else if (x->s->argv[0][0] != '/' && strchr(x->s->argv[0], '/'))
		/* execvp() takes "bin/agent" relative to the working directory:
		 * say so, the path was likely written relative to somewhere else. */
		snprintf(x->r->what, sizeof(x->r->what),
			 "cannot run %s '%s': %s (a relative path is resolved from the workspace '%s')",
			 x->s->role, x->s->argv[0], strerror(e.err), x->s->cwd);
	else
		snprintf(x->r->what, sizeof(x->r->what), "cannot run %s '%s': %s",
			 x->s->role, x->s->argv[0], strerror(e.err));
	return 1;
}

static void describe(struct run *x)
{
	struct ep_agent_result *r = x->r;
	const char *role = x->s->role;

	if (x->have_reason) {
		r->end = x->reason;
	} else if (WIFSIGNALED(x->status)) {
		r->end = EP_AGENT_SIGNALED;
		r->signal = WTERMSIG(x->status);
	} else {
		r->end = EP_AGENT_EXITED;
		r->exit_code = WEXITSTATUS(x->status);
	}
	switch (r->end) {
	case EP_AGENT_EXITED:
		snprintf(r->what, sizeof(r->what), "%s exited with status %d", role, r->exit_code);
		break;
	case EP_AGENT_SIGNALED:
		snprintf(r->what, sizeof(r->what), "%s was killed by signal %d (%s)", role, r->signal,
			 strsignal(r->signal));
		break;
	case EP_AGENT_TIMEOUT:
		snprintf(r->what, sizeof(r->what), "%s timed out after %g s (FORGE_AGENT_TIMEOUT)",
			 role, x->s->timeout_s);
		break;
	case EP_AGENT_IDLE:
		snprintf(r->what, sizeof(r->what),
			 "%s printed nothing for %g s and was stopped as hung (FORGE_AGENT_IDLE_TIMEOUT)",
			 role, x->s->idle_timeout_s);
		break;
	case EP_AGENT_INTERRUPTED:
		r->signal = x->p->term_sig;
		snprintf(r->what, sizeof(r->what), "%s stopped: forge-entrypoint received signal %d (%s)",
			 role, r->signal, strsignal(r->signal));
		break;
	case EP_AGENT_NOT_STARTED:
		break;
	}
}

static void init_run(struct run *x, struct ep_pid1 *p, const struct ep_agent_spec *s,
		     struct ep_agent_result *r)
{
	memset(x, 0, sizeof(*x));
	memset(r, 0, sizeof(*r));
	x->p = p;
	x->s = s;
	x->r = r;
	x->in_fd = x->out.fd = x->err.fd = -1;
	x->out.is_out = true;
	x->nterm_seen = p->nterm;
	x->start = x->last_output = fg_monotonic_ns();
	r->t.started_ms = fg_time_now_ms();
	x->next_beat = s->heartbeat_s > 0 ? x->start + secs_ns(s->heartbeat_s) : 0;
}

/* The run's wall time, and its end on the wall clock measured from its
 * start by the monotonic clock (a clock step cannot end it before it began). */
static void finish_times(struct run *x)
{
	x->r->seconds = fg_seconds_since(x->start);
	x->r->t.ended_ms = x->r->t.started_ms + (int64_t)(x->r->seconds * 1000.0);
}

static void close_pipes(int a[2], int b[2], int c[2])
{
	int *all[3] = { a, b, c };

	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 2; j++)
			if (all[i][j] >= 0)
				close(all[i][j]);
}

int ep_agent_run(struct ep_pid1 *p, const struct ep_agent_spec *s, struct ep_agent_result *r)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
	struct ep_box box;
	struct run x;
	int rc;

	init_run(&x, p, s, r);
	rc = s->unboxed ? ep_box_none(&box) : ep_box_prepare(&box, s->cwd, s->envp, s->read_dir);
	if (rc < 0) {
		r->end = EP_AGENT_NOT_STARTED;
		r->error = -rc;
		snprintf(r->what, sizeof(r->what), "cannot run %s: cannot build its sandbox: %s", s->role,
			 strerror(-rc));
		return 0;
	}
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		rc = -errno;
		close_pipes(in, out, err);
		ep_box_release(&box);
		return rc;
	}
	rc = spawn(&x, &box, (const int[3]){ in[0], out[1], err[1] });
	ep_box_release(&box);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	if (rc != 0) {
		close(in[1]);
		close(out[0]);
		close(err[0]);
		finish_times(&x);
		return rc < 0 ? rc : 0;
	}
	x.in_fd = in[1];
	x.out.fd = out[0];
	x.err.fd = err[0];
	fcntl(x.in_fd, F_SETFL, O_NONBLOCK);
	if (!s->input || !s->input_len)
		close_input(&x);
	supervise(&x);
	clean_group(&x);
	describe(&x);
	finish_times(&x);
	return 0;
}

bool ep_agent_ok(const struct ep_agent_result *r)
{
	return r->end == EP_AGENT_EXITED && r->exit_code == 0;
}

static bool overridden(const char *entry, char *const *set)
{
	size_t n = strcspn(entry, "=");

	for (size_t i = 0; set && set[i]; i++)
		if (strcspn(set[i], "=") == n && !strncmp(entry, set[i], n))
			return true;
	return false;
}

void ep_env_build(struct fg_strvec *out, char *const *base, char *const *set)
{
	for (size_t i = 0; base && base[i]; i++)
		if (!overridden(base[i], set))
			fg_strvec_push(out, base[i]);
	for (size_t i = 0; set && set[i]; i++)
		if (strchr(set[i], '='))
			fg_strvec_push(out, set[i]);
}

const char *ep_env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], name, n) && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}
