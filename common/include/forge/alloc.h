/*
 * alloc.h - allocation that never returns NULL.
 *
 * Allocation failure is not threaded through every API (house style): these
 * wrappers print "fatal: out of memory" to stderr and abort(). This is the one
 * place common/ may write to a stream, because there is nobody left to return to.
 *
 * Tier: base (util.h). Uses nothing of common/.
 */
#ifndef FORGE_ALLOC_H
#define FORGE_ALLOC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

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
char *fg_xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* The capacity to grow alloc to when nr elements are needed (git's
 * alloc_nr: half as much again plus 16, at least nr). */
size_t fg_alloc_nr(size_t alloc, size_t nr);

/* Frees p and sets it to NULL (git's FREE_AND_NULL); p is evaluated twice. */
#define FG_FREE_AND_NULL(p) \
	do {                \
		free(p);    \
		(p) = NULL; \
	} while (0)

/* Frees each of the n pointers of p (NULL ones included, as free() does). */
void fg_free_n(void *const *p, size_t n);
/* FG_FREE_ALL(a, b, ...): frees each argument, for a release function's
 * owned members (the list is written once; the arguments are evaluated once). */
#define FG_FREE_ALL(...) \
	fg_free_n((void *const[]){ __VA_ARGS__ }, sizeof((void *const[]){ __VA_ARGS__ }) / sizeof(void *))

/*
 * FG_ALLOC_GROW(x, nr, alloc): the one way an array grows (git's
 * ALLOC_GROW). x is the array (NULL when empty), alloc its capacity in
 * elements (a size_t lvalue); afterwards x holds at least nr elements.
 * Geometric, so appending one at a time is amortised O(1); never fails
 * (fg_xreallocarray). Each argument is evaluated more than once.
 */
#define FG_ALLOC_GROW(x, nr, alloc)                                      \
	do {                                                             \
		if ((nr) > (alloc)) {                                    \
			(alloc) = fg_alloc_nr((alloc), (nr));            \
			(x) = fg_xreallocarray((x), (alloc), sizeof(*(x))); \
		}                                                        \
	} while (0)

#endif
