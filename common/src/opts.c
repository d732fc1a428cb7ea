/*
 * opts.c - table-driven option parsing and help (see opts.h).
 */
#include "forge/opts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "forge/text.h"
#include "internal.h"

void fg_opts_init(struct fg_opts_iter *it, const struct fg_opt *table, int argc, char **argv, int first)
{
	it->table = table;
	it->argc = argc;
	it->argv = argv;
	it->i = first;
	it->dashdash = 0;
	it->rc = 0;
	it->id = 0;
	it->value = NULL;
	it->err[0] = '\0';
}

bool fg_opts_each(struct fg_opts_iter *it)
{
	it->rc = fg_opts_next(it, &it->id, &it->value, it->err, sizeof(it->err));
	return it->rc > 0;
}

bool fg_opts_failed(const struct fg_opts_iter *it)
{
	return it->rc < 0;
}

const struct fg_opt *fg_opts_find(const struct fg_opt *table, const char *name)
{
	for (const struct fg_opt *o = table; o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

/* Keeps cand in *best when it is nearer to word than *bestd edits. */
static void nearer(const char *word, const char *cand, const char **best, size_t *bestd)
{
	size_t d = fg_edit_distance(word, cand);

	if (d < *bestd) {
		*bestd = d;
		*best = cand;
	}
}

static size_t suggest_limit(const char *word)
{
	size_t third = strlen(word) / 3;

	return (third > FG_SUGGEST_DISTANCE ? third : FG_SUGGEST_DISTANCE) + 1;
}

const char *fg_suggest(const char *word, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t bestd = suggest_limit(word);

	for (size_t i = 0; i < n; i++)
		nearer(word, names[i], &best, &bestd);
	return bestd ? best : NULL;
}

const char *fg_opts_suggest(const struct fg_opt *table, const char *name)
{
	const char *best = NULL;
	size_t bestd = suggest_limit(name);

	for (const struct fg_opt *o = table; o->name; o++)
		nearer(name, o->name, &best, &bestd);
	return bestd ? best : NULL;
}

/* What a value names, for an option's argname: 2 an existing directory, 1
 * a file (an existing one, or a word that looks like a path: a '/' or an
 * extension), 0 anything else. */
static int value_kind(const char *v)
{
	struct stat st;
	const char *dot = strrchr(v, '.');

	if (!stat(v, &st))
		return S_ISDIR(st.st_mode) ? 2 : 1;
	return strchr(v, '/') || (dot && dot != v && dot[1]) ? 1 : 0;
}

/* The value kind an option takes: DIR 2, FILE 1, another name 0; -1 for a flag. */
static int argname_kind(const char *argname)
{
	size_t n = argname ? strlen(argname) : 0;

	if (!argname)
		return -1;
	if (n >= 3 && !strcmp(argname + n - 3, "DIR"))
		return 2;
	return n >= 4 && !strcmp(argname + n - 4, "FILE") ? 1 : 0;
}

const char *fg_opts_suggest_value(const struct fg_opt *table, const char *name, const char *value)
{
	const char *best = NULL;
	size_t limit = suggest_limit(name), nlen = strlen(name), bestd = (size_t)-1;
	int want = value ? value_kind(value) : -2, bestfit = -1;

	for (const struct fg_opt *o = table; o->name; o++) {
		size_t d = fg_edit_distance(name, o->name);
		/* "--task" for "--task-file": a prefix of at least three letters is near. */
		bool prefix = nlen >= 3 && !strncmp(o->name, name, nlen);
		int fit = want == -2 || argname_kind(o->argname) == want;

		if (d >= limit && !prefix)
			continue;
		if (fit > bestfit || (fit == bestfit && d < bestd)) {
			best = o->name;
			bestd = d;
			bestfit = fit;
		}
	}
	return bestd ? best : NULL;
}

static const struct fg_opt *find_short(const struct fg_opt *table, char c)
{
	for (const struct fg_opt *o = table; o->name; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

/* Takes the option's value from "=value" or the next word. */
static int take_value(struct fg_opts_iter *it, const struct fg_opt *o, const char *inline_val,
		      const char **value, char *err, size_t errlen)
{
	if (!o->argname) {
		if (inline_val) {
			fg__seterr(err, errlen, "option '--%s' takes no value", o->name);
			return -EINVAL;
		}
		*value = NULL;
		return 1;
	}
	if (inline_val) {
		*value = inline_val;
		return 1;
	}
	if (it->i >= it->argc) {
		fg__seterr(err, errlen, "option '--%s' needs a value", o->name);
		return -EINVAL;
	}
	*value = it->argv[it->i++];
	return 1;
}

int fg_opts_next(struct fg_opts_iter *it, int *id, const char **value, char *err, size_t errlen)
{
	const struct fg_opt *o;
	const char *arg;

	if (it->i >= it->argc)
		return 0;
	arg = it->argv[it->i++];
	if (it->dashdash || arg[0] != '-' || arg[1] == '\0') {
		*id = FG_OPT_POSITIONAL;
		*value = arg;
		return 1;
	}
	if (!strcmp(arg, "--")) {
		it->dashdash = 1;
		return fg_opts_next(it, id, value, err, errlen);
	}
	if (arg[1] == '-') {
		const char *eq = strchr(arg + 2, '=');
		char name[64];
		size_t nlen = eq ? (size_t)(eq - (arg + 2)) : strlen(arg + 2);

		if (nlen >= sizeof(name)) {
			fg__seterr(err, errlen, "unknown option '%.60s...'", arg);
			return -EINVAL;
		}
		memcpy(name, arg + 2, nlen);
		name[nlen] = '\0';
		o = fg_opts_find(it->table, name);
		if (!o) {
			/* The value weighs in: "--skills DIR" is --skills-dir. */
			const char *next = it->i < it->argc && it->argv[it->i][0] != '-' ? it->argv[it->i] : NULL;
			const char *near = fg_opts_suggest_value(it->table, name, eq ? eq + 1 : next);

			if (near)
				fg__seterr(err, errlen, "unknown option '--%s'; did you mean '--%s'?", name, near);
			else
				fg__seterr(err, errlen, "unknown option '--%s'", name);
			return -EINVAL;
		}
		*id = o->id;
		return take_value(it, o, eq ? eq + 1 : NULL, value, err, errlen);
	}
	o = arg[2] == '\0' ? find_short(it->table, arg[1]) : NULL;
	if (!o) {
		fg__seterr(err, errlen, "unknown option '%.60s'", arg);
		return -EINVAL;
	}
	*id = o->id;
	return take_value(it, o, NULL, value, err, errlen);
}

void fg_opts_help(const struct fg_opt *table, struct fg_buf *out)
{
	for (const struct fg_opt *o = table; o->name; o++) {
		char left[80];
		int n;

		if (o->short_name)
			n = snprintf(left, sizeof(left), "  -%c, --%s%s%s", o->short_name, o->name,
				     o->argname ? " " : "", o->argname ? o->argname : "");
		else
			n = snprintf(left, sizeof(left), "      --%s%s%s", o->name,
				     o->argname ? " " : "", o->argname ? o->argname : "");
		if (n < 0)
			continue;
		if ((size_t)n < 30)
			fg_buf_addf(out, "%-30s%s", left, o->help);
		else
			fg_buf_addf(out, "%s\n%30s%s", left, "", o->help);
		if (o->env)
			fg_buf_addf(out, " [env: %s]", o->env);
		fg_buf_addc(out, '\n');
	}
}
