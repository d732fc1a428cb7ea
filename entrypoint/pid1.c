/*
 * pid1.c - signals through a signalfd, reaping, subreaper (see pid1.h).
 */
#include "pid1.h"

#include "forge/exit.h"
#include "lifeline.h"

#include <errno.h>
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

int ep_pid1_block(void)
{
	sigset_t set;

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

static void drain_signals(struct ep_pid1 *p)
{
	struct signalfd_siginfo si;

	for (;;) {
		ssize_t n = read(p->fd, &si, sizeof(si));

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(si))
			return;
		if (is_stop_signal((int)si.ssi_signo)) {
			if (!p->term_sig)
				p->term_sig = (int)si.ssi_signo;
			p->nterm++;
		}
	}
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
}

int ep_pid1_poll(struct ep_pid1 *p, pid_t watch, int *status)
{
	int found = 0;

	if (p->fd >= 0)
		drain_signals(p);
	check_lifeline(p);
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
	return FG_EXIT_SIGNAL_BASE + p->term_sig;
}
