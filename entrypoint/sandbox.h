/*
 * sandbox.h - the box every agent and check runs in: a Landlock ruleset
 * (the kernel's unprivileged sandbox) applied in the child after fork and
 * before exec, and, when the entrypoint is uid 0, an unprivileged uid.
 *
 * What an agent may do under the ruleset (docs/security.md, "The box"):
 *   - read and run the system: each entry of "/" is granted one by one
 *     (read, list, execute), except the directories that hold a hidden
 *     path: those are entered and their entries granted one by one in
 *     turn, so a hidden path itself (the entrypoint's private directory,
 *     the base of the agents' prompt directories) is never granted and
 *     cannot be opened at all. /dev is not granted as a whole: only
 *     /dev/null, zero, full, random, urandom, tty, ptmx, /dev/pts and
 *     /dev/shm are;
 *   - write (every right: create, remove, rename, truncate) only beneath its
 *     working directory (the workspace) and the HOME and TMPDIR its final
 *     environment names (and, test-only, FORGE_TEST_AGENT_WRITE_DIR). A
 *     write grant that is, or holds, a hidden path is withheld (a warning
 *     says so once per path);
 *   - read its own prompt directory (ep_box_prepare()'s read_dir);
 *   - with ABI 6 and later, signal or connect to an abstract UNIX socket of
 *     no process outside its own Landlock domain: not the entrypoint, not a
 *     panel helper, not another agent.
 * The network is not restricted (agents call their vendors' APIs).
 * Rights an older ABI lacks are masked out (REFER from 2, TRUNCATE from 3,
 * IOCTL_DEV from 5, scopes from 6), as the kernel's sandboxer sample does.
 *
 * Protocol:
 *   1. ep_sandbox_setup() once, before any agent, with the hidden paths:
 *      probes the ABI (FORGE_TEST_LANDLOCK_ABI caps it, test-only: 0 is
 *      "no Landlock"), opens the read grants once (entries that appear in
 *      those directories later are not granted), decides the agents' uid,
 *      fills the isolation object;
 *   2. per agent start, in the parent: ep_box_prepare() builds the
 *      ruleset for that agent (its working directory, HOME, TMPDIR and
 *      prompt directory);
 *   3. in the forked child, before exec: ep_box_enter() (async-signal-safe
 *      system calls only);
 *   4. in the parent, after the fork: ep_box_release().
 * Without ep_sandbox_setup() (the unit tests of agent.h) steps 2 to 4 do
 * nothing and agents run as before. Loop thread only.
 */
#ifndef EP_SANDBOX_H
#define EP_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "forge/isolation.h"

/* Hidden paths ep_sandbox_setup() takes at most. */
#define EP_SANDBOX_HIDDEN_MAX 4

/* One agent's box, built by ep_box_prepare(). */
struct ep_box {
	int ruleset_fd;   /* -1: no Landlock */
	bool drop;        /* switch to uid/gid before exec */
	uid_t uid;
	gid_t gid;
};

/*
 * Step 1. hidden[0..n) are absolute paths of existing directories the
 * agents must not open (borrowed; n <= EP_SANDBOX_HIDDEN_MAX); workspace is
 * the agents' working directory (its owner is the uid agents get when we
 * are uid 0). Fills *iso. Returns 0, or a negative errno when a hidden path
 * is the workspace or holds it (no agent could be boxed: a configuration
 * error, said once). Landlock being refused is not an error here: iso says
 * "none" and why.
 */
int ep_sandbox_setup(const char *const *hidden, size_t n, const char *workspace, struct fg_isolation *iso);

/*
 * Step 1b. Grants every later box read and execute on path (resolved), a
 * place the operator named (the skills directory, the directory of a
 * program or script an agent command names) that the system's grants may
 * leave out: nothing in the directory the hidden paths were made in
 * ($TMPDIR: /tmp) is granted otherwise, so a checkout or a skills
 * directory under /tmp could not run. A path that holds or is inside a
 * hidden one, or does not exist, is skipped. No-op before step 1 or
 * without Landlock.
 */
void ep_sandbox_grant_read(const char *path);

/* The isolation object of step 1 (known false before it). Borrowed. */
const struct fg_isolation *ep_sandbox_isolation(void);

/* Releases what step 1 opened (the read grants' descriptors). */
void ep_sandbox_release(void);

/*
 * Step 2 for an agent started in cwd with the environment envp (both
 * borrowed) and allowed to read read_dir (may be NULL). 0 with b filled
 * (ruleset_fd -1 and drop false without step 1 or without Landlock), or a
 * negative errno: then the agent must not start.
 */
int ep_box_prepare(struct ep_box *b, const char *cwd, char *const *envp, const char *read_dir);

/* An empty box (no ruleset, no uid switch), for the entrypoint's own
 * tools. Returns 0. */
int ep_box_none(struct ep_box *b);

/* Step 3, in the child: drops to the agents' uid when b says so, sets
 * PR_SET_NO_NEW_PRIVS and restricts itself. 0 or a negative errno (the
 * child must then not exec). */
int ep_box_enter(const struct ep_box *b);

/* Step 4: closes the ruleset descriptor. */
void ep_box_release(struct ep_box *b);

#endif
