/*
 * metrics_parse.c - the families (rn__metric_families) and the series set
 * both halves fill (rn__metrics_series_get),
 * and an existing node_exporter textfile read back into it before a run's
 * metrics are merged (metrics_internal.h): our families' samples into
 * series, every other line kept verbatim; a file that promtool would refuse
 * is refused whole, with the line and the reason.
 */
#include "metrics_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/fsutil.h"
#include "forge/text.h"
#include "forge/util.h"


/* A review cycle lasts seconds to minutes; a run, minutes to hours. */
static const struct buckets cycle_buckets = {
	{ 1, 5, 10, 30, 60, 120, 300, 600 }, { "1", "5", "10", "30", "60", "120", "300", "600", "+Inf" },
};
static const struct buckets run_buckets = {
	{ 10, 30, 60, 300, 600, 1800, 3600, 7200 },
	{ "10", "30", "60", "300", "600", "1800", "3600", "7200", "+Inf" },
};

const struct family_def rn__metric_families[F_COUNT] = {
	[F_AGENT_COST] = { "forge_review_agent_cost_usd_total",
			   "Cost in US dollars the agents of a step reported, by skill, step and role.", T_COUNTER, 3,
			   { "skill", "step", "role" }, 0, NULL },
	[F_AGENT_TOKENS] = { "forge_review_agent_tokens_total",
			     "Tokens the agents of a step reported, by skill, step, role and kind "
			     "(input, output, cached_input, reasoning).", T_COUNTER, 4,
			     { "skill", "step", "role", "kind" }, 0, NULL },
	[F_AUDITS] = { "forge_review_audits_total",
		       "Held-out audits of approved steps, by skill, step and outcome (agreed, disagreed, "
		       "failed, skipped).", T_COUNTER, 3, { "skill", "step", "outcome" }, 0, NULL },
	[F_CHECK_RESULTS] = { "forge_review_check_results_total",
			      "Results of review.md's checks, by skill, step, check and outcome "
			      "(passed, failed, timed_out).", T_COUNTER, 4, { "skill", "step", "check", "outcome" },
			      0, NULL },
	[F_CYCLES] = { "forge_review_cycles_total",
		       "Review cycles detected, by skill and step.", T_COUNTER, 2, { "skill", "step" }, 0, NULL },
	[F_DURATION] = { "forge_review_duration_seconds",
			 "Wall time of one review cycle in seconds.", T_HISTOGRAM, 2, { "skill", "step" }, 0,
			 &cycle_buckets },
	[F_EXHAUSTED] = { "forge_review_exhausted_total",
			  "Runs whose review loop ended rejected at its cycle limit.", T_COUNTER, 2,
			  { "skill", "step" }, 0, NULL },
	[F_REJECTIONS] = { "forge_review_rejections_total",
			   "Rejected review cycles by what rejected them (reviewer, checks, no_change, "
			   "synthetic), by skill and step.", T_COUNTER, 3, { "skill", "step", "by" }, 0, NULL },
	[F_ROLE_VERDICTS] = { "forge_review_role_verdicts_total",
			      "Reviews of a reviewer panel's roles, by skill, step, role and verdict.",
			      T_COUNTER, 4, { "skill", "step", "role", "verdict" }, 0, NULL },
	[F_SWEEP] = { "forge_review_sweep_caught_total",
		      "Review cycles seen only by the final sweep, not while watching.", T_COUNTER, 2,
		      { "skill", "step" }, 0, NULL },
	[F_VERDICTS] = { "forge_review_verdicts_total",
			 "Review verdicts, by skill, step and verdict.", T_COUNTER, 3,
			 { "skill", "step", "verdict" }, 0, NULL },
	[F_FORGED] = { "forge_runner_forged_records_total",
		       "Records the runner did not believe (no valid seal: record_forged), by skill, "
		       "step and source (watch, poll, sweep, stream).", T_COUNTER, 3, { "skill", "step", "source" },
		       0, NULL },
	[F_LAST_SUCCESS] = { "forge_runner_last_success_timestamp_seconds",
			     "Unix time of the last run of a step that succeeded (exit 0, approved or no "
			     "review to do), by skill and step.", T_GAUGE, 2, { "skill", "step" }, 0, NULL },
	[F_RUN_DURATION] = { "forge_runner_run_duration_seconds",
			     "Wall time of one forge-runner run in seconds, by skill, step and engine.",
			     T_HISTOGRAM, 3, { "skill", "step", "engine" }, 0, &run_buckets },
	[F_RUNS] = { "forge_runner_runs_total",
		     "Runner runs, by step, outcome, skill and engine.", T_COUNTER, 4,
		     { "step", "outcome", "skill", "engine" }, 2, NULL },
};

