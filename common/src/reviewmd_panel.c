/*
 * reviewmd_panel.c - review.md's panel: the reviewers: list read from the
 * frontmatter (each entry checked where it stands: a bad one is an error and
 * is skipped, as for checks:), the role slugs, the role files read beside
 * review.md without leaving its directory, and the panel copied into the
 * configuration (see reviewmd.h and docs/reference/review-md-schema.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/audit.h"
#include "forge/buf.h"
#include "forge/fsutil.h"
#include "forge/util.h"
#include "reviewmd_internal.h"

int fg_role_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > FG_ROLE_MAX || *s == '-')
		return 0;
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return 0;
	}
	return 1;
}

/* A role path stays inside review.md's directory: relative, no "." or ".."
 * component, no empty component, printable. 0 or the reason. */
const char *fg__rmd_path_problem(const char *p)
{
	if (!*p)
		return "it is empty";
	if (*p == '/')
		return "it is an absolute path: it escapes the directory of review.md";
	for (const char *c = p; *c;) {
		size_t n = strcspn(c, "/");

		if (n == 0)
			return "it has an empty path component";
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return "it has a '.' or '..' component: it escapes the directory of review.md";
		for (size_t i = 0; i < n; i++) {
			if ((unsigned char)c[i] < 0x20 || c[i] == 0x7f || c[i] == '\\')
				return "it holds a control character or a backslash";
		}
		c += n;
		c += *c == '/';
	}
	return NULL;
}

static void bad_entry(struct walker *w, int line, const char *why)
{
	fg_diags_add(&w->diags, FG_DIAG_ERROR, line, "invalid 'reviewers' entry: %s; skipped", why);
}

/* Why a parsed entry cannot join the panel (written to why), or 0. */
static int entry_problem(const struct walker *w, const struct fm_reviewer *r, int has_role,
			 long role_len, char *why, size_t whylen)
{
	char shown[SHOW_MAX + 8];

	if (!has_role || role_len < 0) {
		snprintf(why, whylen, "'role' is missing or not a string");
		return 1;
	}
	fg__rmd_show(r->role, strlen(r->role), shown, sizeof(shown));
	if (role_len > FG_ROLE_MAX || !fg_role_valid(r->role)) {
		snprintf(why, whylen, "role '%s' is not a slug ([a-z0-9][a-z0-9-]*, at most %d "
			 "characters)", shown, FG_ROLE_MAX);
		return 1;
	}
	if (!strcmp(r->role, FG_AUDIT_ROLE)) {
		snprintf(why, whylen, "role '%s' is reserved for the audit (audit:)", shown);
		return 1;
	}
	for (size_t i = 0; i < w->f.nrev; i++) {
		if (!strcmp(w->f.rev[i].role, r->role)) {
			snprintf(why, whylen, "role '%s' is repeated (first on line %d)", shown,
				 w->f.rev[i].line);
			return 1;
		}
	}
	if (w->f.nrev == FG_REVIEWERS_MAX) {
		snprintf(why, whylen, "role '%s' is one more than the %d a panel may have", shown,
			 FG_REVIEWERS_MAX);
		return 1;
	}
	return 0;
}

/* Checks a parsed entry and adds it to the panel. */
static void add_entry(struct walker *w, const struct fm_reviewer *r, int has_role, long role_len,
		      long file_len)
{
	char shown[SHOW_MAX + 8], why[200];
	const char *problem;

	if (entry_problem(w, r, has_role, role_len, why, sizeof(why))) {
		fg_diags_add(&w->diags, FG_DIAG_ERROR, r->line,
			     "invalid 'reviewers' entry: %s; skipped", why);
		return;
	}
	problem = file_len == -2 ? "'instructions' is not a string"
		  : file_len > ROLE_FILE_MAX ? "'instructions' is longer than 255 bytes"
		  : file_len >= 0 ? fg__rmd_path_problem(r->file) : NULL;
	if (problem) {
		fg__rmd_show(r->file, strlen(r->file), shown, sizeof(shown));
		fg_diags_add(&w->diags, FG_DIAG_ERROR, r->line,
			     "role file '%s' of role '%s' refused: %s; role skipped", shown, r->role,
			     problem);
		return;
	}
	w->f.rev[w->f.nrev++] = *r;
}

