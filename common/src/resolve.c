/*
 * resolve.c - which review.md applies to a skill for a ticket (see resolve.h).
 *
 * The skills tree may be mounted from anywhere and written by anyone who can
 * edit a skill, so a candidate counts only if, once every symlink is
 * resolved, it is a regular file inside the real skills directory. Symlinks
 * that stay inside the tree (a project sharing the default review.md) are
 * fine; one that leads out (to /etc, or through "..") is refused with a
 * warning and the next candidate is tried.
 */
#include "forge/resolve.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/fsutil.h"
#include "forge/names.h"
#include "forge/text.h"

/* Lower-case strerror(), as diagnostics are lower case (house style). */
static void errtext(int err, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s", strerror(err));
	if (out[0] >= 'A' && out[0] <= 'Z')
		out[0] = (char)(out[0] - 'A' + 'a');
}

/* 1 if the canonical path real is root itself or below it. */
static int inside(const char *root, const char *real)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return 1;
	return !strncmp(real, root, n) && (real[n] == '/' || real[n] == '\0');
}

/*
 * Checks {skills_dir}/{project}/{skill}/review.md. Returns 0 with *out set
 * (owned) when it is usable, -ENOENT when it is absent, -EPERM when it is
 * refused (warning added).
 */
static int try_candidate(const char *skills_dir, const char *root, const char *project,
			 const char *skill, char **out, struct fg_diags *d)
{
	char *rel = fg_xasprintf("%s/%s/review.md", project, skill);
	char *path = fg_path_join(skills_dir, rel);
	char *real = NULL;
	char why[128];
	struct stat st;
	int r = -EPERM;

	free(rel);
	if (lstat(path, &st) < 0) {
		r = -ENOENT;
		if (errno != ENOENT && errno != ENOTDIR) {
			errtext(errno, why, sizeof(why));
			fg_diags_add(d, FG_DIAG_WARNING, 0, "cannot look at '%s': %s", path, why);
		}
		goto out;
	}
	real = realpath(path, NULL);
	if (!real) {
		errtext(errno, why, sizeof(why));
		fg_diags_add(d, FG_DIAG_WARNING, 0, "ignoring '%s': cannot resolve it: %s", path, why);
	} else if (!inside(root, real)) {
		fg_diags_add(d, FG_DIAG_WARNING, 0,
			     "refusing '%s': it leads to '%s', outside the skills directory '%s'", path,
			     real, root);
	} else if (stat(real, &st) < 0 || !S_ISREG(st.st_mode)) {
		fg_diags_add(d, FG_DIAG_WARNING, 0, "ignoring '%s': not a regular file", path);
	} else {
		*out = path;
		path = NULL;
		r = 0;
	}
out:
	free(real);
	free(path);
	return r;
}

/* Validates skill and ticket; fills project ("" when the ticket has none). */
static int check_names(const char *skill, const char *ticket, char *project, size_t plen,
		       struct fg_diags *d)
{
	char err[256];

	project[0] = '\0';
	if (fg_name_check(FG_NAME_SKILL, skill, skill ? strlen(skill) : 0, err, sizeof(err)) < 0) {
		fg_diags_add(d, FG_DIAG_ERROR, 0, "%s", err);
		return -EINVAL;
	}
	if (!ticket || !*ticket)
		return 0;
	if (fg_name_check(FG_NAME_TASK_KEY, ticket, strlen(ticket), err, sizeof(err)) < 0) {
		fg_diags_add(d, FG_DIAG_ERROR, 0, "%s", err);
		return -EINVAL;
	}
	if (fg_ticket_project(ticket, project, plen) < 0)
		fg_diags_add(d, FG_DIAG_WARNING, 0,
			     "ticket '%s' has no project key (expected LETTERS-DIGITS, such as PROJ-123): "
			     "only the default skills are searched", ticket);
	return 0;
}

/* The canonical skills directory (owned), or NULL with an error added. */
static char *real_root(const char *skills_dir, int *err, struct fg_diags *d)
{
	char why[128];
	struct stat st;
	char *root = skills_dir && *skills_dir ? realpath(skills_dir, NULL) : NULL;

	*err = 0;
	if (!root)
		*err = skills_dir && *skills_dir ? errno : ENOENT;
	else if (stat(root, &st) < 0)
		*err = errno;
	else if (!S_ISDIR(st.st_mode))
		*err = ENOTDIR;
	if (!*err)
		return root;
	free(root);
	errtext(*err, why, sizeof(why));
	fg_diags_add(d, FG_DIAG_ERROR, 0, "cannot use skills directory '%s': %s",
		     skills_dir ? skills_dir : "", why);
	/* A missing skills directory is a configuration error, never "no
	 * review.md": -ENOENT is reserved for the latter. */
	*err = *err == ENOENT ? -ENOTDIR : -*err;
	return NULL;
}

