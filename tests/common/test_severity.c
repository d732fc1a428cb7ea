/*
 * test_severity.c - the one severity mapping (severity.h) and what the
 * verdict parser does with it: advice-only findings approve in every
 * structured format, nothing else does; "**Verified:**" lines are kept.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/severity.h"
#include "forge/verdict.h"

TestSuite(severity, .timeout = 60);

Test(severity, mapping_table)
{
	static const struct { const char *word; int rank; bool advice; } cases[] = {
		{ "BLOCKING", FG_RANK_BLOCKING, false },  { "blocker", FG_RANK_BLOCKING, false },
		{ "Critical", FG_RANK_BLOCKING, false },  { "SUGGESTION", FG_RANK_SUGGESTION, false },
		{ "HIGH", FG_RANK_SUGGESTION, false },    { "major", FG_RANK_SUGGESTION, false },
		{ "Medium", FG_RANK_SUGGESTION, false },  { "QUESTION", FG_RANK_QUESTION, false },
		{ "NITPICK", FG_RANK_ADVICE, true },      { "note", FG_RANK_ADVICE, true },
		{ "MINOR", FG_RANK_ADVICE, true },        { "low", FG_RANK_ADVICE, true },
		{ "INFO", FG_RANK_ADVICE, true },         { "ERROR", FG_RANK_ADVICE, false },
		{ "", FG_RANK_ADVICE, false },            { NULL, FG_RANK_ADVICE, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fg_finding f = { .severity = (char *)cases[i].word, .line = -1 };

		cr_assert_eq(fg_finding_rank(&f), cases[i].rank, "%s", cases[i].word ? cases[i].word : "NULL");
		cr_assert_eq(fg_finding_is_advice(&f), cases[i].advice, "%s",
			     cases[i].word ? cases[i].word : "NULL");
	}
	cr_assert_not(fg_findings_advice_only(NULL, 0), "no finding is not advice-only");
}

struct acase {
	const char *name;
	const char *text;
	enum fg_verdict_kind verdict;
	bool advice_only;
	size_t nfindings;
};

#define TABLE(sev, n) "Report.\n\n| # | Severity | Finding | Location | Evidence |\n|---|---|---|---|---|\n" \
	"| 1 | " sev " | trailing blank | calc.sh:3 | read |\n\n<!-- review-result: findings=" n " -->\n"

static const struct acase ACASES[] = {
	{ "table_nitpick", TABLE("NITPICK", "1"), FG_VERDICT_APPROVED, true, 1 },
	{ "table_minor_mapped", TABLE("MINOR", "1"), FG_VERDICT_APPROVED, true, 1 },
	{ "table_high_rejects", TABLE("HIGH", "1"), FG_VERDICT_REJECTED, false, 1 },
	{ "table_unknown_word_rejects", TABLE("ERROR", "1"), FG_VERDICT_REJECTED, false, 1 },
	{ "table_count_more_than_rows", TABLE("NITPICK", "2"), FG_VERDICT_REJECTED, false, 1 },
	{ "shadow_notes_only",
	  "Report\n```json\n{\"verdict\":\"request_changes\",\"findings\":[{\"severity\":\"NOTE\",\"title\":\"x\"}]}\n```\n",
	  FG_VERDICT_APPROVED, true, 1 },
	{ "shadow_blocking",
	  "```json\n{\"verdict\":\"request_changes\",\"findings\":[{\"severity\":\"NOTE\",\"title\":\"x\"},"
	  "{\"severity\":\"BLOCKING\",\"title\":\"y\"}]}\n```\n",
	  FG_VERDICT_REJECTED, false, 2 },
	{ "shadow_empty_findings_rejects", "```json\n{\"verdict\":\"request_changes\",\"findings\":[]}\n```\n",
	  FG_VERDICT_REJECTED, false, 0 },
	{ "template_notes_only",
	  "# Review\n\n## BLOCKING\n\n## NOTE\n\n### [N1] Clearer name \xe2\x80\x94 `calc.sh:12` (confidence: 20)\n"
	  "**Description**: x\n\n## Summary\n- Verdict: **REQUEST CHANGES**\n",
	  FG_VERDICT_APPROVED, true, 1 },
	{ "template_blocking",
	  "## BLOCKING\n\n### [B1] add subtracts \xe2\x80\x94 `calc.sh:4` (confidence: 90)\n\n"
	  "### [N1] name - `calc.sh:1`\n\nVerdict: **REQUEST CHANGES**\n",
	  FG_VERDICT_REJECTED, false, 2 },
	{ "template_heading_in_fence_ignored",
	  "```\n### [N1] quoted\n```\nVerdict: REQUEST CHANGES\n", FG_VERDICT_REJECTED, false, 0 },
	{ "marker_keeps_rejection", "REJECTED: NITPICK only, but no structure\n", FG_VERDICT_REJECTED, false, 0 },
};

Test(severity, advice_only_findings_approve_in_every_structured_format)
{
	for (size_t i = 0; i < sizeof(ACASES) / sizeof(ACASES[0]); i++) {
		const struct acase *c = &ACASES[i];
		struct fg_judgement v;

		fg_judgement_init(&v);
		fg_verdict_parse(&v, c->text, strlen(c->text));
		cr_assert_eq(v.verdict, c->verdict, "%s: verdict %d", c->name, v.verdict);
		cr_assert_eq(v.advice_only, c->advice_only, "%s", c->name);
		cr_assert_eq(v.nfindings, c->nfindings, "%s: %zu findings", c->name, v.nfindings);
		if (c->advice_only)
			cr_assert_str_empty(v.feedback, "%s: approved means no feedback", c->name);
		fg_judgement_reset(&v);
	}
}

Test(severity, template_heading_fields)
{
	static const char text[] = "### [B2] add() subtracts \xe2\x80\x94 `src/calc.sh:41` (confidence: 90)\n"
				   "Verdict: **REQUEST CHANGES**\n";
	struct fg_judgement v;

	fg_judgement_init(&v);
	fg_verdict_parse(&v, text, strlen(text));
	cr_assert_eq(v.nfindings, 1);
	cr_assert_str_eq(v.findings[0].severity, "BLOCKING");
	cr_assert_eq(v.findings[0].ordinal, 2);
	cr_assert_str_eq(v.findings[0].title, "add() subtracts");
	cr_assert_str_eq(v.findings[0].file_path, "src/calc.sh");
	cr_assert_eq(v.findings[0].line, 41);
	fg_judgement_reset(&v);
}

Test(severity, verified_lines_are_kept_outside_fences_bounded)
{
	struct fg_judgement v;
	char *big = malloc(200000);
	size_t o = 0;

	o += (size_t)snprintf(big + o, 200000 - o, "**Verified:** sh tests/test_calc.sh \xe2\x86\x92 4 passed\n"
				  "- Verified: make lint -> clean\n```\n**Verified:** inside a fence\n```\n"
				  "**verified**: lower case\n**Verified:**   \nVerifiedx: no\n");
	for (int i = 0; i < 40; i++)
		o += (size_t)snprintf(big + o, 200000 - o, "**Verified:** run %d\n", i);
	memset(big + o, 'x', 5000);
	o += 5000;
	o += (size_t)snprintf(big + o, 200000 - o, "\nAPPROVED\n");
	fg_judgement_init(&v);
	fg_verdict_parse(&v, big, o);
	cr_assert_eq(v.verdict, FG_VERDICT_APPROVED);
	cr_assert_eq(v.verified.n, FG_VERIFIED_MAX);
	cr_assert_str_eq(v.verified.v[0], "sh tests/test_calc.sh \xe2\x86\x92 4 passed");
	cr_assert_str_eq(v.verified.v[1], "make lint -> clean");
	cr_assert_str_eq(v.verified.v[2], "lower case");
	cr_assert_str_eq(v.verified.v[3], "run 0");
	for (size_t i = 0; i < v.verified.n; i++)
		cr_assert(strlen(v.verified.v[i]) <= FG_VERIFIED_BYTES);
	fg_judgement_reset(&v);
	free(big);
}
