/*
 * preflight.c - commands, credentials and the cycle directory, checked
 * before anything happens (see preflight.h).
 */
#include "preflight.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "preset.h"
#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/cmdline.h"
#include "forge/exit.h"
#include "forge/fsutil.h"

/* glibc's execvp() search path when PATH is unset. */
#define DEFAULT_PATH "/bin:/usr/bin"

static bool executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0;
}

/* name in each PATH directory (an empty one is the workspace). */
static bool in_path(const char *name, const char *workspace)
{
	const char *path = getenv("PATH");
	bool found = false;

	if (!path)
		path = DEFAULT_PATH;
	for (const char *p = path; !found;) {
		size_t n = strcspn(p, ":");
		char *dir = n ? fg_xstrndup(p, n) : fg_xstrdup(workspace);
		char *full = fg_path_join(dir, name);

		found = executable(full);
		free(full);
		free(dir);
		if (!p[n])
			break;
		p += n + 1;
	}
	return found;
}

/* The program of cmd (its first word, {workspace} expanded). Owned, or NULL
 * when it cannot be known before the run. */
static char *program(const struct ep_task *t, const char *cmd)
{
	const struct fg_placeholder ph[] = { { "workspace", t->workspace } };
	struct fg_strvec argv;
	char err[128], *prog = NULL;

	fg_strvec_init(&argv);
	if (fg_cmdline_split(cmd, &argv, err, sizeof(err)) == 0 && argv.n) {
		fg_cmdline_expand(&argv, ph, 1);
		if (!strchr(argv.v[0], '{'))
			prog = fg_xstrdup(argv.v[0]);
	}
	fg_strvec_release(&argv);
	return prog;
}

/* Check 1 for one role. 0, or -1 after saying why. */
static int check_command(const struct ep_task *t, const char *role, const char *cmd, const char *preset)
{
	const struct ep_preset_creds *cr = ep_preset_creds(preset);
	char *prog = program(t, cmd), *rel = NULL;
	bool ok;

	if (!prog)
		return 0;
	if (strchr(prog, '/')) {
		rel = prog[0] == '/' ? fg_xstrdup(prog) : fg_path_join(t->workspace, prog);
		ok = executable(rel);
	} else {
		ok = in_path(prog, t->workspace);
	}
	if (!ok && rel)
		ep_log(FG_MSG_ERROR, "cannot run %s '%s': no executable file '%s'%s", role, prog, rel,
			 prog[0] == '/' ? "" : " (a relative path is resolved from the workspace)");
	else if (!ok && cr)
		ep_log(FG_MSG_ERROR, "cannot run %s '%s': not found in PATH (the image needs %s: see "
			 "docs/guide/container-image.md)", role, prog, cr->product);
	else if (!ok)
		ep_log(FG_MSG_ERROR, "cannot run %s '%s': not found in PATH (PATH=%s; install it in the image or "
			 "set FORGE_%s_CMD: see docs/guide/container-image.md)", role, prog,
			 getenv("PATH") ? getenv("PATH") : DEFAULT_PATH, !strcmp(role, "worker") ? "WORKER" : "REVIEWER");
	free(rel);
	free(prog);
	return ok ? 0 : -1;
}

static bool set(const char *name)
{
	const char *v = getenv(name);

	return v && *v;
}

/* The preset's login file, or NULL when it has none or HOME is unknown. Owned. */
static char *login_file(const struct ep_preset_creds *cr)
{
	const char *dir = cr->dir_var ? getenv(cr->dir_var) : NULL;
	const char *home = getenv("HOME");
	char *base, *file;

	if (!cr->file)
		return NULL;
	if (dir && *dir)
		base = fg_xstrdup(dir);
	else if (home && *home)
		base = fg_path_join(home, cr->home_dir);
	else
		return NULL;
	file = fg_path_join(base, cr->file);
	free(base);
	return file;
}

static bool has_creds(const struct ep_preset_creds *cr, char **file)
{
	struct stat st;

	for (size_t i = 0; cr->secrets[i]; i++)
		if (set(cr->secrets[i]))
			return true;
	for (size_t i = 0; cr->settings[i]; i++)
		if (set(cr->settings[i]))
			return true;
	*file = login_file(cr);
	return *file && stat(*file, &st) == 0 && S_ISREG(st.st_mode);
}

