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
 * delete of the pod as the kill, and a reap by the run-id label. The
 * engine's options (namespace, context, the pod's ids, the claim's subpath,
 * the start timeout) are parsed and kept here, beside the container
 * options it takes too (struct rn_kube_opts).
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
#include "forge/exit.h"
#include "forge/num.h"
#include "forge/util.h"

#include "internal_util.h"
#include "kube.h"

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
	const struct rn_kube_opts *k = rn_kube_opts_of(p);

	fg_strvec_push(argv, p->program);
	fg_strvec_push_opt(argv, "--context", k->kube_context);
	fg_strvec_push_opt(argv, "--namespace", k->kube_namespace);
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
	const struct rn_kube_opts *k = rn_kube_opts_of(p);

	fg_strvec_push_opt(argv, "--cli", p->program);
	fg_strvec_push_opt(argv, "--namespace", k->kube_namespace);
	fg_strvec_push_opt(argv, "--kube-context", k->kube_context);
	fg_strvec_push_opt(argv, "--run-id", p->run_id);
	fg_strvec_push_opt(argv, "--image", p->image);
	fg_strvec_push_opt(argv, "--workspace-volume", p->workspace_volume);
	fg_strvec_push_opt(argv, "--workspace-subpath", k->workspace_subpath);
	fg_strvec_push_opt(argv, "--skills-dir", p->skills_dir);
	fg_strvec_push_opt(argv, "--step", p->step);
	fg_strvec_push_opt(argv, "--skill", p->skill);
	fg_strvec_push_opt(argv, "--task-key", p->task_key);
	fg_strvec_push_opt(argv, "--task-file", p->task_file);
	fg_strvec_push_opt(argv, "--cycle-dir", p->cycle_dir);
	fg_strvec_push_opt(argv, "--traceparent", p->traceparent);
	fg_strvec_push_opt(argv, "--deadline", p->deadline);
	fg_strvec_push_opt(argv, "--memory", k->c.memory);
	fg_strvec_push_opt(argv, "--cpus", k->c.cpus);
	fg_strvec_push_opt(argv, "--network", k->c.network);
	fg_strvec_push_opt(argv, "--run-as", k->run_as);
	fg_strvec_push_opt(argv, "--fs-group", k->fs_group);
	if (k->c.read_only_rootfs)
		fg_strvec_push(argv, "--read-only-rootfs");
	if (p->sealed)
		fg_strvec_push(argv, "--sealed");
	push_num(argv, "timeout", p->timeout);
	push_num(argv, "start-timeout", k->start_timeout);
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

/* The child's own reason line ("forge-runner: error: kubernetes: ...") is what the
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

/* ---- the engine's options and data ---- */

enum { K_NAMESPACE = 1, K_KUBE_CONTEXT, K_START_TIMEOUT, K_RUN_AS, K_FS_GROUP, K_SUBPATH };

