/*
 * test_runner_kubernetes.c - forge-runner run --engine kubernetes against a
 * real single-node cluster: the one tests/kubernetes/cluster.sh builds and
 * starts (scripts/test.sh's kubernetes stage: build, up, load-image, these
 * tests, down, check). CTest label "kubernetes".
 *
 * Each test makes its own workspace on this host and a PersistentVolume
 * (hostPath: that directory) bound to a claim of its own, so the pod writes
 * where the test reads. Scripted sh agents live in the workspace
 * (/workspace/agents in the pod). Every run must leave no Job, pod,
 * ConfigMap or Secret of its run id behind.
 *
 * Skipped, saying why, without a cluster: KUBECONFIG unset or the API server
 * not answering, or no image loaded (FORGE_K8S_IMAGE, set by the stage).
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
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
#include "fgtest.h"
#include "fgws.h"

#define STEP FGD_STEP
#define SKILL FGD_SKILL
#define MAX_ARGS 48
#define RUN_LIMIT_S 400
/* The demo's scripted agents, shipped in the image (docker/Dockerfile). */
#define DEMO_AGENTS "/usr/local/share/forge-review/examples/agents"

TestSuite(runner_kubernetes, .timeout = 900);

/* A per-test sandbox: the workspace fixture (fgws.h: ws, the claim's
 * directory, skills, task.json, out, the runner's result.json, runner.log,
 * stdout and stderr) and what the cluster and the figures need beside it. */
