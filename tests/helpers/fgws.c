/*
 * fgws.c - the workspace fixture of the end-to-end tests (see fgws.h).
 */
#include "fgws.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <ftw.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fge2e.h"

const char FGW_TASK[] =
	"{\"task_key\": \"ABC-12\", \"summary\": \"Add a greeting\", "
	"\"description\": \"Write hello to greeting.txt\", \"skill_name\": \"impl\", "
	"\"step_name\": \"impl\", \"previous_task_keys\": [\"ABC-11\"]}";

void fgw_init(struct fgw *w)
{
	memset(w, 0, sizeof(*w));
	w->root = fgt_tmpdir();
	w->ws = fgw_path(w, "ws");
	w->skills = fgw_path(w, "skills");
	w->step_dir = fgw_path(w, "ws/.forge/impl");
	w->task = fgw_path(w, "task.json");
	w->out = fgw_path(w, "out");
	w->bin = fgw_path(w, "bin");
	w->log = fgw_path(w, "runner.log");
	w->result = fgw_path(w, "result.json");
	w->metrics = fgw_path(w, "metrics.prom");
	w->stdout_path = fgw_path(w, "stdout");
	w->stderr_path = fgw_path(w, "stderr");
	cr_assert_eq(mkdir(w->ws, 0755), 0, "mkdir '%s': %s", w->ws, strerror(errno));
	cr_assert_eq(mkdir(w->skills, 0755), 0, "mkdir '%s': %s", w->skills, strerror(errno));
	/* The stand-in agents note what they saw beside the workspace: their
	 * box (entrypoint/sandbox.h) lets them write there too, test-only. */
	setenv("FORGE_TEST_AGENT_WRITE_DIR", w->root, 1);
}

void fgw_init_runner(struct fgw *w)
{
	fgw_init(w);
	fgw_runner_tree(w);
}

void fgw_init_step(struct fgw *w, const char *review_md)
{
	fgw_init(w);
	fgw_task(w, NULL);
	if (review_md)
		fgw_review_md(w, "default", review_md);
}

void fgw_release_run(struct fgw *w, struct fgt_proc *p)
{
	fgt_proc_release(p);
	fgw_release(w);
}

void fgw_share(const struct fgw *w, uid_t uid, gid_t gid)
{
	const char *dirs[] = { w->ws, w->out };

	cr_assert_eq(chmod(w->root, 0755), 0, "chmod '%s': %s", w->root, strerror(errno));
	cr_assert_eq(chown(w->root, uid, gid), 0, "chown '%s': %s", w->root, strerror(errno));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		cr_assert(mkdir(dirs[i], 0755) == 0 || errno == EEXIST, "mkdir '%s': %s", dirs[i],
			  strerror(errno));
		cr_assert_eq(chown(dirs[i], uid, gid), 0, "chown '%s': %s", dirs[i], strerror(errno));
	}
}

void fgw_runner_tree(const struct fgw *w)
{
	fgw_write(w, "ws/README", "workspace\n");
	fgw_write(w, "out/.keep", "");
	fgw_review_md(w, "default", "---\nmax_retries: 3\n---\nCheck the work.\n");
	fgw_task(w, NULL);
}

void fgw_reset_run(struct fgw *w)
{
	cJSON_Delete(w->events);
	w->events = NULL;
	cJSON_Delete(w->res);
	w->res = NULL;
	free(w->err);
	w->err = NULL;
	free(w->logtext);
	w->logtext = NULL;
	if (w->log)
		unlink(w->log);
	if (w->result)
		unlink(w->result);
}

void fgw_release(struct fgw *w)
{
	char **paths[] = { &w->root, &w->ws, &w->skills, &w->step_dir, &w->task, &w->out, &w->bin,
			   &w->log, &w->result, &w->metrics, &w->stdout_path, &w->stderr_path };

	fgw_reset_run(w);
	if (w->root)
		fgt_rm_rf(w->root);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		free(*paths[i]);
		*paths[i] = NULL;
	}
}

char *fgw_path(const struct fgw *w, const char *name)
{
	return fgt_fmt("%s/%s", w->root, name);
}

void fgw_write(const struct fgw *w, const char *name, const char *content)
{
	fge_write_in(w->root, name, content);
}

char *fgw_read(const struct fgw *w, const char *name)
{
	return fge_read_in(w->root, name);
}

