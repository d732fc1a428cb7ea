/*
 * report_html.c - `forge-runner report --format html`: one self-contained
 * page (report_internal.h; docs/reference/report.md#html): per entry a
 * timeline (inline SVG, a lane per role: the worker, the checks, each
 * reviewer), each cycle's verdict, tokens and cost, the open feedback, the
 * findings and the last change set.
 *
 * Every string that comes from a result (feedback, findings, paths, role
 * and check names: a sandbox wrote them) goes through html_text(), which
 * escapes the five markup characters and shows control and bidi characters
 * as visible codes, so none can make an element, an attribute or a reordered
 * line; the page has no script and its Content-Security-Policy lets nothing
 * load. (A shared escaping module for the reports is being added to common/;
 * html_text() is meant to move there.)
 */
#include "report_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/cycle.h"
#include "forge/phase.h"
#include "forge/summary.h"
#include "forge/timeutil.h"
#include "forge/verdict.h"

/* Bytes of one agent-written string shown; the rest is said, not shown. */
#define HTML_TEXT_MAX (256u * 1024)
/* The timeline's drawing width and lane height, in SVG units. */
#define TL_WIDTH 900
#define TL_LANE 22
#define TL_LABEL 170
/* Lanes of one timeline: worker, checks, up to FG_REVIEWERS_MAX reviewers. */
#define TL_LANES (2 + FG_REVIEWERS_MAX + 1)
/* Bars drawn per entry (cycles x runs: far more than a real run has). */
#define TL_PHASES_MAX 4096

/* The code point of the UTF-8 sequence at s (len bytes left; the input is
 * valid UTF-8: the cycle files are checked), *n its length. */
static uint32_t code_point(const unsigned char *s, size_t len, size_t *n)
{
	if (s[0] < 0x80 || len < 2) {
		*n = 1;
		return s[0];
	}
	if (s[0] < 0xe0) {
		*n = 2;
		return ((uint32_t)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
	}
	if (s[0] < 0xf0 || len < 4) {
		*n = len < 3 ? len : 3;
		return len < 3 ? 0xfffd : ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
	}
	*n = 4;
	return ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) | ((uint32_t)(s[2] & 0x3f) << 6) |
	       (s[3] & 0x3f);
}

/* Characters that reorder or hide text (bidi embeddings, overrides,
 * isolates, marks; zero-width ones) or are controls: shown as [U+XXXX]. */
static bool invisible(uint32_t c)
{
	return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || (c >= 0x80 && c < 0xa0) ||
	       (c >= 0x200b && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) ||
	       c == 0x061c || c == 0xfeff;
}

/* s as HTML text (element content or a quoted attribute value). */
static void html_text(struct fg_buf *b, const char *s)
{
	size_t len = s ? strlen(s) : 0, shown = len > HTML_TEXT_MAX ? HTML_TEXT_MAX : len;

	for (size_t i = 0; i < shown;) {
		size_t n;
		uint32_t c = code_point((const unsigned char *)s + i, len - i, &n);

		if (c == '<')
			fg_buf_adds(b, "&lt;");
		else if (c == '>')
			fg_buf_adds(b, "&gt;");
		else if (c == '&')
			fg_buf_adds(b, "&amp;");
		else if (c == '"')
			fg_buf_adds(b, "&quot;");
		else if (c == '\'')
			fg_buf_adds(b, "&#39;");
		else if (invisible(c))
			fg_buf_addf(b, "[U+%04X]", (unsigned)c);
		else
			fg_buf_add(b, s + i, n);
		i += n;
	}
	if (shown < len)
		fg_buf_addf(b, " … (%zu more bytes in the result file)", len - shown);
}