struct kbox {
	struct fgw w;
	char *token, *claim;
	const char *image;
	const char *step;
	const char *engine;   /* NULL: kubernetes; "docker" for the figures beside it */
	int demo;             /* the shipped demo: its workspace, the image's agents and skills */
	pid_t pid;
	pid_t child;          /* the kubernetes-job child, once seen */
	long child_rss_max_kb;
	double t_spawn;
	long rss_max_kb;
	int samples;          /* of the runner's RSS, while wait_runner waits */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The program name found in PATH (owned), or the test fails. */
static char *which(const char *name)
{
	char *path = fgd_which(name);

	cr_assert_not_null(path, "no %s in PATH", name);
	return path;
}

/* kubectl ARGS... (NULL-terminated), its output captured; fails on a start error. */
static void kubectl(struct fgt_proc *p, const char *const args[], const char *input)
{
	static char *bin;
	const char *argv[24];
	size_t n = 0;

	if (!bin)
		bin = which("kubectl");
	argv[n++] = bin;
	for (size_t i = 0; args[i]; i++) {
		cr_assert_lt(n, (size_t)23);
		argv[n++] = args[i];
	}
	argv[n] = NULL;
	cr_assert_eq(fgt_run(p, argv, NULL, NULL, input, 120), 0, "cannot run kubectl");
}

static void skip_without_cluster(void)
{
	struct fgt_proc p;

	if (getenv("FORGE_K8S_NO_CLUSTER") && *getenv("FORGE_K8S_NO_CLUSTER"))
		cr_skip_test("no cluster: %s", getenv("FORGE_K8S_NO_CLUSTER"));
	if (!getenv("KUBECONFIG") || !*getenv("KUBECONFIG"))
		cr_skip_test("no cluster: KUBECONFIG is unset (scripts/test.sh starts one with "
			     "tests/kubernetes/cluster.sh up)");
	kubectl(&p, (const char *const[]){ "get", "--raw", "/readyz", NULL }, NULL);
	int ok = p.exited && p.exit_code == 0;
	char *why = fgt_fmt("%.200s", p.err ? p.err : "");
	fgt_proc_release(&p);
	if (!ok)
		cr_skip_test("no cluster: kubectl get --raw /readyz failed: %s", why);
	free(why);
	if (!getenv("FORGE_K8S_IMAGE") || !*getenv("FORGE_K8S_IMAGE"))
		cr_skip_test("no image in the cluster: FORGE_K8S_IMAGE is unset (cluster.sh load-image)");
}

/* A PersistentVolume on the workspace directory, bound to claim b->claim. */
static void make_claim(struct kbox *b)
{
	struct fgt_proc p;
	char *manifest = fgt_fmt(
		"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
		"{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"%s\"},"
		"\"spec\":{\"capacity\":{\"storage\":\"1Gi\"},\"accessModes\":[\"ReadWriteOnce\"],"
		"\"persistentVolumeReclaimPolicy\":\"Retain\",\"storageClassName\":\"\","
		"\"hostPath\":{\"path\":\"%s\",\"type\":\"Directory\"},"
		"\"claimRef\":{\"namespace\":\"default\",\"name\":\"%s\"}}},"
		"{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"%s\","
		"\"namespace\":\"default\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
		"\"storageClassName\":\"\",\"volumeName\":\"%s\",\"resources\":{\"requests\":"
		"{\"storage\":\"1Gi\"}}}}]}", b->claim, b->w.ws, b->claim, b->claim, b->claim);

	kubectl(&p, (const char *const[]){ "create", "-f", "-", NULL }, manifest);
	cr_assert_eq(p.exit_code, 0, "cannot create the claim: %s", p.err);
	fgt_proc_release(&p);
	free(manifest);
	/* Bound before the run, as an orchestrator's claim is: else the scheduler's
	 * first word on the pod is the unbound claim, not the run's own reason. */
	char *pvc = fgt_fmt("pvc/%s", b->claim);
	kubectl(&p, (const char *const[]){ "wait", "--for=jsonpath={.status.phase}=Bound", pvc,
					   "--timeout=120s", NULL }, NULL);
	cr_assert_eq(p.exit_code, 0, "claim %s not bound: %s", b->claim, p.err);
	fgt_proc_release(&p);
	free(pvc);
}

static void box_init(struct kbox *b, const char *review_md)
{
	static int seq;

	skip_without_cluster();
	memset(b, 0, sizeof(*b));
	b->image = getenv("FORGE_K8S_IMAGE");
	b->step = STEP;
	b->token = fgt_fmt("k8s-tok-%ld-%lx-secret", (long)getpid(), (unsigned long)time(NULL));
	b->claim = fgt_fmt("forge-test-%ld-%d", (long)getpid(), ++seq);
	fgd_workspace(&b->w, 0, 0, "task.json", review_md);
	/* Group 0 may write: the image's user, and an arbitrary uid in group 0. */
	cr_assert_eq(chmod(b->w.ws, 0777), 0);
	make_claim(b);
}

static void box_release(struct kbox *b)
{
	struct fgt_proc p;

	kubectl(&p, (const char *const[]){ "delete", "pvc", b->claim, "--wait=false", NULL }, NULL);
	fgt_proc_release(&p);
	kubectl(&p, (const char *const[]){ "delete", "pv", b->claim, "--wait=false", NULL }, NULL);
	fgt_proc_release(&p);
	fgw_release(&b->w);
	free(b->token);
	free(b->claim);
}

static void box_agent(struct kbox *b, const char *file, const char *script)
{
	char *dir = fgt_fmt("%s/agents", b->w.ws);

	free(fge_script(dir, file, "", script));
	cr_assert_eq(chmod(dir, 0777), 0);
	free(dir);
}

/* forge-runner run --engine kubernetes for the box, in its own process
 * group (fgw_spawn), with a clean environment and extra options
 * (NULL-terminated). */
static void spawn_runner(struct kbox *b, const char *const *extra)
{
	const char *argv[MAX_ARGS];
	char *env[10];
	size_t n = 0, ne = 0;
	int docker = b->engine && !strcmp(b->engine, "docker");
	const char *const fixed[] = {
		FG_RUNNER_BIN, "run", "--engine", docker ? "docker" : "kubernetes", "--image", b->image,
		docker ? "--workspace" : "--workspace-volume", docker ? b->w.ws : b->claim,
		"--step", b->step, "--skill", SKILL, "--task-key", "DEMO-1",
		"--task-file", b->w.task, "--result", b->w.result,
		"--log-format", "json", "--log-file", b->w.log, "--agent-env", "API_TOKEN", NULL,
	};

	for (size_t i = 0; fixed[i]; i++)
		argv[n++] = fixed[i];
	if (!b->demo) {
		argv[n++] = "--skills-dir";
		argv[n++] = b->w.skills;
	}
	for (size_t i = 0; extra && extra[i]; i++) {
		cr_assert_lt(n, (size_t)MAX_ARGS - 1);
		argv[n++] = extra[i];
	}
	argv[n] = NULL;
	env[ne++] = fgt_fmt("-");
	env[ne++] = fgt_fmt("PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	env[ne++] = fgt_fmt("HOME=%s", b->w.out);
	env[ne++] = fgt_fmt("KUBECONFIG=%s", getenv("KUBECONFIG"));
	env[ne++] = fgt_fmt("FORGE_WORKER_CMD=%sworker.sh", b->demo ? DEMO_AGENTS "/demo-" : "/workspace/agents/");
	env[ne++] = fgt_fmt("FORGE_REVIEWER_CMD=%sreviewer.sh", b->demo ? DEMO_AGENTS "/demo-" : "/workspace/agents/");
	env[ne++] = fgt_fmt("FORGE_AGENT_TIMEOUT=600");
	env[ne++] = fgt_fmt("API_TOKEN=%s", b->token);
	env[ne++] = fgt_fmt("FORGE_CHANGESET=0");
	env[ne] = NULL;
	b->t_spawn = now_s();
	b->pid = fgw_spawn(&b->w, argv, (const char *const *)env);
	for (size_t i = 0; i < ne; i++)
		free(env[i]);
}

static long rss_kb(pid_t pid)
{
	char *path = fgt_fmt("/proc/%ld/status", (long)pid), *s = fgt_read(path, NULL), *v;
	long kb = 0;

	v = s ? strstr(s, "VmRSS:") : NULL;
	if (v)
		kb = strtol(v + 6, NULL, 10);
	free(s);
	free(path);
	return kb;
}

/* The first child of pid (the engine's process), or -1. */
static pid_t child_of(pid_t pid)
{
	char *path = fgt_fmt("/proc/%ld/task/%ld/children", (long)pid, (long)pid), *s = fgt_read(path, NULL);
	pid_t c = s && *s ? (pid_t)strtol(s, NULL, 10) : -1;

	free(s);
	free(path);
	return c;
}

/* fgw_wait_each's sampler: the peak RSS of the runner and of its child. */
static void sample_rss(void *ctx)
{
	struct kbox *b = ctx;
	long kb = rss_kb(b->pid);

	if (kb > b->rss_max_kb)
		b->rss_max_kb = kb;
	if (b->child <= 0 && b->samples % 5 == 0)
		b->child = child_of(b->pid);
	if (b->child > 0 && rss_kb(b->child) > b->child_rss_max_kb)
		b->child_rss_max_kb = rss_kb(b->child);
	b->samples++;
}

/* The runner's exit code (128+N for signal N); its RSS sampled meanwhile.
 * Past RUN_LIMIT_S its group is killed and the test fails. */
static int wait_runner(struct kbox *b)
{
	fgw_wait_each(&b->w, b->pid, RUN_LIMIT_S, sample_rss, b);
	return fgw_code(&b->w);
}

static cJSON *read_result(const struct kbox *b)
{
	char *text = fgt_read(b->w.result, NULL);
	cJSON *j = text ? cJSON_Parse(text) : NULL;

	cr_assert_not_null(j, "no result file; log:\n%s", fgt_read_or_empty(b->w.log));
	free(text);
	return j;
}

/* The objects of the run still on the cluster (`kind/name` lines, owned). */
static char *leftovers(const char *run_id)
{
	struct fgt_proc p;
	char *sel = fgt_fmt("--selector=forge-review/run-id=%s", run_id), *out;

	kubectl(&p, (const char *const[]){ "get", "jobs,pods,configmaps,secrets,networkpolicies", sel,
					   "--output=name", NULL }, NULL);
	cr_assert_eq(p.exit_code, 0, "kubectl get: %s", p.err);
	out = fgt_fmt("%s", p.out ? p.out : "");
	fgt_proc_release(&p);
	free(sel);
	return out;
}

/* Checked at once: the runner promises the objects are gone when it exits. */
static void assert_nothing_left(const char *run_id)
{
	char *left = leftovers(run_id);

	cr_assert_str_empty(left, "left behind by run %s:\n%s", run_id, left);
	free(left);
}

static void assert_token_absent_in(const struct kbox *b, const char *what, const char *text)
{
	cr_assert_null(strstr(text, b->token), "the --env value is in %s:\n%.4000s", what, text);
}

static const char WORKER_APPEND[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"echo \"worker cycle $FORGE_CYCLE\"\n"
	"echo \"worker cycle $FORGE_CYCLE\" >> work.log\n"
	"id -u > worker.uid\n"
	"printf '%s' \"$API_TOKEN\" | tr 'a-z' 'n-za-m' > token.rot13\n";

static const char REVIEWER_REJECT_THEN_APPROVE[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"if [ \"$FORGE_CYCLE\" = 1 ]; then echo 'REJECTED: work.log needs a second line'; "
	"else echo APPROVED; fi\n";

static const char REVIEWER_APPROVE[] = "#!/bin/sh\ncat >/dev/null\necho APPROVED\n";

static const char WORKER_HANGS[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"echo started > started\n"
	"exec sleep 600\n";

static const char REVIEW_MD[] = "---\nmax_retries: 3\n---\nCheck that work.log has two lines.\n";

static void check_approved(const struct kbox *b, const cJSON *res, const cJSON *ev)
{
	const cJSON *cycles = cJSON_GetObjectItemCaseSensitive(res, "review_cycles");

	cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "success")), "log:\n%s",
		  fgt_read_or_empty(b->w.log));
	cr_assert_str_eq(fge_jstr(res, "review_state"), "approved");
	cr_assert_str_eq(fge_jstr(res, "engine"), "kubernetes");
	cr_assert_eq(cJSON_GetArraySize(cycles), 2);
	for (int c = 1; c <= 2; c++) {
		const cJSON *e = fge_find_cycle_event(ev, "review_cycle", c);

		cr_assert_not_null(e, "cycle %d never reported; log:\n%s", c, fgt_read_or_empty(b->w.log));
		/* The pod's workspace is not watched: the stream alone. */
		cr_assert_str_eq(fge_jstr(e, "source"), "stream");
		cr_assert_str_eq(fge_jstr(e, "verdict"), c == 1 ? "rejected" : "approved");
		cr_assert_eq(fge_count_events(ev, "review_cycle", NULL, NULL), 2, "a cycle reported twice");
	}
}

/* "2026-12-01T22:28:31.792Z" (the log's ts) as seconds since the epoch. */
static double log_time(const char *ts)
{
	struct tm tm = { 0 };
	int ms = 0;

	if (sscanf(ts, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
		   &tm.tm_min, &tm.tm_sec, &ms) < 6)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (double)timegm(&tm) + ms / 1000.0;
}

/* The seconds from the spawn to the first output line holding what. */
static double first_output_s(const struct kbox *b, const cJSON *ev, const char *what)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, ev) {
		if (!strcmp(fge_jstr(e, "event"), "output") && strstr(fge_jstr(e, "line"), what))
			return log_time(fge_jstr(e, "ts")) - b->t_spawn;
	}
	return -1;
}

