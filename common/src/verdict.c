/*
 * verdict.c - reading a reviewer's verdict (see verdict.h): the scan and
 * the decision; the judgement it fills and its feedback text are
 * verdict_judgement.c's.
 *
 * The whole input is read in one forward pass over its lines (memchr for the
 * line ends) that tracks fenced code blocks, parses ```json blocks, notes the
 * last "Verdict:" line and groups the remaining lines into paragraphs. Each
 * paragraph is scanned once for inline code spans and APPROVED / REJECTED
 * markers; the code span matcher is the one of cmark (remember where runs of
 * each backtick length were last seen, so that an opener without a closer is
 * rejected in O(1) after the first full scan), which keeps the scan linear
 * even for hostile inputs such as millions of unmatched backticks. The
 * review-result marker only needs the tail of the input, read backwards.
 * Nothing is copied except the feedback, which is capped.
 */
#include "forge/text.h"
#include "forge/verdict.h"
#include "verdict_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/json.h"
#include "forge/util.h"

/* A ```json block larger than this is not parsed: no honest shadow block
 * comes near it, and cJSON would build a tree several times its size. */
#define JSON_BLOCK_MAX ((size_t)4 * 1024 * 1024)
/* Backtick runs longer than this never open a code span (cmark does the
 * same with 80); it bounds the per-length table of the span matcher. */
#define MAX_TICKS 128
/* A third kind a shadow block or a verdict line may declare: no objection,
 * the role has nothing to assess (fg_judgement.out_of_scope). */
#define OUT_OF_SCOPE 2

/* ---- the scan ---------------------------------------------------------- */

/* cmark's table for code spans: pos[n] is the furthest run of exactly n
 * backticks seen in the current paragraph (valid when gen[n] == cur). Once
 * one search has run to the paragraph's end (scanned), an opener of length
 * n whose pos[n] lies before it has no closer, without searching again. */
struct ticks {
	size_t pos[MAX_TICKS + 1];
	size_t gen[MAX_TICKS + 1];
	size_t cur;
	bool scanned;
};

/* The signal kinds, in the order of the rules (and of their formats). */
enum { S_JSON, S_RRM, S_LINE, S_MARK, NSIG };
/* Which side a signal is on: approval (out of scope included) or rejection. */
enum { SIDE_A, SIDE_R };

/* Where a signal of one kind and side stands (the first one, or for
 * json blocks and verdict lines the last one), when seen. */
struct sig {
	bool seen;
	size_t pos;
};

/* One side's ```json block: the last qualifying one, fences included. */
struct jblock {
	cJSON *json;
	int kind;                        /* a kind or OUT_OF_SCOPE */
	size_t js, je;
};

struct scan {
	struct fg_judgement *v;          /* gets the **Verified:** lines */
	const char *t;
	size_t len;
	struct sig sig[2][NSIG];         /* [side][kind] */
	struct jblock jb[2];             /* [side] */
	int vline_a;                     /* the last approving verdict line's kind */
	size_t me[2];                    /* end of each side's first marker */
	bool rcaps;                      /* a live REJECTED written in capitals */
	size_t last;                     /* start of the last non-blank line, if live text */
	/* Start of the paragraph being collected, NONE between paragraphs;
	 * pquote: it is quoted. */
	size_t ps;
	bool pquote;
	struct ticks tk;
};

/* Notes a signal of kind k on the side of verdict kind (a kind or
 * OUT_OF_SCOPE) at pos; first is the first one kept, else the last. */
static void note(struct scan *sc, int k, int verdict, size_t pos, bool first)
{
	struct sig *g = &sc->sig[verdict == FG_VERDICT_REJECTED ? SIDE_R : SIDE_A][k];

	if (first && g->seen)
		return;
	g->seen = true;
	g->pos = pos;
}

static bool ci_eq(const char *s, const char *w)
{
	size_t n = strlen(s);

	return n == strlen(w) && ci_at(s, 0, n, w);
}

/* The kind a shadow object declares (OUT_OF_SCOPE included), or -1 when it
 * is no shadow object. */
