/*
 * engine_container.c - the base docker and podman share: the container
 * options (the limits, --mount-label, --engine-arg, --as-root: their table,
 * their checks and the data that keeps them, which the kubernetes engine
 * takes too), the CLI's command line, stop and kill, the commands that make
 * sure the container is gone, the meaning of the CLI's own exit codes and
 * the hints for its error lines.
 *
 * The container sees the workspace at /workspace and the skills at /skills
 * (read-only). A task file inside the workspace is addressed through the
 * workspace mount; one outside it gets its own read-only mount at
 * /forge/task.json. Bind-mount syntax (-v SRC:DST[:ro]) cannot express a
 * path holding ':' or ',', so such paths are refused rather than mangled.
 */
#include "engine.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/num.h"
#include "forge/util.h"

#include "internal_util.h"

#define CONTAINER_WORKSPACE "/workspace"
#define CONTAINER_SKILLS "/skills"
#define CONTAINER_TASK_FILE "/forge/task.json"
#define SELINUX_ENFORCE "/sys/fs/selinux/enforce"

/* ---- the values of the limit options ---- */

static const char *const label_names[] = {
	[RN_MOUNT_LABEL_AUTO] = "auto", [RN_MOUNT_LABEL_NONE] = "none",
	[RN_MOUNT_LABEL_SHARED] = "z", [RN_MOUNT_LABEL_PRIVATE] = "Z",
};

int rn_mount_label_parse(const char *s, enum rn_mount_label *out)
{
	return FG_NAME_PARSE(label_names, s, 0, out);
}

const char *rn_mount_label_option(enum rn_mount_label mode, int selinux_enabled)
{
	switch (mode) {
	case RN_MOUNT_LABEL_SHARED:
		return "z";
	case RN_MOUNT_LABEL_PRIVATE:
		return "Z";
	case RN_MOUNT_LABEL_AUTO:
		return selinux_enabled ? "Z" : "";
	default:
		return "";
	}
}

