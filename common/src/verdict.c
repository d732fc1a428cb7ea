/*
 * verdict.c - reading a reviewer's verdict (see verdict.h).
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

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/util.h"

/* A ```json block larger than this is not parsed: no honest shadow block
 * comes near it, and cJSON would build a tree several times its size. */
#define JSON_BLOCK_MAX ((size_t)4 * 1024 * 1024)
/* Backtick runs longer than this never open a code span (cmark does the
 * same with 80); it bounds the per-length table of the span matcher. */
#define MAX_TICKS 128
#define NONE SIZE_MAX
/* A third kind a shadow block or a verdict line may declare: no objection,
 * the role has nothing to assess (fg_judgement.out_of_scope). */
#define OUT_OF_SCOPE 2

static const char *const kind_names[] = { "approved", "rejected" };
static const char *const format_names[] = {
	"json_shadow", "review_result_marker", "verdict_line", "marker", "none", "checks"
};

const char *fg_verdict_kind_name(enum fg_verdict_kind k)
{
	return FG_NAME_OF(kind_names, k, "rejected");
}

const char *fg_verdict_format_name(enum fg_verdict_format f)
{
	return FG_NAME_OF(format_names, f, "none");
}

int fg_verdict_kind_parse(const char *s, enum fg_verdict_kind *out)
{
	int i = FG_NAME_INDEX(kind_names, s, 0);

	if (i < 0)
		return -EINVAL;
	*out = (enum fg_verdict_kind)i;
	return 0;
}

int fg_verdict_format_parse(const char *s, enum fg_verdict_format *out)
{
	int i = FG_NAME_INDEX(format_names, s, 0);

	if (i < 0)
		return -EINVAL;
	*out = (enum fg_verdict_format)i;
	return 0;
}

void fg_judgement_init(struct fg_judgement *j)
{
	memset(j, 0, sizeof(*j));
	j->verdict = FG_VERDICT_REJECTED;
	j->format = FG_FORMAT_NONE;
	fg_strvec_init(&j->verified);
}

void fg_judgement_reset(struct fg_judgement *j)
{
	free(j->feedback);
	fg_findings_free(j->findings, j->nfindings);
	fg_strvec_release(&j->verified);
	fg_judgement_init(j);
}

void fg_judgement_move(struct fg_judgement *dst, struct fg_judgement *src)
{
	if (dst == src)
		return;
	fg_judgement_reset(dst);
	*dst = *src;
	fg_judgement_init(src);
}

/* ---- characters and lines ---------------------------------------------- */

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_hws(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* The marker rule's word characters: ASCII letters, digits, underscore. */
static bool is_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

static bool is_emph(unsigned char c)
{
	return c == '*' || c == '_';
}

/* Case-insensitive match of the lower-case ASCII word w at t[i..e). */
static bool ci_at(const char *t, size_t i, size_t e, const char *w)
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

static size_t skip_hws(const char *t, size_t i, size_t e)
{
	while (i < e && is_hws((unsigned char)t[i]))
		i++;
	return i;
}

static size_t skip_emph(const char *t, size_t i, size_t e)
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

static bool next_line(const char *t, size_t len, size_t pos, struct line *l)
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

static bool line_blank(const char *t, const struct line *l)
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

/* An opening fence: any indentation, then at least three backticks or
 * tildes; a backtick fence's info string may not hold a backtick (else the
 * line is inline code, as in CommonMark). *info is where the info starts. */
static bool fence_open(const char *t, const struct line *l, struct fence *f, size_t *info)
{
	size_t i = skip_hws(t, l->s, l->e), k;

	if (i >= l->e || (t[i] != '`' && t[i] != '~'))
		return false;
	k = i;
	while (k < l->e && t[k] == t[i])
		k++;
	if (k - i < 3)
		return false;
	if (t[i] == '`' && memchr(t + k, '`', l->e - k))
		return false;
	f->ch = t[i];
	f->n = k - i;
	*info = k;
	return true;
}

/* A closing fence: same character, at least as long, nothing but blanks. */
static bool fence_close(const char *t, const struct line *l, const struct fence *f)
{
	size_t i = skip_hws(t, l->s, l->e), k = i;

	while (k < l->e && t[k] == f->ch)
		k++;
	if (k - i < f->n)
		return false;
	while (k < l->e && is_ws((unsigned char)t[k]))
		k++;
	return k == l->e;
}

/* The info string's first word is "json", in any case. */
static bool info_is_json(const char *t, size_t i, size_t e)
{
	i = skip_hws(t, i, e);
	if (!ci_at(t, i, e, "json"))
		return false;
	i += 4;
	return i == e || is_ws((unsigned char)t[i]);
}

/* ---- feedback text ----------------------------------------------------- */

/* Appends n bytes as valid UTF-8: whole characters only, each NUL or
 * invalid byte replaced by U+FFFD, so the result is a C string that any
 * JSON writer can emit. Stops with -E2BIG at the first character that does
 * not fit, which leaves the buffer on a character boundary. */
static int put_utf8(struct fg_buf *b, const char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t k = p[i] ? fg_utf8_seq(p + i, n - i) : 0;
		int r = k ? fg_buf_add(b, p + i, k) : fg_buf_add(b, "\xEF\xBF\xBD", 3);

		if (r)
			return r;
		i += k ? k : 1;
	}
	return 0;
}

