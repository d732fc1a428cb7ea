/*
 * test_faults_helpers.h - shared by the fault tests (test_faults_*.c): a
 * temporary tree, the real forge-entrypoint and forge-runner, scripted sh
 * agents or a scripted entrypoint, and a private mount namespace for the
 * tests that mount a tmpfs or a read-only bind.
 *
 * Layout under a fresh temp dir R: R/ws (the workspace, step "impl"),
 * R/skills/default/impl/review.md, R/task.json, R/out (a directory outside
 * the workspace), R/runner.log, R/result.json, R/stdout, R/stderr.
 *
 * The runner is started with fork/exec (not fgt_run) so that a test can
 * kill it mid-run and read its peak RSS from wait4(). Every wait has a hard
 * deadline: a hung program is killed and the test fails; nothing sleeps for
 * a fixed time to let something happen.
 *
 * Included by one test file each (static functions, all used by each includer
 * or marked unused).
 */
#ifndef TEST_FAULTS_HELPERS_H
#define TEST_FAULTS_HELPERS_H

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"

struct fx {
	char *root, *ws, *skills, *step_dir, *task, *out, *log, *result;
	char *stdout_path, *stderr_path;
	int status;          /* wait status of the last runner */
	long maxrss_kb;      /* its peak RSS (wait4) */
	char *err;           /* its stderr, owned */
	char *logtext;       /* the log file, owned */
	cJSON *events;       /* JSON log lines as an array (json format only) */
	cJSON *res;          /* the result file, or NULL */
};

static inline void fx_setup(struct fx *f)
{
	char *p;

	memset(f, 0, sizeof(*f));
	f->root = fgt_tmpdir();
	f->ws = fgt_fmt("%s/ws", f->root);
	f->skills = fgt_fmt("%s/skills", f->root);
	f->step_dir = fgt_fmt("%s/.forge/impl", f->ws);
	f->task = fgt_fmt("%s/task.json", f->root);
	f->out = fgt_fmt("%s/out", f->root);
	f->log = fgt_fmt("%s/runner.log", f->root);
	f->result = fgt_fmt("%s/result.json", f->root);
	f->stdout_path = fgt_fmt("%s/stdout", f->root);
	f->stderr_path = fgt_fmt("%s/stderr", f->root);
	p = fgt_fmt("%s/README", f->ws);
	fgt_write(p, "workspace\n");
	free(p);
	p = fgt_fmt("%s/.keep", f->out);
	fgt_write(p, "");
	free(p);
	p = fgt_fmt("%s/default/impl/review.md", f->skills);
	fgt_write(p, "---\nmax_retries: 3\n---\nCheck the work.\n");
	free(p);
	fgt_write(f->task, "{\"task_key\": \"ABC-12\", \"summary\": \"Add a greeting\", "
		  "\"description\": \"Write hello\", \"skill_name\": \"impl\", \"step_name\": \"impl\"}");
}

static inline void fx_reset_run(struct fx *f)
{
	cJSON_Delete(f->events);
	f->events = NULL;
	cJSON_Delete(f->res);
	f->res = NULL;
	free(f->err);
	f->err = NULL;
	free(f->logtext);
	f->logtext = NULL;
	unlink(f->log);
	unlink(f->result);
}

static inline void fx_teardown(struct fx *f)
{
	fx_reset_run(f);
	fgt_rm_rf(f->root);
	free(f->root);
	free(f->ws);
	free(f->skills);
	free(f->step_dir);
	free(f->task);
	free(f->out);
	free(f->log);
	free(f->result);
	free(f->stdout_path);
	free(f->stderr_path);
}

/* R/name: "#!/bin/sh\n" + body, executable. Owned path. */
static inline char *fx_script(struct fx *f, const char *name, const char *body)
{
	return fge_script(f->root, name, "#!/bin/sh\n", body);
}

/* R/ep.sh: a scripted entrypoint (FGE_FAKE_EP_HEAD + body). Owned path. */
static inline char *fx_fake_entrypoint(struct fx *f, const char *body)
{
	return fge_script(f->root, "ep.sh", FGE_FAKE_EP_HEAD, body);
}

/* The environment every program of these tests gets: agents bounded, no
 * inherited forge settings. */
static const char *const FX_BASE_ENV[] = {
	"FORGE_AGENT_TIMEOUT=30", "FORGE_AGENT_IDLE_TIMEOUT=30", "FORGE_AGENT_KILL_GRACE=1",
	"FORGE_RUN_ID", "AUTO_REVIEW_MAX_RETRIES", "AUTO_REVIEW_FAIL_ON_EXHAUSTION",
	"AUTO_REVIEW_STOP_WHEN_STALLED", "AUTO_REVIEW_POLL_INTERVAL", "AUTO_REVIEW_RECORD_POLLED_FILES",
	"FORGE_TASK_FILE", "FORGE_WORKSPACE", "FORGE_SKILLS_DIR", "FORGE_STEP_NAME",
	"FORGE_SKILL_NAME", "FORGE_TASK_KEY", "FORGE_LOG_LEVEL", "FORGE_ENGINE", "FORGE_IMAGE",
	"FORGE_ENTRYPOINT_BIN", "FORGE_REVIEW_RECORDING_DIR", NULL,
};

