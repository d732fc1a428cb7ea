/*
 * test_kubernetes_faults.c - how a kubernetes run ends when something goes
 * wrong: SIGTERM (143), the timeout (124), a pod deleted mid-run, a pod
 * that cannot be scheduled or whose image is missing (125), out of memory
 * (137), and forge-runner reap after a dead runner. Nothing is left behind
 * and the secret is in no spec. Skips without a cluster, saying why.
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
#include "fgkbox.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(kubernetes_faults, .timeout = 900);

static void assert_token_absent_in(const struct fgkb *b, const char *what, const char *text)
{
	cr_assert_null(strstr(text, b->token), "the --env value is in %s:\n%.4000s", what, text);
}

static const char WORKER_HANGS[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"echo started > started\n"
	"exec sleep 600\n";

/* Waits for the worker to hang, then returns the run id. step: NULL for STEP. */
static char *start_hanging_step(struct fgkb *b, const char *step, const char *const *extra)
{
	char *id;

	fgkb_init(b, FGKB_REVIEW_MD);
	if (step)
		b->step = step;
	fgkb_agent(b, "worker.sh", WORKER_HANGS);
	fgkb_agent(b, "reviewer.sh", FGKB_REVIEWER_APPROVE);
	fgkb_spawn(b, extra);
	id = fgw_wait_run_id(&b->w, 60);
	fgw_wait_file(&b->w, "ws/started", 300);
	return id;
}

static char *start_hanging(struct fgkb *b, const char *const *extra)
{
	return start_hanging_step(b, NULL, extra);
}

/* The run's objects as the cluster stores them (JSON), and the pod's log. */
static char *cluster_dump(const char *run_id)
{
	struct fgt_proc p, q;
	char *sel = fgt_fmt("--selector=forge-review/run-id=%s", run_id), *all;

	fgkb_kubectl(&p, (const char *const[]){ "get", "jobs,pods,configmaps", sel, "--output=json", NULL }, NULL);
	fgkb_kubectl(&q, (const char *const[]){ "logs", sel, "--all-containers", NULL }, NULL);
	cr_assert_eq(p.exit_code, 0, "%s", p.err);
	all = fgt_fmt("%s\n%s", p.out ? p.out : "", q.out ? q.out : "");
	fgt_proc_release(&p);
	fgt_proc_release(&q);
	free(sel);
	return all;
}

