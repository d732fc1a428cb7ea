/*
 * engine_docker.c - the docker and podman engines: the CLI's command line,
 * and the check after a run that its container is gone.
 *
 * The container sees the workspace at /workspace and the skills at /skills
 * (read-only). A task file inside the workspace is addressed through the
 * workspace mount; one outside it gets its own read-only mount at
 * /forge/task.json. Bind-mount syntax (-v SRC:DST[:ro]) cannot express a
 * path holding ':' or ',', so such paths are refused rather than mangled.
 */
#include "engine.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/timeutil.h"

#include "internal_util.h"

#define CONTAINER_WORKSPACE "/workspace"
#define CONTAINER_SKILLS "/skills"
#define CONTAINER_TASK_FILE "/forge/task.json"
#define REAP_POLL_MS 200
#define REAP_FORCE_AFTER_MS 1000

extern char **environ;

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

int rn__engine_build_container(const struct rn_engine_params *p, struct fg_strvec *argv,
			       char *err, size_t errlen)
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
	if (p->kind == RN_ENGINE_PODMAN && p->uid != 0)
		fg_strvec_push(argv, "--userns=keep-id");
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

/* ---- after the run: the container is gone ---- */

/* Reads fd to EOF or the deadline, counting the bytes; 1 if the deadline
 * passed first. */
static int drain_until(int fd, uint64_t deadline, size_t *nread)
{
	char chunk[512];

	for (;;) {
		uint64_t now = fg_monotonic_ns();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (now >= deadline)
			return 1;
		if (poll(&pfd, 1, (int)((deadline - now) / 1000000) + 1) <= 0)
			continue;  /* EINTR or no data yet: the deadline check decides */
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		*nread += (size_t)n;
	}
}

/* Runs argv (PATH lookup) with stdin and stderr on /dev/null; counts its
 * standard output in *nout. Killed at the deadline (-ETIMEDOUT). Returns
 * the exit code, 128+N when killed by signal N, or a negative errno. */
static int run_cli(char *const *argv, char *const *envp, uint64_t deadline, size_t *nout)
{
	posix_spawn_file_actions_t fa;
	int fds[2], status, late, r;
	pid_t pid;

	*nout = 0;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp ? envp : environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (r) {
		close(fds[0]);
		return -r;
	}
	late = drain_until(fds[0], deadline, nout);
	close(fds[0]);
	if (late)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (late)
		return -ETIMEDOUT;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* 1 listed, 0 not listed, negative errno with err filled. */
static int container_listed(const struct rn_engine_params *p, char *const *envp,
			    uint64_t deadline, char *err, size_t errlen)
{
	struct fg_strvec argv;
	size_t nout;
	int r;

	fg_strvec_init(&argv);
	fg_strvec_push(&argv, p->program);
	fg_strvec_push(&argv, "ps");
	fg_strvec_push(&argv, "-a");
	fg_strvec_push(&argv, "-q");
	fg_strvec_push(&argv, "--filter");
	/* Anchored: without ^...$ the filter matches any name containing ours. */
	fg_strvec_pushf(&argv, "name=^forge-%s$", p->run_id);
	r = run_cli(argv.v, envp, deadline, &nout);
	if (r < 0)
		rn__seterr(err, errlen, "cannot run '%s ps': %s", p->program, strerror(-r));
	else if (r > 0)
		rn__seterr(err, errlen, "'%s ps' exited with code %d", p->program, r);
	fg_strvec_release(&argv);
	if (r > 0)
		return -EIO;
	return r < 0 ? r : nout > 0;
}

static void force_remove(const struct rn_engine_params *p, char *const *envp, uint64_t deadline)
{
	struct fg_strvec argv;
	size_t nout;

	fg_strvec_init(&argv);
	fg_strvec_push(&argv, p->program);
	fg_strvec_push(&argv, "rm");
	fg_strvec_push(&argv, "-f");
	fg_strvec_push_take(&argv, rn_engine_container_name(p->run_id));
	/* Its failure ("removal already in progress", "no such container") is
	 * judged by the next listing, not here. */
	(void)run_cli(argv.v, envp, deadline, &nout);
	fg_strvec_release(&argv);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int rn_engine_container_reap(const struct rn_engine_params *p, char *const *envp, int timeout_ms,
			     char *err, size_t errlen)
{
	uint64_t t0 = fg_monotonic_ns();
	uint64_t deadline = t0 + (uint64_t)timeout_ms * 1000000u;
	int forced = 0;

	if (p->kind == RN_ENGINE_LOCAL)
		return 0;
	for (;;) {
		int r = container_listed(p, envp, deadline, err, errlen);

		if (r <= 0)
			return r < 0 ? r : forced;
		if (fg_monotonic_ns() + REAP_POLL_MS * 1000000u >= deadline) {
			rn__seterr(err, errlen, "container 'forge-%s' still exists", p->run_id);
			return -EBUSY;
		}
		if (!forced && fg_monotonic_ns() - t0 >= REAP_FORCE_AFTER_MS * 1000000u) {
			force_remove(p, envp, deadline);
			forced = 1;
		} else {
			sleep_ms(REAP_POLL_MS);
		}
	}
}