const char *rn__metric_type_name(enum family f)
{
	static const char *const names[] = { "counter", "histogram", "gauge" };

	return names[rn__metric_families[f].type];
}

/* Finds the series of fam with these label values (NULL reads as ""), adding it if new. */
struct rn_metric_series *rn__metrics_series_get(struct rn_metrics *m, enum family fam,
					       const char *const *vals)
{
	size_t nl = rn__metric_families[fam].nlabels, i, j;
	struct rn_metric_series *s;

	for (i = 0; i < m->n; i++) {
		s = &m->series[i];
		if (s->fam != fam)
			continue;
		for (j = 0; j < nl; j++)
			if (strcmp(s->label[j], vals[j] ? vals[j] : ""))
				break;
		if (j == nl)
			return s;
	}
	FG_ALLOC_GROW(m->series, m->n + 1, m->cap);
	s = &m->series[m->n++];
	memset(s, 0, sizeof(*s));
	s->fam = fam;
	for (j = 0; j < nl; j++)
		s->label[j] = fg_xstrdup(vals[j] ? vals[j] : "");
	return s;
}

/* ---- parsing an existing textfile ---- */

/* One line being parsed; why names the first problem (a static string). */
struct cursor {
	const char *p;
	const char *end;
	const char *why;
};

struct label_set {
	size_t n;
	char *name[PARSE_MAX_LABELS];   /* owned */
	char *val[PARSE_MAX_LABELS];    /* owned, unescaped */
};

enum part { P_VALUE, P_BUCKET, P_SUM, P_COUNT };

static void label_set_release(struct label_set *ls)
{
	for (size_t i = 0; i < ls->n; i++) {
		free(ls->name[i]);
		free(ls->val[i]);
	}
	ls->n = 0;
}

static int fail(struct cursor *c, const char *why)
{
	if (!c->why)
		c->why = why;
	return -EINVAL;
}

static void skip_blank(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

static int is_name_char(char ch, int first, int metric)
{
	if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_')
		return 1;
	if (metric && ch == ':')
		return 1;
	return !first && ch >= '0' && ch <= '9';
}

/* Reads a metric (metric != 0) or label name; returns it owned, or NULL. */
static char *parse_name(struct cursor *c, int metric)
{
	const char *start = c->p;

	while (c->p < c->end && is_name_char(*c->p, c->p == start, metric))
		c->p++;
	if (c->p == start) {
		fail(c, metric ? "expected a metric name" : "expected a label name");
		return NULL;
	}
	return fg_xstrndup(start, (size_t)(c->p - start));
}

/* Reads a quoted label value, undoing the three escapes the format defines. */
static char *parse_label_value(struct cursor *c)
{
	struct fg_buf v;

	fg_buf_init(&v, METRICS_FILE_MAX);
	if (c->p >= c->end || *c->p != '"')
		goto bad;
	for (c->p++; c->p < c->end && *c->p != '"'; c->p++) {
		char ch = *c->p;

		if (ch == '\\') {
			c->p++;
			if (c->p >= c->end)
				goto bad;
			ch = *c->p == 'n' ? '\n' : *c->p;
			if (*c->p != 'n' && *c->p != '\\' && *c->p != '"')
				goto bad;
		}
		fg_buf_addc(&v, ch);
	}
	if (c->p >= c->end)
		goto bad;
	c->p++;
	return fg_buf_detach(&v, NULL);
bad:
	fg_buf_release(&v);
	fail(c, "malformed label value");
	return NULL;
}

static int parse_labels(struct cursor *c, struct label_set *ls)
{
	c->p++; /* '{' */
	for (;;) {
		skip_blank(c);
		if (c->p < c->end && *c->p == '}') {
			c->p++;
			return 0;
		}
		if (ls->n == PARSE_MAX_LABELS)
			return fail(c, "too many labels");
		ls->name[ls->n] = parse_name(c, 0);
		if (!ls->name[ls->n])
			return -EINVAL;
		ls->val[ls->n] = NULL;
		ls->n++;
		skip_blank(c);
		if (c->p >= c->end || *c->p != '=')
			return fail(c, "expected '=' after a label name");
		c->p++;
		skip_blank(c);
		ls->val[ls->n - 1] = parse_label_value(c);
		if (!ls->val[ls->n - 1])
			return -EINVAL;
		skip_blank(c);
		if (c->p < c->end && *c->p == ',')
			c->p++;
		else if (c->p >= c->end || *c->p != '}')
			return fail(c, "expected ',' or '}' in labels");
	}
}

/* Reads the value and an optional integer timestamp, which must end the line. */
static int parse_value(struct cursor *c, double *v)
{
	char tok[64], *endp;
	const char *start;
	size_t n;

	skip_blank(c);
	start = c->p;
	while (c->p < c->end && *c->p != ' ' && *c->p != '\t')
		c->p++;
	n = (size_t)(c->p - start);
	if (n == 0 || n >= sizeof(tok))
		return fail(c, "expected a sample value");
	memcpy(tok, start, n);
	tok[n] = '\0';
	errno = 0;
	*v = strtod(tok, &endp);
	if (*endp || errno == ERANGE)
		return fail(c, "invalid sample value");
	skip_blank(c);
	if (c->p < c->end && *c->p == '-')
		c->p++;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
		c->p++;
	skip_blank(c);
	if (c->p != c->end)
		return fail(c, "trailing characters after the sample value");
	return 0;
}

/* 1 if name is a sample of one of our families, with *fam and *part set. */
static int classify(const char *name, enum family *fam, enum part *part)
{
	static const struct { const char *suffix; enum part part; } parts[] = {
		{ "_bucket", P_BUCKET }, { "_sum", P_SUM }, { "_count", P_COUNT },
	};

	for (int f = 0; f < F_COUNT; f++) {
		size_t bl = strlen(rn__metric_families[f].name);

		*fam = (enum family)f;
		if (rn__metric_families[f].type != T_HISTOGRAM) {
			*part = P_VALUE;
			if (!strcmp(name, rn__metric_families[f].name))
				return 1;
			continue;
		}
		if (strncmp(name, rn__metric_families[f].name, bl))
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
			*part = parts[i].part;
			if (!strcmp(name + bl, parts[i].suffix))
				return 1;
		}
	}
	return 0;
}

