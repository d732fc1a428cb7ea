/*
 * engine.h - how a run is launched: the command line and environment of the
 * process the runner spawns, how it is stopped, and what is cleaned up after.
 *
 * One ops table per engine (struct rn_engine_ops), one file each:
 *   local   engine_local.c: the forge-entrypoint binary itself, workspace
 *           path as is; stopped by signalling its process group;
 *   docker  engine_docker.c: `docker run --rm --name forge-<run id>
 *           -v W:/workspace -v SKILLS:/skills:ro --user UID:GID -e NAME...
 *           IMAGE run ...`; stopped with `docker stop`, then `docker kill`;
 *   podman  engine_podman.c: the same with the podman CLI (plus
 *           --userns=keep-id when not root, so files in the workspace stay
 *           owned by the caller);
 *   kubernetes engine_kubernetes.c: one batch/v1 Job per run, driven through
 *           kubectl by the runner's own child `forge-runner kubernetes-job`
 *           (kube_job.c; docs/design/kubernetes.md); stopped by SIGTERM to
 *           that child, which deletes the Job and follows the pod to its end.
 * docker and podman share the container base (engine_container.c), whose
 * options (the limits, --mount-label, --engine-arg, --as-root) the
 * kubernetes engine takes too. engine.c's list is the one place that
 * names the engines: --engine, its help and its errors come from it.
 *
 * An engine's own options and state live behind the engine, as a redis
 * backend keeps its state behind apidata: the engine lists its option
 * tables (struct rn_engine_opts), `run`'s parser hands it what it takes
 * and the engine checks and keeps it in its data (struct rn_engine_params
 * data, opaque to every other file). Every question a caller has about an
 * engine is a member of its table (a callback or a capability flag): no
 * file but engine.c looks at which engine it is. A new engine is one new
 * file and one entry in engine.c's list; the session and `run` do not
 * change.
 *
 * Container environment is an explicit allowlist: every FORGE_* and
 * AUTO_REVIEW_* variable of the runner's environment except the runner's own
 * settings (rn_engine_env_is_runner_only()), plus each --env NAME. They are
 * passed as `-e NAME` with the value in the CLI's environment (kubernetes:
 * the pod's env, the --env values from a Secret), so a value never appears
 * in argv (ps) or in a log line.
 *
 * Protocol: ops = rn_engine_find(name) -> data = ops->data_new(), each
 * option of the engine's tables to its set's take(), ops->data_check()
 * (`run`'s options: run_config.c) -> fill struct rn_engine_params (ops, data) ->
 * rn_engine_build() -> spawn argv with env -> to stop: ops->stop(force 0),
 * after the grace period ops->stop(force 1) (each either fills a command
 * to run or names a signal for the process group) -> after the exit:
 * ops->exit_reason() explains the engine's own exit codes, and when
 * ops->reap_list is set the session runs the reap (reap.h) on its loop
 * until the engine's leftover (the container) is gone -> ops->data_free().
 * Every function here is pure: the engine's CLI is only ever run by the
 * session's loop.
 */
#ifndef RN_ENGINE_H
#define RN_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "forge/buf.h"
#include "forge/opts.h"

struct rn_engine_ops;

/* Seconds docker/podman stop waits before its own SIGKILL: the engine's
 * usual 10 s, so the entrypoint's own grace for the agent (5 s by default)
 * ends well inside it and the container exits 143, not 137. */
#define RN_ENGINE_STOP_GRACE 10
/* How long the session waits after the first stop before forcing: local:
 * SIGTERM -> SIGKILL; containers: docker stop's own grace plus 10 s. */
#define RN_LOCAL_STOP_GRACE_MS 10000
#define RN_CONTAINER_STOP_GRACE_MS ((RN_ENGINE_STOP_GRACE + 10) * 1000)

