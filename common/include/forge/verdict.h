/*
 * verdict.h - reading a reviewer's verdict out of its free-form output.
 *
 * Every verdict signal must agree. The signals are the rules 1 to 4 below
 * (each json block, each verdict line, each marker word is one); only live
 * text counts: not code (CommonMark's fenced and indented code, inline
 * code) and, for an approval, not a block quote (a quoted REJECTED or
 * "Verdict: REQUEST CHANGES" still rejects). When an approving signal
 * stands beside a rejecting one the output is rejected with format
 * conflict: the feedback is "Conflicting verdicts: F at line N approves,
 * G at line M rejects; an approval needs every signal to agree." (F and G
 * the first rule of each side in the order below), then a blank line and
 * the rejecting rule's own feedback, whose findings are kept. A worker's
 * text the reviewer quotes or shows as code thereby cannot approve.
 * When the signals agree, the first rule that matches decides (and is
 * reported as the format):
 *   1. json_shadow: a fenced ```json block whose top-level object has
 *      "verdict": "approve" | "request_changes" | "out_of_scope". The last
 *      such block of the deciding side counts; out_of_scope counts as approved (and sets
 *      out_of_scope: the reviewer's domain has nothing to assess);
 *      "findings" kept.
 *   2. review_result_marker: the last non-empty line is
 *      "<!-- review-result: findings=N -->"; N == 0 approved, else rejected.
 *      Its findings table (the first Markdown table outside fences before
 *      the marker whose header has Severity and Finding columns, optionally
 *      #, Location and Evidence) becomes the findings: severity, title,
 *      ordinal, filePath and line from "path:line" (a dash: none), evidence.
 *   3. verdict_line: a line "Verdict: **APPROVE**",
 *      "Verdict: **REQUEST CHANGES**" or "Verdict: OUT OF SCOPE" (approved,
 *      out_of_scope set; optionally a list item; emphasis optional;
 *      case-insensitive).
 *   4. marker: case-insensitive whole-word APPROVED / REJECTED; the first
 *      of the deciding side gives the feedback.
 *   5. none: rejected with feedback "Verdict could not be parsed".
 * Advice only (severity.h): a rejection by rule 1, 2 or 3 (and by no other
 * rule, and with no REJECTED marker beside it) whose findings
 * are all named advice (NITPICK, NOTE, MINOR, LOW, INFO), at least one, is
 * approved with advice_only set and the findings kept (rule 2: only when N
 * equals the table's rows, so a count the table does not show keeps the
 * rejection). Rule 3 reads findings from the review-output template's
 * headings "### [B1] Title — `file:line`" (BLOCKING) and "### [N1] ..."
 * (NOTE) when the output has any, in live text only (a quoted heading is
 * no finding).
 * Evidence: every line of unquoted live text of the form "**Verified:** text"
 * (emphasis optional, any case, optionally a list item) is kept in
 * verified, in order, at most FG_VERIFIED_MAX, each trimmed, valid UTF-8
 * and cut at FG_VERIFIED_BYTES.
 * Feedback: "" when approved. Rejected: marker rule: the trimmed text after
 * the marker (if empty, the trimmed text before it); structured formats: the
 * report text (rawMarkdown, else the output without the JSON block/marker),
 * trimmed. Feedback is capped at FG_FEEDBACK_MAX bytes (on a UTF-8 boundary).
 *
 * Linear time in the input; no regex; inputs of many megabytes are fine.
 *
 * Details of the rules (the parser's exact reading of the list above):
 *   - Blocks (verdict_md.c): a line of >= 3 backticks or tildes indented at
 *     most 3 columns (past a list item's content column) opens a fence (a
 *     backtick fence whose info string holds a backtick is inline code
 *     instead); a line of >= as many of the same character indented at most
 *     3, then only blanks, closes it; an unclosed fence runs to the end of
 *     the input (or of its list item or quote). A line indented 4 columns
 *     (tabs to multiples of 4) that does not continue a paragraph is
 *     indented code. '>' after at most 3 columns starts a block quote, which
 *     has fences and indented code of its own and takes lazy continuation
 *     lines (a paragraph line that is no heading, list item or fence).
 *   - review_result_marker: its line must be unquoted live text.
 *   - Inline code (CommonMark): a run of n backticks opens a span closed by
 *     the next run of exactly n in the same paragraph (a blank line or a
 *     fence ends a paragraph); without a closer the backticks are literal.
 *     Runs longer than 128 never open a span.
 *   - json_shadow: the fence's info string starts with the word "json" (any
 *     case); the block's whole content is one JSON object (blocks over
 *     4 MiB are not parsed); "verdict" compares in any case; an unclosed
 *     json block at the end still counts. Blocks that fail any of this are
 *     ignored, so an earlier valid block, or the next rule, decides.
 *     rawMarkdown counts when it is non-empty after trimming.
 *   - review_result_marker: blanks around the parts and the keywords' case
 *     are tolerated; N is one or more decimal digits (any length).
 *   - verdict_line: "Verdict", ':', then APPROVE or REQUEST CHANGES (or
 *     REQUEST_CHANGES), with optional * or _ emphasis around each part, an
 *     optional "- ", "* ", "+ ", "1. " list marker and a trailing '.'; any
 *     other text on the line disqualifies it ("APPROVE / REQUEST CHANGES").
 *     Lines inside fences do not count; rejected feedback is the whole
 *     output, trimmed.
 *   - marker: word characters are ASCII letters, digits and '_'; NUL and
 *     non-ASCII bytes are boundaries. After REJECTED the parser skips
 *     closing emphasis ("**REJECTED**: x"), then, on the same line, ':' '-'
 *     en/em dash separators and blanks, then emphasis closed right after
 *     them ("**REJECTED:** x"); a list on the next line is kept. Text before
 *     the marker loses the emphasis that opens it.
 *   - The feedback is always valid UTF-8: NUL bytes and invalid sequences
 *     are replaced by U+FFFD; trimming removes ASCII white space.
 */
