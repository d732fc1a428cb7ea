/*
 * fuzz_output.c - every agent output, in every format, fed in two chunks
 * split where the first byte says: no crash, no leak, no unbounded memory;
 * an outcome that is ok has no error, one that is not has one; the text is
 * never NULL and is valid UTF-8.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "forge/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_utf8(const char *s)
{
	size_t n = strlen(s), k;

	for (size_t i = 0; i < n; i += k) {
		k = fg_utf8_seq(s + i, n - i);
		if (!k)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cut = size ? data[0] % (size + 1) : 0;

	for (int f = EP_OUTPUT_TEXT; f <= EP_OUTPUT_GEMINI; f++) {
		struct ep_output o;

		ep_output_init(&o, (enum ep_output_format)f);
		ep_output_feed(&o, data, cut);
		ep_output_feed(&o, data + cut, size - cut);
		ep_output_finish(&o);
		if (!o.text || (o.ok && o.error) || (!o.ok && !o.error))
			abort();
		check_utf8(o.text);
		if (o.error)
			check_utf8(o.error);
		ep_output_release(&o);
	}
	return 0;
}