/* One pair of an entry's mapping; the current event is the value. */
static int take_entry_pair(struct walker *w, const char *key, int line, struct fm_reviewer *r,
			   int *has_role, long *role_len, long *file_len)
{
	static const char *const alias[][2] = {
		{ "name", "role" }, { "id", "role" }, { "file", "instructions" },
		{ "prompt", "instructions" }, { "instruction", "instructions" },
	};
	static const char *const known[] = { "role", "instructions" };

	if (!strcmp(key, "role")) {
		*has_role = 1;
		*role_len = fg__rmd_str_value(&w->ev, r->role, sizeof(r->role));
	} else if (!strcmp(key, "instructions")) {
		*file_len = fg__rmd_str_value(&w->ev, r->file, sizeof(r->file));
		if (*file_len < 0)
			*file_len = -2;
		/* "./style.md" is the file beside review.md, as a shell reads it. */
		while (*file_len > 2 && r->file[0] == '.' && r->file[1] == '/') {
			memmove(r->file, r->file + 2, strlen(r->file + 2) + 1);
			*file_len -= 2;
		}
	} else {
		fg__rmd_unknown_key(w, key, line, "reviewers", alias, ARRAY_SIZE(alias), known, ARRAY_SIZE(known));
	}
	return fg__rmd_skip_node(w);
}

/* What take_entry_pair() fills, for fg__rmd_each_pair(). */
struct entry_ctx {
	struct fm_reviewer *r;
	int *has_role;
	long *role_len, *file_len;
};

static int entry_pair(struct walker *w, const char *key, int line, void *ctx)
{
	struct entry_ctx *x = ctx;

	return take_entry_pair(w, key, line, x->r, x->has_role, x->role_len, x->file_len);
}

/* One entry of reviewers:; the current event is its first. */
static int take_entry(struct walker *w)
{
	struct fm_reviewer r;
	int has_role = 0;
	long role_len = -1, file_len = -1;

	memset(&r, 0, sizeof(r));
	r.line = fg__rmd_ev_line(&w->ev);
	if (w->ev.type != YAML_MAPPING_START_EVENT) {
		bad_entry(w, r.line, "expected a mapping with 'role' and optionally 'instructions'");
		return fg__rmd_skip_node(w);
	}
	struct entry_ctx x = { &r, &has_role, &role_len, &file_len };

	if (!fg__rmd_each_pair(w, entry_pair, &x))
		return 0;
	add_entry(w, &r, has_role, role_len, file_len);
	return 1;
}

void fg__rmd_take_reviewers(struct walker *w)
{
	w->f.nrev = 0;
	w->f.has_reviewers = fg__rmd_each_item(w, "reviewers", "a list of {role, instructions}", take_entry);
}

void fg__rmd_apply_panel(struct fg_review_config *c, const struct fm_fields *f)
{
	c->rereview = f->has_rereview ? (enum fg_rereview)f->rereview : FG_REREVIEW_REJECTED;
	for (size_t i = 0; i < f->nrev; i++) {
		struct fg_reviewer *r = &c->reviewers[c->nreviewers++];

		memcpy(r->role, f->rev[i].role, sizeof(r->role));
		r->instructions_file = *f->rev[i].file ? fg_xstrdup(f->rev[i].file) : NULL;
		r->instructions = fg_xstrdup("");
		r->line = f->rev[i].line;
	}
}

/* Drops role i of the panel (its file could not be used). */
static void drop_role(struct fg_review_config *c, size_t i)
{
	free(c->reviewers[i].instructions_file);
	free(c->reviewers[i].instructions);
	memmove(&c->reviewers[i], &c->reviewers[i + 1],
		(c->nreviewers - i - 1) * sizeof(c->reviewers[0]));
	c->nreviewers--;
}

