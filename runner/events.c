/*
 * events.c - log events with format-specific shapes (see events.h).
 */
#include "events.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/audit.h"
#include "forge/fsutil.h"
#include "forge/text.h"
#include "forge/util.h"
#include "forge/verdict.h"

/* Byte length of the first max_chars UTF-8 characters of s. */
static size_t prefix_bytes(const char *s, size_t max_chars)
{
	size_t i = 0, chars = 0;

	while (s[i] && chars < max_chars) {
		i++;
		/* Continuation bytes belong to the character already counted. */
		while (((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		chars++;
	}
	return i;
}

char *rn_utf8_prefix(const char *s, size_t max_chars)
{
	size_t keep;

	if (!s[prefix_bytes(s, max_chars)])
		return fg_xstrdup(s);
	/* The "..." counts towards max_chars: the spec caps the logged
	 * feedback at max_chars characters, marker included. */
	keep = prefix_bytes(s, max_chars > 3 ? max_chars - 3 : 0);
	return fg_xasprintf("%.*s...", (int)keep, s);
}

/* The cycle's usage as log fields, appended to f at *n: each role's
 * reported cost (worker_cost_usd, reviewer_cost_usd) and the tokens of
 * both roles (input_tokens, output_tokens, cached_input_tokens). What no
 * agent reported is left out. */
static void usage_fields(const struct fg_usage_pair *u, struct rn_log_field *f, size_t *n)
{
	struct fg_usage both = u->worker;

	fg_usage_add(&both, &u->reviewer);
	if (u->worker.have & FG_USAGE_COST)
		f[(*n)++] = RN_LN("worker_cost_usd", u->worker.cost_usd);
	if (u->reviewer.have & FG_USAGE_COST)
		f[(*n)++] = RN_LN("reviewer_cost_usd", u->reviewer.cost_usd);
	if (both.have & FG_USAGE_INPUT)
		f[(*n)++] = RN_LI("input_tokens", both.input_tokens);
	if (both.have & FG_USAGE_OUTPUT)
		f[(*n)++] = RN_LI("output_tokens", both.output_tokens);
	if (both.have & FG_USAGE_CACHED)
		f[(*n)++] = RN_LI("cached_input_tokens", both.cached_input_tokens);
}

void rn_event_audit(struct rn_log *l, const char *step, const char *skill, int cycles,
		    const struct fg_audit *a)
{
	char *fb = rn_utf8_prefix(a->feedback ? a->feedback : "", RN_FEEDBACK_LOG_CHARS);
	bool bad = a->outcome == FG_AUDIT_DISAGREED || a->outcome == FG_AUDIT_FAILED;
	bool cost = a->usage.have & FG_USAGE_COST;

	rn_log(l, bad ? RN_LOG_WARN : RN_LOG_INFO, "audit", RN_LS("step", step), RN_LS("skill", skill),
	       RN_LS("outcome", fg_audit_outcome_name(a->outcome)),
	       RN_LS_OPT("verdict", a->has_verdict ? fg_verdict_kind_name(a->verdict) : NULL),
	       RN_LB("blocks", a->blocks), RN_LI("cycles", cycles), RN_LI("findings", (long long)a->nfindings),
	       RN_LN("elapsed_seconds", a->elapsed_seconds), RN_LN("sample", a->sample),
	       RN_LN("draw", a->draw), cost ? RN_LN("cost_usd", a->usage.cost_usd) : RN_LS_OPT("cost_usd", NULL),
	       RN_LS_OPT("reason", a->reason), RN_LS("feedback", fb));
	free(fb);
}

void rn_event_cost_invalid(struct rn_log *l, const char *step, const char *file,
			   const char *source, const struct fg_usage_pair *u)
{
	const struct fg_usage *roles[] = { &u->worker, &u->reviewer };
	static const char *const names[] = { "worker", "reviewer" };

	for (size_t i = 0; i < ARRAY_SIZE(roles); i++)
		if (roles[i]->refused & FG_USAGE_COST)
			rn_log(l, RN_LOG_WARN, "cost_invalid", RN_LS("step", step), RN_LS("file", file),
			       RN_LS("source", source), RN_LS("role", names[i]),
			       RN_LN("cost_usd", roles[i]->refused_cost_usd),
			       RN_LN("limit", FG_USAGE_COST_MAX));
}

void rn_event_reviewer_changed(struct rn_log *l, const struct rn_cycle_report *r)
{
	const struct fg_strvec *v = &r->cycle->ev.reviewer_changed;
	struct fg_buf b;
	char *files;

	if (!v->n)
		return;
	fg_buf_init(&b, 64 * 1024);
	for (size_t i = 0; i < v->n && i < RN_FINDINGS_LOG_MAX; i++)
		fg_buf_addf(&b, "%s%s", i ? " " : "", v->v[i]);
	files = rn_utf8_prefix(fg_buf_str(&b), RN_FEEDBACK_LOG_CHARS);
	rn_log(l, RN_LOG_WARN, "reviewer_changed_workspace", RN_LS("step", r->step),
	       RN_LS("skill", r->cycle->skill), RN_LI("cycle", r->cycle->cycle), RN_LI("count", (long long)v->n),
	       RN_LS("files", files));
	free(files);
	fg_buf_release(&b);
}

void rn_event_cycle(struct rn_log *l, enum rn_log_level level, const struct rn_cycle_report *r,
		    int full_path)
{
	const struct fg_cycle *c = r->cycle;
	char *fb = rn_utf8_prefix(c->j.feedback ? c->j.feedback : "", RN_FEEDBACK_LOG_CHARS);
	char *file = full_path ? fg_path_join(r->dir, r->name) : fg_xstrdup(r->name);
	const char *verdict = fg_verdict_kind_name(c->j.verdict);
	const char *source = rn_source_name(r->source);
	char *cyc = fg_xasprintf("%d/%d", c->cycle, c->max_cycles);
	char *el = fg_xasprintf("%.1fs", c->elapsed_seconds);
	struct rn_log_field f[24];
	size_t n = 0;

	f[n++] = RN_LS("step", r->step);
	f[n++] = RN_LS("skill", c->skill);
	if (l->format == RN_LOG_JSON) {
		f[n++] = RN_LI("cycle", c->cycle);
		f[n++] = RN_LI("max_cycles", c->max_cycles);
		f[n++] = RN_LS("verdict", verdict);
		f[n++] = RN_LN("elapsed_seconds", c->elapsed_seconds);
		f[n++] = RN_LS("feedback", fb);
		f[n++] = RN_LS("file", file);
		f[n++] = RN_LS("cycle_dir", r->dir);
		f[n++] = RN_LS("source", source);
		f[n++] = RN_LS_OPT("run_id", c->run_id);
		f[n++] = RN_LS_OPT("seal", r->seal == FG_SEAL_UNVERIFIED ? "unverified" : NULL);
		usage_fields(&c->usage, f, &n);
	} else {
		f[n++] = RN_LS("cycle", cyc);
		f[n++] = RN_LS("verdict", verdict);
		f[n++] = RN_LS("elapsed", el);
		f[n++] = RN_LS("source", source);
		f[n++] = RN_LS("file", file);
		f[n++] = RN_LS("cycle_dir", r->dir);
		f[n++] = RN_LS_OPT("seal", r->seal == FG_SEAL_UNVERIFIED ? "unverified" : NULL);
		/* Before the feedback, which ends the text line. */
		usage_fields(&c->usage, f, &n);
		f[n++] = RN_LS("feedback", fb);
	}
	rn_log_event(l, level, "review_cycle", f, n);
	FG_FREE_ALL(cyc, el, fb, file);
}

void rn_event_forged(struct rn_log *l, const char *step, const char *dir, const char *file,
		     enum rn_source source, enum fg_seal_status seal)
{
	rn_log(l, RN_LOG_WARN, "record_forged", RN_LS("step", step), RN_LS("file", file),
	       RN_LS("source", rn_source_name(source)), RN_LS("reason", fg_seal_status_name(seal)),
	       RN_LS("cycle_dir", dir));
}

void rn_event_verdict_unparsed(struct rn_log *l, const struct rn_cycle_report *r, int full_path)
{
	const struct fg_cycle *c = r->cycle;
	char *file, *rlog;

	if (c->j.verdict != FG_VERDICT_REJECTED || !c->j.has_format || c->j.format != FG_FORMAT_NONE ||
	    c->synthetic || !c->j.feedback ||
	    !fg_skip_prefix(c->j.feedback, FG_VERDICT_UNPARSED_FEEDBACK, NULL))
		return;
	file = full_path ? fg_path_join(r->dir, r->name) : fg_xstrdup(r->name);
	rlog = c->reviewer_log ? fg_xstrdup(c->reviewer_log)
			       : fg_reviewer_log_name(c->cycle, NULL);
	if (full_path) {
		char *p = fg_path_join(r->dir, rlog);

		free(rlog);
		rlog = p;
	}
	rn_log(l, RN_LOG_WARN, "verdict_unparsed", RN_LS("step", r->step), RN_LI("cycle", c->cycle),
	       RN_LS("file", file), RN_LS("reviewer_log", rlog), RN_LS("expected", FG_VERDICT_EXPECTED));
	free(file);
	free(rlog);
}

/* "path:line", "path" or "-", cut to RN_FINDING_LOG_CHARS characters. Owned. */
static char *location(const struct fg_finding *f)
{
	char *loc, *cut;

	if (f->file_path && *f->file_path && f->line > 0)
		loc = fg_xasprintf("%s:%d", f->file_path, f->line);
	else
		loc = fg_xstrdup(f->file_path && *f->file_path ? f->file_path : "-");
	cut = rn_utf8_prefix(loc, RN_FINDING_LOG_CHARS);
	free(loc);
	return cut;
}

/* Indices of the findings to show: blocking ones first, each group in the
 * cycle's order, at most RN_FINDINGS_LOG_MAX. Returns how many. */
static size_t pick(const struct fg_cycle *c, size_t *idx)
{
	size_t n = 0;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < c->j.nfindings && n < RN_FINDINGS_LOG_MAX; i++)
			if ((fg_finding_rank(&c->j.findings[i]) == FG_RANK_BLOCKING) == (pass == 0))
				idx[n++] = i;
	return n;
}

static void add_finding_text(struct fg_buf *b, const struct fg_finding *f)
{
	char *loc = location(f);
	char *title = rn_utf8_prefix(f->title ? f->title : "", RN_FINDING_LOG_CHARS);

	fg_buf_addf(b, "%s[%s] %s %s %s", b->len ? " | " : "", f->role ? f->role : "default",
		    f->severity && *f->severity ? f->severity : "-", loc, title);
	free(loc);
	free(title);
}

static cJSON *finding_json(const struct fg_finding *f)
{
	cJSON *o = cJSON_CreateObject();
	char *loc = location(f);
	char *title = rn_utf8_prefix(f->title ? f->title : "", RN_FINDING_LOG_CHARS);

	if (!o)
		abort();
	cJSON_AddStringToObject(o, "role", f->role ? f->role : "default");
	cJSON_AddStringToObject(o, "severity", f->severity ? f->severity : "");
	cJSON_AddStringToObject(o, "location", loc);
	cJSON_AddStringToObject(o, "title", title);
	free(loc);
	free(title);
	return o;
}

void rn_event_findings(struct rn_log *l, enum rn_log_level level, const struct rn_cycle_report *r)
{
	const struct fg_cycle *c = r->cycle;
	size_t idx[RN_FINDINGS_LOG_MAX], n;

	if (!c->j.has_findings)
		return;
	n = pick(c, idx);
	if (l->format == RN_LOG_JSON) {
		cJSON *arr = cJSON_CreateArray();
		char *text;

		for (size_t i = 0; i < n; i++)
			cJSON_AddItemToArray(arr, finding_json(&c->j.findings[idx[i]]));
		text = cJSON_PrintUnformatted(arr);
		if (!text)
			abort();
		rn_log(l, level, "review_findings", RN_LS("step", r->step), RN_LS("skill", c->skill),
		       RN_LI("cycle", c->cycle), RN_LI("count", (long long)c->j.nfindings),
		       RN_LI("shown", (long long)n), RN_LJ("findings", text));
		free(text);
		cJSON_Delete(arr);
	} else {
		struct fg_buf b;

		fg_buf_init(&b, 1u << 20);
		for (size_t i = 0; i < n; i++)
			add_finding_text(&b, &c->j.findings[idx[i]]);
		rn_log(l, level, "review_findings", RN_LS("step", r->step), RN_LS("skill", c->skill),
		       RN_LI("cycle", c->cycle), RN_LI("count", (long long)c->j.nfindings),
		       RN_LI("shown", (long long)n), RN_LS("findings", fg_buf_str(&b)));
		fg_buf_release(&b);
	}
}
