/*
 * engine.h - how a run is launched: the command line and environment of the
 * process the runner spawns, how it is stopped, and what is cleaned up after.
 *
 * One ops table per engine kind (struct rn_engine_ops), one file each:
 *   local   engine_local.c: the forge-entrypoint binary itself, workspace
 *           path as is; stopped by signalling its process group;
 *   docker  engine_docker.c: `docker run --rm --name forge-<run id>
 *           -v W:/workspace -v SKILLS:/skills:ro --user UID:GID -e NAME...
 *           IMAGE run ...`; stopped with `docker stop`, then `docker kill`;
 *   podman  engine_podman.c: the same with the podman CLI (plus
 *           --userns=keep-id when not root, so files in the workspace stay
 *           owned by the caller).
 *   kubernetes engine_kubernetes.c: one batch/v1 Job per run, driven through
 *           kubectl by the runner's own child `forge-runner kubernetes-job`
 *           (kube_job.c; docs/design/kubernetes.md); stopped by SIGTERM to
 *           that child, which deletes the Job and follows the pod to its end.
 * docker and podman share the container base (engine_container.c). The
 * session only calls through the table: a new engine is one new file and
 * one entry in engine.c's list, and the session does not change.
 *
 * Container environment is an explicit allowlist: every FORGE_* and
 * AUTO_REVIEW_* variable of the runner's environment except the runner's own
 * settings (rn_engine_env_is_runner_only()), plus each --env NAME. They are
 * passed as `-e NAME` with the value in the CLI's environment, so a value
 * never appears in argv (ps) or in a log line.
 *
 * Protocol: fill struct rn_engine_params (ops = rn_engine_ops_of(kind)) ->
 * rn_engine_build() -> spawn argv with env -> to stop: ops->stop(force 0),
 * after the grace period ops->stop(force 1) (each either fills a command
 * to run or names a signal for the process group) -> after the exit:
 * ops->exit_reason() explains the engine's own exit codes, and when
 * ops->reap_list is set the session runs the reap (reap.h) on its loop
 * until the engine's leftover (the container) is gone. Every function here
 * is pure: the engine's CLI is only ever run by the session's loop.
 */
#ifndef RN_ENGINE_H
#define RN_ENGINE_H

#include <stddef.h>
#include <sys/types.h>

#include "forge/buf.h"

enum rn_engine_kind { RN_ENGINE_LOCAL, RN_ENGINE_DOCKER, RN_ENGINE_PODMAN, RN_ENGINE_KUBERNETES };

/* Seconds docker/podman stop waits before its own SIGKILL: the engine's
 * usual 10 s, so the entrypoint's own grace for the agent (5 s by default)
 * ends well inside it and the container exits 143, not 137. */
#define RN_ENGINE_STOP_GRACE 10
/* How long the session waits after the first stop before forcing: local:
 * SIGTERM -> SIGKILL; containers: docker stop's own grace plus 10 s. */
#define RN_LOCAL_STOP_GRACE_MS 10000
#define RN_CONTAINER_STOP_GRACE_MS ((RN_ENGINE_STOP_GRACE + 10) * 1000)