struct span {
	const char *p;
	size_t n;
};

/* Trims white space at the start of the concatenation of s[0..k) and at
 * its end, without copying anything. */
static void trim_spans(struct span *s, size_t k)
{
	for (size_t i = 0; i < k; i++) {
		while (s[i].n && is_ws((unsigned char)*s[i].p)) {
			s[i].p++;
			s[i].n--;
		}
		if (s[i].n)
			break;
	}
	for (size_t i = k; i-- > 0;) {
		while (s[i].n && is_ws((unsigned char)s[i].p[s[i].n - 1]))
			s[i].n--;
		if (s[i].n)
			break;
	}
}

/* The trimmed concatenation of the spans as an owned string of at most
 * FG_FEEDBACK_MAX bytes. Only the first FG_FEEDBACK_MAX bytes of output are
 * ever produced, so a 50 MB text costs no more than the trim. */
static char *render(struct span *s, size_t k)
{
	struct fg_buf b;

	fg_buf_init(&b, FG_FEEDBACK_MAX);
	trim_spans(s, k);
	for (size_t i = 0; i < k; i++)
		if (put_utf8(&b, s[i].p, s[i].n) < 0)
			break;
	/* A cut in the middle may leave blanks at the end. */
	while (b.len && is_ws((unsigned char)b.data[b.len - 1]))
		b.data[--b.len] = '\0';
	return fg_buf_detach(&b, NULL);
}

static char *render1(const char *p, size_t n)
{
	struct span s = { p, n };

	return render(&s, 1);
}

static char *render2(const char *t, size_t a, size_t b, size_t len)
{
	struct span s[2] = { { t, a }, { t + b, len - b } };

	return render(s, 2);
}

/* An owned, valid UTF-8 copy of a string from a JSON document (cJSON passes
 * invalid bytes through untouched). */
static char *clean_str(const char *str)
{
	struct fg_buf b;
	size_t n = strlen(str);

	fg_buf_init(&b, n > (SIZE_MAX - 1) / 3 ? SIZE_MAX - 1 : n * 3);
	put_utf8(&b, str, n);
	return fg_buf_detach(&b, NULL);
}

/* ---- findings ---------------------------------------------------------- */

/* cJSON reports allocation failure with NULL; like fg_xmalloc, there is
 * nobody sensible to return that to. */
static cJSON *nn(cJSON *j)
{
	if (!j)
		abort();
	return j;
}

static char *jstr(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(it) && it->valuestring ? clean_str(it->valuestring) : NULL;
}

static int jint(const cJSON *o, const char *key, int dflt)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	double d;

	if (!cJSON_IsNumber(it))
		return dflt;
	d = it->valuedouble;
	if (d != d)
		return dflt;
	if (d >= (double)INT_MAX)
		return INT_MAX;
	if (d <= (double)INT_MIN)
		return INT_MIN;
	return (int)d;
}

int fg_findings_from_json(const struct cJSON *arr, struct fg_finding **out, size_t *n)
{
	const cJSON *it;

	if (!cJSON_IsArray(arr))
		return -EINVAL;
	cJSON_ArrayForEach(it, arr) {
		struct fg_finding *f;

		if (*n >= FG_FINDINGS_MAX)
			break;
		if (!cJSON_IsObject(it))
			continue;
		*out = fg_xreallocarray(*out, *n + 1, sizeof(**out));
		f = &(*out)[(*n)++];
		f->severity = jstr(it, "severity");
		f->ordinal = jint(it, "ordinal", 0);
		f->file_path = jstr(it, "filePath");
		f->line = jint(it, "line", -1);
		if (f->line < 0)
			f->line = -1;
		f->title = jstr(it, "title");
		f->description = jstr(it, "description");
		f->evidence = jstr(it, "evidence");
		f->fix = jstr(it, "fix");
		f->role = jstr(it, "role");
	}
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? fg_xstrdup(s) : NULL;
}