static int shadow_kind(const cJSON *j)
{
	const cJSON *v = fg_json_get(j, "verdict");

	if (!cJSON_IsObject(j) || !cJSON_IsString(v) || !v->valuestring)
		return -1;
	if (ci_eq(v->valuestring, "approve"))
		return FG_VERDICT_APPROVED;
	if (ci_eq(v->valuestring, "out_of_scope"))
		return OUT_OF_SCOPE;
	if (ci_eq(v->valuestring, "request_changes"))
		return FG_VERDICT_REJECTED;
	return -1;
}

/* Parses the content [cs, ce) of the json block [bs, be); when it is a
 * shadow object it replaces any earlier one of its side. */
static void take_json(struct scan *sc, size_t bs, size_t cs, size_t ce, size_t be)
{
	const char *end = NULL;
	cJSON *j;
	int kind, side;

	if (ce - cs > JSON_BLOCK_MAX)
		return;
	j = cJSON_ParseWithLengthOpts(sc->t + cs, ce - cs, &end, 0);
	if (!j)
		return;
	while (end && end < sc->t + ce && is_ws((unsigned char)*end))
		end++;
	kind = end == sc->t + ce ? shadow_kind(j) : -1;
	if (kind < 0) {
		cJSON_Delete(j);
		return;
	}
	side = kind == FG_VERDICT_REJECTED ? SIDE_R : SIDE_A;
	cJSON_Delete(sc->jb[side].json);
	sc->jb[side] = (struct jblock){ j, kind, bs, be };
	note(sc, S_JSON, kind, bs, false);
}

/* "OUT OF SCOPE" (blanks, '_' or '-' between the words) at i: the position
 * after it, or NONE. */
static size_t out_of_scope_words(const char *t, size_t i, size_t e)
{
	static const char *const words[] = { "out", "of", "scope" };

	for (size_t w = 0; w < 3; w++) {
		size_t j = i;

		if (w) {
			while (j < e && (is_hws((unsigned char)t[j]) || t[j] == '_' || t[j] == '-'))
				j++;
			if (j == i)
				return NONE;
		}
		if (!ci_at(t, j, e, words[w]))
			return NONE;
		i = j + strlen(words[w]);
	}
	return i;
}

/* Rule 3 on the line [s, e): "Verdict: APPROVE" or "Verdict: REQUEST
 * CHANGES" and nothing else (a trailing full stop aside), optionally a list
 * item, with optional * or _ emphasis around the parts. Kind or -1. */
static int verdict_line(const char *t, size_t s, size_t e)
{
	size_t i = list_marker(t, skip_hws(t, s, e), e), j;
	int k;

	while (e > i && is_ws((unsigned char)t[e - 1]))
		e--;
	i = skip_emph(t, i, e);
	if (!ci_at(t, i, e, "verdict"))
		return -1;
	i = skip_hws(t, skip_emph(t, i + 7, e), e);
	if (i >= e || t[i] != ':')
		return -1;
	i = skip_emph(t, skip_hws(t, skip_emph(t, i + 1, e), e), e);
	if (ci_at(t, i, e, "approve")) {
		k = FG_VERDICT_APPROVED;
		i += 7;
	} else if (ci_at(t, i, e, "request")) {
		for (j = i + 7; j < e && (is_hws((unsigned char)t[j]) || t[j] == '_' || t[j] == '-');)
			j++;
		if (j == i + 7 || !ci_at(t, j, e, "changes"))
			return -1;
		k = FG_VERDICT_REJECTED;
		i = j + 7;
	} else if (ci_at(t, i, e, "out")) {
		i = out_of_scope_words(t, i, e);
		if (i == NONE)
			return -1;
		k = OUT_OF_SCOPE;
	} else {
		return -1;
	}
	i = skip_emph(t, i, e);
	if (i < e && t[i] == '.')
		i = skip_emph(t, i + 1, e);
	return i == e ? k : -1;
}

static size_t tick_run(const char *t, size_t i, size_t e)
{
	size_t k = i;

	while (k < e && t[k] == '`')
		k++;
	return k - i;
}

