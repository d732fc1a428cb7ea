/*
 * cmd_report.c - `forge-runner report`: merge result files into one auto-review
 * report (JSON, or a Markdown "Auto-Review Notes" section). The contract is
 * in report.h; the user's manual in docs/reference/report.md.
 *
 * Flow: parse options, load each result file into an entry (or a warning),
 * merge the entry into the report by key (report_put), sort by key, render,
 * write. A report holds a handful of steps, so the key lookup is a linear
 * scan: O(n^2) over the inputs, which is fine below thousands of files.
 */
#include "report.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/text.h"
#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/cycle.h"
#include "forge/exit.h"
#include "forge/fsutil.h"
#include "forge/names.h"
#include "forge/summary.h"
#include "cli.h"
#include "result.h"

enum { R_FORMAT = 1, R_OUTPUT, R_ONLY_OPEN, R_HELP };

const struct fg_opt rn_report_options[] = {
	{ R_FORMAT, "format", 0, "FMT", NULL, "json (default) or markdown" },
	{ R_OUTPUT, "output", 'o', "FILE", NULL, "write the report to FILE (atomically) instead of stdout" },
	{ R_ONLY_OPEN, "only-open", 0, NULL, NULL, "only steps left exhausted, stalled, blocked, over_budget or failed" },
	{ R_HELP, "help", 'h', NULL, NULL, "show help" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

#define PREFIX "forge-runner report: "

/* One result file, reduced to what the report shows. */
struct entry {
	char *key;          /* "{task_key}__{step}" */
	char *task_key;     /* NULL: none */
	char *step;
	char *skill;        /* NULL: none */
	char *run_id;       /* NULL: none */
	enum fg_review_state state;
	bool exhausted;
	bool success;       /* the result's success (exit_code 0 when absent) */
	int exit_code;
	char *error;        /* error_message; NULL: none */
	struct fg_cycle *cycles;   /* sorted by cycle number */
	size_t ncycles;
	struct fg_usage_pair usage;  /* the result's "usage" (the step's totals) */
	char *source;       /* the path as given */
};

struct report {
	struct entry *v;
	size_t n, cap;
	struct fg_strvec warnings;
};

static void entry_release(struct entry *e)
{
	for (size_t i = 0; i < e->ncycles; i++)
		fg_cycle_release(&e->cycles[i]);
	free(e->cycles);
	free(e->error);
	free(e->key);
	free(e->task_key);
	free(e->step);
	free(e->skill);
	free(e->run_id);
	free(e->source);
	memset(e, 0, sizeof(*e));
}

static void report_release(struct report *rp)
{
	for (size_t i = 0; i < rp->n; i++)
		entry_release(&rp->v[i]);
	free(rp->v);
	fg_strvec_release(&rp->warnings);
}

/* Warnings go to stderr as they happen and into the JSON "warnings". */
static void report_warn(struct report *rp, char *msg)
{
	fprintf(stderr, PREFIX "%s\n", msg);
	fg_strvec_push_take(&rp->warnings, msg);
}

/* ---- loading ---- */

_Static_assert(RN_REPORT_MAX_INPUT == 72u * 1024 * 1024, "read_error() names the bound");

static const char *read_error(int r)
{
	if (r == -EFBIG)
		return "larger than 72 MiB, the most a result file of forge-runner run holds";
	if (r == -EINVAL || r == -EISDIR)
		return "not a regular file";
	return strerror(-r);
}

/* Reads path into out. The user names the file, so a symlink is followed. */
static int read_input(const char *path, struct fg_buf *out, char *err, size_t errlen)
{
	int r = fg_read_file_at(AT_FDCWD, path, RN_REPORT_MAX_INPUT, FG_READ_FOLLOW, out, NULL);

	if (r) {
		snprintf(err, errlen, "%s", read_error(r));
		return -1;
	}
	return 0;
}

/*
 * A string field that may be null or absent (*out NULL) or must hold a
 * valid name of kind (when kind >= 0). "" counts as absent. 0 or -1 with
 * err filled.
 */
static int opt_string(const cJSON *o, const char *field, int kind, char **out, char *err,
		      size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
	char nerr[256];

	*out = NULL;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v)) {
		snprintf(err, errlen, "not a result file: field '%s' must be a string or null", field);
		return -1;
	}
	if (!v->valuestring[0])
		return 0;
	if (kind >= 0 && fg_name_check((enum fg_name_kind)kind, v->valuestring,
				       strlen(v->valuestring), nerr, sizeof(nerr))) {
		snprintf(err, errlen, "not a result file: %s", nerr);
		return -1;
	}
	*out = fg_xstrdup(v->valuestring);
	return 0;
}

