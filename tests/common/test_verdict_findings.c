/*
 * test_verdict_findings.c - findings: kind and format names, findings to
 * and from JSON, the realistic fixtures, out-of-scope reviews, a finding's
 * rank and role, and a review-result table read as findings.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "forge/verdict.h"

#include "verdict_sample.h"

TestSuite(verdict, .timeout = 120);

Test(verdict, names_and_their_inverses)
{
	static const char *const kinds[] = { "approved", "rejected" };
	static const char *const formats[] = { "json_shadow", "review_result_marker", "verdict_line",
					       "marker", "none" };
	enum fg_verdict_kind k;
	enum fg_verdict_format f;

	for (int i = 0; i < 2; i++) {
		cr_assert_str_eq(fg_verdict_kind_name((enum fg_verdict_kind)i), kinds[i]);
		cr_assert_eq(fg_verdict_kind_parse(kinds[i], &k), 0);
		cr_assert_eq((int)k, i);
	}
	for (int i = 0; i < 5; i++) {
		cr_assert_str_eq(fg_verdict_format_name((enum fg_verdict_format)i), formats[i]);
		cr_assert_eq(fg_verdict_format_parse(formats[i], &f), 0);
		cr_assert_eq((int)f, i);
	}
	cr_assert_eq(fg_verdict_kind_parse("APPROVED", &k), -EINVAL);
	cr_assert_eq(fg_verdict_kind_parse(NULL, &k), -EINVAL);
	cr_assert_eq(fg_verdict_format_parse("json", &f), -EINVAL);
	cr_assert_eq(fg_verdict_format_parse("", &f), -EINVAL);
}

Test(verdict, findings_to_json_has_the_exact_shape)
{
	struct fg_finding f[2] = {
		{ "BLOCKING", 1, "src/a.c", 42, "Leak", "d", "e", "x", NULL },
		{ NULL, 0, NULL, -1, NULL, NULL, NULL, NULL, NULL },
	};
	cJSON *arr = fg_findings_to_json(f, 2);
	char *s = cJSON_PrintUnformatted(arr);

	cr_assert_str_eq(s, "[{\"severity\":\"BLOCKING\",\"ordinal\":1,\"filePath\":\"src/a.c\",\"line\":42,"
			    "\"title\":\"Leak\",\"description\":\"d\",\"evidence\":\"e\",\"fix\":\"x\"},"
			    "{\"severity\":\"\",\"ordinal\":0,\"filePath\":null,\"line\":null,"
			    "\"title\":\"\",\"description\":\"\",\"evidence\":null,\"fix\":null}]");
	free(s);
	cJSON_Delete(arr);
	arr = fg_findings_to_json(NULL, 0);
	s = cJSON_PrintUnformatted(arr);
	cr_assert_str_eq(s, "[]");
	free(s);
	cJSON_Delete(arr);
}

Test(verdict, findings_from_json_round_trip_and_bounds)
{
	cJSON *in = cJSON_Parse("[{\"severity\":\"NOTE\",\"ordinal\":2,\"filePath\":null,\"line\":7,"
				"\"title\":\"t\",\"description\":\"d\",\"evidence\":null,\"fix\":null},"
				"\"skip me\",{\"title\":5,\"line\":\"9\",\"ordinal\":1e30}]");
	struct fg_finding *f = NULL;
	size_t n = 0;
	cJSON *out, *big, *obj;
	char *a, *b;

	cr_assert_eq(fg_findings_from_json(in, &f, &n), 0);
	cr_assert_eq(n, 2);
	cr_assert_null(f[1].title);
	cr_assert_eq(f[1].line, -1);
	cr_assert_eq(f[1].ordinal, 2147483647);
	out = fg_findings_to_json(f, 1);
	a = cJSON_PrintUnformatted(out);
	obj = cJSON_DetachItemFromArray(in, 0);
	b = cJSON_PrintUnformatted(obj);
	cr_assert_str_eq(a, "[" "{\"severity\":\"NOTE\",\"ordinal\":2,\"filePath\":null,\"line\":7,"
			    "\"title\":\"t\",\"description\":\"d\",\"evidence\":null,\"fix\":null}" "]");
	cr_assert(!strncmp(a + 1, b, strlen(b)));
	free(a);
	free(b);
	cJSON_Delete(obj);
	cJSON_Delete(out);
	cr_assert_eq(fg_findings_from_json(in, &f, &n), 0);
	cr_assert_eq(n, 3, "from_json appends");
	cr_assert_eq(fg_findings_from_json(cJSON_GetArrayItem(in, 1), &f, &n), -EINVAL);
	cr_assert_eq(fg_findings_from_json(NULL, &f, &n), -EINVAL);
	cr_assert_eq(n, 3);
	big = cJSON_CreateArray();
	for (int i = 0; i < 600; i++)
		cJSON_AddItemToArray(big, cJSON_CreateObject());
	cr_assert_eq(fg_findings_from_json(big, &f, &n), 0);
	cr_assert_eq(n, FG_FINDINGS_MAX);
	fg_findings_free(f, n);
	fg_findings_free(NULL, 0);
	cJSON_Delete(big);
	cJSON_Delete(in);
}

struct fixture {
	const char *file;
	enum fg_verdict_kind kind;
	enum fg_verdict_format format;
	const char *feedback_start;   /* the feedback begins with this */
	size_t nfindings;
};

