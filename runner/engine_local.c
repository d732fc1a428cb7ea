/*
 * engine_local.c - the local engine: forge-entrypoint as a child process,
 * stopped by signalling its process group (see engine.h), and where that
 * binary is found. It has no options of its own.
 */
#include "engine.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/fsutil.h"
#include "forge/util.h"

static int local_build(const struct rn_engine_params *p, struct fg_strvec *argv, char *err,
		       size_t errlen)
{
	(void)err;
	(void)errlen;
	fg_strvec_push(argv, p->program);
	fg_strvec_push(argv, "run");
	fg_strvec_push_opt(argv, "--workspace", p->workspace);
	fg_strvec_push_opt(argv, "--skills-dir", p->skills_dir);
	fg_strvec_push_opt(argv, "--step", p->step);
	fg_strvec_push_opt(argv, "--skill", p->skill);
	fg_strvec_push_opt(argv, "--task-key", p->task_key);
	fg_strvec_push_opt(argv, "--task-file", p->task_file);
	return 0;
}

/* The entrypoint stops its agents on SIGTERM; SIGKILL when it does not end. */
static int local_stop(const struct rn_engine_params *p, int force, struct fg_strvec *argv)
{
	(void)p;
	(void)argv;
	return force ? SIGKILL : SIGTERM;
}

static int local_workspace(const struct rn_engine_params *p)
{
	(void)p;
	return 1;
}

const struct rn_engine_ops rn_engine_local_ops = {
	.name = "local",
	.cli = NULL,
	.host_fs = 1,
	.build = local_build,
	.stop = local_stop,
	.stop_grace_ms = RN_LOCAL_STOP_GRACE_MS,
	.kill_group_after_exit = 1,
	.reap_list = NULL,
	.reap_remove = NULL,
	.exit_reason = NULL,
	.workspace_local = local_workspace,
	.env_by_name = 0,
};

static int is_executable(const char *path)
{
	return access(path, X_OK) == 0;
}

/* Directory of the running executable, owned, or NULL. */
static char *self_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	char *dir = NULL;

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	/* The link is absolute, so there is always a directory part. */
	if (buf[0] != '/' || fg_path_split(buf, &dir, NULL))
		return NULL;
	return dir;
}

char *rn_engine_find_entrypoint(const char *explicit_path)
{
	static const char *const candidates[] = {
		"forge-entrypoint", "../entrypoint/forge-entrypoint",
	};
	char *dir;

	if (explicit_path && *explicit_path)
		return fg_xstrdup(explicit_path);
	dir = self_dir();
	for (size_t i = 0; dir && i < ARRAY_SIZE(candidates); i++) {
		char *path = fg_path_join(dir, candidates[i]);

		if (is_executable(path)) {
			free(dir);
			return path;
		}
		free(path);
	}
	free(dir);
	return fg_xstrdup("forge-entrypoint");
}
