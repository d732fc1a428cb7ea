/*
 * cmd_run.c - `forge-runner run`: options, preparation, the session, the result
 * file and the metrics (see run.h for the protocol).
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
#include "session.h"
#include "forge/alloc.h"
#include "forge/exit.h"
#include "forge/cycle.h"
#include "forge/fsutil.h"
#include "forge/names.h"
#include "forge/num.h"
#include "forge/summary.h"
#include "forge/text.h"
#include "watch.h"

extern char **environ;

/* The entrypoint reads task files up to 1 MiB; so does the skill lookup. */
#define RN_TASK_FILE_MAX (1024 * 1024)

enum {
	R_WORKSPACE = 1, R_STEP, R_SKILL, R_TASK_KEY, R_TASK_FILE, R_ENGINE, R_IMAGE, R_SKILLS,
	R_TIMEOUT, R_POLL, R_NO_INOTIFY, R_RECORD, R_RECDIR, R_RESULT, R_METRICS, R_LOG_FORMAT,
	R_LOG_FILE, R_LOG_LEVEL, R_ENTRYPOINT, R_ENV, R_MOUNT_LABEL, R_MEMORY, R_CPUS, R_PIDS,
	R_NETWORK, R_ENGINE_ARG, R_READ_ONLY, R_VOLUME, R_CYCLE_DIR, R_QUIET, R_REQUIRE_REVIEW, R_HELP,
};

const struct fg_opt rn_run_options[] = {
	{ R_WORKSPACE, "workspace", 0, "DIR", NULL, "the workspace (required unless --workspace-volume)" },
	{ R_VOLUME, "workspace-volume", 0, "NAME", NULL,
	  "docker/podman: the named volume NAME is /workspace (the runner reads the stream only)" },
	{ R_STEP, "step", 0, "NAME", NULL, "workflow step (required); cycles go to DIR/.forge/NAME/ unless --cycle-dir" },
	{ R_SKILL, "skill", 0, "NAME", NULL, "skill under review" },
	{ R_CYCLE_DIR, "cycle-dir", 0, "TEMPLATE", "FORGE_CYCLE_DIR", "cycle files' directory in the workspace (default .forge/{step}; also {task_key}, {skill})" },
	{ R_TASK_KEY, "task-key", 0, "KEY", NULL, "ticket key" },
	{ R_TASK_FILE, "task-file", 0, "FILE", NULL, "task JSON file" },
	{ R_ENGINE, "engine", 0, "ENGINE", "FORGE_ENGINE", "local (default), docker or podman" },
	{ R_IMAGE, "image", 0, "IMAGE", "FORGE_IMAGE", "container image (docker, podman)" },
	{ R_SKILLS, "skills-dir", 0, "DIR", NULL, "skills directory (mounted read-only at /skills)" },
	{ R_ENTRYPOINT, "entrypoint", 0, "PATH", "FORGE_ENTRYPOINT_BIN", "forge-entrypoint binary (local)" },
	{ R_ENV, "env", 0, "NAME", NULL, "also pass NAME into the container (repeatable)" },
	{ R_MOUNT_LABEL, "mount-label", 0, "MODE", "FORGE_MOUNT_LABEL", "SELinux label of the bind mounts: auto (default: Z when SELinux is on), z, Z, none" },
	{ R_MEMORY, "memory", 0, "SIZE", "FORGE_MEMORY", "container memory limit (4g, 512m)" },
	{ R_CPUS, "cpus", 0, "N", "FORGE_CPUS", "container CPU limit (2, 0.5)" },
	{ R_PIDS, "pids-limit", 0, "N", "FORGE_PIDS_LIMIT", "container process limit (default 4096)" },
	{ R_NETWORK, "network", 0, "NAME", "FORGE_NETWORK", "container network (default: the engine's; none allowed)" },
	{ R_ENGINE_ARG, "engine-arg", 0, "ARG", NULL, "extra argument for the engine's run, before the image (repeatable)" },
	{ R_READ_ONLY, "read-only-rootfs", 0, NULL, "FORGE_READ_ONLY_ROOTFS", "read-only root filesystem with a tmpfs /tmp (containers)" },
	{ R_TIMEOUT, "timeout", 0, "SEC", NULL, "stop the run after SEC seconds (exit " FG_XSTR(FG_EXIT_TIMEOUT) ")" },
	{ R_POLL, "poll-interval", 0, "SEC", "AUTO_REVIEW_POLL_INTERVAL", "safety-net rescan period (default 5)" },
	{ R_NO_INOTIFY, "no-inotify", 0, NULL, NULL, "poll only (network filesystems)" },
	{ R_RECORD, "record", 0, "MODE", "AUTO_REVIEW_RECORD_POLLED_FILES", "log, copy or none (default)" },
	{ R_RECDIR, "recording-dir", 0, "DIR", "FORGE_REVIEW_RECORDING_DIR", "where copy keeps the files" },
	{ R_RESULT, "result", 0, "FILE", NULL, "write the result JSON here" },
	{ R_METRICS, "metrics-file", 0, "FILE", NULL, "merge Prometheus metrics into this textfile" },
	{ R_LOG_FORMAT, "log-format", 0, "FMT", NULL, "text (default) or json" },
	{ R_LOG_FILE, "log-file", 0, "FILE", NULL, "append the log here (SIGHUP reopens)" },
	{ R_LOG_LEVEL, "log-level", 0, "LEVEL", "FORGE_LOG_LEVEL", "debug, info (default), warn, error" },
	{ R_QUIET, "quiet", 'q', NULL, NULL, "no closing line on stderr (it is printed at every log level)" },
	{ R_REQUIRE_REVIEW, "require-review", 0, NULL, "AUTO_REVIEW_REQUIRED",
	  "a skill without a review.md is an error (exit " FG_XSTR(FG_EXIT_USAGE) ") before any agent runs" },
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
	const char *entrypoint, *mount_label, *read_only, *cycle_dir, *require_review;
	const char *container_opt;   /* the first container-only option given, for the error */
	struct rn_log_cfg log;
};

