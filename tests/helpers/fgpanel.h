/*
 * fgpanel.h - the fixture of the panel tests (tests/e2e/test_panel.c,
 * test_panel_findings.c): one forge-runner run --engine local with the
 * real entrypoint, a worker that changes the workspace every turn, and one
 * reviewer script for every role (FORGE_REVIEWER_ROLE) that saves what it
 * got and when it ran, the test's case statement between its head and tail.
 */
#ifndef FGPANEL_H
#define FGPANEL_H

#include <cjson/cJSON.h>

#include "fgtest.h"
#include "fgws.h"

struct fgp_spec {
	const char *review_md;     /* skills/default/impl/review.md */
	const char *role_files[4]; /* name, content pairs beside review.md */
	const char *reviewer;      /* the case statement */
	const char *const *env;    /* extra environment, NULL-terminated; may be NULL */
	const char *log_format;    /* the runner's --log-format; NULL: json */
};

struct fgp {
	struct fgw w;     /* the tree: ws, skills, task.json, work.sh, rev.sh, result, metrics */
	char *save;       /* R/save: what the agents saved */
	struct fgt_proc p;
	cJSON *res;
};

/* Lays out the tree for s (review.md, the role files, the agents) and runs
 * forge-runner on it; the result is loaded (it must exist). */
void fgp_run(struct fgp *t, const struct fgp_spec *s);

/* Removes the tree and frees what t holds. */
void fgp_release(struct fgp *t);

/* Fails the test (with the runner's stderr) unless the run exited with
 * code, its result's review_state is state (NULL: not checked) and it
 * holds cycles cycles (-1: not checked). */
void fgp_expect(const struct fgp *t, int code, const char *state, int cycles);

#define FGP_PANEL_MD(extra) \
	"---\nmax_retries: 3\n" extra "reviewers:\n  - role: correctness\n    instructions: correctness.md\n" \
	"  - role: security\n    instructions: roles/security.md\n---\nShared instructions.\n"

/* A reviewer case statement (spec.reviewer) in which the role whose on
 * ("$r", or "$r$n" for the role and the cycle) is match runs action and
 * every other role approves. */
#define FGP_ONLY(on, match, action) "case " on " in\n" match ") " action ";;\n*) shadow approve - -;;\nesac\n"
#define FGP_ROLE_FILES { "correctness.md", "Check the logic.\n", "roles/security.md", "Check the input handling.\n" }

#endif
