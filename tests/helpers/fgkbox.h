/*
 * fgkbox.h - the fixture of the tests of forge-runner run --engine
 * kubernetes (tests/e2e/test_kubernetes_*.c): kubectl, the cluster's
 * presence (a skip with the reason without one), the tree and its claim,
 * the runner spawned with the test's arguments and sampled while it runs,
 * and the assertions they share (nothing left, the secret absent, the
 * approved run).
 */
#ifndef FGKBOX_H
#define FGKBOX_H

#include <cjson/cJSON.h>
#include <sys/types.h>

#include "fgtest.h"
#include "fgws.h"

#define STEP FGD_STEP

#define SKILL FGD_SKILL

#define FGKB_MAX_ARGS 48

#define RUN_LIMIT_S 400

/* The demo's scripted agents, shipped in the image (docker/Dockerfile). */
#define FGKB_DEMO_AGENTS "/usr/local/share/forge-review/examples/agents"

/* A per-test sandbox: the workspace fixture (fgws.h: ws, the claim's
 * directory, skills, task.json, out, the runner's result.json, runner.log,
 * stdout and stderr) and what the cluster and the figures need beside it. */
struct fgkb {
	struct fgw w;
	char *token, *claim;
	const char *image;
	const char *step;
	const char *engine;   /* NULL: kubernetes; "docker" for the figures beside it */
	int demo;             /* the shipped demo: its workspace, the image's agents and skills */
	pid_t pid;
	pid_t child;          /* the kubernetes-job child, once seen */
	long child_rss_max_kb;
	double t_spawn;
	long rss_max_kb;
	int samples;          /* of the runner's RSS, while wait_runner waits */
};

/* Seconds since the epoch (CLOCK_REALTIME). */
double fgkb_now_s(void);

/* The program name found in PATH (owned), or the test fails. */
char *fgkb_which(const char *name);

/* kubectl ARGS... (NULL-terminated), its output captured; fails on a start error. */
void fgkb_kubectl(struct fgt_proc *p, const char *const args[], const char *input);

/* Skips the test, saying why, when there is no cluster: FORGE_K8S_NO_CLUSTER
 * set (scripts/test.sh's reason), KUBECONFIG unset, or /readyz failing. */
void fgkb_skip_without_cluster(void);

/* Skips without a cluster; else the tree (fgd_workspace) with review_md,
 * its workspace writable by group 0, and a claim of its own. */
void fgkb_init(struct fgkb *b, const char *review_md);

/* Deletes the claim and its volume, removes the tree, frees what b holds. */
void fgkb_release(struct fgkb *b);

/* ws/agents/file = script, executable. */
void fgkb_agent(struct fgkb *b, const char *file, const char *script);

/* forge-runner run --engine kubernetes for the box, in its own process
 * group (fgw_spawn), with a clean environment and extra options
 * (NULL-terminated). */
void fgkb_spawn(struct fgkb *b, const char *const *extra);

/* pid's resident set (VmRSS, KiB), or 0 when it cannot be read. */
long fgkb_rss_kb(pid_t pid);

/* The runner's exit code (128+N for signal N); its RSS sampled meanwhile.
 * Past RUN_LIMIT_S its group is killed and the test fails. */
int fgkb_wait(struct fgkb *b);

/* The result file parsed (owned; fails the test, with the log, when it is
 * missing or not JSON). */
cJSON *fgkb_result(const struct fgkb *b);

/* The objects of the run still on the cluster (`kind/name` lines, owned). */
char *fgkb_leftovers(const char *run_id);

/* Checked at once: the runner promises the objects are gone when it exits. */
void fgkb_assert_nothing_left(const char *run_id);

/* A worker that appends a line to work.log each turn. */
extern const char FGKB_WORKER_APPEND[];

/* A reviewer that approves at once. */
extern const char FGKB_REVIEWER_APPROVE[];

/* The review.md of the two-cycle demo. */
extern const char FGKB_REVIEW_MD[];

/* The pid of the first process whose command line holds every one of the
 * words (NULL-terminated), or -1. */
pid_t fgkb_find_process(const char *const *words);

#endif
