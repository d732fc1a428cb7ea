/*
 * run_config.c - `forge-runner run`'s configuration (run.h): the option
 * table (its own options, and those of every engine, asked of engine.c's
 * list), options and their environment twins, every check that makes a bad
 * configuration a usage error before anything is touched, the names the
 * entrypoint will derive (skill, task key, cycle directory) and the engine
 * parameters built from the result. An engine's own options go to the
 * engine (engine.h: struct rn_engine_opts), which keeps and checks them.
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

#include "internal_util.h"

extern char **environ;

/* The entrypoint reads task files up to 1 MiB; so does the skill lookup. */
#define RN_TASK_FILE_MAX (1024 * 1024)

enum {
	R_WORKSPACE = 1, R_STEP, R_SKILL, R_TASK_KEY, R_TASK_FILE, R_ENGINE, R_IMAGE, R_SKILLS,
	R_TIMEOUT, R_POLL, R_NO_INOTIFY, R_RECORD, R_RECDIR, R_RESULT, R_METRICS, R_LOG_FORMAT,
	R_LOG_FILE, R_LOG_LEVEL, R_ENTRYPOINT, R_ENV, R_VOLUME, R_CYCLE_DIR, R_QUIET, R_REQUIRE_REVIEW,
	R_HELP, R_ENGINE_CLI, R_RUN_ID, R_AGENT_ENV, R_REQUIRE_ISOLATION, R_TRACE_FILE,
	/* The engines' options: R_ENGINE_OPT + their index in engine_opts[]. */
	R_ENGINE_OPT = 1000,
};

/* `run`'s own options; the engines' follow --engine-cli (rn_run_options()). */
static const struct fg_opt run_options[] = {
	{ R_WORKSPACE, "workspace", 0, "DIR", NULL, "the workspace (required unless --workspace-volume)" },
	{ R_VOLUME, "workspace-volume", 0, "NAME", NULL,
	  "docker/podman: the named volume NAME is /workspace; kubernetes: the PersistentVolumeClaim NAME (the runner reads the stream only)" },
	{ R_STEP, "step", 0, "NAME", NULL, "workflow step (required); cycles go to DIR/.forge/NAME/ unless --cycle-dir" },
	{ R_SKILL, "skill", 0, "NAME", NULL, "skill under review" },
	{ R_CYCLE_DIR, "cycle-dir", 0, "TEMPLATE", "FORGE_CYCLE_DIR", "cycle files' directory in the workspace (default .forge/{step}; also {task_key}, {skill})" },
	{ R_TASK_KEY, "task-key", 0, "KEY", NULL, "ticket key" },
	{ R_TASK_FILE, "task-file", 0, "FILE", NULL, "task JSON file" },
	{ R_RUN_ID, "run-id", 0, "ID", NULL, "the run's id (an orchestrator's own: [a-z0-9-], at most " FG_XSTR(RN_RUN_ID_MAX) "; default: 16 random hex digits); the audit's sample is decided from it" },
	{ R_ENGINE, "engine", 0, "ENGINE", "FORGE_ENGINE", NULL /* the engines' names */ },
	{ R_ENGINE_CLI, "engine-cli", 0, "PATH", "FORGE_ENGINE_CLI", "the engine's CLI (default docker, podman, kubectl; oc for OpenShift)" },
	{ R_IMAGE, "image", 0, "IMAGE", "FORGE_IMAGE", "container image (docker, podman)" },
	{ R_SKILLS, "skills-dir", 0, "DIR", NULL, "skills directory (mounted read-only at /skills)" },
	{ R_ENTRYPOINT, "entrypoint", 0, "PATH", "FORGE_ENTRYPOINT_BIN", "forge-entrypoint binary (local)" },
	{ R_ENV, "env", 0, "NAME", NULL, "also pass NAME into the container (repeatable)" },
	{ R_AGENT_ENV, "agent-env", 0, "NAME", NULL,
	  "also pass NAME into the sandbox and on to the agents (worker, reviewers; never checks) beside their allow-listed environment (repeatable)" },
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

/* The whole table: run's options, with every engine's sets (each once, in
 * the order of engine.c's list) after --engine-cli; engine_opts[k] says
 * whose the option R_ENGINE_OPT + k is. Built once. */
#define RUN_OPTIONS_MAX 96
static struct fg_opt all_options[RUN_OPTIONS_MAX];
static struct engine_opt {
	const struct rn_engine_opts *set;
	int id;                 /* the option's id in its set */
	const char *name;
} engine_opts[RUN_OPTIONS_MAX];
static size_t nall, nengine_opts;
static char engine_help[256];

static int other_than_default(const struct rn_engine_ops *ops, const void *arg)
{
	(void)arg;
	return ops != rn_engine_at(0);
}

static void add_option(const struct fg_opt *o)
{
	if (nall + 1 >= RUN_OPTIONS_MAX)
		abort();   /* the table above is too small: a build-time mistake */
	all_options[nall++] = *o;
}

static int set_added(const struct rn_engine_opts *set)
{
	for (size_t k = 0; k < nengine_opts; k++)
		if (engine_opts[k].set == set)
			return 1;
	return 0;
}

static void add_engine_sets(void)
{
	for (size_t i = 0; rn_engine_at(i); i++)
		for (const struct rn_engine_opts *const *s = rn_engine_at(i)->opts; s && *s; s++) {
			if (set_added(*s))
				continue;
			for (const struct fg_opt *o = (*s)->table; o->name; o++) {
				struct fg_opt row = *o;

				row.id = R_ENGINE_OPT + (int)nengine_opts;
				engine_opts[nengine_opts++] = (struct engine_opt){ *s, o->id, o->name };
				add_option(&row);
			}
		}
}

/* "local (default), docker, podman or kubernetes": the first engine is the default. */
static const char *engines_help(void)
{
	char rest[192];

	snprintf(engine_help, sizeof(engine_help), "%s (default), %s", rn_engine_at(0)->name,
		 rn_engine_names(rest, sizeof(rest), "or", other_than_default, NULL));
	return engine_help;
}

const struct fg_opt *rn_run_options(void)
{
	if (nall)
		return all_options;
	for (const struct fg_opt *o = run_options; o->name; o++) {
		struct fg_opt row = *o;

		if (o->id == R_ENGINE)
			row.help = engines_help();
		add_option(&row);
		if (o->id == R_ENGINE_CLI)
			add_engine_sets();
	}
	all_options[nall] = (struct fg_opt){ 0, NULL, 0, NULL, NULL, NULL };
	return all_options;
}

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
	int argc;                    /* run's argv, read again for the engine's options */
	char **argv;
	struct rn_log_cfg log;
};

