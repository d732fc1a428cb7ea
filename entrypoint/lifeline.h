/*
 * lifeline.h - what the runner hands the entrypoint on its standard input
 * (docs/security.md, docs/reference/environment.md):
 *
 *   - FORGE_SEAL_KEY_STDIN=1: the first line of stdin is the run's seal key,
 *     64 lowercase hex digits and "\n" (forge/seal.h). It is read one byte
 *     at a time (nothing past the line is consumed), before the task is
 *     loaded and so before any agent exists, and lives only in this
 *     process's memory. Without the variable the records are unsealed: said
 *     once, at the start, and the run goes on as before.
 *   - FORGE_LIFELINE=stdin: end of file on that stdin means the runner died:
 *     the entrypoint stops as on the runner's SIGTERM (agents stopped,
 *     summary written, exit 143). The descriptor is moved above 2
 *     (close-on-exec, non-blocking) and fd 0 becomes /dev/null, so no agent
 *     inherits it. When not PID 1 (the local engine) PR_SET_PDEATHSIG
 *     (SIGTERM) is asked for too. Without the variable stdin means nothing:
 *     a container started by hand with an empty stdin is not stopped by it.
 */
#ifndef EP_LIFELINE_H
#define EP_LIFELINE_H

#include <stdbool.h>

#include "forge/seal.h"

/* Reads the key and sets up the lifeline as the environment says. 0, or
 * FG_EXIT_USAGE after an error message (the key was asked for and stdin
 * did not give one within 120 s). */
int ep_lifeline_setup(void);

/* The run's seal key, or NULL: records are unsealed. */
const struct fg_seal_key *ep_seal_key(void);

/* The lifeline was set up and its end of file seen (checked now, without
 * blocking; once seen, stays true). */
bool ep_lifeline_lost(void);

#endif
