/*
 * internal_util.c - small helpers shared by the runner's modules.
 */
#include "internal_util.h"

#include <stdarg.h>
#include <stdio.h>

void rn__seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
