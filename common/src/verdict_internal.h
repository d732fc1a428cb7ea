/*
 * verdict_internal.h - what the files of the verdict parser share:
 * verdict.c (the scan for shadow blocks, markers and verdict lines, and
 * deciding), verdict_judgement.c (names, the judgement, feedback text),
 * verdict_findings.c (findings to and from JSON, the marker's findings
 * table, the review-output template's headings, **Verified:** lines, the
 * advice-only rule) and verdict_md.c (the Markdown blocks, line by line).
 * The small character, line and fence helpers are static inline here: the
 * files walk the same text the same way. verdict.h is the contract.
 */
#ifndef FG_VERDICT_INTERNAL_H
#define FG_VERDICT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "forge/buf.h"
#include "forge/verdict.h"

/* "no position": a scan that found nothing. */
#define NONE SIZE_MAX

/* ---- characters and lines ---------------------------------------------- */

static inline bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static inline bool is_hws(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* The marker rule's word characters: ASCII letters, digits, underscore. */
static inline bool is_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

static inline bool is_emph(unsigned char c)
{
	return c == '*' || c == '_';
}

/* Case-insensitive match of the lower-case ASCII word w at t[i..e). */
static inline bool ci_at(const char *t, size_t i, size_t e, const char *w)
{
	size_t n = strlen(w);

	if (i > e || e - i < n)
		return false;
	for (size_t k = 0; k < n; k++) {
		unsigned char c = (unsigned char)t[i + k];

		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c + 32);
		if (c != (unsigned char)w[k])
			return false;
	}
	return true;
}

static inline size_t skip_hws(const char *t, size_t i, size_t e)
{
	while (i < e && is_hws((unsigned char)t[i]))
		i++;
	return i;
}

static inline size_t skip_emph(const char *t, size_t i, size_t e)
{
	while (i < e && is_emph((unsigned char)t[i]))
		i++;
	return i;
}

struct line {
	size_t s;     /* first byte */
	size_t e;     /* the '\n' or the end of the input */
	size_t next;  /* start of the following line */
};

static inline bool next_line(const char *t, size_t len, size_t pos, struct line *l)
{
	const char *nl;

	if (pos >= len)
		return false;
	nl = memchr(t + pos, '\n', len - pos);
	l->s = pos;
	l->e = nl ? (size_t)(nl - t) : len;
	l->next = nl ? l->e + 1 : len;
	return true;
}

static inline bool line_blank(const char *t, const struct line *l)
{
	for (size_t i = l->s; i < l->e; i++)
		if (!is_ws((unsigned char)t[i]))
			return false;
	return true;
}

/* ---- fenced code blocks ------------------------------------------------ */

struct fence {
	char ch;      /* '`' or '~' */
	size_t n;     /* length of the opening run */
};

/* The info string's first word is "json", in any case. */
static inline bool info_is_json(const char *t, size_t i, size_t e)
{
	i = skip_hws(t, i, e);
	if (!ci_at(t, i, e, "json"))
		return false;
	i += 4;
	return i == e || is_ws((unsigned char)t[i]);
}

/* "- ", "* ", "+ ", "1. ", "1) " at i: returns the position after it. */
static inline size_t list_marker(const char *t, size_t i, size_t e)
{
	size_t k = i;

	if (i < e && (t[i] == '-' || t[i] == '*' || t[i] == '+')) {
		k = i + 1;
	} else {
		while (k < e && k - i < 10 && t[k] >= '0' && t[k] <= '9')
			k++;
		if (k == i || k >= e || (t[k] != '.' && t[k] != ')'))
			return i;
		k++;
	}
	return k < e && is_hws((unsigned char)t[k]) ? skip_hws(t, k, e) : i;
}

/* ---- Markdown blocks (verdict_md.c) ------------------------------------ */

/* What a line is, as CommonMark reads it (verdict_md.c). TEXT and QUOTE
 * lines are live text (a quote's content begins at cs); CODE and QUOTE_CODE
 * are code; FENCE is a top-level fence line (open tells an opening one,
 * json one whose info string is json). */
enum md_kind { MD_BLANK, MD_TEXT, MD_QUOTE, MD_QUOTE_CODE, MD_CODE, MD_FENCE };

struct md_line {
	struct line l;
	enum md_kind kind;
	size_t cs;      /* where the line's text begins (after '>' and blanks) */
	size_t no;      /* line number, from 1 */
	bool open;      /* MD_FENCE: it opens a block */
	bool json;      /* MD_FENCE, open: the info string is json */
};

/* The classifier's state: fg__md_init(), then fg__md_next() per line. */
struct md {
	const char *t;
	size_t len, pos, no;
	struct fence f, qf;     /* the open top-level fence, the quote's */
	bool fence, fence_json, qfence;
	bool para, quote, qpara; /* a paragraph is open (top, quote); in a quote */
	size_t list;            /* content column of the open list item, 0: none */
	size_t fence_list;      /* the list column the open fence belongs to */
};

void fg__md_init(struct md *m, const char *t, size_t len);
/* The next line and its kind into *o; false at the end of the input. */
bool fg__md_next(struct md *m, struct md_line *o);
/* True when a top-level fence is still open (at the end: it runs to the
 * end of the input); *json tells whether it is a json block. */
bool fg__md_in_json_fence(const struct md *m, bool *json);

/* verdict_judgement.c: appends n bytes as valid UTF-8 (NUL and invalid
 * bytes become U+FFFD; -E2BIG at the first character that does not fit). */
int fg__verdict_put_utf8(struct fg_buf *b, const char *p, size_t n);
/* verdict_judgement.c: the n bytes at p as feedback text (trimmed, valid
 * UTF-8), owned. */
char *fg__verdict_render1(const char *p, size_t n);
/* verdict_judgement.c: the feedback text of t[0..a) followed by t[b..len)
 * (the text around a cut-out part), owned. */
char *fg__verdict_render2(const char *t, size_t a, size_t b, size_t len);
/* verdict_judgement.c: str cleaned like feedback text, owned. */
char *fg__verdict_clean_str(const char *str);

/* verdict_findings.c: the findings of the marker's table, of the template's
 * headings, the **Verified:** lines and the advice-only rule, into v. */
void fg__verdict_table_findings(struct fg_judgement *v, const char *t, size_t len);
void fg__verdict_template_findings(struct fg_judgement *v, const char *t, size_t len);
/* Keeps line l when it is a "**Verified:**" line (verdict.h); the caller
 * passes live text only (not code, not quoted). */
void fg__verdict_verified_line(struct fg_judgement *v, const char *t, const struct line *l);
void fg__verdict_advice_rule(struct fg_judgement *v, size_t count);

#endif
