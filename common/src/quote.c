/*
 * quote.c - names and agent text as they are shown (see forge/quote.h).
 */
#include "forge/quote.h"

#include <stdbool.h>
#include <string.h>

#include "forge/buf.h"
#include "forge/text.h"

static bool needs_quote(unsigned char c)
{
	return c < 0x20 || c == 0x7f || c >= 0x80 || c == '"' || c == '\\';
}

void fg_quote_name(struct fg_buf *b, const char *s, size_t n)
{
	static const char cesc[] = { 'a', 'b', 't', 'n', 'v', 'f', 'r' };
	size_t i = 0;

	while (i < n && !needs_quote((unsigned char)s[i]))
		i++;
	if (i == n) {
		fg_buf_add(b, s, n);
		return;
	}
	fg_buf_addc(b, '"');
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fg_buf_addf(b, "\\%c", c);
		else if (c >= '\a' && c <= '\r')
			fg_buf_addf(b, "\\%c", cesc[c - '\a']);
		else if (needs_quote(c))
			fg_buf_addf(b, "\\%03o", c);
		else
			fg_buf_addc(b, (char)c);
	}
	fg_buf_addc(b, '"');
}

char *fg_quote_name_dup(const char *s)
{
	struct fg_buf b;

	fg_buf_init(&b, 4 * strlen(s) + 3);
	fg_quote_name(&b, s, strlen(s));
	return fg_buf_detach(&b, NULL);
}

static bool is_punct(unsigned char c)
{
	return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
	       (c >= '{' && c <= '~');
}

void fg_quote_md_name(struct fg_buf *b, const char *s)
{
	for (; *s; s++) {
		if (strchr("\\`*[]<>|~#", *s))
			fg_buf_addc(b, '\\');
		fg_buf_addc(b, *s);
	}
}

void fg_quote_md_text(struct fg_buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t k;

		if (c < 0x80) {
			if (is_punct(c))
				fg_buf_addc(b, '\\');
			fg_buf_addc(b, c < 0x20 || c == 0x7f ? ' ' : (char)c);
			i++;
			continue;
		}
		k = fg_utf8_seq(s + i, n - i);
		if (k && !fg_utf8_is_control(s + i, k))
			fg_buf_add(b, s + i, k);
		else
			fg_buf_adds(b, k ? " " : "\xEF\xBF\xBD");
		i += k ? k : 1;
	}
}

void fg_quote_md_block(struct fg_buf *b, const char *s, size_t n)
{
	while (n > 0 && strchr(" \t\r\n", s[n - 1]))
		n--;
	for (size_t i = 0; i < n;) {
		size_t k = i;

		while (k < n && s[k] != '\n' && s[k] != '\r')
			k++;
		fg_buf_adds(b, k > i ? "> " : ">");
		fg_quote_md_text(b, s + i, k - i);
		fg_buf_addc(b, '\n');
		/* One terminator: "\r\n", "\n" or a lone "\r". */
		if (k < n && s[k] == '\r' && k + 1 < n && s[k + 1] == '\n')
			k++;
		i = k + 1;
	}
}

void fg_quote_md_fence(struct fg_buf *b, const char *s, const char *info, const char *empty)
{
	size_t run = 0, longest = 0, n;

	if (!*s && empty)
		s = empty;
	for (const char *p = s; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	n = longest < 3 ? 3 : longest + 1;
	for (size_t i = 0; i < n; i++)
		fg_buf_addc(b, '`');
	fg_buf_adds(b, info ? info : "");
	fg_buf_addc(b, '\n');
	fg_buf_adds(b, s);
	if (*s && s[strlen(s) - 1] != '\n')
		fg_buf_addc(b, '\n');
	for (size_t i = 0; i < n; i++)
		fg_buf_addc(b, '`');
	fg_buf_addc(b, '\n');
}
