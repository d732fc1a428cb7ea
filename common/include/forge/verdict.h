/*
 * verdict.h - reading a reviewer's verdict out of its free-form output.
 *
 * Rules, in order; the first that matches decides (and is reported as the
 * format):
 *   1. json_shadow: a fenced ```json block whose top-level object has
 *      "verdict": "approve" | "request_changes" | "out_of_scope". The last
 *      such block wins; out_of_scope counts as approved; "findings" kept.
 *   2. review_result_marker: the last non-empty line is
 *      "<!-- review-result: findings=N -->"; N == 0 approved, else rejected.
 *   3. verdict_line: a line "Verdict: **APPROVE**" or
 *      "Verdict: **REQUEST CHANGES**" (optionally a list item; emphasis
 *      optional; case-insensitive); the last such line wins.
 *   4. marker: case-insensitive whole-word APPROVED / REJECTED, first
 *      occurrence wins; markers inside fenced code blocks (``` or ~~~) and
 *      inline code spans do not count.
 *   5. none: rejected with feedback "Verdict could not be parsed".
 * Feedback: "" when approved. Rejected: marker rule: the trimmed text after
 * the marker (if empty, the trimmed text before it); structured formats: the
 * report text (rawMarkdown, else the output without the JSON block/marker),
 * trimmed. Feedback is capped at FG_FEEDBACK_MAX bytes (on a UTF-8 boundary).
 *
 * Linear time in the input; no regex; inputs of many megabytes are fine.
 */
#ifndef FORGE_VERDICT_H
#define FORGE_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;

#define FG_FEEDBACK_MAX (256 * 1024)
#define FG_FINDINGS_MAX 500

enum fg_verdict_kind { FG_VERDICT_APPROVED, FG_VERDICT_REJECTED };

enum fg_verdict_format {
	FG_FORMAT_JSON_SHADOW,
	FG_FORMAT_REVIEW_RESULT_MARKER,
	FG_FORMAT_VERDICT_LINE,
	FG_FORMAT_MARKER,
	FG_FORMAT_NONE
};

/* One structured finding; string members owned, NULL when absent/null. */
struct fg_finding {
	char *severity;     /* "BLOCKING", "NOTE", ... as given */
	int ordinal;        /* 0 when absent */
	char *file_path;
	int line;           /* -1 when absent/null */
	char *title;
	char *description;
	char *evidence;
	char *fix;
};

struct fg_verdict {
	enum fg_verdict_kind verdict;
	enum fg_verdict_format format;
	char *feedback;              /* owned, never NULL after parse */
	struct fg_finding *findings; /* owned array */
	size_t nfindings;
	bool has_findings;           /* the output carried a findings array */
};

/* "approved" / "rejected". */
const char *fg_verdict_kind_name(enum fg_verdict_kind k);
/* "json_shadow", "review_result_marker", "verdict_line", "marker", "none". */
const char *fg_verdict_format_name(enum fg_verdict_format f);
/* Inverse of the two above: 0 or -EINVAL. */
int fg_verdict_kind_parse(const char *s, enum fg_verdict_kind *out);
int fg_verdict_format_parse(const char *s, enum fg_verdict_format *out);

void fg_verdict_init(struct fg_verdict *v);
void fg_verdict_release(struct fg_verdict *v);

/* Parses len bytes of reviewer output (need not be NUL-terminated, may hold
 * NULs). Always returns 0: every input yields a verdict. */
int fg_verdict_parse(struct fg_verdict *v, const char *text, size_t len);

/* Findings <-> JSON array of {severity, ordinal, filePath, line, title,
 * description, evidence, fix}. to_json returns a new cJSON array (owned).
 * from_json appends valid entries of arr (skipping non-objects), at most
 * FG_FINDINGS_MAX; returns 0 or -EINVAL when arr is not an array. */
struct cJSON *fg_findings_to_json(const struct fg_finding *f, size_t n);
int fg_findings_from_json(const struct cJSON *arr, struct fg_finding **out, size_t *n);
void fg_findings_free(struct fg_finding *f, size_t n);

#endif
