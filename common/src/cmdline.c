/*
 * cmdline.c - splitting agent command strings and expanding placeholders
 * (see cmdline.h).
 *
 * The splitter is a single left-to-right pass; words are collected in a
 * private vector and handed to the caller only when the whole string was
 * valid, so a failure leaves the caller's vector as it was.
 */
#include "forge/cmdline.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "internal.h"

/* A word after expansion may grow past the command's limit (paths are
 * long), but not without bound. */
#define EXPANDED_MAX ((size_t)16 * 1024 * 1024)

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

struct splitter {
	const char *s;
	size_t n;
	size_t i;
	struct fg_buf w;        /* the word being built */
	bool in_word;           /* a word has started (it may still be empty: '') */
	struct fg_strvec words;
};

static const char *end_word(struct splitter *sp)
{
	if (!sp->in_word)
		return NULL;
	if (sp->words.n >= FG_CMDLINE_MAX_ARGS)
		return "too many arguments";
	fg_strvec_push_take(&sp->words, fg_buf_detach(&sp->w, NULL));
	sp->in_word = false;
	return NULL;
}

/* '...': everything up to the next quote, literally. */
static const char *single_quoted(struct splitter *sp)
{
	const char *q = memchr(sp->s + sp->i + 1, '\'', sp->n - sp->i - 1);
	size_t start = sp->i + 1;

	if (!q)
		return "unterminated single quote";
	sp->i = (size_t)(q - sp->s) + 1;
	return fg_buf_add(&sp->w, sp->s + start, sp->i - 1 - start) ? "too long" : NULL;
}

/* "...": a backslash escapes only " \ $ ` and newline (as in sh, where
 * backslash-newline disappears); before anything else it stays. */
static const char *double_quoted(struct splitter *sp)
{
	const char *s = sp->s;
	size_t i = sp->i + 1;
	int r = 0;

	while (i < sp->n && s[i] != '"' && !r) {
		if (s[i] == '\\' && i + 1 < sp->n && strchr("\"\\$`\n", s[i + 1])) {
			if (s[i + 1] != '\n')
				r = fg_buf_addc(&sp->w, s[i + 1]);
			i += 2;
			continue;
		}
		r = fg_buf_addc(&sp->w, s[i]);
		i++;
	}
	if (r)
		return "too long";
	if (i >= sp->n)
		return "unterminated double quote";
	sp->i = i + 1;
	return NULL;
}

/* Outside quotes a backslash quotes the next character; backslash-newline
 * is a line continuation and neither starts nor ends a word. */
static const char *backslash(struct splitter *sp)
{
	char c;

	if (sp->i + 1 >= sp->n)
		return "trailing backslash";
	c = sp->s[sp->i + 1];
	sp->i += 2;
	if (c == '\n')
		return NULL;
	sp->in_word = true;
	return fg_buf_addc(&sp->w, c) ? "too long" : NULL;
}

static const char *split_all(struct splitter *sp)
{
	const char *e = NULL;

	while (sp->i < sp->n && !e) {
		char c = sp->s[sp->i];

		if (c == '\\') {
			e = backslash(sp);
			continue;
		}
		if (is_blank(c)) {
			e = end_word(sp);
			sp->i++;
			continue;
		}
		sp->in_word = true;
		if (c == '\'') {
			e = single_quoted(sp);
		} else if (c == '"') {
			e = double_quoted(sp);
		} else {
			e = fg_buf_addc(&sp->w, c) ? "too long" : NULL;
			sp->i++;
		}
	}
	if (!e)
		e = end_word(sp);
	if (!e && sp->words.n == 0)
		e = "empty command";
	return e;
}

int fg_cmdline_split(const char *cmd, struct fg_strvec *out, char *err, size_t errlen)
{
	struct splitter sp;
	const char *e;

	sp.s = cmd ? cmd : "";
	sp.n = strnlen(sp.s, FG_CMDLINE_MAX_BYTES + 1);
	if (sp.n > FG_CMDLINE_MAX_BYTES) {
		fg__seterr(err, errlen, "too long");
		return -EINVAL;
	}
	sp.i = 0;
	sp.in_word = false;
	fg_buf_init(&sp.w, FG_CMDLINE_MAX_BYTES);
	fg_strvec_init(&sp.words);
	e = split_all(&sp);
	fg_buf_release(&sp.w);
	if (e) {
		fg_strvec_release(&sp.words);
		fg__seterr(err, errlen, "%s", e);
		return -EINVAL;
	}
	for (size_t k = 0; k < sp.words.n; k++)
		fg_strvec_push_take(out, sp.words.v[k]);
	free(sp.words.v);
	return 0;
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

static const char *lookup(const char *name, size_t n, const struct fg_placeholder *ph, size_t nph)
{
	for (size_t i = 0; i < nph; i++)
		if (ph[i].name && strlen(ph[i].name) == n && !memcmp(ph[i].name, name, n))
			return ph[i].value;
	return NULL;
}

/* The word with its known placeholders replaced (owned), or NULL when
 * nothing changed or the result would pass EXPANDED_MAX. Values are
 * inserted as they are and never scanned again. */
static char *expand_word(const char *w, const struct fg_placeholder *ph, size_t nph)
{
	struct fg_buf b;
	const char *p = w, *o;
	bool changed = false;
	int r = 0;

	fg_buf_init(&b, EXPANDED_MAX);
	for (o = strchr(p, '{'); o && !r; o = strchr(p, '{')) {
		const char *c = o + 1, *v;

		while (is_name_char(*c))
			c++;
		v = *c == '}' ? lookup(o + 1, (size_t)(c - o - 1), ph, nph) : NULL;
		r = fg_buf_add(&b, p, (size_t)(o - p) + (v ? 0 : 1));
		if (!r && v) {
			r = fg_buf_adds(&b, v);
			changed = true;
		}
		p = v ? c + 1 : o + 1;
	}
	if (!r)
		r = fg_buf_adds(&b, p);
	if (r || !changed) {
		fg_buf_release(&b);
		return NULL;
	}
	return fg_buf_detach(&b, NULL);
}

void fg_cmdline_expand(struct fg_strvec *argv, const struct fg_placeholder *ph, size_t nph)
{
	for (size_t i = 0; i < argv->n; i++) {
		char *nw = expand_word(argv->v[i], ph, nph);

		if (nw) {
			free(argv->v[i]);
			argv->v[i] = nw;
		}
	}
}
