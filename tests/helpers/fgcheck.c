/*
 * fgcheck.c - invariant checkers (see fgcheck.h).
 */
#include "fgcheck.h"

#include <criterion/criterion.h>
#include <errno.h>

void fgc_buf_check_at(const struct fg_buf *b, const char *file, int line)
{
	cr_assert(b->len <= b->max, "%s:%d: len %zu past max %zu", file, line, b->len, b->max);
	cr_assert(b->err == 0 || b->err == -E2BIG || b->err == -EINVAL, "%s:%d: err %d", file, line, b->err);
	if (!b->data) {
		cr_assert(b->len == 0 && b->cap == 0, "%s:%d: no data but len %zu, cap %zu", file, line,
			  b->len, b->cap);
		return;
	}
	cr_assert(b->len < b->cap, "%s:%d: len %zu, cap %zu", file, line, b->len, b->cap);
	cr_assert(b->cap <= b->max + 1, "%s:%d: cap %zu past max %zu + 1", file, line, b->cap, b->max);
	cr_assert(b->data[b->len] == '\0', "%s:%d: not NUL-terminated at %zu", file, line, b->len);
}