void rn_run_config_release(struct rn_run_config *c)
{
	free(c->workspace);
	free(c->task_file);
	free(c->skills_dir);
	free(c->entrypoint);
	fg_strvec_release(&c->extra_env);
	fg_strvec_release(&c->engine_args);
	free(c->cycle_dir);
}

void rn_run_engine_params(const struct rn_run_config *c, const char *run_id,
			  struct rn_engine_params *ep)
{
	const struct rn_engine_ops *ops = rn_engine_ops_of(c->engine);

	memset(ep, 0, sizeof(*ep));
	ep->kind = c->engine;
	ep->program = ops->cli ? ops->cli : c->entrypoint;
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
	ep->uid = getuid();
	ep->gid = getgid();
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
		return rn_usage("%s", err);
	fg_strvec_push(&c->extra_env, v);
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
	default: return 1;
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
	case R_ENGINE: a->engine = v; break;
	case R_IMAGE: c->image = v; break;
	case R_SKILLS: a->skills_dir = v; break;
	case R_ENTRYPOINT: a->entrypoint = v; break;
	case R_ENV: return take_env(c, v);
	case R_VOLUME: c->workspace_volume = v; break;
	case R_TIMEOUT: a->timeout = v; break;
	case R_POLL: a->poll = v; break;
	case R_NO_INOTIFY: c->no_inotify = 1; break;
	case R_RECORD: a->record = v; break;
	case R_RECDIR: c->recording_dir = v; break;
	case R_RESULT: c->result_path = v; break;
	case R_METRICS: c->metrics_file = v; break;
	case R_LOG_FORMAT: a->log.format = v; break;
	case R_LOG_FILE: a->log.file = v; break;
	case R_LOG_LEVEL: a->log.level = v; break;
	case R_QUIET: c->quiet = 1; break;
	case R_REQUIRE_REVIEW: a->require_review = "1"; break;
	case R_HELP: return -1;
	default: return rn_usage("unexpected argument");
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct rn_run_config *c, struct run_args *a)
{
	struct fg_opts_iter it;
	const char *v;
	char err[256];
	int id, r;

	/* Environment twins first: the option wins. */
	a->engine = env_or_null("FORGE_ENGINE");
	c->image = env_or_null("FORGE_IMAGE");
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
	fg_opts_init(&it, rn_run_options, argc, argv, 1);
	while (fg_opts_each(&it, &id, &v, err, sizeof(err))) {
		if (id == FG_OPT_POSITIONAL)
			return rn_usage("unexpected argument '%s'", v);
		r = take_opt(c, a, id, v);
		if (r)
			return r;
	}
	return fg_opts_failed(&it) ? rn_usage("%s", err) : 0;
}

