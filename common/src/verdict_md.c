/*
 * verdict_md.c - the Markdown blocks of a reviewer's output, as CommonMark
 * reads them, one line at a time (verdict_internal.h: struct md).
 *
 * Only what decides whether a line's text is live matters here: fenced
 * code (an opening run of three or more backticks or tildes indented at
 * most three columns, closed by a run of the same character at least as
 * long, indented at most three, then only blanks), indented code (four
 * columns, which cannot interrupt a paragraph), block quotes ('>' after at
 * most three columns, with their own fences and indented code, and lazy
 * continuation lines after a quoted paragraph) and list items (whose
 * content column shifts the two indentation limits). Every other block is
 * text. A fence inside a list item ends with the item, a fence inside a
 * quote with the quote, as in CommonMark.
 */
#include "verdict_internal.h"

/* Columns of leading blanks from i (tabs to the next multiple of four);
 * *end is the first other byte. */
static size_t indent_cols(const char *t, size_t i, size_t e, size_t col, size_t *end)
{
	while (i < e && is_hws((unsigned char)t[i])) {
		col = t[i] == '\t' ? col + 4 - col % 4 : col + 1;
		i++;
	}
	*end = i;
	return col;
}

/* An opening fence at i (indentation already checked): a run of at least
 * three backticks or tildes; a backtick fence's info string may not hold a
 * backtick (the line is inline code then). *info is where the info begins. */
static bool open_at(const char *t, size_t i, size_t e, struct fence *f, size_t *info)
{
	size_t k = i;

	if (i >= e || (t[i] != '`' && t[i] != '~'))
		return false;
	while (k < e && t[k] == t[i])
		k++;
	if (k - i < 3 || (t[i] == '`' && memchr(t + k, '`', e - k)))
		return false;
	f->ch = t[i];
	f->n = k - i;
	*info = k;
	return true;
}

/* A closing fence at i: the same character, at least as long, then blanks. */
static bool close_at(const char *t, size_t i, size_t e, const struct fence *f)
{
	size_t k = i;

	while (k < e && t[k] == f->ch)
		k++;
	if (k - i < f->n)
		return false;
	while (k < e && is_ws((unsigned char)t[k]))
		k++;
	return k == e;
}

/* An ATX heading or a list marker at i: blocks that end a lazy quote. */
static bool interrupts(const char *t, size_t i, size_t e)
{
	size_t k = i;

	while (k < e && k - i < 7 && t[k] == '#')
		k++;
	if (k > i && k - i <= 6 && (k == e || is_hws((unsigned char)t[k])))
		return true;
	return list_marker(t, i, e) != i;
}

/* A line inside a block quote: its content starts at i, col columns in. */
static void quote_line(struct md *m, struct md_line *o, size_t i, size_t col)
{
	const char *t = m->t;
	size_t e = o->l.e, k, info;

	o->kind = MD_QUOTE_CODE;
	col = indent_cols(t, i, e, col, &k);
	if (m->qfence) {
		if (col < 4 && close_at(t, k, e, &m->qf))
			m->qfence = false;
		return;
	}
	if (k >= e || (is_ws((unsigned char)t[k]) && line_blank(t, &(struct line){ k, e, e }))) {
		m->qpara = false;
		o->kind = MD_QUOTE;
		o->cs = k;
		return;
	}
	if (col >= 4 && !m->qpara)
		return;
	if (col < 4 && open_at(t, k, e, &m->qf, &info)) {
		m->qfence = true;
		m->qpara = false;
		return;
	}
	m->qpara = true;
	o->kind = MD_QUOTE;
	o->cs = k;
}

/* '>' markers after at most three columns: strips them (nested quotes are
 * one quote here) and classifies the rest. False when the line is no quote. */
static bool take_quote(struct md *m, struct md_line *o, size_t i, size_t rel)
{
	const char *t = m->t;
	size_t e = o->l.e, k;

	if (rel > 3 || i >= e || t[i] != '>')
		return false;
	for (;;) {
		i++;
		if (i < e && t[i] == ' ')
			i++;
		for (k = i; k < e && k - i < 3 && t[k] == ' ';)
			k++;
		if (k >= e || t[k] != '>')
			break;
		i = k;
	}
	m->quote = true;
	m->para = false;
	quote_line(m, o, i, 0);
	return true;
}

/* A line outside fences and quotes: code, an opening fence, or text. */
static void top_line(struct md *m, struct md_line *o, size_t i, size_t col, size_t rel)
{
	const char *t = m->t;
	size_t e = o->l.e, k, info;

	o->kind = MD_TEXT;
	o->cs = i;
	if (m->para && rel >= 4)
		return;   /* a lazy continuation line: indented code cannot interrupt */
	if (rel >= 4) {
		o->kind = MD_CODE;
		return;
	}
	k = list_marker(t, i, e);
	if (k > i)
		m->list = col + (k - i);
	if (open_at(t, k, e, &m->f, &info)) {
		/* Left of the item's content, a fence ends the item. */
		if (k == i && col < m->list)
			m->list = 0;
		m->fence = true;
		m->fence_list = m->list;
		m->fence_json = info_is_json(t, info, e);
		m->para = false;
		o->kind = MD_FENCE;
		o->open = true;
		o->json = m->fence_json;
		return;
	}
	m->para = true;
}

/* The line inside an open top-level fence: code, the closing fence, or
 * (a line left of a list item's content) the end of the item and fence.
 * True when the line is taken. */
static bool fence_line(struct md *m, struct md_line *o, size_t i, size_t col, bool blank)
{
	if (!blank && m->fence_list && col < m->fence_list) {
		m->fence = false;
		m->list = 0;
		return false;
	}
	o->kind = MD_CODE;
	if (!blank && col < m->fence_list + 4 && close_at(m->t, i, o->l.e, &m->f)) {
		m->fence = false;
		o->kind = MD_FENCE;
		o->json = m->fence_json;
	}
	return true;
}

void fg__md_init(struct md *m, const char *t, size_t len)
{
	memset(m, 0, sizeof(*m));
	m->t = t;
	m->len = len;
}

bool fg__md_next(struct md *m, struct md_line *o)
{
	struct fence f;
	size_t i, col, rel, info;
	bool blank;

	if (!next_line(m->t, m->len, m->pos, &o->l))
		return false;
	m->pos = o->l.next;
	o->no = ++m->no;
	o->open = o->json = false;
	o->cs = o->l.s;
	col = indent_cols(m->t, o->l.s, o->l.e, 0, &i);
	blank = i == o->l.e || (is_ws((unsigned char)m->t[i]) && line_blank(m->t, &o->l));
	if (m->fence && fence_line(m, o, i, col, blank))
		return true;
	if (blank) {
		m->para = m->quote = m->qfence = m->qpara = false;
		o->kind = MD_BLANK;
		return true;
	}
	if (m->list && col < m->list && !m->para)
		m->list = 0;
	rel = m->list && col >= m->list ? col - m->list : col;
	if (take_quote(m, o, i, rel))
		return true;
	if (m->quote && m->qpara && !m->qfence && !interrupts(m->t, i, o->l.e) &&
	    !(rel < 4 && open_at(m->t, i, o->l.e, &f, &info))) {
		o->kind = MD_QUOTE;
		o->cs = i;
		return true;
	}
	m->quote = m->qfence = m->qpara = false;
	top_line(m, o, i, col, rel);
	return true;
}

bool fg__md_in_json_fence(const struct md *m, bool *json)
{
	*json = m->fence_json;
	return m->fence;
}
