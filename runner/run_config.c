/*
 * run_config.c - `forge-runner run`'s configuration (run.h): the option
 * table, options and their environment twins, every check that makes a bad
 * configuration a usage error before anything is touched, the names the
 * entrypoint will derive (skill, task key, cycle directory) and the engine
 * parameters built from the result.
 */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "closing.h"
#include "hostcheck.h"
#include "prepare.h"
#include "forge/json.h"
#include "forge/alloc.h"
#include "forge/exit.h"
#include "forge/cycle.h"
#include "forge/fsutil.h"
#include "forge/names.h"
#include "forge/num.h"
#include "forge/summary.h"
#include "forge/text.h"

extern char **environ;

/* The entrypoint reads task files up to 1 MiB; so does the skill lookup. */
#define RN_TASK_FILE_MAX (1024 * 1024)

enum {
	R_WORKSPACE = 1, R_STEP, R_SKILL, R_TASK_KEY, R_TASK_FILE, R_ENGINE, R_IMAGE, R_SKILLS,
	R_TIMEOUT, R_POLL, R_NO_INOTIFY, R_RECORD, R_RECDIR, R_RESULT, R_METRICS, R_LOG_FORMAT,
	R_LOG_FILE, R_LOG_LEVEL, R_ENTRYPOINT, R_ENV, R_MOUNT_LABEL, R_MEMORY, R_CPUS, R_PIDS,
	R_NETWORK, R_ENGINE_ARG, R_READ_ONLY, R_VOLUME, R_CYCLE_DIR, R_QUIET, R_REQUIRE_REVIEW, R_HELP,
	R_ENGINE_CLI, R_NAMESPACE, R_KUBE_CONTEXT, R_START_TIMEOUT, R_RUN_AS, R_FS_GROUP, R_SUBPATH, R_RUN_ID,
	R_AGENT_ENV, R_REQUIRE_ISOLATION, R_AS_ROOT, R_TRACE_FILE,
};