static int check_name(enum fg_name_kind kind, const char *v)
{
	char err[256];

	if (v && fg_name_check(kind, v, strlen(v), err, sizeof(err)))
		return rn_usage("%s", err);
	return 0;
}

static int resolve_path(const char *what, const char *v, char **out)
{
	char buf[PATH_MAX];

	if (!v)
		return 0;
	if (!realpath(v, buf))
		return rn_usage("%s '%s': %s", what, v, strerror(errno));
	*out = fg_xstrdup(buf);
	return 0;
}

static int validate_values(struct rn_run_config *c, const struct run_args *a)
{
	if (a->engine && rn_engine_parse(a->engine, &c->engine))
		return rn_usage("invalid engine '%s' (local, docker or podman)", a->engine);
	if (a->timeout && fg_parse_double(a->timeout, 0.001, 1e9, &c->timeout))
		return rn_usage("invalid --timeout '%s'", a->timeout);
	if (a->poll && rn_parse_interval(a->poll, &c->poll_interval))
		return rn_usage("invalid poll interval '%s' (seconds, 0.001 to 86400)", a->poll);
	if (a->record && rn_record_mode_parse(a->record, &c->record))
		return rn_usage("invalid record mode '%s' (log, copy or none)", a->record);
	if (a->require_review && fg_parse_bool(a->require_review, &c->require_review))
		return rn_usage("invalid AUTO_REVIEW_REQUIRED '%s' (1 or 0)", a->require_review);
	/* The reference design silently downgraded copy to log; here it is an error. */
	if (c->record == RN_RECORD_COPY && !c->recording_dir)
		return rn_usage("record mode 'copy' needs --recording-dir or FORGE_REVIEW_RECORDING_DIR");
	return 0;
}

/* The workspace and the skills directory are directories: found out here,
 * not after the step directory was cleared. */
static int check_dirs(const struct rn_run_config *c)
{
	struct stat st;

	if (c->workspace && stat(c->workspace, &st) == 0 && !S_ISDIR(st.st_mode))
		return rn_usage("workspace '%s' is not a directory", c->workspace);
	if (c->skills_dir && stat(c->skills_dir, &st) == 0 && !S_ISDIR(st.st_mode))
		return rn_usage("skills dir '%s' is not a directory", c->skills_dir);
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
	return r || err[0] ? rn_usage("%s", err) : 0;
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
		return rn_usage("option '--%s' applies to the docker and podman engines only",
				a->container_opt);
	if (a->mount_label && rn_mount_label_parse(a->mount_label, &label))
		return rn_usage("invalid mount label '%s' (auto, z, Z or none)", a->mount_label);
	if (a->read_only && fg_parse_bool(a->read_only, &ro))
		return rn_usage("invalid FORGE_READ_ONLY_ROOTFS '%s' (1 or 0)", a->read_only);
	if ((c->memory && rn_engine_memory_check(c->memory, err, sizeof(err))) ||
	    (c->cpus && rn_engine_cpus_check(c->cpus, err, sizeof(err))) ||
	    (c->pids_limit && rn_engine_pids_check(c->pids_limit, err, sizeof(err))) ||
	    (c->network && rn_engine_network_check(c->network, err, sizeof(err))))
		return rn_usage("%s", err);
	c->read_only_rootfs = ro;
	c->mount_label = rn_mount_label_option(label, label == RN_MOUNT_LABEL_AUTO && rn_selinux_enabled());
	return 0;
}

static int check_volume(struct rn_run_config *c)
{
	char err[256];

	if (!c->workspace_volume)
		return 0;
	if (c->engine == RN_ENGINE_LOCAL)
		return rn_usage("--workspace-volume needs a container engine (docker or podman)");
	if (rn_engine_volume_check(c->workspace_volume, err, sizeof(err)))
		return rn_usage("%s", err);
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

	c->engine_host = rn_engine_remote_host(&p);
	c->workspace_local = ops->workspace_local(&p);
	if (!a->workspace)
		return 0;
	if (!c->engine_host)
		return resolve_path("workspace", a->workspace, &c->workspace);
	if (a->workspace[0] != '/')
		return rn_usage("workspace '%s' must be an absolute path on the engine's host %s",
				a->workspace, c->engine_host);
	c->workspace = fg_xstrdup(a->workspace);
	return 0;
}