static inline void apply_env(const char *const *env)
{
	for (size_t i = 0; env && env[i]; i++) {
		const char *eq = strchr(env[i], '=');

		if (eq) {
			char *name = strndup(env[i], (size_t)(eq - env[i]));

			setenv(name, eq + 1, 1);
			free(name);
		} else {
			unsetenv(env[i]);
		}
	}
}

/* Starts argv in its own process group, stdout/stderr to R/stdout and
 * R/stderr, stdin from /dev/null, in R, with FX_BASE_ENV then env applied. */
static inline pid_t fx_spawn(struct fx *f, const char *const *argv, const char *const *env)
{
	pid_t pid = fork();

	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int o = open(f->stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(f->stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		setpgid(0, 0);
		if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		if (chdir(f->root) < 0)
			_exit(126);
		apply_env(FX_BASE_ENV);
		apply_env(env);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	setpgid(pid, pid);
	return pid;
}

/* Waits up to timeout_s for pid; on timeout kills its group and fails. */
static inline void fx_wait(struct fx *f, pid_t pid, double timeout_s)
{
	struct rusage ru;
	long waited_ms = 0;

	for (;;) {
		pid_t r = wait4(pid, &f->status, WNOHANG, &ru);

		if (r == pid)
			break;
		cr_assert(r == 0 || errno == EINTR, "wait4: %s", strerror(errno));
		if (waited_ms > (long)(timeout_s * 1000)) {
			kill(-pid, SIGKILL);
			waitpid(pid, &f->status, 0);
			cr_assert_fail("%s hung (killed after %g s); stderr:\n%s", "the program", timeout_s,
				fgt_read(f->stderr_path, NULL));
		}
		usleep(10000);
		waited_ms += 10;
	}
	f->maxrss_kb = ru.ru_maxrss;
	f->err = fgt_read(f->stderr_path, NULL);
	if (!f->err)
		f->err = strdup("");
}

/* Exit code of the last program, or 128+signal. */
static inline int fx_code(const struct fx *f)
{
	if (WIFEXITED(f->status))
		return WEXITSTATUS(f->status);
	return 128 + WTERMSIG(f->status);
}

/* Reads the log file (JSON lines parsed when json) and the result file. */
static inline void fx_load(struct fx *f, int json)
{
	char *res = fgt_read(f->result, NULL);

	f->logtext = fgt_read(f->log, NULL);
	if (!f->logtext)
		f->logtext = strdup("");
	if (json)
		f->events = fge_json_lines(f->logtext);
	if (res) {
		f->res = cJSON_Parse(res);
		cr_assert_not_null(f->res, "result is not JSON: %s", res);
	}
	free(res);
}

/* argv of `forge-runner run` on the tree, ep the entrypoint (NULL: the real
 * one), fmt the log format, then extra (NULL-terminated), after an optional
 * wrapper prefix (NULL-terminated, may be NULL). Owned array of borrowed
 * strings, except the three returned through owned[]. */
static inline const char **fx_runner_argv(struct fx *f, const char *const *wrap, const char *ep,
				   const char *fmt, const char *const *extra)
{
	const char **argv = calloc(64, sizeof(*argv));
	size_t n = 0;

	for (size_t i = 0; wrap && wrap[i]; i++)
		argv[n++] = wrap[i];
	argv[n++] = FG_RUNNER_BIN;
	argv[n++] = "run";
	argv[n++] = "--workspace"; argv[n++] = f->ws;
	argv[n++] = "--step"; argv[n++] = "impl";
	argv[n++] = "--skill"; argv[n++] = "impl";
	argv[n++] = "--task-key"; argv[n++] = "ABC-12";
	argv[n++] = "--task-file"; argv[n++] = f->task;
	argv[n++] = "--skills-dir"; argv[n++] = f->skills;
	argv[n++] = "--entrypoint"; argv[n++] = ep ? ep : FG_ENTRYPOINT_BIN;
	argv[n++] = "--result"; argv[n++] = f->result;
	argv[n++] = "--log-format"; argv[n++] = fmt;
	argv[n++] = "--log-file"; argv[n++] = f->log;
	argv[n++] = "--poll-interval"; argv[n++] = "0.05";
	for (size_t i = 0; extra && extra[i] && n < 62; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	return argv;
}

/* Environment for the runner: the agent commands (NULL: unset), LOG and OUT
 * for scripts, then env. Owned strings in out[0..2]. */
static inline void fx_runner_env(struct fx *f, const char *worker, const char *reviewer,
			  const char *const *env, const char *envv[16], char *owned[4])
{
	size_t n = 0;

	owned[0] = worker ? fgt_fmt("FORGE_WORKER_CMD=%s", worker) : fgt_fmt("FORGE_WORKER_CMD");
	owned[1] = reviewer ? fgt_fmt("FORGE_REVIEWER_CMD=%s", reviewer) : fgt_fmt("FORGE_REVIEWER_CMD");
	owned[2] = fgt_fmt("LOG=%s", f->log);
	owned[3] = fgt_fmt("OUT=%s", f->out);
	for (int i = 0; i < 4; i++)
		envv[n++] = owned[i];
	for (size_t i = 0; env && env[i] && n < 15; i++)
		envv[n++] = env[i];
	envv[n] = NULL;
}

/* Starts the runner (see fx_runner_argv, fx_runner_env); returns its pid. */
static inline pid_t fx_runner_start(struct fx *f, const char *const *wrap, const char *ep, const char *fmt,
			     const char *const *extra, const char *worker, const char *reviewer,
			     const char *const *env)
{
	const char **argv = fx_runner_argv(f, wrap, ep, fmt, extra);
	const char *envv[16];
	char *owned[4];
	pid_t pid;

	fx_reset_run(f);
	fx_runner_env(f, worker, reviewer, env, envv, owned);
	pid = fx_spawn(f, argv, envv);
	for (int i = 0; i < 4; i++)
		free(owned[i]);
	free(argv);
	return pid;
}

/* Runs the runner to the end (60 s deadline) and loads its log and result. */
static inline void fx_runner(struct fx *f, const char *const *wrap, const char *ep, const char *fmt,
		      const char *const *extra, const char *worker, const char *reviewer,
		      const char *const *env)
{
	pid_t pid = fx_runner_start(f, wrap, ep, fmt, extra, worker, reviewer, env);

	fx_wait(f, pid, 60);
	fx_load(f, !strcmp(fmt, "json"));
}

/* The result's review_cycles (fails the test when there is no result). */
static inline const cJSON *fx_cycles(const struct fx *f)
{
	const cJSON *v;

	cr_assert_not_null(f->res, "no result file; stderr:\n%s\nlog:\n%s", f->err, f->logtext);
	v = cJSON_GetObjectItem(f->res, "review_cycles");
	cr_assert(cJSON_IsArray(v));
	return v;
}

/* Runs forge-entrypoint run on the tree (90 s deadline) with the agent
 * commands worker and reviewer, FORGE_RUN_ID=run_id, then extra_env
 * (NULL-terminated, may be NULL), after the wrapper prefix wrap (a
 * NULL-terminated argv such as setpriv's, may be NULL); stderr and the
 * exit code in p. */
static inline void fx_entrypoint_as(struct fx *f, struct fgt_proc *p, const char *const *wrap,
				    const char *worker, const char *reviewer, const char *run_id,
				    const char *const *extra_env)
{
	char *wenv = fgt_fmt("FORGE_WORKER_CMD=%s", worker);
	char *renv = fgt_fmt("FORGE_REVIEWER_CMD=%s", reviewer);
	char *id = fgt_fmt("FORGE_RUN_ID=%s", run_id);
	const char *argv[24];
	const char *env[48];
	size_t n = 0, a = 0;

	for (size_t i = 0; wrap && wrap[i] && a < 12; i++)
		argv[a++] = wrap[i];
	for (const char *const *w = (const char *const[]){ FG_ENTRYPOINT_BIN, "run", "--workspace", f->ws,
							 "--skills-dir", f->skills, "--task-file",
							 f->task, NULL }; *w; w++)
		argv[a++] = *w;
	argv[a] = NULL;

	for (size_t i = 0; FX_BASE_ENV[i]; i++)
		env[n++] = FX_BASE_ENV[i];
	env[n++] = id;
	env[n++] = wenv;
	env[n++] = renv;
	for (size_t i = 0; extra_env && extra_env[i] && n < 47; i++)
		env[n++] = extra_env[i];
	env[n] = NULL;
	cr_assert_eq(fgt_run(p, argv, env, f->root, NULL, 90), 0);
	cr_assert(!p->timed_out, "forge-entrypoint hung; stderr:\n%s", p->err);
	free(wenv);
	free(renv);
	free(id);
}

/* fx_entrypoint_as() without a wrapper. */
static inline void fx_entrypoint(struct fx *f, struct fgt_proc *p, const char *worker,
				 const char *reviewer, const char *run_id, const char *const *extra_env)
{
	fx_entrypoint_as(f, p, NULL, worker, reviewer, run_id, extra_env);
}

/* Moves this test process (and what it starts) into a private mount
 * namespace, so mounts vanish with it even when an assertion ends the test.
 * 0, or skips the test with the reason. */
static inline void fx_private_mounts(void)
{
	if (geteuid() != 0)
		cr_skip("needs root to mount (euid %d)", (int)geteuid());
	if (unshare(CLONE_NEWNS) < 0)
		cr_skip("cannot create a mount namespace: %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		cr_skip("cannot make mounts private: %s", strerror(errno));
}

/* Names in dir (one per line, sorted by readdir order), owned. */
static inline char *fx_listing(const char *dir)
{
	struct fgt_proc p;
	const char *argv[] = { "/bin/ls", "-A1", dir, NULL };
	char *s;

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 10), 0);
	s = strdup(p.out ? p.out : "");
	fgt_proc_release(&p);
	return s;
}

#endif
