/*
 * pid1.c - signals through a signalfd, reaping, subreaper (see pid1.h).
 */
#include "pid1.h"

#include "cli.h"
#include "frames.h"
#include "forge/exit.h"
#include "lifeline.h"
#include "forge/timeutil.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

static void watched_set(sigset_t *s)
{
	sigemptyset(s);
	sigaddset(s, SIGTERM);
	sigaddset(s, SIGINT);
	sigaddset(s, SIGHUP);
	sigaddset(s, SIGQUIT);
	sigaddset(s, SIGCHLD);
}

/* The mask the process had before ep_pid1_block(), which agents must get
 * back (process-wide state, like the signal dispositions themselves). */
static sigset_t early_mask;
static int early_blocked;

/* Out of our agents' reach (same uid): no ptrace, no /proc/PID/fd, environ
 * or mem, no pidfd_getfd() of our descriptors. Survives fork (the panel's
 * helpers), is reset by execve (agents are ordinary processes again). */
static void undumpable(void)
{
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int ep_pid1_block(void)
{
	sigset_t set;

	undumpable();
	if (early_blocked)
		return 0;
	watched_set(&set);
	if (sigprocmask(SIG_BLOCK, &set, &early_mask) < 0)
		return -errno;
	early_blocked = 1;
	return 0;
}

/* SIGTERM, SIGINT, SIGHUP and SIGQUIT all end a run: forwarded, 128+N. */
static int is_stop_signal(int sig)
{
	return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT;
}

int ep_pid1_init(struct ep_pid1 *p)
{
	sigset_t set;
	struct sigaction ign;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	undumpable();
	/* Feeding the prompt to an agent that already exited must fail with
	 * EPIPE, not kill us (main() does this too; tests link us without it). */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, NULL);
	/* An ignored SIGCHLD is inherited through exec and makes the kernel
	 * reap our children itself: waitpid() would never report the agent
	 * and a run would wait for it forever. */
	ign.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &ign, NULL);
	watched_set(&set);
	if (sigprocmask(SIG_BLOCK, &set, &p->old_mask) < 0)
		return -errno;
	/* Blocked earlier (ep_pid1_block): what agents get back is the mask
	 * from before that, and a signal received meanwhile is still pending
	 * and is read from the signalfd below. */
	if (early_blocked)
		p->old_mask = early_mask;
	p->fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (p->fd < 0) {
		int e = errno;

		sigprocmask(SIG_SETMASK, &p->old_mask, NULL);
		return -e;
	}
	/* Not PID 1 (a local run, a test, docker --init): orphans of our agents
	 * would go to the real init and escape our reaping and group checks. */
	p->subreaper = getpid() == 1 || prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
	return 0;
}

void ep_pid1_release(struct ep_pid1 *p)
{
	if (p->fd < 0)
		return;
	close(p->fd);
	p->fd = -1;
	sigprocmask(SIG_SETMASK, &p->old_mask, NULL);
}

void ep_pid1_child_reset(const struct ep_pid1 *p)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	/* main() ignores SIGPIPE, and an ignored disposition survives exec. */
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigprocmask(SIG_SETMASK, &p->old_mask, NULL);
}

/* The parent of pid (the field after the command in /proc/PID/stat; the
 * command may hold ')' itself, so the last one ends it), or -1 when pid is
 * gone. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[1024], *close_paren;
	int fd, ppid;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	do {
		n = read(fd, buf, sizeof(buf) - 1);
	} while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	close_paren = strrchr(buf, ')');
	if (!close_paren || sscanf(close_paren + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

/*
 * Who sent a stop signal: EP_SENDER_OUTSIDE (pid 0: from outside our pid
 * namespace, the container engine or the kubelet; a process whose chain of
 * parents does not reach us: the runner, our parent, or an operator),
 * EP_SENDER_OURS (a descendant: an agent or something it started; every
 * orphan of theirs is re-parented to us, the subreaper, so the chain holds)
 * or EP_SENDER_GONE (it exited and was reaped before we read the signal:
 * it cannot be placed, and is taken for one of ours).
 */
enum { EP_SENDER_OUTSIDE, EP_SENDER_OURS, EP_SENDER_GONE };

