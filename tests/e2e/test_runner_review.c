/*
 * test_runner_review.c - review findings on `forge-runner run` with the
 * real binary and a scripted entrypoint: what happens after the entrypoint
 * exited, while the runner concludes (metrics merge, result file).
 */
#include <sys/file.h>

#include "test_faults_helpers.h"

TestSuite(runner_review, .timeout = 120);

/* Waits (bounded) until the log file contains text; fails the test otherwise. */
static void wait_for_log(struct fx *f, pid_t pid, const char *text)
{
	for (int i = 0; i < 3000; i++) {
		char *log = fgt_read(f->log, NULL);
		int found = log && strstr(log, text) != NULL;

		free(log);
		if (found)
			return;
		usleep(10000);
	}
	kill(-pid, SIGKILL);
	waitpid(pid, &f->status, 0);
	cr_assert_fail("the runner never logged '%s'", text);
}

/*
 * The operator (or an orchestrator) sends SIGTERM once the entrypoint is
 * done, while the runner waits for the lock of a metrics file shared with
 * other runners. The runner must still write the result and the metrics:
 * after the loop's signal handlers are closed the default disposition would
 * kill it with nothing written.
 */
Test(runner_review, sigterm_while_concluding_still_writes_the_result)
{
	struct fx f;
	char *ep, *metrics, *lock;
	const char *extra[3];
	int lfd;
	pid_t pid;

	fx_setup(&f);
	metrics = fgt_fmt("%s/metrics.prom", f.root);
	lock = fgt_fmt("%s.lock", metrics);
	lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	cr_assert_geq(lfd, 0);
	cr_assert_eq(flock(lfd, LOCK_EX), 0);
	extra[0] = "--metrics-file";
	extra[1] = metrics;
	extra[2] = NULL;
	ep = fx_fake_entrypoint(&f, "cyc 1 approved\nexit 0\n");
	pid = fx_runner_start(&f, NULL, ep, "json", extra, NULL, NULL, NULL);
	/* run_exit is logged just before the metrics merge takes the lock. */
	wait_for_log(&f, pid, "\"event\":\"run_exit\"");
	cr_assert_eq(kill(pid, SIGTERM), 0);
	close(lfd);
	fx_wait(&f, pid, 60);
	fx_load(&f, 1);
	cr_assert_not_null(f.res, "no result file (runner status %d); stderr:\n%s\nlog:\n%s",
			   f.status, f.err, f.logtext);
	cr_assert_eq(fge_jint(f.res, "exit_code"), 0);
	cr_assert_eq(cJSON_GetArraySize(fx_cycles(&f)), 1);
	cr_assert(fgt_exists(metrics), "no metrics file");
	free(ep);
	free(metrics);
	free(lock);
	fx_teardown(&f);
}
