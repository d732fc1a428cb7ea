/*
 * fgws.h - the one workspace fixture of the end-to-end tests: a temporary
 * tree for a run of the real forge-entrypoint or forge-runner, the paths a
 * test names in it, and the last run's outputs.
 *
 * Layout under a fresh temporary directory R (struct fgw's fields):
 *   root      R
 *   ws        R/ws, the workspace (created, empty)
 *   skills    R/skills, the skills directory (created, empty)
 *   step_dir  R/ws/.forge/impl, the cycle directory of step "impl" (not created)
 *   task      R/task.json (written only by fgw_task)
 *   out       R/out, a directory outside the workspace (not created)
 *   bin       R/bin, for stand-in CLIs put first on PATH (not created)
 *   log, result, metrics   R/runner.log, R/result.json, R/metrics.prom
 *   stdout_path, stderr_path   R/stdout, R/stderr (fgw_spawn's streams)
 * A test writes what its run needs with fgw_write(), fgw_task(),
 * fgw_review_md() and fgw_script(), runs, and asserts; fgw_release()
 * removes the tree. The step is "impl" and the skill "impl" unless a test
 * says otherwise. fgw_init() sets FORGE_TEST_AGENT_WRITE_DIR=R in the
 * test's environment, so the agents' box (entrypoint/sandbox.h) lets the
 * stand-in agents write R (beside the workspace) as well.
 *
 * Usage:
 *   struct fgw w;
 *   fgw_init(&w);
 *   fgw_task(&w, NULL);                        the standard task ABC-12
 *   fgw_review_md(&w, "default", "Check.\n");  skills/default/impl/review.md
 *   fgw_entrypoint(&w, &p, "sh work.sh", "sh rev.sh", NULL);   or
 *   fgw_runner(&w, FGW_RUN(.worker = worker, .reviewer = reviewer));
 *   ... cr_assert on w.res, w.events, fgw_step_file(&w, ...) ...
 *   fgw_release(&w);
 *
 * Every helper that reads something a test depends on fails the test (with
 * the path and what it found) instead of returning an error.
 */
#ifndef FGWS_H
#define FGWS_H

#include <cjson/cJSON.h>
#include <sys/types.h>

#include "fgtest.h"

struct fgw {
	char *root, *ws, *skills, *step_dir, *task, *out, *bin;
	char *log, *result, *metrics, *stdout_path, *stderr_path;
	/* The last program started with fgw_spawn() (fgw_runner()). */
	int status;          /* its wait status */
	long maxrss_kb;      /* its peak RSS (wait4) */
	char *err;           /* its stderr, owned */
	/* Loaded by fgw_load() (and fgw_runner()); NULL until then. */
	char *logtext;       /* the log file, owned ("" when there is none) */
	cJSON *events;       /* its JSON lines as an array (json format only) */
	cJSON *res;          /* the result file, or NULL */
};

/* The shell line of a stand-in worker whose turn does work: it appends a
 * line to work.txt in the workspace. The change set is on (the shipped
 * default): a turn after a rejection that changes nothing costs no review
 * (docs/guide/auto-review.md#no-change-no-review), so a worker that is to
 * be reviewed again changes the workspace, and a test whose worker changes
 * nothing on purpose says so. */
#define FGW_WORKS "echo \"turn ${FORGE_CYCLE:-0}\" >> \"$FORGE_WORKSPACE/work.txt\"\n"

/* The standard task (task key ABC-12, skill and step "impl", previous key
 * ABC-11), what fgw_task(w, NULL) writes. */
extern const char FGW_TASK[];

/* Makes the tree (see above). fgw_release() removes it and frees w. */
void fgw_init(struct fgw *w);
void fgw_release(struct fgw *w);

/* The opening of a test of forge-runner run: fgw_init() and
 * fgw_runner_tree(). */
void fgw_init_runner(struct fgw *w);

/* The opening of a test of one step: fgw_init(), the standard task
 * (fgw_task(w, NULL)) and skills/default/impl/review.md = review_md
 * (NULL: no review.md, for a test that writes its own or none). */
void fgw_init_step(struct fgw *w, const char *review_md);
/* The closing that goes with it: releases p (the last run) and w. */
void fgw_release_run(struct fgw *w, struct fgt_proc *p);

/* Opens the tree to another user (a container's, a stand-in runner's):
 * mkdtemp made root 0700, it becomes 0755; root (so a runner started as
 * that user writes its log and result there), ws and out (made when
 * missing) belong to uid:gid. Fails the test when it cannot (chown needs root or
 * uid:gid our own). */
void fgw_share(const struct fgw *w, uid_t uid, gid_t gid);

