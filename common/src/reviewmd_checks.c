/*
 * reviewmd_checks.c - review.md's checks: list (see reviewmd.h and
 * docs/reference/review-md-schema.md, "checks"). Each entry is checked
 * where it stands: a bad one is an error-level diagnostic and is skipped,
 * the others keep working, as for reviewers:.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/cmdline.h"
#include "forge/fsutil.h"
#include "forge/num.h"
#include "forge/text.h"
#include "forge/util.h"
#include "reviewmd_internal.h"

/* An entry while its pairs are read: lengths -1 absent, -2 wrong type;
 * each value's line, for a message about it. */
struct entry {
	struct fm_check c;
	long name_len, run_len;
	int bad_timeout;
	int name_line, run_line, timeout_line;
};

/* The placeholders a check's run takes (checks.h in the entrypoint). */
static const char *const placeholders[] = {
	"workspace", "step", "skill", "task_key", "cycle", "skill_dir",
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
	static const char *const alias[][2] = {
		{ "command", "run" }, { "cmd", "run" }, { "script", "run" }, { "exec", "run" },
		{ "timeout", "timeout_seconds" }, { "timeout_s", "timeout_seconds" },
		{ "timeout_sec", "timeout_seconds" }, { "id", "name" }, { "title", "name" },
	};
	static const char *const known[] = { "name", "run", "timeout_seconds" };
	struct entry *e = ctx;

	if (!strcmp(key, "name")) {
		e->name_line = fg__rmd_ev_line(&w->ev);
		e->name_len = fg__rmd_str_value(&w->ev, e->c.name, sizeof(e->c.name));
		e->name_len = e->name_len < 0 ? -2 : e->name_len;
	} else if (!strcmp(key, "run")) {
		e->run_line = fg__rmd_ev_line(&w->ev);
		e->run_len = fg__rmd_str_value(&w->ev, e->c.run, sizeof(e->c.run));
		e->run_len = e->run_len < 0 ? -2 : e->run_len;
	} else if (!strcmp(key, "timeout_seconds")) {
		e->timeout_line = fg__rmd_ev_line(&w->ev);
		take_timeout(w, e);
	} else {
		fg__rmd_unknown_key(w, key, line, "checks", alias, ARRAY_SIZE(alias), known, ARRAY_SIZE(known));
	}
	return fg__rmd_skip_node(w);
}

/* Each {word} in run that is no placeholder of a check: a warning at the
 * run's line (the word is left as it is, as the agents' are). */
static void unknown_placeholders(struct walker *w, const struct entry *e)
{
	const char *s = e->c.run;

	for (const char *o = strchr(s, '{'); o; o = strchr(o + 1, '{')) {
		size_t n = strspn(o + 1, "abcdefghijklmnopqrstuvwxyz_");
		const char *best = NULL;
		size_t bestd = (size_t)-1;
		char word[48];

		if (!n || o[1 + n] != '}' || n >= sizeof(word))
			continue;
		snprintf(word, sizeof(word), "%.*s", (int)n, o + 1);
		if (FG_NAME_INDEX(placeholders, word, 0) >= 0)
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(placeholders); i++) {
			size_t d = fg_edit_distance(word, placeholders[i]);

			if (d < bestd) {
				bestd = d;
				best = placeholders[i];
			}
		}
		fg_diags_add(&w->diags, FG_DIAG_WARNING, e->run_line ? e->run_line : e->c.line,
			     "check '%s': unknown placeholder '{%s}' in 'run' is left as it is (%s%s%sa check "
			     "takes {workspace}, {step}, {skill}, {task_key}, {cycle}, {skill_dir})",
			     e->c.name, word, bestd <= 3 ? "did you mean '{" : "", bestd <= 3 ? best : "",
			     bestd <= 3 ? "}'? " : "");
	}
}

/* Why a read entry cannot be used (into why, *line the offending value's
 * line), or 0. */
