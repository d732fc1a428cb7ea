/*
 * fgrbox.h - the fixture of the tests of forge-runner run in a container
 * (tests/e2e/test_docker_*.c, test_podman.c): the tree opened to the
 * runner's user, the agents written beside it, forge-runner run --engine
 * CLI spawned with the test's arguments, and the assertions every such test
 * shares (owned files, no container left, the approved result).
 */
#ifndef FGRBOX_H
#define FGRBOX_H

#include <cjson/cJSON.h>
#include <sys/types.h>

#include "fgdocker.h"
#include "fgtest.h"
#include "fgws.h"

#define FGRB_STEP FGD_STEP

#define FGRB_SKILL FGD_SKILL

#define FGRB_STAND_IN_ID 4242

#define FGRB_ENGINE_SOCKET "/var/run/docker.sock"

#define FGRB_MAX_ARGS 48

#define FGRB_RUN_LIMIT_S 600

/* A per-test sandbox: the workspace fixture (fgws.h: ws, skills, out, the
 * runner's result.json, runner.log, stdout and stderr in the tree), opened
 * to the runner's user, and what the engine needs beside it. */
struct fgrb {
	struct fgw w;
	const char *cli;   /* "docker" or "podman" */
	char *token;       /* the credential passed with --env API_TOKEN */
	uid_t uid;         /* the runner's (and so the container's) user */
	gid_t gid;
	gid_t sock_gid;
	int drop;          /* start the runner as uid:gid */
	const struct fgd_user *as;  /* rootless podman: the runner runs as this user */
	char *conf;        /* podman: CONTAINERS_CONF (test setup for this machine) */
	char *volume;      /* owned: the named volume used instead of ws, or NULL */
	const char *worker_output;  /* FORGE_WORKER_OUTPUT for the run, or NULL */
	const char *reviewer_output;  /* FORGE_REVIEWER_OUTPUT for the run, or NULL */
	const char *const *env;     /* more NAME=value for the runner, or NULL */
};

/* as: rootless podman's user, or NULL. */
void fgrb_init_as(struct fgrb *b, const char *cli, const struct fgd_user *as,
			const char *review_md);

/* fgrb_init_as() as the test (no podman user). */
void fgrb_init(struct fgrb *b, const char *cli, const char *review_md);

/* Removes the run's named volume (if any) and the tree, and frees what b
 * holds. */
void fgrb_release(struct fgrb *b);

/* ws/agents/file = script, executable (the container runs it from the
 * workspace). */
void fgrb_agent(struct fgrb *b, const char *file, const char *script);

/* box_agent() with an owned script, freed here. */
void fgrb_agent_take(struct fgrb *b, const char *file, char *script);

/*
 * Starts forge-runner run for the box in its own process group (fgw_spawn),
 * as the box's user (setpriv), with a clean environment: PATH, HOME, the
 * agent commands, API_TOKEN, and extra options (NULL-terminated).
 */
pid_t fgrb_spawn(struct fgrb *b, const char *const *extra);

/* Waits for the runner; its exit code, or 128+N when killed by signal N.
 * Past RUN_LIMIT_S its group is killed and the test fails. */
int fgrb_wait(struct fgrb *b, pid_t pid);

/* j's string member key (borrowed), or "" when it is not a string. */
const char *fgrb_jstr(const cJSON *j, const char *key);

/* j's number member key (fails the test when it is not a number). */
double fgrb_jnum(const cJSON *j, const char *key);

/* The result file parsed (owned; fails the test, with the log, when it is
 * missing or not JSON). */
cJSON *fgrb_result(const struct fgrb *b);

/* Fails the test when the engine still lists the container of run_id. */
void fgrb_assert_no_container(const struct fgrb *b, const char *run_id);

/* A run's close: fails the test when the container of res's run_id is
 * still listed or the box's secret is in a file or the log; then frees res
 * and ev (both transferred, ev may be NULL) and releases b. */
void fgrb_finish(struct fgrb *b, cJSON *res, cJSON *ev);

/* Every entry of .forge/STEP and the workspace files the agents wrote. */
void fgrb_assert_files_owned(const struct fgrb *b);

/* A worker that appends a line to work.log each turn. */
extern const char FGRB_WORKER_APPEND[];

/* A reviewer that rejects cycle 1 and approves cycle 2. */
extern const char FGRB_REVIEWER_REJECT_THEN_APPROVE[];

/* Fails the test unless the log reports cycles 1 and 2, each once, from the
 * watch. */
void fgrb_check_cycle_events(const cJSON *ev, const struct fgrb *b);

/* Fails the test unless res is the approved result of a two-cycle docker
 * run. */
void fgrb_check_result_approved(const cJSON *res);

/* ---- limits, hardening, arbitrary uids ---- */

/* What the container's processes are held to, as the kernel says it (cgroup
 * v2 first, then v1), written to limits.txt in the workspace. */
extern const char FGRB_PROBE[];

/* A reviewer that approves at once. */
extern const char FGRB_REVIEWER_APPROVES[];

/* Fails the test unless the worker's ws/limits.txt holds every line of want
 * (NULL-terminated). */
void fgrb_assert_probe(const struct fgrb *b, const char *const want[]);

/* Runs the box with extra and returns its result (owned), failing the test
 * unless it exited 0, approved in cycles cycles. */
cJSON *fgrb_run_approved(struct fgrb *b, const char *const *extra, int cycles);

/* ---- the stream: frames on the container's stderr ---- */

/* Number of events named name whose string key equals val. */
int fgrb_count_events(const cJSON *events, const char *name, const char *key, const char *val);

/* The result's cycles_by_source count of source. */
int fgrb_by_source(const cJSON *res, const char *source);

/* Copies the box's workspace into the volume (owned by the box's user)
 * and plants a stale cycle file of an earlier run there. */
void fgrb_fill_volume(struct fgrb *b);

/* The two-cycle loop on a named volume with engine cli: reported by the
 * stream alone. */
void fgrb_volume_run(const char *cli);

#endif
