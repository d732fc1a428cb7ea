/*
 * reviewmd_sample.h - what the test_reviewmd*.c files share: the fixtures'
 * folder (FIX), an expected diagnostic (struct want_diag and its E/W/NONE
 * shorthands), a look-up of a diagnostic (has_diag) and a parse of a C
 * string (parse_str). Static inline: each file uses what it needs.
 */
#ifndef REVIEWMD_SAMPLE_H
#define REVIEWMD_SAMPLE_H

#include <string.h>

#include "forge/reviewmd.h"

#define FIX FG_FIXTURES_DIR "/reviewmd/"

/* Expectation for one diagnostic (or none when sub is NULL). */
struct want_diag {
	enum fg_diag_level level;
	int line;
	const char *sub;
};

#define E(l, s) { FG_DIAG_ERROR, l, s }
#define W(l, s) { FG_DIAG_WARNING, l, s }
#define NONE { FG_DIAG_WARNING, 0, NULL }
#define FM FG_RETRIES_FRONTMATTER
#define DEF FG_RETRIES_DEFAULT

/* 1 if d holds a diagnostic of level with sub in its message, on line (any
 * line when line < 0). */
static inline int has_diag(const struct fg_diags *d, enum fg_diag_level level, int line, const char *sub)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].level == level && (line < 0 || d->v[i].line == line) &&
		    strstr(d->v[i].msg, sub))
			return 1;
	return 0;
}

/* fg_review_config_parse() of the C string s, without an environment. */
static inline void parse_str(struct fg_review_config *c, const char *s)
{
	fg_review_config_parse(c, s, strlen(s), NULL);
}

#endif