int rn_selinux_enabled(void)
{
	int fd = open(SELINUX_ENFORCE, O_RDONLY | O_CLOEXEC);
	char c;
	int ok = fd >= 0 && read(fd, &c, 1) == 1;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* The one form of a refused limit: "invalid WHAT 'v' (MUST)", -EINVAL. */
static int refused(const char *what, const char *v, const char *must, char *err, size_t errlen)
{
	rn__seterr(err, errlen, "invalid %s '%s' (%s)", what, v, must);
	return -EINVAL;
}

int rn_engine_memory_check(const char *v, char *err, size_t errlen)
{
	size_t n = strspn(v, "0123456789");

	if (n > 0 && n <= 18 && (!v[n] || (strchr("bkmgBKMG", v[n]) && !v[n + 1])))
		return 0;
	return refused("memory limit", v, "bytes, or a number with b, k, m or g: 4g", err, errlen);
}

int rn_engine_cpus_check(const char *v, char *err, size_t errlen)
{
	double d;

	return fg_parse_double(v, 0.001, 1024, &d) ? refused("CPU limit", v, "a number from 0.001 to 1024: 2, 0.5",
							     err, errlen) : 0;
}

int rn_engine_pids_check(const char *v, char *err, size_t errlen)
{
	long n;

	return fg_parse_long(v, 1, 4194304, &n) ? refused("process limit", v, "an integer from 1 to 4194304",
							  err, errlen) : 0;
}

int rn_engine_network_check(const char *v, char *err, size_t errlen)
{
	size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:=,-");

	if (*v && *v != '-' && !v[n])
		return 0;
	return refused("network", v, "a name such as none, bridge or slirp4netns", err, errlen);
}

/* ---- the options ---- */

enum { C_MOUNT_LABEL = 1, C_MEMORY, C_CPUS, C_PIDS, C_NETWORK, C_ENGINE_ARG, C_READ_ONLY, C_AS_ROOT };

static const struct fg_opt container_options[] = {
	{ C_MOUNT_LABEL, "mount-label", 0, "MODE", "FORGE_MOUNT_LABEL", "SELinux label of the bind mounts: auto (default: Z when SELinux is on), z, Z, none" },
	{ C_MEMORY, "memory", 0, "SIZE", "FORGE_MEMORY", "container memory limit (4g, 512m)" },
	{ C_CPUS, "cpus", 0, "N", "FORGE_CPUS", "container CPU limit (2, 0.5)" },
	{ C_PIDS, "pids-limit", 0, "N", "FORGE_PIDS_LIMIT", "container process limit (default 4096)" },
	{ C_NETWORK, "network", 0, "NAME", "FORGE_NETWORK", "container network (default: the engine's; none allowed)" },
	{ C_ENGINE_ARG, "engine-arg", 0, "ARG", NULL, "extra argument for the engine's run, before the image (repeatable)" },
	{ C_READ_ONLY, "read-only-rootfs", 0, NULL, "FORGE_READ_ONLY_ROOTFS", "read-only root filesystem with a tmpfs /tmp (containers)" },
	{ C_AS_ROOT, "as-root", 0, NULL, NULL, "docker/podman: run the sandbox as uid 0 (default: never; a runner started by root uses the workspace's owner, or " RN_SANDBOX_DEFAULT_IDS ")" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

/* Values are kept as given; rn__container_opts_check() reads them. */
static int container_take(void *data, int id, const char *v, char *err, size_t errlen)
{
	struct rn_container_opts *c = data;
	const char **slot[] = {
		[C_MOUNT_LABEL] = &c->mount_label_arg, [C_MEMORY] = &c->memory, [C_CPUS] = &c->cpus,
		[C_PIDS] = &c->pids_limit, [C_NETWORK] = &c->network, [C_READ_ONLY] = &c->read_only_arg,
	};

	if (id == C_ENGINE_ARG)
		fg_strvec_push(&c->engine_args, v);
	else if (id == C_AS_ROOT)
		c->as_root = 1;
	else if (id > 0 && id < (int)ARRAY_SIZE(slot) && slot[id])
		*slot[id] = v;
	else
		return rn__seterr(err, errlen, "not a container option"), -EINVAL;
	return 0;
}

const struct rn_engine_opts rn__container_opt_set = { container_options, container_take };
const struct rn_engine_opts *const rn__container_opt_sets[] = { &rn__container_opt_set, NULL };

const struct rn_container_opts *rn__container_opts(const struct rn_engine_params *p)
{
	static const struct rn_container_opts defaults;

	return p->data ? p->data : &defaults;
}

void rn__container_opts_init(struct rn_container_opts *c)
{
	memset(c, 0, sizeof(*c));
	fg_strvec_init(&c->engine_args);
}

void rn__container_opts_release(struct rn_container_opts *c)
{
	fg_strvec_release(&c->engine_args);
}

/* Each value checked (an environment twin too: the engine takes it), the
 * read-only flag and the mount label resolved. */
int rn__container_opts_check(struct rn_container_opts *c, char *err, size_t errlen)
{
	enum rn_mount_label label = RN_MOUNT_LABEL_AUTO;
	int ro = 0;

	if (c->mount_label_arg && rn_mount_label_parse(c->mount_label_arg, &label)) {
		rn__seterr(err, errlen, "invalid mount label '%s' (auto, z, Z or none)", c->mount_label_arg);
		return -EINVAL;
	}
	if (c->read_only_arg && fg_parse_bool(c->read_only_arg, &ro)) {
		rn__seterr(err, errlen, "invalid FORGE_READ_ONLY_ROOTFS '%s' (1 or 0)", c->read_only_arg);
		return -EINVAL;
	}
	if ((c->memory && rn_engine_memory_check(c->memory, err, errlen)) ||
	    (c->cpus && rn_engine_cpus_check(c->cpus, err, errlen)) ||
	    (c->pids_limit && rn_engine_pids_check(c->pids_limit, err, errlen)) ||
	    (c->network && rn_engine_network_check(c->network, err, errlen)))
		return -EINVAL;
	c->read_only_rootfs = ro;
	c->mount_label = rn_mount_label_option(label, label == RN_MOUNT_LABEL_AUTO && rn_selinux_enabled());
	return 0;
}

void *rn__container_data_new(void)
{
	struct rn_container_opts *c = fg_xmalloc(sizeof(*c));

	rn__container_opts_init(c);
	return c;
}

int rn__container_data_check(void *data, const char *program, char *err, size_t errlen)
{
	(void)program;
	return rn__container_opts_check(data, err, errlen);
}

void rn__container_data_free(void *data)
{
	if (!data)
		return;
	rn__container_opts_release(data);
	free(data);
}

/* Never uid 0 unless --as-root: the workspace's owner, or
 * RN_SANDBOX_DEFAULT_UID:GID when root owns it (or it is a volume). */
void rn__container_sandbox_ids(const void *data, const char *workspace, uid_t *uid, gid_t *gid)
{
	const struct rn_container_opts *c = data;
	struct stat st;

	if (*uid != 0 || (c && c->as_root))
		return;
	*uid = RN_SANDBOX_DEFAULT_UID;
	*gid = RN_SANDBOX_DEFAULT_UID;
	if (workspace && stat(workspace, &st) == 0 && st.st_uid != 0) {
		*uid = st.st_uid;
		*gid = st.st_gid;
	}
}

/* ---- the command line ---- */

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
			     char *err, size_t errlen);

int rn__container_env_names(const struct rn_engine_params *p, struct fg_strvec *names, char *err,
			    size_t errlen)
{
	struct fg_strvec all;
	int r;

	fg_strvec_init(&all);
	r = collect_env_names(p, &all, err, errlen);
	for (size_t i = 0; !r && i < all.n; i++)
		if (i == 0 || strcmp(all.v[i], all.v[i - 1]))
			fg_strvec_push(names, all.v[i]);
	fg_strvec_release(&all);
	return r;
}

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
	if (p->sealed) {
		fg_strvec_push(names, "FORGE_SEAL_KEY_STDIN");
		fg_strvec_push(names, "FORGE_LIFELINE");
	}
	if (p->cycle_dir)
		fg_strvec_push(names, "FORGE_CYCLE_DIR");
	if (p->traceparent)
		fg_strvec_push(names, "FORGE_TRACEPARENT");
	if (p->deadline)
		fg_strvec_push(names, "FORGE_DEADLINE");
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

/* -v SRC:DST[:ro][,label]: the options after the second ':' are
 * comma-separated ("ro,Z"); a label alone is ":Z". */
static void push_mount(const struct rn_engine_params *p, struct fg_strvec *argv, const char *src,
		       const char *dst, int ro)
{
	const char *label = rn__container_opts(p)->mount_label;

	label = label ? label : "";

	fg_strvec_push(argv, "-v");
	if (!ro && !*label)
		fg_strvec_pushf(argv, "%s:%s", src, dst);
	else
		fg_strvec_pushf(argv, "%s:%s:%s%s%s", src, dst, ro ? "ro" : "", ro && *label ? "," : "",
				label);
}

/* Hardening on by default, then the limits that were given. */
static void push_limits(const struct rn_container_opts *c, struct fg_strvec *argv)
{
	fg_strvec_pushl(argv, "--cap-drop=ALL", "--security-opt=no-new-privileges", "--pids-limit",
			c->pids_limit ? c->pids_limit : RN_ENGINE_PIDS_LIMIT, NULL);
	fg_strvec_push_opt(argv, "--memory", c->memory);
	fg_strvec_push_opt(argv, "--cpus", c->cpus);
	fg_strvec_push_opt(argv, "--network", c->network);
	if (c->read_only_rootfs)
		fg_strvec_pushl(argv, "--read-only", "--tmpfs", "/tmp", NULL);
}

/* Where the container finds the task file; owned, or NULL with err set. */
static char *task_file_mount(const struct rn_engine_params *p, struct fg_strvec *argv,
			     char *err, size_t errlen)
{
	size_t wl = p->workspace ? strlen(p->workspace) : 0;

	if (mount_path_ok("task file", p->task_file, err, errlen))
		return NULL;
	while (wl > 1 && p->workspace[wl - 1] == '/')
		wl--;
	if (wl && !strncmp(p->task_file, p->workspace, wl) && p->task_file[wl] == '/')
		return fg_xasprintf("%s%s", CONTAINER_WORKSPACE, p->task_file + wl);
	push_mount(p, argv, p->task_file, CONTAINER_TASK_FILE, 1);
	return fg_xstrdup(CONTAINER_TASK_FILE);
}

static void push_entry_args(const struct rn_engine_params *p, struct fg_strvec *argv,
			    const char *task_file)
{
	fg_strvec_pushl(argv, "run", "--workspace", CONTAINER_WORKSPACE, "--skills-dir",
			CONTAINER_SKILLS, "--step", p->step, NULL);
	fg_strvec_push_opt(argv, "--skill", p->skill);
	fg_strvec_push_opt(argv, "--task-key", p->task_key);
	fg_strvec_push_opt(argv, "--task-file", task_file);
	if (p->clear_stale)
		fg_strvec_push(argv, "--clear-stale");
}

int rn__container_build(const struct rn_engine_params *p, struct fg_strvec *argv, char *err,
			size_t errlen)
{
	const struct rn_container_opts *c = rn__container_opts(p);
	const struct rn__container *impl = p->ops->impl;
	/* As root there is no user namespace to keep (engine_podman.c). */
	const char *userns_arg = impl && !p->runner_root ? impl->userns_arg : NULL;
	struct fg_strvec names;
	char *task = NULL;
	int r;

	if (!p->image || !*p->image) {
		rn__seterr(err, errlen, "engine '%s' needs an image (--image or FORGE_IMAGE)",
			   p->ops->name);
		return -EINVAL;
	}
	if ((p->workspace_volume ? rn_engine_volume_check(p->workspace_volume, err, errlen)
				 : mount_path_ok("workspace", p->workspace, err, errlen)) ||
	    (p->skills_dir && mount_path_ok("skills dir", p->skills_dir, err, errlen)))
		return -EINVAL;
	fg_strvec_pushl(argv, p->program, "run", "--rm", NULL);
	/* The container's stdin is the runner's pipe: the key, then the lifeline. */
	if (p->sealed)
		fg_strvec_push(argv, "-i");
	fg_strvec_push(argv, "--name");
	fg_strvec_push_take(argv, rn_engine_container_name(p->run_id));
	push_limits(c, argv);
	push_mount(p, argv, p->workspace_volume ? p->workspace_volume : p->workspace,
		   CONTAINER_WORKSPACE, 0);
	if (p->skills_dir)
		push_mount(p, argv, p->skills_dir, CONTAINER_SKILLS, 1);
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
		/* Last before the image: anything the options above do not cover. */
		for (size_t i = 0; i < c->engine_args.n; i++)
			fg_strvec_push(argv, c->engine_args.v[i]);
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
	fg_strvec_pushl(argv, p->program, "ps", "-a", "-q", "--filter", NULL);
	/* Anchored: without ^...$ the filter matches any name containing ours. */
	fg_strvec_pushf(argv, "name=^forge-%s$", p->run_id);
}

void rn__container_reap_remove(const struct rn_engine_params *p, struct fg_strvec *argv)
{
	fg_strvec_pushl(argv, p->program, "rm", "-f", NULL);
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

/* A bind mount of the host path on this machine: the runner sees what the
 * container writes. Not so for a named volume, or a bind mount made by an
 * engine on another host. */
int rn__container_workspace_local(const struct rn_engine_params *p)
{
	char *host;

	if (p->workspace_volume)
		return 0;
	host = rn_engine_remote_host(p);
	free(host);
	return host == NULL;
}

int rn_engine_volume_check(const char *name, char *err, size_t errlen)
{
	size_t n = strlen(name);
	int ok = n > 0 && n <= 255 && isalnum((unsigned char)name[0]);

	for (size_t i = 1; ok && i < n; i++)
		ok = isalnum((unsigned char)name[i]) || strchr("_.-", name[i]) != NULL;
	if (!ok) {
		/* Quoted cut: the name came from the command line, not a secret. */
		rn__seterr(err, errlen, "invalid volume name '%.64s': a letter or digit, then letters, "
			   "digits, '_', '.' or '-'", name);
		return -EINVAL;
	}
	return 0;
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

/* One hint for the kernel's two ways of refusing a user namespace. */
#define USERNS_HINT                                                                   \
	"the kernel refuses the user namespace: enable unprivileged user namespaces " \
	"(sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0), or run the engine as root"

/*
 * The engine or its OCI runtime could not start any container on this host:
 * the CLI's 126 or 127 then says so, not that the image's entrypoint is
 * missing. Each cause is known by words of the engine's own message (all of
 * a row's words, in any order), checked against real podman and runc/crun
 * output: runc's "error setting rlimit type 7: operation not permitted" and
 * crun's "setrlimit `RLIMIT_NPROC`: Operation not permitted", "could
 * not find slirp4netns", "could not find pasta", crun's and runc's cgroup
 * errors, newuidmap's and the kernel's user-namespace refusals, and the
 * image store's ("error creating libpod runtime", overlay not supported).
 * An rlimit error counts on any line of the CLI's output: the runtime's own
 * message may come on a line of its own, between the CLI's error lines.
 */

static const struct runtime_cause {
	const char *words[2];
	int any_line;   /* 1: not only on the CLI's error lines */
	const char *fix;
} RUNTIME_CAUSES[] = {
	{ { "rlimit", NULL }, 1,
	  "set 'default_ulimits = []' under [containers] in containers.conf (or a file named by "
	  "CONTAINERS_CONF): the runtime may not apply podman's default ulimits here (no "
	  "CAP_SYS_RESOURCE, or a hard limit below the default); nofile (type 7, RLIMIT_NOFILE) and "
	  "nproc (type 6, RLIMIT_NPROC) both, so --engine-arg --ulimit=... must then give both within "
	  "your hard limits (--engine-arg --ulimit=nofile=N:N --engine-arg --ulimit=nproc=N:N)" },
	{ { "slirp4netns", NULL }, 0,
	  "rootless podman needs slirp4netns for its default network and cannot find it: install it "
	  "(apt-get install slirp4netns), or run with --network none (agents that call a hosted "
	  "model need a network)" },
	{ { "could not find pasta", NULL }, 0,
	  "rootless podman needs pasta (the passt package) for its default network: install it, "
	  "or run with --network slirp4netns or --network none" },
	{ { "cgroup", NULL }, 0,
	  "the runtime cannot set up the container's cgroup: without a systemd user session set "
	  "cgroup_manager = \"cgroupfs\" under [engine] in containers.conf; a limit the host's cgroups "
	  "cannot apply (rootless on cgroup v1, a controller not delegated) needs "
	  "--pids-limit/--memory/--cpus left out there" },
	{ { "newuidmap", NULL }, 0,
	  "rootless podman cannot map the user's ids: install uidmap and give the user "
	  "subordinate ids (usermod --add-subuids 100000-165535 --add-subgids 100000-165535 USER), "
	  "then run 'podman system migrate'" },
	{ { "enough IDs", NULL }, 0,
	  "rootless podman has too few subordinate ids for the image: give the user a range of "
	  "65536 (usermod --add-subuids 100000-165535 --add-subgids 100000-165535 USER), then run "
	  "'podman system migrate'" },
	{ { "user namespace", NULL }, 0, USERNS_HINT },
	{ { "cannot clone", "operation not permitted" }, 0, USERNS_HINT },
	{ { "libpod runtime", NULL }, 0,
	  "podman cannot open its image store: check storage.conf (driver, graphroot, runroot) and "
	  "that the user owns them; 'podman system reset' clears a broken store (it removes every image)" },
	{ { "overlay", "not supported" }, 0,
	  "the image store's overlay driver does not work on this filesystem: install fuse-overlayfs "
	  "(rootless), or set driver = \"vfs\" in storage.conf" },
};

/* 1 when line holds every word of the cause, case-insensitively. */
static int cause_matches(const struct runtime_cause *c, const char *line)
{
	for (size_t i = 0; i < ARRAY_SIZE(c->words) && c->words[i]; i++)
		if (!strcasestr(line, c->words[i]))
			return 0;
	return 1;
}

/* Only the CLI's error lines ("Error: ...", "docker: ...") name a cause:
 * rootless podman on cgroup v1 also says "Resource limits are not supported
 * and ignored" before the error that stopped it. */
static char *runtime_hint(const struct rn_engine_params *p, const char *line)
{
	size_t k = strlen(p->program);
	int error_line = !strncmp(line, "Error: ", 7) ||
			 (!strncmp(line, p->program, k) && !strncmp(line + k, ": ", 2));

	for (size_t i = 0; i < ARRAY_SIZE(RUNTIME_CAUSES); i++)
		if ((error_line || RUNTIME_CAUSES[i].any_line) && cause_matches(&RUNTIME_CAUSES[i], line))
			return fg_xasprintf("%s could not start the container (not the image's entrypoint): %s",
					    p->program, RUNTIME_CAUSES[i].fix);
	return NULL;
}

char *rn__container_hint(const struct rn_engine_params *p, const char *line, int *kind)
{
	const struct rn__container *impl = p->ops->impl;
	char *hint;

	if (daemon_down(line)) {
		*kind = RN_HINT_DOWN;
		return fg_xasprintf("%s cannot reach its %s: start it (%s), check %s, or run with "
				    "--engine local", p->program, impl->daemon, impl->start, impl->check);
	}
	hint = runtime_hint(p, line);
	if (hint) {
		*kind = RN_HINT_RUNTIME;
		return hint;
	}
	return image_missing(line) ? impl->image_missing(p->image) : NULL;
}
