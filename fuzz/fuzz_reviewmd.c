/*
 * fuzz_reviewmd.c - the review.md parser must accept any bytes: no crash, no
 * leak, and its invariants hold (instructions never NULL, max_retries within
 * the limit).
 */
#include <stdint.h>
#include <stdlib.h>

#include "forge/reviewmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_review_config c;
	struct fg_review_env env = { .max_retries = size % 3 ? NULL : "2", .stop_when_stalled = NULL };

	fg_review_config_init(&c);
	fg_review_config_parse(&c, (const char *)data, size, &env);
	if (!c.instructions || c.max_retries < 0 || c.max_retries > FG_MAX_RETRIES_LIMIT)
		abort();
	fg_review_config_release(&c);
	return 0;
}
