/*
 * alloc.c - allocation that aborts on failure (see alloc.h).
 */
#include "forge/alloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die_oom(void)
{
	/* Nothing can be returned: say so once and abort. */
	fputs("fatal: out of memory\n", stderr);
	abort();
}

void *fg_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die_oom();
	return p;
}

void *fg_xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		die_oom();
	return p;
}

void *fg_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		die_oom();
	return q;
}

void *fg_xreallocarray(void *p, size_t nmemb, size_t size)
{
	if (size && nmemb > SIZE_MAX / size)
		die_oom();
	return fg_xrealloc(p, nmemb * size);
}

size_t fg_alloc_nr(size_t alloc, size_t nr)
{
	size_t n = alloc > (SIZE_MAX - 16) / 3 * 2 ? nr : (alloc + 16) / 2 * 3;

	return n < nr ? nr : n;
}

void fg_free_n(void *const *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i]);
}

char *fg_xstrdup(const char *s)
{
	return fg_xstrndup(s, strlen(s));
}

char *fg_xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = fg_xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *fg_xvasprintf(const char *fmt, va_list ap)
{
	char *p = NULL;

	if (vasprintf(&p, fmt, ap) < 0)
		die_oom();
	return p;
}

char *fg_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = fg_xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}