static int sender_kind(pid_t pid)
{
	pid_t self = getpid();

	/* Bounded: a chain is never longer than the processes there are. */
	for (int depth = 0; pid > 0 && depth < 1 << 16; depth++) {
		if (pid == self)
			return depth ? EP_SENDER_OURS : EP_SENDER_OUTSIDE;
		pid = parent_of(pid);
		if (pid < 0)
			return depth ? EP_SENDER_OUTSIDE : EP_SENDER_GONE;
	}
	return EP_SENDER_OUTSIDE;
}

/* signal_ignored, logged for the first EP_PID1_IGNORED_LOG_MAX signals; a
 * flood of them is counted, not logged line by line. */
static void ignored(struct ep_pid1 *p, int sig, pid_t pid, int kind)
{
	const char *why = kind == EP_SENDER_OURS ? "a process of its own agents" :
			  "which was gone before it could be told apart from the agents' processes";
	cJSON *f;

	p->nignored++;
	if (p->nignored > EP_PID1_IGNORED_LOG_MAX)
		return;
	/* The runner's signal_ignored event comes from this frame. */
	f = cJSON_CreateObject();
	if (!f || !cJSON_AddStringToObject(f, "signal", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?") ||
	    !cJSON_AddNumberToObject(f, "sender_pid", (double)pid) ||
	    !cJSON_AddStringToObject(f, "reason", why))
		abort();
	ep_frame_event("signal_ignored", f);
	cJSON_Delete(f);
	ep_log(FG_MSG_WARN, "signal_ignored: SIG%s from pid %ld, %s; only forge-runner or the container "
	       "engine can stop forge-entrypoint%s", sigabbrev_np(sig), (long)pid,
	       kind == EP_SENDER_OURS ? "a process of its own agents" :
	       "which was gone before it could be told apart from the agents' processes",
	       p->nignored == EP_PID1_IGNORED_LOG_MAX ? " (further ignored signals are not logged)" : "");
}

static void drain_signals(struct ep_pid1 *p)
{
	struct signalfd_siginfo si;

	for (;;) {
		ssize_t n = read(p->fd, &si, sizeof(si));
		int kind;

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(si))
			return;
		if (!is_stop_signal((int)si.ssi_signo))
			continue;
		kind = sender_kind((pid_t)si.ssi_pid);
		if (kind != EP_SENDER_OUTSIDE) {
			ignored(p, (int)si.ssi_signo, (pid_t)si.ssi_pid, kind);
			continue;
		}
		if (!p->term_sig)
			p->term_sig = (int)si.ssi_signo;
		p->nterm++;
	}
}

/* The deadline's stop on the monotonic clock (0: none), the margin it
 * keeps, the deadline itself, and the process that armed it: the panel's
 * helpers inherit these by fork and are stopped by the loop instead. */
static uint64_t deadline_stop_ns;
static double deadline_margin_s;
static int64_t deadline_ms;
static pid_t deadline_owner;

void ep_pid1_set_deadline(double deadline_s, double kill_grace_s)
{
	double left = deadline_s - (double)fg_time_now_ms() / 1000.0;
	double margin = kill_grace_s + 1.0;
	double wait_s;

	deadline_stop_ns = 0;
	if (deadline_s <= 0)
		return;
	if (margin > left / 2)
		margin = left > 0 ? left / 2 : 0;
	deadline_margin_s = margin;
	deadline_ms = (int64_t)(deadline_s * 1000.0);
	deadline_owner = getpid();
	/* Bounded (a century) so the nanoseconds fit; at least 1 ns: 0 means
	 * no deadline. */
	wait_s = left > margin ? left - margin : 0;
	if (wait_s > 3.2e9)
		wait_s = 3.2e9;
	deadline_stop_ns = fg_monotonic_ns() + (uint64_t)(wait_s * 1e9) + 1;
}

void ep_pid1_deadline_reason(char *why, size_t n)
{
	char at[FG_TIMESTAMP_LEN];

	fg_time_rfc3339_ms_at(at, deadline_ms);
	snprintf(why, n, "the run's time ran out: its deadline is %s (FORGE_DEADLINE, from the runner's "
		 "--timeout), and the entrypoint stopped %.1f s before it to leave this summary", at,
		 deadline_margin_s);
}

