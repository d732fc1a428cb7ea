/*
 * cycles_check.h - the invariant checker of the runner's cycle set
 * (struct rn_cycles, runner/result.h), called by the tests after every
 * mutation. Header-only: it needs the runner's headers, which the helpers
 * library does not see (fgcheck.h has the checkers of common/).
 *
 * Invariants: n <= cap, v == NULL only when cap == 0; cycle numbers
 * strictly increasing (one record per number, ordered); a record without
 * an object costs nothing (bytes == nodes == 0); bytes and nodes are the
 * sums of the records' and stay within max_bytes (<= RN_CYCLES_MAX_BYTES)
 * and RN_CYCLES_MAX_NODES; every kept record has its skill.
 */
#ifndef CYCLES_CHECK_H
#define CYCLES_CHECK_H

#include <criterion/criterion.h>

#include "result.h"

#define rnc_cycles_check(s) rnc_cycles_check_at((s), __FILE__, __LINE__)

static inline void rnc_cycles_check_at(const struct rn_cycles *s, const char *file, int line)
{
	size_t bytes = 0, nodes = 0;

	cr_assert(s->n <= s->cap, "%s:%d: n %zu past cap %zu", file, line, s->n, s->cap);
	cr_assert(s->v || !s->cap, "%s:%d: cap %zu without an array", file, line, s->cap);
	cr_assert(s->max_bytes <= RN_CYCLES_MAX_BYTES, "%s:%d: max_bytes %zu", file, line, s->max_bytes);
	for (size_t i = 0; i < s->n; i++) {
		const struct rn_cycle_rec *r = &s->v[i];

		cr_assert(r->c.cycle >= 1, "%s:%d: record %zu: cycle %d", file, line, i, r->c.cycle);
		if (i)
			cr_assert(s->v[i - 1].c.cycle < r->c.cycle, "%s:%d: cycles %d then %d", file, line,
				  s->v[i - 1].c.cycle, r->c.cycle);
		if (!r->obj)
			cr_assert(!r->bytes && !r->nodes, "%s:%d: cycle %d dropped but costs %zu bytes",
				  file, line, r->c.cycle, r->bytes);
		else
			cr_assert(r->c.skill && r->bytes, "%s:%d: cycle %d kept without skill or cost", file,
				  line, r->c.cycle);
		bytes += r->bytes;
		nodes += r->nodes;
	}
	cr_assert_eq(s->bytes, bytes, "%s:%d: bytes %zu, records sum to %zu", file, line, s->bytes, bytes);
	cr_assert_eq(s->nodes, nodes, "%s:%d: nodes %zu, records sum to %zu", file, line, s->nodes, nodes);
	cr_assert(s->bytes <= s->max_bytes, "%s:%d: %zu bytes past %zu", file, line, s->bytes, s->max_bytes);
	cr_assert(s->nodes <= RN_CYCLES_MAX_NODES, "%s:%d: %zu nodes", file, line, s->nodes);
}

#endif