struct rn_engine_params {
	enum rn_engine_kind kind;
	const char *program;     /* local: entrypoint path; containers: CLI ("docker") */
	const char *image;       /* containers: required */
	const char *workspace;   /* absolute host path; NULL with workspace_volume */
	const char *workspace_volume;  /* containers: named volume at /workspace, or NULL */
	int clear_stale;         /* pass --clear-stale: the runner cannot clear the step dir */
	const char *skills_dir;  /* host path or NULL (local: entrypoint default) */
	const char *step;
	const char *skill;       /* NULL: not passed */
	const char *task_key;    /* NULL: not passed */
	const char *task_file;   /* host path or NULL */
	const char *run_id;
	const char *const *extra_env;  /* --env NAMEs, borrowed */
	size_t nextra_env;
	uid_t uid;              /* the sandbox's ids (rn_run_sandbox_ids()) */
	gid_t gid;
	bool runner_root;       /* the runner is uid 0 (podman: rootful, nothing to keep) */
	char *const *environ;    /* the runner's environment, borrowed */
	/* Containers only (checked with the rn_engine_*_check() functions);
	 * NULL: not passed, the engine's default. */
	const char *memory;      /* --memory SIZE */
	const char *cpus;        /* --cpus N */
	const char *pids_limit;  /* --pids-limit N; NULL: RN_ENGINE_PIDS_LIMIT */
	const char *network;     /* --network NAME */
	int read_only_rootfs;    /* --read-only --tmpfs /tmp */
	/* SELinux relabel option of every bind mount: "" none, "z" shared,
	 * "Z" private (resolved; never "auto"). NULL counts as "". */
	const char *mount_label;
	const char *const *engine_args;  /* --engine-arg values, borrowed */
	size_t nengine_args;
	/* The cycle directory below the workspace, passed as FORGE_CYCLE_DIR
	 * (replacing any in the environment); NULL: not passed. */
	const char *cycle_dir;
	/* The run's W3C traceparent (the workflow span), passed as
	 * FORGE_TRACEPARENT (replacing any in the environment); NULL: the run
	 * is not traced and none is passed. */
	const char *traceparent;
	/* When the run's --timeout runs out, UTC seconds since the epoch with
	 * milliseconds ("1767225600.250"), passed as FORGE_DEADLINE (replacing
	 * any in the environment) so the entrypoint stops itself shortly
	 * before and writes its summary; NULL: no --timeout, none passed. */
	const char *deadline;
	/* Kubernetes only (NULL / 0: not given). */
	const char *kube_namespace;   /* --namespace NS */
	const char *kube_context;     /* --kube-context NAME */
	const char *workspace_subpath;  /* --workspace-subpath P */
	const char *run_as;           /* --run-as UID[:GID] */
	const char *fs_group;         /* --fs-group GID: the pod's fsGroup */
	double timeout;               /* --timeout: the Job's activeDeadlineSeconds */
	double start_timeout;         /* --start-timeout SEC (default RN_KUBE_START_TIMEOUT) */
	/* The run is sealed (issue 22): FORGE_SEAL_KEY_STDIN=1 and
	 * FORGE_LIFELINE=stdin are set (the key itself comes on stdin, written
	 * by the session), and a container gets -i so its stdin is the pipe. */
	int sealed;
};

/* How long a pod may stay unscheduled or unstarted (seconds, --start-timeout). */
#define RN_KUBE_START_TIMEOUT 300

/* The default process limit of a container (hardening: --pids-limit). */
#define RN_ENGINE_PIDS_LIMIT "4096"

/* The SELinux relabel mode of the bind mounts (--mount-label). */
enum rn_mount_label { RN_MOUNT_LABEL_AUTO, RN_MOUNT_LABEL_NONE, RN_MOUNT_LABEL_SHARED,
		      RN_MOUNT_LABEL_PRIVATE };

/* "auto", "none", "z", "Z" -> *out; 0 or -EINVAL. */
int rn_mount_label_parse(const char *s, enum rn_mount_label *out);

/* The mount option for mode: "", "z" or "Z". auto is "Z" when
 * selinux_enabled (the caller looks at /sys/fs/selinux/enforce:
 * rn_selinux_enabled()), else "". */
const char *rn_mount_label_option(enum rn_mount_label mode, int selinux_enabled);

/* 1 when /sys/fs/selinux/enforce is readable: SELinux is enabled on this
 * host (enforcing or permissive). */
int rn_selinux_enabled(void);

/*
 * Checks of the container limit values, each 0 or -EINVAL with err filled:
 *   memory:     digits with an optional unit b, k, m or g ("4g", "512m");
 *   cpus:       a number > 0 and <= 1024 ("2", "0.5");
 *   pids_limit: an integer from 1 to 4194304;
 *   network:    a name of letters, digits and "_.:=,-", not starting with
 *               '-' ("none", "bridge", "slirp4netns:allow_host_loopback=true").
 */
int rn_engine_memory_check(const char *v, char *err, size_t errlen);
int rn_engine_cpus_check(const char *v, char *err, size_t errlen);
int rn_engine_pids_check(const char *v, char *err, size_t errlen);
int rn_engine_network_check(const char *v, char *err, size_t errlen);

/* "local", "docker", "podman". */
const char *rn_engine_name(enum rn_engine_kind k);
/* 0 or -EINVAL. */
int rn_engine_parse(const char *s, enum rn_engine_kind *out);

/*
 * Checks one --env argument: 0 if it is a variable name (letters, digits and
 * '_', not starting with a digit), else -EINVAL with err filled. The message
 * never quotes the argument: "NAME=value" may hold the very secret --env
 * exists to keep out of command lines and logs.
 */
int rn_engine_env_name_check(const char *arg, char *err, size_t errlen);