void fg_finding_copy(struct fg_finding *dst, const struct fg_finding *src)
{
	*dst = *src;
	dst->severity = dup_or_null(src->severity);
	dst->file_path = dup_or_null(src->file_path);
	dst->title = dup_or_null(src->title);
	dst->description = dup_or_null(src->description);
	dst->evidence = dup_or_null(src->evidence);
	dst->fix = dup_or_null(src->fix);
	dst->role = dup_or_null(src->role);
}

static bool ci_eq(const char *s, const char *w);

/* Required string members come out as "" when absent, optional ones as
 * null, so the array always has the shape of the spec. */
static void add_str(cJSON *o, const char *key, const char *s, bool nullable)
{
	cJSON *it;

	if (s)
		it = cJSON_CreateString(s);
	else
		it = nullable ? cJSON_CreateNull() : cJSON_CreateString("");
	if (!cJSON_AddItemToObject(o, key, nn(it)))
		abort();
}

struct cJSON *fg_findings_to_json(const struct fg_finding *f, size_t n)
{
	cJSON *arr = nn(cJSON_CreateArray());

	for (size_t i = 0; i < n; i++) {
		cJSON *o = nn(cJSON_CreateObject());

		add_str(o, "severity", f[i].severity, false);
		nn(cJSON_AddNumberToObject(o, "ordinal", f[i].ordinal));
		add_str(o, "filePath", f[i].file_path, true);
		if (f[i].line >= 0)
			nn(cJSON_AddNumberToObject(o, "line", f[i].line));
		else
			nn(cJSON_AddNullToObject(o, "line"));
		add_str(o, "title", f[i].title, false);
		add_str(o, "description", f[i].description, false);
		add_str(o, "evidence", f[i].evidence, true);
		add_str(o, "fix", f[i].fix, true);
		if (f[i].role)
			add_str(o, "role", f[i].role, false);
		if (!cJSON_AddItemToArray(arr, o))
			abort();
	}
	return arr;
}

void fg_findings_free(struct fg_finding *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++) {
		free(f[i].severity);
		free(f[i].file_path);
		free(f[i].title);
		free(f[i].description);
		free(f[i].evidence);
		free(f[i].fix);
		free(f[i].role);
	}
	free(f);
}

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

struct scan {
	const char *t;
	size_t len;
	/* Rule 1: the last qualifying ```json block, fences included. */
	cJSON *json;
	int json_kind;                   /* a kind or OUT_OF_SCOPE */
	size_t js, je;
	/* Rule 3: the kind of the last verdict line, or -1. */
	int vline;
	/* Rule 4: the first marker outside code. */
	bool marker;
	enum fg_verdict_kind marker_kind;
	size_t ms, me;
	/* Start of the paragraph being collected, NONE between paragraphs. */
	size_t ps;
	struct ticks tk;
};

static bool ci_eq(const char *s, const char *w)
{
	size_t n = strlen(s);

	return n == strlen(w) && ci_at(s, 0, n, w);
}

/* The kind a shadow object declares (OUT_OF_SCOPE included), or -1 when it
 * is no shadow object. */
static int shadow_kind(const cJSON *j)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "verdict");

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
 * shadow object it replaces any earlier one, so the last block wins. */
static void take_json(struct scan *sc, size_t bs, size_t cs, size_t ce, size_t be)
{
	const char *end = NULL;
	cJSON *j;
	int kind;

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
	cJSON_Delete(sc->json);
	sc->json = j;
	sc->json_kind = kind;
	sc->js = bs;
	sc->je = be;
}

/* "- ", "* ", "+ ", "1. ", "1) " at i: returns the position after it. */
static size_t list_marker(const char *t, size_t i, size_t e)
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

/* A whole-word APPROVED / REJECTED at i (ASCII word characters only). */
static bool marker_at(struct scan *sc, size_t i)
{
	const char *t = sc->t;
	enum fg_verdict_kind k;

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
	sc->marker = true;
	sc->marker_kind = k;
	sc->ms = i;
	sc->me = i + 8;
	return true;
}

