/*
 * test_runner_stop.c - review findings on `forge-runner run` with the
 * real binary and a scripted entrypoint: what happens after the entrypoint
 * exited, while the runner concludes (metrics merge, result file).
 */
#include <sys/file.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(runner_stop, .timeout = 120);

/* Waits (bounded) until the log file contains text; fails the test otherwise. */
static void wait_for_log(struct fgw *f, pid_t pid, const char *text)
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
Test(runner_stop, sigterm_while_concluding_still_writes_the_result)
{
	struct fgw f;
	char *metrics, *lock;
	const char *extra[3];
	int lfd;
	pid_t pid;

	fgw_init_runner(&f);
	metrics = fgt_fmt("%s/metrics.prom", f.root);
	lock = fgt_fmt("%s.lock", metrics);
	lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	cr_assert_geq(lfd, 0);
	cr_assert_eq(flock(lfd, LOCK_EX), 0);
	extra[0] = "--metrics-file";
	extra[1] = metrics;
	extra[2] = NULL;
	pid = fgw_runner_start(&f, FGW_RUN(.ep_sh = "cyc 1 approved\nexit 0\n",
					   .args = extra));
	/* run_exit is logged just before the metrics merge takes the lock. */
	wait_for_log(&f, pid, "\"event\":\"run_exit\"");
	cr_assert_eq(kill(pid, SIGTERM), 0);
	close(lfd);
	fgw_wait(&f, pid, 60);
	fgw_load(&f, 1);
	cr_assert_not_null(f.res, "no result file (runner status %d); stderr:\n%s\nlog:\n%s",
			   f.status, f.err, f.logtext);
	cr_assert_eq(fge_jint(f.res, "exit_code"), 0);
	cr_assert_eq(cJSON_GetArraySize(fgw_cycles(&f)), 1);
	cr_assert(fgt_exists(metrics), "no metrics file");
	free(metrics);
	free(lock);
	fgw_release(&f);
}

/* Waits (bounded) until path exists; fails the test otherwise. */
static void wait_for_file(struct fgw *f, pid_t pid, const char *path)
{
	for (int i = 0; i < 3000 && !fgt_exists(path); i++)
		usleep(10000);
	if (fgt_exists(path))
		return;
	kill(-pid, SIGKILL);
	waitpid(pid, &f->status, 0);
	cr_assert_fail("'%s' never appeared", path);
}

/*
 * Container engine, `docker stop` cannot be started (the CLI vanished from
 * PATH after `docker run` started), and a second signal arrives in the same
 * loop turn as the first: the stopper handle, closed after the failed
 * spawn, must not be spawned again while it is still closing (a handle
 * re-initialised before its close callback corrupts the loop's queues).
 */
Test(runner_stop, second_signal_after_a_failed_stop_spawn)
{
	struct fgw f;
	char *bin, *docker, *started, *path_env;
	const char *extra[] = { "--engine", "docker", "--image", "img", NULL };
	const char *env[2];
	pid_t pid;

	fgw_init_runner(&f);
	bin = fgt_fmt("%s/bin", f.root);
	docker = fgt_fmt("%s/docker", bin);
	started = fgt_fmt("%s/started", f.out);
	fgt_write(docker, "#!/bin/sh\n/bin/rm -f \"$0\"\n: > \"$OUT/started\"\nexec /bin/sleep 60\n");
	fgt_chmod_x(docker);
	path_env = fgt_fmt("PATH=%s", bin);
	env[0] = path_env;
	env[1] = NULL;
	pid = fgw_runner_start(&f, FGW_RUN(.args = extra, .env = env));
	wait_for_file(&f, pid, started);
	/* Both signals are delivered when it resumes: one loop turn reads both. */
	cr_assert_eq(kill(pid, SIGSTOP), 0);
	cr_assert_eq(kill(pid, SIGINT), 0);
	cr_assert_eq(kill(pid, SIGTERM), 0);
	cr_assert_eq(kill(pid, SIGCONT), 0);
	fgw_wait(&f, pid, 60);
	fgw_load(&f, 1);
	cr_assert(WIFEXITED(f.status), "runner died by signal %d; stderr:\n%s\nlog:\n%s",
		  WIFSIGNALED(f.status) ? WTERMSIG(f.status) : 0, f.err, f.logtext);
	cr_assert_eq(fgw_code(&f), 128 + SIGINT, "log:\n%s", f.logtext);
	cr_assert_not_null(f.res, "no result; log:\n%s", f.logtext);
	cr_assert_geq(fge_count_events(f.events, "stop_error", NULL, NULL), 1, "log:\n%s", f.logtext);
	free(bin);
	free(docker);
	free(started);
	free(path_env);
	fgw_release(&f);
}

/*
 * A previous sandbox left W/.forge as a symlink to a host directory (the
 * workspace is bind-mounted: a link made in the container resolves on the
 * host). Clearing stale files must not follow it and delete review files
 * of that other tree; the run is refused as for a symlinked step directory.
 */
Test(runner_stop, forge_dir_symlink_before_the_run_is_refused)
{
	struct fgw f;
	char *forge, *outside_dir, *outside;

	fgw_init_runner(&f);
	forge = fgt_fmt("%s/.forge", f.ws);
	outside_dir = fgt_fmt("%s/impl", f.out);
	outside = fgt_fmt("%s/review_cycle_1.json", outside_dir);
	fgt_write(outside, "{\"cycle\":1,\"max_cycles\":3,\"verdict\":\"approved\",\"feedback\":\"OUTSIDE\","
		  "\"skill\":\"impl\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}\n");
	cr_assert_eq(symlink(f.out, forge), 0);
	fgw_runner(&f, FGW_RUN(.ep_sh = "exit 0\n"));
	cr_assert(fgt_exists(outside), "the runner removed a file outside the workspace");
	fgw_assert_run(&f, 125, -1);
	cr_assert_not_null(f.res);
	cr_assert_not_null(strstr(fge_jstr_or_null(f.res, "error_message"), "cannot prepare"));
	cr_assert_eq(fge_count_events(f.events, "review_cycle", NULL, NULL), 0);
	free(forge);
	free(outside_dir);
	free(outside);
	fgw_release(&f);
}