/* 1 if NAME (no '=') is one of the runner's own settings, never passed into a
 * container (FORGE_ENGINE, FORGE_IMAGE, FORGE_ENTRYPOINT_BIN, paths of the
 * host such as FORGE_WORKSPACE, ...). */
int rn_engine_env_is_runner_only(const char *name);

/*
 * Appends the argv and the complete environment ("NAME=value") of the
 * process to spawn. FORGE_RUN_ID is always set to p->run_id. Returns 0, or
 * -EINVAL with err filled (no image for a container engine, a path a bind
 * mount cannot express, an invalid --env name); argv and env are then
 * left with whatever was appended (callers release them).
 */
int rn_engine_build(const struct rn_engine_params *p, struct fg_strvec *argv,
		    struct fg_strvec *env, char *err, size_t errlen);

/*
 * The ops table of one engine kind; every member is set unless said
 * otherwise. Tables are static and shared (rn_engine_ops_of()).
 */
struct rn_engine_ops {
	const char *name;        /* "local", "docker", "podman" */
	/* The engine's CLI (p->program), or NULL when the program spawned is
	 * the entrypoint itself (the local engine). */
	const char *cli;
	/* Appends the argv of the process to spawn; 0 or -EINVAL with err
	 * filled (see rn_engine_build()). */
	int (*build)(const struct rn_engine_params *p, struct fg_strvec *argv, char *err,
		     size_t errlen);
	/* How to stop the run: force 0 first, force 1 after stop_grace_ms.
	 * Either appends a command to run (returns 0) or returns the signal
	 * to send to the spawned process group (argv untouched). With force 1
	 * the session also sends SIGKILL to the group in any case. */
	int (*stop)(const struct rn_engine_params *p, int force, struct fg_strvec *argv);
	int stop_grace_ms;
	/* 1: SIGKILL the process group once the spawned process exited (a
	 * local run leaves no straggler behind). */
	int kill_group_after_exit;
	/* Appends a command whose standard output is empty once the run's
	 * leftover is gone (`docker ps -a -q --filter name=^forge-<id>$`),
	 * and one that removes it by force (`docker rm -f forge-<id>`). NULL
	 * (both): nothing outlives the spawned process, no reap. */
	void (*reap_list)(const struct rn_engine_params *p, struct fg_strvec *argv);
	void (*reap_remove)(const struct rn_engine_params *p, struct fg_strvec *argv);
	/* Owned sentence on why the spawned process ended with exit_code when
	 * the runner did not stop it, or NULL (see rn_engine_exit_reason()). */
	char *(*exit_reason)(const struct rn_engine_params *p, int exit_code);
	/* 1 when the run's workspace is the host path p->workspace, which the
	 * runner watches, clears and sweeps itself; 0 for a named volume or a
	 * remote engine host (rn_engine_remote_host()): frames on the stream
	 * are then the only live source, and the entrypoint clears. */
	int (*workspace_local)(const struct rn_engine_params *p);
	/* The variable that points the CLI at another engine host
	 * ("DOCKER_HOST", "CONTAINER_HOST"; contexts and connections count
	 * too: rn_engine_remote_host()), or NULL. */
	const char *host_env;
	/* 1 when the environment reaches the run by name only (-e NAME): an
	 * --env NAME that is unset is then worth a warning. */
	int env_by_name;
	/* Owned hint for a line of the engine CLI's own output that shows a
	 * common setup problem (the image is not on this host: how to build or
	 * load it; the daemon is unreachable; the runtime cannot start any
	 * container here: rlimits, slirp4netns/pasta, cgroups, user
	 * namespaces, the image store), with the fix, or NULL. *kind is set
	 * to RN_HINT_DOWN when the line says the engine itself cannot be
	 * reached (so no container can have been created), to RN_HINT_RUNTIME
	 * when the engine or its runtime failed to start the container (the
	 * CLI's 126 or 127 then means the engine, not the image's entrypoint:
	 * the run exits 125), and is left alone otherwise. NULL member: no
	 * hints (local). */
	char *(*hint)(const struct rn_engine_params *p, const char *line, int *kind);
};

/* What a hint's line says about the engine (ops->hint's *kind). */
enum { RN_HINT_OTHER = 0, RN_HINT_DOWN = 1, RN_HINT_RUNTIME = 2 };

/* The table of kind k; never NULL. */
const struct rn_engine_ops *rn_engine_ops_of(enum rn_engine_kind k);

/* The engines' tables (engine_local.c, engine_docker.c, engine_podman.c). */
extern const struct rn_engine_ops rn_engine_local_ops;
extern const struct rn_engine_ops rn_engine_docker_ops;
extern const struct rn_engine_ops rn_engine_podman_ops;
extern const struct rn_engine_ops rn_engine_kubernetes_ops;

