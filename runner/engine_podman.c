/*
 * engine_podman.c - the podman engine: the container base (engine_container.c)
 * with the podman CLI, its service and its image store; its engine host is
 * found by engine_remote.c. Rootless podman maps the caller to root inside
 * the container's user namespace; --userns=keep-id maps it to itself
 * instead, so with --user UID:GID the files the container writes in the
 * workspace belong to the caller on the host. As root there is nothing to
 * keep (and p->uid is then the sandbox's non-root uid, not the caller's).
 */
#include "engine.h"

#include "forge/alloc.h"

static char *podman_image_missing(const char *image)
{
	return fg_xasprintf("image '%s' is not in podman's storage (podman does not see Docker's "
			    "images): load it with 'docker save %s | podman load', or build it with "
			    "'podman build -f docker/Dockerfile -t %s .' in the forge-review checkout",
			    image, image, image);
}

static const struct rn__container podman = { "--userns=keep-id", "service",
	"systemctl --user start podman.socket", "CONTAINER_HOST", podman_image_missing };

const struct rn_engine_ops rn_engine_podman_ops =
	RN__CONTAINER_OPS("podman", &podman, "CONTAINER_HOST", rn__podman_remote_host);