static const char STYLE[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1b1f24;background:#fff}"
	"h1{font-size:20px}h2{font-size:17px;margin-top:32px;border-bottom:1px solid #d0d7de}"
	"table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #d0d7de;padding:3px 8px;"
	"text-align:left;vertical-align:top}th{background:#f6f8fa}"
	"pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;padding:8px;max-height:30em;"
	"overflow:auto}.approved{color:#1a7f37}.rejected{color:#cf222e}"
	"svg{border:1px solid #d0d7de;background:#fcfcfd}.bar{stroke:#fff;stroke-width:1}"
	".worker{fill:#0969da}.check{fill:#8250df}.check.failed,.reviewer.failed{fill:#cf222e}"
	".reviewer{fill:#1a7f37}.reviewer.rejected{fill:#bf8700}.lane{font-size:12px;fill:#57606a}";

/* ---- the timeline ---- */

struct phase_ref {
	const struct fg_phase *t;
	int lane;
	const char *kind;       /* class: worker, check, reviewer */
	bool bad;               /* failed (or a rejection, for a reviewer) */
	const char *label;      /* borrowed: the check or role name, or NULL */
	int cycle;
};

struct timeline {
	struct phase_ref v[TL_PHASES_MAX];
	size_t n;
	const char *lanes[TL_LANES];
	size_t nlanes;
	int64_t t0, t1;
};

static int lane_of(struct timeline *tl, const char *name)
{
	for (size_t i = 0; i < tl->nlanes; i++)
		if (!strcmp(tl->lanes[i], name))
			return (int)i;
	if (tl->nlanes == TL_LANES)
		return (int)TL_LANES - 1;
	tl->lanes[tl->nlanes] = name;
	return (int)tl->nlanes++;
}

static void tl_add(struct timeline *tl, const struct fg_phase *t, const char *lane, const char *kind, bool bad,
		   const char *label, int cycle)
{
	if (!fg_phase_known(t) || tl->n == TL_PHASES_MAX)
		return;
	tl->v[tl->n++] = (struct phase_ref){ t, lane_of(tl, lane), kind, bad, label, cycle };
	if (!tl->t0 || t->started_ms < tl->t0)
		tl->t0 = t->started_ms;
	if (t->ended_ms > tl->t1)
		tl->t1 = t->ended_ms;
}

static void tl_cycle(struct timeline *tl, const struct fg_cycle *c)
{
	bool rejected = c->j.verdict == FG_VERDICT_REJECTED;

	tl_add(tl, &c->worker_run.t, "worker", "worker", c->worker_run.failed, NULL, c->cycle);
	for (size_t i = 0; i < c->ev.nchecks; i++)
		tl_add(tl, &c->ev.checks[i].t, "checks", "check", c->ev.checks[i].exit_code != 0,
		       c->ev.checks[i].name, c->cycle);
	for (size_t i = 0; i < c->reviewer_runs.n; i++)
		tl_add(tl, &c->reviewer_runs.v[i].t, "reviewer", "reviewer",
		       c->reviewer_runs.v[i].failed || rejected, NULL, c->cycle);
	for (size_t r = 0; r < c->nreviews; r++)
		for (size_t i = 0; i < c->reviews[r].runs.n; i++)
			tl_add(tl, &c->reviews[r].runs.v[i].t, c->reviews[r].role, "reviewer",
			       c->reviews[r].runs.v[i].failed || fg_review_verdict(&c->reviews[r]) == FG_ROLE_REJECTED,
			       c->reviews[r].role, c->cycle);
}

static void tl_bar(struct fg_buf *b, const struct timeline *tl, const struct phase_ref *p)
{
	double span = (double)(tl->t1 - tl->t0 > 0 ? tl->t1 - tl->t0 : 1);
	double x = TL_LABEL + (double)(p->t->started_ms - tl->t0) / span * (TL_WIDTH - TL_LABEL - 10);
	double w = (double)(p->t->ended_ms - p->t->started_ms) / span * (TL_WIDTH - TL_LABEL - 10);
	char from[FG_TIMESTAMP_LEN];

	fg_time_rfc3339_ms_at(from, p->t->started_ms);
	fg_buf_addf(b, "<rect class=\"bar %s%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\"><title>cycle %d: ",
		    p->kind, p->bad ? (strcmp(p->kind, "reviewer") ? " failed" : " rejected") : "", x,
		    20 + p->lane * TL_LANE + 3, w < 1 ? 1 : w, TL_LANE - 6, p->cycle);
	fg_buf_adds(b, p->kind);
	if (p->label) {
		fg_buf_addc(b, ' ');
		html_text(b, p->label);
	}
	fg_buf_addf(b, ", %.3f s from %s</title></rect>\n", (double)(p->t->ended_ms - p->t->started_ms) / 1000.0, from);
}

static void draw(struct fg_buf *b, const struct timeline *tl)
{
	int height = 30 + (int)tl->nlanes * TL_LANE;

	fg_buf_addf(b, "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		    "viewBox=\"0 0 %d %d\" role=\"img\"><title>timeline, %.1f s</title>\n", TL_WIDTH, height,
		    TL_WIDTH, height, (double)(tl->t1 - tl->t0) / 1000.0);
	for (size_t i = 0; i < tl->nlanes; i++) {
		bool plain = !strcmp(tl->lanes[i], "worker") || !strcmp(tl->lanes[i], "checks") ||
			     !strcmp(tl->lanes[i], "reviewer");

		fg_buf_addf(b, "<text class=\"lane\" x=\"4\" y=\"%d\">%s", 20 + (int)i * TL_LANE + 15,
			    plain ? "" : "reviewer ");
		html_text(b, tl->lanes[i]);
		fg_buf_adds(b, "</text>\n");
	}
	for (size_t i = 0; i < tl->n; i++)
		tl_bar(b, tl, &tl->v[i]);
	fg_buf_adds(b, "</svg>\n");
}

static void html_timeline(struct fg_buf *b, const struct entry *e)
{
	struct timeline *tl = fg_xcalloc(1, sizeof(*tl));

	lane_of(tl, "worker");
	for (size_t i = 0; i < e->ncycles; i++)
		tl_cycle(tl, &e->cycles[i]);
	if (tl->n)
		draw(b, tl);
	else
		fg_buf_adds(b, "<p>No phase times in the records.</p>\n");
	free(tl);
}

/* ---- the tables ---- */

/* Tokens (in/out) and cost of a usage, or "-" for what was not reported. */
static void usage_cells(struct fg_buf *b, const struct fg_usage *u)
{
	if (u->have & FG_USAGE_INPUT)
		fg_buf_addf(b, "<td>%lld</td>", (long long)u->input_tokens);
	else
		fg_buf_adds(b, "<td>-</td>");
	if (u->have & FG_USAGE_OUTPUT)
		fg_buf_addf(b, "<td>%lld</td>", (long long)u->output_tokens);
	else
		fg_buf_adds(b, "<td>-</td>");
	if (u->have & FG_USAGE_COST)
		fg_buf_addf(b, "<td>$%.4f</td>", u->cost_usd);
	else
		fg_buf_adds(b, "<td>-</td>");
}

static void html_cycles(struct fg_buf *b, const struct entry *e)
{
	fg_buf_adds(b, "<table class=\"cycles\"><tr><th>cycle</th><th>verdict</th><th>format</th><th>seconds</th>"
		       "<th>input tokens</th><th>output tokens</th><th>cost</th></tr>\n");
	for (size_t i = 0; i < e->ncycles; i++) {
		const struct fg_cycle *c = &e->cycles[i];
		const char *v = fg_verdict_kind_name(c->j.verdict);
		struct fg_usage u = c->usage.worker;

		fg_usage_add(&u, &c->usage.reviewer);
		fg_buf_addf(b, "<tr class=\"cycle\"><td>%d/%d</td><td class=\"%s\">%s%s</td><td>%s</td><td>%.1f</td>",
			    c->cycle, c->max_cycles, v, v, c->ev.no_change ? " (no change)" : "",
			    c->j.has_format ? fg_verdict_format_name(c->j.format) : "-", c->elapsed_seconds);
		usage_cells(b, &u);
		fg_buf_adds(b, "</tr>\n");
	}
	fg_buf_adds(b, "</table>\n");
}

static void html_findings(struct fg_buf *b, const struct entry *e)
{
	size_t n;
	const struct fg_finding *f = rn__open_findings(e, &n);

	if (!n)
		return;
	fg_buf_adds(b, "<h3>Findings</h3>\n<table class=\"findings\"><tr><th>role</th><th>severity</th>"
		       "<th>location</th><th>title</th><th>description</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		fg_buf_adds(b, "<tr class=\"finding\"><td>");
		html_text(b, f[i].role ? f[i].role : "default");
		fg_buf_adds(b, "</td><td>");
		html_text(b, f[i].severity);
		fg_buf_adds(b, "</td><td>");
		html_text(b, f[i].file_path ? f[i].file_path : "-");
		if (f[i].file_path && f[i].line > 0)
			fg_buf_addf(b, ":%d", f[i].line);
		fg_buf_adds(b, "</td><td>");
		html_text(b, f[i].title);
		fg_buf_adds(b, "</td><td>");
		html_text(b, f[i].description);
		fg_buf_adds(b, "</td></tr>\n");
	}
	fg_buf_adds(b, "</table>\n");
}

