/*
 * fgagent.h - the fixture of the agent-preset and usage tests
 * (tests/e2e/test_agent_presets.c, test_agent_usage.c): stand-in claude
 * and codex CLIs in R/bin, first on PATH, and one forge-runner run --engine
 * local with the real entrypoint, its result and log loaded.
 */
#ifndef FGAGENT_H
#define FGAGENT_H

#include <cjson/cJSON.h>

#include "fgtest.h"
#include "fgws.h"

/* The head of a stand-in claude (the body follows): n is this role's call
 * number, stdin is drained (the preset closes it after the prompt), the
 * arguments are saved to R/args.ROLE, the worker does work (FGW_WORKS);
 * init prints the stream's init line and result IS_ERROR TEXT COST
 * OUTPUT_TOKENS its result. */
extern const char FGA_STANDIN_HEAD[];

struct fga {
	struct fgw w;       /* the tree: ws, skills, bin (the stand-in CLIs), result, metrics, log */
	struct fgt_proc p;
	cJSON *result;
	char *logtext;      /* the runner's log: the entrypoint's stderr is in it */
};

/* The tree, skills/default/impl/review.md = review_md, and R/bin/claude =
 * FGA_STANDIN_HEAD + standin_body. */
void fga_init(struct fga *l, const char *review_md, const char *standin_body);

/* forge-runner run --engine local with the presets (claude for both roles)
 * and test keys, then extra_env (its names first win); loads the result and
 * the log (both must exist). */
void fga_run(struct fga *l, const char *const *extra_env);

/* Removes the tree and frees what l holds. */
void fga_release(struct fga *l);

/* fga_run(), then fails the test (with the log) unless the runner exited
 * with code. */
void fga_run_exit(struct fga *l, const char *const *extra_env, int code);

/* dir/name (the test's root), read; owned, "" when absent. */
char *fga_read(const struct fga *l, const char *name);

/* The step directory's file name parsed (owned; fails the test, with the
 * log, when it is missing or not JSON). */
cJSON *fga_json(const struct fga *l, const char *name);

/* o's number member k (fails the test when it is not a number). */
double fga_num(const cJSON *o, const char *k);

/* o.a.b (borrowed), or NULL. */
const cJSON *fga_path2(const cJSON *o, const char *a, const char *b);

#endif