/* Index of the bucket of fam whose bound le names, or -1. */
static int bucket_index(enum family fam, const char *le)
{
	const double *bucket_bound = rn__metric_families[fam].buckets->bound;
	char *endp;
	double v;

	if (!strcmp(le, "+Inf"))
		return NBUCKETS - 1;
	v = strtod(le, &endp);
	if (endp == le || *endp)
		return -1;
	for (int i = 0; i < NBUCKETS - 1; i++)
		if (v == bucket_bound[i])
			return i;
	return -1;
}

/*
 * Orders ls's labels as the family declares them (vals) and finds the
 * bucket of a _bucket sample. Every declared label must be present once,
 * and nothing else but le on a bucket.
 */
static int match_labels(struct cursor *c, enum family fam, enum part part,
			const struct label_set *ls, const char **vals, int *bucket)
{
	const struct family_def *f = &rn__metric_families[fam];
	size_t need = f->nlabels + (part == P_BUCKET);

	*bucket = -1;
	for (size_t j = 0; j < MAX_LABELS; j++)
		vals[j] = NULL;
	for (size_t i = 0; i < ls->n; i++) {
		size_t j;

		if (part == P_BUCKET && !strcmp(ls->name[i], "le")) {
			if (*bucket >= 0)
				return fail(c, "duplicate label");
			*bucket = bucket_index(fam, ls->val[i]);
			if (*bucket < 0)
				return fail(c, "unknown histogram bucket");
			continue;
		}
		for (j = 0; j < f->nlabels && strcmp(ls->name[i], f->labels[j]); j++)
			;
		if (j == f->nlabels)
			return fail(c, "unexpected label");
		if (vals[j])
			return fail(c, "duplicate label");
		vals[j] = ls->val[i];
	}
	/* A label added later may be absent from an older file: "". */
	if (f->nrequired && ls->n < need) {
		for (size_t j = 0; j < f->nrequired; j++)
			if (!vals[j])
				return fail(c, "missing label");
		return 0;
	}
	return ls->n == need ? 0 : fail(c, "missing label");
}

/* Adds one sample of our families to acc; each sample may appear once. */
static int apply_sample(struct cursor *c, struct rn_metrics *acc, enum family fam,
			enum part part, const struct label_set *ls, double v)
{
	const char *vals[MAX_LABELS];
	struct rn_metric_series *s;
	unsigned bit;
	int bucket;

	if (match_labels(c, fam, part, ls, vals, &bucket))
		return -EINVAL;
	if (!isfinite(v) || v < 0)
		return fail(c, "negative or non-finite value");
	s = rn__metrics_series_get(acc, fam, vals);
	bit = part == P_VALUE ? 1u : part == P_BUCKET ? 1u << bucket
		: part == P_SUM ? SEEN_SUM : SEEN_COUNT;
	if (s->seen & bit)
		return fail(c, "duplicate sample");
	s->seen |= bit;
	if (part == P_VALUE)
		s->value = v;
	else if (part == P_BUCKET)
		s->bucket[bucket] = v;
	else if (part == P_SUM)
		s->sum = v;
	else
		s->count = v;
	return 0;
}

