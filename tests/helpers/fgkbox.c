/*
 * fgkbox.c - the fixture of forge-runner run on kubernetes (see fgkbox.h).
 */
#include "fgkbox.h"

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
#include "fgtest.h"
#include "fgws.h"

double fgkb_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The program name found in PATH (owned), or the test fails. */
char *fgkb_which(const char *name)
{
	char *path = fgd_which(name);

	cr_assert_not_null(path, "no %s in PATH", name);
	return path;
}

/* kubectl ARGS... (NULL-terminated), its output captured; fails on a start error. */
void fgkb_kubectl(struct fgt_proc *p, const char *const args[], const char *input)
{
	static char *bin;
	const char *argv[24];
	size_t n = 0;

	if (!bin)
		bin = fgkb_which("kubectl");
	argv[n++] = bin;
	for (size_t i = 0; args[i]; i++) {
		cr_assert_lt(n, (size_t)23);
		argv[n++] = args[i];
	}
	argv[n] = NULL;
	cr_assert_eq(fgt_run(p, argv, NULL, NULL, input, 120), 0, "cannot run kubectl");
}

void fgkb_skip_without_cluster(void)
{
	struct fgt_proc p;

	if (getenv("FORGE_K8S_NO_CLUSTER") && *getenv("FORGE_K8S_NO_CLUSTER"))
		cr_skip_test("no cluster: %s", getenv("FORGE_K8S_NO_CLUSTER"));
	if (!getenv("KUBECONFIG") || !*getenv("KUBECONFIG"))
		cr_skip_test("no cluster: KUBECONFIG is unset (scripts/test.sh starts one with "
			     "tests/kubernetes/cluster.sh up)");
	fgkb_kubectl(&p, (const char *const[]){ "get", "--raw", "/readyz", NULL }, NULL);
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
static void fgkb_make_claim(struct fgkb *b)
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

	fgkb_kubectl(&p, (const char *const[]){ "create", "-f", "-", NULL }, manifest);
	cr_assert_eq(p.exit_code, 0, "cannot create the claim: %s", p.err);
	fgt_proc_release(&p);
	free(manifest);
	/* Bound before the run, as an orchestrator's claim is: else the scheduler's
	 * first word on the pod is the unbound claim, not the run's own reason. */
	char *pvc = fgt_fmt("pvc/%s", b->claim);
	fgkb_kubectl(&p, (const char *const[]){ "wait", "--for=jsonpath={.status.phase}=Bound", pvc,
					   "--timeout=120s", NULL }, NULL);
	cr_assert_eq(p.exit_code, 0, "claim %s not bound: %s", b->claim, p.err);
	fgt_proc_release(&p);
	free(pvc);
}

void fgkb_init(struct fgkb *b, const char *review_md)
{
	static int seq;

	fgkb_skip_without_cluster();
	memset(b, 0, sizeof(*b));
	b->image = getenv("FORGE_K8S_IMAGE");
	b->step = STEP;
	b->token = fgt_fmt("k8s-tok-%ld-%lx-secret", (long)getpid(), (unsigned long)time(NULL));
	b->claim = fgt_fmt("forge-test-%ld-%d", (long)getpid(), ++seq);
	fgd_workspace(&b->w, 0, 0, "task.json", review_md);
	/* Group 0 may write: the image's user, and an arbitrary uid in group 0. */
	cr_assert_eq(chmod(b->w.ws, 0777), 0);
	fgkb_make_claim(b);
}

void fgkb_release(struct fgkb *b)
{
	struct fgt_proc p;

	fgkb_kubectl(&p, (const char *const[]){ "delete", "pvc", b->claim, "--wait=false", NULL }, NULL);
	fgt_proc_release(&p);
	fgkb_kubectl(&p, (const char *const[]){ "delete", "pv", b->claim, "--wait=false", NULL }, NULL);
	fgt_proc_release(&p);
	fgw_release(&b->w);
	free(b->token);
	free(b->claim);
}

void fgkb_agent(struct fgkb *b, const char *file, const char *script)
{
	char *dir = fgt_fmt("%s/agents", b->w.ws);

	free(fge_script(dir, file, "", script));
	cr_assert_eq(chmod(dir, 0777), 0);
	free(dir);
}

/* forge-runner run --engine kubernetes for the box, in its own process
 * group (fgw_spawn), with a clean environment and extra options
 * (NULL-terminated). */
