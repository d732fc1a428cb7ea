/*
 * outcome.h - what the loop (loop.h) concludes from its history of cycles
 * besides the verdict, and how it says a cycle's outcome: a stall (with
 * stop_when_stalled), a reviewer that could not be started, a reviewer
 * (or panel role) that judged nothing in two cycles in a row, and the
 * progress lines of a cycle. Pure functions of the history they are given
 * (borrowed), apart from the lines printed.
 */
#ifndef EP_OUTCOME_H
#define EP_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>

#include "forge/cycle.h"
#include "forge/reviewmd.h"

/* The last two of hist[0..n) rejected the work for the same reasons (two
 * turns in a row that changed nothing count as that), and cfg stops on a
 * stall. */
bool ep_outcome_stalled(const struct fg_review_config *cfg, const struct fg_cycle *hist, size_t n);

/* The feedback of cycle c's review that could not be started (the single
 * reviewer's, or a panel role's run in this cycle), or NULL. Borrowed. */
const char *ep_outcome_unstartable(const struct fg_cycle *c);

/*
 * The reviewer ("reviewer") or panel role that failed or gave no verdict,
 * after its re-ask, in both of the last two cycles of hist[0..n), or NULL:
 * sending the worker back again would only spend more. Borrowed from hist.
 */
const char *ep_outcome_useless_twice(const struct fg_review_config *cfg, const struct fg_cycle *hist,
				     size_t n);

/* The progress lines of cycle c: its verdict (the feedback's first line:
 * the reviewer's text, escaped by ep_log() like every message, so it
 * cannot rewrite the terminal line), then each panel role's review. */
void ep_outcome_progress(const struct fg_cycle *c);

#endif
