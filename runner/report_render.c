/*
 * report_render.c - `forge-runner report`'s output: the merged report as
 * JSON or as a Markdown "Auto-Review Notes" section (report_internal.h;
 * the formats are in docs/reference/report.md).
 */
#include "report_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/json.h"
#include "forge/text.h"
#include "forge/alloc.h"
#include "forge/quote.h"
#include "forge/buf.h"
#include "forge/cycle.h"
#include "forge/exit.h"
#include "forge/fsutil.h"
#include "forge/names.h"
#include "forge/summary.h"
#include "report.h"
#include "result.h"

/* Open: the review left work to do, or the run failed (a run that failed
 * before any review says no_review, and must not vanish from --only-open). */
bool rn__entry_open(const struct entry *e)
{
	return !e->success || (e->state != FG_STATE_APPROVED && e->state != FG_STATE_NO_REVIEW &&
			       e->state != FG_STATE_DISABLED);
}

/* The last cycle's feedback when it was rejected, else NULL (borrowed). */
const char *rn__open_feedback(const struct entry *e)
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

/* line into v, unless it is there already or v is full. */
static void add_verified(struct fg_strvec *v, const char *line)
{
	if (v->n < FG_VERIFIED_MAX && !fg_strvec_has(v, line))
		fg_strvec_push(v, line);
}

/* A panel cycle's lines, each named by the role that ran it ("security:
 * sh audit.sh -> clean"), from the reviews that ran in that cycle: a role
 * whose approval stands from an earlier cycle keeps the lines of the cycle
 * it ran in. The number of lines the reviews held. */
static size_t panel_verified(const struct fg_cycle *c, struct fg_strvec *v)
{
	size_t found = 0;

	for (size_t r = 0; r < c->nreviews; r++) {
		const struct fg_review *rv = &c->reviews[r];
		size_t len = strlen(rv->role);

		for (size_t i = 0; !rv->from_cycle && i < rv->j.verified.n; i++) {
			const char *line = rv->j.verified.v[i];
			bool named = !strncmp(line, rv->role, len) && line[len] == ':';
			char *text = named ? fg_xstrdup(line) : fg_xasprintf("%s: %s", rv->role, line);

			add_verified(v, text);
			free(text);
			found++;
		}
	}
	return found;
}

/* The Verified lines of every cycle, in order, each once, at most
 * FG_VERIFIED_MAX (copies, owned by v); a panel's by role (a cycle file
 * whose reviews hold none: the cycle's own list). */
static void all_verified(const struct entry *e, struct fg_strvec *v)
{
	for (size_t c = 0; c < e->ncycles; c++) {
		const struct fg_cycle *cy = &e->cycles[c];

		if (cy->has_reviews && panel_verified(cy, v))
			continue;
		for (size_t i = 0; i < cy->ev.verified.n; i++)
			add_verified(v, cy->ev.verified.v[i]);
	}
}

const struct fg_finding *rn__open_findings(const struct entry *e, size_t *n)
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
			cJSON *ro = fg_json_push_object(arr);

			cJSON_AddStringToObject(ro, "role", r->role);
			cJSON_AddStringToObject(ro, "verdict", fg_role_verdict_name(fg_review_verdict(r)));
			cJSON_AddBoolToObject(ro, "failed", r->failed);
			cJSON_AddNumberToObject(ro, "cycle", r->from_cycle ? r->from_cycle : last->cycle);
		}
	}
	f = rn__open_findings(e, &n);
	add_findings_json(o, "open_findings", f, n);
	f = last_findings(e, true, &n);
	if (n)
		add_findings_json(o, "advice_findings", f, n);
	if (last) {
		struct fg_strvec v;

		fg_strvec_init(&v);
		all_verified(e, &v);
		fg_evidence_add_verified(o, &v);
		fg_strvec_release(&v);
	}
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
		fg_json_add_str_or_null(fo, "location", loc);
		cJSON_AddStringToObject(fo, "title", f[i].title ? f[i].title : "");
		cJSON_AddItemToArray(arr, fo);
		free(loc);
	}
}