/* A panel whose entries were all skipped is no panel: say so once. */
void fg__rmd_finish_panel(struct fg_review_config *c)
{
	if (c->panel_given && c->nreviewers == 0)
		fg_diags_add(&c->diags, FG_DIAG_WARNING, 0,
			     "'reviewers' has no valid entry: one reviewer reviews, as without the field");
}

int fg__rmd_read_beside(struct fg_review_config *c, int dirfd, const char *file, int line,
			const char *subject, const char *consequence, char **text)
{
	const char *why = NULL;
	char *sub = NULL, *last = NULL;
	struct fg_buf b;
	struct fg_diags d;
	int fd = -1, rc;

	fg_buf_init(&b, FG_REVIEWMD_MAX_BYTES);
	/* Below the directory of review.md, never following a symlink on the
	 * way (fg_open_beneath) nor at the end (fg_read_file_at). */
	rc = fg_path_split(file, &sub, &last);
	if (!rc && strchr(file, '/'))
		rc = fd = fg_open_beneath(dirfd, sub, 0, NULL, 0);
	if (rc >= 0)
		rc = fg_read_file_at(fd >= 0 ? fd : dirfd, last, FG_REVIEWMD_MAX_BYTES, 0, &b, NULL);
	if (fd >= 0)
		close(fd);
	free(sub);
	free(last);
	fg_diags_init(&d);
	if (rc == -ELOOP || rc == -ENOTDIR)
		why = "a symlink on the way could lead out of the directory of review.md";
	else if (rc < 0)
		why = strerror(-rc);
	else if (fg__rmd_content_refused(&d, fg_buf_str(&b), b.len))
		why = d.v[0].msg;
	if (why)
		fg_diags_add(&c->diags, FG_DIAG_ERROR, line, "%s refused: %s; %s", subject, why, consequence);
	else
		*text = fg__rmd_make_instructions(fg_buf_str(&b), b.len);
	fg_diags_release(&d);
	fg_buf_release(&b);
	return why ? -1 : 0;
}

/* Reads role r's file beside review.md (dirfd). 0, or adds an error and
 * returns -1. */
static int read_role_file(struct fg_review_config *c, int dirfd, struct fg_reviewer *r)
{
	char subject[160];
	char *text = NULL;

	snprintf(subject, sizeof(subject), "role file '%.60s' of role '%s'", r->instructions_file, r->role);
	if (fg__rmd_read_beside(c, dirfd, r->instructions_file, r->line, subject, "role skipped", &text) < 0)
		return -1;
	free(r->instructions);
	r->instructions = text;
	return 0;
}

/* Reads every role file, relative to the directory of review.md (path). */
void fg__rmd_load_role_files(struct fg_review_config *c, const char *path)
{
	char *dir = NULL;
	int dfd = -1;

	if (fg_path_split(path, &dir, NULL))
		dir = fg_xstrdup(".");

	for (size_t i = 0; i < c->nreviewers;) {
		if (!c->reviewers[i].instructions_file) {
			i++;
			continue;
		}
		if (dfd < 0)
			dfd = fg_open_dir(AT_FDCWD, dir, 0);
		if (dfd < 0) {
			fg_diags_add(&c->diags, FG_DIAG_ERROR, c->reviewers[i].line,
				     "role file '%.60s' of role '%s' cannot be read: %s; role skipped",
				     c->reviewers[i].instructions_file, c->reviewers[i].role,
				     strerror(-dfd));
			drop_role(c, i);
		} else if (read_role_file(c, dfd, &c->reviewers[i]) < 0) {
			drop_role(c, i);
		} else {
			i++;
		}
	}
	if (dfd >= 0)
		close(dfd);
	free(dir);
}

/* max_cost_usd: the frontmatter, else a valid AUTO_REVIEW_MAX_COST_USD
 * (an invalid one is ignored with a warning), else no budget. */