/* What a run of the runner on the tree needs beyond fgw_init(): a file in
 * the workspace (ws/README), the directory out, the default skill's
 * review.md ("max_retries: 3", "Check the work.") and the standard task. */
void fgw_runner_tree(const struct fgw *w);

/* R/name (owned). */
char *fgw_path(const struct fgw *w, const char *name);
/* R/name = content, parent directories created. */
void fgw_write(const struct fgw *w, const char *name, const char *content);
/* R/name's content (owned), or NULL when it cannot be read. */
char *fgw_read(const struct fgw *w, const char *name);
/* The pid a stand-in agent wrote into R/name (fails the test when there
 * is no such file). */
long fgw_read_pid(const struct fgw *w, const char *name);
/* 1 if R/name exists (lstat). */
int fgw_exists(const struct fgw *w, const char *name);
/* R/task.json = json (NULL: FGW_TASK). */
void fgw_task(const struct fgw *w, const char *json);
/* R/skills/PROJECT/impl/review.md = content. */
void fgw_review_md(const struct fgw *w, const char *project, const char *content);
/* R/name = head + body + "\n", executable; head NULL is "#!/bin/sh\n".
 * Returns the owned path. */
char *fgw_script(const struct fgw *w, const char *name, const char *head, const char *body);
/* R/ep.sh: a scripted entrypoint (FGE_FAKE_EP_HEAD + body). Owned path. */
char *fgw_fake_entrypoint(const struct fgw *w, const char *body);

/* Content of step_dir/name (owned) or NULL; 1 if it exists; parsed as JSON
 * (owned; fails the test when it is missing or not JSON). */
char *fgw_step_file(const struct fgw *w, const char *name);
int fgw_step_exists(const struct fgw *w, const char *name);
cJSON *fgw_step_json(const struct fgw *w, const char *name);
/* Fails the test (naming the caller's file and line) unless each string
 * member of step_dir/name (fgw_step_json) named in the list of name, value
 * pairs has that value: fge_assert_strs() on a step file. */
#define fgw_assert_step_strs(w, name, ...) \
	fgw_assert_step_strs_at((w), (name), (const char *const[]){ __VA_ARGS__, NULL }, __FILE__, __LINE__)
void fgw_assert_step_strs_at(const struct fgw *w, const char *name, const char *const *kv, const char *file,
			     int line);
/* Fails the test unless step_dir/review_summary.json says state "failed"
 * with failure.cause cause; returns its failure.reason (owned, "" when
 * there is none). */
char *fgw_summary_failure(const struct fgw *w, const char *cause);

/*
 * Runs `forge-entrypoint run` on the workspace (step and skill "impl", the
 * task R/task.json), in R, with fgt_run: worker/reviewer are the agents'
 * command strings (NULL: unset), extra a NULL-terminated list of environment
 * changes (may be NULL) that replaces the defaults of the same name (agent
 * timeouts of 30 s, kill grace 1 s, FORGE_RUN_ID=test-run, the other forge
 * settings unset). Fails the test when it cannot start or hangs (120 s).
 */
void fgw_entrypoint(const struct fgw *w, struct fgt_proc *p, const char *worker, const char *reviewer,
		    const char *const *extra);

/* The usual run of a test of one step: R/worker.sh and R/reviewer.sh from
 * the two bodies (fgw_script), then fgw_entrypoint() with them and extra.
 * reviewer_body NULL: no reviewer (FORGE_REVIEWER_CMD unset). */
void fgw_run_step(const struct fgw *w, struct fgt_proc *p, const char *worker_body,
		  const char *reviewer_body, const char *const *extra);

/* Hands the whole tree R to uid 65534 and returns the wrapper (static, a
 * NULL-terminated argv prefix) that runs a program as that uid without any
 * capability: the entrypoint and its agents of one unprivileged uid, as in
 * a container (root would pass every permission check). Skips the test
 * when we are not root or have no setpriv. */
const char *const *fgw_as_nobody(struct fgw *w);

/* fgw_entrypoint() after the wrapper prefix wrap (a NULL-terminated argv
 * such as setpriv's, to run it as another uid; may be NULL). */
void fgw_entrypoint_as(const struct fgw *w, struct fgt_proc *p, const char *const *wrap,
		       const char *worker, const char *reviewer, const char *const *extra);

/* fgw_entrypoint() with a signaller (fge2e.h) for the agents: SIGDIR=R/sig,
 * their scripts hold FGE_OUTSIDE_KILL and call `outside_kill SIG PID`.
 * extra (may be NULL) must leave room for one more entry. */
void fgw_entrypoint_signalled(const struct fgw *w, struct fgt_proc *p, const char *worker,
			      const char *reviewer, const char *const *extra);

/* The environment every program fgw_spawn() starts gets before its own:
 * agents bounded, no inherited forge settings. */
