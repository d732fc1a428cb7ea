/*
 * run.h - `forge-runner run`'s configuration (run_config.c fills it).
 *
 * Protocol (cmd_run.c drives it):
 *   1. rn_run_config_load(): rn_run_config from options and environment,
 *      validated (run_config.c);
 *   2. rn_prepare_step_dir(): W/.forge/{step}/ created, stale files removed
 *      and counted; rn_run_id_generate() (prepare.h);
 *   3. rn_session_run(): one libuv loop: watch armed first, then the engine
 *      spawned, output streamed into the log, timeout and signals handled;
 *      after the exit: queued inotify events drained, final sweep, every
 *      handle closed, uv_loop_close() == 0 (session.h);
 *   4. result file, metrics (cmd_run.c).
 */
#ifndef RN_RUN_H
#define RN_RUN_H

#include "cli.h"
#include "engine.h"
#include "forge/buf.h"
#include "record.h"

struct rn_run_config {
	const struct rn_engine_ops *engine;  /* --engine / FORGE_ENGINE (rn_engine_find()) */
	void *engine_data;      /* owned: the engine's own options (ops->data_new()), or NULL */
	char *workspace;        /* owned, absolute (resolved unless the engine is remote); NULL
				 * with workspace_volume */
	const char *workspace_volume;  /* --workspace-volume NAME (containers) or NULL */
	int workspace_local;    /* the runner can see the workspace: it clears, watches and
				 * sweeps; else the stream is the only source (engine.h) */
	char *engine_host;      /* owned: a remote engine host (rn_engine_remote_host()) or NULL */
	const char *step, *skill, *task_key;   /* borrowed from argv/env (step: or step_owned) */
	char *step_owned;       /* owned: the task file's step_name when --step is not given */
	const char *run_id;     /* --run-id (borrowed) or NULL: a fresh one */
	char *task_file;        /* owned absolute or NULL */
	char *skills_dir;       /* owned absolute or NULL */
	const char *image;
	char *entrypoint;       /* owned: local engine's binary */
	double timeout;         /* seconds, 0: none */
	double poll_interval;
	int no_inotify;
	enum rn_record_mode record;
	const char *recording_dir;
	const char *result_path;
	const char *metrics_file;
	const char *trace_file;         /* --trace-file, or NULL */
	struct fg_strvec extra_env;  /* --env NAMEs */
	/* Owned: the cycle directory below the workspace (--cycle-dir or
	 * FORGE_CYCLE_DIR expanded by fg_cycle_dir(), default .forge/{step}). */
	char *cycle_dir;
	int cycle_dir_given;    /* a template was given: passed on to the entrypoint */
	int quiet;              /* --quiet: no closing line (closing.h) */
	int require_review;     /* --require-review / AUTO_REVIEW_REQUIRED=1 (hostcheck.h) */
	int require_isolation;  /* --require-isolation / FORGE_REQUIRE_ISOLATION=1: set for the entrypoint */
	const char *engine_cli;      /* --engine-cli / FORGE_ENGINE_CLI or NULL */
};

/* The settings every run needs (FORGE_WORKER_CMD, FORGE_REVIEWER_CMD), for
 * --help. */
extern const char rn_run_needs[];

/*
 * Fills c (uninitialised) from `run`'s argv (argv[0] is "run"; borrowed:
 * c keeps pointers into it) and the environment, and validates it; *log
 * gets the log options. Returns 0; a negative value when --help was asked
 * (print the help, exit 0); else the exit code of a usage or configuration
 * error, already printed. Release c in every case.
 */
int rn_run_config_load(struct rn_run_config *c, int argc, char **argv, struct rn_log_cfg *log);

/* The skill the entrypoint will review, derived as it does (owned):
 * --skill, else FORGE_SKILL_NAME, else the task file's skill_name, else the
 * step with '_' turned into '-'. */
char *rn_run_derived_skill(const struct rn_run_config *c);
/* The task key the entrypoint will use (owned, NULL for none): --task-key,
 * else FORGE_TASK_KEY, else the task file's task_key. */
char *rn_run_derived_task_key(const struct rn_run_config *c);

/* Frees what c owns (its borrowed strings stay). */
void rn_run_config_release(struct rn_run_config *c);

/* The ids the sandbox runs as: the runner's own, unless the engine says
 * otherwise (ops->sandbox_ids: a container is never uid 0 unless
 * --as-root: a runner started by root gives the sandbox the workspace's
 * owner, or RN_SANDBOX_DEFAULT_UID:GID when root owns it or there is no
 * host workspace, a volume). */
void rn_run_sandbox_ids(const struct rn_run_config *c, uid_t *uid, gid_t *gid);

/* Fills *ep for running c with run_id (borrowed; ep borrows from c): the
 * session launches with it, and `run` builds it once before touching the
 * step directory so that an engine configuration error (no image, a path a
 * bind mount cannot express) is a usage error that changes nothing. */
void rn_run_engine_params(const struct rn_run_config *c, const char *run_id,
			  struct rn_engine_params *ep);

#endif