void fgkb_spawn(struct fgkb *b, const char *const *extra)
{
	const char *argv[FGKB_MAX_ARGS];
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

	fgt_strs_add(argv, &n, FGKB_MAX_ARGS, fixed);
	if (!b->demo)
		fgt_strs_add(argv, &n, FGKB_MAX_ARGS, (const char *const[]){ "--skills-dir", b->w.skills, NULL });
	fgt_strs_add(argv, &n, FGKB_MAX_ARGS, extra);
	env[ne++] = fgt_fmt("-");
	env[ne++] = fgt_fmt("PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	env[ne++] = fgt_fmt("HOME=%s", b->w.out);
	env[ne++] = fgt_fmt("KUBECONFIG=%s", getenv("KUBECONFIG"));
	env[ne++] = fgt_fmt("FORGE_WORKER_CMD=%sworker.sh", b->demo ? FGKB_DEMO_AGENTS "/demo-" : "/workspace/agents/");
	env[ne++] = fgt_fmt("FORGE_REVIEWER_CMD=%sreviewer.sh", b->demo ? FGKB_DEMO_AGENTS "/demo-" : "/workspace/agents/");
	env[ne++] = fgt_fmt("FORGE_AGENT_TIMEOUT=600");
	env[ne++] = fgt_fmt("API_TOKEN=%s", b->token);
	env[ne] = NULL;
	b->t_spawn = fgkb_now_s();
	b->pid = fgw_spawn(&b->w, argv, (const char *const *)env);
	for (size_t i = 0; i < ne; i++)
		free(env[i]);
}

long fgkb_rss_kb(pid_t pid)
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
static pid_t fgkb_child_of(pid_t pid)
{
	char *path = fgt_fmt("/proc/%ld/task/%ld/children", (long)pid, (long)pid), *s = fgt_read(path, NULL);
	pid_t c = s && *s ? (pid_t)strtol(s, NULL, 10) : -1;

	free(s);
	free(path);
	return c;
}

/* fgw_wait_each's sampler: the peak RSS of the runner and of its child. */
static void fgkb_sample_rss(void *ctx)
{
	struct fgkb *b = ctx;
	long kb = fgkb_rss_kb(b->pid);

	if (kb > b->rss_max_kb)
		b->rss_max_kb = kb;
	if (b->child <= 0 && b->samples % 5 == 0)
		b->child = fgkb_child_of(b->pid);
	if (b->child > 0 && fgkb_rss_kb(b->child) > b->child_rss_max_kb)
		b->child_rss_max_kb = fgkb_rss_kb(b->child);
	b->samples++;
}

/* The runner's exit code (128+N for signal N); its RSS sampled meanwhile.
 * Past RUN_LIMIT_S its group is killed and the test fails. */
int fgkb_wait(struct fgkb *b)
{
	fgw_wait_each(&b->w, b->pid, RUN_LIMIT_S, fgkb_sample_rss, b);
	return fgw_code(&b->w);
}

cJSON *fgkb_result(const struct fgkb *b)
{
	return fgw_result_json(&b->w);
}

/* The objects of the run still on the cluster (`kind/name` lines, owned). */
char *fgkb_leftovers(const char *run_id)
{
	struct fgt_proc p;
	char *sel = fgt_fmt("--selector=forge-review/run-id=%s", run_id), *out;

	fgkb_kubectl(&p, (const char *const[]){ "get", "jobs,pods,configmaps,secrets,networkpolicies", sel,
					   "--output=name", NULL }, NULL);
	cr_assert_eq(p.exit_code, 0, "kubectl get: %s", p.err);
	out = fgt_fmt("%s", p.out ? p.out : "");
	fgt_proc_release(&p);
	free(sel);
	return out;
}

/* Checked at once: the runner promises the objects are gone when it exits. */
void fgkb_assert_nothing_left(const char *run_id)
{
	char *left = fgkb_leftovers(run_id);

	cr_assert_str_empty(left, "left behind by run %s:\n%s", run_id, left);
	free(left);
}

const char FGKB_WORKER_APPEND[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"echo \"worker cycle $FORGE_CYCLE\"\n"
	"echo \"worker cycle $FORGE_CYCLE\" >> work.log\n"
	"id -u > worker.uid\n"
	"printf '%s' \"$API_TOKEN\" | tr 'a-z' 'n-za-m' > token.rot13\n";

const char FGKB_REVIEWER_APPROVE[] = "#!/bin/sh\ncat >/dev/null\necho APPROVED\n";

const char FGKB_REVIEW_MD[] = "---\nmax_retries: 3\n---\nCheck that work.log has two lines.\n";

/* The pid of the first process whose command line holds every one of the
 * words (NULL-terminated), or -1. */
pid_t fgkb_find_process(const char *const *words)
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