/* The shipped demo (examples/demo-workspace, the image's demo agents and
 * default skill), as examples/run-demo-docker.sh runs it in docker. */
static void demo_workspace(struct kbox *b)
{
	struct fgt_proc p;
	char *src = fgt_fmt("%s/examples/demo-workspace/.", FG_SOURCE_DIR);

	cr_assert_eq(fgt_run(&p, (const char *const[]){ "/bin/cp", "-R", src, b->w.ws, NULL }, NULL, NULL, NULL, 60), 0);
	cr_assert_eq(p.exit_code, 0, "cp: %s", p.err);
	fgt_proc_release(&p);
	cr_assert_eq(fgt_run(&p, (const char *const[]){ "/bin/chmod", "-R", "a+rwX", b->w.ws, NULL }, NULL, NULL, NULL, 60), 0);
	fgt_proc_release(&p);
	fgt_write(b->w.task, "{\"task_key\": \"CALC-1\", \"summary\": \"Make the calculator's tests pass\","
			   " \"description\": \"sh test.sh fails. Fix calc.sh so that add, sub and mul work.\","
			   " \"skill_name\": \"" SKILL "\", \"step_name\": \"" STEP "\", \"previous_task_keys\": []}\n");
	b->demo = 1;
	free(src);
}

Test(runner_kubernetes, demo_approved_in_cycle_2_by_the_stream_alone)
{
	struct kbox b;

	box_init(&b, REVIEW_MD);
	demo_workspace(&b);
	spawn_runner(&b, (const char *const[]){ "--timeout", "300", NULL });
	int code = wait_runner(&b);
	cr_assert_eq(code, 0, "runner exited %d; stderr:\n%s\nlog:\n%s", code,
		     fgt_read_or_empty(b.w.stderr_path), fgt_read_or_empty(b.w.log));
	cJSON *res = read_result(&b), *ev = fgw_log_events(&b.w);
	check_approved(&b, res, ev);
	assert_nothing_left(fge_jstr(res, "run_id"));
	/* The demo's tests pass on the claim now: the worker fixed calc.sh there. */
	struct fgt_proc p;
	char *test_sh = fgt_fmt("%s/test.sh", b.w.ws);
	cr_assert_eq(fgt_run(&p, (const char *const[]){ "/bin/sh", test_sh, NULL }, NULL, b.w.ws, NULL, 60), 0);
	cr_assert_eq(p.exit_code, 0, "the demo's tests still fail on the claim:\n%s%s", p.out, p.err);
	fgt_proc_release(&p);
	free(test_sh);
	cJSON_Delete(ev);
	cJSON_Delete(res);
	box_release(&b);
}