static cJSON *entry_json(const struct entry *e)
{
	cJSON *o = cJSON_CreateObject(), *cycles = cJSON_CreateArray();

	fg_json_add_str_or_null(o, "task_key", e->task_key);
	cJSON_AddStringToObject(o, "step", e->step);
	fg_json_add_str_or_null(o, "skill", e->skill);
	fg_json_add_str_or_null(o, "run_id", e->run_id);
	cJSON_AddStringToObject(o, "state", fg_review_state_name(e->state));
	if (e->audit)
		cJSON_AddItemToObject(o, "audit", fg_audit_to_cjson(e->audit));
	cJSON_AddBoolToObject(o, "exhausted", e->exhausted);
	cJSON_AddBoolToObject(o, "success", e->success);
	cJSON_AddNumberToObject(o, "exit_code", e->exit_code);
	fg_json_add_str_or_null(o, "error", e->error);
	if (e->cause != FG_CAUSE_NONE)
		cJSON_AddItemToObject(o, "failure", fg_failure_to_cjson(e->cause, e->reason));
	for (size_t i = 0; i < e->ncycles; i++) {
		const struct fg_cycle *c = &e->cycles[i];
		cJSON *co = fg_json_push_object(cycles);

		cJSON_AddNumberToObject(co, "cycle", c->cycle);
		cJSON_AddNumberToObject(co, "max_cycles", c->max_cycles);
		cJSON_AddStringToObject(co, "verdict", fg_verdict_kind_name(c->j.verdict));
		cJSON_AddStringToObject(co, "feedback", c->j.feedback);
		cJSON_AddStringToObject(co, "timestamp", c->timestamp);
		/* checks, changes, diff, no_change, advice_only, verified,
		 * reviewer_changed: as the cycle file spells them. */
		fg_evidence_add_to(co, &c->ev);
	}
	cJSON_AddItemToObject(o, "cycles", cycles);
	fg_json_add_str_or_null(o, "open_feedback", rn__open_feedback(e));
	add_panel_json(o, e);
	fg_usage_pair_add_to(o, &e->usage);
	cJSON_AddStringToObject(o, "source", e->source);
	return o;
}

