/*
 * test_pid1.c - the entrypoint's signal duties: a stop signal that arrives
 * before the signalfd exists is kept, not lost, and agents still get the
 * mask the process started with.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pid1.h"

TestSuite(pid1, .timeout = 30);

Test(pid1, stop_signal_before_init_is_kept_pending)
{
	struct ep_pid1 p;

	cr_assert_eq(ep_pid1_block(), 0);
	/* Blocked: this neither kills the test nor is lost. */
	cr_assert_eq(raise(SIGTERM), 0);
	cr_assert_eq(ep_pid1_init(&p), 0);
	ep_pid1_poll(&p, 0, NULL);
	cr_assert_eq(p.term_sig, SIGTERM);
	cr_assert_eq(p.nterm, 1);
	ep_pid1_release(&p);
}

Test(pid1, sighup_and_sigquit_are_stop_signals)
{
	struct ep_pid1 p;

	cr_assert_eq(ep_pid1_init(&p), 0);
	cr_assert_eq(raise(SIGHUP), 0);
	cr_assert_eq(raise(SIGQUIT), 0);
	ep_pid1_poll(&p, 0, NULL);
	cr_assert_eq(p.term_sig, SIGHUP);
	cr_assert_eq(p.nterm, 2);
	ep_pid1_release(&p);
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
