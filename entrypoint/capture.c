/*
 * capture.c - first and last bytes of a stream (see capture.h).
 */
#include "capture.h"

#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"

void ep_capture_init(struct ep_capture *c, size_t head_max, size_t tail_max)
{
	memset(c, 0, sizeof(*c));
	fg_buf_init(&c->head, head_max);
	c->tail_max = tail_max;
}

void ep_capture_release(struct ep_capture *c)
{
	fg_buf_release(&c->head);
	FG_FREE_AND_NULL(c->tail);
	c->tail_start = 0;
	c->tail_len = 0;
	c->total = 0;
}

static void ring_add(struct ep_capture *c, const char *p, size_t n)
{
	if (!c->tail_max)
		return;
	if (!c->tail)
		c->tail = fg_xmalloc(c->tail_max);
	if (n >= c->tail_max) {
		/* Only the last tail_max bytes of this chunk can survive. */
		memcpy(c->tail, p + (n - c->tail_max), c->tail_max);
		c->tail_start = 0;
		c->tail_len = c->tail_max;
		return;
	}
	for (size_t done = 0; done < n;) {
		size_t end = (c->tail_start + c->tail_len) % c->tail_max;
		size_t room = c->tail_max - end;
		size_t k = n - done < room ? n - done : room;

		memcpy(c->tail + end, p + done, k);
		done += k;
		c->tail_len += k;
		if (c->tail_len > c->tail_max) {
			c->tail_start = (c->tail_start + (c->tail_len - c->tail_max)) % c->tail_max;
			c->tail_len = c->tail_max;
		}
	}
}

void ep_capture_add(struct ep_capture *c, const void *p, size_t n)
{
	const char *s = p;
	size_t room = c->head.max - c->head.len;
	size_t k = n < room ? n : room;

	c->total += n;
	if (k)
		fg_buf_add(&c->head, s, k);
	if (n > k)
		ring_add(c, s + k, n - k);
}

uint64_t ep_capture_omitted(const struct ep_capture *c)
{
	return c->total - c->head.len - c->tail_len;
}

int ep_capture_text(const struct ep_capture *c, struct fg_buf *out)
{
	size_t first;
	int rc = fg_buf_add(out, c->head.data ? c->head.data : "", c->head.len);

	if (!rc && ep_capture_omitted(c))
		rc = fg_buf_addf(out, "\n[... %llu bytes omitted ...]\n",
				 (unsigned long long)ep_capture_omitted(c));
	if (rc || !c->tail_len)
		return rc;
	first = c->tail_max - c->tail_start;
	if (first > c->tail_len)
		first = c->tail_len;
	rc = fg_buf_add(out, c->tail + c->tail_start, first);
	if (!rc && c->tail_len > first)
		rc = fg_buf_add(out, c->tail, c->tail_len - first);
	return rc;
}
