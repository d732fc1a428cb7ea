/*
 * opts.h - one option table per program drives parsing and --help.
 *
 * Protocol:
 *   1. declare a static table of struct fg_opt, ended by an entry with
 *      name == NULL;
 *   2. fg_opts_init(&it, table, argc, argv, first) and the one option loop
 *          while (fg_opts_each(&it)) { ... it.id, it.value ... }
 *          if (fg_opts_failed(&it)) -> usage error, it.err filled
 *      ("unknown option '--x'" (with "; did you mean '--y'?" when an
 *      option of the table is near, fg_opts_suggest()), "option
 *      '--workspace' needs a value", "option '--help' takes no value");
 *   3. positional arguments come back with id FG_OPT_POSITIONAL; everything
 *      after "--" is positional.
 * Accepted forms: --name value, --name=value, -x value, -x (flags).
 * Environment twins are applied by the caller before the loop (the option
 * wins); fg_opts_help() prints them.
 *
 * Tier: base (util.h). Uses buf.
 */
#ifndef FORGE_OPTS_H
#define FORGE_OPTS_H

#include <stdbool.h>

#include "forge/buf.h"

#define FG_OPT_POSITIONAL (-1)

struct fg_opt {
	int id;               /* > 0, returned by fg_opts_next() */
	const char *name;     /* long name without "--"; NULL ends the table */
	char short_name;      /* 0 for none */
	const char *argname;  /* e.g. "DIR"; NULL for a flag */
	const char *env;      /* environment twin shown in help, or NULL */
	const char *help;     /* one line */
};

struct fg_opts_iter {
	const struct fg_opt *table;
	int argc;
	char **argv;
	int i;
	int dashdash;
	int rc;               /* the last fg_opts_next() result (fg_opts_each) */
	/* What fg_opts_each() read: */
	int id;               /* the option's id, or FG_OPT_POSITIONAL */
	const char *value;    /* its value (NULL for a flag), the word of a positional */
	char err[256];        /* the usage error, once fg_opts_failed() */
};

void fg_opts_init(struct fg_opts_iter *it, const struct fg_opt *table, int argc, char **argv, int first);

/*
 * Next option. Returns 1 with *id and *value set (value NULL for flags, the
 * word itself for positionals), 0 when argv is exhausted, -EINVAL on a usage
 * error with err filled. value is borrowed from argv.
 */
int fg_opts_next(struct fg_opts_iter *it, int *id, const char **value, char *err, size_t errlen);

/* fg_opts_next() for the option loop: true with it->id and it->value set,
 * false when argv is exhausted or on a usage error (then fg_opts_failed(),
 * with it->err filled). */
bool fg_opts_each(struct fg_opts_iter *it);
/* True when the loop ended on a usage error (err was filled). */
bool fg_opts_failed(const struct fg_opts_iter *it);

/* Appends the option list, one option per line ("  --name ARG  help [env: X]"). */
void fg_opts_help(const struct fg_opt *table, struct fg_buf *out);

/* Looks an option up by long name; NULL if absent. */
const struct fg_opt *fg_opts_find(const struct fg_opt *table, const char *name);

/*
 * "Did you mean": the one of the n names nearest to word (fg_edit_distance()
 * at most FG_SUGGEST_DISTANCE, or a third of word's length when that is
 * more), the first of equals; NULL when none is near or word is one of
 * them. Borrowed from names. For unknown subcommands.
 */
#define FG_SUGGEST_DISTANCE 2
const char *fg_suggest(const char *word, const char *const *names, size_t n);

/* The same over the long names of table (without "--"); borrowed from it. */
const char *fg_opts_suggest(const struct fg_opt *table, const char *name);
/* The same, weighing the value that followed (NULL: none): among the near
 * names and those name is a prefix of (three letters at least), an option
 * whose argument fits the value comes first (an existing directory: an
 * argname ending in DIR; a file or a word that looks like a path: FILE;
 * else another), then the nearest. "--skills skills/" is --skills-dir,
 * "--task task.json" --task-file. */
const char *fg_opts_suggest_value(const struct fg_opt *table, const char *name, const char *value);

#endif