#ifndef FORGE_VERDICT_H
#define FORGE_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

#include "forge/buf.h"
#include "forge/severity.h"

struct cJSON;

#define FG_FEEDBACK_MAX (256 * 1024)
#define FG_FINDINGS_MAX 500
/* "**Verified:**" lines kept per review, and bytes kept of each. */
#define FG_VERIFIED_MAX 20
#define FG_VERIFIED_BYTES 1000

enum fg_verdict_kind { FG_VERDICT_APPROVED, FG_VERDICT_REJECTED };

/* The feedback of a rejection because no verdict was found (format none);
 * the runner tells it apart from a failed reviewer by it (verdict_unparsed). */
#define FG_VERDICT_UNPARSED_FEEDBACK "Verdict could not be parsed"
/* What a reviewer is expected to print, for messages about an unparsed one. */
#define FG_VERDICT_EXPECTED "APPROVED or REJECTED outside code blocks (or a 'Verdict:' line, " \
	"or a JSON block with \"verdict\")"


enum fg_verdict_format {
	FG_FORMAT_JSON_SHADOW,
	FG_FORMAT_REVIEW_RESULT_MARKER,
	FG_FORMAT_VERDICT_LINE,
	FG_FORMAT_MARKER,
	FG_FORMAT_NONE,
	FG_FORMAT_CHECKS,   /* no reviewer ran: a check failed (review.md checks:) */
	FG_FORMAT_CONFLICT  /* two verdict signals disagree: rejected */
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
	char *role;         /* the panel role that raised it; NULL outside a panel */
};


/*
 * A review outcome, the one type for it: what a reviewer's answer says
 * (fg_verdict_parse fills one), and what a cycle (cycle.h: struct
 * fg_cycle) and a panel role's review (struct fg_review) hold of it, each
 * as its member j. Protocol: fg_judgement_init() -> fill (parse, or set
 * the fields) -> fg_judgement_move() it to where it is kept, or
 * fg_judgement_reset() it (frees and re-initialises; call it last).
 * A judgement is never copied field by field.
 */
