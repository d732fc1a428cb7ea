/*
 * test_pid1.c - the entrypoint's signal duties: a stop signal that arrives
 * before the signalfd exists is kept, not lost, and agents still get the
 * mask the process started with.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pid1.h"

TestSuite(pid1, .timeout = 30);

/* Polls p once, checks the stop signals it counted (the first is first, n
 * in all) and releases it. */
static void expect_stops(struct ep_pid1 *p, int first, int n)
{
	ep_pid1_poll(p, 0, NULL);
	cr_assert_eq(p->term_sig, first);
	cr_assert_eq(p->nterm, n);
	ep_pid1_release(p);
}

Test(pid1, stop_signal_before_init_is_kept_pending)
{
	struct ep_pid1 p;

	cr_assert_eq(ep_pid1_block(), 0);
	/* Blocked: this neither kills the test nor is lost. */
	cr_assert_eq(raise(SIGTERM), 0);
	cr_assert_eq(ep_pid1_init(&p), 0);
	expect_stops(&p, SIGTERM, 1);
}

Test(pid1, sighup_and_sigquit_are_stop_signals)
{
	struct ep_pid1 p;

	cr_assert_eq(ep_pid1_init(&p), 0);
	cr_assert_eq(raise(SIGHUP), 0);
	cr_assert_eq(raise(SIGQUIT), 0);
	expect_stops(&p, SIGHUP, 2);
}

