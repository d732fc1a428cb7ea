/*
 * pid1.h - the entrypoint's duties as a container's first process.
 *
 * As PID 1 the kernel drops every signal we have no handler for, and every
 * orphan of the container is re-parented to us. So:
 *   - SIGTERM, SIGINT, SIGHUP, SIGQUIT (the stop signals: forwarded, then
 *     exit 128+N) and SIGCHLD are blocked and read from a signalfd (no
 *     asynchronous handlers; the agent runner polls the fd next to the
 *     agent's pipes);
 *   - every exited child is reaped with a waitpid(-1) loop, re-parented
 *     orphans included; only the pid a caller watches decides its status;
 *   - when we are not PID 1 we become a child subreaper
 *     (PR_SET_CHILD_SUBREAPER), so orphans of our agents come to us too.
 *
 * Protocol:
 *   0. ep_pid1_block() as early as possible (before the task and the
 *      configuration are read), so a stop signal that arrives meanwhile is
 *      kept pending instead of being dropped (PID 1) or killing us without
 *      a summary;
 *   1. ep_pid1_init() once, before any child is started;
 *   2. a forked child calls ep_pid1_child_reset() before exec;
 *   3. ep_pid1_poll() whenever fd is readable (or on any timer tick): it
 *      records terminating signals and reaps;
 *   4. ep_pid1_release() restores the signal mask and closes the fd.
 */
#ifndef EP_PID1_H
#define EP_PID1_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct ep_pid1 {
	int fd;              /* signalfd (non-blocking, close-on-exec); -1 before init */
	sigset_t old_mask;   /* the mask before init: restored in children and at release */
	int term_sig;        /* first stop signal received, 0 when none */
	unsigned nterm;      /* how many stop signals arrived in total */
	bool subreaper;      /* PR_SET_CHILD_SUBREAPER is in effect (or we are PID 1) */
	bool lifeline_lost;  /* the runner's stdin ended (lifeline.h): counted as a SIGTERM */
};

/* Blocks the signals, opens the signalfd, sets the subreaper flag, ignores
 * SIGPIPE, restores the default SIGCHLD disposition (an inherited SIG_IGN
 * would have the kernel reap our children behind waitpid()'s back).
 * Returns 0 or a negative errno (p->fd stays -1). */
int ep_pid1_init(struct ep_pid1 *p);
void ep_pid1_release(struct ep_pid1 *p);

/* Blocks the watched signals now, remembering the mask from before, which
 * ep_pid1_init() then hands to agents. Idempotent. 0 or a negative errno. */
int ep_pid1_block(void);

/* In a forked child before exec: restores the old mask and the default
 * dispositions of SIGPIPE, the stop signals and SIGCHLD. Async-signal-safe. */
void ep_pid1_child_reset(const struct ep_pid1 *p);

/*
 * Drains the signalfd (recording stop signals in term_sig/nterm; the end of
 * the runner's lifeline counts as its SIGTERM, lifeline.h) and reaps
 * every exited child. If watch > 0 and that child was reaped, *status gets
 * its wait status and 1 is returned; else 0.
 */
int ep_pid1_poll(struct ep_pid1 *p, pid_t watch, int *status);

/* Drains the signalfd only (recording stop signals), reaping nothing: for a
 * caller that reaps its own children by pid and must know a pid it
 * signals is still its child. */
void ep_pid1_signals(struct ep_pid1 *p);

/* Exit code for an end by signal: 128 + term_sig. */
int ep_pid1_exit_code(const struct ep_pid1 *p);

#endif
