/*
 * internal_util.h - small helpers shared by the runner's modules.
 */
#ifndef RN_INTERNAL_UTIL_H
#define RN_INTERNAL_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* snprintf into err when err != NULL and errlen > 0. */
void rn__seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Test-only lowering of a bound: the byte count in the environment
 * variable var when it is valid and below bound, else bound (never raised).
 * FORGE_TEST_CYCLES_MAX_BYTES (result.h), FORGE_TEST_OUTPUT_LOG_MAX
 * (output.h). */
uint64_t rn__test_bound(const char *var, uint64_t bound);

/* 1 when prog (a path with '/', else a name looked up in PATH as execvp
 * does) names an executable file. */
int rn__runnable(const char *prog);

#endif
