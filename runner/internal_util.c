/*
 * internal_util.c - small helpers shared by the runner's modules.
 */
#include "internal_util.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"
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

int rn__runnable(const char *prog)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	for (const char *p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; ; ) {
		size_t n = strcspn(p, ":");
		char *cand = fg_xasprintf("%.*s/%s", (int)n, n ? p : ".", prog);
		int ok = access(cand, X_OK) == 0;

		free(cand);
		if (ok)
			return 1;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}
