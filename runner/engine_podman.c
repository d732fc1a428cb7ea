/*
 * engine_podman.c - the podman engine: the container base (engine_container.c)
 * with the podman CLI. Rootless podman maps the caller to root inside the
 * container's user namespace; --userns=keep-id maps it to itself instead,
 * so with --user UID:GID the files the container writes in the workspace
 * belong to the caller on the host. As root there is nothing to keep (and
 * p->uid is then the sandbox's non-root uid, not the caller's).
 */
#include "engine.h"

static int podman_build(const struct rn_engine_params *p, struct fg_strvec *argv, char *err,
			size_t errlen)
{
	return rn__container_build(p, !p->runner_root ? "--userns=keep-id" : NULL, argv, err, errlen);
}

const struct rn_engine_ops rn_engine_podman_ops = RN__CONTAINER_OPS("podman", podman_build, "CONTAINER_HOST");
