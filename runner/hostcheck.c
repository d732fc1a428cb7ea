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
#include "forge/diag.h"
#include "forge/resolve.h"

/* The skills directory the entrypoint will use, as the host sees it, or
 * NULL when the host cannot see it (a container's own /skills). */
static const char *host_skills(const struct rn_run_config *c)
{
	const char *env = getenv("FORGE_SKILLS_DIR");

	if (c->skills_dir)
		return c->skills_dir;
	if (c->engine != RN_ENGINE_LOCAL)
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

	if (c->engine != RN_ENGINE_LOCAL || c->skills_dir || !is_forge_entrypoint(c->entrypoint) ||
	    (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)))
		return 0;
	snprintf(err, errlen, "the local engine has no skills directory: '%s' is not a directory; "
		 "pass --skills-dir DIR (the directory holding default/{skill}/review.md)", dir);
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

int rn_hostcheck(const struct rn_run_config *c, const char *skill, const char *task_key, char *err,
		 size_t errlen)
{
	const char *dir = host_skills(c);
	int r = dir ? check_skills(c, dir, err, errlen) : 0;

	if (r || !c->require_review)
		return r;
	if (setenv("AUTO_REVIEW_REQUIRED", "1", 1))
		return 0;
	return dir && skill ? check_review(dir, skill, task_key, err, errlen) : 0;
}
