/*
 * engine_kubernetes.c - the kubernetes engine (docs/design/kubernetes.md):
 * one batch/v1 Job per run, driven through kubectl only.
 *
 * The process the session spawns is the runner's own child `forge-runner
 * kubernetes-job` (kube_job.c) with the run's parameters as options: it
 * creates the run's objects in one `kubectl create -f -`, waits for the pod
 * to start, follows `kubectl logs -f` onto its stderr (the frames the
 * session's stream parser reads), and exits with the code the pod's status
 * gives. So this table is small: the child's command line, SIGTERM to stop
 * it (the child deletes the Job and follows the pod to its end), a forced
 * delete of the pod as the kill, and a reap by the run-id label.
 */
#include "engine.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"

#include "internal_util.h"
#include "kube.h"

/* The kinds the runner creates, for the reap (the pod is the Job's). */

/* This program, for spawning its own kubernetes-job child. */
static char *self_exe(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0)
		return fg_xstrdup("forge-runner");
	buf[n] = '\0';
	return fg_xstrdup(buf);
}

void rn_kube_cli_prefix(const struct rn_engine_params *p, struct fg_strvec *argv)
{
	fg_strvec_push(argv, p->program);
	fg_strvec_push_opt(argv, "--context", p->kube_context);
	fg_strvec_push_opt(argv, "--namespace", p->kube_namespace);
}

static void push_num(struct fg_strvec *argv, const char *name, double v)
{
	if (v > 0) {
		fg_strvec_pushf(argv, "--%s", name);
		fg_strvec_pushf(argv, "%.3f", v);
	}
}

/* The child's options: every parameter the manifest needs (kube_job.c
 * parses them back into rn_engine_params). */
static void push_params(const struct rn_engine_params *p, struct fg_strvec *argv)
{
	fg_strvec_push_opt(argv, "--cli", p->program);
	fg_strvec_push_opt(argv, "--namespace", p->kube_namespace);
	fg_strvec_push_opt(argv, "--kube-context", p->kube_context);
	fg_strvec_push_opt(argv, "--run-id", p->run_id);
	fg_strvec_push_opt(argv, "--image", p->image);
	fg_strvec_push_opt(argv, "--workspace-volume", p->workspace_volume);
	fg_strvec_push_opt(argv, "--workspace-subpath", p->workspace_subpath);
	fg_strvec_push_opt(argv, "--skills-dir", p->skills_dir);
	fg_strvec_push_opt(argv, "--step", p->step);
	fg_strvec_push_opt(argv, "--skill", p->skill);
	fg_strvec_push_opt(argv, "--task-key", p->task_key);
	fg_strvec_push_opt(argv, "--task-file", p->task_file);
	fg_strvec_push_opt(argv, "--cycle-dir", p->cycle_dir);
	fg_strvec_push_opt(argv, "--memory", p->memory);
	fg_strvec_push_opt(argv, "--cpus", p->cpus);
	fg_strvec_push_opt(argv, "--network", p->network);
	fg_strvec_push_opt(argv, "--run-as", p->run_as);
	fg_strvec_push_opt(argv, "--fs-group", p->fs_group);
	if (p->read_only_rootfs)
		fg_strvec_push(argv, "--read-only-rootfs");
	if (p->sealed)
		fg_strvec_push(argv, "--sealed");
	push_num(argv, "timeout", p->timeout);
	push_num(argv, "start-timeout", p->start_timeout);
	for (size_t i = 0; i < p->nextra_env; i++)
		fg_strvec_push_opt(argv, "--env", p->extra_env[i]);
}

static int kube_build(const struct rn_engine_params *p, struct fg_strvec *argv, char *err,
		      size_t errlen)
{
	cJSON *list;

	/* The manifest is built once here so that every refusal (no claim,
	 * an option this engine cannot honour, skills too large) is a usage
	 * error before anything is created; the child builds it again. */
	list = rn_kube_manifest_for(p, getpid(), err, errlen);
	if (!list)
		return -EINVAL;
	cJSON_Delete(list);
	fg_strvec_push_take(argv, self_exe());
	fg_strvec_push(argv, RN_KUBE_JOB_CMD);
	push_params(p, argv);
	return 0;
}