long fgw_read_pid(const struct fgw *w, const char *name)
{
	char *s = fgw_read(w, name);
	long pid;

	cr_assert(s, "missing %s", name);
	pid = strtol(s, NULL, 10);
	free(s);
	return pid;
}

int fgw_exists(const struct fgw *w, const char *name)
{
	return fge_exists_in(w->root, name);
}

void fgw_task(const struct fgw *w, const char *json)
{
	fgt_write(w->task, json ? json : FGW_TASK);
}

void fgw_review_md(const struct fgw *w, const char *project, const char *content)
{
	char *p = fgt_fmt("%s/%s/impl/review.md", w->skills, project);

	fgt_write(p, content);
	free(p);
}

char *fgw_script(const struct fgw *w, const char *name, const char *head, const char *body)
{
	return fge_script(w->root, name, head ? head : "#!/bin/sh\n", body);
}

char *fgw_fake_entrypoint(const struct fgw *w, const char *body)
{
	return fge_script(w->root, "ep.sh", FGE_FAKE_EP_HEAD, body);
}

char *fgw_step_file(const struct fgw *w, const char *name)
{
	return fge_read_in(w->step_dir, name);
}

int fgw_step_exists(const struct fgw *w, const char *name)
{
	return fge_exists_in(w->step_dir, name);
}

cJSON *fgw_step_json(const struct fgw *w, const char *name)
{
	char *p = fgt_fmt("%s/%s", w->step_dir, name);
	cJSON *j = fge_json_file(p, NULL);

	free(p);
	return j;
}

void fgw_assert_step_strs_at(const struct fgw *w, const char *name, const char *const *kv, const char *file,
			     int line)
{
	cJSON *o = fgw_step_json(w, name);

	fge_assert_strs_at(o, kv, file, line);
	cJSON_Delete(o);
}

char *fgw_summary_failure(const struct fgw *w, const char *cause)
{
	cJSON *s = fgw_step_json(w, "review_summary.json");
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(s, "failure");
	const char *state = fge_jstr(s, "state"), *c = fge_jstr_or_null(f, "cause");
	const char *r = fge_jstr_or_null(f, "reason");
	char *reason;

	cr_assert_str_eq(state, "failed");
	cr_assert(c && !strcmp(c, cause), "failure.cause %s, not %s", c ? c : "(none)", cause);
	reason = fgt_fmt("%s", r ? r : "");
	cJSON_Delete(s);
	return reason;
}

/* 1 if the NAME of entry ("NAME" or "NAME=value") is set or unset by extra. */
static int overridden(const char *entry, const char *const *extra)
{
	size_t n = strcspn(entry, "=");

	for (size_t i = 0; extra && extra[i]; i++)
		if (strcspn(extra[i], "=") == n && !strncmp(entry, extra[i], n))
			return 1;
	return 0;
}

void fgw_entrypoint(const struct fgw *w, struct fgt_proc *p, const char *worker, const char *reviewer,
		    const char *const *extra)
{
	fgw_entrypoint_as(w, p, NULL, worker, reviewer, extra);
}

void fgw_run_step(const struct fgw *w, struct fgt_proc *p, const char *worker_body,
		  const char *reviewer_body, const char *const *extra)
{
	char *wk = fgw_script(w, "worker.sh", NULL, worker_body);
	char *rv = reviewer_body ? fgw_script(w, "reviewer.sh", NULL, reviewer_body) : NULL;

	fgw_entrypoint(w, p, wk, rv, extra);
	free(wk);
	free(rv);
}

void fgw_entrypoint_signalled(const struct fgw *w, struct fgt_proc *p, const char *worker,
			      const char *reviewer, const char *const *extra)
{
	char *dir = fgw_path(w, "sig"), *env0 = fgt_fmt("SIGDIR=%s", dir);
	const char *env[40];
	size_t n = 0;
	pid_t sig;

	fgw_write(w, "sig/.keep", "");
	env[n++] = env0;
	for (size_t i = 0; extra && extra[i] && n < 39; i++)
		env[n++] = extra[i];
	env[n] = NULL;
	sig = fge_signaller_start(dir);
	fgw_entrypoint(w, p, worker, reviewer, env);
	fge_signaller_stop(sig);
	free(env0);
	free(dir);
}