static int parse_state(const cJSON *o, struct entry *e, char *err, size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "review_state");
	size_t n;

	if (!v) {
		snprintf(err, errlen, "not a result file: missing field 'review_state'");
		return -1;
	}
	if (cJSON_IsString(v) && !fg_review_state_parse(v->valuestring, &e->state))
		return 0;
	/* The word results written before issue 18 used for disabled and no_review. */
	if (cJSON_IsString(v) && !strcmp(v->valuestring, "none")) {
		e->state = FG_STATE_NO_REVIEW;
		return 0;
	}
	n = (size_t)snprintf(err, errlen, "not a result file: field 'review_state' must be one of");
	for (int i = 0; i < FG_STATE_COUNT && n < errlen; i++)
		n += (size_t)snprintf(err + n, errlen - n, " %s,", fg_review_state_name((enum fg_review_state)i));
	if (n < errlen)
		snprintf(err + n, errlen - n, " none");
	return -1;
}

static int cmp_cycle(const void *a, const void *b)
{
	const struct fg_cycle *x = a, *y = b;

	return (x->cycle > y->cycle) - (x->cycle < y->cycle);
}

/* Each element of review_cycles must be a valid cycle object (cycle.h):
 * it is re-serialised and fed to fg_cycle_parse so both readers agree. */
static int parse_cycles(const cJSON *o, struct entry *e, char *err, size_t errlen)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, "review_cycles");
	const cJSON *it;
	char cerr[256];

	if (!cJSON_IsArray(arr)) {
		snprintf(err, errlen, "not a result file: %s",
			 arr ? "field 'review_cycles' must be an array" : "missing field 'review_cycles'");
		return -1;
	}
	e->cycles = fg_xcalloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*e->cycles));
	cJSON_ArrayForEach(it, arr) {
		char *text = cJSON_PrintUnformatted(it);
		struct fg_cycle *c = &e->cycles[e->ncycles];
		int r;

		fg_cycle_init(c);
		r = text ? fg_cycle_parse(c, text, strlen(text), cerr, sizeof(cerr)) : -ENOMEM;
		cJSON_free(text);
		if (r) {
			snprintf(err, errlen, "not a result file: review_cycles[%zu]: %s", e->ncycles,
				 r == -ENOMEM ? "out of memory" : cerr);
			return -1;
		}
		e->ncycles++;
	}
	/* Written in order by the runner; sorted anyway so "last" is the highest. */
	if (e->ncycles > 1)
		qsort(e->cycles, e->ncycles, sizeof(*e->cycles), cmp_cycle);
	return 0;
}

/* success, exit_code and error_message: how the run ended, shown for a run
 * that failed before (or outside) any review. Each is optional; a wrong type
 * is refused like any other field. */
static int parse_outcome(const cJSON *o, struct entry *e, char *err, size_t errlen)
{
	const cJSON *ok = cJSON_GetObjectItemCaseSensitive(o, "success");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(o, "exit_code");

	if (code && (!cJSON_IsNumber(code) || code->valuedouble != (double)code->valueint)) {
		snprintf(err, errlen, "not a result file: field 'exit_code' must be an integer");
		return -1;
	}
	if (ok && !cJSON_IsBool(ok)) {
		snprintf(err, errlen, "not a result file: field 'success' must be a boolean");
		return -1;
	}
	e->exit_code = code ? code->valueint : 0;
	e->success = ok ? cJSON_IsTrue(ok) : e->exit_code == 0;
	return opt_string(o, "error_message", -1, &e->error, err, errlen);
}

/* Fills e from the parsed object o. 0, or -1 with err filled; e is then
 * partly filled and the caller releases it. */
