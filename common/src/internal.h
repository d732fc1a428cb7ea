/*
 * internal.h - cross-file internals of common/ (not installed, not public).
 */
#ifndef FORGE_INTERNAL_H
#define FORGE_INTERNAL_H

#include <stddef.h>

/* Copies src into dst (size n > 0), truncating; always NUL-terminates. */
void fg__strlcpy(char *dst, const char *src, size_t n);
/* snprintf into err if err != NULL and errlen > 0. */
void fg__seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