/* ops->stop() for the table of p->kind, kept for callers that want a
 * command only: 0 with argv appended (`docker stop -t 10 forge-<id>`,
 * force 1: `docker kill forge-<id>`), or -EINVAL when the engine stops by
 * signal (local). */
int rn_engine_stop_argv(const struct rn_engine_params *p, int force, struct fg_strvec *argv);

/*
 * Why a container engine's CLI ended with exit_code when the runner did not
 * stop it: 137 (the container was killed from outside: docker kill, the OOM
 * killer), 125 (the CLI could not run the container), 126/127 (the image's
 * entrypoint cannot be run or was not found). Owned sentence, or NULL for
 * other codes and for the local engine (its codes are the entrypoint's).
 */
char *rn_engine_exit_reason(const struct rn_engine_params *p, int exit_code);

/*
 * The engine host p's CLI talks to when it is not this machine, found as
 * the CLI finds it (engine_remote.c, one rule for both engines): docker's
 * DOCKER_HOST, else its context (DOCKER_CONTEXT, else config.json's
 * currentContext, as `docker context use` sets it: the context's docker
 * endpoint); podman's CONTAINER_HOST, else its connection
 * (CONTAINER_CONNECTION, else the default connection when containers.conf
 * puts podman in remote mode). The endpoint is remote unless it is a local
 * socket (empty, "unix://..." or a plain path are local; "tcp://",
 * "ssh://" and other schemes are remote). Owned, or NULL when local (the
 * local engine too). p->environ is the environment read.
 */
char *rn_engine_remote_host(const struct rn_engine_params *p);

/* 0 if name is a valid named volume (a letter or digit, then letters,
 * digits, '_', '.', '-'; at most 255), else -EINVAL with err filled. */
int rn_engine_volume_check(const char *name, char *err, size_t errlen);

/* Owned container name "forge-<run id>". */
char *rn_engine_container_name(const char *run_id);

/* ---- internal: the container base shared by docker and podman ---- */

/* Builds the `CLI run ...` argv; userns_arg ("--userns=keep-id") goes
 * before --user when not NULL (engine_container.c). */
int rn__container_build(const struct rn_engine_params *p, const char *userns_arg,
			struct fg_strvec *argv, char *err, size_t errlen);
int rn__container_stop(const struct rn_engine_params *p, int force, struct fg_strvec *argv);
/* The names the run's environment passes (allowlisted FORGE_* and
 * AUTO_REVIEW_*, --env names, FORGE_RUN_ID, FORGE_CYCLE_DIR), sorted, one
 * each; 0 or -EINVAL with err filled (an invalid --env name). */
int rn__container_env_names(const struct rn_engine_params *p, struct fg_strvec *names, char *err,
			    size_t errlen);
void rn__container_reap_list(const struct rn_engine_params *p, struct fg_strvec *argv);
void rn__container_reap_remove(const struct rn_engine_params *p, struct fg_strvec *argv);
char *rn__container_exit_reason(const struct rn_engine_params *p, int exit_code);
int rn__container_workspace_local(const struct rn_engine_params *p);

/* A container engine's table: the base's members with its CLI, builder and
 * the variable naming a remote host
 * (engine_docker.c, engine_podman.c). */
#define RN__CONTAINER_OPS(CLI, BUILD, HOST_ENV) {                              \
	.name = CLI, .cli = CLI, .build = BUILD, .stop = rn__container_stop,   \
	.stop_grace_ms = RN_CONTAINER_STOP_GRACE_MS, .kill_group_after_exit = 0, \
	.reap_list = rn__container_reap_list, .reap_remove = rn__container_reap_remove, \
	.exit_reason = rn__container_exit_reason,                              \
	.workspace_local = rn__container_workspace_local, .env_by_name = 1,    \
	.hint = rn__container_hint, .host_env = HOST_ENV,                      \
}
char *rn__container_hint(const struct rn_engine_params *p, const char *line, int *kind);

/*
 * Finds the forge-entrypoint binary for the local engine: explicit (option
 * or FORGE_ENTRYPOINT_BIN) if not NULL; else next to the running executable
 * (/proc/self/exe); else ../entrypoint/forge-entrypoint relative to it (the
 * build tree); else "forge-entrypoint" for a PATH lookup. Owned string.
 */
char *rn_engine_find_entrypoint(const char *explicit_path);

#endif