/* What every engine is given; what only some take is in data. */
struct rn_engine_params {
	const struct rn_engine_ops *ops;  /* the engine (rn_engine_find()) */
	/* The engine's own options and state (ops->data_new(), borrowed):
	 * read only by the engine's files; NULL: the engine's defaults. */
	const void *data;
	const char *program;     /* local: entrypoint path; else the CLI ("docker") */
	const char *image;       /* engines with a CLI: required */
	const char *workspace;   /* absolute host path; NULL with workspace_volume */
	const char *workspace_volume;  /* a named volume (claim) at /workspace, or NULL */
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
	double timeout;          /* --timeout in seconds, 0: none (kubernetes: the
				  * Job's activeDeadlineSeconds) */
	/* The run is sealed: FORGE_SEAL_KEY_STDIN=1 and FORGE_LIFELINE=stdin
	 * are set (the key itself comes on stdin, written by the session), and
	 * a container gets -i so its stdin is the pipe. */
	int sealed;
};

/* One table of options an engine takes (several engines may list the
 * same set: docker, podman and kubernetes share the container base's). */
struct rn_engine_opts {
	/* Ids local to the set, > 0; ended by an entry with name NULL. An
	 * option's environment twin (env) is read for the engines that take
	 * the set, and ignored by the others. */
	const struct fg_opt *table;
	/* Takes the option id of the table (value: its value; "1" for a flag,
	 * given or its twin set) into data (the engine's, ops->data_new()).
	 * Values are borrowed from argv or the environment and checked later
	 * (ops->data_check()); 0, or -EINVAL with err filled. */
	int (*take)(void *data, int id, const char *value, char *err, size_t errlen);
};

/* One field of the run_start event an engine adds (value NULL: absent). */
struct rn_engine_field {
	const char *key, *value;
};
#define RN_ENGINE_FIELDS_MAX 8

/*
 * Checks one --env argument: 0 if it is a variable name (letters, digits and
 * '_', not starting with a digit), else -EINVAL with err filled. The message
 * never quotes the argument: "NAME=value" may hold the very secret --env
 * exists to keep out of command lines and logs.
 */
int rn_engine_env_name_check(const char *arg, char *err, size_t errlen);

/* 1 if NAME (no '=') is one of the runner's own settings, never passed into a
 * container (FORGE_ENGINE, FORGE_IMAGE, FORGE_ENTRYPOINT_BIN, paths of the
 * host such as FORGE_WORKSPACE, ...; the environment twin of any engine's
 * option, such as FORGE_MEMORY or FORGE_KUBE_NAMESPACE). */
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
 * The ops table of one engine; every member is set unless said otherwise.
 * Tables are static and shared (rn_engine_find()).
 */
struct rn_engine_ops {
	const char *name;        /* "local", "docker", "podman", "kubernetes" */
	/* The engine's CLI (p->program by default; --engine-cli names
	 * another), or NULL when the program spawned is the entrypoint itself
	 * (the local engine). */
	const char *cli;
	/* 1 when the sandbox runs on this host and sees its files where they
	 * are (local): agent commands may name host paths, the entrypoint's
	 * default skills directory is the host's, a named volume cannot be
	 * the workspace. */
	int host_fs;
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
	 * the runner did not stop it, or NULL (see rn_engine_exit_reason()).
	 * NULL member: the codes are the entrypoint's own (local). */
	char *(*exit_reason)(const struct rn_engine_params *p, int exit_code);
	/* 1 when the run's workspace is the host path p->workspace, which the
	 * runner watches, clears and sweeps itself; 0 for a named volume or a
	 * remote engine host (rn_engine_remote_host()): frames on the stream
	 * are then the only live source, and the entrypoint clears. */
	int (*workspace_local)(const struct rn_engine_params *p);
	/* The engine host the CLI talks to when it is not this machine, owned,
	 * or NULL (see rn_engine_remote_host()). NULL member: always local. */
	char *(*remote_host)(const struct rn_engine_params *p);
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
	 * namespaces, the image store; the cluster is unreachable, the node
	 * cannot pull the image), with the fix, or NULL. *kind is set to
	 * RN_HINT_DOWN when the line says the engine itself cannot be reached
	 * (so no container can have been created), to RN_HINT_RUNTIME when the
	 * engine or its runtime failed to start the container (the CLI's 126
	 * or 127 then means the engine, not the image's entrypoint: the run
	 * exits 125), and is left alone otherwise. NULL member: no hints
	 * (local). */
	char *(*hint)(const struct rn_engine_params *p, const char *line, int *kind);
	/* The engine's own options of `run`: a NULL-ended list of sets, or
	 * NULL (none; every data member below is then NULL too). */
	const struct rn_engine_opts *const *opts;
	/* The engine's data: a new one with every option at its default
	 * (owned by the caller, freed with data_free); after every option and
	 * twin was taken, data_check() checks the values and resolves the
	 * defaults (program: the CLI the run will use), 0 or -EINVAL with err
	 * filled (a usage error). */
	void *(*data_new)(void);
	int (*data_check)(void *data, const char *program, char *err, size_t errlen);
	void (*data_free)(void *data);
	/* Fills up to RN_ENGINE_FIELDS_MAX fields of the run_start event from
	 * data (the engine's); returns their number. NULL member: none. */
	size_t (*log_fields)(const void *data, struct rn_engine_field *f);
	/* The sandbox's ids for a runner started by root (uid and gid are the
	 * runner's own on entry), workspace the host path or NULL (a volume).
	 * NULL member: the runner's own ids (see rn_run_sandbox_ids()). */
	void (*sandbox_ids)(const void *data, const char *workspace, uid_t *uid, gid_t *gid);
	/* Internal: the engine family's own constants (the container base's
	 * struct rn__container for docker and podman), or NULL. */
	const void *impl;
};

