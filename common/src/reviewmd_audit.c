/*
 * reviewmd_audit.c - review.md's audit: a mapping of {instructions, sample,
 * blocks} (see reviewmd.h and docs/reference/review-md-schema.md,
 * "audit"). A bad member is an error-level diagnostic and keeps its
 * default; a value that is no mapping is an error and asks for no audit.
 * The instructions file is read beside review.md as a panel role's is.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/fsutil.h"
#include "forge/num.h"
#include "reviewmd_internal.h"

/* sample: an untagged (or !!int/!!float) plain number from 0 to 1. */
static void take_sample(struct walker *w)
{
	const yaml_event_t *ev = &w->ev;
	const char *tag = ev->type == YAML_SCALAR_EVENT ? (const char *)ev->data.scalar.tag : NULL;
	double d;

	if (ev->type != YAML_SCALAR_EVENT || ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
	    (tag && strcmp(tag, YAML_INT_TAG) && strcmp(tag, YAML_FLOAT_TAG)) ||
	    fg_parse_double((const char *)ev->data.scalar.value, 0, 1, &d) < 0) {
		fg__rmd_bad_value(w, "audit.sample", fg__rmd_node_kind(ev, YAML_FLOAT_TAG),
				  "a plain decimal number from 0 to 1 (the share of approved steps audited)");
		return;
	}
	w->f.audit_sample = d;
}

/* instructions: a relative path beside review.md that stays inside its
 * directory. */
static void take_file(struct walker *w)
{
	char shown[SHOW_MAX + 8];
	long n = fg__rmd_str_value(&w->ev, w->f.audit_file, sizeof(w->f.audit_file));
	const char *problem = n < 0 ? "it is not a string"
			      : n > ROLE_FILE_MAX ? "it is longer than 255 bytes"
			      : fg__rmd_path_problem(w->f.audit_file);

	if (!problem)
		return;
	fg__rmd_show(w->f.audit_file, n < 0 ? 0 : strlen(w->f.audit_file), shown, sizeof(shown));
	fg_diags_add(&w->diags, FG_DIAG_ERROR, fg__rmd_ev_line(&w->ev),
		     "audit file '%s' refused: %s; the audit runs with its prompt alone", shown, problem);
	w->f.audit_file[0] = '\0';
}

static int take_pair(struct walker *w, const char *key, int line, void *ctx)
{
	int has = 0, v = 0;

	(void)ctx;
	if (!strcmp(key, "instructions")) {
		take_file(w);
	} else if (!strcmp(key, "sample")) {
		take_sample(w);
	} else if (!strcmp(key, "blocks")) {
		fg__rmd_take_bool(w, "audit.blocks", &has, &v);
		if (has)
			w->f.audit_blocks = v;
	} else {
		/* A typo here would silently change what gates the step. */
		fg_diags_add(&w->diags, FG_DIAG_WARNING, line,
			     "unknown field '%.40s' in 'audit' is ignored (instructions, sample, blocks)", key);
	}
	return fg__rmd_skip_node(w);
}

void fg__rmd_take_audit(struct walker *w)
{
	w->f.has_audit = 0;
	w->f.audit_file[0] = '\0';
	w->f.audit_sample = 1;
	w->f.audit_blocks = 0;
	if (w->ev.type != YAML_MAPPING_START_EVENT) {
		fg__rmd_bad_value(w, "audit", fg__rmd_node_kind(&w->ev, YAML_MAP_TAG),
				  "a mapping of {instructions, sample, blocks}; no audit");
		return;
	}
	if (fg__rmd_each_pair(w, take_pair, NULL))
		w->f.has_audit = 1;
}

void fg__rmd_apply_audit(struct fg_review_config *c, const struct fm_fields *f)
{
	struct fg_audit_config *a = &c->audit;

	a->on = f->has_audit != 0;
	if (!a->on)
		return;
	a->instructions_file = *f->audit_file ? fg_xstrdup(f->audit_file) : NULL;
	a->instructions = fg_xstrdup("");
	a->sample = f->audit_sample;
	a->blocks = f->audit_blocks != 0;
	a->line = f->audit_line;
}

void fg__rmd_load_audit_file(struct fg_review_config *c, const char *path)
{
	struct fg_audit_config *a = &c->audit;
	char subject[128], *dir = NULL, *text = NULL;
	int dfd;

	if (!a->on || !a->instructions_file)
		return;
	if (fg_path_split(path, &dir, NULL))
		dir = fg_xstrdup(".");
	snprintf(subject, sizeof(subject), "audit file '%.60s'", a->instructions_file);
	dfd = fg_open_dir(AT_FDCWD, dir, 0);
	if (dfd < 0)
		fg_diags_add(&c->diags, FG_DIAG_ERROR, a->line, "%s cannot be read: %s; the audit runs with "
			     "its prompt alone", subject, strerror(-dfd));
	else if (!fg__rmd_read_beside(c, dfd, a->instructions_file, a->line, subject,
				      "the audit runs with its prompt alone", &text)) {
		free(a->instructions);
		a->instructions = text;
	}
	if (dfd >= 0)
		close(dfd);
	free(dir);
}
