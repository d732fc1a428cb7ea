/*
 * tracectx.h - W3C trace context (https://www.w3.org/TR/trace-context/):
 * the traceparent the runner hands the entrypoint (FORGE_TRACEPARENT) and
 * the entrypoint hands each agent (TRACEPARENT), and the random ids of
 * traces and spans.
 *
 * A traceparent is "00-" 32 lowercase hex digits (the trace id, not all
 * zeros) "-" 16 (the parent span id, not all zeros) "-" 2 (the flags; bit
 * 0: sampled). Version 00 only: another version, upper case, or any other
 * shape is refused.
 *
 * Tier: base (libsodium's randombytes for the ids).
 */
#ifndef FORGE_TRACECTX_H
#define FORGE_TRACECTX_H

#include <stdbool.h>
#include <stddef.h>

#define FG_TRACE_ID_HEX 32
#define FG_TRACEPARENT_LEN 56   /* 55 characters and the NUL */

struct fg_trace_ctx {
	char trace_id[FG_TRACE_ID_HEX + 1];
	char span_id[16 + 1];
	bool sampled;
};

/* Reads s (borrowed, may be NULL): 0 with *out filled, or -EINVAL (*out
 * untouched). */
int fg_traceparent_parse(const char *s, struct fg_trace_ctx *out);
/* Writes "00-TRACE-SPAN-01" (sampled) or "...-00" into out. */
void fg_traceparent_format(char out[FG_TRACEPARENT_LEN], const char *trace_id, const char *span_id,
			   bool sampled);
/* Fills out with hexlen random lowercase hex digits (not all zeros) and a
 * NUL: hexlen 32 for a trace id, 16 for a span id. */
void fg_trace_random_hex(char *out, size_t hexlen);
/* True when s is exactly n lowercase hex digits, not all zeros. */
bool fg_trace_hex_valid(const char *s, size_t n);

#endif
