/*
 * verdict_findings.c - the findings of a review (verdict_internal.h): to
 * and from the cycle files' JSON, the review_result marker's findings
 * table, the review-output template's headings, the **Verified:** lines
 * and the rule that advice-only findings approve.
 */
#include "verdict_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/util.h"

#include "forge/json.h"
#include "forge/severity.h"
#include "forge/text.h"
#include "internal.h"

/* ---- findings ---------------------------------------------------------- */

/* cJSON reports allocation failure with NULL; like fg_xmalloc, there is
 * nobody sensible to return that to. */
static cJSON *nn(cJSON *j)
{
	if (!j)
		abort();
	return j;
}

/* A finding's string member, copied as valid UTF-8, or NULL. */
static char *jstr(const cJSON *o, const char *key)
{
	const char *v = fg_json_str(o, key);

	return v ? fg__verdict_clean_str(v) : NULL;
}

/* A finding's number member clamped to int, or dflt (absent, not a number). */
static int jint(const cJSON *o, const char *key, int dflt)
{
	double d = fg_json_num(o, key);

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

void fg__judgement_read(const cJSON *o, struct fg_judgement *j)
{
	const char *format = fg_json_str(o, "format");
	const cJSON *v = fg_json_get(o, "findings");

	if (format && !fg_verdict_format_parse(format, &j->format))
		j->has_format = true;
	else
		j->format = FG_FORMAT_NONE;
	if (cJSON_IsArray(v) && !fg_findings_from_json(v, &j->findings, &j->nfindings))
		j->has_findings = true;
	/* from_json grows the array to exactly its count. */
	j->findings_alloc = j->nfindings;
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
		FG_FREE_ALL(f[i].severity, f[i].file_path, f[i].title, f[i].description,
			    f[i].evidence, f[i].fix, f[i].role);
	}
	free(f);
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
	out = fg__verdict_render1(fg_buf_str(&b), b.len);
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

	f = fg_judgement_add_finding(v);
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
void fg__verdict_table_findings(struct fg_judgement *v, const char *t, size_t len)
{
	struct md m;
	struct md_line l;
	struct line d;
	struct cells c;
	size_t pos;
	int col[NCOLS];

	fg__md_init(&m, t, len);
	while (fg__md_next(&m, &l)) {
		if (l.kind != MD_TEXT || !split_row(t, &l.l, &c) || !header(t, &c, col) ||
		    !next_line(t, len, l.l.next, &d) || !split_row(t, &d, &c) || !delimiter_row(t, &c))
			continue;
		v->has_findings = true;
		for (pos = d.next; next_line(t, len, pos, &d) && split_row(t, &d, &c); pos = d.next)
			if (v->nfindings < FG_FINDINGS_MAX)
				add_row(v, t, &c, col);
		return;
	}
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
	f = fg_judgement_add_finding(v);
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
	f->title = fg__verdict_render1(t + n + 1, te - n - 1);
	/* The separator before the location: " — ", " – " or " - ". */
	if (ls != NONE)
		cut_separator(f->title);
	if (le != NONE && le < l->e)
		take_location(f, fg__verdict_render1(t + ls + 1, le - ls - 1));
	return true;
}

/* The template's findings of t[0, len), in live text only (not in code,
 * not quoted: a quoted heading is somebody else's finding). */
void fg__verdict_template_findings(struct fg_judgement *v, const char *t, size_t len)
{
	struct md m;
	struct md_line l;

	fg__md_init(&m, t, len);
	while (v->nfindings < FG_FINDINGS_MAX && fg__md_next(&m, &l))
		if (l.kind == MD_TEXT && template_heading(v, t, &l.l))
			v->has_findings = true;
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

void fg__verdict_verified_line(struct fg_judgement *v, const char *t, const struct line *l)
{
	size_t a = v->verified.n < FG_VERIFIED_MAX ? verified_at(t, l) : NONE;
	struct fg_buf b;
	char *text;

	if (a == NONE)
		return;
	fg_buf_init(&b, FG_VERIFIED_BYTES);
	fg__verdict_put_utf8(&b, t + a, l->e - a);
	text = fg__verdict_render1(fg_buf_str(&b), b.len);
	if (*text)
		fg_strvec_push_take(&v->verified, text);
	else
		free(text);
	fg_buf_release(&b);
}

/* A rejection whose findings are all advice approves (verdict.h); rule 2
 * also needs N to be the table's row count. */
void fg__verdict_advice_rule(struct fg_judgement *v, size_t count)
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
	FG_FREE_AND_NULL(v->feedback);
}
