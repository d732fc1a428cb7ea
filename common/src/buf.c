/*
 * buf.c - bounded growable buffers and string vectors (see buf.h).
 */
#include "forge/buf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"

void fg_buf_init(struct fg_buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
	b->err = 0;
}

void fg_buf_release(struct fg_buf *b)
{
	free(b->data);
	fg_buf_init(b, b->max);
}

void fg_buf_reset(struct fg_buf *b)
{
	b->len = 0;
	b->err = 0;
	if (b->data)
		b->data[0] = '\0';
}

int fg_buf_error(const struct fg_buf *b)
{
	return b->err;
}

int fg_buf_accept_cut(struct fg_buf *b)
{
	int cut = b->err != 0;

	b->err = 0;
	return cut;
}

size_t fg_buf_room(const struct fg_buf *b)
{
	return b->err ? 0 : b->max - b->len;
}

/* Makes room for extra more bytes plus the NUL; growth is geometric so that
 * appending byte by byte stays amortised O(1), but never past max + 1.
 * Sets the sticky err when they do not fit. */
static int grow(struct fg_buf *b, size_t extra)
{
	size_t need, ncap;

	if (b->err)
		return b->err;
	if (extra > b->max || b->len > b->max - extra) {
		b->err = -E2BIG;
		return b->err;
	}
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 64;
	while (ncap < need)
		ncap = ncap > (SIZE_MAX / 2) ? need : ncap * 2;
	if (ncap > b->max + 1)
		ncap = b->max + 1;
	b->data = fg_xrealloc(b->data, ncap);
	b->cap = ncap;
	return 0;
}

int fg_buf_add(struct fg_buf *b, const void *p, size_t n)
{
	int r = grow(b, n);

	if (r)
		return r;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int fg_buf_adds(struct fg_buf *b, const char *s)
{
	return fg_buf_add(b, s, strlen(s));
}

int fg_buf_addc(struct fg_buf *b, char c)
{
	return fg_buf_add(b, &c, 1);
}

int fg_buf_vaddf(struct fg_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;
	int r;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (b->err)
		return b->err;
	if (n < 0) {
		b->err = -EINVAL;
		return b->err;
	}
	r = grow(b, (size_t)n);
	if (r)
		return r;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int fg_buf_addf(struct fg_buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = fg_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return r;
}

void fg_buf_rewind(struct fg_buf *b, size_t len, int err)
{
	if (len < b->len)
		b->len = len;
	if (b->data)
		b->data[b->len] = '\0';
	b->err = err;
}

void fg_buf_drop_front(struct fg_buf *b, size_t n)
{
	if (!b->data)
		return;
	if (n > b->len)
		n = b->len;
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

const char *fg_buf_str(const struct fg_buf *b)
{
	return b->data ? b->data : "";
}

char *fg_buf_detach(struct fg_buf *b, size_t *len)
{
	char *p = b->data ? b->data : fg_xstrdup("");

	if (len)
		*len = b->len;
	fg_buf_init(b, b->max);
	return p;
}

void fg_strvec_init(struct fg_strvec *s)
{
	*s = (struct fg_strvec){ 0 };
}

void fg_strvec_release(struct fg_strvec *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	fg_strvec_init(s);
}

void fg_strvec_push_take(struct fg_strvec *s, char *str)
{
	FG_ALLOC_GROW(s->v, s->n + 2, s->cap);
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

void fg_strvec_push(struct fg_strvec *s, const char *str)
{
	fg_strvec_push_take(s, fg_xstrdup(str));
}

static int strvec_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void fg_strvec_sort(struct fg_strvec *s)
{
	if (s->n > 1)
		qsort(s->v, s->n, sizeof(char *), strvec_cmp);
}

bool fg_strvec_has(const struct fg_strvec *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return true;
	return false;
}

void fg_strvec_pushf(struct fg_strvec *s, const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = fg_xvasprintf(fmt, ap);
	va_end(ap);
	fg_strvec_push_take(s, p);
}

void fg_strvec_pushl(struct fg_strvec *s, ...)
{
	va_list ap;
	const char *str;

	va_start(ap, s);
	for (str = va_arg(ap, const char *); str; str = va_arg(ap, const char *))
		fg_strvec_push(s, str);
	va_end(ap);
}

void fg_strvec_push_opt(struct fg_strvec *s, const char *option, const char *value)
{
	if (value)
		fg_strvec_pushl(s, option, value, NULL);
}