static int fill_entry(const cJSON *o, struct entry *e, char *err, size_t errlen)
{
	const cJSON *step = cJSON_GetObjectItemCaseSensitive(o, "step");
	const cJSON *exh = cJSON_GetObjectItemCaseSensitive(o, "review_exhausted");

	if (!cJSON_IsObject(o)) {
		snprintf(err, errlen, "not a result file: not a JSON object");
		return -1;
	}
	if (!cJSON_IsString(step)) {
		snprintf(err, errlen, "not a result file: %s",
			 step ? "field 'step' must be a string" : "missing field 'step'");
		return -1;
	}
	if (opt_string(o, "step", FG_NAME_STEP, &e->step, err, errlen) ||
	    opt_string(o, "task_key", FG_NAME_TASK_KEY, &e->task_key, err, errlen) ||
	    opt_string(o, "skill", FG_NAME_SKILL, &e->skill, err, errlen) ||
	    opt_string(o, "run_id", -1, &e->run_id, err, errlen))
		return -1;
	if (!e->step) {
		snprintf(err, errlen, "not a result file: field 'step' is empty");
		return -1;
	}
	if (parse_state(o, e, err, errlen) || parse_cycles(o, e, err, errlen) ||
	    parse_outcome(o, e, err, errlen))
		return -1;
	/* review_exhausted is the runner's word; recomputed only when absent. */
	e->exhausted = cJSON_IsBool(exh) ? cJSON_IsTrue(exh) : fg_cycles_exhausted(e->cycles, e->ncycles);
	fg_usage_pair_from(&e->usage, o);
	e->key = fg_xasprintf("%s__%s", e->task_key ? e->task_key : "", e->step);
	return 0;
}

/* Loads one result file into e (initialised to zero). 0 or -1 with err. */
static int load_entry(const char *path, struct entry *e, char *err, size_t errlen)
{
	struct fg_buf b;
	cJSON *o;
	int r = -1;

	fg_buf_init(&b, RN_REPORT_MAX_INPUT);
	if (read_input(path, &b, err, errlen))
		goto out;
	/* The bounds say which one was hit ("more than N JSON tokens"), so a
	 * bound is never reported as broken JSON. */
	o = fg_json_parse_bounded(b.data, b.len, RN_RESULT_MAX_TOKENS, err, errlen);
	if (!o)
		goto out;
	r = fill_entry(o, e, err, errlen);
	cJSON_Delete(o);
	if (!r)
		e->source = fg_xstrdup(path);
out:
	fg_buf_release(&b);
	if (r)
		entry_release(e);
	return r;
}

/* ---- merging ---- */

/* The last cycle's timestamp, "" without cycles (older than any stamp;
 * the fixed-width ISO form compares correctly as a string). */
static const char *last_stamp(const struct entry *e)
{
	return e->ncycles ? e->cycles[e->ncycles - 1].timestamp : "";
}

/*
 * Adds e (taken) to the report. A key seen before keeps the newer of the
 * two (report.h), and the replacement is reported; entries of other keys
 * are never touched.
 */
static void report_put(struct report *rp, struct entry *e)
{
	struct entry *old = NULL;
	const char *to, *tn;
	int cmp;

	for (size_t i = 0; i < rp->n && !old; i++)
		if (!strcmp(rp->v[i].key, e->key))
			old = &rp->v[i];
	if (!old) {
		FG_ALLOC_GROW(rp->v, rp->n + 1, rp->cap);
		rp->v[rp->n++] = *e;
		memset(e, 0, sizeof(*e));
		return;
	}
	to = last_stamp(old);
	tn = last_stamp(e);
	cmp = strcmp(tn, to);
	if (cmp < 0) {
		report_warn(rp, fg_xasprintf("duplicate key '%s': kept '%s' (its last cycle is newer: %s "
					     "after %s), dropped '%s'", e->key, old->source, to,
					     tn[0] ? tn : "no cycles", e->source));
		entry_release(e);
		return;
	}
	if (cmp > 0)
		report_warn(rp, fg_xasprintf("duplicate key '%s': kept '%s' (its last cycle is newer: %s "
					     "after %s), dropped '%s'", e->key, e->source, tn,
					     to[0] ? to : "no cycles", old->source));
	else
		report_warn(rp, fg_xasprintf("duplicate key '%s': kept '%s' (last cycles equally recent, "
					     "named later), dropped '%s'", e->key, e->source,
					     old->source));
	entry_release(old);
	*old = *e;
	memset(e, 0, sizeof(*e));
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return strcmp(x->key, y->key);
}

