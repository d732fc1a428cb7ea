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

#include "fgtest.h"

#define FGD_IMAGE "forge-review:test"

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

#endif
