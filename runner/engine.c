/*
 * engine.c - the list of engines (the one place that names them), the
 * environment allowlist, and the calls that go through an engine's ops
 * table (see engine.h).
 */
#include "engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/util.h"

#include "internal_util.h"

#define RN_ENV_PREFIX_FORGE "FORGE_"
#define RN_ENV_PREFIX_REVIEW "AUTO_REVIEW_"

/* The engines, in the order --help names them: a new engine is one entry
 * here (its table is rn_engine_<name>_ops, in engine_<name>.c). */
#define RN_ENGINE_LIST(X) X(local) X(docker) X(podman) X(kubernetes)

#define RN_ENGINE_DECLARE(n) extern const struct rn_engine_ops rn_engine_##n##_ops;
RN_ENGINE_LIST(RN_ENGINE_DECLARE)
#define RN_ENGINE_ENTRY(n) &rn_engine_##n##_ops,
static const struct rn_engine_ops *const engines[] = { RN_ENGINE_LIST(RN_ENGINE_ENTRY) };
#define RN_ENGINE_NAME(n) #n,
static const char *const engine_names[] = { RN_ENGINE_LIST(RN_ENGINE_NAME) };

/* Settings that describe the host side; inside a container they would be
 * wrong (host paths) or meaningless. The environment twins of the engines'
 * own options are too (rn_engine_env_is_runner_only() reads their tables). */
static const char *const runner_only[] = {
	"FORGE_ENGINE", "FORGE_IMAGE", "FORGE_ENTRYPOINT_BIN", "FORGE_REVIEW_RECORDING_DIR",
	"FORGE_WORKSPACE", "FORGE_SKILLS_DIR", "FORGE_TASK_FILE", "FORGE_RUN_ID",
	"FORGE_LOG_LEVEL", "AUTO_REVIEW_POLL_INTERVAL", "AUTO_REVIEW_RECORD_POLLED_FILES",
	"FORGE_ENGINE_CLI", "FORGE_SEAL_KEY_STDIN", "FORGE_LIFELINE", "FORGE_TRACEPARENT", "FORGE_DEADLINE",
};

const struct rn_engine_ops *rn_engine_find(const char *name)
{
	int i = FG_NAME_INDEX(engine_names, name, 0);

	return i < 0 ? NULL : engines[i];
}

const struct rn_engine_ops *rn_engine_at(size_t i)
{
	return i < ARRAY_SIZE(engines) ? engines[i] : NULL;
}

const char *rn_engine_names(char *out, size_t outlen, const char *last,
			    int (*pick)(const struct rn_engine_ops *ops, const void *arg), const void *arg)
{
	size_t n = 0, k = 0, len = 0;

	for (size_t i = 0; i < ARRAY_SIZE(engines); i++)
		n += !pick || pick(engines[i], arg);
	if (outlen)
		out[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(engines) && len < outlen; i++) {
		if (pick && !pick(engines[i], arg))
			continue;
		len += (size_t)snprintf(out + len, outlen - len, "%s%s%s%s", !k ? "" : k + 1 == n ? " " : ", ",
					k && k + 1 == n ? last : "", k && k + 1 == n ? " " : "", engines[i]->name);
		k++;
	}
	return out;
}

int rn_engine_takes(const struct rn_engine_ops *ops, const struct rn_engine_opts *s)
{
	for (const struct rn_engine_opts *const *o = ops->opts; o && *o; o++)
		if (*o == s)
			return 1;
	return 0;
}

int rn_engine_env_is_runner_only(const char *name)
{
	if (FG_NAME_INDEX(runner_only, name, 0) >= 0)
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(engines); i++)
		for (const struct rn_engine_opts *const *s = engines[i]->opts; s && *s; s++)
			for (const struct fg_opt *o = (*s)->table; o->name; o++)
				if (o->env && !strcmp(name, o->env))
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
	return p->ops->exit_reason ? p->ops->exit_reason(p, exit_code) : NULL;
}

char *rn_engine_remote_host(const struct rn_engine_params *p)
{
	return p->ops->remote_host ? p->ops->remote_host(p) : NULL;
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
	int r = p->ops->build(p, argv, err, errlen);

	if (r)
		return r;
	build_env(p, env);
	return 0;
}

int rn_engine_stop_argv(const struct rn_engine_params *p, int force, struct fg_strvec *argv)
{
	size_t n = argv->n;
	int r = p->ops->stop(p, force, argv);

	return r == 0 && argv->n > n ? 0 : -EINVAL;
}