/* The last cycle that has a change set: its files. */
static void html_changes(struct fg_buf *b, const struct entry *e)
{
	const struct fg_evidence *ev = NULL;
	int cycle = 0;

	for (size_t i = e->ncycles; i-- > 0 && !ev;)
		if (e->cycles[i].ev.has_changes) {
			ev = &e->cycles[i].ev;
			cycle = e->cycles[i].cycle;
		}
	if (!ev)
		return;
	fg_buf_addf(b, "<h3>Last change set (cycle %d)</h3>\n<table class=\"changes\"><tr><th>status</th>"
		       "<th>path</th><th>+</th><th>-</th></tr>\n", cycle);
	for (size_t i = 0; i < ev->nchanges; i++) {
		const struct fg_change *ch = &ev->changes[i];

		fg_buf_addf(b, "<tr class=\"change\"><td>%s</td><td>", fg_change_status_name(ch->status));
		html_text(b, ch->path);
		fg_buf_adds(b, "</td>");
		if (ch->added >= 0)
			fg_buf_addf(b, "<td>%ld</td><td>%ld</td>", ch->added, ch->deleted);
		else
			fg_buf_adds(b, "<td>-</td><td>-</td>");
		fg_buf_adds(b, "</tr>\n");
	}
	fg_buf_adds(b, "</table>\n");
}