Test(verdict, realistic_fixtures)
{
	static const struct fixture t[] = {
		{ "structured-request-changes.md", R, F_CONFLICT, CONFLICT("marker", 21, "json_shadow", 30)
		  "\n\n# Correctness Review: parser bounds", 2 },
		{ "structured-out-of-scope.md", R, F_CONFLICT, CONFLICT("json_shadow", 21, "marker", 12), 0 },
		{ "review-result-findings.md", R, F_CONFLICT, CONFLICT("marker", 6, "review_result_marker", 22)
		  "\n\n# Code review: cycle file writer", 2 },
		/* "nothing was rejected that should pass": a word of prose in lower
		 * case beside a structured approval is no rejection signal. */
		{ "review-result-clean.md", A, F_RRM, "", 0 },
		{ "plain-approved.txt", A, F_MARK, "", 0 },
		{ "plain-rejected.txt", R, F_MARK, "1. src/parse.c:42:", 0 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *path = fgt_fmt("%s/verdict/%s", FG_FIXTURES_DIR, t[i].file);
		size_t len;
		char *text = fgt_read(path, &len);
		struct fg_judgement v;

		cr_assert_not_null(text, "%s", path);
		fg_judgement_init(&v);
		fg_verdict_parse(&v, text, len);
		cr_expect_eq(v.verdict, t[i].kind, "%s", t[i].file);
		cr_expect_eq(v.format, t[i].format, "%s: %s", t[i].file, fg_verdict_format_name(v.format));
		cr_expect(!strncmp(v.feedback, t[i].feedback_start, strlen(t[i].feedback_start)),
			  "%s: feedback [%.60s]", t[i].file, v.feedback);
		if (!*t[i].feedback_start)
			cr_expect_str_eq(v.feedback, "", "%s", t[i].file);
		cr_expect_eq(v.nfindings, t[i].nfindings, "%s", t[i].file);
		fg_judgement_reset(&v);
		free(text);
		free(path);
	}
}

Test(verdict, out_of_scope_is_no_objection)
{
	static const char *const yes[] = {
		"Nothing for me here.\n\nVerdict: OUT OF SCOPE\n",
		"- Verdict: **out of scope**.\n",
		"Verdict: OUT_OF_SCOPE\n",
		"x\n```json\n{\"verdict\": \"out_of_scope\", \"findings\": []}\n```\n",
	};
	static const char *const no[] = {
		"Verdict: OUT OF SCOPES\n",
		"Verdict: OUTOFSCOPE\n",
		"Verdict: OUT OF\n",
	};
	struct fg_judgement v;

	fg_judgement_init(&v);
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		fg_verdict_parse(&v, yes[i], strlen(yes[i]));
		cr_assert_eq(v.verdict, FG_VERDICT_APPROVED, "%s", yes[i]);
		cr_assert(v.out_of_scope, "%s", yes[i]);
		cr_assert_str_eq(v.feedback, "");
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		fg_verdict_parse(&v, no[i], strlen(no[i]));
		cr_assert_eq(v.verdict, FG_VERDICT_REJECTED, "%s", no[i]);
		cr_assert_not(v.out_of_scope, "%s", no[i]);
		cr_assert_eq(v.format, FG_FORMAT_NONE, "%s", no[i]);
	}
	fg_verdict_parse(&v, "Verdict: APPROVE\n", 17);
	cr_assert_not(v.out_of_scope);
	fg_judgement_reset(&v);
}