/* A sample line: ours goes into acc, a foreign one is kept verbatim in keep. */
static int parse_sample_line(struct cursor *c, struct rn_metrics *acc, struct fg_buf *keep)
{
	const char *line = c->p;
	struct label_set ls = { 0 };
	enum family fam;
	enum part part;
	char *name;
	double v;
	int r = -EINVAL;

	name = parse_name(c, 1);
	if (!name)
		return -EINVAL;
	skip_blank(c);
	if (c->p < c->end && *c->p == '{' && parse_labels(c, &ls))
		goto out;
	if (parse_value(c, &v))
		goto out;
	if (classify(name, &fam, &part))
		r = apply_sample(c, acc, fam, part, &ls, v);
	else if (fg_buf_add(keep, line, (size_t)(c->end - line)) || fg_buf_addc(keep, '\n'))
		r = fail(c, "file too large");
	else
		r = 0;
out:
	label_set_release(&ls);
	free(name);
	return r;
}

/* Our own HELP and TYPE lines are dropped (render writes them); others are kept. */
static int parse_comment_line(struct cursor *c, struct fg_buf *keep)
{
	const char *line = c->p, *kw, *want, *after;
	char *name = NULL;
	size_t rest;
	int r = 0;

	c->p++; /* '#' */
	skip_blank(c);
	kw = c->p;
	if ((size_t)(c->end - kw) > 5 && (fg_skip_prefix(kw, "HELP ", &after) || fg_skip_prefix(kw, "TYPE ", &after))) {
		c->p = after;
		skip_blank(c);
		name = parse_name(c, 1);
		c->why = NULL; /* a comment may hold anything */
	}
	for (int f = 0; name && f < F_COUNT; f++) {
		if (strcmp(name, rn__metric_families[f].name))
			continue;
		want = rn__metric_type_name((enum family)f);
		skip_blank(c);
		rest = (size_t)(c->end - c->p);
		if (kw[0] == 'T' && (rest != strlen(want) || strncmp(c->p, want, rest)))
			r = fail(c, "wrong TYPE for a forge metric");
		free(name);
		return r;
	}
	free(name);
	if (fg_buf_add(keep, line, (size_t)(c->end - line)) || fg_buf_addc(keep, '\n'))
		return fail(c, "file too large");
	return 0;
}

/* Histograms read back must be whole and self-consistent before we add to them. */
static int check_histograms(const struct rn_metrics *acc, const char **why)
{
	for (size_t i = 0; i < acc->n; i++) {
		const struct rn_metric_series *s = &acc->series[i];

		if (rn__metric_families[s->fam].type != T_HISTOGRAM)
			continue;
		if (s->seen != SEEN_HISTOGRAM) {
			*why = "incomplete histogram";
			return -EINVAL;
		}
		for (size_t b = 1; b < NBUCKETS; b++)
			if (s->bucket[b] < s->bucket[b - 1]) {
				*why = "histogram buckets not cumulative";
				return -EINVAL;
			}
		if (s->bucket[NBUCKETS - 1] != s->count) {
			*why = "histogram +Inf bucket differs from _count";
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Parses a whole textfile into acc (our families) and keep (every other
 * line, verbatim, in order). On -EINVAL *lineno and *why say where and why
 * (lineno 0: a whole-file problem).
 */
int rn__metrics_parse_textfile(const char *data, size_t len, struct rn_metrics *acc,
				struct fg_buf *keep, unsigned *lineno, const char **why)
{
	const char *p = data, *end = data + len;

	*lineno = 0;
	*why = NULL;
	if (memchr(data, '\0', len)) {
		*why = "NUL byte in file";
		return -EINVAL;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct cursor c = { p, nl ? nl : end, NULL };
		int r = 0;

		++*lineno;
		if (!nl)
			r = fail(&c, "last line does not end in a newline");
		/* promtool and node_exporter refuse the whole file for one such
		 * line (every run's metrics lost): never merge into it. */
		else if (fg_utf8_check(c.p, (size_t)(c.end - c.p), NULL))
			r = fail(&c, "not valid UTF-8");
		else if (c.p < c.end && *c.p == '#')
			r = parse_comment_line(&c, keep);
		else if (c.p < c.end)
			r = parse_sample_line(&c, acc, keep);
		if (r) {
			*why = c.why;
			return r;
		}
		p = nl + 1;
	}
	*lineno = 0;
	return check_histograms(acc, why);
}
