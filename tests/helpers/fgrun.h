/*
 * fgrun.h - the fixture of the runner tests with a scripted entrypoint
 * (tests/e2e/test_runner_cycles.c, test_stream.c, test_cli_run.c,
 * test_log_events.c): the tree with ws/README, R/ep.sh (FGE_FAKE_EP_HEAD +
 * the test's body) and one forge-runner run --engine local on it, its
 * result and JSON log loaded.
 */
#ifndef FGRUN_H
#define FGRUN_H

#include <cjson/cJSON.h>

#include "fgtest.h"
#include "fgws.h"

struct fgr {
	struct fgw w;    /* the tree: ws (README), ep.sh, runner.log, result.json */
	struct fgt_proc p;
	cJSON *res;
	cJSON *events;   /* the JSON log, line by line */
};

/* Creates the temp tree and the script. */
void fgr_init(struct fgr *r, const char *body);

/* Runs forge-runner on the prepared tree with extra args (NULL-terminated). */
void fgr_exec(struct fgr *r, const char *const *extra, const char *const *env);

/* fgr_init(r, body), then fgr_exec(r, extra, env). */
void fgr_run_script(struct fgr *r, const char *body, const char *const *extra, const char *const *env);

/* The result's review_cycles (borrowed; fails the test when it is not an
 * array). */
const cJSON *fgr_cycles(const struct fgr *r);

/* Removes the tree and frees what r holds. */
void fgr_release(struct fgr *r);

#endif
