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
 *     (PR_SET_CHILD_SUBREAPER), so orphans of our agents come to us too;
 *   - we are not dumpable (PR_SET_DUMPABLE 0, also in each panel helper,
 *     which calls ep_pid1_init itself): an agent of the same uid can
 *     neither ptrace us nor open /proc/<pid>/fd, environ or mem;
 *   - the run's deadline (FORGE_DEADLINE, ep_pid1_set_deadline()) is a
 *     stop of our own, shortly before it: as a SIGTERM, but the run ends
 *     as timed out (exit 124, cause timeout), so that the agent's grace
 *     and the sealed summary fit before the runner stops us itself;
 *   - a stop signal sent by one of our own descendants (signalfd's
 *     ssi_pid, whose chain of parents in /proc reaches our pid) is logged
 *     (signal_ignored, with the sender's pid) and ignored: an agent cannot
 *     stop us. A signal from outside our pid namespace (ssi_pid 0: the
 *     container engine, the kubelet), from our parent (the runner of the
 *     local engine, which signals our process group) or from any other
 *     process that is not our descendant stops us as before. A sender
 *     already gone when the signal is read cannot be placed and is taken
 *     for one of ours (in a container only our descendants and `docker
 *     exec` processes have a pid at all).
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

/* signal_ignored lines logged at most (then the rest are only counted). */
#define EP_PID1_IGNORED_LOG_MAX 16

struct ep_pid1 {
	int fd;              /* signalfd (non-blocking, close-on-exec); -1 before init */
	sigset_t old_mask;   /* the mask before init: restored in children and at release */
	int term_sig;        /* first stop signal received, 0 when none */
	unsigned nterm;      /* how many stop signals arrived in total */
	unsigned nignored;   /* stop signals from our own descendants, ignored */
	bool subreaper;      /* PR_SET_CHILD_SUBREAPER is in effect (or we are PID 1) */
	bool lifeline_lost;  /* the runner's stdin ended (lifeline.h): counted as a SIGTERM */
	bool deadline_passed; /* the deadline's stop came (ep_pid1_set_deadline): counted as a SIGTERM */
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
 * Drains the signalfd (recording stop signals in term_sig/nterm, those of
 * our own descendants in nignored only; the end of the runner's lifeline
 * counts as its SIGTERM, lifeline.h) and reaps
 * every exited child. If watch > 0 and that child was reaped, *status gets
 * its wait status and 1 is returned; else 0.
 */
int ep_pid1_poll(struct ep_pid1 *p, pid_t watch, int *status);

/* Drains the signalfd only (recording stop signals), reaping nothing: for a
 * caller that reaps its own children by pid and must know a pid it
 * signals is still its child. */
void ep_pid1_signals(struct ep_pid1 *p);

/* Children listed at most per call of ep_pid1_children(). */
#define EP_PID1_CHILDREN_MAX 4096

/* Our children's pids (zombies included) into out[0..max), from
 * /proc/self/task/<pid>/children; pid 1 is never listed. Their number (0
 * when the list cannot be read). */
size_t ep_pid1_children(pid_t *out, size_t max);

/*
 * Kills every child of ours but keep[0..nkeep) (may be NULL): SIGKILL to
 * it and to the process group it leads, then reaps it by pid; passes are
 * repeated (a killed child's children are re-parented to us, the
 * subreaper, as it dies) until one finds nothing or timeout_s has passed
 * (0: one pass, for a caller's loop tick). Stop signals arriving meanwhile
 * are recorded. Returns how many such children the last pass found (0:
 * none is left).
 */
size_t ep_pid1_kill_orphans(struct ep_pid1 *p, const pid_t *keep, size_t nkeep, double timeout_s);

/* Exit code for a stop: FG_EXIT_TIMEOUT (124) after the deadline's stop,
 * else 128 + term_sig. */
int ep_pid1_exit_code(const struct ep_pid1 *p);

/*
 * Arms the run's deadline for this process (not for the panel's helpers,
 * which the loop stops as on a signal): deadline_s is UTC seconds since
 * the epoch, 0 disarms. The stop comes margin before it, margin being
 * kill_grace_s + 1 s (the agent's SIGTERM-to-SIGKILL grace, then the
 * summary) but at most half the time left now, so a short run is not
 * stopped at once; a deadline already past stops at the next poll. From
 * then ep_pid1_poll() and ep_pid1_signals() record it as a SIGTERM, with
 * deadline_passed set, unless a stop signal came first.
 */
void ep_pid1_set_deadline(double deadline_s, double kill_grace_s);

/* What the deadline's stop says (the summary's failure reason): the
 * deadline as RFC 3339 UTC and the margin taken, into why[0..n). */
void ep_pid1_deadline_reason(char *why, size_t n);

#endif