/* Open: the review left work to do, or the run failed (a run that failed
 * before any review says no_review, and must not vanish from --only-open). */
static bool entry_open(const struct entry *e)
{
	return !e->success || (e->state != FG_STATE_APPROVED && e->state != FG_STATE_NO_REVIEW &&
			       e->state != FG_STATE_DISABLED);
}

/* The last cycle's feedback when it was rejected, else NULL (borrowed). */
static const char *open_feedback(const struct entry *e)
{
	const struct fg_cycle *last = e->ncycles ? &e->cycles[e->ncycles - 1] : NULL;

	return last && last->j.verdict == FG_VERDICT_REJECTED ? last->j.feedback : NULL;
}

/* The last cycle's findings: with advice false those still open (all of
 * them when that cycle was rejected, none when it was approved); with
 * advice true those of an approval, which are advice and were not looped
 * on. Borrowed; *n set. */
static const struct fg_finding *last_findings(const struct entry *e, bool advice, size_t *n)
{
	const struct fg_cycle *last = e->ncycles ? &e->cycles[e->ncycles - 1] : NULL;
	enum fg_verdict_kind want = advice ? FG_VERDICT_APPROVED : FG_VERDICT_REJECTED;

	*n = 0;
	if (!last || last->j.verdict != want || !last->j.has_findings)
		return NULL;
	*n = last->j.nfindings;
	return last->j.findings;
}

static const struct fg_finding *open_findings(const struct entry *e, size_t *n)
{
	return last_findings(e, false, n);
}

/* "path:line", "path" or NULL (no location). Owned. */
static char *finding_location(const struct fg_finding *f)
{
	if (!f->file_path || !*f->file_path)
		return NULL;
	return f->line > 0 ? fg_xasprintf("%s:%d", f->file_path, f->line) : fg_xstrdup(f->file_path);
}

/* ---- JSON ---- */

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

static void add_findings_json(cJSON *o, const char *key, const struct fg_finding *f, size_t n);

/* A panel's roles as of the last cycle ("reviews", only for a panel), the
 * open findings ("open_findings", always: [] when none), an approval's
 * advice ("advice_findings", when any) and its "verified" lines. */
static void add_panel_json(cJSON *o, const struct entry *e)
{
	const struct fg_cycle *last = e->ncycles ? &e->cycles[e->ncycles - 1] : NULL;
	const struct fg_finding *f;
	cJSON *arr;
	size_t n;

	if (last && last->has_reviews) {
		arr = cJSON_AddArrayToObject(o, "reviews");
		for (size_t i = 0; i < last->nreviews; i++) {
			const struct fg_review *r = &last->reviews[i];
			cJSON *ro = cJSON_CreateObject();

			cJSON_AddStringToObject(ro, "role", r->role);
			cJSON_AddStringToObject(ro, "verdict", fg_role_verdict_name(fg_review_verdict(r)));
			cJSON_AddBoolToObject(ro, "failed", r->failed);
			cJSON_AddNumberToObject(ro, "cycle", r->from_cycle ? r->from_cycle : last->cycle);
			cJSON_AddItemToArray(arr, ro);
		}
	}
	f = open_findings(e, &n);
	add_findings_json(o, "open_findings", f, n);
	f = last_findings(e, true, &n);
	if (n)
		add_findings_json(o, "advice_findings", f, n);
	if (last)
		fg_evidence_add_verified(o, &last->ev.verified);
}

/* key: [{role, severity, location, title}] of f[0..n). */
static void add_findings_json(cJSON *o, const char *key, const struct fg_finding *f, size_t n)
{
	cJSON *arr = cJSON_AddArrayToObject(o, key);

	for (size_t i = 0; i < n; i++) {
		cJSON *fo = cJSON_CreateObject();
		char *loc = finding_location(&f[i]);

		cJSON_AddStringToObject(fo, "role", f[i].role ? f[i].role : "default");
		cJSON_AddStringToObject(fo, "severity", f[i].severity ? f[i].severity : "");
		add_str_or_null(fo, "location", loc);
		cJSON_AddStringToObject(fo, "title", f[i].title ? f[i].title : "");
		cJSON_AddItemToArray(arr, fo);
		free(loc);
	}
}