/* Where the run of exactly n backticks closing a span opened just before
 * `from` starts, or NONE. Amortised O(1) per call over a paragraph. */
static size_t find_closer(struct ticks *tk, const char *t, size_t from, size_t pe, size_t n)
{
	size_t i = from;

	if (n > MAX_TICKS)
		return NONE;
	if (tk->scanned && (tk->gen[n] != tk->cur || tk->pos[n] < from))
		return NONE;
	while (i < pe) {
		const char *b = memchr(t + i, '`', pe - i);
		size_t k, run;

		if (!b)
			break;
		k = (size_t)(b - t);
		run = tick_run(t, k, pe);
		if (run <= MAX_TICKS && (tk->gen[run] != tk->cur || tk->pos[run] < k)) {
			tk->pos[run] = k;
			tk->gen[run] = tk->cur;
		}
		if (run == n)
			return k;
		i = k + run;
	}
	tk->scanned = true;
	return NONE;
}

/* A whole-word APPROVED / REJECTED at i (ASCII word characters only):
 * noted as the first marker of its side, unless quoted is set and it
 * approves (a quote approves nothing). */
static bool marker_at(struct scan *sc, size_t i, bool quoted)
{
	const char *t = sc->t;
	int k;

	if (i > 0 && is_word((unsigned char)t[i - 1]))
		return false;
	if (ci_at(t, i, sc->len, "approved"))
		k = FG_VERDICT_APPROVED;
	else if (ci_at(t, i, sc->len, "rejected"))
		k = FG_VERDICT_REJECTED;
	else
		return false;
	if (i + 8 < sc->len && is_word((unsigned char)t[i + 8]))
		return false;
	if (quoted && k == FG_VERDICT_APPROVED)
		return false;
	if (k == FG_VERDICT_REJECTED && !memcmp(t + i, "REJECTED", 8))
		sc->rcaps = true;
	if (!sc->sig[k][S_MARK].seen)
		sc->me[k] = i + 8;
	note(sc, S_MARK, k, i, true);
	return true;
}

/* Both sides' markers found, the rejecting one in capitals (see
 * weak_rejection): later paragraphs need no scan. */
static bool markers_done(const struct scan *sc)
{
	return sc->sig[SIDE_A][S_MARK].seen && sc->sig[SIDE_R][S_MARK].seen && sc->rcaps;
}

/* Looks for the first markers in the paragraph [ps, pe), skipping inline
 * code spans. Each byte is visited once by this loop; find_closer only
 * reads ahead into bytes the loop then skips, or once per paragraph. */
static void scan_para(struct scan *sc, size_t ps, size_t pe, bool quoted)
{
	const char *t = sc->t;
	size_t i = ps;

	sc->tk.cur++;
	sc->tk.scanned = false;
	while (i < pe) {
		unsigned char c = (unsigned char)t[i];

		if (c == '`') {
			size_t n = tick_run(t, i, pe);
			size_t cl = find_closer(&sc->tk, t, i + n, pe, n);

			i = (cl == NONE ? i : cl) + n;
			continue;
		}
		c |= 0x20;
		if ((c == 'a' || c == 'r') && marker_at(sc, i, quoted) && markers_done(sc))
			return;
		i++;
	}
}

static void flush_para(struct scan *sc, size_t pe)
{
	if (sc->ps != NONE && !markers_done(sc))
		scan_para(sc, sc->ps, pe, sc->pquote);
	sc->ps = NONE;
}

/* A line of live text (quoted or not): joins its paragraph, and may be a
 * verdict line (a quoted one only rejects). */
static void text_line(struct scan *sc, const struct md_line *l)
{
	bool quoted = l->kind == MD_QUOTE;
	int k;

	if (sc->ps != NONE && sc->pquote != quoted)
		flush_para(sc, l->l.s);
	if (sc->ps == NONE) {
		sc->ps = l->l.s;
		sc->pquote = quoted;
	}
	k = verdict_line(sc->t, l->cs, l->l.e);
	if (!quoted)
		fg__verdict_verified_line(sc->v, sc->t, &l->l);
	if (k < 0 || (quoted && k != FG_VERDICT_REJECTED))
		return;
	note(sc, S_LINE, k, l->l.s, false);
	if (k != FG_VERDICT_REJECTED)
		sc->vline_a = k;
}

