/*
 * engine.h - how a run is launched: the command line and environment of the
 * process the runner spawns, and how it is stopped.
 *
 * Three engines:
 *   local   the forge-entrypoint binary itself, workspace path as is;
 *   docker  `docker run --rm --name forge-<run id> -v W:/workspace
 *           -v SKILLS:/skills:ro --user UID:GID -e NAME... IMAGE run ...`;
 *   podman  the same with the podman CLI (plus --userns=keep-id when not
 *           root, so files in the workspace stay owned by the caller).
 * Container environment is an explicit allowlist: every FORGE_* and
 * AUTO_REVIEW_* variable of the runner's environment except the runner's own
 * settings (rn_engine_env_is_runner_only()), plus each --env NAME. They are
 * passed as `-e NAME` with the value in the CLI's environment, so a value
 * never appears in argv (ps) or in a log line.
 *
 * Protocol: fill struct rn_engine_params -> rn_engine_build() -> spawn argv
 * with env -> to stop: local: signal the process group; containers:
 * spawn rn_engine_stop_argv(force = 0) (docker stop), later force = 1
 * (docker kill) -> after the exit: rn_engine_exit_reason() explains the
 * engine's own exit codes, rn_engine_container_reap() makes sure the
 * container is gone. All pure functions except rn_engine_container_reap(),
 * which runs the engine's CLI.
 */
#ifndef RN_ENGINE_H
#define RN_ENGINE_H

#include <stddef.h>
#include <sys/types.h>

#include "forge/buf.h"

enum rn_engine_kind { RN_ENGINE_LOCAL, RN_ENGINE_DOCKER, RN_ENGINE_PODMAN };

/* Seconds docker/podman stop waits before its own SIGKILL: the engine's
 * usual 10 s, so the entrypoint's own grace for the agent (5 s by default)
 * ends well inside it and the container exits 143, not 137. */
#define RN_ENGINE_STOP_GRACE 10

struct rn_engine_params {
	enum rn_engine_kind kind;
	const char *program;     /* local: entrypoint path; containers: CLI ("docker") */
	const char *image;       /* containers: required */
	const char *workspace;   /* absolute host path */
	const char *skills_dir;  /* host path or NULL (local: entrypoint default) */
	const char *step;
	const char *skill;       /* NULL: not passed */
	const char *task_key;    /* NULL: not passed */
	const char *task_file;   /* host path or NULL */
	const char *run_id;
	const char *const *extra_env;  /* --env NAMEs, borrowed */
	size_t nextra_env;
	uid_t uid;
	gid_t gid;
	char *const *environ;    /* the runner's environment, borrowed */
};

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

/* Container engines: `docker stop -t 5 forge-<id>` (force 0) or
 * `docker kill forge-<id>` (force 1). -EINVAL for local. */
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
 * Containers: makes sure the run's container is gone once the CLI has
 * exited. `run --rm` normally removes it before the CLI returns, but the
 * removal can lag, and a CLI that was killed leaves it behind. Lists
 * `ps -a -q --filter name=^forge-<id>$` every 200 ms; still there after a
 * second: `rm -f`. Runs p->program with envp (NULL: the runner's), blocks
 * for at most timeout_ms (each CLI call is killed at the deadline). Returns
 * 0 gone (at once, or after the lag), 1 removed with rm -f, -EBUSY still
 * listed at the deadline, or a negative errno with err filled when the CLI
 * cannot be run or does not answer. Local engine: 0, nothing run.
 */
int rn_engine_container_reap(const struct rn_engine_params *p, char *const *envp, int timeout_ms,
			     char *err, size_t errlen);

/* Owned container name "forge-<run id>". */
char *rn_engine_container_name(const char *run_id);

/* Builds argv for the local engine (engine_local.c). */
int rn__engine_build_local(const struct rn_engine_params *p, struct fg_strvec *argv,
			   char *err, size_t errlen);
/* Builds argv for docker/podman (engine_docker.c). */
int rn__engine_build_container(const struct rn_engine_params *p, struct fg_strvec *argv,
			       char *err, size_t errlen);

/*
 * Finds the forge-entrypoint binary for the local engine: explicit (option
 * or FORGE_ENTRYPOINT_BIN) if not NULL; else next to the running executable
 * (/proc/self/exe); else ../entrypoint/forge-entrypoint relative to it (the
 * build tree); else "forge-entrypoint" for a PATH lookup. Owned string.
 */
char *rn_engine_find_entrypoint(const char *explicit_path);

#endif