static cJSON *entry_json(const struct entry *e)
{
	cJSON *o = cJSON_CreateObject(), *cycles = cJSON_CreateArray();

	add_str_or_null(o, "task_key", e->task_key);
	cJSON_AddStringToObject(o, "step", e->step);
	add_str_or_null(o, "skill", e->skill);
	add_str_or_null(o, "run_id", e->run_id);
	cJSON_AddStringToObject(o, "state", fg_review_state_name(e->state));
	cJSON_AddBoolToObject(o, "exhausted", e->exhausted);
	cJSON_AddBoolToObject(o, "success", e->success);
	cJSON_AddNumberToObject(o, "exit_code", e->exit_code);
	add_str_or_null(o, "error", e->error);
	for (size_t i = 0; i < e->ncycles; i++) {
		const struct fg_cycle *c = &e->cycles[i];
		cJSON *co = cJSON_CreateObject();

		cJSON_AddNumberToObject(co, "cycle", c->cycle);
		cJSON_AddNumberToObject(co, "max_cycles", c->max_cycles);
		cJSON_AddStringToObject(co, "verdict", fg_verdict_kind_name(c->j.verdict));
		cJSON_AddStringToObject(co, "feedback", c->j.feedback);
		cJSON_AddStringToObject(co, "timestamp", c->timestamp);
		cJSON_AddItemToArray(cycles, co);
	}
	cJSON_AddItemToObject(o, "cycles", cycles);
	add_str_or_null(o, "open_feedback", open_feedback(e));
	add_panel_json(o, e);
	fg_usage_pair_add_to(o, &e->usage);
	cJSON_AddStringToObject(o, "source", e->source);
	return o;
}

/* The report as pretty JSON with a trailing newline, or -E2BIG. */
static int render_json(const struct report *rp, bool only_open, struct fg_buf *out)
{
	cJSON *root = cJSON_CreateObject(), *entries = cJSON_CreateObject(), *warn;
	char *text;
	int r;

	for (size_t i = 0; i < rp->n; i++)
		if (!only_open || entry_open(&rp->v[i]))
			cJSON_AddItemToObject(entries, rp->v[i].key, entry_json(&rp->v[i]));
	cJSON_AddItemToObject(root, "entries", entries);
	warn = cJSON_AddArrayToObject(root, "warnings");
	for (size_t i = 0; i < rp->warnings.n; i++)
		cJSON_AddItemToArray(warn, cJSON_CreateString(rp->warnings.v[i]));
	text = fg_json_print(root);
	cJSON_Delete(root);
	r = fg_buf_adds(out, text);
	free(text);
	return r;
}

/* ---- Markdown ---- */

/* A Markdown writer with a sticky error: once an append fails (the report
 * reached RN_REPORT_MAX_OUTPUT), later smaller appends must not hide it. */
struct md {
	struct fg_buf *b;
	int err;
};

static void md_add(struct md *m, const char *p, size_t n)
{
	if (!m->err)
		m->err = fg_buf_add(m->b, p, n);
}

static void md_adds(struct md *m, const char *s)
{
	md_add(m, s, strlen(s));
}

static void md_addc(struct md *m, char c)
{
	md_add(m, &c, 1);
}