/* The single pass over the lines (see the top of the file). */
static void scan_all(struct scan *sc)
{
	struct md m;
	struct md_line l;
	size_t bs = 0, cs = 0;
	bool json;

	fg__md_init(&m, sc->t, sc->len);
	while (fg__md_next(&m, &l)) {
		if (l.kind != MD_BLANK)
			sc->last = l.kind == MD_TEXT ? l.l.s : NONE;
		if (l.kind == MD_TEXT || l.kind == MD_QUOTE) {
			text_line(sc, &l);
			continue;
		}
		flush_para(sc, l.l.s);
		if (l.kind == MD_FENCE && l.open) {
			bs = l.l.s;
			cs = l.l.next;
		} else if (l.kind == MD_FENCE && l.json) {
			take_json(sc, bs, cs, l.l.s, l.l.next);
		}
	}
	/* An unclosed fence runs to the end; a truncated shadow block that
	 * still parses is the reviewer's verdict all the same. */
	if (fg__md_in_json_fence(&m, &json) && json)
		take_json(sc, bs, cs, sc->len, sc->len);
	flush_para(sc, sc->len);
}

/* Skips "<!--"-style literal w after optional blanks; NONE if absent. */
static size_t expect(const char *t, size_t i, size_t e, const char *w)
{
	while (i < e && is_ws((unsigned char)t[i]))
		i++;
	return ci_at(t, i, e, w) ? i + strlen(w) : NONE;
}

/* Rule 2: the last non-empty line is "<!-- review-result: findings=N -->"
 * (blanks allowed between the parts, keywords in any case). Returns the
 * kind (N == 0: approved) or -1; *ls is where that line starts, *count is
 * N (SIZE_MAX when it does not fit). */
static int review_result(const char *t, size_t len, size_t *ls, size_t *count)
{
	size_t e = len, s, i, d;

	while (e > 0 && is_ws((unsigned char)t[e - 1]))
		e--;
	for (s = e; s > 0 && t[s - 1] != '\n';)
		s--;
	*ls = s;
	i = expect(t, s, e, "<!--");
	if (i != NONE)
		i = expect(t, i, e, "review-result");
	if (i != NONE)
		i = expect(t, i, e, ":");
	if (i != NONE)
		i = expect(t, i, e, "findings");
	if (i != NONE)
		i = expect(t, i, e, "=");
	if (i == NONE)
		return -1;
	while (i < e && is_hws((unsigned char)t[i]))
		i++;
	for (d = i; i < e && t[i] >= '0' && t[i] <= '9';)
		i++;
	if (i == d || expect(t, i, e, "-->") != e)
		return -1;
	/* Any digit other than zero makes N non-zero, however long N is. */
	while (d < i && t[d] == '0')
		d++;
	*count = 0;
	for (size_t k = d; k < i; k++)
		*count = *count > (SIZE_MAX - 9) / 10 ? SIZE_MAX : *count * 10 + (size_t)(t[k] - '0');
	return d == i ? FG_VERDICT_APPROVED : FG_VERDICT_REJECTED;
}

/* ---- deciding ---------------------------------------------------------- */

static void decide_json(struct fg_judgement *v, const struct scan *sc, const struct jblock *jb)
{
	const cJSON *raw = fg_json_get(jb->json, "rawMarkdown");
	const cJSON *fs = fg_json_get(jb->json, "findings");

	v->format = FG_FORMAT_JSON_SHADOW;
	v->out_of_scope = jb->kind == OUT_OF_SCOPE;
	v->verdict = v->out_of_scope ? FG_VERDICT_APPROVED : (enum fg_verdict_kind)jb->kind;
	if (cJSON_IsArray(fs)) {
		v->has_findings = true;
		fg_findings_from_json(fs, &v->findings, &v->nfindings);
		/* from_json grows the array to exactly its count. */
		v->findings_alloc = v->nfindings;
	}
	if (v->verdict == FG_VERDICT_APPROVED)
		return;
	if (cJSON_IsString(raw) && raw->valuestring) {
		v->feedback = fg__verdict_render1(raw->valuestring, strlen(raw->valuestring));
		if (*v->feedback)
			return;
		FG_FREE_AND_NULL(v->feedback);
	}
	v->feedback = fg__verdict_render2(sc->t, jb->js, jb->je, sc->len);
}