void rn_run_config_release(struct rn_run_config *c)
{
	FG_FREE_ALL(c->workspace, c->engine_host, c->task_file, c->skills_dir, c->entrypoint,
		    c->cycle_dir, c->step_owned);
	fg_strvec_release(&c->extra_env);
	if (c->engine && c->engine->data_free)
		c->engine->data_free(c->engine_data);
	c->engine_data = NULL;
}

void rn_run_sandbox_ids(const struct rn_run_config *c, uid_t *uid, gid_t *gid)
{
	*uid = getuid();
	*gid = getgid();
	if (c->engine->sandbox_ids)
		c->engine->sandbox_ids(c->engine_data, c->workspace_volume ? NULL : c->workspace, uid, gid);
}

void rn_run_engine_params(const struct rn_run_config *c, const char *run_id,
			  struct rn_engine_params *ep)
{
	const struct rn_engine_ops *ops = c->engine;

	memset(ep, 0, sizeof(*ep));
	ep->ops = ops;
	ep->data = c->engine_data;
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
	ep->cycle_dir = c->cycle_dir_given ? c->cycle_dir : NULL;
	ep->timeout = c->timeout;
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

static int take_opt(struct rn_run_config *c, struct run_args *a, int id, const char *v)
{
	if (id >= R_ENGINE_OPT)
		return 0;   /* the engine's: take_engine_opts() */
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
	a->entrypoint = env_or_null("FORGE_ENTRYPOINT_BIN");
	a->poll = env_or_null("AUTO_REVIEW_POLL_INTERVAL");
	a->record = env_or_null("AUTO_REVIEW_RECORD_POLLED_FILES");
	c->recording_dir = env_or_null("FORGE_REVIEW_RECORDING_DIR");
	a->cycle_dir = env_or_null("FORGE_CYCLE_DIR");
	a->require_review = env_or_null("AUTO_REVIEW_REQUIRED");
	a->require_isolation = env_or_null("FORGE_REQUIRE_ISOLATION");
	a->argc = argc;
	a->argv = argv;
	fg_opts_init(&it, rn_run_options(), argc, argv, 1);
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
	char names[256];

	if (a->engine && !rn_engine_find(a->engine))
		return rn_cmd_usage("run", "invalid engine '%s' (%s)", a->engine,
				    rn_engine_names(names, sizeof(names), "or", NULL, NULL));
	if (a->engine)
		c->engine = rn_engine_find(a->engine);
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
	if (!r && !rn__runnable(argv.v[0]))
		snprintf(err, sizeof(err), "%s '%s' %s", ep.ops->cli ? "engine CLI" : "entrypoint",
			 argv.v[0], strchr(argv.v[0], '/') ? "is not an executable file"
							   : "is not found in PATH");
	fg_strvec_release(&argv);
	fg_strvec_release(&env);
	return r || err[0] ? rn_cmd_usage("run", "%s", err) : 0;
}

/* 1 when ops takes the option set s (rn_engine_names()'s pick). */
static int takes_set(const struct rn_engine_ops *ops, const void *s)
{
	return rn_engine_takes(ops, s);
}

/* An engine's option given to an engine that does not take it: an error
 * (a limit silently not applied is worse), naming the engines that do. */
static int refuse_engine_opt(const struct rn_engine_opts *set, const char *name)
{
	char names[256];
	size_t n = 0;

	for (size_t i = 0; rn_engine_at(i); i++)
		n += rn_engine_takes(rn_engine_at(i), set);
	return rn_cmd_usage("run", "option '--%s' applies to the %s engine%s only", name,
			    rn_engine_names(names, sizeof(names), "and", takes_set, set), n > 1 ? "s" : "");
}

static int take_engine_opts(struct rn_run_config *c, const struct run_args *a);

static int not_host_fs(const struct rn_engine_ops *ops, const void *arg)
{
	(void)arg;
	return !ops->host_fs;
}

static int check_volume(struct rn_run_config *c)
{
	char err[256], names[256];

	if (!c->workspace_volume)
		return 0;
	if (c->engine->host_fs)
		return rn_cmd_usage("run", "--workspace-volume needs a container engine (%s)",
				    rn_engine_names(names, sizeof(names), "or", not_host_fs, NULL));
	if (rn_engine_volume_check(c->workspace_volume, err, sizeof(err)))
		return rn_cmd_usage("run", "%s", err);
	return 0;
}

/* Whether the runner can see the workspace (engine.h: workspace_local),
 * and the workspace path: resolved on this host, or as given (absolute)
 * when it names a path on a remote engine's host. */
static int locate(struct rn_run_config *c, const struct run_args *a)
{
	const struct rn_engine_ops *ops = c->engine;
	struct rn_engine_params p = {
		.ops = c->engine, .data = c->engine_data, .workspace = a->workspace,
		.workspace_volume = c->workspace_volume, .environ = environ,
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
	const char *v;
	char *name = NULL;

	fg_buf_init(&b, RN_TASK_FILE_MAX);
	if (path && !fg_read_file_at(AT_FDCWD, path, RN_TASK_FILE_MAX, FG_READ_FOLLOW, &b, NULL))
		o = fg_json_parse_exact(fg_buf_str(&b), b.len);
	v = fg_json_str(o, key);
	if (v && !fg_name_check(kind, v, strlen(v), NULL, 0))
		name = fg_xstrdup(v);
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
		r = take_engine_opts(c, a);
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
	c->engine = rn_engine_at(0);
	fg_strvec_init(&c->extra_env);
	r = parse_args(argc, argv, c, &a);
	if (!r)
		r = validate(c, &a);
	*log = a.log;
	return r;
}

/* The engine's own options, handed to it once the engine is known: its
 * sets' environment twins first (the option wins; the twins of a set the
 * engine does not take are ignored: a shared environment may well set
 * them for other runs), then run's argv read again for the engines'
 * options; then the engine checks what it got. */
static int take_engine_opts(struct rn_run_config *c, const struct run_args *a)
{
	const struct rn_engine_ops *ops = c->engine;
	struct fg_opts_iter it;
	char err[512] = "";

	c->engine_data = ops->data_new ? ops->data_new() : NULL;
	for (const struct rn_engine_opts *const *s = ops->opts; s && *s; s++)
		for (const struct fg_opt *o = (*s)->table; o->name; o++)
			if (o->env && env_or_null(o->env) &&
			    (*s)->take(c->engine_data, o->id, env_or_null(o->env), err, sizeof(err)))
				return rn_cmd_usage("run", "%s", err);
	fg_opts_init(&it, rn_run_options(), a->argc, a->argv, 1);
	while (fg_opts_each(&it)) {
		const struct engine_opt *e;

		if (it.id < R_ENGINE_OPT)
			continue;
		e = &engine_opts[it.id - R_ENGINE_OPT];
		if (!rn_engine_takes(ops, e->set))
			return refuse_engine_opt(e->set, e->name);
		if (e->set->take(c->engine_data, e->id, it.value ? it.value : "1", err, sizeof(err)))
			return rn_cmd_usage("run", "%s", err);
	}
	if (ops->data_check && ops->data_check(c->engine_data, c->engine_cli ? c->engine_cli : ops->cli,
					       err, sizeof(err)))
		return rn_cmd_usage("run", "%s", err);
	return 0;
}