/* Check 2 for one role. 0, or -1 after saying why. */
static int check_creds(const char *role, const char *preset)
{
	const struct ep_preset_creds *cr = ep_preset_creds(preset);
	struct fg_buf msg;
	char *file = NULL;
	bool other = false;

	if (!cr || has_creds(cr, &file)) {
		free(file);
		return 0;
	}
	fg_buf_init(&msg, 2048);
	fg_buf_addf(&msg, "the %s's %s (FORGE_%s_AGENT=%s) has no credentials: set ", role, cr->product,
		    !strcmp(role, "worker") ? "WORKER" : "REVIEWER", preset);
	for (size_t i = 0; cr->secrets[i]; i++)
		fg_buf_addf(&msg, "%s%s", i ? " or " : "", cr->secrets[i]);
	for (size_t i = 0; cr->settings[i]; i++)
		fg_buf_addf(&msg, " (or %s for its other login)", cr->settings[i]);
	if (file)
		fg_buf_addf(&msg, ", or log in so that '%s' exists", file);
	fg_buf_addf(&msg, "; in a container pass a variable in by name: forge-runner run --env %s", cr->secrets[0]);
	for (size_t i = 0; cr->others[i]; i++)
		other = other || set(cr->others[i]);
	if (other && cr->note)
		fg_buf_addf(&msg, " (%s)", cr->note);
	ep_log(FG_MSG_ERROR, "%s", fg_buf_str(&msg));
	fg_buf_release(&msg);
	free(file);
	return -1;
}

/* The deepest existing part of dir, not above workspace. Owned. */
static char *existing_part(const char *workspace, const char *dir)
{
	char *p = fg_xstrdup(dir);
	size_t wlen = strlen(workspace);
	struct stat st;

	while (lstat(p, &st) != 0 && errno == ENOENT && strlen(p) > wlen) {
		char *slash = strrchr(p, '/');

		if (!slash || slash == p)
			break;
		*slash = '\0';
	}
	return p;
}

/* The fix of a workspace owned by someone else, in the words of the engine
 * the entrypoint runs under: a pod (the kubelet sets KUBERNETES_SERVICE_HOST
 * in every container) takes --run-as and --fs-group, never root and no
 * --engine-arg; a container --engine-arg --user. Into fix; returns it. */
static const char *ownership_fix(const struct stat *st, unsigned uid, unsigned gid, char *fix, size_t n)
{
	unsigned ou = (unsigned)st->st_uid, og = (unsigned)st->st_gid;

	if (getenv("KUBERNETES_SERVICE_HOST") && ou == 0)
		snprintf(fix, n, "on Kubernetes give the claim to the pod's group (forge-runner run --fs-group %u: "
			 "the pod's fsGroup, where the volume's driver supports it), or chown -R %u:%u the volume "
			 "from a pod of your own (--run-as 0 is refused)", gid, uid, gid);
	else if (getenv("KUBERNETES_SERVICE_HOST"))
		snprintf(fix, n, "on Kubernetes run the pod as its owner (forge-runner run --run-as %u:%u), give "
			 "the claim to the pod's group (--fs-group %u), or chown -R %u:%u the volume", ou, og, gid,
			 uid, gid);
	else
		snprintf(fix, n, "run the container as its owner (forge-runner run --engine-arg --user=%u:%u) or "
			 "give the workspace to %u:%u (chown -R %u:%u on the host)", ou, og, uid, gid, uid, gid);
	return fix;
}

/* Check 3. 0, or -1 after saying why. A part that is not a directory is
 * left to the creation of the directory, which says what is wrong. */
static int check_cycle_dir(const struct ep_task *t)
{
	char *dir = fg_path_join(t->workspace, t->cycle_dir);
	char *part = existing_part(t->workspace, dir);
	unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
	struct stat st;
	char fix[512];
	int err = 0;

	if (lstat(part, &st) == 0 && S_ISDIR(st.st_mode) &&
	    faccessat(AT_FDCWD, part, W_OK | X_OK, AT_EACCESS) != 0)
		err = errno;
	if (err == EROFS)
		ep_log(FG_MSG_ERROR, "cannot write the cycle directory '%s': '%s': %s (mount the workspace "
			 "read-write)", dir, part, strerror(err));
	else if (err)
		ep_log(FG_MSG_ERROR, "cannot write the cycle directory '%s': '%s' is owned by %u:%u (mode %04o) and "
			 "forge-entrypoint runs as uid:gid %u:%u (%s); %s", dir, part, (unsigned)st.st_uid,
			 (unsigned)st.st_gid, (unsigned)(st.st_mode & 07777), uid, gid, strerror(err),
			 ownership_fix(&st, uid, gid, fix, sizeof(fix)));
	free(part);
	free(dir);
	return err ? -1 : 0;
}

int ep_preflight_run(const struct ep_task *t, bool review)
{
	int bad = 0;

	bad |= check_command(t, "worker", t->worker_cmd, t->worker_preset);
	if (t->worker_cmd_from_preset)
		bad |= check_creds("worker", t->worker_preset);
	if (review && t->reviewer_cmd) {
		bad |= check_command(t, "reviewer", t->reviewer_cmd, t->reviewer_preset);
		if (t->reviewer_cmd_from_preset)
			bad |= check_creds("reviewer", t->reviewer_preset);
	}
	bad |= check_cycle_dir(t);
	return bad ? FG_EXIT_USAGE : 0;
}