/* The credential reaches the agent, from the Secret, and nothing else. */
Test(runner_kubernetes, secret_reaches_the_agent_only)
{
	struct kbox b;

	box_init(&b, REVIEW_MD);
	box_agent(&b, "worker.sh", WORKER_APPEND);
	box_agent(&b, "reviewer.sh", REVIEWER_REJECT_THEN_APPROVE);
	spawn_runner(&b, NULL);
	int code = wait_runner(&b);
	cr_assert_eq(code, 0, "runner exited %d; stderr:\n%s\nlog:\n%s", code,
		     fgt_read_or_empty(b.w.stderr_path), fgt_read_or_empty(b.w.log));
	cJSON *res = read_result(&b), *ev = fgw_log_events(&b.w);
	check_approved(&b, res, ev);
	char *rot_path = fgt_fmt("%s/token.rot13", b.w.ws), *rot = fgt_read(rot_path, NULL);
	cr_assert_not_null(rot, "the worker wrote no token.rot13");
	fge_rot13(rot);
	cr_assert_str_eq(rot, b.token, "the agent saw another API_TOKEN");
	fgw_assert_secret_absent(&b.w, b.token);
	assert_nothing_left(fge_jstr(res, "run_id"));
	free(rot);
	free(rot_path);
	cJSON_Delete(ev);
	cJSON_Delete(res);
	box_release(&b);
}

/* Waits for the worker to hang, then returns the run id. step: NULL for STEP. */
static char *start_hanging_step(struct kbox *b, const char *step, const char *const *extra)
{
	char *id;

	box_init(b, REVIEW_MD);
	if (step)
		b->step = step;
	box_agent(b, "worker.sh", WORKER_HANGS);
	box_agent(b, "reviewer.sh", REVIEWER_APPROVE);
	spawn_runner(b, extra);
	id = fgw_wait_run_id(&b->w, 60);
	fgw_wait_file(&b->w, "ws/started", 300);
	return id;
}

static char *start_hanging(struct kbox *b, const char *const *extra)
{
	return start_hanging_step(b, NULL, extra);
}

/* The run's objects as the cluster stores them (JSON), and the pod's log. */
static char *cluster_dump(const char *run_id)
{
	struct fgt_proc p, q;
	char *sel = fgt_fmt("--selector=forge-review/run-id=%s", run_id), *all;

	kubectl(&p, (const char *const[]){ "get", "jobs,pods,configmaps", sel, "--output=json", NULL }, NULL);
	kubectl(&q, (const char *const[]){ "logs", sel, "--all-containers", NULL }, NULL);
	cr_assert_eq(p.exit_code, 0, "%s", p.err);
	all = fgt_fmt("%s\n%s", p.out ? p.out : "", q.out ? q.out : "");
	fgt_proc_release(&p);
	fgt_proc_release(&q);
	free(sel);
	return all;
}