/* The report as pretty JSON with a trailing newline, or -E2BIG. */
int rn__report_json(const struct report *rp, bool only_open, struct fg_buf *out)
{
	cJSON *root = cJSON_CreateObject(), *entries = cJSON_CreateObject(), *warn;
	char *text;
	int r;

	for (size_t i = 0; i < rp->n; i++)
		if (!only_open || rn__entry_open(&rp->v[i]))
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

/* Names are validated (no whitespace or control bytes); forge/quote.h
 * escapes what Markdown would read as markup. */
static void md_name(struct fg_buf *m, const char *s)
{
	fg_quote_md_name(m, s);
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
static void md_cell(struct fg_buf *m, const char *fb)
{
	const char *s = fb + strspn(fb, " \t\r\n");
	size_t n = strcspn(s, "\r\n"), cut;
	bool more;

	more = s[n + strspn(s + n, " \t\r\n")] != '\0';
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (!n) {
		fg_buf_adds(m, "—");
		return;
	}
	cut = utf8_cut(s, n, RN_REPORT_CELL_MAX);
	/* Agent text: inert (no link, image, HTML or heading; '|' escaped). */
	fg_quote_md_text(m, s, cut);
	if (more || cut < n)
		fg_buf_adds(m, " …");
}

/* Feedback as a blockquote (forge/quote.h): nothing in it can end the
 * quote or render as markup. */
static void md_quote(struct fg_buf *m, const char *fb)
{
	fg_quote_md_block(m, fb, strlen(fb));
}

/* A message or a program's output as a blockquote, inert as md_quote()
 * writes it, at most FG_FAILURE_REASON_MAX bytes of it. */
static void md_quote_escaped(struct fg_buf *m, const char *text)
{
	size_t len = strlen(text);

	fg_quote_md_block(m, text, len > FG_FAILURE_REASON_MAX ? FG_FAILURE_REASON_MAX : len);
}

/* What the evidence says of a cycle's verdict, after it in the table:
 * no reviewer ran (no change, a failed check), the reviewer's edits, or
 * an approval whose findings were all advice. */
static const char *verdict_note(const struct fg_cycle *c)
{
	if (c->ev.no_change)
		return " (no change)";
	if (fg_evidence_failed_check(&c->ev))
		return " (check failed)";
	if (c->ev.reviewer_changed.n)
		return " (reviewer changed files)";
	return c->ev.advice_only ? " (advice only)" : "";
}

static void md_cycles(struct fg_buf *m, const struct entry *e)
{
	const struct fg_cycle *last = &e->cycles[e->ncycles - 1];

	fg_buf_addf(m, " · **Cycles:** %d/%d\n\n| Cycle | Verdict | Feedback |\n|---|---|---|\n",
		last->cycle, last->max_cycles);
	for (size_t i = 0; i < e->ncycles; i++) {
		fg_buf_addf(m, "| %d | %s%s | ", e->cycles[i].cycle, fg_verdict_kind_name(e->cycles[i].j.verdict),
			    verdict_note(&e->cycles[i]));
		md_cell(m, e->cycles[i].j.feedback);
		fg_buf_adds(m, " |\n");
	}
	fg_buf_addc(m, '\n');
}

/* The panel's verdicts as of the last cycle, on one line. */
static void md_roles(struct fg_buf *m, const struct entry *e)
{
	const struct fg_cycle *last = &e->cycles[e->ncycles - 1];

	if (!last->has_reviews || !last->nreviews)
		return;
	fg_buf_adds(m, "**Reviewers:** ");
	for (size_t i = 0; i < last->nreviews; i++) {
		const struct fg_review *r = &last->reviews[i];

		fg_buf_adds(m, i ? " · " : "");
		md_name(m, r->role);
		fg_buf_addf(m, " %s", r->failed ? "failed" : fg_role_verdict_name(fg_review_verdict(r)));
		if (r->from_cycle)
			fg_buf_addf(m, " (cycle %d)", r->from_cycle);
	}
	fg_buf_adds(m, "\n\n");
}

/* A table cell from a short text: one line, '|' escaped, cut. */
static void md_short(struct fg_buf *m, const char *s)
{
	md_cell(m, s && *s ? s : "");
}

/* The open findings (advice: an approval's advice findings, "not looped
 * on"): | role | severity | location | finding |. */
static void md_findings(struct fg_buf *m, const struct entry *e, bool advice)
{
	size_t n;
	const struct fg_finding *f = last_findings(e, advice, &n);

	if (!n)
		return;
	fg_buf_adds(m, advice ? "**Advice (listed, not looped on):**\n\n" : "**Open findings:**\n\n");
	fg_buf_adds(m, "| role | severity | location | finding |\n|---|---|---|---|\n");
	for (size_t i = 0; i < n; i++) {
		char *loc = finding_location(&f[i]);

		fg_buf_adds(m, "| ");
		md_name(m, f[i].role ? f[i].role : "default");
		fg_buf_adds(m, " | ");
		md_short(m, f[i].severity);
		fg_buf_adds(m, " | ");
		md_short(m, loc);
		fg_buf_adds(m, " | ");
		md_short(m, f[i].title);
		fg_buf_adds(m, " |\n");
		free(loc);
	}
	fg_buf_addc(m, '\n');
}

/* "**Verified:**" and every line of executed evidence of every cycle, each
 * once (a panel's by role): a role whose approval stands from an earlier
 * cycle ran no review in the last one, and its lines stay what it
 * verified. */
static void md_verified(struct fg_buf *m, const struct entry *e)
{
	struct fg_strvec v;

	fg_strvec_init(&v);
	all_verified(e, &v);
	if (v.n)
		fg_buf_adds(m, "**Verified:**\n\n");
	for (size_t i = 0; i < v.n; i++) {
		fg_buf_adds(m, "- ");
		md_cell(m, v.v[i]);
		fg_buf_addc(m, '\n');
	}
	if (v.n)
		fg_buf_addc(m, '\n');
	fg_strvec_release(&v);
}

/* The last cycle that ran checks: each check's outcome on one line. */
static void md_checks(struct fg_buf *m, const struct entry *e)
{
	const struct fg_cycle *c = NULL;

	for (size_t i = e->ncycles; i > 0 && !c; i--)
		if (e->cycles[i - 1].ev.has_checks && e->cycles[i - 1].ev.nchecks)
			c = &e->cycles[i - 1];
	if (!c)
		return;
	fg_buf_addf(m, "**Checks** (cycle %d): ", c->cycle);
	for (size_t i = 0; i < c->ev.nchecks; i++) {
		const struct fg_check_result *r = &c->ev.checks[i];

		fg_buf_adds(m, i ? " · " : "");
		md_name(m, r->name);
		if (r->timed_out)
			fg_buf_addf(m, " timed out (%.1f s)", r->duration_seconds);
		else
			fg_buf_addf(m, " %s (exit code %d, %.1f s)", r->exit_code ? "failed" : "passed", r->exit_code,
				    r->duration_seconds);
	}
	fg_buf_adds(m, "\n\n");
	/* What a failed check said: the reason the worker was sent back. */
	for (size_t i = 0; i < c->ev.nchecks; i++) {
		const struct fg_check_result *r = &c->ev.checks[i];

		if (!r->exit_code && !r->timed_out)
			continue;
		fg_buf_adds(m, "The end of ");
		md_name(m, r->name);
		fg_buf_adds(m, "'s output:\n\n");
		md_quote_escaped(m, r->output_tail && *r->output_tail ? r->output_tail : "(no output)");
		fg_buf_addc(m, '\n');
	}
}

/* A workspace path in a table cell: quoted as git shows names, cut at
 * RN_REPORT_CELL_MAX bytes (" …"), then inert Markdown text. */
static void md_path(struct fg_buf *m, const char *path)
{
	char *q = fg_quote_name_dup(path);
	size_t n = strlen(q), cut = utf8_cut(q, n, RN_REPORT_CELL_MAX);

	fg_quote_md_text(m, q, cut);
	fg_buf_adds(m, cut < n ? " …" : "");
	free(q);
}

/* dir/name as md_path() writes a path (dir NULL: name alone). */
static void md_path_joined(struct fg_buf *m, const char *dir, const char *name)
{
	char *p = dir ? fg_path_join(dir, name) : fg_xstrdup(name);

	md_path(m, p);
	free(p);
}

/* One row of the change table: | path | status | +A −D |. */
static void md_change_row(struct fg_buf *m, const struct fg_change *ch)
{
	fg_buf_adds(m, "| ");
	md_path(m, ch->path);
	fg_buf_addf(m, " | %s", fg_change_status_name(ch->status));
	if (ch->old_path) {
		fg_buf_adds(m, " from ");
		md_path(m, ch->old_path);
	}
	if (ch->added >= 0 && ch->deleted >= 0)
		fg_buf_addf(m, " | +%ld −%ld |\n", ch->added, ch->deleted);
	else
		fg_buf_adds(m, " | — |\n");
}

/* The last cycle's change set: "none" for a turn that changed nothing,
 * else its files (at most RN_REPORT_CHANGES_SHOWN) and the diff's name. */
static void md_changes(struct fg_buf *m, const struct entry *e)
{
	const struct fg_cycle *c = &e->cycles[e->ncycles - 1];
	const struct fg_evidence *ev = &c->ev;
	size_t shown = ev->nchanges < RN_REPORT_CHANGES_SHOWN ? ev->nchanges : RN_REPORT_CHANGES_SHOWN;

	if (!ev->has_changes && !ev->no_change)
		return;
	fg_buf_addf(m, "**Changes** (cycle %d, since %s): ", c->cycle,
		    ev->since_review ? "the last review" : "the step began");
	if (ev->no_change || (!ev->nchanges && !ev->changes_truncated)) {
		fg_buf_adds(m, ev->no_change ? "none: the worker's turn changed nothing, no reviewer ran\n\n"
					     : "none\n\n");
		return;
	}
	fg_buf_addf(m, "%zu file(s)%s", ev->nchanges, ev->changes_truncated ? " (the list was cut at a bound)" : "");
	if (ev->diff) {
		/* The path, so the diff can be opened from the report. */
		fg_buf_adds(m, " · diff: ");
		md_path_joined(m, e->cycle_dir, ev->diff);
	}
	fg_buf_adds(m, ev->nchanges ? "\n\n| file | change | lines |\n|---|---|---|\n" : "\n");
	for (size_t i = 0; i < shown; i++)
		md_change_row(m, &ev->changes[i]);
	if (shown < ev->nchanges)
		fg_buf_addf(m, "\n… and %zu more file(s) in the cycle file\n", ev->nchanges - shown);
	fg_buf_addc(m, '\n');
}

/* "**Run failed** (exit code N, cause C): first line of the error", for a
 * failed run, then the whole reason when the line does not hold it all. */
static void md_failure(struct fg_buf *m, const struct entry *e)
{
	const char *why = e->reason ? e->reason : e->error ? e->error : "";
	const char *s = why + strspn(why, " \t\r\n");
	size_t first = strcspn(s, "\r\n");

	if (e->success)
		return;
	fg_buf_addf(m, "**Run failed** (exit code %d", e->exit_code);
	if (e->cause != FG_CAUSE_NONE)
		fg_buf_addf(m, ", cause %s", fg_failure_cause_name(e->cause));
	fg_buf_adds(m, "): ");
	md_cell(m, why);
	fg_buf_adds(m, "\n\n");
	if (s[first + strspn(s + first, " \t\r\n")] || first > RN_REPORT_CELL_MAX) {
		md_quote_escaped(m, s);
		fg_buf_addc(m, '\n');
	}
}

/* " · **Cost:** $X (worker $W, reviewer $R) · **Tokens:** I in (C cached),
 * O out": only the figures the agents reported. */
static void md_usage(struct fg_buf *m, const struct entry *e)
{
	const struct fg_usage *w = &e->usage.worker, *r = &e->usage.reviewer;
	struct fg_usage both = *w;
	double usd;

	fg_usage_add(&both, r);
	if (fg_usage_pair_cost(&e->usage, &usd)) {
		fg_buf_addf(m, " · **Cost:** $%.4f", usd);
		if ((w->have & FG_USAGE_COST) && (r->have & FG_USAGE_COST))
			fg_buf_addf(m, " (worker $%.4f, reviewer $%.4f)", w->cost_usd, r->cost_usd);
	}
	if (both.have & (FG_USAGE_INPUT | FG_USAGE_OUTPUT)) {
		fg_buf_adds(m, " · **Tokens:**");
		if (both.have & FG_USAGE_INPUT)
			fg_buf_addf(m, " %lld in", (long long)both.input_tokens);
		if (both.have & FG_USAGE_CACHED)
			fg_buf_addf(m, " (%lld cached)", (long long)both.cached_input_tokens);
		if (both.have & FG_USAGE_OUTPUT)
			fg_buf_addf(m, "%s %lld out", both.have & FG_USAGE_INPUT ? "," : "",
				(long long)both.output_tokens);
	}
}

/* The audit's line: "**Audit:** approved by the loop in N cycles; the
 * audit disagreed", its findings and its feedback. */
static void md_audit(struct fg_buf *m, const struct entry *e)
{
	const struct fg_audit *a = e->audit;
	const struct fg_cycle *last = &e->cycles[e->ncycles - 1];
	static const char *const said[] = { "agreed", "disagreed", "failed", "was skipped" };

	if (!a)
		return;
	fg_buf_addf(m, "**Audit:** approved by the loop in %d cycle%s; the audit %s", last->cycle,
		    last->cycle == 1 ? "" : "s", said[a->outcome < FG_AUDIT_OUTCOME_COUNT ? a->outcome : FG_AUDIT_FAILED]);
	if (a->outcome == FG_AUDIT_DISAGREED)
		fg_buf_adds(m, a->blocks ? " (blocking: audit_rejected)" : " (advisory: the approval stands)");
	if (a->reason) {
		fg_buf_adds(m, ": ");
		md_cell(m, a->reason);
	}
	fg_buf_adds(m, "\n\n");
	if (a->outcome != FG_AUDIT_DISAGREED)
		return;
	if (a->nfindings) {
		fg_buf_adds(m, "| severity | location | finding |\n|---|---|---|\n");
		for (size_t i = 0; i < a->nfindings; i++) {
			char *loc = finding_location(&a->findings[i]);

			fg_buf_adds(m, "| ");
			md_short(m, a->findings[i].severity);
			fg_buf_adds(m, " | ");
			md_short(m, loc);
			fg_buf_adds(m, " | ");
			md_short(m, a->findings[i].title);
			fg_buf_adds(m, " |\n");
			free(loc);
		}
		fg_buf_addc(m, '\n');
	}
	if (a->feedback && *a->feedback) {
		md_quote(m, a->feedback);
		fg_buf_addc(m, '\n');
	}
}

static void md_entry(struct fg_buf *m, const struct entry *e)
{
	const char *open = rn__open_feedback(e);

	fg_buf_adds(m, "### ");
	if (e->task_key) {
		md_name(m, e->task_key);
		fg_buf_adds(m, " — ");
	}
	md_name(m, e->step);
	fg_buf_addf(m, "\n\n**State:** %s", fg_review_state_name(e->state));
	if (e->skill) {
		fg_buf_adds(m, " · **Skill:** ");
		md_name(m, e->skill);
	}
	md_usage(m, e);
	if (!e->ncycles) {
		fg_buf_adds(m, " · **Cycles:** 0\n\n");
		md_failure(m, e);
		fg_buf_adds(m, "No review cycles.\n\n");
		return;
	}
	md_cycles(m, e);
	md_audit(m, e);
	md_checks(m, e);
	md_changes(m, e);
	md_roles(m, e);
	md_findings(m, e, false);
	md_findings(m, e, true);
	md_verified(m, e);
	md_failure(m, e);
	if (e->state != FG_STATE_APPROVED && open && *open) {
		fg_buf_addf(m, "**Open feedback** (cycle %d):\n\n", e->cycles[e->ncycles - 1].cycle);
		md_quote(m, open);
		fg_buf_addc(m, '\n');
	}
}

/* The Markdown section, blocks separated by one blank line, ending with one
 * newline. 0 or -E2BIG. */
int rn__report_markdown(const struct report *rp, bool only_open, struct fg_buf *out)
{
	size_t shown = 0;

	fg_buf_adds(out, "## Auto-Review Notes\n\n");
	for (size_t i = 0; i < rp->n; i++) {
		if (only_open && !rn__entry_open(&rp->v[i]))
			continue;
		md_entry(out, &rp->v[i]);
		shown++;
	}
	if (!shown)
		fg_buf_adds(out, only_open ? "No open auto-review feedback.\n\n" : "No auto-review results.\n\n");
	/* Every block ends with a blank line; the section ends with just one '\n'. */
	if (!fg_buf_error(out) && out->len >= 2 && out->data[out->len - 2] == '\n')
		out->data[--out->len] = '\0';
	return fg_buf_error(out);
}
