/*
 * kube.h - the kubernetes engine's parts (docs/design/kubernetes.md):
 *   engine_kubernetes.c  the ops table (engine.h), the engine's options and
 *                        data (struct rn_kube_opts), the kubectl prefixes;
 *   kube_manifest.c      the run's objects as one v1/List (pure, cJSON);
 *   kube_spec.c          the Job and the skills ConfigMap in it, the
 *                        quantities and --env values (kube_manifest.c
 *                        calls it, never the reverse);
 *   kube_status.c        what a pod's and its Job's status mean (pure);
 *   kube_job.c           `forge-runner kubernetes-job`, the child the
 *                        session spawns: create, wait, follow, exit, clean
 *                        (kube_follow.c follows the log; kube_cmd.c runs
 *                        one kubectl);
 *   cmd_reap.c           `forge-runner reap`: what dead runners left.
 * Nothing here talks to a cluster but through the kubectl child processes.
 */
#ifndef RN_KUBE_H
#define RN_KUBE_H

#include <stddef.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "engine.h"
#include "forge/buf.h"
#include "forge/opts.h"

/* The internal subcommand the engine spawns (not for users). */
#define RN_KUBE_JOB_CMD "kubernetes-job"

#define RN_KUBE_LABEL_NAME "app.kubernetes.io/name"
#define RN_KUBE_LABEL_MANAGED "app.kubernetes.io/managed-by"
#define RN_KUBE_LABEL_RUN_ID "forge-review/run-id"
#define RN_KUBE_LABEL_STEP "forge-review/step-hash"
#define RN_KUBE_ANN_HOST "forge-review/runner-host"
#define RN_KUBE_ANN_PID "forge-review/runner-pid"
#define RN_KUBE_ANN_START "forge-review/runner-start"
#define RN_KUBE_CONTAINER "forge"
/* Every kind of object a run makes (what reap lists and deletes). */
#define RN_KUBE_KINDS "jobs,pods,configmaps,secrets,networkpolicies"
/* The Job's ttlSecondsAfterFinished: a dead runner's Job goes by itself. */
#define RN_KUBE_TTL_AFTER_FINISHED 600

/* The pod's grace after SIGTERM: the entrypoint's own for its agent (5 s)
 * fits inside, so a stopped run ends 143 with its summary. */
#define RN_KUBE_TERM_GRACE 15
/* The session forces the stop after the grace and the kubelet's margin. */
#define RN_KUBE_STOP_GRACE_MS ((RN_KUBE_TERM_GRACE + 20) * 1000)
/* Size limits of what goes into the ConfigMaps (a ConfigMap holds 1 MiB). */
#define RN_KUBE_TASK_MAX (1024 * 1024 - 4096)
#define RN_KUBE_SKILLS_MAX (1024 * 1024 - 65536)

/* How long a pod may stay unscheduled or unstarted (seconds, --start-timeout). */
#define RN_KUBE_START_TIMEOUT 300

extern const struct rn_engine_ops rn_engine_kubernetes_ops;

/* The engine's data (struct rn_engine_params data): the container options
 * first (the container base reads the same pointer, and takes them), then
 * the engine's own. Strings borrowed (argv, the environment); NULL: not
 * given. */
struct rn_kube_opts {
	struct rn_container_opts c;
	const char *kube_namespace;     /* --namespace NS */
	const char *kube_context;       /* --kube-context NAME */
	const char *workspace_subpath;  /* --workspace-subpath P */
	const char *run_as;             /* --run-as UID[:GID] */
	const char *fs_group;           /* --fs-group GID: the pod's fsGroup */
	double start_timeout;           /* --start-timeout SEC (default RN_KUBE_START_TIMEOUT) */
	const char *start_timeout_arg;  /* its raw value until the check */
};

/* k with every option at its default; release frees what it owns. */
void rn_kube_opts_init(struct rn_kube_opts *k);
void rn_kube_opts_release(struct rn_kube_opts *k);
/* p's kubernetes data (p->data), or the defaults when it is NULL. */
const struct rn_kube_opts *rn_kube_opts_of(const struct rn_engine_params *p);

/* "forge-<run id>": the Job's name, and the prefix of the other objects'. */
char *rn_kube_job_name(const char *run_id);

/* Appends `CLI [--context C] [--namespace NS]`. */
void rn_kube_cli_prefix(const struct rn_engine_params *p, struct fg_strvec *argv);
/* Appends the delete of every object labelled with p's run id (no wait). */
void rn_kube_delete_argv(const struct rn_engine_params *p, struct fg_strvec *argv);

/* The label value of a step: 16 hex digits of its hash (step names may be
 * longer than a label value allows). Writes into out[17]. */
void rn_kube_step_hash(const char *step, char out[17]);