static int entry_problem(const struct walker *w, const struct entry *e, char *why, size_t n, int *line)
{
	char err[160], shown[SHOW_MAX + 8];
	struct fg_strvec argv;
	int bad;

	*line = e->name_line ? e->name_line : e->c.line;
	if (e->name_len < 0 || e->name_len > FG_CHECK_NAME_MAX || !fg_role_valid(e->c.name))
		return snprintf(why, n, "'name' must be a slug ([a-z0-9][a-z0-9-]*, at most %d characters)",
				FG_CHECK_NAME_MAX), 1;
	fg__rmd_show(e->c.name, strlen(e->c.name), shown, sizeof(shown));
	for (size_t i = 0; i < w->f.nchecks; i++)
		if (!strcmp(w->f.checks[i].name, e->c.name))
			return snprintf(why, n, "check '%s' is repeated (first on line %d)", shown,
					w->f.checks[i].line), 1;
	*line = e->run_line ? e->run_line : e->c.line;
	if (e->run_len == -1)
		return snprintf(why, n, "check '%s': missing 'run' (the command line the check runs)", shown), 1;
	if (e->run_len < 0 || e->run_len > FG_CHECK_RUN_MAX)
		return snprintf(why, n, "check '%s': 'run' must be a command line of at most %d bytes",
				shown, FG_CHECK_RUN_MAX), 1;
	if (e->bad_timeout) {
		*line = e->timeout_line ? e->timeout_line : e->c.line;
		return snprintf(why, n, "check '%s': 'timeout_seconds' must be a plain integer from 1 to %d",
					shown, FG_CHECK_TIMEOUT_MAX), 1;
	}
	*line = e->c.line;
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
	*line = e->run_line ? e->run_line : e->c.line;
	if (bad)
		return snprintf(why, n, "check '%s': 'run' is not a command line: %s", shown, err), 1;
	return 0;
}

/* One entry of checks:; the current event is its first. */
static int take_entry(struct walker *w)
{
	struct entry e;
	char why[256];
	int line;

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
	if (entry_problem(w, &e, why, sizeof(why), &line)) {
		bad_check(w, line, why);
		return 1;
	}
	unknown_placeholders(w, &e);
	w->f.checks[w->f.nchecks++] = e.c;
	return 1;
}

void fg__rmd_take_checks(struct walker *w)
{
	w->f.nchecks = 0;
	w->f.has_checks = fg__rmd_each_item(w, "checks", "a list of {name, run, timeout_seconds}", take_entry);
}

/* The first word of run naming a {skill_dir} path that does not exist
 * (expanded with dir; owned), or NULL. */
static char *missing_skill_path(const char *run, const char *dir)
{
	const struct fg_placeholder ph[] = { { "skill_dir", dir } };
	struct fg_strvec raw, argv;
	struct stat st;
	char *missing = NULL;

	fg_strvec_init(&raw);
	fg_strvec_init(&argv);
	if (fg_cmdline_split(run, &raw, NULL, 0) == 0 && fg_cmdline_split(run, &argv, NULL, 0) == 0) {
		fg_cmdline_expand(&argv, ph, ARRAY_SIZE(ph));
		for (size_t i = 0; !missing && i < raw.n; i++)
			if (strstr(raw.v[i], "{skill_dir}") && stat(argv.v[i], &st) < 0)
				missing = fg_xstrdup(argv.v[i]);
	}
	fg_strvec_release(&raw);
	fg_strvec_release(&argv);
	return missing;
}

void fg__rmd_check_skill_paths(struct fg_review_config *c, const char *path)
{
	char *dir = NULL;

	if (fg_path_split(path, &dir, NULL) < 0)
		return;
	for (size_t i = 0; i < c->nchecks; i++) {
		char *missing = missing_skill_path(c->checks[i].run, dir);

		if (missing)
			fg_diags_add(&c->diags, FG_DIAG_WARNING, c->checks[i].line,
				     "check '%s': '%s' does not exist ({skill_dir} is the directory of this "
				     "review.md: ship the file there)", c->checks[i].name, missing);
		free(missing);
	}
	free(dir);
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
