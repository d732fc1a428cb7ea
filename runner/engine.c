/*
 * engine.c - the list of engines, the environment allowlist and the calls
 * that go through an engine's ops table (see engine.h).
 */
#include "engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/util.h"

#include "internal_util.h"

#define RN_ENV_PREFIX_FORGE "FORGE_"
#define RN_ENV_PREFIX_REVIEW "AUTO_REVIEW_"

/* Indexed by enum rn_engine_kind. */
static const struct rn_engine_ops *const engines[] = {
	[RN_ENGINE_LOCAL] = &rn_engine_local_ops,
	[RN_ENGINE_DOCKER] = &rn_engine_docker_ops,
	[RN_ENGINE_PODMAN] = &rn_engine_podman_ops,
	[RN_ENGINE_KUBERNETES] = &rn_engine_kubernetes_ops,
};

/* Settings that describe the host side; inside a container they would be
 * wrong (host paths) or meaningless. */
static const char *const runner_only[] = {
	"FORGE_ENGINE", "FORGE_IMAGE", "FORGE_ENTRYPOINT_BIN", "FORGE_REVIEW_RECORDING_DIR",
	"FORGE_WORKSPACE", "FORGE_SKILLS_DIR", "FORGE_TASK_FILE", "FORGE_RUN_ID",
	"FORGE_LOG_LEVEL", "AUTO_REVIEW_POLL_INTERVAL", "AUTO_REVIEW_RECORD_POLLED_FILES",
	"FORGE_MOUNT_LABEL", "FORGE_MEMORY", "FORGE_CPUS", "FORGE_PIDS_LIMIT", "FORGE_NETWORK",
	"FORGE_READ_ONLY_ROOTFS", "FORGE_ENGINE_CLI", "FORGE_KUBE_NAMESPACE", "FORGE_KUBE_CONTEXT",
	"FORGE_SEAL_KEY_STDIN", "FORGE_LIFELINE", "FORGE_TRACEPARENT", "FORGE_DEADLINE",
};

const struct rn_engine_ops *rn_engine_ops_of(enum rn_engine_kind k)
{
	return engines[k];
}

const char *rn_engine_name(enum rn_engine_kind k)
{
	return engines[k]->name;
}

int rn_engine_parse(const char *s, enum rn_engine_kind *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(engines); i++) {
		if (!strcmp(s, engines[i]->name)) {
			*out = (enum rn_engine_kind)i;
			return 0;
		}
	}
	return -EINVAL;
}

int rn_engine_env_is_runner_only(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(runner_only); i++)
		if (!strcmp(name, runner_only[i]))
			return 1;
	return 0;
}

static int is_name_char(char c)
{
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int rn_engine_env_name_check(const char *arg, char *err, size_t errlen)
{
	int valid = *arg && !(*arg >= '0' && *arg <= '9');

	if (strchr(arg, '=')) {
		rn__seterr(err, errlen, "option '--env' takes a variable NAME, not NAME=value "
			   "(the value is read from the environment)");
		return -EINVAL;
	}
	for (const char *s = arg; valid && *s; s++)
		valid = is_name_char(*s);
	if (!valid) {
		rn__seterr(err, errlen, "option '--env' takes a variable NAME "
			   "(letters, digits and '_', not starting with a digit)");
		return -EINVAL;
	}
	return 0;
}

char *rn_engine_exit_reason(const struct rn_engine_params *p, int exit_code)
{
	const struct rn_engine_ops *ops = rn_engine_ops_of(p->kind);

	return ops->exit_reason ? ops->exit_reason(p, exit_code) : NULL;
}

char *rn_engine_container_name(const char *run_id)
{
	return fg_xasprintf("forge-%s", run_id);
}

static int env_name_has(const char *entry, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(entry, name, n) && entry[n] == '=';
}

/* The runner's environment passed through, with FORGE_RUN_ID (and, when
 * given, FORGE_CYCLE_DIR, FORGE_TRACEPARENT and FORGE_DEADLINE) replaced,
 * and the seal's two variables set only for a sealed run. */
static void build_env(const struct rn_engine_params *p, struct fg_strvec *env)
{
	for (char *const *e = p->environ; e && *e; e++)
		if (!env_name_has(*e, "FORGE_RUN_ID") &&
		    !(p->cycle_dir && env_name_has(*e, "FORGE_CYCLE_DIR")) &&
		    !env_name_has(*e, "FORGE_SEAL_KEY_STDIN") && !env_name_has(*e, "FORGE_LIFELINE") &&
		    !env_name_has(*e, "FORGE_TRACEPARENT") && !env_name_has(*e, "FORGE_DEADLINE"))
			fg_strvec_push(env, *e);
	fg_strvec_pushf(env, "FORGE_RUN_ID=%s", p->run_id);
	if (p->sealed) {
		fg_strvec_push(env, "FORGE_SEAL_KEY_STDIN=1");
		fg_strvec_push(env, "FORGE_LIFELINE=stdin");
	}
	if (p->cycle_dir)
		fg_strvec_pushf(env, "FORGE_CYCLE_DIR=%s", p->cycle_dir);
	if (p->traceparent)
		fg_strvec_pushf(env, "FORGE_TRACEPARENT=%s", p->traceparent);
	if (p->deadline)
		fg_strvec_pushf(env, "FORGE_DEADLINE=%s", p->deadline);
}

int rn_engine_build(const struct rn_engine_params *p, struct fg_strvec *argv,
		    struct fg_strvec *env, char *err, size_t errlen)
{
	int r = rn_engine_ops_of(p->kind)->build(p, argv, err, errlen);

	if (r)
		return r;
	build_env(p, env);
	return 0;
}

int rn_engine_stop_argv(const struct rn_engine_params *p, int force, struct fg_strvec *argv)
{
	size_t n = argv->n;
	int r = rn_engine_ops_of(p->kind)->stop(p, force, argv);

	return r == 0 && argv->n > n ? 0 : -EINVAL;
}
