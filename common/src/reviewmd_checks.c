/*
 * reviewmd_checks.c - review.md's checks: list (see reviewmd.h and
 * docs/reference/review-md-schema.md, "checks"). Each entry is checked
 * where it stands: a bad one is an error-level diagnostic and is skipped,
 * the others keep working, as for reviewers:.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/cmdline.h"
#include "forge/num.h"
#include "reviewmd_internal.h"

/* An entry while its pairs are read: lengths -1 absent, -2 wrong type. */
struct entry {
	struct fm_check c;
	long name_len, run_len;
	int bad_timeout;
};

static void bad_check(struct walker *w, int line, const char *why)
{
	fg_diags_add(&w->diags, FG_DIAG_ERROR, line, "invalid 'checks' entry: %s; skipped", why);
}

/* timeout_seconds: a plain decimal integer 1..FG_CHECK_TIMEOUT_MAX. */
static void take_timeout(struct walker *w, struct entry *e)
{
	const yaml_event_t *ev = &w->ev;
	const char *tag = ev->type == YAML_SCALAR_EVENT ? (const char *)ev->data.scalar.tag : NULL;
	long n;

	if (ev->type != YAML_SCALAR_EVENT || ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
	    (tag && strcmp(tag, YAML_INT_TAG)) ||
	    fg_parse_long((const char *)ev->data.scalar.value, 1, FG_CHECK_TIMEOUT_MAX, &n) < 0) {
		e->bad_timeout = 1;
		return;
	}
	e->c.timeout = n;
}

static int take_pair(struct walker *w, const char *key, int line, void *ctx)
{
	struct entry *e = ctx;

	if (!strcmp(key, "name")) {
		e->name_len = fg__rmd_str_value(&w->ev, e->c.name, sizeof(e->c.name));
		e->name_len = e->name_len < 0 ? -2 : e->name_len;
	} else if (!strcmp(key, "run")) {
		e->run_len = fg__rmd_str_value(&w->ev, e->c.run, sizeof(e->c.run));
		e->run_len = e->run_len < 0 ? -2 : e->run_len;
	} else if (!strcmp(key, "timeout_seconds")) {
		take_timeout(w, e);
	} else if (w->lint) {
		fg_diags_add(&w->diags, FG_DIAG_WARNING, line,
			     "unknown field '%.40s' in a 'checks' entry is ignored", key);
	}
	return fg__rmd_skip_node(w);
}

/* Why a read entry cannot be used (into why), or 0. */
static int entry_problem(const struct walker *w, const struct entry *e, char *why, size_t n)
{
	char err[160], shown[SHOW_MAX + 8];
	struct fg_strvec argv;
	int bad;

	if (e->name_len < 0 || e->name_len > FG_CHECK_NAME_MAX || !fg_role_valid(e->c.name))
		return snprintf(why, n, "'name' must be a slug ([a-z0-9][a-z0-9-]*, at most %d characters)",
				FG_CHECK_NAME_MAX), 1;
	fg__rmd_show(e->c.name, strlen(e->c.name), shown, sizeof(shown));
	for (size_t i = 0; i < w->f.nchecks; i++)
		if (!strcmp(w->f.checks[i].name, e->c.name))
			return snprintf(why, n, "check '%s' is repeated (first on line %d)", shown,
					w->f.checks[i].line), 1;
	if (e->run_len < 0 || e->run_len > FG_CHECK_RUN_MAX)
		return snprintf(why, n, "check '%s': 'run' must be a command line of at most %d bytes",
				shown, FG_CHECK_RUN_MAX), 1;
	if (e->bad_timeout)
		return snprintf(why, n, "check '%s': 'timeout_seconds' must be a plain integer from 1 to %d",
				shown, FG_CHECK_TIMEOUT_MAX), 1;
	if (w->f.nchecks == FG_CHECKS_MAX)
		return snprintf(why, n, "check '%s' is one more than the %d a review.md may have", shown,
				FG_CHECKS_MAX), 1;
	fg_strvec_init(&argv);
	bad = fg_cmdline_split(e->c.run, &argv, err, sizeof(err)) < 0;
	if (!bad && argv.n == 0) {
		bad = 1;
		snprintf(err, sizeof(err), "it holds no word");
	}
	fg_strvec_release(&argv);
	if (bad)
		return snprintf(why, n, "check '%s': 'run' is not a command line: %s", shown, err), 1;
	return 0;
}

/* One entry of checks:; the current event is its first. */
static int take_entry(struct walker *w)
{
	struct entry e;
	char why[256];

	memset(&e, 0, sizeof(e));
	e.name_len = e.run_len = -1;
	e.c.timeout = FG_CHECK_TIMEOUT_DEFAULT;
	e.c.line = fg__rmd_ev_line(&w->ev);
	if (w->ev.type != YAML_MAPPING_START_EVENT) {
		bad_check(w, e.c.line, "expected a mapping with 'name', 'run' and optionally 'timeout_seconds'");
		return fg__rmd_skip_node(w);
	}
	if (!fg__rmd_each_pair(w, take_pair, &e))
		return 0;
	if (entry_problem(w, &e, why, sizeof(why)))
		bad_check(w, e.c.line, why);
	else
		w->f.checks[w->f.nchecks++] = e.c;
	return 1;
}

void fg__rmd_take_checks(struct walker *w)
{
	w->f.nchecks = 0;
	w->f.has_checks = fg__rmd_each_item(w, "checks", "a list of {name, run, timeout_seconds}", take_entry);
}

void fg__rmd_apply_checks(struct fg_review_config *c, const struct fm_fields *f)
{
	for (size_t i = 0; i < f->nchecks; i++) {
		struct fg_check *k = &c->checks[c->nchecks++];

		memcpy(k->name, f->checks[i].name, sizeof(k->name));
		k->run = fg_xstrdup(f->checks[i].run);
		k->timeout_s = (int)f->checks[i].timeout;
		k->line = f->checks[i].line;
	}
}