Test(runner_kubernetes, sigterm_143_secret_in_no_spec_and_nothing_left)
{
	struct kbox b;
	char *id = start_hanging(&b, NULL), *dump = cluster_dump(id);

	/* The value is in the Secret only: no Job, pod or ConfigMap spec, no log. */
	assert_token_absent_in(&b, "the run's Job, pod, ConfigMaps or the pod's log", dump);
	cr_assert_not_null(strstr(dump, "secretKeyRef"), "the pod does not take API_TOKEN from the Secret");
	kill(b.pid, SIGTERM);
	int code = wait_runner(&b);
	cr_assert_eq(code, 143, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	assert_nothing_left(id);
	fgw_assert_secret_absent(&b.w, b.token);
	free(dump);
	free(id);
	box_release(&b);
}

Test(runner_kubernetes, timeout_124_and_nothing_left)
{
	struct kbox b;
	char *id = start_hanging(&b, (const char *const[]){ "--timeout", "40", NULL });
	int code = wait_runner(&b);

	cr_assert_eq(code, 124, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	cJSON *ev = fgw_log_events(&b.w);
	cr_assert_not_null(fge_find_cycle_event(ev, "timeout", 0), "no timeout event; log:\n%s", fgt_read_or_empty(b.w.log));
	/* FORGE_DEADLINE in the pod's environment: the entrypoint stopped
	 * itself before the runner's timer (and the Job's deadline). */
	cr_assert_not_null(fge_find_event(ev, "timeout", "stopped_by", "entrypoint"), "log:\n%s",
			   fgt_read_or_empty(b.w.log));
	assert_nothing_left(id);
	cJSON_Delete(ev);
	free(id);
	box_release(&b);
}

Test(runner_kubernetes, pod_deleted_mid_run_fails_at_once)
{
	struct kbox b;
	struct fgt_proc p;
	char *id = start_hanging(&b, NULL), *sel = fgt_fmt("--selector=forge-review/run-id=%s", id);

	kubectl(&p, (const char *const[]){ "delete", "pods", sel, "--wait=false", NULL }, NULL);
	cr_assert_eq(p.exit_code, 0, "%s", p.err);
	fgt_proc_release(&p);
	double t0 = now_s();
	int code = wait_runner(&b);
	double took = now_s() - t0;
	cr_assert_eq(code, 125, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	cr_assert_lt(took, 60, "the run took %.0f s to notice", took);
	cJSON *res = read_result(&b);
	cr_assert_not_null(strstr(fge_jstr(res, "error_message"), "deleted"), "%s", fge_jstr(res, "error_message"));
	assert_nothing_left(id);
	cJSON_Delete(res);
	free(sel);
	free(id);
	box_release(&b);
}

/* A run that cannot start: 125 with the cluster's reason, well before
 * the --start-timeout when the reason is final. */
/* ... and, when hint is not NULL, a warning engine_hint holding it. */
static void cannot_start(const char *const *extra, const char *image, const char *want, double limit_s,
			 const char *hint)
{
	struct kbox b;

	box_init(&b, REVIEW_MD);
	box_agent(&b, "worker.sh", WORKER_APPEND);
	box_agent(&b, "reviewer.sh", REVIEWER_APPROVE);
	if (image)
		b.image = image;
	spawn_runner(&b, extra);
	int code = wait_runner(&b);
	double took = now_s() - b.t_spawn;
	cr_assert_eq(code, 125, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	cr_assert_lt(took, limit_s, "took %.0f s", took);
	cJSON *res = read_result(&b);
	cr_assert_not_null(strstr(fge_jstr(res, "error_message"), want), "no '%s' in: %s", want,
			   fge_jstr(res, "error_message"));
	if (hint) {
		char *log = fgt_read_or_empty(b.w.log);
		const char *h = strstr(log, "engine_hint");

		cr_assert(h && strstr(h, hint), "no engine_hint with '%s' in:\n%s", hint, log);
		free(log);
	}
	assert_nothing_left(fge_jstr(res, "run_id"));
	cJSON_Delete(res);
	box_release(&b);
}

Test(runner_kubernetes, unschedulable_125_with_the_scheduler_reason)
{
	cannot_start((const char *const[]){ "--cpus", "64", "--start-timeout", "15", NULL }, NULL,
		     "Insufficient cpu", 60, NULL);
}

Test(runner_kubernetes, missing_image_125_at_once)
{
	/* The default --start-timeout (300 s) is not waited for. */
	/* Where the image must be: the test cluster's load-image. */
	cannot_start(NULL, "forge-review:no-such-image-here", "ImagePull", 120,
		     "cluster.sh load-image forge-review:no-such-image-here");
}

Test(runner_kubernetes, out_of_memory_137)
{
	struct kbox b;

	box_init(&b, REVIEW_MD);
	/* tail keeps a line without newline whole: it grows past the limit. */
	box_agent(&b, "worker.sh", "#!/bin/sh\ncat >/dev/null\nhead -c 200000000 /dev/zero | tail -n 1 >/dev/null\n");
	box_agent(&b, "reviewer.sh", REVIEWER_APPROVE);
	spawn_runner(&b, (const char *const[]){ "--memory", "32m", NULL });
	int code = wait_runner(&b);
	cr_assert_eq(code, 137, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	cJSON *res = read_result(&b);
	cr_assert_not_null(strstr(fge_jstr(res, "error_message"), "out of memory"), "%s",
			   fge_jstr(res, "error_message"));
	assert_nothing_left(fge_jstr(res, "run_id"));
	cJSON_Delete(res);
	box_release(&b);
}

Test(runner_kubernetes, arbitrary_uid_in_group_0_writes_the_claim)
{
	struct kbox b;

	box_init(&b, REVIEW_MD);
	box_agent(&b, "worker.sh", WORKER_APPEND);
	box_agent(&b, "reviewer.sh", REVIEWER_REJECT_THEN_APPROVE);
	/* As OpenShift's restricted SCC does: a uid from the namespace's range, group 0. */
	cr_assert_eq(chmod(b.w.ws, 0775), 0);
	spawn_runner(&b, (const char *const[]){ "--run-as", "1000650000:0", NULL });
	int code = wait_runner(&b);
	cr_assert_eq(code, 0, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	char *uid_path = fgt_fmt("%s/worker.uid", b.w.ws), *uid = fgt_read(uid_path, NULL);
	cr_assert_not_null(uid);
	cr_assert_str_eq(uid, "1000650000\n");
	struct stat st;
	char *cycle = fgt_fmt("%s/.forge/" STEP "/review_cycle_2.json", b.w.ws);
	cr_assert_eq(stat(cycle, &st), 0, "no %s on the claim", cycle);
	cr_assert_eq(st.st_uid, 1000650000u);
	free(cycle);
	free(uid);
	free(uid_path);
	box_release(&b);
}

/* The pod's agents in their box (Pod Security "restricted" allows
 * Landlock: no capability, no privilege escalation): the result says which
 * box the node gave, and where it is Landlock the worker cannot write the
 * image's /usr/local/share nor (ABI 6+) signal PID 1. */
Test(runner_kubernetes, the_pods_agents_are_boxed_and_the_result_says_so)
{
	struct kbox b;

	box_init(&b, REVIEW_MD);
	box_agent(&b, "worker.sh", "#!/bin/sh\ncat >/dev/null\n"
		  "t() { if (eval \"$2\") >/dev/null 2>&1; then echo \"$1=done\"; else echo \"$1=refused\"; fi; }\n"
		  "{ t usr ': > /usr/local/share/forge-probe'; t sig 'kill -0 1'; } > notes.txt\n");
	box_agent(&b, "reviewer.sh", REVIEWER_APPROVE);
	spawn_runner(&b, NULL);
	int code = wait_runner(&b);
	cr_assert_eq(code, 0, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	cJSON *res = read_result(&b);
	const cJSON *iso = cJSON_GetObjectItemCaseSensitive(res, "isolation");
	char *notes = fge_read_in(b.w.ws, "notes.txt");
	cr_assert(cJSON_IsObject(iso), "no isolation in the result; log:\n%s", fgt_read_or_empty(b.w.log));
	cr_assert_not_null(notes, "the worker noted nothing");
	if (!strcmp(fge_jstr(iso, "mechanism"), "landlock")) {
		cr_assert_not_null(strstr(notes, "usr=refused"), "%s", notes);
		if (fge_jint(iso, "abi") >= 6)
			cr_assert_not_null(strstr(notes, "sig=refused"), "%s", notes);
	} else {
		cr_assert_str_eq(fge_jstr(iso, "mechanism"), "none");
		cr_assert_str_neq(fge_jstr(iso, "reason"), "", "mechanism none without a reason");
	}
	free(notes);
	cJSON_Delete(res);
	box_release(&b);
}

Test(runner_kubernetes, frame_of_60_kib_arrives_whole)
{
	struct kbox b;

	box_init(&b, REVIEW_MD);
	box_agent(&b, "worker.sh", WORKER_APPEND);
	/* About 58 KiB of feedback in cycle 1: its frame is near 60 KiB. */
	box_agent(&b, "reviewer.sh", "#!/bin/sh\ncat >/dev/null\n"
		  "if [ \"$FORGE_CYCLE\" != 1 ]; then echo APPROVED; exit 0; fi\n"
		  "echo 'REJECTED: the findings below'\n"
		  "i=0; while [ $i -lt 580 ]; do printf 'finding %04d: %086d\\n' $i 0; i=$((i+1)); done\n");
	/* --record copy keeps each cycle as the runner received it: from the stream. */
	char *rec_dir = fgt_fmt("%s/rec", b.w.out);
	spawn_runner(&b, (const char *const[]){ "--record", "copy", "--recording-dir", rec_dir, NULL });
	int code = wait_runner(&b);
	cr_assert_eq(code, 0, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	cJSON *ev = fgw_log_events(&b.w), *res = read_result(&b);
	const cJSON *e = fge_find_cycle_event(ev, "review_cycle", 1);
	cr_assert_not_null(e, "cycle 1 never reported; log:\n%s", fgt_read_or_empty(b.w.log));
	cr_assert_str_eq(fge_jstr(e, "source"), "stream");
	cr_assert_eq(fge_count_events(ev, "frame_invalid", NULL, NULL), 0, "a frame arrived broken");
	char *copy = fgt_fmt("%s/" STEP "/%s/review_cycle_1.json", rec_dir, fge_jstr(res, "run_id"));
	size_t len = 0;
	char *content = fgt_read(copy, &len);
	cr_assert_not_null(content, "no recorded copy %s", copy);
	cr_assert_gt(len, 58000, "the recorded cycle is %zu bytes", len);
	cr_assert_not_null(strstr(content, "finding 0579"), "the end of the feedback is missing");
	free(content);
	free(copy);
	free(rec_dir);
	cJSON_Delete(res);
	cJSON_Delete(ev);
	box_release(&b);
}

/* The pid of the first process whose command line holds every one of the
 * words (NULL-terminated), or -1. */
static pid_t find_process(const char *const *words)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = -1;

	cr_assert_not_null(d);
	while (found < 0 && (de = readdir(d))) {
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
		char *path, *cmd;
		size_t n = 0;
		int all;

		if (pid <= 1 || pid == getpid())
			continue;
		path = fgt_fmt("/proc/%ld/cmdline", (long)pid);
		cmd = fgt_read(path, &n);
		all = cmd != NULL;
		for (size_t i = 0; cmd && i < n; i++)
			cmd[i] = cmd[i] ? cmd[i] : ' ';
		for (size_t i = 0; all && words[i]; i++)
			all = strstr(cmd, words[i]) != NULL;
		if (all)
			found = pid;
		free(cmd);
		free(path);
	}
	closedir(d);
	return found;
}

Test(runner_kubernetes, log_stream_cut_reconnects_every_cycle_once)
{
	struct kbox b;

	box_init(&b, REVIEW_MD);
	box_agent(&b, "worker.sh", "#!/bin/sh\ncat >/dev/null\necho started > started\n"
		  "[ \"$FORGE_CYCLE\" = 1 ] && sleep 8\necho \"worker cycle $FORGE_CYCLE\" >> work.log\n");
	box_agent(&b, "reviewer.sh", REVIEWER_REJECT_THEN_APPROVE);
	spawn_runner(&b, NULL);
	char *id = fgw_wait_run_id(&b.w, 60), *pod = fgt_fmt("pod/forge-%s", id);
	fgw_wait_file(&b.w, "ws/started", 300);
	pid_t logs = -1;
	for (int i = 0; i < 50 && logs < 0; i++, fgt_sleep_ms(100))
		logs = find_process((const char *const[]){ "logs", "--follow", pod, NULL });
	cr_assert_gt(logs, 0, "no kubectl logs --follow process for %s", pod);
	/* As the API server dropping the connection does. */
	kill(logs, SIGKILL);
	int code = wait_runner(&b);
	cr_assert_eq(code, 0, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	cJSON *res = read_result(&b), *ev = fgw_log_events(&b.w);
	check_approved(&b, res, ev);
	char *text = fgt_read_or_empty(b.w.log);
	cr_assert_not_null(strstr(text, "reconnecting"), "no reconnect logged:\n%s", text);
	assert_nothing_left(id);
	free(text);
	cJSON_Delete(ev);
	cJSON_Delete(res);
	free(pod);
	free(id);
	box_release(&b);
}

Test(runner_kubernetes, reap_deletes_what_a_dead_runner_left)
{
	struct kbox b;
	/* A step of its own: a run of the same step reaps a dead runner's leftovers too. */
	char *id = start_hanging_step(&b, "reap_step", NULL);
	pid_t child = find_process((const char *const[]){ "kubernetes-job", id, NULL });

	cr_assert_gt(child, 0, "no kubernetes-job child for run %s", id);
	/* Frozen first, so that neither the runner nor its child cleans up. */
	kill(b.pid, SIGSTOP);
	kill(-getpgid(child), SIGKILL);
	kill(-b.pid, SIGKILL);
	waitpid(b.pid, NULL, 0);
	char *left = leftovers(id);
	cr_assert_not_null(strstr(left, "job.batch/forge-"), "nothing left to reap:\n%s", left);
	free(left);
	struct fgt_proc p;
	const char *dry[] = { FG_RUNNER_BIN, "reap", "--step", "reap_step", "--dry-run", NULL };
	cr_assert_eq(fgt_run(&p, dry, NULL, NULL, NULL, 120), 0);
	char *would = fgt_fmt("would reap: run %s", id);
	cr_assert_not_null(strstr(p.out, would), "reap --dry-run said:\n%s%s", p.out, p.err);
	fgt_proc_release(&p);
	left = leftovers(id);
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
		left = leftovers(id);
		int empty = !*left;
		free(left);
		if (empty)
			break;
	}
	assert_nothing_left(id);
	free(want);
	free(id);
	box_release(&b);
}

/* While the kubelet runs: the host's sysctls are as before `up` (the
 * kubelet wrote the harness's files instead) and no KUBE chain is in the
 * host's iptables. After `down`, cluster.sh check proves the rest. */
Test(runner_kubernetes, the_kubelet_does_not_change_the_host)
{
	skip_without_cluster();
	const char *before = getenv("FORGE_K8S_BEFORE"), *state = getenv("FORGE_K8S_STATE");
	if (!before || !state)
		cr_skip_test("FORGE_K8S_BEFORE and FORGE_K8S_STATE are unset (set by scripts/test.sh)");
	char *text = fgt_read(before, NULL);
	cr_assert_not_null(text, "cannot read %s", before);
	int n = 0;
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[128], val[64];

		if (sscanf(line, "sysctl %127[^=]=%63s", key, val) != 2)
			continue;
		char *path = fgt_fmt("/proc/sys/%s", key), *now = fgt_read(path, NULL);
		cr_assert_not_null(now);
		now[strcspn(now, "\n")] = '\0';
		cr_assert_str_eq(now, val, "%s is %s, was %s before the cluster", path, now, val);
		n++;
		free(path);
		free(now);
	}
	cr_assert_geq(n, 4, "no sysctl in %s", before);
	char *shadow_path = fgt_fmt("%s/sysctl/kernel.panic", state), *shadow = fgt_read(shadow_path, NULL);
	cr_assert_not_null(shadow);
	shadow[strcspn(shadow, "\n")] = '\0';
	cr_assert_str_eq(shadow, "10", "the kubelet did not set kernel.panic (in the harness's file)");
	struct fgt_proc p;
	char *ipt = which("iptables-save");
	cr_assert_eq(fgt_run(&p, (const char *const[]){ ipt, NULL }, NULL, NULL, NULL, 60), 0);
	free(ipt);
	cr_assert_null(strstr(p.out ? p.out : "", "KUBE-"), "KUBE chains in the host's iptables:\n%s", p.out);
	fgt_proc_release(&p);
	free(shadow);
	free(shadow_path);
	free(text);
}

/* The reviewer notes when it ended (the cycle is written right after). */
static const char REVIEWER_TIMED[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"if [ \"$FORGE_CYCLE\" = 1 ]; then echo 'REJECTED: work.log needs a second line'; "
	"else echo APPROVED; fi\n"
	"date +%s.%N > reviewer_end.$FORGE_CYCLE\n";

struct figures {
	double first_output_s, frame_latency_s, wall_s;
	long rss_kb, child_rss_kb;
};

static void measure(const char *engine, struct figures *f)
{
	struct kbox b;

	box_init(&b, REVIEW_MD);
	b.engine = engine;
	box_agent(&b, "worker.sh", WORKER_APPEND);
	box_agent(&b, "reviewer.sh", REVIEWER_TIMED);
	spawn_runner(&b, NULL);
	int code = wait_runner(&b);
	f->wall_s = now_s() - b.t_spawn;
	cr_assert_eq(code, 0, "%s run exited %d; log:\n%s", engine, code, fgt_read_or_empty(b.w.log));
	cJSON *ev = fgw_log_events(&b.w);
	const cJSON *e = fge_find_cycle_event(ev, "review_cycle", 1);
	char *end_path = fgt_fmt("%s/reviewer_end.1", b.w.ws), *end = fgt_read(end_path, NULL);
	cr_assert(e && end, "no cycle 1 or no reviewer_end.1");
	f->first_output_s = first_output_s(&b, ev, "[worker]");
	f->frame_latency_s = log_time(fge_jstr(e, "ts")) - strtod(end, NULL);
	f->rss_kb = b.rss_max_kb;
	f->child_rss_kb = b.child_rss_max_kb;
	free(end);
	free(end_path);
	cJSON_Delete(ev);
	box_release(&b);
}

/* Issue 26's figures, kubernetes beside docker on this machine, the same
 * demo (two cycles): printed, for docs/performance.md. */
Test(runner_kubernetes, figures_beside_docker)
{
	struct figures k, d;
	struct fgt_proc p;

	skip_without_cluster();
	char *docker = fgd_which("docker");
	int have_docker = docker && fgt_run(&p, (const char *const[]){ docker, "image", "inspect",
					   getenv("FORGE_K8S_IMAGE"), NULL }, NULL, NULL, NULL, 60) == 0 &&
			  p.exited && p.exit_code == 0;
	if (docker)
		fgt_proc_release(&p);
	free(docker);
	if (!have_docker)
		cr_skip_test("no docker image %s for the docker side of the figures", getenv("FORGE_K8S_IMAGE"));
	measure("kubernetes", &k);
	measure("docker", &d);
	char *table = fgt_fmt(
		"| engine | first worker output after `run` | frame latency (reviewer end -> reported) "
		"| wall (2 cycles) | runner RSS | engine child RSS |\n|---|---|---|---|---|---|\n"
		"| kubernetes | %.2f s | %.3f s | %.1f s | %ld KiB | %ld KiB (kubernetes-job) |\n"
		"| docker | %.2f s | %.3f s | %.1f s | %ld KiB | %ld KiB (docker run) |\n",
		k.first_output_s, k.frame_latency_s, k.wall_s, k.rss_kb, k.child_rss_kb,
		d.first_output_s, d.frame_latency_s, d.wall_s, d.rss_kb, d.child_rss_kb);
	/* CTest shows a passing test's output to nobody: scripts/test.sh prints this file. */
	fputs(table, stdout);
	if (getenv("FORGE_K8S_FIGURES") && *getenv("FORGE_K8S_FIGURES"))
		fgt_write(getenv("FORGE_K8S_FIGURES"), table);
	free(table);
	cr_assert_gt(k.first_output_s, 0);
	cr_assert_gt(d.first_output_s, 0);
}