/* After REJECTED: closing emphasis, then on the same line any ':' '-' en
 * or em dash separators with blanks, then emphasis closed right after the
 * separator ("**REJECTED:** why"). A list on the next line is left alone. */
static size_t after_marker(const char *t, size_t i, size_t len)
{
	size_t j, k;

	i = skip_emph(t, i, len);
	for (;;) {
		j = skip_hws(t, i, len);
		if (j < len && (t[j] == ':' || t[j] == '-'))
			j++;
		else if (len - j >= 3 && t[j] == '\xE2' && t[j + 1] == '\x80' &&
			 (t[j + 2] == '\x93' || t[j + 2] == '\x94'))
			j += 3;
		else
			break;
		i = j;
	}
	j = skip_hws(t, i, len);
	k = skip_emph(t, j, len);
	return k > j && (k == len || is_ws((unsigned char)t[k])) ? k : i;
}

static void decide_marker(struct fg_judgement *v, const struct scan *sc, int side)
{
	const char *t = sc->t;
	size_t a, b, ms = sc->sig[side][S_MARK].pos;

	v->format = FG_FORMAT_MARKER;
	v->verdict = side == SIDE_A ? FG_VERDICT_APPROVED : FG_VERDICT_REJECTED;
	if (v->verdict == FG_VERDICT_APPROVED)
		return;
	a = after_marker(t, sc->me[side], sc->len);
	v->feedback = fg__verdict_render1(t + a, sc->len - a);
	if (*v->feedback)
		return;
	free(v->feedback);
	/* Nothing after it: the reasons came first ("...\n\n**REJECTED**"). */
	for (b = ms; b > 0 && is_emph((unsigned char)t[b - 1]);)
		b--;
	v->feedback = fg__verdict_render1(t, b);
}

/* The judgement of one signal kind on one side, as its rule reads it. */
static void decide(struct fg_judgement *v, const struct scan *sc, int kind, int side)
{
	size_t ls = sc->sig[side][S_RRM].pos;

	v->verdict = side == SIDE_A ? FG_VERDICT_APPROVED : FG_VERDICT_REJECTED;
	switch (kind) {
	case S_JSON:
		decide_json(v, sc, &sc->jb[side]);
		break;
	case S_RRM:
		v->format = FG_FORMAT_REVIEW_RESULT_MARKER;
		fg__verdict_table_findings(v, sc->t, ls);
		if (side == SIDE_R)
			v->feedback = fg__verdict_render1(sc->t, ls);
		break;
	case S_LINE:
		v->format = FG_FORMAT_VERDICT_LINE;
		v->out_of_scope = side == SIDE_A && sc->vline_a == OUT_OF_SCOPE;
		fg__verdict_template_findings(v, sc->t, sc->len);
		if (side == SIDE_R)
			v->feedback = fg__verdict_render1(sc->t, sc->len);
		break;
	default:
		decide_marker(v, sc, side);
		break;
	}
}

/* The first signal kind of a side in the rules' order, or -1. */
static int first_kind(const struct scan *sc, int side)
{
	for (int k = 0; k < NSIG; k++)
		if (sc->sig[side][k].seen)
			return k;
	return -1;
}

static int rejecting_kinds(const struct scan *sc)
{
	int n = 0;

	for (int k = 0; k < NSIG; k++)
		n += sc->sig[SIDE_R][k].seen;
	return n;
}