/*
 * The objects of one run as a v1/List: a Secret with the values of the
 * --env names that are set in p->environ, a ConfigMap with the task file,
 * one with the skills directory, a NetworkPolicy for --network none, and
 * the Job (docs/design/kubernetes.md). runner: the pid written as the
 * runner's (for the reap of a dead runner's leftovers). NULL with err
 * filled when the run cannot be expressed: no --workspace-volume,
 * --engine-arg, a network other than none, a --memory/--cpus/--run-as value
 * that converts to nothing, a task file or skills directory too large or
 * not plain text files. Owned.
 */
cJSON *rn_kube_manifest_for(const struct rn_engine_params *p, pid_t runner, char *err,
			    size_t errlen);

/* The start time of process pid (field 22 of /proc/PID/stat, clock ticks
 * since boot), 0 when it does not exist: with the pid, a process's identity. */
unsigned long long rn_kube_proc_start(pid_t pid);

/* "UID" or "UID:GID" (UID > 0): 0 with *uid, *gid (-1 when absent) set
 * (either may be NULL), or -EINVAL. */
int rn_kube_run_as_parse(const char *v, long *uid, long *gid);
/* --fs-group "GID" (1 .. 2^31-1): 0 with *gid set (may be NULL), or -EINVAL. */
int rn_kube_fs_group_parse(const char *v, long *gid);

/* The Job of the run (kube_spec.c): job is the object with its metadata,
 * completed with its spec; skill_items (taken, NULL without --skills-dir)
 * maps the skills ConfigMap's keys back to paths. */
void rn_kube_job_spec(const struct rn_engine_params *p, cJSON *job, cJSON *skill_items);
/* The ConfigMap of the skills directory, meta its metadata (taken), and
 * *items its volume items; NULL with err filled: a symlink or special
 * file, a file that is not UTF-8 text, a name a key cannot hold, more than
 * RN_KUBE_SKILLS_MAX bytes. */
cJSON *rn_kube_skills_map(const struct rn_engine_params *p, cJSON *meta, cJSON **items, char *err,
			  size_t errlen);

/* The value of NAME in p->environ (borrowed), or NULL. */
const char *rn_kube_env_value(const struct rn_engine_params *p, const char *name);

/* docker's memory size ("512m") as a Kubernetes quantity ("512Mi"); owned,
 * NULL when it is not one. */
char *rn_kube_quantity_memory(const char *v);
/* "1.5" -> "1500m"; owned, NULL when not a positive number. */
char *rn_kube_quantity_cpus(const char *v);

/* ---- status (kube_status.c) ---- */

/* What the pod and Job say, from `kubectl get jobs,pods -l ... -o json`. */
enum rn_kube_phase {
	RN_KUBE_NONE,       /* no pod yet */
	RN_KUBE_PENDING,    /* not started; may still start */
	RN_KUBE_CANNOT_START,  /* a waiting reason that will not resolve by itself */
	RN_KUBE_RUNNING,    /* the container runs (or ran): its logs can be followed */
	RN_KUBE_DONE,       /* the container terminated: code is final */
	RN_KUBE_GONE,       /* the pod was deleted or evicted (by someone else) */
	RN_KUBE_DEADLINE,   /* the Job's activeDeadlineSeconds ended it */
};

struct rn_kube_status {
	enum rn_kube_phase phase;
	int exit_code;           /* RN_KUBE_DONE: the container's code (137 for OOMKilled) */
	int oom;                 /* terminated with reason OOMKilled */
	int deleting;            /* the pod has a deletionTimestamp */
	int scheduled;           /* spec.nodeName is set */
	char pod[254];           /* the pod's name, "" when none */
	char reason[512];        /* why (for CANNOT_START, GONE, DEADLINE, a Pending pod) */
	char message[1024];      /* the termination message (the summary frame), "" */
};

/* Reads a `kubectl get jobs,pods -o json` List (len bytes) into st; 0, or
 * -EINVAL when it is not such a document. */
int rn_kube_status_parse(const char *json, size_t len, struct rn_kube_status *st);

/* 1 when a container waiting reason will not resolve without a change
 * (ErrImagePull, ImagePullBackOff, InvalidImageName, ...). */
int rn_kube_waiting_fatal(const char *reason);

/*
 * The timestamp prefix of a `kubectl logs --timestamps` line: its length
 * (through the space), 0 when the line has none. ts (at least 40 bytes)
 * receives the RFC 3339 time.
 */
size_t rn_kube_ts_prefix(const char *line, size_t n, char *ts, size_t tslen);

/* cmd_reap.c and kube_job.c */
extern const struct fg_opt rn_reap_options[];
int rn_cmd_kube_job(int argc, char **argv);
int rn_cmd_reap(int argc, char **argv);
/* Deletes the objects of the dead runners' runs (of step, when not NULL)
 * and of the runs named in ids; prints one line per run on stdout. 0, or
 * FG_EXIT_FAILED when kubectl failed. Flags: */
#define RN_KUBE_REAP_DRY 1u     /* list, delete nothing */
#define RN_KUBE_REAP_QUIET 2u   /* say nothing of runs left alone, nor of a failed listing */
int rn_kube_reap(const struct rn_engine_params *p, const char *step, const struct fg_strvec *ids,
		 unsigned flags);

#endif
