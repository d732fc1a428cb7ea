/*
 * capture.h - bounded capture of an agent's standard output.
 *
 * Memory stays bounded whatever the agent prints: the first head_max bytes
 * and the last tail_max bytes are kept (a ring buffer), everything between
 * is counted and dropped. The verdict parser then sees the beginning (the
 * first APPROVED/REJECTED marker) and the end (the last JSON block, the
 * review-result marker) of even a gigabyte of output.
 */
#ifndef EP_CAPTURE_H
#define EP_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "forge/buf.h"

#define EP_CAPTURE_HEAD_MAX (4u * 1024 * 1024)
#define EP_CAPTURE_TAIL_MAX (4u * 1024 * 1024)

struct ep_capture {
	struct fg_buf head;
	char *tail;           /* owned ring of tail_max bytes, allocated on first overflow */
	size_t tail_max;
	size_t tail_start;    /* index of the oldest byte in the ring */
	size_t tail_len;
	uint64_t total;       /* bytes offered in all */
};

void ep_capture_init(struct ep_capture *c, size_t head_max, size_t tail_max);
void ep_capture_release(struct ep_capture *c);
/* Appends n bytes (never fails). */
void ep_capture_add(struct ep_capture *c, const void *p, size_t n);
/* Bytes dropped from the middle. */
uint64_t ep_capture_omitted(const struct ep_capture *c);
/*
 * The kept text into out (appending, out should allow head_max + tail_max +
 * 128): head, then when bytes were dropped a line
 * "[... N bytes omitted ...]", then the tail. Returns 0 or -E2BIG.
 */
int ep_capture_text(const struct ep_capture *c, struct fg_buf *out);

#endif
