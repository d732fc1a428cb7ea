/*
 * verdict_judgement.c - the judgement a parse fills (verdict.h): the names
 * of its verdicts and formats, its lifecycle, and the feedback text it
 * carries, bounded at FG_FEEDBACK_MAX bytes, trimmed and valid UTF-8
 * whatever the reviewer wrote. The scan that decides the verdict is
 * verdict.c's.
 */
#include "forge/verdict.h"
#include "verdict_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/text.h"
#include "forge/util.h"

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

void fg_judgement_copy_findings(struct fg_judgement *dst, const struct fg_judgement *src)
{
	dst->has_findings = src->has_findings;
	dst->findings = src->nfindings ? fg_xcalloc(src->nfindings, sizeof(*dst->findings)) : NULL;
	dst->nfindings = dst->findings_alloc = src->nfindings;
	for (size_t i = 0; i < src->nfindings; i++)
		fg_finding_copy(&dst->findings[i], &src->findings[i]);
}

struct fg_finding *fg_judgement_add_finding(struct fg_judgement *j)
{
	struct fg_finding *f;

	FG_ALLOC_GROW(j->findings, j->nfindings + 1, j->findings_alloc);
	f = &j->findings[j->nfindings++];
	memset(f, 0, sizeof(*f));
	return f;
}

/* ---- feedback text ----------------------------------------------------- */

/* Appends n bytes as valid UTF-8: whole characters only, each NUL or
 * invalid byte replaced by U+FFFD, so the result is a C string that any
 * JSON writer can emit. Stops with -E2BIG at the first character that does
 * not fit, which leaves the buffer on a character boundary. */
int fg__verdict_put_utf8(struct fg_buf *b, const char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t k = i;
		int r;

		/* A run of plain ASCII goes in at once (whole characters). */
		while (k < n && (unsigned char)p[k] < 0x80 && p[k])
			k++;
		if (k == i)
			k = p[i] ? i + fg_utf8_seq(p + i, n - i) : i;
		if ((unsigned char)p[i] < 0x80 && p[i] && k - i > fg_buf_room(b)) {
			/* What fits of the run, then the cut. */
			fg_buf_add(b, p + i, fg_buf_room(b));
			return -E2BIG;
		}
		r = k > i ? fg_buf_add(b, p + i, k - i) : fg_buf_add(b, "\xEF\xBF\xBD", 3);
		if (r)
			return r;
		i = k > i ? k : i + 1;
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
		if (fg__verdict_put_utf8(&b, s[i].p, s[i].n) < 0)
			break;
	/* A cut in the middle may leave blanks at the end. */
	while (b.len && is_ws((unsigned char)b.data[b.len - 1]))
		b.data[--b.len] = '\0';
	return fg_buf_detach(&b, NULL);
}

char *fg__verdict_render1(const char *p, size_t n)
{
	struct span s = { p, n };

	return render(&s, 1);
}

char *fg__verdict_render2(const char *t, size_t a, size_t b, size_t len)
{
	struct span s[2] = { { t, a }, { t + b, len - b } };

	return render(s, 2);
}

/* An owned, valid UTF-8 copy of a string from a JSON document (cJSON passes
 * invalid bytes through untouched). */
char *fg__verdict_clean_str(const char *str)
{
	struct fg_buf b;
	size_t n = strlen(str);

	fg_buf_init(&b, n > (SIZE_MAX - 1) / 3 ? SIZE_MAX - 1 : n * 3);
	fg__verdict_put_utf8(&b, str, n);
	return fg_buf_detach(&b, NULL);
}

/* ---- names ------------------------------------------------------------- */

static const char *const kind_names[] = { "approved", "rejected" };
static const char *const format_names[] = {
	"json_shadow", "review_result_marker", "verdict_line", "marker", "none", "checks",
	"conflict"
};

FG_NAME_FUNCS(enum fg_verdict_kind, kind_names, "rejected", fg_verdict_kind_name,
	      fg_verdict_kind_parse)
FG_NAME_FUNCS(enum fg_verdict_format, format_names, "none", fg_verdict_format_name,
	      fg_verdict_format_parse)
