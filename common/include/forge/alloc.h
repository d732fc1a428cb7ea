/*
 * alloc.h - allocation that never returns NULL.
 *
 * Allocation failure is not threaded through every API (house style): these
 * wrappers print "fatal: out of memory" to stderr and abort(). This is the one
 * place common/ may write to a stream, because there is nobody left to return to.
 */
#ifndef FORGE_ALLOC_H
#define FORGE_ALLOC_H

#include <stddef.h>

/* malloc(n); n == 0 allocates one byte. Never returns NULL. */
void *fg_xmalloc(size_t n);
/* calloc(nmemb, size) with overflow check. Never returns NULL. */
void *fg_xcalloc(size_t nmemb, size_t size);
/* realloc(p, n); n == 0 keeps one byte. Never returns NULL. */
void *fg_xrealloc(void *p, size_t n);
/* reallocarray with overflow check. Never returns NULL. */
void *fg_xreallocarray(void *p, size_t nmemb, size_t size);
/* strdup; s must not be NULL. Returns an owned copy. */
char *fg_xstrdup(const char *s);
/* Copy of the first n bytes of s (stops early at NUL), NUL-terminated, owned. */
char *fg_xstrndup(const char *s, size_t n);
/* Owned formatted string (vasprintf); never NULL. */
char *fg_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