void fgw_entrypoint_as(const struct fgw *w, struct fgt_proc *p, const char *const *wrap,
		       const char *worker, const char *reviewer, const char *const *extra)
{
	const char *env[48];
	size_t n = 0, a = 0;
	char *wenv = worker ? fgt_fmt("FORGE_WORKER_CMD=%s", worker) : fgt_fmt("FORGE_WORKER_CMD");
	char *renv = reviewer ? fgt_fmt("FORGE_REVIEWER_CMD=%s", reviewer) : fgt_fmt("FORGE_REVIEWER_CMD");
	const char *const cmd[] = { FG_ENTRYPOINT_BIN, "run", "--workspace", w->ws, "--skills-dir", w->skills,
				    "--step", "impl", "--task-file", w->task, NULL };
	const char *argv[24];

	for (size_t i = 0; wrap && wrap[i] && a < 12; i++)
		argv[a++] = wrap[i];
	for (size_t i = 0; cmd[i]; i++)
		argv[a++] = cmd[i];
	argv[a] = NULL;
	static const char *const base[] = {
		"FORGE_AGENT_TIMEOUT=30", "FORGE_AGENT_IDLE_TIMEOUT=30", "FORGE_AGENT_KILL_GRACE=1",
		"FORGE_RUN_ID=test-run", "AUTO_REVIEW_MAX_RETRIES", "AUTO_REVIEW_FAIL_ON_EXHAUSTION",
		"AUTO_REVIEW_STOP_WHEN_STALLED", "FORGE_TASK_FILE", "FORGE_WORKSPACE", "FORGE_SKILLS_DIR",
		"FORGE_STEP_NAME", "FORGE_SKILL_NAME", "FORGE_TASK_KEY",
		/* What the stand-in agents of the tests read beside their allow-list. */
		"FORGE_AGENT_ENV=SIGDIR,LOG,OUT,SAVE,WHO", NULL,
	};

	/* fgt_run keeps duplicates and getenv() takes the first: extra goes first
	 * and replaces the base entries of the same name. */
	for (size_t i = 0; extra && extra[i] && n < 40; i++)
		env[n++] = extra[i];
	for (size_t i = 0; base[i]; i++)
		if (!overridden(base[i], extra))
			env[n++] = base[i];
	if (!overridden("FORGE_WORKER_CMD", extra))
		env[n++] = wenv;
	if (!overridden("FORGE_REVIEWER_CMD", extra))
		env[n++] = renv;
	env[n] = NULL;
	cr_assert_eq(fgt_run(p, argv, env, w->root, NULL, 120), 0, "cannot start forge-entrypoint");
	cr_assert(!p->timed_out, "forge-entrypoint hung; stderr:\n%s", p->err);
	free(wenv);
	free(renv);
}

const char *const FGW_BASE_ENV[] = {
	"FORGE_AGENT_TIMEOUT=30", "FORGE_AGENT_IDLE_TIMEOUT=30", "FORGE_AGENT_KILL_GRACE=1",
	"FORGE_RUN_ID", "AUTO_REVIEW_MAX_RETRIES", "AUTO_REVIEW_FAIL_ON_EXHAUSTION",
	"AUTO_REVIEW_STOP_WHEN_STALLED", "AUTO_REVIEW_POLL_INTERVAL", "AUTO_REVIEW_RECORD_POLLED_FILES",
	"FORGE_TASK_FILE", "FORGE_WORKSPACE", "FORGE_SKILLS_DIR", "FORGE_STEP_NAME",
	"FORGE_SKILL_NAME", "FORGE_TASK_KEY", "FORGE_LOG_LEVEL", "FORGE_ENGINE", "FORGE_IMAGE",
	"FORGE_ENTRYPOINT_BIN", "FORGE_REVIEW_RECORDING_DIR", "FORGE_AGENT_ENV=SIGDIR,LOG,OUT,SAVE,WHO", NULL,
};

/* Applies environment changes in this (child) process. */
static void apply_env(const char *const *env)
{
	for (size_t i = 0; env && env[i]; i++) {
		const char *eq = strchr(env[i], '=');

		if (!strcmp(env[i], "-")) {
			clearenv();
		} else if (eq) {
			char *name = strndup(env[i], (size_t)(eq - env[i]));

			setenv(name, eq + 1, 1);
			free(name);
		} else {
			unsetenv(env[i]);
		}
	}
}