/* The project directories searched, in order: the ticket's project (when it
 * has one other than "default"), then "default". Returns how many. */
static size_t search_order(const char *project, const char *order[2])
{
	size_t n = 0;

	if (*project && strcmp(project, "default") != 0)
		order[n++] = project;
	order[n++] = "default";
	return n;
}

int fg_resolve_review_md(const char *skills_dir, const char *skill, const char *ticket,
			 char **out_path, struct fg_diags *diags)
{
	char project[FG_NAME_MAX + 1];
	const char *order[2];
	size_t n;
	char *root;
	int r;

	*out_path = NULL;
	r = check_names(skill, ticket, project, sizeof(project), diags);
	if (r < 0)
		return r;
	root = real_root(skills_dir, &r, diags);
	if (!root)
		return r;
	n = search_order(project, order);
	r = -ENOENT;
	for (size_t i = 0; i < n && r; i++)
		r = try_candidate(skills_dir, root, order[i], skill, out_path, diags);
	free(root);
	return r == 0 ? 0 : -ENOENT;
}

/* ---- explaining a missing review.md ------------------------------------ */

struct suggestion {
	char name[FG_NAME_MAX + 1];
	size_t dist;
};

/* Looks through skills_dir/project for skills with a review.md whose name is
 * close to skill; keeps the best in *best. */
static void suggest_in(const char *skills_dir, const char *project, const char *skill,
		       struct suggestion *best)
{
	char *path = fg_path_join(skills_dir, project);
	size_t seen = 0, len = strlen(skill);
	struct fg_dir it;
	const char *name;
	int r = fg_dir_open(&it, AT_FDCWD, path, 0);

	free(path);
	if (r)
		return;
	for (name = fg_dir_next(&it); name && seen++ < FG_RESOLVE_SUGGEST_SCAN; name = fg_dir_next(&it)) {
		size_t dist = fg_edit_distance(name, skill);
		char *rel;
		struct stat st;
		int ok;

		if (name[0] == '.' || dist == 0 || dist > FG_RESOLVE_SUGGEST_DISTANCE || dist >= len ||
		    dist > best->dist || (dist == best->dist && strcmp(name, best->name) >= 0))
			continue;
		rel = fg_xasprintf("%s/review.md", name);
		ok = fstatat(fg_dir_fd(&it), rel, &st, 0) == 0 && S_ISREG(st.st_mode);
		free(rel);
		/* Only a valid skill name is offered (it is echoed in a log
		 * line), and it fits: it is at most FG_NAME_MAX bytes. */
		if (ok && !fg_name_check(FG_NAME_SKILL, name, strlen(name), NULL, 0)) {
			memcpy(best->name, name, strlen(name) + 1);
			best->dist = dist;
		}
	}
	fg_dir_close(&it);
}

void fg_resolve_explain_missing(const char *skills_dir, const char *skill, const char *ticket,
				struct fg_buf *out)
{
	char project[FG_NAME_MAX + 1] = "";
	struct suggestion best = { "", (size_t)-1 };
	const char *order[2];
	size_t n;

	if (ticket && *ticket && fg_ticket_project(ticket, project, sizeof(project)) < 0)
		project[0] = '\0';
	n = search_order(project, order);
	fg_buf_addf(out, "no review.md for skill '%s' (tried ", skill);
	for (size_t i = 0; i < n; i++) {
		char *rel = fg_xasprintf("%s/%s/review.md", order[i], skill);
		char *path = fg_path_join(skills_dir ? skills_dir : "", rel);

		fg_buf_addf(out, "%s'%s'", i ? ", " : "", path);
		suggest_in(skills_dir ? skills_dir : "", order[i], skill, &best);
		free(rel);
		free(path);
	}
	if (best.name[0])
		fg_buf_addf(out, "; did you mean '%s'?", best.name);
	fg_buf_addc(out, ')');
}
