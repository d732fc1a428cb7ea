/*
 * engine_docker.c - the docker engine: the container base (engine_container.c)
 * with the docker CLI, its daemon and its image store; its engine host is
 * found by engine_remote.c.
 */
#include "engine.h"

#include "forge/alloc.h"

static char *docker_image_missing(const char *image)
{
	return fg_xasprintf("image '%s' is not on this host: build it with 'docker build -f "
			    "docker/Dockerfile -t %s .' in the forge-review checkout "
			    "(docs/guide/container-image.md)", image, image);
}

/* No user namespace to keep: dockerd maps nothing by default. */
static const struct rn__container docker = { NULL, "daemon", "sudo systemctl start docker",
	"DOCKER_HOST and your membership of the docker group", docker_image_missing };

const struct rn_engine_ops rn_engine_docker_ops =
	RN__CONTAINER_OPS("docker", &docker, "DOCKER_HOST", rn__docker_remote_host);