pid_t fgw_spawn(const struct fgw *w, const char *const *argv, const char *const *env)
{
	pid_t pid = fork();

	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int o = open(w->stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(w->stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		setpgid(0, 0);
		if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		if (chdir(w->root) < 0)
			_exit(126);
		apply_env(FGW_BASE_ENV);
		apply_env(env);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	setpgid(pid, pid);
	return pid;
}

void fgw_wait(struct fgw *w, pid_t pid, double timeout_s)
{
	fgw_wait_each(w, pid, timeout_s, NULL, NULL);
}

void fgw_wait_each(struct fgw *w, pid_t pid, double timeout_s, void (*each)(void *ctx), void *ctx)
{
	struct rusage ru;
	long waited_ms = 0;

	for (;;) {
		pid_t r = wait4(pid, &w->status, WNOHANG, &ru);

		if (r == pid)
			break;
		cr_assert(r == 0 || errno == EINTR, "wait4: %s", strerror(errno));
		if (waited_ms > (long)(timeout_s * 1000)) {
			kill(-pid, SIGKILL);
			waitpid(pid, &w->status, 0);
			cr_assert_fail("%s hung (killed after %g s); stderr:\n%s\nlog:\n%s", "the program",
				       timeout_s, fgt_read_or_empty(w->stderr_path), fgt_read_or_empty(w->log));
		}
		if (each && waited_ms % 100 == 0)
			each(ctx);
		usleep(10000);
		waited_ms += 10;
	}
	w->maxrss_kb = ru.ru_maxrss;
	free(w->err);
	w->err = fgt_read(w->stderr_path, NULL);
	if (!w->err)
		w->err = strdup("");
}

int fgw_code(const struct fgw *w)
{
	if (WIFEXITED(w->status))
		return WEXITSTATUS(w->status);
	return 128 + WTERMSIG(w->status);
}

void fgw_load(struct fgw *w, int json)
{
	char *res = fgt_read(w->result, NULL);

	free(w->logtext);
	w->logtext = fgt_read(w->log, NULL);
	if (!w->logtext)
		w->logtext = strdup("");
	cJSON_Delete(w->events);
	w->events = json ? fge_json_lines(w->logtext) : NULL;
	cJSON_Delete(w->res);
	w->res = NULL;
	if (res) {
		w->res = cJSON_Parse(res);
		cr_assert_not_null(w->res, "result is not JSON: %s", res);
	}
	free(res);
}

cJSON *fgw_log_events(const struct fgw *w)
{
	char *text = fgt_read_or_empty(w->log);
	cJSON *all = fge_json_lines(text);

	free(text);
	return all;
}

char *fgw_wait_run_id(const struct fgw *w, double timeout_s)
{
	for (long ms = 0; ms <= (long)(timeout_s * 1000); ms += 100) {
		cJSON *ev = fgw_log_events(w);
		const cJSON *start = fge_find_event(ev, "run_start", NULL, NULL);
		char *id = start ? fgt_fmt("%s", fge_jstr(start, "run_id")) : NULL;

		cJSON_Delete(ev);
		if (id)
			return id;
		fgt_sleep_ms(100);
	}
	cr_assert_fail("no run_start in the log:\n%s", fgt_read_or_empty(w->log));
	return NULL;
}

void fgw_wait_file(const struct fgw *w, const char *name, double timeout_s)
{
	for (long ms = 0; ms < (long)(timeout_s * 1000) && !fgw_exists(w, name); ms += 100)
		fgt_sleep_ms(100);
	cr_assert(fgw_exists(w, name), "'%s' never appeared; log:\n%s\nstderr:\n%s", name,
		  fgt_read_or_empty(w->log), fgt_read_or_empty(w->stderr_path));
}

void fgw_assert_secret_absent(const struct fgw *w, const char *secret)
{
	const char *paths[] = { w->log, w->result, w->stdout_path, w->stderr_path };

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char *text = fgt_read_or_empty(paths[i]);

		cr_assert_null(strstr(text, secret), "the secret is in %s:\n%.4000s", paths[i], text);
		free(text);
	}
}

/* argv of `forge-runner run` (see fgw_runner_start): an owned array of
 * borrowed strings. */
static const char **runner_argv(const struct fgw *w, const struct fgw_run_opts *o, const char *ep)
{
	const char **argv = calloc(64, sizeof(*argv));
	const char *fixed[] = { FG_RUNNER_BIN, "run", "--workspace", w->ws, "--step", "impl",
				"--skill", "impl", "--task-key", "ABC-12", "--task-file", w->task,
				"--skills-dir", w->skills, "--entrypoint", ep ? ep : FG_ENTRYPOINT_BIN,
				"--result", w->result, "--log-format", o->fmt ? o->fmt : "json", "--log-file", w->log,
				"--poll-interval", "0.05" };
	size_t n = 0;

	cr_assert_not_null(argv);
	for (size_t i = 0; o->wrap && o->wrap[i] && n < 16; i++)
		argv[n++] = o->wrap[i];
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		argv[n++] = fixed[i];
	for (size_t i = 0; o->args && o->args[i] && n < 62; i++)
		argv[n++] = o->args[i];
	argv[n] = NULL;
	return argv;
}

/* NAME=cmd, NAME=R/script written from body, or NAME (unset). */
static char *agent_env(const struct fgw *w, const char *name, const char *cmd, const char *script,
		       const char *body)
{
	char *path, *e;

	if (!body)
		return cmd ? fgt_fmt("%s=%s", name, cmd) : fgt_fmt("%s", name);
	path = fgw_script(w, script, NULL, body);
	e = fgt_fmt("%s=%s", name, path);
	free(path);
	return e;
}

pid_t fgw_runner_start(struct fgw *w, const struct fgw_run_opts *o)
{
	static const struct fgw_run_opts none;
	const char **argv;
	const char *envv[16];
	char *owned[4], *ep;
	size_t n = 0;
	pid_t pid;

	if (!o)
		o = &none;
	ep = o->ep_sh ? fgw_fake_entrypoint(w, o->ep_sh) : NULL;
	argv = runner_argv(w, o, ep ? ep : o->ep);
	fgw_reset_run(w);
	owned[0] = agent_env(w, "FORGE_WORKER_CMD", o->worker, "worker.sh", o->worker_sh);
	owned[1] = agent_env(w, "FORGE_REVIEWER_CMD", o->reviewer, "reviewer.sh", o->reviewer_sh);
	owned[2] = fgt_fmt("LOG=%s", w->log);
	owned[3] = fgt_fmt("OUT=%s", w->out);
	for (int i = 0; i < 4; i++)
		envv[n++] = owned[i];
	for (size_t i = 0; o->env && o->env[i] && n < 15; i++)
		envv[n++] = o->env[i];
	envv[n] = NULL;
	pid = fgw_spawn(w, argv, envv);
	for (int i = 0; i < 4; i++)
		free(owned[i]);
	free(argv);
	free(ep);
	return pid;
}

void fgw_runner(struct fgw *w, const struct fgw_run_opts *o)
{
	pid_t pid = fgw_runner_start(w, o);

	fgw_wait(w, pid, 60);
	fgw_load(w, !o || !o->fmt || !strcmp(o->fmt, "json"));
}

const cJSON *fgw_assert_run(const struct fgw *w, int code, int ncycles)
{
	const cJSON *cs;

	cr_assert_eq(fgw_code(w), code, "exit %d, not %d; log:\n%s", fgw_code(w), code, w->logtext);
	if (ncycles < 0)
		return NULL;
	cs = fgw_cycles(w);
	cr_assert_eq(cJSON_GetArraySize(cs), ncycles, "%d cycles, not %d; log:\n%s", cJSON_GetArraySize(cs),
		     ncycles, w->logtext);
	return cs;
}

cJSON *fgw_result_json(const struct fgw *w)
{
	char *text = fgt_read(w->result, NULL);
	cJSON *j = text ? cJSON_Parse(text) : NULL;

	cr_assert_not_null(j, "no result file; log:\n%s", fgt_read_or_empty(w->log));
	free(text);
	return j;
}

const cJSON *fgw_cycles(const struct fgw *w)
{
	const cJSON *v;

	cr_assert_not_null(w->res, "no result file; stderr:\n%s\nlog:\n%s", w->err, w->logtext);
	v = cJSON_GetObjectItem(w->res, "review_cycles");
	cr_assert(cJSON_IsArray(v));
	return v;
}

static int to_nobody(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return lchown(path, 65534, 65534);
}

const char *const *fgw_as_nobody(struct fgw *w)
{
	static const char *const wrap[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
					   "--clear-groups", "--inh-caps=-all", NULL };
	if (geteuid() != 0)
		cr_skip("needs root to run the entrypoint as another uid (euid %d)", (int)geteuid());
	if (!fgt_exists(wrap[0]))
		cr_skip("no %s to drop to uid 65534", wrap[0]);
	cr_assert_eq(nftw(w->root, to_nobody, 16, FTW_PHYS), 0, "chown '%s': %s", w->root, strerror(errno));
	return wrap;
}
