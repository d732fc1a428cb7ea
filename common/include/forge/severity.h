/*
 * severity.h - the one severity mapping of forge-review: the worker's
 * prompt, the verdict parser, the panel, the runner's log and the docs
 * (docs/guide/auto-review.md, "Severities") all read it from here.
 *
 * The vocabulary is the review-result marker's (BLOCKING, SUGGESTION,
 * NITPICK, QUESTION) plus the review-output schema's NOTE; other graders'
 * words are mapped as the marker's rules say, any case:
 *
 *   word                              rank         rejects  listed
 *   BLOCKING, BLOCKER, CRITICAL       blocking     yes      first
 *   SUGGESTION, MAJOR, HIGH, MEDIUM   suggestion   yes      after blocking
 *   QUESTION                          question     yes      (blocked state)
 *   NITPICK, NOTE, MINOR, LOW, INFO   advice       no       "not looped on"
 *   none, or any other word           advice rank  yes      after blocking
 *
 * HIGH is a SUGGESTION (the marker's mapping): it rejects like BLOCKING,
 * but the worker's feedback lists it after the BLOCKING findings.
 * "Advice-only": a rejection whose findings are all named advice words
 * approves (fg_findings_advice_only); a finding with no severity or a word
 * not in the table never does, so a grader we do not know cannot approve
 * by accident.
 */
#ifndef FORGE_SEVERITY_H
#define FORGE_SEVERITY_H

#include <stdbool.h>
#include <stddef.h>

struct fg_finding;

/* How much a finding weighs, by its severity word (any case). */
enum fg_finding_rank {
	FG_RANK_BLOCKING,     /* BLOCKING, BLOCKER, CRITICAL */
	FG_RANK_SUGGESTION,   /* SUGGESTION, MAJOR, HIGH, MEDIUM */
	FG_RANK_QUESTION,     /* QUESTION: a person must decide */
	FG_RANK_ADVICE        /* NOTE, NITPICK, MINOR, LOW, INFO, anything else */
};

/* The finding's enum fg_finding_rank (f borrowed). */
int fg_finding_rank(const struct fg_finding *f);

/* True when f's severity is one of the named advice words (NITPICK, NOTE,
 * MINOR, LOW, INFO, any case): it is listed, never looped on. */
bool fg_finding_is_advice(const struct fg_finding *f);

/* True when n > 0 and every finding of f[0..n) is named advice. */
bool fg_findings_advice_only(const struct fg_finding *f, size_t n);

#endif
