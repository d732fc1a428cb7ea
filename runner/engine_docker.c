/*
 * engine_docker.c - the docker engine: the container base (engine_container.c)
 * with the docker CLI.
 */
#include "engine.h"

static int docker_build(const struct rn_engine_params *p, struct fg_strvec *argv, char *err,
			size_t errlen)
{
	return rn__container_build(p, NULL, argv, err, errlen);
}

const struct rn_engine_ops rn_engine_docker_ops = RN__CONTAINER_OPS("docker", docker_build, "DOCKER_HOST");
