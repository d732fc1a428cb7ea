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

const struct rn_engine_ops rn_engine_docker_ops = {
	.name = "docker",
	.cli = "docker",
	.build = docker_build,
	.stop = rn__container_stop,
	.stop_grace_ms = RN_CONTAINER_STOP_GRACE_MS,
	.kill_group_after_exit = 0,
	.reap_list = rn__container_reap_list,
	.reap_remove = rn__container_reap_remove,
	.exit_reason = rn__container_exit_reason,
	.workspace_local = rn__container_workspace_local,
	.env_by_name = 1,
	.hint = rn__container_hint,
};