static int expand_cycle_dir(struct rn_run_config *c, const char *tmpl);
static char *derived_skill(const struct rn_run_config *c);
static char *derived_task_key(const struct rn_run_config *c);

/* What the host can tell before anything runs (hostcheck.h), with the
 * skill and task key the entrypoint will use. */
static int host_checks(const struct rn_run_config *c)
{
	char *skill = derived_skill(c), *key = derived_task_key(c), err[8192];
	int r = rn_hostcheck(c, skill, key, err, sizeof(err));

	free(skill);
	free(key);
	return r ? rn_usage("%s", err) : 0;
}

static int validate(struct rn_run_config *c, const struct run_args *a)
{
	int r;

	if (!a->workspace == !c->workspace_volume)
		return rn_usage(a->workspace ? "--workspace and --workspace-volume exclude each other"
				: "run needs --workspace (or --workspace-volume)");
	if (!c->step)
		return rn_usage("run needs --step");
	r = check_name(FG_NAME_STEP, c->step);
	if (!r)
		r = check_name(FG_NAME_SKILL, c->skill);
	if (!r)
		r = check_name(FG_NAME_TASK_KEY, c->task_key);
	if (!r)
		r = validate_values(c, a);
	if (!r)
		r = validate_container(c, a);
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

/* ---- after the session ---- */

static const char *outcome(const struct rn_session_result *sr, enum fg_review_state state)
{
	if (sr->failed)
		return "error";
	if (sr->timed_out)
		return "timeout";
	if ((state == FG_STATE_NO_REVIEW || state == FG_STATE_DISABLED) && sr->exit_code != 0)
		return "failed";
	return fg_review_state_name(state);
}

/* Reads the entrypoint's summary through the workspace descriptor, one
 * component at a time without following symlinks, like every other access
 * to the step directory: a sandbox that swapped .forge for a link must not
 * feed the result a summary from outside the workspace. */
static void load_summary(int wsfd, const char *rel, const char *run_id, struct fg_summary *sum,
			 int *have)
{
	char err[256];
	int dfd = wsfd < 0 ? -1 : fg_open_beneath(wsfd, rel, 0, NULL, 0);
	int r = dfd < 0 ? -ENOENT : fg_summary_read_at(dfd, sum, err, sizeof(err));

	*have = 0;
	if (dfd >= 0)
		close(dfd);
	if (r)
		return;
	/* A summary of another run (a stale or foreign writer) says nothing about ours. */
	*have = !sum->run_id || !*sum->run_id || !strcmp(sum->run_id, run_id);
}

struct run_state {
	struct rn_run_config *cfg;
	struct rn_log *log;
	const char *run_id;
	char *step_dir;         /* owned: workspace + step_rel, for messages */
	char *step_rel;         /* owned: fg_cycle_dir() */
	int wsfd;               /* the workspace, opened once; -1 when it could not be */
	/* owned: the run's one skill, decided before the run (derived_skill()):
	 * the result's skill and every metric label. Never taken from a cycle
	 * file, whose skill the sandbox chooses. */
	char *skill;
	struct rn_cycles cycles;
	struct rn_metrics metrics;
	struct rn_session_result sr;
	long stale;
	uint64_t t0;
};

static void write_result(struct run_state *st, enum fg_review_state state, bool exhausted,
			 const struct fg_summary *sum, const struct fg_usage_pair *usage)
{
	struct rn_result res = {
		.exit_code = st->sr.exit_code, .error_message = st->sr.error_message,
		.step = st->cfg->step, .skill = st->skill, .task_key = st->cfg->task_key,
		.run_id = st->run_id, .engine = rn_engine_name(st->cfg->engine),
		.duration_seconds = fg_seconds_since(st->t0), .cycles = &st->cycles,
		.review_exhausted = exhausted, .review_state = state,
		.stale_files_cleared = st->stale, .sweep_caught = st->sr.sweep_caught,
		.cycles_by_source = st->sr.cycles_by_source, .usage = usage,
		.questions = sum ? sum->questions : NULL, .nquestions = sum ? sum->nquestions : 0,
	};
	int r;

	if (!st->cfg->result_path)
		return;
	r = rn_result_write(st->cfg->result_path, &res);
	if (r) {
		rn_log(st->log, RN_LOG_ERROR, "result_error", RN_LS("file", st->cfg->result_path),
		       RN_LS("error", strerror(-r)));
		st->sr.exit_code = FG_EXIT_RUNTIME;
	}
}

static void write_metrics(struct run_state *st, enum fg_review_state state, bool exhausted,
			  const struct fg_usage_pair *usage)
{
	const char *skill = st->skill;
	char err[256] = "";
	int r;

	skill = skill ? skill : "";
	if (exhausted)
		rn_metrics_add_exhausted(&st->metrics, skill, st->cfg->step);
	if (st->sr.sweep_caught > 0)
		rn_metrics_add_sweep_caught(&st->metrics, skill, st->cfg->step,
					    (unsigned)st->sr.sweep_caught);
	rn_metrics_add_run(&st->metrics, st->cfg->step, outcome(&st->sr, state));
	rn_metrics_add_usage(&st->metrics, skill, st->cfg->step, "worker", &usage->worker);
	rn_metrics_add_usage(&st->metrics, skill, st->cfg->step, "reviewer", &usage->reviewer);
	if (!st->cfg->metrics_file)
		return;
	r = rn_metrics_merge_file(&st->metrics, st->cfg->metrics_file, err, sizeof(err));
	if (r)
		rn_log(st->log, RN_LOG_ERROR, "metrics_error", RN_LS("file", st->cfg->metrics_file),
		       RN_LS("error", err[0] ? err : strerror(-r)));
}

/* run_exit's reason when the run failed (owned, or NULL): the entrypoint's
 * last error line, else the whole error message ("timed out after 5s",
 * "docker exited with code 125; last output:\n..."): the log escapes its
 * line breaks, so the output after "last output:" is not lost. */
static char *exit_reason(const struct rn_session_result *sr)
{
	const char *m = sr->error_message;

	if (!sr->exit_code)
		return NULL;
	if (sr->reason)
		return fg_xstrdup(sr->reason);
	return m ? fg_xstrdup(m) : NULL;
}

/* The closing line (closing.h), once the exit code is final. */
static void close_run(struct run_state *st, enum fg_review_state state, const struct fg_summary *s,
		      const struct fg_usage_pair *usage)
{
	struct rn_closing c = {
		.step = st->cfg->step, .outcome = outcome(&st->sr, state), .cycles = st->cycles.n,
		.max_cycles = s ? s->max_cycles : 0, .seconds = fg_seconds_since(st->t0),
		.exit_code = st->sr.exit_code, .result_path = st->cfg->result_path,
	};
	char *reason = exit_reason(&st->sr);

	if (!c.max_cycles && st->cycles.n)
		c.max_cycles = st->cycles.v[st->cycles.n - 1].c.max_cycles;
	c.have_cost = fg_usage_pair_cost(usage, &c.cost_usd);
	c.reason = reason;
	if (!st->cfg->quiet)
		rn_closing_print(st->log, &c);
	free(reason);
}

static void conclude(struct run_state *st)
{
	struct fg_summary sum;
	const struct fg_summary *s;
	struct fg_usage_pair usage;
	char *reason, cost[32];
	double usd;
	int have_sum;
	enum fg_review_state state;
	bool exhausted;

	fg_summary_init(&sum);
	load_summary(st->wsfd, st->step_rel, st->run_id, &sum, &have_sum);
	/* The file when it can be read, else the summary frame (the stream
	 * checked its run id): it stands in for the file on a run whose
	 * workspace the runner cannot see. */
	s = have_sum ? &sum : st->sr.stream_summary;
	state = rn_review_state(&st->cycles, s);
	/* No sweep on a run the runner cannot see: the summary frame says how
	 * many cycles ran, so frames lost on the way are at least noticed. */
	if (!st->cfg->workspace_local && s && (size_t)s->cycles > st->cycles.n)
		rn_log(st->log, RN_LOG_WARN, "cycle_unseen", RN_LS("step", st->cfg->step),
		       RN_LI("summary_cycles", s->cycles), RN_LI("reported", (long long)st->cycles.n));
	/* The summary has the step's totals (the worker's first run included);
	 * without one the cycles' usage is what is known. */
	if (s)
		usage = s->usage;
	else
		rn_cycles_usage(&st->cycles, &usage);
	if (fg_usage_pair_cost(&usage, &usd))
		snprintf(cost, sizeof(cost), "%.6f", usd);
	exhausted = rn_review_exhausted(state, &st->cycles);
	/* A run the runner cannot see is never swept: no sweep event then. */
	if (st->cfg->workspace_local)
		rn_log(st->log, RN_LOG_INFO, "sweep", RN_LI("sweep_caught", st->sr.sweep_caught));
	reason = exit_reason(&st->sr);
	rn_log(st->log, st->sr.exit_code ? RN_LOG_WARN : RN_LOG_INFO, "run_exit",
	       RN_LS("step", st->cfg->step), RN_LS("run_id", st->run_id),
	       RN_LI("exit_code", st->sr.exit_code), RN_LS("review_state", fg_review_state_name(state)),
	       RN_LB("review_exhausted", exhausted), RN_LI("cycles", (long long)st->cycles.n),
	       RN_LI("sweep_caught", st->sr.sweep_caught),
	       RN_LN("duration_seconds", fg_seconds_since(st->t0)), RN_LS_OPT("reason", reason),
	       RN_LS_OPT("cost_usd", fg_usage_pair_cost(&usage, &usd) ? cost : NULL));
	free(reason);
	write_metrics(st, state, exhausted, &usage);
	write_result(st, state, exhausted, have_sum ? &sum : st->sr.stream_summary, &usage);
	close_run(st, state, s, &usage);
	fg_summary_release(&sum);
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
static char *derived_skill(const struct rn_run_config *c)
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
static char *derived_task_key(const struct rn_run_config *c)
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
	char *skill = derived_skill(c), *key = derived_task_key(c), err[512];
	const struct fg_cycle_dir_vars v = { c->step, key, skill };
	int r = fg_cycle_dir(tmpl, &v, &c->cycle_dir, err, sizeof(err));

	free(skill);
	free(key);
	c->cycle_dir_given = tmpl != NULL;
	return r ? rn_usage("%s", err) : 0;
}

static void log_start(struct run_state *st)
{
	const struct rn_run_config *c = st->cfg;
	const struct rn_engine_ops *ops = rn_engine_ops_of(c->engine);
	const char *skill = st->skill;

	rn_log(st->log, RN_LOG_INFO, "run_start", RN_LS("engine", ops->name),
	       RN_LS("image", ops->cli ? c->image : NULL),
	       RN_LS("step", c->step), RN_LS("skill", skill), RN_LS("task_key", c->task_key),
	       RN_LS("run_id", st->run_id), RN_LN("poll_interval", c->poll_interval),
	       RN_LB("inotify", !c->no_inotify), RN_LS("record", rn_record_mode_name(c->record)),
	       RN_LN("timeout", c->timeout), RN_LS("workspace", c->workspace),
	       RN_LS("entrypoint", ops->cli ? ops->cli : c->entrypoint));
	/* A container without --skills-dir reads the image's own /skills: a
	 * review.md on the host is silently not used. */
	if (ops->cli && !c->skills_dir)
		rn_log(st->log, RN_LOG_WARN, "skills_in_image", RN_LS("engine", ops->name),
		       RN_LS("image", c->image), RN_LS("skill", skill),
		       RN_LS("hint", "no --skills-dir: review.md files are looked up in the image's own "
				     "/skills; pass --skills-dir DIR to use the host's"));
}

/* --env NAMEs that are not set: the container would silently lack them. */
static void warn_unset_env(struct run_state *st)
{
	for (size_t i = 0; i < st->cfg->extra_env.n; i++) {
		if (!getenv(st->cfg->extra_env.v[i]))
			rn_log(st->log, RN_LOG_WARN, "env_unset", RN_LS("name", st->cfg->extra_env.v[i]));
	}
}

static void run_session(struct run_state *st)
{
	struct rn_engine_params ep;
	struct rn_session_params sp = {
		.cfg = st->cfg, .run_id = st->run_id, .step_dir = st->step_dir,
		.step_rel = st->step_rel, .skill = st->skill, .log = st->log,
		.metrics = &st->metrics, .cycles = &st->cycles, .ep = &ep,
	};
	int r;

	rn_run_engine_params(st->cfg, st->run_id, &ep);
	r = rn_session_run(&sp, &st->sr);

	if (r) {
		st->sr.failed = 1;
		st->sr.exit_code = FG_EXIT_RUNTIME;
		st->sr.error_message = fg_xasprintf("cannot set up the event loop: %s", strerror(-r));
	}
}

/* Opens the workspace and prepares the step directory beneath it. 0, or a
 * negative errno with err filled. */
static int prepare(struct run_state *st, char *err, size_t errlen)
{
	struct rn_prepare p = { .rel = st->step_rel, .dir = st->step_dir, .log = st->log };

	st->wsfd = fg_open_dir(AT_FDCWD, st->cfg->workspace, 0);
	if (st->wsfd < 0) {
		int r = st->wsfd;

		snprintf(err, errlen, "%s", strerror(-r));
		return r;
	}
	p.wsfd = st->wsfd;
	return rn_prepare_step_dir(&p, &st->stale, err, errlen);
}

static int run_prepared(struct run_state *st)
{
	char err[512] = "";
	int r;

	log_start(st);
	/* A workspace the runner cannot see is cleared by the entrypoint
	 * (--clear-stale, passed by the engine); wsfd stays -1 then. */
	r = st->cfg->workspace_local ? prepare(st, err, sizeof(err)) : 0;
	if (r) {
		const char *why = err[0] ? err : strerror(-r);

		rn_log(st->log, RN_LOG_ERROR, "run_error", RN_LS("dir", st->step_dir), RN_LS("error", why));
		st->sr.failed = 1;
		st->sr.exit_code = FG_EXIT_RUNTIME;
		st->sr.error_message = fg_xasprintf("cannot prepare '%s': %s", st->step_dir, why);
	} else {
		if (st->cfg->workspace_local)
			rn_log(st->log, st->stale ? RN_LOG_INFO : RN_LOG_DEBUG, "stale_cleared",
			       RN_LS("dir", st->step_dir), RN_LI("count", st->stale));
		if (rn_engine_ops_of(st->cfg->engine)->env_by_name)
			warn_unset_env(st);
		run_session(st);
	}
	conclude(st);
	rn_session_unblock_signals(&st->sr);
	return st->sr.exit_code;
}

int rn_cmd_run(int argc, char **argv)
{
	struct rn_run_config cfg = { .poll_interval = RN_DEFAULT_POLL_INTERVAL };
	struct run_args a = { 0 };
	struct rn_log log;
	struct run_state st = { .cfg = &cfg, .log = &log, .wsfd = -1 };
	char run_id[RN_RUN_ID_LEN + 1];
	int r;

	fg_strvec_init(&cfg.extra_env);
	fg_strvec_init(&cfg.engine_args);
	r = parse_args(argc, argv, &cfg, &a);
	if (!r)
		r = validate(&cfg, &a);
	if (!r)
		r = rn_log_setup(&log, &a.log, stderr);
	if (r) {
		rn_run_config_release(&cfg);
		if (r > 0)
			return r;
		rn_cmd_help("forge-runner run --workspace DIR --step NAME [options]", rn_run_options);
		fputs(rn_run_needs, stdout);
		return 0;
	}
	st.t0 = fg_monotonic_ns();
	rn_run_id_generate(run_id);
	st.run_id = run_id;
	st.skill = derived_skill(&cfg);
	st.step_rel = fg_xstrdup(cfg.cycle_dir);
	/* Without a host path the directory is named as the container sees it
	 * (it only appears in log lines then). */
	st.step_dir = fg_path_join(cfg.workspace ? cfg.workspace : "/workspace", st.step_rel);
	rn_cycles_init(&st.cycles);
	rn_cycles_test_bound(&st.cycles);
	rn_metrics_init(&st.metrics);
	r = run_prepared(&st);
	rn_metrics_release(&st.metrics);
	rn_cycles_release(&st.cycles);
	free(st.sr.error_message);
	if (st.sr.stream_summary)
		fg_summary_release(st.sr.stream_summary);
	free(st.sr.stream_summary);
	free(st.sr.reason);
	free(st.step_dir);
	free(st.step_rel);
	free(st.skill);
	if (st.wsfd >= 0)
		close(st.wsfd);
	rn_log_close(&log);
	rn_run_config_release(&cfg);
	return r;
}
