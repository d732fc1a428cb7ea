/*
 * internal_util.c - small helpers shared by the runner's modules.
 */
#include "internal_util.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "forge/num.h"

void rn__seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

uint64_t rn__test_bound(const char *var, uint64_t bound)
{
	const char *v = getenv(var);
	long n;

	if (v && !fg_parse_long(v, 1, LONG_MAX, &n) && (uint64_t)n < bound)
		return (uint64_t)n;
	return bound;
}