Test(verdict, finding_rank_and_role)
{
	struct fg_finding f = { "question", 1, NULL, -1, "t", NULL, NULL, NULL, "security" };
	struct fg_finding *g = calloc(1, sizeof(*g));
	cJSON *arr;
	char *s;

	cr_assert_eq(fg_finding_rank(&f), FG_RANK_QUESTION);
	f.severity = "Critical";
	cr_assert_eq(fg_finding_rank(&f), FG_RANK_BLOCKING);
	f.severity = "MEDIUM";
	cr_assert_eq(fg_finding_rank(&f), FG_RANK_SUGGESTION);
	f.severity = "NOTE";
	cr_assert_eq(fg_finding_rank(&f), FG_RANK_ADVICE);
	f.severity = NULL;
	cr_assert_eq(fg_finding_rank(&f), FG_RANK_ADVICE);
	arr = fg_findings_to_json(&f, 1);
	s = cJSON_PrintUnformatted(arr);
	cr_assert(strstr(s, "\"role\":\"security\""), "%s", s);
	free(s);
	struct fg_finding *back = NULL;
	size_t n = 0;

	cr_assert_eq(fg_findings_from_json(arr, &back, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(back[0].role, "security");
	fg_finding_copy(g, &back[0]);
	cr_assert_str_eq(g->role, "security");
	cr_assert_str_eq(g->title, "t");
	cr_assert_neq(g->title, back[0].title);
	fg_findings_free(back, n);
	fg_findings_free(g, 1);
	cJSON_Delete(arr);
}

Test(verdict, review_result_findings_table_becomes_findings)
{
	static const char text[] =
		"Report.\n\n"
		"```\n| Severity | Finding |\n|---|---|\n| BLOCKING | in a fence |\n```\n\n"
		"| # | Severity | Finding | Location | Evidence |\n"
		"|---|:---:|---|---|---|\n"
		"| 1 | **QUESTION** | Should tokens expire? | `src/auth.c:12` | spec is silent |\n"
		"| 2 | NITPICK | Name \\| style | \xe2\x80\x94 | rule N |\n"
		"| 3 | NOTE | A path only | docs/a.md | x |\n"
		"\nAfter the table.\n\n"
		"| Severity | Finding |\n|---|---|\n| BLOCKING | a second table is not read |\n"
		"\n<!-- review-result: findings=3 -->\n";
	struct fg_judgement v;

	parse_findings(&v, text, strlen(text), FG_FORMAT_REVIEW_RESULT_MARKER, 3);
	cr_assert_eq(v.findings[0].ordinal, 1);
	cr_assert_str_eq(v.findings[0].severity, "QUESTION");
	cr_assert_eq(fg_finding_rank(&v.findings[0]), FG_RANK_QUESTION);
	cr_assert_str_eq(v.findings[0].title, "Should tokens expire?");
	cr_assert_str_eq(v.findings[0].file_path, "src/auth.c");
	cr_assert_eq(v.findings[0].line, 12);
	cr_assert_str_eq(v.findings[0].evidence, "spec is silent");
	cr_assert_str_eq(v.findings[1].title, "Name | style");
	cr_assert_null(v.findings[1].file_path);
	cr_assert_eq(v.findings[1].line, -1);
	cr_assert_str_eq(v.findings[2].file_path, "docs/a.md");
	cr_assert_eq(v.findings[2].line, -1);
	/* No table, or another format: no findings from tables. */
	static const char clean[] = "Fine.\n<!-- review-result: findings=0 -->\n";
	static const char marker[] = "| Severity | Finding |\n|---|---|\n| BLOCKING | x |\nREJECTED\n";

	fg_verdict_parse(&v, clean, strlen(clean));
	cr_assert_not(v.has_findings);
	fg_verdict_parse(&v, marker, strlen(marker));
	cr_assert_eq(v.format, FG_FORMAT_MARKER);
	cr_assert_not(v.has_findings);
	fg_judgement_reset(&v);
}