static size_t line_of(const char *t, size_t pos)
{
	size_t n = 1;

	for (const char *p = t, *e = t + pos; p < e; p++) {
		p = memchr(p, '\n', (size_t)(e - p));
		if (!p)
			break;
		n++;
	}
	return n;
}

/* Two signals disagree (verdict.h, "conflict"): v already holds the
 * rejecting signal's judgement; its feedback gains a first paragraph that
 * names both signals. */
static void conflict(struct fg_judgement *v, const struct scan *sc, int a, int r)
{
	static const char *const names[NSIG] = { "json_shadow", "review_result_marker",
						 "verdict_line", "marker" };
	struct fg_buf b;

	fg_buf_init(&b, FG_FEEDBACK_MAX);
	fg_buf_addf(&b, "Conflicting verdicts: %s at line %zu approves, %s at line %zu rejects; "
		    "an approval needs every signal to agree.",
		    names[a], line_of(sc->t, sc->sig[SIDE_A][a].pos), names[r],
		    line_of(sc->t, sc->sig[SIDE_R][r].pos));
	if (v->feedback && *v->feedback) {
		fg_buf_adds(&b, "\n\n");
		fg__verdict_put_utf8(&b, v->feedback, strlen(v->feedback));
	}
	free(v->feedback);
	v->feedback = fg_buf_detach(&b, NULL);
	v->format = FG_FORMAT_CONFLICT;
	v->verdict = FG_VERDICT_REJECTED;
	v->out_of_scope = false;
}

/*
 * A reviewer's prose says "rejected" in lower case ("nothing was rejected
 * that should pass") far more often than it rejects so. Beside a
 * structured approval (a JSON verdict, the review-result marker, a verdict
 * line), such a word is no signal: the rejecting side's only signal is a
 * marker, and no REJECTED in capitals stands anywhere in live text. Every
 * other rejection beside an approval is a conflict (review-md-schema.md).
 */
static void drop_weak_rejection(struct scan *sc)
{
	bool structured = false;

	if (sc->rcaps || !sc->sig[SIDE_R][S_MARK].seen)
		return;
	for (int k = 0; k < NSIG; k++) {
		if (k != S_MARK && sc->sig[SIDE_R][k].seen)
			return;
		structured |= k != S_MARK && sc->sig[SIDE_A][k].seen;
	}
	if (structured)
		sc->sig[SIDE_R][S_MARK].seen = false;
}

int fg_verdict_parse(struct fg_judgement *v, const char *text, size_t len)
{
	struct scan *sc = fg_xcalloc(1, sizeof(*sc));
	size_t ls = 0, count = 0;
	int k, a, r;

	fg_judgement_reset(v);
	v->has_format = true;
	sc->v = v;
	sc->t = text ? text : "";
	sc->len = text ? len : 0;
	sc->vline_a = -1;
	sc->ps = sc->last = NONE;
	scan_all(sc);
	k = review_result(sc->t, sc->len, &ls, &count);
	if (k >= 0 && ls == sc->last)
		note(sc, S_RRM, k, ls, true);
	drop_weak_rejection(sc);
	a = first_kind(sc, SIDE_A);
	r = first_kind(sc, SIDE_R);
	if (r >= 0)
		decide(v, sc, r, SIDE_R);
	else if (a >= 0)
		decide(v, sc, a, SIDE_A);
	else
		v->feedback = fg_xstrdup(FG_VERDICT_UNPARSED_FEEDBACK);
	/* Advice only turns a structured rejection into an approval, never
	 * one that a REJECTED marker or a second rejecting rule stands beside. */
	if (!sc->sig[SIDE_R][S_MARK].seen && rejecting_kinds(sc) <= 1)
		fg__verdict_advice_rule(v, count);
	if (a >= 0 && v->verdict == FG_VERDICT_REJECTED && v->format != FG_FORMAT_NONE)
		conflict(v, sc, a, r);
	if (!v->feedback)
		v->feedback = fg_xstrdup("");
	for (int s = 0; s < 2; s++)
		cJSON_Delete(sc->jb[s].json);
	free(sc);
	return 0;
}
