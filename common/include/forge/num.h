/*
 * num.h - strict number parsing for options and environment values.
 *
 * The whole string must be the number (no leading/trailing junk, no empty
 * string); values outside [min, max] are refused. Callers turn a failure into
 * a usage error (exit 2) naming the variable.
 *
 * Tier: base (util.h). Uses nothing of common/.
 */
#ifndef FORGE_NUM_H
#define FORGE_NUM_H

/* Parses a decimal integer. 0, -EINVAL (not a number), -ERANGE (outside [min, max]).
 * *out is untouched on failure. */
int fg_parse_long(const char *s, long min, long max, long *out);
/* Parses a finite decimal number (e.g. "0.5", "30"). Same returns as fg_parse_long(). */
int fg_parse_double(const char *s, double min, double max, double *out);
/* Parses a boolean: 1/true/yes/on and 0/false/no/off, case-insensitive.
 * 0 or -EINVAL; *out untouched on failure. */
int fg_parse_bool(const char *s, int *out);

#endif