/* Stop: SIGTERM to the child, which deletes the Job and follows the pod's
 * end (the entrypoint's 143 and its summary). Kill: the pod deleted at once. */
static int kube_stop(const struct rn_engine_params *p, int force, struct fg_strvec *argv)
{
	if (!force)
		return SIGTERM;
	rn_kube_cli_prefix(p, argv);
	fg_strvec_pushl(argv, "delete", "pods", NULL);
	fg_strvec_pushf(argv, "--selector=%s=%s", RN_KUBE_LABEL_RUN_ID, p->run_id);
	fg_strvec_pushl(argv, "--grace-period=0", "--force", "--wait=false", NULL);
	return 0;
}

static void kube_reap_list(const struct rn_engine_params *p, struct fg_strvec *argv)
{
	rn_kube_cli_prefix(p, argv);
	fg_strvec_pushl(argv, "get", RN_KUBE_KINDS, NULL);
	fg_strvec_pushf(argv, "--selector=%s=%s", RN_KUBE_LABEL_RUN_ID, p->run_id);
	fg_strvec_push(argv, "--output=name");
}

void rn_kube_delete_argv(const struct rn_engine_params *p, struct fg_strvec *argv)
{
	rn_kube_cli_prefix(p, argv);
	fg_strvec_pushl(argv, "delete", RN_KUBE_KINDS, NULL);
	fg_strvec_pushf(argv, "--selector=%s=%s", RN_KUBE_LABEL_RUN_ID, p->run_id);
	fg_strvec_pushl(argv, "--ignore-not-found", "--wait=false", NULL);
}

static char *kube_exit_reason(const struct rn_engine_params *p, int exit_code)
{
	if (exit_code == 125)
		return fg_xasprintf("kubernetes job 'forge-%s' failed for a reason of the cluster's", p->run_id);
	if (exit_code == 137)
		return fg_xasprintf("the pod of job 'forge-%s' was killed (SIGKILL: out of memory, "
				    "or deleted by force)", p->run_id);
	return NULL;
}

static int kube_workspace_local(const struct rn_engine_params *p)
{
	(void)p;
	return 0;
}

/* The child's own reason line ("forge-runner kubernetes: ...") is what the
 * run failed of; kubectl's connection errors mean the cluster is down. */
static char *kube_hint(const struct rn_engine_params *p, const char *line, int *kind)
{
	/* The kubelet could not pull the image: where it must be differs
	 * between the test cluster (no registry) and a real one. */
	if (strstr(line, "ErrImagePull") || strstr(line, "ImagePullBackOff") || strstr(line, "ErrImageNeverPull"))
		return fg_xasprintf("the node cannot pull the image '%s': on the test cluster load it into the "
				    "node (bash tests/kubernetes/cluster.sh load-image %s); on a real cluster push it "
				    "to a registry the nodes reach and pass --image REGISTRY/NAME:TAG",
				    p->image ? p->image : "?", p->image ? p->image : "IMAGE");
	if (strstr(line, "Unable to connect to the server") ||
	    strstr(line, "The connection to the server") ||
	    strstr(line, "couldn't get current server API group list")) {
		*kind = RN_HINT_DOWN;
		return fg_xstrdup("kubectl cannot reach the cluster: check KUBECONFIG, --kube-context "
				  "and that the API server runs (for the test cluster: "
				  "tests/kubernetes/cluster.sh up)");
	}
	return NULL;
}

const struct rn_engine_ops rn_engine_kubernetes_ops = {
	.name = "kubernetes", .cli = "kubectl", .build = kube_build, .stop = kube_stop,
	.stop_grace_ms = RN_KUBE_STOP_GRACE_MS, .kill_group_after_exit = 1,
	.reap_list = kube_reap_list, .reap_remove = rn_kube_delete_argv,
	.exit_reason = kube_exit_reason, .workspace_local = kube_workspace_local,
	.host_env = NULL, .env_by_name = 1, .hint = kube_hint,
};