const struct fg_opt rn_run_options[] = {
	{ R_WORKSPACE, "workspace", 0, "DIR", NULL, "the workspace (required unless --workspace-volume)" },
	{ R_VOLUME, "workspace-volume", 0, "NAME", NULL,
	  "docker/podman: the named volume NAME is /workspace; kubernetes: the PersistentVolumeClaim NAME (the runner reads the stream only)" },
	{ R_STEP, "step", 0, "NAME", NULL, "workflow step (required); cycles go to DIR/.forge/NAME/ unless --cycle-dir" },
	{ R_SKILL, "skill", 0, "NAME", NULL, "skill under review" },
	{ R_CYCLE_DIR, "cycle-dir", 0, "TEMPLATE", "FORGE_CYCLE_DIR", "cycle files' directory in the workspace (default .forge/{step}; also {task_key}, {skill})" },
	{ R_TASK_KEY, "task-key", 0, "KEY", NULL, "ticket key" },
	{ R_TASK_FILE, "task-file", 0, "FILE", NULL, "task JSON file" },
	{ R_RUN_ID, "run-id", 0, "ID", NULL, "the run's id (an orchestrator's own: [a-z0-9-], at most " FG_XSTR(RN_RUN_ID_MAX) "; default: 16 random hex digits); the audit's sample is decided from it" },
	{ R_ENGINE, "engine", 0, "ENGINE", "FORGE_ENGINE", "local (default), docker, podman or kubernetes" },
	{ R_ENGINE_CLI, "engine-cli", 0, "PATH", "FORGE_ENGINE_CLI", "the engine's CLI (default docker, podman, kubectl; oc for OpenShift)" },
	{ R_NAMESPACE, "namespace", 0, "NS", "FORGE_KUBE_NAMESPACE", "kubernetes: the namespace of the run's objects (default: the context's)" },
	{ R_KUBE_CONTEXT, "kube-context", 0, "NAME", "FORGE_KUBE_CONTEXT", "kubernetes: the kubeconfig context (default: the current one)" },
	{ R_START_TIMEOUT, "start-timeout", 0, "SEC", NULL, "kubernetes: how long the pod may stay unscheduled or unstarted (default 300; exit " FG_XSTR(FG_EXIT_RUNTIME) ")" },
	{ R_RUN_AS, "run-as", 0, "UID[:GID]", NULL, "kubernetes: the pod's runAsUser (and runAsGroup); default: the image's user" },
	{ R_FS_GROUP, "fs-group", 0, "GID", NULL, "kubernetes: the pod's fsGroup, a group that may write the workspace claim" },
	{ R_SUBPATH, "workspace-subpath", 0, "PATH", NULL, "kubernetes: mount only PATH of the --workspace-volume claim" },
	{ R_IMAGE, "image", 0, "IMAGE", "FORGE_IMAGE", "container image (docker, podman)" },
	{ R_SKILLS, "skills-dir", 0, "DIR", NULL, "skills directory (mounted read-only at /skills)" },
	{ R_ENTRYPOINT, "entrypoint", 0, "PATH", "FORGE_ENTRYPOINT_BIN", "forge-entrypoint binary (local)" },
	{ R_ENV, "env", 0, "NAME", NULL, "also pass NAME into the container (repeatable)" },
	{ R_AGENT_ENV, "agent-env", 0, "NAME", NULL,
	  "also pass NAME into the sandbox and on to the agents (worker, reviewers; never checks) beside their allow-listed environment (repeatable)" },
	{ R_MOUNT_LABEL, "mount-label", 0, "MODE", "FORGE_MOUNT_LABEL", "SELinux label of the bind mounts: auto (default: Z when SELinux is on), z, Z, none" },
	{ R_MEMORY, "memory", 0, "SIZE", "FORGE_MEMORY", "container memory limit (4g, 512m)" },
	{ R_CPUS, "cpus", 0, "N", "FORGE_CPUS", "container CPU limit (2, 0.5)" },
	{ R_PIDS, "pids-limit", 0, "N", "FORGE_PIDS_LIMIT", "container process limit (default 4096)" },
	{ R_NETWORK, "network", 0, "NAME", "FORGE_NETWORK", "container network (default: the engine's; none allowed)" },
	{ R_ENGINE_ARG, "engine-arg", 0, "ARG", NULL, "extra argument for the engine's run, before the image (repeatable)" },
	{ R_READ_ONLY, "read-only-rootfs", 0, NULL, "FORGE_READ_ONLY_ROOTFS", "read-only root filesystem with a tmpfs /tmp (containers)" },
	{ R_AS_ROOT, "as-root", 0, NULL, NULL, "docker/podman: run the sandbox as uid 0 (default: never; a runner started by root uses the workspace's owner, or " RN_SANDBOX_DEFAULT_IDS ")" },
	{ R_TIMEOUT, "timeout", 0, "SEC", NULL, "stop the run after SEC seconds (exit " FG_XSTR(FG_EXIT_TIMEOUT) ")" },
	{ R_POLL, "poll-interval", 0, "SEC", "AUTO_REVIEW_POLL_INTERVAL", "safety-net rescan period (default 5)" },
	{ R_NO_INOTIFY, "no-inotify", 0, NULL, NULL, "poll only (network filesystems)" },
	{ R_RECORD, "record", 0, "MODE", "AUTO_REVIEW_RECORD_POLLED_FILES", "log, copy or none (default)" },
	{ R_RECDIR, "recording-dir", 0, "DIR", "FORGE_REVIEW_RECORDING_DIR", "where copy keeps the files" },
	{ R_RESULT, "result", 0, "FILE", NULL, "write the result JSON here" },
	{ R_METRICS, "metrics-file", 0, "FILE", NULL, "merge Prometheus metrics into this textfile" },
	{ R_TRACE_FILE, "trace-file", 0, "FILE", NULL, "append the run's trace here as OTLP JSON lines (the Collector's otlpjsonfile)" },
	RN_OPT_LOG_FORMAT(R_LOG_FORMAT),
	{ R_LOG_FILE, "log-file", 0, "FILE", NULL, "append the log here (SIGHUP reopens)" },
	RN_OPT_LOG_LEVEL(R_LOG_LEVEL),
	{ R_QUIET, "quiet", 'q', NULL, NULL, "no closing line on stderr (it is printed at every log level)" },
	{ R_REQUIRE_REVIEW, "require-review", 0, NULL, "AUTO_REVIEW_REQUIRED",
	  "a skill without a review.md is an error (exit " FG_XSTR(FG_EXIT_USAGE) ") before any agent runs" },
	{ R_REQUIRE_ISOLATION, "require-isolation", 0, NULL, "FORGE_REQUIRE_ISOLATION",
	  "agents without a kernel sandbox (Landlock) are an error (exit " FG_XSTR(FG_EXIT_USAGE) ") before any agent runs" },
	{ R_HELP, "help", 'h', NULL, NULL, "show help" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

const char rn_run_needs[] =
	"\nEvery run needs the agents' commands in the environment (the entrypoint reads\n"
	"them; containers get them by name):\n"
	"  FORGE_WORKER_CMD      the worker agent's command (or FORGE_WORKER_AGENT=claude,\n"
	"                        codex or gemini)\n"
	"  FORGE_REVIEWER_CMD    the reviewer's, when the skill has a review.md (or\n"
	"                        FORGE_REVIEWER_AGENT)\n"
	"See forge-entrypoint --help for the placeholders and every other setting.\n";

/* Raw option values before validation; all borrowed. */
struct run_args {
	const char *workspace, *task_file, *skills_dir, *engine, *timeout, *poll, *record;
	const char *entrypoint, *mount_label, *read_only, *cycle_dir, *require_review, *require_isolation;
	const char *container_opt;   /* the first container-only option given, for the error */
	const char *kube_opt;        /* the first kubernetes-only option given */
	const char *start_timeout;
	struct rn_log_cfg log;
};

void rn_run_config_release(struct rn_run_config *c)
{
	FG_FREE_ALL(c->workspace, c->engine_host, c->task_file, c->skills_dir, c->entrypoint,
		    c->cycle_dir, c->step_owned);
	fg_strvec_release(&c->extra_env);
	fg_strvec_release(&c->engine_args);
}

void rn_run_sandbox_ids(const struct rn_run_config *c, uid_t *uid, gid_t *gid)
{
	struct stat st;

	*uid = getuid();
	*gid = getgid();
	if (*uid != 0 || c->as_root || !rn_engine_ops_of(c->engine)->cli)
		return;
	*uid = RN_SANDBOX_DEFAULT_UID;
	*gid = RN_SANDBOX_DEFAULT_UID;
	if (c->workspace && !c->workspace_volume && stat(c->workspace, &st) == 0 && st.st_uid != 0) {
		*uid = st.st_uid;
		*gid = st.st_gid;
	}
}

void rn_run_engine_params(const struct rn_run_config *c, const char *run_id,
			  struct rn_engine_params *ep)
{
	const struct rn_engine_ops *ops = rn_engine_ops_of(c->engine);

	memset(ep, 0, sizeof(*ep));
	ep->kind = c->engine;
	ep->program = !ops->cli ? c->entrypoint : c->engine_cli ? c->engine_cli : ops->cli;
	ep->image = c->image;
	ep->workspace = c->workspace;
	ep->workspace_volume = c->workspace_volume;
	ep->clear_stale = !c->workspace_local;
	ep->skills_dir = c->skills_dir;
	ep->step = c->step;
	ep->skill = c->skill;
	ep->task_key = c->task_key;
	ep->task_file = c->task_file;
	ep->run_id = run_id;
	ep->extra_env = (const char *const *)c->extra_env.v;
	ep->nextra_env = c->extra_env.n;
	rn_run_sandbox_ids(c, &ep->uid, &ep->gid);
	ep->runner_root = getuid() == 0;
	ep->environ = environ;
	ep->memory = c->memory;
	ep->cpus = c->cpus;
	ep->pids_limit = c->pids_limit;
	ep->network = c->network;
	ep->read_only_rootfs = c->read_only_rootfs;
	ep->mount_label = c->mount_label;
	ep->engine_args = (const char *const *)c->engine_args.v;
	ep->nengine_args = c->engine_args.n;
	ep->cycle_dir = c->cycle_dir_given ? c->cycle_dir : NULL;
	ep->kube_namespace = c->kube_namespace;
	ep->kube_context = c->kube_context;
	ep->workspace_subpath = c->workspace_subpath;
	ep->run_as = c->run_as;
	ep->fs_group = c->fs_group;
	ep->timeout = c->timeout;
	ep->start_timeout = c->start_timeout;
}

static const char *env_or_null(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* Checked while parsing, for every engine: a NAME=value here is a usage
 * error whose message does not repeat the value. */
static int take_env(struct rn_run_config *c, const char *v)
{
	char err[256];

	if (rn_engine_env_name_check(v, err, sizeof(err)))
		return rn_cmd_usage("run", "%s", err);
	fg_strvec_push(&c->extra_env, v);
	return 0;
}

/* --agent-env NAME: passed like --env NAME, and named to the entrypoint in
 * FORGE_AGENT_ENV (a FORGE_* variable: every engine passes it), which adds
 * it to the agents' allow-listed environment. */
static int take_agent_env(struct rn_run_config *c, const char *v)
{
	const char *had = getenv("FORGE_AGENT_ENV");
	char *all;
	int r = take_env(c, v);

	if (r)
		return r;
	all = had && *had ? fg_xasprintf("%s,%s", had, v) : fg_xstrdup(v);
	r = setenv("FORGE_AGENT_ENV", all, 1);
	free(all);
	return r ? rn_usage("cannot set FORGE_AGENT_ENV: %s", strerror(errno)) : 0;
}

/* The options that only the kubernetes engine honours. */
static int take_kube_opt(struct rn_run_config *c, struct run_args *a, int id, const char *v)
{
	switch (id) {
	case R_NAMESPACE: c->kube_namespace = v; break;
	case R_KUBE_CONTEXT: c->kube_context = v; break;
	case R_START_TIMEOUT: a->start_timeout = v; break;
	case R_RUN_AS: c->run_as = v; break;
	case R_FS_GROUP: c->fs_group = v; break;
	case R_SUBPATH: c->workspace_subpath = v; break;
	default: return 1;
	}
	for (const struct fg_opt *o = rn_run_options; !a->kube_opt && o->name; o++)
		if (o->id == id)
			a->kube_opt = o->name;
	return 0;
}

/* The options that only a container engine can honour. */
static int take_container_opt(struct rn_run_config *c, struct run_args *a, int id, const char *v)
{
	switch (id) {
	case R_MOUNT_LABEL: a->mount_label = v; break;
	case R_MEMORY: c->memory = v; break;
	case R_CPUS: c->cpus = v; break;
	case R_PIDS: c->pids_limit = v; break;
	case R_NETWORK: c->network = v; break;
	case R_ENGINE_ARG: fg_strvec_push(&c->engine_args, v); break;
	case R_READ_ONLY: a->read_only = "1"; break;
	case R_AS_ROOT: c->as_root = 1; break;
	default: return take_kube_opt(c, a, id, v);
	}
	for (const struct fg_opt *o = rn_run_options; !a->container_opt && o->name; o++)
		if (o->id == id)
			a->container_opt = o->name;
	return 0;
}

static int take_opt(struct rn_run_config *c, struct run_args *a, int id, const char *v)
{
	if (!take_container_opt(c, a, id, v))
		return 0;
	switch (id) {
	case R_WORKSPACE: a->workspace = v; break;
	case R_STEP: c->step = v; break;
	case R_CYCLE_DIR: a->cycle_dir = v; break;
	case R_SKILL: c->skill = v; break;
	case R_TASK_KEY: c->task_key = v; break;
	case R_TASK_FILE: a->task_file = v; break;
	case R_RUN_ID: c->run_id = v; break;
	case R_ENGINE: a->engine = v; break;
	case R_ENGINE_CLI: c->engine_cli = v; break;
	case R_IMAGE: c->image = v; break;
	case R_SKILLS: a->skills_dir = v; break;
	case R_ENTRYPOINT: a->entrypoint = v; break;
	case R_ENV: return take_env(c, v);
	case R_AGENT_ENV: return take_agent_env(c, v);
	case R_VOLUME: c->workspace_volume = v; break;
	case R_TIMEOUT: a->timeout = v; break;
	case R_POLL: a->poll = v; break;
	case R_NO_INOTIFY: c->no_inotify = 1; break;
	case R_RECORD: a->record = v; break;
	case R_RECDIR: c->recording_dir = v; break;
	case R_RESULT: c->result_path = v; break;
	case R_METRICS: c->metrics_file = v; break;
	case R_TRACE_FILE: c->trace_file = v; break;
	case R_LOG_FORMAT: a->log.format = v; break;
	case R_LOG_FILE: a->log.file = v; break;
	case R_LOG_LEVEL: a->log.level = v; break;
	case R_QUIET: c->quiet = 1; break;
	case R_REQUIRE_REVIEW: a->require_review = "1"; break;
	case R_REQUIRE_ISOLATION: a->require_isolation = "1"; break;
	case R_HELP: return -1;
	default: return rn_cmd_usage("run", "unexpected argument");
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct rn_run_config *c, struct run_args *a)
{
	struct fg_opts_iter it;
	int r;

	/* Environment twins first: the option wins. */
	a->engine = env_or_null("FORGE_ENGINE");
	c->image = env_or_null("FORGE_IMAGE");
	c->engine_cli = env_or_null("FORGE_ENGINE_CLI");
	c->kube_namespace = env_or_null("FORGE_KUBE_NAMESPACE");
	c->kube_context = env_or_null("FORGE_KUBE_CONTEXT");
	a->entrypoint = env_or_null("FORGE_ENTRYPOINT_BIN");
	a->poll = env_or_null("AUTO_REVIEW_POLL_INTERVAL");
	a->record = env_or_null("AUTO_REVIEW_RECORD_POLLED_FILES");
	c->recording_dir = env_or_null("FORGE_REVIEW_RECORDING_DIR");
	a->mount_label = env_or_null("FORGE_MOUNT_LABEL");
	c->memory = env_or_null("FORGE_MEMORY");
	c->cpus = env_or_null("FORGE_CPUS");
	c->pids_limit = env_or_null("FORGE_PIDS_LIMIT");
	c->network = env_or_null("FORGE_NETWORK");
	a->read_only = env_or_null("FORGE_READ_ONLY_ROOTFS");
	a->cycle_dir = env_or_null("FORGE_CYCLE_DIR");
	a->require_review = env_or_null("AUTO_REVIEW_REQUIRED");
	a->require_isolation = env_or_null("FORGE_REQUIRE_ISOLATION");
	fg_opts_init(&it, rn_run_options, argc, argv, 1);
	while (fg_opts_each(&it)) {
		if (it.id == FG_OPT_POSITIONAL)
			return rn_cmd_usage("run", "unexpected argument '%s'", it.value);
		r = take_opt(c, a, it.id, it.value);
		if (r)
			return r;
	}
	return fg_opts_failed(&it) ? rn_cmd_usage("run", "%s", it.err) : 0;
}

static int check_name(enum fg_name_kind kind, const char *v)
{
	char err[256];

	if (v && fg_name_check(kind, v, strlen(v), err, sizeof(err)))
		return rn_cmd_usage("run", "%s", err);
	return 0;
}

static int resolve_path(const char *what, const char *v, char **out)
{
	char buf[PATH_MAX];

	if (!v)
		return 0;
	if (!realpath(v, buf))
		return rn_cmd_usage("run", "%s '%s': %s", what, v, strerror(errno));
	*out = fg_xstrdup(buf);
	return 0;
}

static int validate_values(struct rn_run_config *c, const struct run_args *a)
{
	if (a->engine && rn_engine_parse(a->engine, &c->engine))
		return rn_cmd_usage("run", "invalid engine '%s' (local, docker, podman or kubernetes)", a->engine);
	if (a->timeout && fg_parse_double(a->timeout, 0.001, 1e9, &c->timeout))
		return rn_cmd_usage("run", "invalid --timeout '%s'", a->timeout);
	if (a->poll && rn_parse_interval(a->poll, &c->poll_interval))
		return rn_cmd_usage("run", "invalid poll interval '%s' (seconds, 0.001 to 86400)", a->poll);
	if (a->record && rn_record_mode_parse(a->record, &c->record))
		return rn_cmd_usage("run", "invalid record mode '%s' (log, copy or none)", a->record);
	if (a->require_review && fg_parse_bool(a->require_review, &c->require_review))
		return rn_cmd_usage("run", "invalid AUTO_REVIEW_REQUIRED '%s' (1 or 0)", a->require_review);
	if (a->require_isolation && fg_parse_bool(a->require_isolation, &c->require_isolation))
		return rn_cmd_usage("run", "invalid FORGE_REQUIRE_ISOLATION '%s' (1 or 0)", a->require_isolation);
	/* The entrypoint checks it, inside the sandbox: it gets the variable. */
	if (c->require_isolation && setenv("FORGE_REQUIRE_ISOLATION", "1", 1))
		return rn_cmd_usage("run", "cannot set FORGE_REQUIRE_ISOLATION: %s", strerror(errno));
	/* The reference design silently downgraded copy to log; here it is an error. */
	if (c->record == RN_RECORD_COPY && !c->recording_dir)
		return rn_cmd_usage("run", "record mode 'copy' needs --recording-dir or FORGE_REVIEW_RECORDING_DIR");
	return 0;
}

/* The workspace and the skills directory are directories: found out here,
 * not after the step directory was cleared. */
static int check_dirs(const struct rn_run_config *c)
{
	struct stat st;

	if (c->workspace && stat(c->workspace, &st) == 0 && !S_ISDIR(st.st_mode))
		return rn_cmd_usage("run", "workspace '%s' is not a directory", c->workspace);
	if (c->skills_dir && stat(c->skills_dir, &st) == 0 && !S_ISDIR(st.st_mode))
		return rn_cmd_usage("run", "skills dir '%s' is not a directory", c->skills_dir);
	return 0;
}

/* 1 when prog (a path with '/', else a name looked up in PATH as execvp
 * does) names an executable file. */
static int runnable(const char *prog)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	for (const char *p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; ; ) {
		size_t n = strcspn(p, ":");
		char *cand = fg_xasprintf("%.*s/%s", (int)n, n ? p : ".", prog);
		int ok = access(cand, X_OK) == 0;

		free(cand);
		if (ok)
			return 1;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

/* Everything the engine needs (an image for a container, paths a bind
 * mount can express, --env names, the program itself) is checked by building its command line
 * once, with a placeholder run id, before the step directory is touched:
 * a configuration error exits 2 and leaves the previous run's files. */
static int check_engine(const struct rn_run_config *c)
{
	struct rn_engine_params ep;
	struct fg_strvec argv, env;
	char err[512] = "";
	int r;

	fg_strvec_init(&argv);
	fg_strvec_init(&env);
	rn_run_engine_params(c, "0000000000000000", &ep);
	r = rn_engine_build(&ep, &argv, &env, err, sizeof(err));
	if (!r && !runnable(argv.v[0]))
		snprintf(err, sizeof(err), "%s '%s' %s", ep.kind == RN_ENGINE_LOCAL ? "entrypoint" : "engine CLI",
			 argv.v[0], strchr(argv.v[0], '/') ? "is not an executable file"
							   : "is not found in PATH");
	fg_strvec_release(&argv);
	fg_strvec_release(&env);
	return r || err[0] ? rn_cmd_usage("run", "%s", err) : 0;
}

/* Container limits: each value checked; given as an option to the local
 * engine they are an error (a limit silently not applied is worse), while
 * their environment twins are then ignored (a shared environment may well
 * set them for the container runs). */
static int validate_container(struct rn_run_config *c, const struct run_args *a)
{
	char err[256];
	enum rn_mount_label label = RN_MOUNT_LABEL_AUTO;
	int ro = 0;

	if (!rn_engine_ops_of(c->engine)->cli && a->container_opt)
		return rn_cmd_usage("run", "option '--%s' applies to the docker and podman engines only",
				a->container_opt);
	if (a->mount_label && rn_mount_label_parse(a->mount_label, &label))
		return rn_cmd_usage("run", "invalid mount label '%s' (auto, z, Z or none)", a->mount_label);
	if (a->read_only && fg_parse_bool(a->read_only, &ro))
		return rn_cmd_usage("run", "invalid FORGE_READ_ONLY_ROOTFS '%s' (1 or 0)", a->read_only);
	if ((c->memory && rn_engine_memory_check(c->memory, err, sizeof(err))) ||
	    (c->cpus && rn_engine_cpus_check(c->cpus, err, sizeof(err))) ||
	    (c->pids_limit && rn_engine_pids_check(c->pids_limit, err, sizeof(err))) ||
	    (c->network && rn_engine_network_check(c->network, err, sizeof(err))))
		return rn_cmd_usage("run", "%s", err);
	c->read_only_rootfs = ro;
	c->mount_label = rn_mount_label_option(label, label == RN_MOUNT_LABEL_AUTO && rn_selinux_enabled());
	return 0;
}

/* The kubernetes-only options, and the kubernetes engine's CLI. */
static int validate_kube(struct rn_run_config *c, const struct run_args *a)
{
	c->start_timeout = RN_KUBE_START_TIMEOUT;
	if (c->engine != RN_ENGINE_KUBERNETES) {
		if (a->kube_opt)
			return rn_cmd_usage("run", "option '--%s' applies to the kubernetes engine only", a->kube_opt);
		return 0;
	}
	if (a->start_timeout && fg_parse_double(a->start_timeout, 1, 86400, &c->start_timeout))
		return rn_cmd_usage("run", "invalid --start-timeout '%s' (seconds, 1 to 86400)", a->start_timeout);
	if (!runnable(c->engine_cli ? c->engine_cli : "kubectl"))
		return rn_cmd_usage("run", "engine CLI '%s' is not found in PATH (or not executable): install "
				"kubectl, or name it with --engine-cli", c->engine_cli ? c->engine_cli : "kubectl");
	return 0;
}

static int check_volume(struct rn_run_config *c)
{
	char err[256];

	if (!c->workspace_volume)
		return 0;
	if (c->engine == RN_ENGINE_LOCAL)
		return rn_cmd_usage("run", "--workspace-volume needs a container engine (docker, podman or kubernetes)");
	if (rn_engine_volume_check(c->workspace_volume, err, sizeof(err)))
		return rn_cmd_usage("run", "%s", err);
	return 0;
}

/* Whether the runner can see the workspace (engine.h: workspace_local),
 * and the workspace path: resolved on this host, or as given (absolute)
 * when it names a path on a remote engine's host. */
static int locate(struct rn_run_config *c, const struct run_args *a)
{
	const struct rn_engine_ops *ops = rn_engine_ops_of(c->engine);
	struct rn_engine_params p = {
		.kind = c->engine, .workspace = a->workspace, .workspace_volume = c->workspace_volume,
		.environ = environ,
	};

	free(c->engine_host);
	c->engine_host = rn_engine_remote_host(&p);
	c->workspace_local = ops->workspace_local(&p);
	if (!a->workspace)
		return 0;
	if (!c->engine_host)
		return resolve_path("workspace", a->workspace, &c->workspace);
	if (a->workspace[0] != '/')
		return rn_cmd_usage("run", "workspace '%s' must be an absolute path on the engine's host %s",
				a->workspace, c->engine_host);
	c->workspace = fg_xstrdup(a->workspace);
	return 0;
}

static int expand_cycle_dir(struct rn_run_config *c, const char *tmpl);
char *rn_run_derived_skill(const struct rn_run_config *c);

/* What the host can tell before anything runs (hostcheck.h), with the
 * skill and task key the entrypoint will use. */
static int host_checks(const struct rn_run_config *c)
{
	char *skill = rn_run_derived_skill(c), *key = rn_run_derived_task_key(c), err[8192];
	int r = rn_hostcheck(c, skill, key, err, sizeof(err));

	free(skill);
	free(key);
	return r ? rn_cmd_usage("run", "%s", err) : 0;
}

/* The task file's field key when it is a valid name of that kind (owned),
 * else NULL. Bounded read: the file was only checked to exist. */
static char *task_file_name(const char *path, const char *key, enum fg_name_kind kind)
{
	struct fg_buf b;
	cJSON *o = NULL;
	const cJSON *v;
	char *name = NULL;

	fg_buf_init(&b, RN_TASK_FILE_MAX);
	if (path && !fg_read_file_at(AT_FDCWD, path, RN_TASK_FILE_MAX, FG_READ_FOLLOW, &b, NULL))
		o = fg_json_parse_exact(fg_buf_str(&b), b.len);
	v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	if (cJSON_IsString(v) && !fg_name_check(kind, v->valuestring, strlen(v->valuestring), NULL, 0))
		name = fg_xstrdup(v->valuestring);
	cJSON_Delete(o);
	fg_buf_release(&b);
	return name;
}

/* The skill the entrypoint will review, derived as it does (owned): --skill,
 * else FORGE_SKILL_NAME, else the task file's skill_name, else the step with
 * '_' turned into '-'. For run_start, which said skill="" when derived. */
char *rn_run_derived_skill(const struct rn_run_config *c)
{
	const char *env = env_or_null("FORGE_SKILL_NAME");
	char *skill;

	if (c->skill)
		return fg_xstrdup(c->skill);
	if (env && !fg_name_check(FG_NAME_SKILL, env, strlen(env), NULL, 0))
		return fg_xstrdup(env);
	skill = task_file_name(c->task_file, "skill_name", FG_NAME_SKILL);
	if (skill)
		return skill;
	skill = fg_xstrdup(c->step);
	for (char *p = skill; *p; p++)
		*p = *p == '_' ? '-' : *p;
	return skill;
}

/* The task key the entrypoint will use, derived as it does (owned, NULL
 * for none): --task-key, else FORGE_TASK_KEY, else the task file's. */
char *rn_run_derived_task_key(const struct rn_run_config *c)
{
	const char *env = env_or_null("FORGE_TASK_KEY");

	if (c->task_key)
		return fg_xstrdup(c->task_key);
	if (env && !fg_name_check(FG_NAME_TASK_KEY, env, strlen(env), NULL, 0))
		return fg_xstrdup(env);
	return task_file_name(c->task_file, "task_key", FG_NAME_TASK_KEY);
}

/* The cycle directory from the template (tmpl NULL: the default), with the
 * names the entrypoint will use; the entrypoint gets the result itself as
 * FORGE_CYCLE_DIR, so both sides agree. */
static int expand_cycle_dir(struct rn_run_config *c, const char *tmpl)
{
	char *skill = rn_run_derived_skill(c), *key = rn_run_derived_task_key(c), err[512];
	const struct fg_cycle_dir_vars v = { c->step, key, skill };
	int r = fg_cycle_dir(tmpl, &v, &c->cycle_dir, err, sizeof(err));

	free(skill);
	free(key);
	c->cycle_dir_given = tmpl != NULL;
	return r ? rn_cmd_usage("run", "%s", err) : 0;
}

/* --run-id: it names the run's objects (a kubernetes Job, label values,
 * "forge-ID-skills"), so lower-case letters, digits and inner '-' only. */
static int check_run_id(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	if (!id)
		return 0;
	if (n == 0 || n > RN_RUN_ID_MAX || id[0] == '-' || id[n - 1] == '-' ||
	    strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789-") != n)
		return rn_cmd_usage("run", "invalid --run-id '%.*s': 1 to %d lower-case letters, digits and inner '-'",
				(int)(n > 64 ? 64 : n), id, RN_RUN_ID_MAX);
	return 0;
}

static char *task_file_name(const char *path, const char *key, enum fg_name_kind kind);

static int validate(struct rn_run_config *c, const struct run_args *a)
{
	int r;

	if (!a->workspace == !c->workspace_volume)
		return rn_cmd_usage("run", a->workspace ? "--workspace and --workspace-volume exclude each other"
				: "run needs --workspace (or --workspace-volume)");
	/* The task file names its step, as the entrypoint reads it. */
	if (!c->step && a->task_file) {
		c->step_owned = task_file_name(a->task_file, "step_name", FG_NAME_STEP);
		c->step = c->step_owned;
	}
	if (!c->step)
		return rn_cmd_usage("run", "run needs --step (or a --task-file whose step_name names it)");
	r = check_name(FG_NAME_STEP, c->step);
	if (!r)
		r = check_name(FG_NAME_SKILL, c->skill);
	if (!r)
		r = check_name(FG_NAME_TASK_KEY, c->task_key);
	if (!r)
		r = check_run_id(c->run_id);
	if (!r)
		r = validate_values(c, a);
	if (!r)
		r = validate_container(c, a);
	if (!r)
		r = validate_kube(c, a);
	if (!r)
		r = check_volume(c);
	if (!r)
		r = locate(c, a);
	if (!r)
		r = resolve_path("task file", a->task_file, &c->task_file);
	if (!r)
		r = resolve_path("skills dir", a->skills_dir, &c->skills_dir);
	if (!r)
		r = check_dirs(c);
	if (!r)
		r = expand_cycle_dir(c, a->cycle_dir);
	if (r)
		return r;
	c->entrypoint = rn_engine_find_entrypoint(a->entrypoint);
	r = check_engine(c);
	return r ? r : host_checks(c);
}

int rn_run_config_load(struct rn_run_config *c, int argc, char **argv, struct rn_log_cfg *log)
{
	struct run_args a = { 0 };
	int r;

	c->poll_interval = RN_DEFAULT_POLL_INTERVAL;
	fg_strvec_init(&c->extra_env);
	fg_strvec_init(&c->engine_args);
	r = parse_args(argc, argv, c, &a);
	if (!r)
		r = validate(c, &a);
	*log = a.log;
	return r;
}
