/*
 * fgcheck.h - invariant checkers for the data structures of common/, called
 * by the tests after every mutation (the house style's "an invariant checker
 * per data structure"). Each fails the test, saying which invariant broke
 * and where (what, borrowed, names the call site in the message).
 *
 * The runner's cycle set has its checker beside its tests
 * (tests/runner/cycles_check.h): it needs the runner's headers.
 */
#ifndef FGCHECK_H
#define FGCHECK_H

#include "forge/buf.h"

/*
 * struct fg_buf: data is NULL (then len, cap are 0) or NUL-terminated at
 * data[len] with len < cap; len <= max; cap <= max + 1 (never allocated
 * past its bound); err is 0 or -E2BIG.
 */
#define fgc_buf_check(b) fgc_buf_check_at((b), __FILE__, __LINE__)
void fgc_buf_check_at(const struct fg_buf *b, const char *file, int line);

#endif