/* A panel's last cycle: each role's own feedback when it did not approve
 * (the merged feedback may leave out what did not fit). */
static void html_roles(struct fg_buf *b, const struct entry *e)
{
	const struct fg_cycle *last = e->ncycles ? &e->cycles[e->ncycles - 1] : NULL;

	if (!last || e->state == FG_STATE_APPROVED)
		return;
	for (size_t i = 0; i < last->nreviews; i++) {
		const struct fg_review *r = &last->reviews[i];

		if (fg_review_verdict(r) != FG_ROLE_REJECTED || !r->j.feedback || !*r->j.feedback)
			continue;
		fg_buf_adds(b, "<h3>Feedback of reviewer ");
		html_text(b, r->role);
		fg_buf_addf(b, " (cycle %d)</h3>\n<pre class=\"feedback\">", r->from_cycle ? r->from_cycle : last->cycle);
		html_text(b, r->j.feedback);
		fg_buf_adds(b, "</pre>\n");
	}
}

static void html_entry(struct fg_buf *b, const struct entry *e)
{
	const char *open = rn__open_feedback(e);
	struct fg_usage all = e->usage.worker;

	fg_usage_add(&all, &e->usage.reviewer);
	fg_buf_adds(b, "<section class=\"entry\">\n<h2>");
	if (e->task_key) {
		html_text(b, e->task_key);
		fg_buf_adds(b, " — ");
	}
	html_text(b, e->step);
	fg_buf_addf(b, "</h2>\n<p>State: <b class=\"state\">%s</b>, exit code %d, %zu cycle(s)",
		    fg_review_state_name(e->state), e->exit_code, e->ncycles);
	if (all.have & FG_USAGE_COST)
		fg_buf_addf(b, ", $%.4f", all.cost_usd);
	fg_buf_adds(b, "</p>\n");
	html_timeline(b, e);
	html_cycles(b, e);
	if (open && *open && e->state != FG_STATE_APPROVED) {
		fg_buf_adds(b, "<h3>Open feedback</h3>\n<pre class=\"feedback\">");
		html_text(b, open);
		fg_buf_adds(b, "</pre>\n");
	}
	html_roles(b, e);
	html_findings(b, e);
	html_changes(b, e);
	if (!e->success && e->error) {
		fg_buf_adds(b, "<p class=\"error\">");
		html_text(b, e->error);
		fg_buf_adds(b, "</p>\n");
	}
	fg_buf_adds(b, "</section>\n");
}

int rn__report_html(const struct report *rp, bool only_open, struct fg_buf *out)
{
	size_t shown = 0;

	fg_buf_addf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		    "style-src 'unsafe-inline'\">\n<meta name=\"referrer\" content=\"no-referrer\">\n"
		    "<title>Auto-review report</title>\n<style>%s</style></head>\n<body>\n"
		    "<h1>Auto-review report</h1>\n", STYLE);
	for (size_t i = 0; i < rp->n; i++) {
		if (only_open && !rn__entry_open(&rp->v[i]))
			continue;
		html_entry(out, &rp->v[i]);
		shown++;
	}
	if (!shown)
		fg_buf_adds(out, only_open ? "<p>No open auto-review feedback.</p>\n" : "<p>No auto-review results.</p>\n");
	for (size_t i = 0; i < rp->warnings.n; i++) {
		fg_buf_adds(out, "<p class=\"warning\">");
		html_text(out, rp->warnings.v[i]);
		fg_buf_adds(out, "</p>\n");
	}
	fg_buf_adds(out, "</body></html>\n");
	return fg_buf_error(out);
}
