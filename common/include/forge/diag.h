/*
 * diag.h - diagnostics collected by the core instead of being printed.
 *
 * common/ never prints (house style): parsers append warnings and errors here
 * and the program decides how to show them (stderr, JSON "warnings", lint
 * lines). Messages follow the house style: lower case, no full stop,
 * subjects in single quotes.
 *
 * Tier: base (util.h). Uses alloc.
 */
#ifndef FORGE_DIAG_H
#define FORGE_DIAG_H

#include <stddef.h>

enum fg_diag_level { FG_DIAG_WARNING, FG_DIAG_ERROR };

struct fg_diag {
	enum fg_diag_level level;
	int line;        /* 1-based line in the input, 0 when not tied to a line */
	char *msg;       /* owned */
};

struct fg_diags {
	struct fg_diag *v;
	size_t n;
	size_t cap;
};

void fg_diags_init(struct fg_diags *d);
void fg_diags_release(struct fg_diags *d);
/* Appends a formatted diagnostic. */
void fg_diags_add(struct fg_diags *d, enum fg_diag_level level, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Number of diagnostics at the given level. */
size_t fg_diags_count(const struct fg_diags *d, enum fg_diag_level level);

#endif