static void md_addf(struct md *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void md_addf(struct md *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (!m->err)
		m->err = fg_buf_vaddf(m->b, fmt, ap);
	va_end(ap);
}

/* Names are validated (no whitespace or control bytes), but may still hold
 * characters that Markdown would read as markup; those are escaped. '_'
 * is left alone: GitHub never emphasises inside a word, and step names
 * are full of it. */
static void md_name(struct md *m, const char *s)
{
	for (; *s; s++) {
		if (strchr("\\`*[]<>|~#", *s))
			md_addc(m, '\\');
		md_addc(m, *s);
	}
}

/* Length of the prefix of s (n bytes) at most max bytes long that does not
 * split a UTF-8 sequence. */
static size_t utf8_cut(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	return max;
}

/* The first non-blank line of feedback, trimmed, cut to RN_REPORT_CELL_MAX
 * bytes, with '|' escaped for the table; " …" marks a cut or more lines. */
static void md_cell(struct md *m, const char *fb)
{
	const char *s = fb + strspn(fb, " \t\r\n");
	size_t n = strcspn(s, "\r\n"), cut;
	bool more;

	more = s[n + strspn(s + n, " \t\r\n")] != '\0';
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (!n) {
		md_adds(m, "—");
		return;
	}
	cut = utf8_cut(s, n, RN_REPORT_CELL_MAX);
	for (size_t i = 0; i < cut; i++) {
		if (s[i] == '|')
			md_addc(m, '\\');
		md_addc(m, s[i] == '\t' ? ' ' : s[i]);
	}
	if (more || cut < n)
		md_adds(m, " …");
}

/* Feedback as a blockquote: every line prefixed, CRLF folded, trailing
 * blank lines dropped, so nothing in it can end the quote early. */
static void md_quote(struct md *m, const char *fb)
{
	size_t len = strlen(fb);

	while (len > 0 && strchr(" \t\r\n", fb[len - 1]))
		len--;
	for (size_t i = 0; i < len;) {
		size_t n = strcspn(fb + i, "\r\n");

		if (n > len - i)
			n = len - i;
		md_adds(m, n ? "> " : ">");
		md_add(m, fb + i, n);
		md_addc(m, '\n');
		/* One terminator: "\r\n", "\n" or a lone "\r". */
		i += n;
		if (i < len && fb[i] == '\r')
			i++;
		else if (i < len && fb[i] == '\n')
			i++;
		if (i < len && i > 0 && fb[i - 1] == '\r' && fb[i] == '\n')
			i++;
	}
}

static void md_cycles(struct md *m, const struct entry *e)
{
	const struct fg_cycle *last = &e->cycles[e->ncycles - 1];

	md_addf(m, " · **Cycles:** %d/%d\n\n| Cycle | Verdict | Feedback |\n|---|---|---|\n",
		last->cycle, last->max_cycles);
	for (size_t i = 0; i < e->ncycles; i++) {
		md_addf(m, "| %d | %s | ", e->cycles[i].cycle, fg_verdict_kind_name(e->cycles[i].j.verdict));
		md_cell(m, e->cycles[i].j.feedback);
		md_adds(m, " |\n");
	}
	md_addc(m, '\n');
}

/* The panel's verdicts as of the last cycle, on one line. */
static void md_roles(struct md *m, const struct entry *e)
{
	const struct fg_cycle *last = &e->cycles[e->ncycles - 1];

	if (!last->has_reviews || !last->nreviews)
		return;
	md_adds(m, "**Reviewers:** ");
	for (size_t i = 0; i < last->nreviews; i++) {
		const struct fg_review *r = &last->reviews[i];

		md_adds(m, i ? " · " : "");
		md_name(m, r->role);
		md_addf(m, " %s", r->failed ? "failed" : fg_role_verdict_name(fg_review_verdict(r)));
		if (r->from_cycle)
			md_addf(m, " (cycle %d)", r->from_cycle);
	}
	md_adds(m, "\n\n");
}

/* A table cell from a short text: one line, '|' escaped, cut. */
static void md_short(struct md *m, const char *s)
{
	md_cell(m, s && *s ? s : "");
}

/* The open findings (advice: an approval's advice findings, "not looped
 * on"): | role | severity | location | finding |. */
static void md_findings(struct md *m, const struct entry *e, bool advice)
{
	size_t n;
	const struct fg_finding *f = last_findings(e, advice, &n);

	if (!n)
		return;
	md_adds(m, advice ? "**Advice (listed, not looped on):**\n\n" : "**Open findings:**\n\n");
	md_adds(m, "| role | severity | location | finding |\n|---|---|---|---|\n");
	for (size_t i = 0; i < n; i++) {
		char *loc = finding_location(&f[i]);

		md_adds(m, "| ");
		md_name(m, f[i].role ? f[i].role : "default");
		md_adds(m, " | ");
		md_short(m, f[i].severity);
		md_adds(m, " | ");
		md_short(m, loc);
		md_adds(m, " | ");
		md_short(m, f[i].title);
		md_adds(m, " |\n");
		free(loc);
	}
	md_addc(m, '\n');
}

/* "**Verified:**" and the last cycle's executed evidence, one item each. */
static void md_verified(struct md *m, const struct entry *e)
{
	const struct fg_cycle *last = &e->cycles[e->ncycles - 1];

	if (!last->ev.verified.n)
		return;
	md_adds(m, "**Verified:**\n\n");
	for (size_t i = 0; i < last->ev.verified.n; i++) {
		md_adds(m, "- ");
		md_cell(m, last->ev.verified.v[i]);
		md_addc(m, '\n');
	}
	md_addc(m, '\n');
}

/* "**Run failed** (exit code N): first line of the error", for a failed run. */
static void md_failure(struct md *m, const struct entry *e)
{
	if (e->success)
		return;
	md_addf(m, "**Run failed** (exit code %d): ", e->exit_code);
	md_cell(m, e->error ? e->error : "");
	md_adds(m, "\n\n");
}

/* " · **Cost:** $X (worker $W, reviewer $R) · **Tokens:** I in (C cached),
 * O out": only the figures the agents reported. */
static void md_usage(struct md *m, const struct entry *e)
{
	const struct fg_usage *w = &e->usage.worker, *r = &e->usage.reviewer;
	struct fg_usage both = *w;
	double usd;

	fg_usage_add(&both, r);
	if (fg_usage_pair_cost(&e->usage, &usd)) {
		md_addf(m, " · **Cost:** $%.4f", usd);
		if ((w->have & FG_USAGE_COST) && (r->have & FG_USAGE_COST))
			md_addf(m, " (worker $%.4f, reviewer $%.4f)", w->cost_usd, r->cost_usd);
	}
	if (both.have & (FG_USAGE_INPUT | FG_USAGE_OUTPUT)) {
		md_adds(m, " · **Tokens:**");
		if (both.have & FG_USAGE_INPUT)
			md_addf(m, " %lld in", (long long)both.input_tokens);
		if (both.have & FG_USAGE_CACHED)
			md_addf(m, " (%lld cached)", (long long)both.cached_input_tokens);
		if (both.have & FG_USAGE_OUTPUT)
			md_addf(m, "%s %lld out", both.have & FG_USAGE_INPUT ? "," : "",
				(long long)both.output_tokens);
	}
}

static void md_entry(struct md *m, const struct entry *e)
{
	const char *open = open_feedback(e);

	md_adds(m, "### ");
	if (e->task_key) {
		md_name(m, e->task_key);
		md_adds(m, " — ");
	}
	md_name(m, e->step);
	md_addf(m, "\n\n**State:** %s", fg_review_state_name(e->state));
	if (e->skill) {
		md_adds(m, " · **Skill:** ");
		md_name(m, e->skill);
	}
	md_usage(m, e);
	if (!e->ncycles) {
		md_adds(m, " · **Cycles:** 0\n\n");
		md_failure(m, e);
		md_adds(m, "No review cycles.\n\n");
		return;
	}
	md_cycles(m, e);
	md_roles(m, e);
	md_findings(m, e, false);
	md_findings(m, e, true);
	md_verified(m, e);
	md_failure(m, e);
	if (e->state != FG_STATE_APPROVED && open && *open) {
		md_addf(m, "**Open feedback** (cycle %d):\n\n", e->cycles[e->ncycles - 1].cycle);
		md_quote(m, open);
		md_addc(m, '\n');
	}
}

/* The Markdown section, blocks separated by one blank line, ending with one
 * newline. 0 or -E2BIG. */
static int render_markdown(const struct report *rp, bool only_open, struct fg_buf *out)
{
	struct md m = { out, 0 };
	size_t shown = 0;

	md_adds(&m, "## Auto-Review Notes\n\n");
	for (size_t i = 0; i < rp->n; i++) {
		if (only_open && !entry_open(&rp->v[i]))
			continue;
		md_entry(&m, &rp->v[i]);
		shown++;
	}
	if (!shown)
		md_adds(&m, only_open ? "No open auto-review feedback.\n\n" : "No auto-review results.\n\n");
	/* Every block ends with a blank line; the section ends with just one '\n'. */
	if (!m.err && out->len >= 2 && out->data[out->len - 2] == '\n')
		out->data[--out->len] = '\0';
	return m.err;
}

/* ---- command ---- */

struct report_opts {
	bool markdown;
	bool only_open;
	const char *output;
	struct fg_strvec inputs;
};

static const char REPORT_USAGE[] =
	"forge-runner report RESULT.json... [--format json|markdown] [--only-open] [--output FILE]";

/* 0 to go on, 1 after --help (exit 0), or the usage exit code. */
static int parse_opts(int argc, char **argv, struct report_opts *o, int *code)
{
	struct fg_opts_iter it;
	const char *v;
	char err[256];
	int id;

	fg_opts_init(&it, rn_report_options, argc, argv, 1);
	while (fg_opts_each(&it, &id, &v, err, sizeof(err))) {
		if (id == R_HELP) {
			*code = rn_cmd_help(REPORT_USAGE, rn_report_options);
			return 1;
		}
		if (id == R_FORMAT && strcmp(v, "json") && strcmp(v, "markdown")) {
			*code = rn_cmd_usage("report", "invalid format '%s' (json or markdown)", v);
			return 1;
		}
		if (id == R_FORMAT)
			o->markdown = !strcmp(v, "markdown");
		else if (id == R_OUTPUT)
			o->output = v;
		else if (id == R_ONLY_OPEN)
			o->only_open = true;
		else
			fg_strvec_push(&o->inputs, v);
	}
	if (fg_opts_failed(&it)) {
		*code = rn_cmd_usage("report", "%s", err);
		return 1;
	}
	if (!o->inputs.n) {
		*code = rn_cmd_usage("report", "%s", "report needs at least one result file");
		return 1;
	}
	return 0;
}

/* Writes text to --output atomically, or to stdout. 0 or the failure code. */
static int emit(const char *output, const struct fg_buf *text)
{
	int r;

	if (!output || !strcmp(output, "-")) {
		fwrite(text->data, 1, text->len, stdout);
		if (fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, PREFIX "cannot write the report to standard output\n");
			return FG_EXIT_RUNTIME;
		}
		return 0;
	}
	r = fg_write_atomic_path(output, text->data, text->len);
	if (r) {
		fprintf(stderr, PREFIX "cannot write '%s': %s\n", output, strerror(-r));
		return FG_EXIT_RUNTIME;
	}
	return 0;
}