/* Looks for the first marker in the paragraph [ps, pe), skipping inline
 * code spans. Each byte is visited once by this loop; find_closer only
 * reads ahead into bytes the loop then skips, or once per paragraph. */
static void scan_para(struct scan *sc, size_t ps, size_t pe)
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
		if ((c == 'a' || c == 'r') && marker_at(sc, i))
			return;
		i++;
	}
}

static void flush_para(struct scan *sc, size_t pe)
{
	if (sc->ps != NONE && !sc->marker)
		scan_para(sc, sc->ps, pe);
	sc->ps = NONE;
}

/* The single pass over the lines (see the top of the file). */
static void scan_all(struct scan *sc)
{
	struct fence f = { 0, 0 };
	struct line l;
	size_t pos = 0, bs = 0, cs = 0, info = 0;
	bool in = false, json = false;
	int k;

	while (next_line(sc->t, sc->len, pos, &l)) {
		pos = l.next;
		if (in) {
			if (fence_close(sc->t, &l, &f)) {
				if (json)
					take_json(sc, bs, cs, l.s, l.next);
				in = false;
			}
			continue;
		}
		if (fence_open(sc->t, &l, &f, &info)) {
			flush_para(sc, l.s);
			in = true;
			json = info_is_json(sc->t, info, l.e);
			bs = l.s;
			cs = l.next;
			continue;
		}
		if (line_blank(sc->t, &l)) {
			flush_para(sc, l.s);
			continue;
		}
		if (sc->ps == NONE)
			sc->ps = l.s;
		k = verdict_line(sc->t, l.s, l.e);
		if (k >= 0)
			sc->vline = k;
	}
	/* An unclosed fence runs to the end; a truncated shadow block that
	 * still parses is the reviewer's verdict all the same. */
	if (in && json)
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

/* ---- the findings table (review_result_marker) -------------------------- */

/* Columns of the marker's findings table we read; -1 when absent. */
enum { COL_NUM, COL_SEV, COL_FINDING, COL_LOC, COL_EVIDENCE, NCOLS };
#define TABLE_CELLS 16

struct cells {
	size_t n;
	size_t s[TABLE_CELLS], e[TABLE_CELLS];   /* [s, e) of each cell, untrimmed */
};

/* Splits a table row "| a | b \| c |" into cells (a backslash escapes a
 * '|'); false when the line does not start with '|' after blanks. */
static bool split_row(const char *t, const struct line *l, struct cells *c)
{
	size_t i = skip_hws(t, l->s, l->e), start;
	size_t e = l->e;

	while (e > i && is_ws((unsigned char)t[e - 1]))
		e--;
	if (i >= e || t[i] != '|')
		return false;
	c->n = 0;
	start = ++i;
	for (; i < e && c->n < TABLE_CELLS; i++) {
		if (t[i] == '\\' && i + 1 < e) {
			i++;
			continue;
		}
		if (t[i] == '|') {
			c->s[c->n] = start;
			c->e[c->n++] = i;
			start = i + 1;
		}
	}
	if (start < e && c->n < TABLE_CELLS) {   /* a row without the closing '|' */
		c->s[c->n] = start;
		c->e[c->n++] = e;
	}
	return c->n > 0;
}

/* The cell's text trimmed of blanks and of emphasis or code marks around it. */
static void cell_bounds(const char *t, size_t *s, size_t *e)
{
	while (*s < *e && (is_ws((unsigned char)t[*s]) || strchr("*_`", t[*s])))
		(*s)++;
	while (*e > *s && (is_ws((unsigned char)t[*e - 1]) || strchr("*_`", t[*e - 1])))
		(*e)--;
}

static bool cell_is(const char *t, size_t s, size_t e, const char *w)
{
	cell_bounds(t, &s, &e);
	return e - s == strlen(w) && ci_at(t, s, e, w);
}

/* The header row: which cell holds which column. Needs Severity and Finding. */
static bool header(const char *t, const struct cells *c, int *col)
{
	static const char *const names[NCOLS] = { "#", "severity", "finding", "location", "evidence" };

	for (int k = 0; k < NCOLS; k++) {
		col[k] = -1;
		for (size_t j = 0; j < c->n && col[k] < 0; j++)
			if (cell_is(t, c->s[j], c->e[j], names[k]))
				col[k] = (int)j;
	}
	return col[COL_SEV] >= 0 && col[COL_FINDING] >= 0;
}

/* |---|:--:| : every cell is dashes with optional colons. */
static bool delimiter_row(const char *t, const struct cells *c)
{
	for (size_t j = 0; j < c->n; j++) {
		size_t s = c->s[j], e = c->e[j], dashes = 0;

		for (; s < e; s++) {
			if (t[s] == '-')
				dashes++;
			else if (t[s] != ':' && !is_ws((unsigned char)t[s]))
				return false;
		}
		if (!dashes)
			return false;
	}
	return true;
}

/* The cell text (unescaped, valid UTF-8), or NULL when empty or absent. */
static char *cell_text(const char *t, const struct cells *c, int col)
{
	size_t s, e;
	struct fg_buf b;
	char *out;

	if (col < 0 || (size_t)col >= c->n)
		return NULL;
	s = c->s[col];
	e = c->e[col];
	cell_bounds(t, &s, &e);
	fg_buf_init(&b, e - s + 1);
	for (size_t i = s; i < e; i++)
		if (!(t[i] == '\\' && i + 1 < e && t[i + 1] == '|'))
			fg_buf_addc(&b, t[i]);
	out = render1(fg_buf_str(&b), b.len);
	fg_buf_release(&b);
	if (!*out) {
		free(out);
		return NULL;
	}
	return out;
}

/* "path:line", "path", or a dash for none, into f. */
static void take_location(struct fg_finding *f, char *loc)
{
	char *colon = loc ? strrchr(loc, ':') : NULL;
	long line = 0;

	f->line = -1;
	if (!loc || !strcmp(loc, "-") || !strcmp(loc, "\xe2\x80\x94") || !strcmp(loc, "\xe2\x80\x93")) {
		free(loc);
		return;
	}
	if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1) &&
	    strlen(colon + 1) <= 9) {
		line = strtol(colon + 1, NULL, 10);
		*colon = '\0';
		f->line = line > 0 ? (int)line : -1;
	}
	f->file_path = loc;
}

