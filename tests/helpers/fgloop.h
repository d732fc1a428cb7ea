/*
 * fgloop.h - the fixture of the tests of the loop's memory and of
 * forge-runner report (tests/e2e/test_loop_memory.c, test_report.c): one
 * forge-runner run --engine local with the real entrypoint on a tree of
 * its own, a worker that saves its prompts and changes the workspace every
 * turn, and a reviewer whose body the test gives (after a head that saves
 * its prompts and defines `shadow TITLE`, a report with a JSON block of
 * two findings).
 */
#ifndef FGLOOP_H
#define FGLOOP_H

#include <cjson/cJSON.h>

#include "fgtest.h"
#include "fgws.h"

#define FGL_TASK_SUMMARY "Add a parser"

#define FGL_TASK_DESCRIPTION "Write src/parse.c with tests."

struct fgl_spec {
	const char *step;
	const char *task_key;
	const char *review_md;    /* content of skills/default/impl/review.md */
	const char *reviewer;     /* shell after FGL_REVIEWER_HEAD */
	const char *const *env;   /* extra changes, NULL-terminated; may be NULL */
};

struct fgl {
	struct fgw w;     /* the tree: ws (README.md), skills, task.json, work.sh, rev.sh, result */
	char *save;       /* R/save: what the agents saved */
	const struct fgl_spec *s;
	struct fgt_proc p;
	cJSON *res;
};

/* dir/name (owned). */
char *fgl_in_dir(const char *dir, const char *name);

/* Lays out the tree for s (s borrowed, kept in l) and runs it; the result is
 * loaded. */
void fgl_run(struct fgl *l, const struct fgl_spec *s);

/* Removes the tree and frees what l holds. */
void fgl_release(struct fgl *l);

/* The result's review_cycles (borrowed; fails the test when it is not an
 * array). */
const cJSON *fgl_cycles(const struct fgl *l);

/* The same plain feedback every cycle, its whitespace varied. */
extern const char *FGL_REPEATING_REVIEWER;

#endif