Test(pid1, children_get_the_mask_from_before_the_early_block)
{
	struct ep_pid1 p;
	sigset_t none;
	pid_t pid;
	int st;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	cr_assert_eq(ep_pid1_block(), 0);
	cr_assert_eq(ep_pid1_init(&p), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		sigset_t cur;

		ep_pid1_child_reset(&p);
		sigprocmask(SIG_SETMASK, NULL, &cur);
		_exit(sigismember(&cur, SIGTERM) || sigismember(&cur, SIGHUP) ? 1 : 0);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the agent inherited blocked stop signals");
	ep_pid1_release(&p);
}

/* A stop signal from one of our own descendants (a child, and a
 * grandchild in a session of its own) is counted as ignored, not as a stop;
 * we are not dumpable. */
Test(pid1, stop_signals_from_descendants_are_ignored_and_we_are_not_dumpable)
{
	struct ep_pid1 p;
	pid_t parent = getpid(), kid;
	int st;

	cr_assert_eq(ep_pid1_init(&p), 0);
	cr_assert_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	kid = fork();
	cr_assert_geq(kid, 0);
	if (kid == 0) {
		pid_t g;

		kill(parent, SIGTERM);
		g = fork();
		if (g == 0) {
			setsid();
			kill(parent, SIGINT);
			_exit(0);
		}
		waitpid(g, NULL, 0);
		/* Stay until the parent has read both: the sender is alive
		 * (bounded: a failed test leaks nothing for long). */
		sleep(20);
		_exit(0);
	}
	for (int i = 0; i < 500 && p.nignored < 2; i++) {
		usleep(10000);
		ep_pid1_signals(&p);
	}
	cr_assert_eq(p.nignored, 2);
	cr_assert_eq(p.term_sig, 0);
	cr_assert_eq(p.nterm, 0);
	kill(kid, SIGKILL);
	cr_assert_eq(waitpid(kid, &st, 0), kid);
	/* Our own signal (no sender above us to tell apart) still stops us. */
	cr_assert_eq(raise(SIGTERM), 0);
	ep_pid1_signals(&p);
	cr_assert_eq(p.term_sig, SIGTERM);
	ep_pid1_release(&p);
}

/* Every child but the kept one is killed, with what it started. */
Test(pid1, kill_orphans_spares_the_kept_and_kills_the_rest_and_their_children)
{
	struct ep_pid1 p;
	pid_t keep, gone;
	pid_t kids[8];

	cr_assert_eq(ep_pid1_init(&p), 0);
	keep = fork();
	if (keep == 0) {
		sleep(20);
		_exit(0);
	}
	gone = fork();
	if (gone == 0) {
		/* A child of its own in another session, then wait. */
		if (fork() == 0) {
			setsid();
			sleep(20);
			_exit(0);
		}
		sleep(20);
		_exit(0);
	}
	cr_assert_eq(ep_pid1_children(kids, 8), 2);
	cr_assert_eq(ep_pid1_kill_orphans(&p, &keep, 1, 5), 0);
	cr_assert_eq(ep_pid1_children(kids, 8), 1);
	cr_assert_eq(kids[0], keep);
	kill(keep, SIGKILL);
	cr_assert_eq(waitpid(keep, NULL, 0), keep);
	ep_pid1_release(&p);
}

/* UTC seconds since the epoch, now. */
static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The deadline is a stop of our own, recorded as a SIGTERM with
 * deadline_passed, exit 124; far from it nothing happens. */
Test(pid1, the_deadline_stops_like_sigterm_but_exits_124)
{
	struct ep_pid1 p;
	char why[320];

	cr_assert_eq(ep_pid1_init(&p), 0);
	/* 60 s away with a grace of 5 s: the stop comes 6 s before it. */
	ep_pid1_set_deadline(now_s() + 60, 5);
	ep_pid1_poll(&p, 0, NULL);
	cr_assert_eq(p.term_sig, 0);
	cr_assert_not(p.deadline_passed);
	ep_pid1_set_deadline(now_s() - 1, 5);
	ep_pid1_signals(&p);
	cr_assert(p.deadline_passed);
	cr_assert_eq(p.term_sig, SIGTERM);
	cr_assert_eq(p.nterm, 1);
	cr_assert_eq(ep_pid1_exit_code(&p), 124);
	/* Counted once. */
	ep_pid1_poll(&p, 0, NULL);
	cr_assert_eq(p.nterm, 1);
	ep_pid1_deadline_reason(why, sizeof(why));
	cr_assert(strstr(why, "the run's time ran out: its deadline is 20") && strstr(why, "Z (FORGE_DEADLINE"),
		  "%s", why);
	ep_pid1_release(&p);
}

/* The margin is the agent's grace and a second, but at most half the time
 * left: a 4 s deadline with a grace of 5 s stops after 2 s, not at once. */
Test(pid1, the_deadline_margin_is_at_most_half_the_time_left)
{
	static const struct {
		double left, grace;
		const char *want;
	} cases[] = { { 4, 5, "stopped 2.0 s before it" }, { 600, 5, "stopped 6.0 s before it" },
		      { 600, 0, "stopped 1.0 s before it" },
		      /* Millennia away: the wait is bounded, not an overflow. */
		      { 9e10, 5, "stopped 6.0 s before it" } };
	struct ep_pid1 p;

	cr_assert_eq(ep_pid1_init(&p), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[320];

		ep_pid1_set_deadline(now_s() + cases[i].left, cases[i].grace);
		ep_pid1_deadline_reason(why, sizeof(why));
		cr_assert(strstr(why, cases[i].want), "case %zu: %s", i, why);
		ep_pid1_signals(&p);
		cr_assert_not(p.deadline_passed, "case %zu: stopped at once", i);
	}
	ep_pid1_release(&p);
}

/* A stop signal that came first stays the cause (interrupted, 143); a
 * forked panel helper never stops by the deadline itself (the loop stops
 * it as on a signal). */
Test(pid1, a_signal_first_wins_and_helpers_leave_the_deadline_to_the_loop)
{
	struct ep_pid1 p;
	pid_t kid;
	int st;

	cr_assert_eq(ep_pid1_init(&p), 0);
	ep_pid1_set_deadline(now_s() - 1, 0);
	kid = fork();
	cr_assert_geq(kid, 0);
	if (kid == 0) {
		struct ep_pid1 h;

		if (ep_pid1_init(&h) < 0)
			_exit(2);
		ep_pid1_poll(&h, 0, NULL);
		_exit(h.deadline_passed || h.term_sig ? 1 : 0);
	}
	cr_assert_eq(waitpid(kid, &st, 0), kid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the helper stopped by the deadline");
	cr_assert_eq(raise(SIGTERM), 0);
	ep_pid1_poll(&p, 0, NULL);
	cr_assert_eq(p.term_sig, SIGTERM);
	cr_assert_not(p.deadline_passed);
	cr_assert_eq(p.nterm, 1);
	cr_assert_eq(ep_pid1_exit_code(&p), 143);
	ep_pid1_release(&p);
}