static void add_row(struct fg_judgement *v, const char *t, const struct cells *c, const int *col)
{
	struct fg_finding *f;
	char *num = cell_text(t, c, col[COL_NUM]);

	v->findings = fg_xreallocarray(v->findings, v->nfindings + 1, sizeof(*v->findings));
	f = &v->findings[v->nfindings++];
	memset(f, 0, sizeof(*f));
	f->ordinal = num && strspn(num, "0123456789") == strlen(num) && strlen(num) <= 9
			     ? (int)strtol(num, NULL, 10) : 0;
	free(num);
	f->severity = cell_text(t, c, col[COL_SEV]);
	f->title = cell_text(t, c, col[COL_FINDING]);
	take_location(f, cell_text(t, c, col[COL_LOC]));
	f->evidence = cell_text(t, c, col[COL_EVIDENCE]);
}

/*
 * The review-result marker's findings table in t[0, len): the first table,
 * outside fenced code, whose header has Severity and Finding columns (and
 * optionally #, Location, Evidence), then a delimiter row, then rows. Sets
 * has_findings when such a table is found (even with no row).
 */
static void table_findings(struct fg_judgement *v, const char *t, size_t len)
{
	struct fence f = { 0, 0 };
	struct line l, d;
	struct cells c;
	size_t pos = 0, info;
	bool in = false;
	int col[NCOLS];

	while (next_line(t, len, pos, &l)) {
		pos = l.next;
		if (in ? fence_close(t, &l, &f) : fence_open(t, &l, &f, &info)) {
			in = !in;
			continue;
		}
		if (in || !split_row(t, &l, &c) || !header(t, &c, col) || !next_line(t, len, pos, &d) ||
		    !split_row(t, &d, &c) || !delimiter_row(t, &c))
			continue;
		v->has_findings = true;
		for (pos = d.next; next_line(t, len, pos, &l) && split_row(t, &l, &c); pos = l.next)
			if (v->nfindings < FG_FINDINGS_MAX)
				add_row(v, t, &c, col);
		return;
	}
}

/* ---- deciding ---------------------------------------------------------- */

