/*
 * fuzz_verdict.c - every reviewer output yields a verdict: no crash, no leak,
 * feedback never NULL and bounded, approved always has empty feedback.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forge/verdict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_judgement v;

	fg_judgement_init(&v);
	fg_verdict_parse(&v, (const char *)data, size);
	if (!v.feedback || strlen(v.feedback) > FG_FEEDBACK_MAX)
		abort();
	if (v.verdict == FG_VERDICT_APPROVED && v.feedback[0])
		abort();
	if (v.nfindings > FG_FINDINGS_MAX)
		abort();
	fg_judgement_reset(&v);
	return 0;
}
