/*
 * tracectx.c - W3C trace context and trace ids (see tracectx.h).
 */
#include "forge/tracectx.h"
#include "forge/text.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

bool fg_trace_hex_valid(const char *s, size_t n)
{
	bool nonzero = false;

	if (!s || strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
		nonzero |= s[i] != '0';
	}
	return nonzero;
}

int fg_traceparent_parse(const char *s, struct fg_trace_ctx *out)
{
	struct fg_trace_ctx c;
	char flags[3];

	if (!s || strlen(s) != FG_TRACEPARENT_LEN - 1 || !fg_skip_prefix(s, "00-", NULL) || s[35] != '-' || s[52] != '-')
		return -EINVAL;
	memcpy(c.trace_id, s + 3, FG_TRACE_ID_HEX);
	c.trace_id[FG_TRACE_ID_HEX] = '\0';
	memcpy(c.span_id, s + 36, 16);
	c.span_id[16] = '\0';
	memcpy(flags, s + 53, 2);
	flags[2] = '\0';
	if (!fg_trace_hex_valid(c.trace_id, FG_TRACE_ID_HEX) || !fg_trace_hex_valid(c.span_id, 16) ||
	    !strchr("0123456789abcdef", flags[0]) || !strchr("0123456789abcdef", flags[1]) || !flags[0] ||
	    !flags[1])
		return -EINVAL;
	c.sampled = (strchr("0123456789abcdef", flags[1]) - "0123456789abcdef") & 1;
	*out = c;
	return 0;
}

void fg_traceparent_format(char out[FG_TRACEPARENT_LEN], const char *trace_id, const char *span_id,
			   bool sampled)
{
	snprintf(out, FG_TRACEPARENT_LEN, "00-%.32s-%.16s-%s", trace_id, span_id, sampled ? "01" : "00");
}

void fg_trace_random_hex(char *out, size_t hexlen)
{
	unsigned char b[32];

	if (sodium_init() < 0)
		abort();
	do {
		randombytes_buf(b, (hexlen + 1) / 2);
		sodium_bin2hex(out, hexlen + 1, b, hexlen / 2);
	} while (!fg_trace_hex_valid(out, hexlen));
}