/* Loads every input into rp; returns how many could not be used. */
static size_t load_all(const struct fg_strvec *inputs, struct report *rp)
{
	size_t bad = 0;

	for (size_t i = 0; i < inputs->n; i++) {
		struct entry e;
		char err[512];

		memset(&e, 0, sizeof(e));
		if (load_entry(inputs->v[i], &e, err, sizeof(err))) {
			report_warn(rp, fg_xasprintf("cannot read '%s': %s", inputs->v[i], err));
			bad++;
			continue;
		}
		report_put(rp, &e);
	}
	return bad;
}

int rn_cmd_report(int argc, char **argv)
{
	struct report_opts o = { 0 };
	struct report rp = { 0 };
	struct fg_buf out;
	size_t bad;
	int code = 0, r;

	fg_strvec_init(&o.inputs);
	fg_strvec_init(&rp.warnings);
	if (parse_opts(argc, argv, &o, &code)) {
		fg_strvec_release(&o.inputs);
		return code;
	}
	bad = load_all(&o.inputs, &rp);
	if (rp.n > 1)
		qsort(rp.v, rp.n, sizeof(*rp.v), cmp_entry);
	fg_buf_init(&out, RN_REPORT_MAX_OUTPUT);
	r = o.markdown ? render_markdown(&rp, o.only_open, &out)
		       : render_json(&rp, o.only_open, &out);
	if (r) {
		fprintf(stderr, PREFIX "cannot build the report: %s\n",
			r == -E2BIG ? "larger than 256 MiB" : strerror(-r));
		code = FG_EXIT_RUNTIME;
	} else {
		code = emit(o.output, &out);
	}
	if (!code && bad)
		code = FG_EXIT_FAILED;
	fg_buf_release(&out);
	report_release(&rp);
	fg_strvec_release(&o.inputs);
	return code;
}
