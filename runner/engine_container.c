/*
 * engine_container.c - the base docker and podman share: the CLI's command
 * line, stop and kill, the commands that make sure the container is gone,
 * and the meaning of the CLI's own exit codes.
 *
 * The container sees the workspace at /workspace and the skills at /skills
 * (read-only). A task file inside the workspace is addressed through the
 * workspace mount; one outside it gets its own read-only mount at
 * /forge/task.json. Bind-mount syntax (-v SRC:DST[:ro]) cannot express a
 * path holding ':' or ',', so such paths are refused rather than mangled.
 */
#include "engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"

#include "internal_util.h"

#define CONTAINER_WORKSPACE "/workspace"
#define CONTAINER_SKILLS "/skills"
#define CONTAINER_TASK_FILE "/forge/task.json"

static int mount_path_ok(const char *what, const char *path, char *err, size_t errlen)
{
	if (path[0] != '/') {
		rn__seterr(err, errlen, "%s '%s' must be an absolute path", what, path);
		return -EINVAL;
	}
	if (strpbrk(path, ":,\n")) {
		rn__seterr(err, errlen, "%s '%s' cannot be bind-mounted: contains ':' or ','", what, path);
		return -EINVAL;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names passed with -e: allowlisted prefixes, --env names, FORGE_RUN_ID;
 * sorted and without duplicates so the command line is deterministic. */
static int collect_env_names(const struct rn_engine_params *p, struct fg_strvec *names,
			     char *err, size_t errlen)
{
	for (char *const *e = p->environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char *name;

		if (!eq)
			continue;
		name = fg_xstrndup(*e, (size_t)(eq - *e));
		if ((!strncmp(name, "FORGE_", 6) || !strncmp(name, "AUTO_REVIEW_", 12)) &&
		    !rn_engine_env_name_check(name, NULL, 0) && !rn_engine_env_is_runner_only(name))
			fg_strvec_push_take(names, name);
		else
			free(name);
	}
	for (size_t i = 0; i < p->nextra_env; i++) {
		if (rn_engine_env_name_check(p->extra_env[i], err, errlen))
			return -EINVAL;
		fg_strvec_push(names, p->extra_env[i]);
	}
	fg_strvec_push(names, "FORGE_RUN_ID");
	if (names->n > 1)
		qsort(names->v, names->n, sizeof(char *), cmp_str);
	return 0;
}

static void push_env_flags(const struct fg_strvec *names, struct fg_strvec *argv)
{
	for (size_t i = 0; i < names->n; i++) {
		if (i > 0 && !strcmp(names->v[i], names->v[i - 1]))
			continue;
		fg_strvec_push(argv, "-e");
		fg_strvec_push(argv, names->v[i]);
	}
}

/* Where the container finds the task file; owned, or NULL with err set. */
static char *task_file_mount(const struct rn_engine_params *p, struct fg_strvec *argv,
			     char *err, size_t errlen)
{
	size_t wl = strlen(p->workspace);

	if (mount_path_ok("task file", p->task_file, err, errlen))
		return NULL;
	while (wl > 1 && p->workspace[wl - 1] == '/')
		wl--;
	if (!strncmp(p->task_file, p->workspace, wl) && p->task_file[wl] == '/')
		return fg_xasprintf("%s%s", CONTAINER_WORKSPACE, p->task_file + wl);
	fg_strvec_push(argv, "-v");
	fg_strvec_pushf(argv, "%s:%s:ro", p->task_file, CONTAINER_TASK_FILE);
	return fg_xstrdup(CONTAINER_TASK_FILE);
}

static void push_entry_args(const struct rn_engine_params *p, struct fg_strvec *argv,
			    const char *task_file)
{
	fg_strvec_push(argv, "run");
	fg_strvec_push(argv, "--workspace");
	fg_strvec_push(argv, CONTAINER_WORKSPACE);
	fg_strvec_push(argv, "--skills-dir");
	fg_strvec_push(argv, CONTAINER_SKILLS);
	fg_strvec_push(argv, "--step");
	fg_strvec_push(argv, p->step);
	if (p->skill) {
		fg_strvec_push(argv, "--skill");
		fg_strvec_push(argv, p->skill);
	}
	if (p->task_key) {
		fg_strvec_push(argv, "--task-key");
		fg_strvec_push(argv, p->task_key);
	}
	if (task_file) {
		fg_strvec_push(argv, "--task-file");
		fg_strvec_push(argv, task_file);
	}
}

int rn__container_build(const struct rn_engine_params *p, const char *userns_arg,
			struct fg_strvec *argv, char *err, size_t errlen)
{
	struct fg_strvec names;
	char *task = NULL;
	int r;

	if (!p->image || !*p->image) {
		rn__seterr(err, errlen, "engine '%s' needs an image (--image or FORGE_IMAGE)",
			   rn_engine_name(p->kind));
		return -EINVAL;
	}
	if (mount_path_ok("workspace", p->workspace, err, errlen) ||
	    (p->skills_dir && mount_path_ok("skills dir", p->skills_dir, err, errlen)))
		return -EINVAL;
	fg_strvec_push(argv, p->program);
	fg_strvec_push(argv, "run");
	fg_strvec_push(argv, "--rm");
	fg_strvec_push(argv, "--name");
	fg_strvec_push_take(argv, rn_engine_container_name(p->run_id));
	fg_strvec_push(argv, "-v");
	fg_strvec_pushf(argv, "%s:%s", p->workspace, CONTAINER_WORKSPACE);
	if (p->skills_dir) {
		fg_strvec_push(argv, "-v");
		fg_strvec_pushf(argv, "%s:%s:ro", p->skills_dir, CONTAINER_SKILLS);
	}
	if (p->task_file) {
		task = task_file_mount(p, argv, err, errlen);
		if (!task)
			return -EINVAL;
	}
	if (userns_arg)
		fg_strvec_push(argv, userns_arg);
	fg_strvec_push(argv, "--user");
	fg_strvec_pushf(argv, "%u:%u", (unsigned)p->uid, (unsigned)p->gid);
	fg_strvec_init(&names);
	r = collect_env_names(p, &names, err, errlen);
	if (!r) {
		push_env_flags(&names, argv);
		fg_strvec_push(argv, p->image);
		push_entry_args(p, argv, task);
	}
	fg_strvec_release(&names);
	free(task);
	return r;
}

/* ---- stopping and after the run ---- */

int rn__container_stop(const struct rn_engine_params *p, int force, struct fg_strvec *argv)
{
	fg_strvec_push(argv, p->program);
	if (force) {
		fg_strvec_push(argv, "kill");
	} else {
		fg_strvec_push(argv, "stop");
		fg_strvec_push(argv, "-t");
		fg_strvec_pushf(argv, "%d", RN_ENGINE_STOP_GRACE);
	}
	fg_strvec_push_take(argv, rn_engine_container_name(p->run_id));
	return 0;
}

void rn__container_reap_list(const struct rn_engine_params *p, struct fg_strvec *argv)
{
	fg_strvec_push(argv, p->program);
	fg_strvec_push(argv, "ps");
	fg_strvec_push(argv, "-a");
	fg_strvec_push(argv, "-q");
	fg_strvec_push(argv, "--filter");
	/* Anchored: without ^...$ the filter matches any name containing ours. */
	fg_strvec_pushf(argv, "name=^forge-%s$", p->run_id);
}

void rn__container_reap_remove(const struct rn_engine_params *p, struct fg_strvec *argv)
{
	fg_strvec_push(argv, p->program);
	fg_strvec_push(argv, "rm");
	fg_strvec_push(argv, "-f");
	fg_strvec_push_take(argv, rn_engine_container_name(p->run_id));
}

char *rn__container_exit_reason(const struct rn_engine_params *p, int exit_code)
{
	char *name = rn_engine_container_name(p->run_id), *msg;

	switch (exit_code) {
	case 137:
		msg = fg_xasprintf("container '%s' was killed from outside the runner "
				   "(SIGKILL: %s kill or the out-of-memory killer)", name, p->program);
		break;
	case 125:
		msg = fg_xasprintf("%s could not run container '%s'", p->program, name);
		break;
	case 126:
		msg = fg_xasprintf("the entrypoint of image '%s' cannot be invoked", p->image);
		break;
	case 127:
		msg = fg_xasprintf("the entrypoint of image '%s' was not found", p->image);
		break;
	default:
		msg = NULL;
	}
	free(name);
	return msg;
}

/* A bind mount of the host path: the runner sees what the container writes. */
int rn__container_workspace_local(const struct rn_engine_params *p)
{
	(void)p;
	return 1;
}

/* ---- hints for the CLI's own errors ---- */

static int has(const char *line, const char *what)
{
	return strstr(line, what) != NULL;
}

/* The CLI cannot reach its daemon (docker) or service (podman remote). */
static int daemon_down(const char *line)
{
	return has(line, "Cannot connect to the Docker daemon") ||
	       has(line, "Is the docker daemon running") ||
	       has(line, "permission denied while trying to connect to the Docker daemon") ||
	       has(line, "Cannot connect to Podman");
}

/* The image is not in the engine's local storage (there is no registry to
 * pull it from: forge-review images are built locally). */
static int image_missing(const char *line)
{
	return has(line, "Unable to find image") || has(line, "pull access denied") ||
	       has(line, "repository does not exist") || has(line, "No such image") ||
	       has(line, "manifest unknown") || has(line, "image not known") ||
	       (has(line, "short-name") && has(line, "did not resolve"));
}

char *rn__container_hint(const struct rn_engine_params *p, const char *line, int *down)
{
	int podman = p->kind == RN_ENGINE_PODMAN;

	if (daemon_down(line)) {
		*down = 1;
		return fg_xasprintf("%s cannot reach its %s: start it (%s), check %s, or run with "
				    "--engine local", p->program, podman ? "service" : "daemon",
				    podman ? "systemctl --user start podman.socket" : "sudo systemctl start docker",
				    podman ? "CONTAINER_HOST" : "DOCKER_HOST and your membership of the docker group");
	}
	if (!image_missing(line))
		return NULL;
	if (podman)
		return fg_xasprintf("image '%s' is not in podman's storage (podman does not see Docker's "
				    "images): load it with 'docker save %s | podman load', or build it with "
				    "'podman build -f docker/Dockerfile -t %s .' in the forge-review checkout",
				    p->image, p->image, p->image);
	return fg_xasprintf("image '%s' is not on this host: build it with 'docker build -f "
			    "docker/Dockerfile -t %s .' in the forge-review checkout "
			    "(docs/guide/container-image.md)", p->image, p->image);
}
