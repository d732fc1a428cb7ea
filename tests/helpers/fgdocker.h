/*
 * fgdocker.h - helpers for the tests that need a real container engine.
 *
 * Protocol: fgd_ensure_image() first (it skips the test, saying why, when no
 * engine answers), then fgd_cli() for engine commands. Every container test
 * builds FGD_IMAGE from docker/Dockerfile through fgd_ensure_image() (same
 * tag, same arguments), so whichever test runs first builds it and the others
 * find the layers cached.
 */
#ifndef FGDOCKER_H
#define FGDOCKER_H

#include <sys/types.h>

#include "fgtest.h"
#include "fgws.h"

#define FGD_IMAGE_DEFAULT "forge-review:test"
/* The test image's tag: $FGD_IMAGE when set (engineers sharing one engine
 * each build their own tag), else FGD_IMAGE_DEFAULT. */
#define FGD_IMAGE fgd_image()
const char *fgd_image(void);

/* The step and skill of the container tests, and their task (key DEMO-1:
 * append a line to work.log). */
#define FGD_STEP "implement_task"
#define FGD_SKILL "implement-task"
extern const char FGD_TASK[];

/*
 * The workspace fixture (fgws.h) for a container test: fgw_init(), the
 * tree opened to uid:gid (fgw_share: the container's user must get through
 * the 0700 of mkdtemp to the mounts), skills/default/FGD_SKILL/review.md =
 * review_md and R/task = FGD_TASK (task: where the container reads it, e.g.
 * "agents/task.json" for a mount). fgw_release() removes it.
 */
void fgd_workspace(struct fgw *w, uid_t uid, gid_t gid, const char *task, const char *review_md);

/* Owned path of program name found in PATH, or NULL. */
char *fgd_which(const char *name);

/* Runs the engine CLI cli ("docker", "podman") with args (NULL-terminated)
 * through fgt_run(); fails the test when the CLI cannot be started. The
 * caller releases p. */
void fgd_cli(struct fgt_proc *p, const char *cli, const char *const args[], double timeout_s);

/* Skips the test (cr_skip, with the reason) unless cli is in PATH and
 * "cli info" succeeds. */
void fgd_skip_without_engine(const char *cli);

/* Skips without a docker engine; else makes sure tag is built from the
 * current docker/Dockerfile (offline bases via docker/build-base.sh when
 * running as root, cached layers otherwise). Fails the test if a build fails. */
void fgd_ensure_image(const char *tag);

/* 1 if "cli ps -a" lists a container named exactly name, else 0. */
int fgd_container_listed(const char *cli, const char *name);

/* ---- podman, as root and rootless ---- */

/* The unprivileged user the rootless podman tests run as. */
#define FGD_ROOTLESS_USER "forge-rootless"

struct fgd_user {
	char name[64];
	uid_t uid;
	gid_t gid;
	char home[256];
};

/*
 * Writes DIR/containers.conf for podman (mode 0644) and returns its owned
 * path, to be passed as CONTAINERS_CONF. This is test setup for THIS
 * machine, not product behaviour: its sandbox refuses raising
 * RLIMIT_NOFILE/RLIMIT_NPROC (podman's default ulimits make runc fail) and,
 * rootless, has no /dev/net/tun for slirp4netns. So: default_ulimits = []
 * and, when rootless, netns = "none".
 */
char *fgd_podman_conf(const char *dir, int rootless);

/*
 * Skips without podman (or when "podman info" fails with conf). The
 * rootless user FGD_ROOTLESS_USER: reused when it exists; created (useradd,
 * with subuid/subgid ranges) only under CI=true or FORGE_TEST_ROOTLESS=1,
 * which also forbid a skip (the test fails instead); otherwise the test is
 * skipped, saying how to opt in. Needs root (to create and switch to it).
 */
void fgd_rootless_user(struct fgd_user *u);

/*
 * Runs podman with args as user u (NULL: as we are) with CONTAINERS_CONF=conf
 * and the user's HOME (its image store). The caller releases p.
 */
void fgd_podman(struct fgt_proc *p, const struct fgd_user *u, const char *conf,
		const char *const args[], double timeout_s);

/* Makes sure podman (as u, NULL: as we are) holds FGD_IMAGE as docker built
 * it (same image id): else docker save | podman load. Call after
 * fgd_ensure_image(). */
void fgd_podman_ensure_image(const struct fgd_user *u, const char *conf);

/* 1 if podman (as u) lists a container named exactly name. */
int fgd_podman_listed(const struct fgd_user *u, const char *conf, const char *name);

#endif