struct fg_judgement {
	enum fg_verdict_kind verdict;
	bool out_of_scope;           /* approved because the domain had nothing to assess */
	bool has_format;             /* format is known (a parsed answer: always) */
	enum fg_verdict_format format;
	char *feedback;              /* owned, never NULL after parse */
	struct fg_finding *findings; /* owned array */
	size_t nfindings;
	size_t findings_alloc;       /* its capacity (FG_ALLOC_GROW); never above it */
	bool has_findings;           /* the output carried a findings array */
	bool advice_only;            /* approved: every finding is advice (severity.h) */
	struct fg_strvec verified;   /* owned: the "**Verified:**" lines, in order */
};

/* Empty: rejected, format none (has_format false), no feedback, no findings. */
void fg_judgement_init(struct fg_judgement *j);
/* Frees what j owns and leaves it as fg_judgement_init() does. */
void fg_judgement_reset(struct fg_judgement *j);
/* Moves src into dst: dst is reset first, then takes every field (and the
 * ownership of feedback and findings); src is left initialised-empty. */
void fg_judgement_move(struct fg_judgement *dst, struct fg_judgement *src);
/* Appends a zeroed finding to j's findings (grown with FG_ALLOC_GROW) and
 * returns it, owned by j. */
struct fg_finding *fg_judgement_add_finding(struct fg_judgement *j);
/* Gives dst (which holds no findings) a deep copy of src's findings and
 * has_findings. */
void fg_judgement_copy_findings(struct fg_judgement *dst, const struct fg_judgement *src);

/* "approved" / "rejected". */
const char *fg_verdict_kind_name(enum fg_verdict_kind k);
/* "json_shadow", "review_result_marker", "verdict_line", "marker", "none",
 * "checks", "conflict". */
const char *fg_verdict_format_name(enum fg_verdict_format f);
/* Inverse of the two above: 0 or -EINVAL. */
int fg_verdict_kind_parse(const char *s, enum fg_verdict_kind *out);
int fg_verdict_format_parse(const char *s, enum fg_verdict_format *out);

/* Parses len bytes of reviewer output (need not be NUL-terminated, may hold
 * NULs; text == NULL reads as empty) into the judgement v (has_format set).
 * text is borrowed. v must have been initialised; its previous contents are
 * released first, so one struct may be parsed into repeatedly. Always
 * returns 0: every input yields a verdict.
 * Findings are filled (and has_findings set) by the json_shadow rule and by
 * the review_result_marker rule's table. */
int fg_verdict_parse(struct fg_judgement *v, const char *text, size_t len);

/* Findings <-> JSON array of {severity, ordinal, filePath, line, title,
 * description, evidence, fix} plus "role" when set. to_json returns a new cJSON array (owned).
 * from_json appends valid entries of arr (skipping non-objects), at most
 * FG_FINDINGS_MAX; returns 0 or -EINVAL when arr is not an array. */
/* to_json: absent severity/title/description become "", absent filePath,
 * line (-1), evidence and fix become null. from_json: arr is borrowed;
 * *out and *n are grown in place (start from NULL and 0); members of the wrong type
 * count as absent, numbers are clamped to int, a negative line becomes -1,
 * strings are copied as valid UTF-8. Free with fg_findings_free(*out, *n). */
struct cJSON *fg_findings_to_json(const struct fg_finding *f, size_t n);
int fg_findings_from_json(const struct cJSON *arr, struct fg_finding **out, size_t *n);
void fg_findings_free(struct fg_finding *f, size_t n);
/* Deep copy of src into dst (whose old contents are not freed). */
void fg_finding_copy(struct fg_finding *dst, const struct fg_finding *src);

#endif
