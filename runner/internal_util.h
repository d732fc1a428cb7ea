/*
 * internal_util.h - small helpers shared by the runner's modules.
 */
#ifndef RN_INTERNAL_UTIL_H
#define RN_INTERNAL_UTIL_H

#include <stddef.h>

/* snprintf into err when err != NULL and errlen > 0. */
void rn__seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
