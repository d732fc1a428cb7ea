/*
 * text.c - UTF-8, escaping, edit distance, hashing (see text.h).
 */
#include "forge/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/buf.h"
#include "internal.h"

size_t fg_utf8_seq(const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t need;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		need = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		need = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		need = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < need)
		return 0;
	for (size_t i = 1; i < need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((need == 3 && cp < 0x800) || (need == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return need;
}

int fg_utf8_is_control(const void *p, size_t len)
{
	const unsigned char *s = p;

	if (len == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 1;
	return len == 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9);
}

int fg_escape_common(struct fg_buf *b, unsigned char c)
{
	static const char from[] = "\"\\\n\r\t";
	static const char to[] = "\"\\nrt";
	const char *hit = c ? strchr(from, c) : NULL;

	if (!hit)
		return 0;
	fg_buf_addc(b, '\\');
	fg_buf_addc(b, to[hit - from]);
	return 1;
}

void fg_escape_controls(struct fg_buf *b, const void *s, size_t n, unsigned flags)
{
	const unsigned char *u = s;

	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		size_t len = fg_utf8_seq(u + i, n - i);

		if ((c == '"' || c == '\\') && !(flags & FG_ESC_QUOTES)) {
			fg_buf_addc(b, (char)c);
		} else if (fg_escape_common(b, c)) {
			len = 1;
		} else if (c < 0x20 || c == 0x7f || len == 0) {
			fg_buf_addf(b, "\\x%02x", c);
			len = 1;
		} else if (len > 1 && fg_utf8_is_control(u + i, len)) {
			for (size_t k = 0; k < len; k++)
				fg_buf_addf(b, "\\x%02x", u[i + k]);
		} else {
			fg_buf_add(b, u + i, len);
		}
		i += len ? len : 1;
	}
}

bool fg_skip_prefix(const char *s, const char *prefix, const char **rest)
{
	size_t n = strlen(prefix);

	if (strncmp(s, prefix, n))
		return false;
	if (rest)
		*rest = s + n;
	return true;
}

size_t fg_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t prev[FG_EDIT_MAX + 1], cur[FG_EDIT_MAX + 1];

	if (la > FG_EDIT_MAX || lb > FG_EDIT_MAX)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t best = prev[j - 1] + (a[i - 1] != b[j - 1]);

			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			cur[j] = best;
		}
		memcpy(prev, cur, (lb + 1) * sizeof(prev[0]));
	}
	return prev[lb];
}

int fg_utf8_check(const void *p, size_t n, size_t *bad)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n;) {
		size_t k = s[i] < 0x80 ? 1 : fg_utf8_seq(s + i, n - i);

		if (!k) {
			if (bad)
				*bad = i;
			return -EILSEQ;
		}
		i += k;
	}
	return 0;
}

char *fg_utf8_scrub(const char *s, size_t n)
{
	struct fg_buf b;

	fg_buf_init(&b, 3 * n + 1);
	for (size_t i = 0; i < n && s[i];) {
		size_t k = fg_utf8_seq(s + i, n - i);

		if (k) {
			fg_buf_add(&b, s + i, k);
			i += k;
		} else {
			fg_buf_adds(&b, "\xef\xbf\xbd");
			i++;
		}
	}
	return fg_buf_detach(&b, NULL);
}

char *fg_utf8_cut(const char *s, size_t max)
{
	size_t n;

	if (!s)
		return NULL;
	n = strlen(s);
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	return fg_xstrndup(s, n);
}

uint64_t fg_hash64(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 1099511628211ULL;
	}
	return h;
}