extern const char *const FGW_BASE_ENV[];

/* Starts argv in its own process group with fork/exec (so a test can kill
 * it mid-run and read its peak RSS), stdout and stderr to R/stdout and
 * R/stderr, stdin from /dev/null, in R, with FGW_BASE_ENV then env applied
 * ("NAME=value" sets, "NAME" unsets, "-" clears the whole environment:
 * a run that must inherit nothing starts env with "-"). Returns its pid. */
pid_t fgw_spawn(const struct fgw *w, const char *const *argv, const char *const *env);
/* Waits up to timeout_s for pid (w->status, w->maxrss_kb, w->err); on
 * timeout kills its group and fails the test (with its stderr and log). */
void fgw_wait(struct fgw *w, pid_t pid, double timeout_s);
/* fgw_wait() that calls each(ctx) about every 100 ms while pid runs (to
 * sample it); each may be NULL. */
void fgw_wait_each(struct fgw *w, pid_t pid, double timeout_s, void (*each)(void *ctx), void *ctx);
/* Exit code of the last program, or 128 + its signal. */
int fgw_code(const struct fgw *w);
/* Reads the log file (JSON lines parsed when json) and the result file. */
void fgw_load(struct fgw *w, int json);
/* The log's JSON lines as they are now, an owned array (empty without a
 * log); for a test that watches a run still going. */
cJSON *fgw_log_events(const struct fgw *w);
/* The run id of the log's run_start event (owned), waiting up to timeout_s
 * for it; fails the test (with the log) when it does not come. */
char *fgw_wait_run_id(const struct fgw *w, double timeout_s);
/* Waits up to timeout_s for R/name to exist; fails the test (with the log
 * and stderr) when it does not. */
void fgw_wait_file(const struct fgw *w, const char *name, double timeout_s);
/* Fails the test when secret is in the log, the result, the stdout or the
 * stderr of the last run (a credential passed by name must stay out). */
void fgw_assert_secret_absent(const struct fgw *w, const char *secret);
/* Forgets the last run's outputs and removes its log and result files. */
void fgw_reset_run(struct fgw *w);

/* What a run of forge-runner on the tree takes beyond the tree; every
 * field may be left out (zero: the default). Given with designated
 * initializers, most simply through FGW_RUN(...):
 *   fgw_runner(&w, FGW_RUN(.worker = wk, .reviewer = rv, .env = env)); */
struct fgw_run_opts {
	const char *const *wrap;  /* an argv prefix (NULL-terminated), e.g. setpriv's */
	const char *ep;           /* --entrypoint; NULL: the real forge-entrypoint */
	const char *ep_sh;        /* instead of ep: R/ep.sh = this body (fgw_fake_entrypoint) */
	const char *fmt;          /* --log-format; NULL: "json" */
	const char *const *args;  /* arguments after the fixed ones (NULL-terminated) */
	const char *worker;       /* FORGE_WORKER_CMD; NULL: unset */
	const char *reviewer;     /* FORGE_REVIEWER_CMD; NULL: unset */
	const char *worker_sh;    /* instead of worker: R/worker.sh = this body (fgw_script) */
	const char *reviewer_sh;  /* instead of reviewer: R/reviewer.sh = this body */
	const char *const *env;   /* environment changes after the agents' (NULL-terminated) */
};
#define FGW_RUN(...) (&(const struct fgw_run_opts){ __VA_ARGS__ })

/*
 * Starts `forge-runner run` on the tree with fgw_spawn: after o->wrap,
 * --workspace, --step impl, --skill impl, --task-key ABC-12, --task-file,
 * --skills-dir, --entrypoint, --result, --log-format, --log-file,
 * --poll-interval 0.05, then o->args. The environment: the agents'
 * commands, LOG (the log file) and OUT for scripts, then o->env. o may be
 * NULL (every default). Returns its pid.
 */
pid_t fgw_runner_start(struct fgw *w, const struct fgw_run_opts *o);
/* fgw_runner_start(), then waits for the end (60 s) and loads the log and
 * the result (fgw_load; the log's JSON lines when the format is json). */
void fgw_runner(struct fgw *w, const struct fgw_run_opts *o);
/* Fails the test (with the log) unless the last run exited with code and,
 * for ncycles >= 0, its result holds ncycles cycles; returns them
 * (borrowed; NULL for ncycles < 0). */
const cJSON *fgw_assert_run(const struct fgw *w, int code, int ncycles);
/* The result file parsed (owned); fails the test, with the log, when it
 * is missing or not JSON. */
cJSON *fgw_result_json(const struct fgw *w);
/* The result's review_cycles (fails the test when there is no result). */
const cJSON *fgw_cycles(const struct fgw *w);

#endif