/* The deadline's stop: like the runner's SIGTERM, unless a stop already
 * came. */
static void check_deadline(struct ep_pid1 *p)
{
	if (!deadline_stop_ns || p->term_sig || p->deadline_passed || getpid() != deadline_owner ||
	    fg_monotonic_ns() < deadline_stop_ns)
		return;
	p->deadline_passed = true;
	p->term_sig = SIGTERM;
	p->nterm++;
}

/* The runner's lifeline ended (lifeline.h): a stop like its SIGTERM. */
static void check_lifeline(struct ep_pid1 *p)
{
	if (p->lifeline_lost || !ep_lifeline_lost())
		return;
	p->lifeline_lost = true;
	if (!p->term_sig)
		p->term_sig = SIGTERM;
	p->nterm++;
}

void ep_pid1_signals(struct ep_pid1 *p)
{
	if (p->fd >= 0)
		drain_signals(p);
	check_lifeline(p);
	check_deadline(p);
}

int ep_pid1_poll(struct ep_pid1 *p, pid_t watch, int *status)
{
	int found = 0;

	if (p->fd >= 0)
		drain_signals(p);
	check_lifeline(p);
	check_deadline(p);
	for (;;) {
		int st;
		pid_t pid = waitpid(-1, &st, WNOHANG);

		if (pid < 0 && errno == EINTR)
			continue;
		if (pid <= 0)
			break;
		if (watch > 0 && pid == watch) {
			*status = st;
			found = 1;
		}
	}
	return found;
}

int ep_pid1_exit_code(const struct ep_pid1 *p)
{
	if (p->deadline_passed)
		return FG_EXIT_TIMEOUT;
	return FG_EXIT_SIGNAL_BASE + p->term_sig;
}

size_t ep_pid1_children(pid_t *out, size_t max)
{
	char path[64], buf[EP_PID1_CHILDREN_MAX * 8];
	size_t n = 0;
	ssize_t len = -1;
	int fd;

	/* The main thread's children: we start no threads, so they are all. */
	snprintf(path, sizeof(path), "/proc/self/task/%ld/children", (long)getpid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		do {
			len = read(fd, buf, sizeof(buf) - 1);
		} while (len < 0 && errno == EINTR);
		close(fd);
	}
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	for (char *c = buf, *end; n < max; c = end) {
		long pid = strtol(c, &end, 10);

		if (end == c)
			break;
		if (pid > 1)
			out[n++] = (pid_t)pid;
	}
	return n;
}

static bool kept(pid_t pid, const pid_t *keep, size_t nkeep)
{
	for (size_t i = 0; i < nkeep; i++)
		if (keep[i] == pid)
			return true;
	return false;
}

/* One pass: SIGKILL to each child not kept and to the group it leads,
 * then reap by pid what has died. The number of such children seen. */
static size_t kill_pass(const pid_t *keep, size_t nkeep)
{
	pid_t kids[EP_PID1_CHILDREN_MAX];
	size_t n = ep_pid1_children(kids, EP_PID1_CHILDREN_MAX), left = 0;

	for (size_t i = 0; i < n; i++) {
		if (kept(kids[i], keep, nkeep))
			continue;
		left++;
		/* Unreaped children cannot be recycled: these pids are safe. */
		killpg(kids[i], SIGKILL);
		kill(kids[i], SIGKILL);
		while (waitpid(kids[i], NULL, WNOHANG) < 0 && errno == EINTR)
			;
	}
	return left;
}

size_t ep_pid1_kill_orphans(struct ep_pid1 *p, const pid_t *keep, size_t nkeep, double timeout_s)
{
	uint64_t t0 = fg_monotonic_ns();
	size_t left;

	/* A killed child's own children are re-parented to us as it dies,
	 * so the passes go on until a pass finds none. */
	for (left = kill_pass(keep, nkeep); left > 0; left = kill_pass(keep, nkeep)) {
		struct pollfd pf = { p->fd, POLLIN, 0 };

		if (fg_seconds_since(t0) >= timeout_s)
			break;
		poll(&pf, p->fd >= 0 ? 1 : 0, 10);
		if (p->fd >= 0)
			drain_signals(p);
	}
	return left;
}
