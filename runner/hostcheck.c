/*
 * hostcheck.c - the runner's checks before anything runs (see hostcheck.h).
 */
#include "hostcheck.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "forge/buf.h"
#include "forge/cmdline.h"
#include "forge/diag.h"
#include "forge/resolve.h"

/* The skills directory the entrypoint will use, as the host sees it, or
 * NULL when the host cannot see it (a container's own /skills). */
static const char *host_skills(const struct rn_run_config *c)
{
	const char *env = getenv("FORGE_SKILLS_DIR");

	if (c->skills_dir)
		return c->skills_dir;
	if (!c->engine->host_fs)
		return NULL;
	return env && *env ? env : "/skills";
}

/* forge-entrypoint itself: a stand-in of another name (a test's script, a
 * wrapper) may not read skills at all. */
static int is_forge_entrypoint(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	return base && !strcmp(base, "forge-entrypoint");
}

static int check_skills(const struct rn_run_config *c, const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (!c->engine->host_fs || c->skills_dir || !is_forge_entrypoint(c->entrypoint) ||
	    (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)))
		return 0;
	snprintf(err, errlen, "the %s engine has no skills directory: '%s' is not a directory; "
		 "pass --skills-dir DIR (the directory holding default/{skill}/review.md)",
		 c->engine->name, dir);
	return -EINVAL;
}

static int check_review(const char *dir, const char *skill, const char *task_key, char *err,
			size_t errlen)
{
	struct fg_diags d;
	struct fg_buf why;
	char *path = NULL;
	int r;

	fg_diags_init(&d);
	r = fg_resolve_review_md(dir, skill, task_key, &path, &d);
	fg_diags_release(&d);
	free(path);
	if (r != -ENOENT)
		return 0;   /* found, or an error the entrypoint reports itself */
	fg_buf_init(&why, 4096);
	fg_resolve_explain_missing(dir, skill, task_key, &why);
	snprintf(err, errlen, "--require-review: %s; add the review.md (forge-entrypoint lint DIR "
		 "shows one the lookup cannot find)", fg_buf_str(&why));
	fg_buf_release(&why);
	return -EINVAL;
}

/* Whether path lies in dir (dir itself or below it). */
static int path_in(const char *path, const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return n && !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* A word of an agent command that is a path of this host no container
 * has: it exists here, under the workspace, the skills, a home or a
 * temporary directory. Words with a placeholder are the sandbox's. */
static int host_only(const struct rn_run_config *c, const char *w)
{
	static const char *const private_dirs[] = { "/home", "/root", "/tmp", "/var/tmp", "/srv", "/mnt", "/media" };
	struct stat st;

	if (w[0] != '/' || strchr(w, '{') || stat(w, &st) < 0)
		return 0;
	if (path_in(w, c->workspace) || path_in(w, c->skills_dir) || path_in(w, getenv("HOME")))
		return 1;
	for (size_t i = 0; i < sizeof(private_dirs) / sizeof(private_dirs[0]); i++)
		if (path_in(w, private_dirs[i]))
			return 1;
	return 0;
}

/* A container engine's agent commands name no path only this host has. */
static int check_agent_paths(const struct rn_run_config *c, char *err, size_t errlen)
{
	static const char *const vars[] = { "FORGE_WORKER_CMD", "FORGE_REVIEWER_CMD" };
	int r = 0;

	if (c->engine->host_fs)
		return 0;
	for (size_t i = 0; !r && i < sizeof(vars) / sizeof(vars[0]); i++) {
		struct fg_strvec argv;

		fg_strvec_init(&argv);
		if (getenv(vars[i]) && !fg_cmdline_split(getenv(vars[i]), &argv, NULL, 0))
			for (size_t k = 0; !r && k < argv.n; k++)
				if (host_only(c, argv.v[k])) {
					snprintf(err, errlen, "%s names '%s', a path of this host that the container "
						 "does not see (it sees the workspace at /workspace and the skills at "
						 "/skills): use {workspace}/RELATIVE for a script in the workspace, or "
						 "put it in the image", vars[i], argv.v[k]);
					r = -EINVAL;
				}
		fg_strvec_release(&argv);
	}
	return r;
}

int rn_hostcheck(const struct rn_run_config *c, const char *skill, const char *task_key, char *err,
		 size_t errlen)
{
	const char *dir = host_skills(c);
	int r = dir ? check_skills(c, dir, err, errlen) : 0;

	if (!r)
		r = check_agent_paths(c, err, errlen);
	if (r || !c->require_review)
		return r;
	if (setenv("AUTO_REVIEW_REQUIRED", "1", 1))
		return 0;
	return dir && skill ? check_review(dir, skill, task_key, err, errlen) : 0;
}