Test(kubernetes_faults, sigterm_143_secret_in_no_spec_and_nothing_left)
{
	struct fgkb b;
	char *id = start_hanging(&b, NULL), *dump = cluster_dump(id);

	/* The value is in the Secret only: no Job, pod or ConfigMap spec, no log. */
	assert_token_absent_in(&b, "the run's Job, pod, ConfigMaps or the pod's log", dump);
	cr_assert_not_null(strstr(dump, "secretKeyRef"), "the pod does not take API_TOKEN from the Secret");
	kill(b.pid, SIGTERM);
	int code = fgkb_wait(&b);
	cr_assert_eq(code, 143, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	fgkb_assert_nothing_left(id);
	fgw_assert_secret_absent(&b.w, b.token);
	free(dump);
	free(id);
	fgkb_release(&b);
}

Test(kubernetes_faults, timeout_124_and_nothing_left)
{
	struct fgkb b;
	char *id = start_hanging(&b, (const char *const[]){ "--timeout", "40", NULL });
	int code = fgkb_wait(&b);

	cr_assert_eq(code, 124, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	cJSON *ev = fgw_log_events(&b.w);
	cr_assert_not_null(fge_find_cycle_event(ev, "timeout", 0), "no timeout event; log:\n%s", fgt_read_or_empty(b.w.log));
	/* FORGE_DEADLINE in the pod's environment: the entrypoint stopped
	 * itself before the runner's timer (and the Job's deadline). */
	cr_assert_not_null(fge_find_event(ev, "timeout", "stopped_by", "entrypoint"), "log:\n%s",
			   fgt_read_or_empty(b.w.log));
	fgkb_assert_nothing_left(id);
	cJSON_Delete(ev);
	free(id);
	fgkb_release(&b);
}

Test(kubernetes_faults, pod_deleted_mid_run_fails_at_once)
{
	struct fgkb b;
	struct fgt_proc p;
	char *id = start_hanging(&b, NULL), *sel = fgt_fmt("--selector=forge-review/run-id=%s", id);

	fgkb_kubectl(&p, (const char *const[]){ "delete", "pods", sel, "--wait=false", NULL }, NULL);
	cr_assert_eq(p.exit_code, 0, "%s", p.err);
	fgt_proc_release(&p);
	double t0 = fgkb_now_s();
	int code = fgkb_wait(&b);
	double took = fgkb_now_s() - t0;
	cr_assert_eq(code, 125, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	cr_assert_lt(took, 60, "the run took %.0f s to notice", took);
	cJSON *res = fgkb_result(&b);
	cr_assert_not_null(strstr(fge_jstr(res, "error_message"), "deleted"), "%s", fge_jstr(res, "error_message"));
	fgkb_assert_nothing_left(id);
	cJSON_Delete(res);
	free(sel);
	free(id);
	fgkb_release(&b);
}

/* A run that cannot start: 125 with the cluster's reason, well before
 * the --start-timeout when the reason is final. */
/* ... and, when hint is not NULL, a warning engine_hint holding it. */
static void cannot_start(const char *const *extra, const char *image, const char *want, double limit_s,
			 const char *hint)
{
	struct fgkb b;

	fgkb_init(&b, FGKB_REVIEW_MD);
	fgkb_agent(&b, "worker.sh", FGKB_WORKER_APPEND);
	fgkb_agent(&b, "reviewer.sh", FGKB_REVIEWER_APPROVE);
	if (image)
		b.image = image;
	fgkb_spawn(&b, extra);
	int code = fgkb_wait(&b);
	double took = fgkb_now_s() - b.t_spawn;
	cr_assert_eq(code, 125, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	cr_assert_lt(took, limit_s, "took %.0f s", took);
	cJSON *res = fgkb_result(&b);
	cr_assert_not_null(strstr(fge_jstr(res, "error_message"), want), "no '%s' in: %s", want,
			   fge_jstr(res, "error_message"));
	if (hint) {
		char *log = fgt_read_or_empty(b.w.log);
		const char *h = strstr(log, "engine_hint");

		cr_assert(h && strstr(h, hint), "no engine_hint with '%s' in:\n%s", hint, log);
		free(log);
	}
	fgkb_assert_nothing_left(fge_jstr(res, "run_id"));
	cJSON_Delete(res);
	fgkb_release(&b);
}

Test(kubernetes_faults, unschedulable_125_with_the_scheduler_reason)
{
	cannot_start((const char *const[]){ "--cpus", "64", "--start-timeout", "15", NULL }, NULL,
		     "Insufficient cpu", 60, NULL);
}

Test(kubernetes_faults, missing_image_125_at_once)
{
	/* The default --start-timeout (300 s) is not waited for. */
	/* Where the image must be: the test cluster's load-image. */
	cannot_start(NULL, "forge-review:no-such-image-here", "ImagePull", 120,
		     "cluster.sh load-image forge-review:no-such-image-here");
}

Test(kubernetes_faults, out_of_memory_137)
{
	struct fgkb b;

	fgkb_init(&b, FGKB_REVIEW_MD);
	/* tail keeps a line without newline whole: it grows past the limit. */
	fgkb_agent(&b, "worker.sh", "#!/bin/sh\ncat >/dev/null\nhead -c 200000000 /dev/zero | tail -n 1 >/dev/null\n");
	fgkb_agent(&b, "reviewer.sh", FGKB_REVIEWER_APPROVE);
	fgkb_spawn(&b, (const char *const[]){ "--memory", "32m", NULL });
	int code = fgkb_wait(&b);
	cr_assert_eq(code, 137, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	cJSON *res = fgkb_result(&b);
	cr_assert_not_null(strstr(fge_jstr(res, "error_message"), "out of memory"), "%s",
			   fge_jstr(res, "error_message"));
	fgkb_assert_nothing_left(fge_jstr(res, "run_id"));
	cJSON_Delete(res);
	fgkb_release(&b);
}

Test(kubernetes_faults, reap_deletes_what_a_dead_runner_left)
{
	struct fgkb b;
	/* A step of its own: a run of the same step reaps a dead runner's leftovers too. */
	char *id = start_hanging_step(&b, "reap_step", NULL);
	pid_t child = fgkb_find_process((const char *const[]){ "kubernetes-job", id, NULL });

	cr_assert_gt(child, 0, "no kubernetes-job child for run %s", id);
	/* Frozen first, so that neither the runner nor its child cleans up. */
	kill(b.pid, SIGSTOP);
	kill(-getpgid(child), SIGKILL);
	kill(-b.pid, SIGKILL);
	waitpid(b.pid, NULL, 0);
	char *left = fgkb_leftovers(id);
	cr_assert_not_null(strstr(left, "job.batch/forge-"), "nothing left to reap:\n%s", left);
	free(left);
	struct fgt_proc p;
	const char *dry[] = { FG_RUNNER_BIN, "reap", "--step", "reap_step", "--dry-run", NULL };
	cr_assert_eq(fgt_run(&p, dry, NULL, NULL, NULL, 120), 0);
	char *would = fgt_fmt("would reap: run %s", id);
	cr_assert_not_null(strstr(p.out, would), "reap --dry-run said:\n%s%s", p.out, p.err);
	fgt_proc_release(&p);
	left = fgkb_leftovers(id);
	cr_assert_not_null(strstr(left, "job.batch/forge-"), "--dry-run deleted:\n%s", left);
	free(left);
	free(would);
	const char *argv[] = { FG_RUNNER_BIN, "reap", "--step", "reap_step", NULL };
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 120), 0);
	cr_assert_eq(p.exit_code, 0, "reap exited %d: %s", p.exit_code, p.err);
	char *want = fgt_fmt("reaped: run %s", id);
	cr_assert_not_null(strstr(p.out, want), "reap said:\n%s%s", p.out, p.err);
	fgt_proc_release(&p);
	for (int i = 0; i < 400; i++, fgt_sleep_ms(100)) {
		left = fgkb_leftovers(id);
		int empty = !*left;
		free(left);
		if (empty)
			break;
	}
	fgkb_assert_nothing_left(id);
	free(want);
	free(id);
	fgkb_release(&b);
}
