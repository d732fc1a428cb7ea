/*
 * verdict_sample.h - the shorthands of the test_verdict*.c tables: verdict
 * kinds, formats, the feedback of a conflict or of an unparsed output, and
 * an input with an explicit length (IN) so that a case may hold NUL bytes,
 * and a parse that must keep findings (parse_findings).
 */
#ifndef VERDICT_SAMPLE_H
#define VERDICT_SAMPLE_H

#include <criterion/criterion.h>

#include "forge/verdict.h"

#define A FG_VERDICT_APPROVED
#define R FG_VERDICT_REJECTED
#define F_JSON FG_FORMAT_JSON_SHADOW
#define F_RRM FG_FORMAT_REVIEW_RESULT_MARKER
#define F_LINE FG_FORMAT_VERDICT_LINE
#define F_MARK FG_FORMAT_MARKER
#define F_NONE FG_FORMAT_NONE
#define F_CONFLICT FG_FORMAT_CONFLICT
/* The first paragraph of a conflict's feedback. */
#define CONFLICT(a, al, r, rl) "Conflicting verdicts: " a " at line " #al " approves, " r " at line " \
	#rl " rejects; an approval needs every signal to agree."
#define C_MM CONFLICT("marker", 1, "marker", 1)
#define UNPARSED "Verdict could not be parsed"
/* Input with an explicit length, so that cases may hold NUL bytes. */
#define IN(s) s, sizeof(s) - 1

/* Parses the len bytes of text into v (initialised here; the caller resets
 * it) and checks the rule that decided and the number of findings kept. */
static inline void parse_findings(struct fg_judgement *v, const char *text, size_t len,
				  enum fg_verdict_format format, size_t nfindings)
{
	fg_judgement_init(v);
	fg_verdict_parse(v, text, len);
	cr_assert_eq(v->format, format, "format %s", fg_verdict_format_name(v->format));
	cr_assert(v->has_findings);
	cr_assert_eq(v->nfindings, nfindings);
}

#endif
