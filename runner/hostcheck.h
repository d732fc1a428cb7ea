/*
 * hostcheck.h - what the runner can check on the host before anything runs,
 * so that a wrong setup ends at once with exit 2 and the fix, not after the
 * agents ran (and cost money):
 *   - the local engine's skills directory (--skills-dir, else
 *     FORGE_SKILLS_DIR, else /skills, as the entrypoint picks it) must be a
 *     directory when the entrypoint is forge-entrypoint (which exits 2
 *     without one): "pass --skills-dir DIR";
 *   - with --require-review (AUTO_REVIEW_REQUIRED=1) the skill must have a
 *     review.md there (resolve.h), when the runner can see the skills
 *     (the local engine, or --skills-dir for a container); the entrypoint
 *     gets AUTO_REVIEW_REQUIRED=1 and checks again where the runner cannot
 *     see (a container's own /skills);
 *   - a container engine's agent commands (FORGE_WORKER_CMD,
 *     FORGE_REVIEWER_CMD) must not name a path of this host the container
 *     cannot see: an absolute path that exists here under the workspace,
 *     the skills directory, a home or a temporary directory ("use
 *     {workspace}/REL, or put it in the image").
 */
#ifndef RN_HOSTCHECK_H
#define RN_HOSTCHECK_H

#include <stddef.h>

#include "run.h"

/*
 * Runs the checks for c with the skill and task key (may be NULL) the
 * entrypoint will use. 0, or -EINVAL with err filled (one line, for
 * rn_usage()). Sets AUTO_REVIEW_REQUIRED=1 in the environment when
 * c->require_review, so the sandbox gets it.
 */
int rn_hostcheck(const struct rn_run_config *c, const char *skill, const char *task_key, char *err,
		 size_t errlen);

#endif