static const struct fg_opt kube_options[] = {
	{ K_NAMESPACE, "namespace", 0, "NS", "FORGE_KUBE_NAMESPACE", "kubernetes: the namespace of the run's objects (default: the context's)" },
	{ K_KUBE_CONTEXT, "kube-context", 0, "NAME", "FORGE_KUBE_CONTEXT", "kubernetes: the kubeconfig context (default: the current one)" },
	{ K_START_TIMEOUT, "start-timeout", 0, "SEC", NULL, "kubernetes: how long the pod may stay unscheduled or unstarted (default 300; exit " FG_XSTR(FG_EXIT_RUNTIME) ")" },
	{ K_RUN_AS, "run-as", 0, "UID[:GID]", NULL, "kubernetes: the pod's runAsUser (and runAsGroup); default: the image's user" },
	{ K_FS_GROUP, "fs-group", 0, "GID", NULL, "kubernetes: the pod's fsGroup, a group that may write the workspace claim" },
	{ K_SUBPATH, "workspace-subpath", 0, "PATH", NULL, "kubernetes: mount only PATH of the --workspace-volume claim" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

static int kube_take(void *data, int id, const char *v, char *err, size_t errlen)
{
	struct rn_kube_opts *k = data;
	const char **slot[] = {
		[K_NAMESPACE] = &k->kube_namespace, [K_KUBE_CONTEXT] = &k->kube_context,
		[K_START_TIMEOUT] = &k->start_timeout_arg, [K_RUN_AS] = &k->run_as,
		[K_FS_GROUP] = &k->fs_group, [K_SUBPATH] = &k->workspace_subpath,
	};

	if (id <= 0 || id >= (int)ARRAY_SIZE(slot) || !slot[id]) {
		rn__seterr(err, errlen, "not a kubernetes option");
		return -EINVAL;
	}
	*slot[id] = v;
	return 0;
}

static const struct rn_engine_opts kube_opt_set = { kube_options, kube_take };
static const struct rn_engine_opts *const kube_opt_sets[] = { &rn__container_opt_set, &kube_opt_set, NULL };

void rn_kube_opts_init(struct rn_kube_opts *k)
{
	memset(k, 0, sizeof(*k));
	rn__container_opts_init(&k->c);
	k->start_timeout = RN_KUBE_START_TIMEOUT;
}

void rn_kube_opts_release(struct rn_kube_opts *k)
{
	rn__container_opts_release(&k->c);
}

const struct rn_kube_opts *rn_kube_opts_of(const struct rn_engine_params *p)
{
	static const struct rn_kube_opts defaults = { .start_timeout = RN_KUBE_START_TIMEOUT };

	return p->data ? p->data : &defaults;
}

static void *kube_data_new(void)
{
	struct rn_kube_opts *k = fg_xmalloc(sizeof(*k));

	rn_kube_opts_init(k);
	return k;
}

/* The container options' checks, then the engine's own, and kubectl (the
 * CLI the child runs) found now rather than by the child. */
static int kube_data_check(void *data, const char *program, char *err, size_t errlen)
{
	struct rn_kube_opts *k = data;

	if (rn__container_opts_check(&k->c, err, errlen))
		return -EINVAL;
	if (k->start_timeout_arg && fg_parse_double(k->start_timeout_arg, 1, 86400, &k->start_timeout)) {
		rn__seterr(err, errlen, "invalid --start-timeout '%s' (seconds, 1 to 86400)", k->start_timeout_arg);
		return -EINVAL;
	}
	if (!rn__runnable(program)) {
		rn__seterr(err, errlen, "engine CLI '%s' is not found in PATH (or not executable): install "
			   "kubectl, or name it with --engine-cli", program);
		return -EINVAL;
	}
	return 0;
}

static void kube_data_free(void *data)
{
	if (!data)
		return;
	rn_kube_opts_release(data);
	free(data);
}

static size_t kube_log_fields(const void *data, struct rn_engine_field *f)
{
	const struct rn_kube_opts *k = data;

	f[0] = (struct rn_engine_field){ "workspace_subpath", k->workspace_subpath };
	f[1] = (struct rn_engine_field){ "namespace", k->kube_namespace ? k->kube_namespace : "(the context's)" };
	f[2] = (struct rn_engine_field){ "context", k->kube_context ? k->kube_context : "(current)" };
	f[3] = (struct rn_engine_field){ "run_as", k->run_as ? k->run_as : "(the image's user)" };
	return 4;
}

const struct rn_engine_ops rn_engine_kubernetes_ops = {
	.name = "kubernetes", .cli = "kubectl", .build = kube_build, .stop = kube_stop,
	.stop_grace_ms = RN_KUBE_STOP_GRACE_MS, .kill_group_after_exit = 1,
	.reap_list = kube_reap_list, .reap_remove = rn_kube_delete_argv,
	.exit_reason = kube_exit_reason, .workspace_local = kube_workspace_local,
	.host_env = NULL, .env_by_name = 1, .hint = kube_hint,
	.opts = kube_opt_sets, .data_new = kube_data_new, .data_check = kube_data_check,
	.data_free = kube_data_free, .log_fields = kube_log_fields,
	.sandbox_ids = rn__container_sandbox_ids,
};