static void decide_json(struct fg_judgement *v, const struct scan *sc)
{
	const cJSON *raw = cJSON_GetObjectItemCaseSensitive(sc->json, "rawMarkdown");
	const cJSON *fs = cJSON_GetObjectItemCaseSensitive(sc->json, "findings");

	v->format = FG_FORMAT_JSON_SHADOW;
	v->out_of_scope = sc->json_kind == OUT_OF_SCOPE;
	v->verdict = v->out_of_scope ? FG_VERDICT_APPROVED : (enum fg_verdict_kind)sc->json_kind;
	if (cJSON_IsArray(fs)) {
		v->has_findings = true;
		fg_findings_from_json(fs, &v->findings, &v->nfindings);
	}
	if (v->verdict == FG_VERDICT_APPROVED)
		return;
	if (cJSON_IsString(raw) && raw->valuestring) {
		v->feedback = render1(raw->valuestring, strlen(raw->valuestring));
		if (*v->feedback)
			return;
		free(v->feedback);
		v->feedback = NULL;
	}
	v->feedback = render2(sc->t, sc->js, sc->je, sc->len);
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

static void decide_marker(struct fg_judgement *v, const struct scan *sc)
{
	const char *t = sc->t;
	size_t a, b;

	v->format = FG_FORMAT_MARKER;
	v->verdict = sc->marker_kind;
	if (v->verdict == FG_VERDICT_APPROVED)
		return;
	a = after_marker(t, sc->me, sc->len);
	v->feedback = render1(t + a, sc->len - a);
	if (*v->feedback)
		return;
	free(v->feedback);
	/* Nothing after it: the reasons came first ("...\n\n**REJECTED**"). */
	for (b = sc->ms; b > 0 && is_emph((unsigned char)t[b - 1]);)
		b--;
	v->feedback = render1(t, b);
}

/* ---- the review-output template's headings (verdict_line) ------------- */

/* Removes a trailing " — ", " – " or " - " from a title. */
static void cut_separator(char *s)
{
	size_t n = strlen(s);

	while (n && is_ws((unsigned char)s[n - 1]))
		n--;
	if (n >= 3 && !memcmp(s + n - 3, "\xE2\x80", 2) && (s[n - 1] == '\x94' || s[n - 1] == '\x93'))
		n -= 3;
	else if (n && s[n - 1] == '-')
		n--;
	while (n && is_ws((unsigned char)s[n - 1]))
		n--;
	s[n] = '\0';
}

/* "### [B1] Title — `path:line` (confidence: 80)" at line l: a finding
 * (severity BLOCKING for B, NOTE for N) appended to v; false otherwise. */
static bool template_heading(struct fg_judgement *v, const char *t, const struct line *l)
{
	size_t i = skip_hws(t, l->s, l->e), h = i, n, te, ls, le;
	struct fg_finding *f;
	char kind;

	while (i < l->e && t[i] == '#')
		i++;
	if (i - h < 2 || i - h > 4 || i >= l->e || !is_hws((unsigned char)t[i]))
		return false;
	i = skip_hws(t, i, l->e);
	if (l->e - i < 4 || t[i] != '[' || (t[i + 1] != 'B' && t[i + 1] != 'N'))
		return false;
	kind = t[i + 1];
	for (n = i + 2; n < l->e && n - i < 11 && t[n] >= '0' && t[n] <= '9';)
		n++;
	if (n == i + 2 || n >= l->e || t[n] != ']')
		return false;
	v->findings = fg_xreallocarray(v->findings, v->nfindings + 1, sizeof(*v->findings));
	f = &v->findings[v->nfindings++];
	memset(f, 0, sizeof(*f));
	f->severity = fg_xstrdup(kind == 'B' ? "BLOCKING" : "NOTE");
	f->ordinal = (int)strtol(t + i + 2, NULL, 10);
	f->line = -1;
	ls = NONE;
	for (size_t k = n + 1; k < l->e && ls == NONE; k++)
		if (t[k] == '`')
			ls = k;
	le = ls == NONE ? NONE : ls + 1;
	while (le != NONE && le < l->e && t[le] != '`')
		le++;
	te = ls == NONE ? l->e : ls;
	f->title = render1(t + n + 1, te - n - 1);
	/* The separator before the location: " — ", " – " or " - ". */
	if (ls != NONE)
		cut_separator(f->title);
	if (le != NONE && le < l->e)
		take_location(f, render1(t + ls + 1, le - ls - 1));
	return true;
}

/* The template's findings of t[0, len), outside fenced code. */
static void template_findings(struct fg_judgement *v, const char *t, size_t len)
{
	struct fence f = { 0, 0 };
	struct line l;
	size_t pos = 0, info;
	bool in = false;

	while (v->nfindings < FG_FINDINGS_MAX && next_line(t, len, pos, &l)) {
		pos = l.next;
		if (in ? fence_close(t, &l, &f) : fence_open(t, &l, &f, &info))
			in = !in;
		else if (!in && template_heading(v, t, &l))
			v->has_findings = true;
	}
}

/* "**Verified:**" (emphasis optional, any case) at the start of line l,
 * after an optional list marker: where its text begins, or NONE. */
static size_t verified_at(const char *t, const struct line *l)
{
	size_t i = list_marker(t, skip_hws(t, l->s, l->e), l->e), k;

	i = skip_emph(t, i, l->e);
	if (!ci_at(t, i, l->e, "verified"))
		return NONE;
	i = skip_emph(t, i + 8, l->e);
	if (i >= l->e || t[i] != ':')
		return NONE;
	k = skip_emph(t, i + 1, l->e);
	return k;
}

/* Keeps the "**Verified:**" lines outside fenced code (verdict.h). */
static void verified_lines(struct fg_judgement *v, const char *t, size_t len)
{
	struct fence f = { 0, 0 };
	struct line l;
	size_t pos = 0, info, a;
	bool in = false;

	while (v->verified.n < FG_VERIFIED_MAX && next_line(t, len, pos, &l)) {
		pos = l.next;
		if (in ? fence_close(t, &l, &f) : fence_open(t, &l, &f, &info)) {
			in = !in;
			continue;
		}
		a = in ? NONE : verified_at(t, &l);
		if (a != NONE) {
			struct fg_buf b;
			char *text;

			fg_buf_init(&b, FG_VERIFIED_BYTES);
			put_utf8(&b, t + a, l.e - a);
			text = render1(fg_buf_str(&b), b.len);
			if (*text)
				fg_strvec_push_take(&v->verified, text);
			else
				free(text);
			fg_buf_release(&b);
		}
	}
}

/* A rejection whose findings are all advice approves (verdict.h); rule 2
 * also needs N to be the table's row count. */
static void advice_rule(struct fg_judgement *v, size_t count)
{
	if (v->verdict != FG_VERDICT_REJECTED || !v->has_findings ||
	    !fg_findings_advice_only(v->findings, v->nfindings))
		return;
	if (v->format == FG_FORMAT_REVIEW_RESULT_MARKER && count != v->nfindings)
		return;
	if (v->format == FG_FORMAT_MARKER || v->format == FG_FORMAT_NONE)
		return;
	v->verdict = FG_VERDICT_APPROVED;
	v->advice_only = true;
	free(v->feedback);
	v->feedback = NULL;
}

int fg_verdict_parse(struct fg_judgement *v, const char *text, size_t len)
{
	struct scan *sc = fg_xcalloc(1, sizeof(*sc));
	size_t ls = 0, count = 0;
	int k;

	fg_judgement_reset(v);
	v->has_format = true;
	sc->t = text ? text : "";
	sc->len = text ? len : 0;
	sc->vline = -1;
	sc->ps = NONE;
	scan_all(sc);
	k = sc->json ? -1 : review_result(sc->t, sc->len, &ls, &count);
	if (sc->json) {
		decide_json(v, sc);
	} else if (k >= 0) {
		v->format = FG_FORMAT_REVIEW_RESULT_MARKER;
		v->verdict = (enum fg_verdict_kind)k;
		table_findings(v, sc->t, ls);
		if (k == FG_VERDICT_REJECTED)
			v->feedback = render1(sc->t, ls);
	} else if (sc->vline >= 0) {
		v->format = FG_FORMAT_VERDICT_LINE;
		v->out_of_scope = sc->vline == OUT_OF_SCOPE;
		v->verdict = v->out_of_scope ? FG_VERDICT_APPROVED : (enum fg_verdict_kind)sc->vline;
		template_findings(v, sc->t, sc->len);
		if (sc->vline == FG_VERDICT_REJECTED)
			v->feedback = render1(sc->t, sc->len);
	} else if (sc->marker) {
		decide_marker(v, sc);
	} else {
		v->feedback = fg_xstrdup(FG_VERDICT_UNPARSED_FEEDBACK);
	}
	advice_rule(v, count);
	verified_lines(v, sc->t, sc->len);
	if (!v->feedback)
		v->feedback = fg_xstrdup("");
	cJSON_Delete(sc->json);
	free(sc);
	return 0;
}
