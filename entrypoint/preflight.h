/*
 * preflight.h - the checks `forge-entrypoint run` makes before the first
 * agent runs and before anything is created, cleared or written in the
 * workspace. Each failure is a configuration error: one line per problem
 * on stderr, exit 2.
 *
 *   1. Every role that will run (the worker; the reviewer when a review.md
 *      asks for review) has a command whose program resolves: a bare name
 *      in the PATH the agents get (ours), a name with '/' relative to the
 *      workspace (as execvp() in the workspace resolves it). A program name
 *      holding a placeholder ({workspace}/...) is checked after expanding
 *      {workspace}; other placeholders are not checked.
 *        cannot run worker 'claude': not found in PATH (the image needs
 *        Claude Code: see docs/guide/container-image.md)
 *   2. A role whose command is its preset's (FORGE_*_AGENT without
 *      FORGE_*_CMD) has that CLI's credentials (preset.h: a variable, a
 *      setting, or its login file); the message names the variables and
 *      the `forge-runner run --env NAME` that passes one into a container.
 *   3. The cycle directory (WORKSPACE/CYCLE_DIR), or the deepest part of it
 *      that exists, is a directory this process may write (effective uid
 *      and gid, a read-only mount included); the message names our
 *      uid:gid, the directory's owner and mode, and the two fixes: run as
 *      the owner (`--engine-arg --user=UID:GID`) or give the directory to
 *      us.
 * Every check runs (all problems are reported, not only the first).
 */
#ifndef EP_PREFLIGHT_H
#define EP_PREFLIGHT_H

#include <stdbool.h>

#include "task.h"

/* Runs the checks for t (borrowed); review: the reviewer will run.
 * Returns 0, or FG_EXIT_USAGE after printing every problem. */
int ep_preflight_run(const struct ep_task *t, bool review);

#endif
