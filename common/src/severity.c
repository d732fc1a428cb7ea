/*
 * severity.c - the severity mapping (see severity.h).
 */
#include "forge/severity.h"

#include <strings.h>

#include "forge/util.h"
#include "forge/verdict.h"

struct word {
	const char *word;
	int rank;
	bool advice;   /* a named advice word: never rejects */
};

static const struct word WORDS[] = {
	{ "blocking", FG_RANK_BLOCKING, false },   { "blocker", FG_RANK_BLOCKING, false },
	{ "critical", FG_RANK_BLOCKING, false },   { "suggestion", FG_RANK_SUGGESTION, false },
	{ "major", FG_RANK_SUGGESTION, false },    { "high", FG_RANK_SUGGESTION, false },
	{ "medium", FG_RANK_SUGGESTION, false },   { "question", FG_RANK_QUESTION, false },
	{ "nitpick", FG_RANK_ADVICE, true },       { "note", FG_RANK_ADVICE, true },
	{ "minor", FG_RANK_ADVICE, true },         { "low", FG_RANK_ADVICE, true },
	{ "info", FG_RANK_ADVICE, true },
};

static const struct word *lookup(const struct fg_finding *f)
{
	for (size_t i = 0; f->severity && i < ARRAY_SIZE(WORDS); i++)
		if (!strcasecmp(f->severity, WORDS[i].word))
			return &WORDS[i];
	return NULL;
}

int fg_finding_rank(const struct fg_finding *f)
{
	const struct word *w = lookup(f);

	return w ? w->rank : FG_RANK_ADVICE;
}

bool fg_finding_is_advice(const struct fg_finding *f)
{
	const struct word *w = lookup(f);

	return w && w->advice;
}

bool fg_findings_advice_only(const struct fg_finding *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!fg_finding_is_advice(&f[i]))
			return false;
	return n > 0;
}
