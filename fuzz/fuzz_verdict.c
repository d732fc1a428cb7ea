/*
 * fuzz_verdict.c - every reviewer output yields a verdict: no crash, no leak,
 * feedback never NULL and bounded, approved always has empty feedback; and
 * no output holding a rejection marker outside code approves. The last is
 * checked twice: with "REJECTED" and a blank line put before the input (a
 * paragraph outside code whatever follows), and on the input itself for
 * every paragraph of live text (the classifier's, verdict_md.c) without a
 * backtick (so no code span can hide the word) that holds the word: in
 * capitals, never approved; in any case, never approved by a marker alone
 * (beside a structured approval a lower-case word of prose is no signal).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forge/verdict.h"
#include "verdict_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char prefix[] = "REJECTED\n\n";

static void check(struct fg_judgement *v, const char *t, size_t n)
{
	fg_judgement_init(v);
	fg_verdict_parse(v, t, n);
	if (!v->feedback || strlen(v->feedback) > FG_FEEDBACK_MAX)
		abort();
	if (v->verdict == FG_VERDICT_APPROVED && v->feedback[0])
		abort();
	if (v->nfindings > FG_FINDINGS_MAX)
		abort();
}

/* The whole word "rejected" in t[s, e): in capitals, or in any case. */
static bool has_rejected(const char *t, size_t s, size_t e, bool caps)
{
	for (size_t i = s; i + 8 <= e; i++) {
		if (i > 0 && is_word((unsigned char)t[i - 1]))
			continue;
		if (!(caps ? !memcmp(t + i, "REJECTED", 8) : ci_at(t, i, e, "rejected")))
			continue;
		if (i + 8 >= e || !is_word((unsigned char)t[i + 8]))
			return true;
	}
	return false;
}

/* A paragraph of live text without backticks holds the word. */
static bool live_rejection(const char *t, size_t n, bool caps)
{
	struct md m;
	struct md_line l;
	size_t ps = NONE, pe = 0;
	enum md_kind pk = MD_BLANK;
	bool found = false;

	fg__md_init(&m, t, n);
	for (bool more = true; more && !found;) {
		more = fg__md_next(&m, &l);
		if (more && (l.kind == MD_TEXT || l.kind == MD_QUOTE) && (ps == NONE || l.kind == pk)) {
			if (ps == NONE)
				ps = l.l.s;
			pk = l.kind;
			pe = l.l.next;
			continue;
		}
		if (ps != NONE && !memchr(t + ps, '`', pe - ps))
			found = has_rejected(t, ps, pe, caps);
		ps = more && (l.kind == MD_TEXT || l.kind == MD_QUOTE) ? l.l.s : NONE;
		pk = more ? l.kind : MD_BLANK;
		pe = more ? l.l.next : pe;
	}
	return found;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_judgement v;
	char *both = malloc(sizeof(prefix) - 1 + size + 1);

	check(&v, (const char *)data, size);
	if (v.verdict == FG_VERDICT_APPROVED && live_rejection((const char *)data, size, true))
		abort();
	if (v.verdict == FG_VERDICT_APPROVED && v.format == FG_FORMAT_MARKER &&
	    live_rejection((const char *)data, size, false))
		abort();
	fg_judgement_reset(&v);
	memcpy(both, prefix, sizeof(prefix) - 1);
	if (size)
		memcpy(both + sizeof(prefix) - 1, data, size);
	check(&v, both, sizeof(prefix) - 1 + size);
	if (v.verdict == FG_VERDICT_APPROVED)
		abort();
	fg_judgement_reset(&v);
	free(both);
	return 0;
}
