/*
 * setup.h - the run's place before the worker starts, for the loop
 * (loop.h): the cycle directory below the workspace, an earlier run's
 * files cleared from it (--clear-stale), and the agents' box (sandbox.h)
 * with the operator's named paths granted and the `isolation` line and
 * event said.
 */
#ifndef EP_SETUP_H
#define EP_SETUP_H

#include <stddef.h>

#include "task.h"
#include "forge/isolation.h"

/*
 * *step_dir (owned by the caller, set in every case) becomes the
 * workspace's cycle directory, created one component at a time without
 * following a link; with the task's clear_stale, an earlier run's files in
 * it are cleared (a failure is a warning). 0, or FG_EXIT_USAGE after
 * saying why it cannot be created.
 */
int ep_setup_step_dir(const struct ep_task *t, char **step_dir);

/*
 * Sets up the agents' box with hidden[0..n) hidden (borrowed) and grants
 * read access to what the operator named (the skills directory, the
 * directories of absolute paths in the agent commands), then says it as
 * the `isolation` line and event; iso receives it. 0, or FG_EXIT_USAGE
 * (FORGE_REQUIRE_ISOLATION invalid, or 1 without a kernel sandbox, or the
 * box could not be set up).
 */
int ep_setup_box(const struct ep_task *t, const char *const *hidden, size_t n, struct fg_isolation *iso);

#endif