/* What a hint's line says about the engine (ops->hint's *kind). */
enum { RN_HINT_OTHER = 0, RN_HINT_DOWN = 1, RN_HINT_RUNTIME = 2 };

/* The engine named name ("local", ...), or NULL when there is none. */
const struct rn_engine_ops *rn_engine_find(const char *name);
/* The i-th engine of engine.c's list (the order --help names them in), or
 * NULL when i is past the end. */
const struct rn_engine_ops *rn_engine_at(size_t i);
/*
 * The names of the engines pick() accepts (every engine when pick is NULL;
 * arg is passed to it) into out (outlen bytes, cut if need be), joined as
 * prose with the word last: "docker, podman or kubernetes". Returns out.
 */
const char *rn_engine_names(char *out, size_t outlen, const char *last,
			    int (*pick)(const struct rn_engine_ops *ops, const void *arg), const void *arg);
/* 1 when ops lists the option set s. */
int rn_engine_takes(const struct rn_engine_ops *ops, const struct rn_engine_opts *s);

/* ops->stop() of p's engine, kept for callers that want a command only: 0
 * with argv appended (`docker stop -t 10 forge-<id>`, force 1: `docker
 * kill forge-<id>`), or -EINVAL when the engine stops by signal (local). */
int rn_engine_stop_argv(const struct rn_engine_params *p, int force, struct fg_strvec *argv);

/*
 * Why an engine's CLI ended with exit_code when the runner did not stop it:
 * docker and podman: 137 (the container was killed from outside: docker
 * kill, the OOM killer), 125 (the CLI could not run the container),
 * 126/127 (the image's entrypoint cannot be run or was not found);
 * kubernetes: 125 (the Job failed for a reason of the cluster's), 137 (the
 * pod was killed). Owned sentence, or NULL for other codes and for the
 * local engine (its codes are the entrypoint's).
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
 * local and kubernetes engines: a cluster is reached by kubectl, whose
 * workspace is a claim in any case). p->environ is the environment read.
 */
char *rn_engine_remote_host(const struct rn_engine_params *p);

/* 0 if name is a valid named volume (a letter or digit, then letters,
 * digits, '_', '.', '-'; at most 255), else -EINVAL with err filled. */
int rn_engine_volume_check(const char *name, char *err, size_t errlen);

/* Owned container name "forge-<run id>". */
char *rn_engine_container_name(const char *run_id);

/*
 * Finds the forge-entrypoint binary for the local engine: explicit (option
 * or FORGE_ENTRYPOINT_BIN) if not NULL; else next to the running executable
 * (/proc/self/exe); else ../entrypoint/forge-entrypoint relative to it (the
 * build tree); else "forge-entrypoint" for a PATH lookup. Owned string.
 */
char *rn_engine_find_entrypoint(const char *explicit_path);

/* ---- internal: the container base (engine_container.c), shared by docker
 * and podman; the kubernetes engine takes its options too ---- */

