/*
 * test_pid1.c - the entrypoint's signal duties: a stop signal that arrives
 * before the signalfd exists is kept, not lost, and agents still get the
 * mask the process started with.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
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
