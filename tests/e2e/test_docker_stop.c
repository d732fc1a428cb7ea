/*
 * test_docker_stop.c - how a container run ends when it is stopped: docker
 * kill from outside, SIGTERM to the runner within the grace period, a
 * runner killed with SIGKILL, the run's timeout (124). Skips without an
 * engine.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fgdocker.h"
#include "fge2e.h"
#include "fgrbox.h"
#include "fgtest.h"
#include "fgws.h"
#include "forge/audit.h"

TestSuite(docker_stop, .timeout = 1700);

static const char WORKER_HANGS[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"echo started > started\n"
	"exec sleep 600\n";

/* A run whose worker hangs; returns the runner's pid once the worker started. */
static pid_t start_hanging(struct fgrb *b, const char *const *extra, char **run_id)
{
	pid_t pid;

	fgrb_init(b, "docker", "Review.\n");
	fgrb_agent(b, "worker.sh", WORKER_HANGS);
	fgrb_agent(b, "reviewer.sh", FGRB_REVIEWER_REJECT_THEN_APPROVE);
	pid = fgrb_spawn(b, extra);
	*run_id = fgw_wait_run_id(&b->w, 60);
	fgw_wait_file(&b->w, "ws/started", 300);
	return pid;
}

static void check_failed_result(const struct fgrb *b, int code, const char *message_part)
{
	cJSON *res = fgrb_result(b);

	cr_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(res, "success")));
	cr_assert_eq(fgrb_jnum(res, "exit_code"), code);
	cr_assert_not_null(strstr(fgrb_jstr(res, "error_message"), message_part),
			   "error_message lacks '%s': %s", message_part, fgrb_jstr(res, "error_message"));
	cJSON_Delete(res);
}

Test(docker_stop, docker_kill_from_outside_is_a_failure)
{
	struct fgrb b;
	struct fgt_proc p;
	char *run_id;

	fgd_ensure_image(FGD_IMAGE);
	pid_t pid = start_hanging(&b, NULL, &run_id);
	char *name = fgt_fmt("forge-%s", run_id);
	fgd_cli(&p, "docker", (const char *const[]){ "kill", name, NULL }, 120);
	cr_assert_eq(p.exit_code, 0, "docker kill: %s", p.err);
	fgt_proc_release(&p);

	int code = fgrb_wait(&b, pid);
	cr_assert_eq(code, 137, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	check_failed_result(&b, 137, "was killed");
	fgrb_assert_no_container(&b, run_id);
	fgw_assert_secret_absent(&b.w, b.token);
	free(name);
	free(run_id);
	fgrb_release(&b);
}

Test(docker_stop, sigterm_stops_the_container_within_the_grace_period)
{
	struct fgrb b;
	char *run_id;

	fgd_ensure_image(FGD_IMAGE);
	pid_t pid = start_hanging(&b, NULL, &run_id);
	cr_assert_eq(kill(pid, SIGTERM), 0);
	int code = fgrb_wait(&b, pid);
	cr_assert_eq(code, 143, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	check_failed_result(&b, 143, "stopped by TERM");
	fgrb_assert_no_container(&b, run_id);

	/* docker stop's SIGTERM reached the entrypoint, which stopped the agents
	 * and exited itself: no escalation to docker kill was needed. */
	cJSON *ev = fgw_log_events(&b.w);
	cr_assert_null(fge_find_cycle_event(ev, "stop_kill", 0), "the runner had to kill the container");
	char *log = fgt_read_or_empty(b.w.log);
	cr_assert_not_null(strstr(log, "stopped by signal 15"), "no orderly stop in the log:\n%s", log);
	free(log);
	cJSON_Delete(ev);
	free(run_id);
	fgrb_release(&b);
}

/* The runner killed by SIGKILL. The lifeline (the
 * container's stdin is the runner's pipe) stops the entrypoint: two seconds
 * later the container no longer runs, and --rm removes it. */
Test(docker_stop, a_runner_killed_with_sigkill_leaves_no_container_running)
{
	struct fgrb b;
	struct fgt_proc p;
	char *run_id, *name, *filter;
	int status;

	fgd_ensure_image(FGD_IMAGE);
	pid_t pid = start_hanging(&b, NULL, &run_id);
	name = fgt_fmt("forge-%s", run_id);
	filter = fgt_fmt("name=^%s$", name);
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	fgt_sleep_ms(2000);
	fgd_cli(&p, "docker", (const char *const[]){ "ps", "-q", "--filter", filter, NULL }, 60);
	cr_expect_eq(p.out_len, 0, "container %s still runs 2 s after its runner was killed", name);
	fgt_proc_release(&p);
	for (int i = 0; i < 100 && fgd_container_listed("docker", name); i++)
		fgt_sleep_ms(100);
	if (fgd_container_listed("docker", name)) {
		fgd_cli(&p, "docker", (const char *const[]){ "rm", "-f", name, NULL }, 60);
		fgt_proc_release(&p);
		cr_assert_fail("container %s was not removed after its runner was killed", name);
	}
	free(filter);
	free(name);
	free(run_id);
	fgrb_release(&b);
}

Test(docker_stop, timeout_stops_the_container_with_124)
{
	struct fgrb b;
	char *run_id;

	fgd_ensure_image(FGD_IMAGE);
	pid_t pid = start_hanging(&b, (const char *const[]){ "--timeout", "8", NULL }, &run_id);
	int code = fgrb_wait(&b, pid);
	cr_assert_eq(code, 124, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	check_failed_result(&b, 124, "timed out");
	fgrb_assert_no_container(&b, run_id);
	cJSON *ev = fgw_log_events(&b.w);
	cr_assert_not_null(fge_find_cycle_event(ev, "timeout", 0));
	cr_assert_null(fge_find_cycle_event(ev, "stop_kill", 0), "the runner had to kill the container");
	/* FORGE_DEADLINE reached the container: the entrypoint stopped itself
	 * before the runner's timer and left its summary, cause timeout. */
	cr_assert_not_null(fge_find_event(ev, "timeout", "stopped_by", "entrypoint"), "log:\n%s",
			   fgt_read_or_empty(b.w.log));
	char *sp = fgt_fmt("%s/.forge/%s/review_summary.json", b.w.ws, FGRB_STEP);
	cJSON *sum = fge_json_file(sp, "no summary");

	cr_assert_str_eq(fge_jstr(cJSON_GetObjectItem(sum, "failure"), "cause"), "timeout");
	cJSON_Delete(sum);
	free(sp);
	cJSON_Delete(ev);
	free(run_id);
	fgrb_release(&b);
}