/* The ids a container gets from a runner started by root when the workspace
 * is root's too (or a volume): the image's forge user (docker/Dockerfile). */
#define RN_SANDBOX_DEFAULT_UID 10001
#define RN_SANDBOX_DEFAULT_IDS "10001:10001"

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

/* The container options (--memory ... --as-root): the data of docker and
 * podman, the first member of the kubernetes engine's. Strings are
 * borrowed (argv, the environment); NULL: not given, the engine's
 * default. */
struct rn_container_opts {
	const char *memory;      /* --memory SIZE */
	const char *cpus;        /* --cpus N */
	const char *pids_limit;  /* --pids-limit N; NULL: RN_ENGINE_PIDS_LIMIT */
	const char *network;     /* --network NAME */
	int read_only_rootfs;    /* --read-only --tmpfs /tmp */
	/* SELinux relabel option of every bind mount: "" none, "z" shared,
	 * "Z" private (resolved by the check; never "auto"). NULL counts as "". */
	const char *mount_label;
	struct fg_strvec engine_args;  /* --engine-arg values (owned vector) */
	int as_root;             /* --as-root: the sandbox may run as uid 0 */
	/* Raw values until the check resolves them. */
	const char *mount_label_arg, *read_only_arg;
};

/* The container options' set (every engine with a CLI lists it). */
extern const struct rn_engine_opts rn__container_opt_set;
/* p's container options: p->data as the base sees it (the kubernetes
 * engine's data begins with them), or defaults when p->data is NULL. */
const struct rn_container_opts *rn__container_opts(const struct rn_engine_params *p);
void rn__container_opts_init(struct rn_container_opts *c);
void rn__container_opts_release(struct rn_container_opts *c);
int rn__container_opts_check(struct rn_container_opts *c, char *err, size_t errlen);
void rn__container_sandbox_ids(const void *data, const char *workspace, uid_t *uid, gid_t *gid);

/* What differs between docker and podman beyond the CLI (ops->impl). */
struct rn__container {
	/* --userns=keep-id when not root (podman), or NULL. */
	const char *userns_arg;
	/* The daemon-down hint: what the CLI talks to ("daemon", "service"),
	 * how to start it, what to check. */
	const char *daemon, *start, *check;
	/* Owned hint for an image not in the engine's storage. */
	char *(*image_missing)(const char *image);
};

/* Builds the `CLI run ...` argv (engine_container.c). */
int rn__container_build(const struct rn_engine_params *p, struct fg_strvec *argv, char *err,
			size_t errlen);
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
char *rn__container_hint(const struct rn_engine_params *p, const char *line, int *kind);
void *rn__container_data_new(void);
int rn__container_data_check(void *data, const char *program, char *err, size_t errlen);
void rn__container_data_free(void *data);
extern const struct rn_engine_opts *const rn__container_opt_sets[];
/* The engine hosts of docker and podman (engine_remote.c). */
char *rn__docker_remote_host(const struct rn_engine_params *p);
char *rn__podman_remote_host(const struct rn_engine_params *p);

/* A container engine's table: the base's members with its CLI, what
 * differs (IMPL, a struct rn__container), the variable naming a remote host
 * and how that host is found (engine_docker.c, engine_podman.c). */
#define RN__CONTAINER_OPS(CLI, IMPL, HOST_ENV, REMOTE) {                       \
	.name = CLI, .cli = CLI, .build = rn__container_build,                 \
	.stop = rn__container_stop, .stop_grace_ms = RN_CONTAINER_STOP_GRACE_MS, \
	.kill_group_after_exit = 0, .reap_list = rn__container_reap_list,      \
	.reap_remove = rn__container_reap_remove,                              \
	.exit_reason = rn__container_exit_reason,                              \
	.workspace_local = rn__container_workspace_local, .remote_host = REMOTE, \
	.host_env = HOST_ENV, .env_by_name = 1, .hint = rn__container_hint,    \
	.opts = rn__container_opt_sets, .data_new = rn__container_data_new,    \
	.data_check = rn__container_data_check,                                \
	.data_free = rn__container_data_free,                                  \
	.sandbox_ids = rn__container_sandbox_ids, .impl = IMPL,                \
}

#endif
