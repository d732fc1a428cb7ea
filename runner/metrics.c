/*
 * metrics.c - in-memory metric series, rendered in the Prometheus text
 * exposition format 0.0.4 and merged into a node_exporter textfile.
 *
 * A run produces at most a few dozen series, so series live in one flat
 * array with a linear lookup (O(n) per observation); rendering sorts a copy
 * of the pointers so the file's order is stable and diffs cleanly.
 */
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
#include "metrics_internal.h"

void rn_metrics_init(struct rn_metrics *m)
{
	*m = (struct rn_metrics){ 0 };
}

void rn_metrics_release(struct rn_metrics *m)
{
	for (size_t i = 0; i < m->n; i++)
		for (size_t j = 0; j < MAX_LABELS; j++)
			free(m->series[i].label[j]);
	free(m->series);
	rn_metrics_init(m);
}

/* a + b, or a when the sum would not be finite: no addition makes a metric
 * +Inf or NaN (a file holding one is refused whole by promtool, by
 * node_exporter and by the next merge), whatever a sandbox reported. */
static double finite_add(double a, double b)
{
	double s = a + b;

	return isfinite(s) ? s : a;
}

static void counter_add(struct rn_metrics *m, enum family fam, const char *a, const char *b,
			const char *c, double n)
{
	const char *vals[MAX_LABELS] = { a, b, c, NULL };
	struct rn_metric_series *s = rn__metrics_series_get(m, fam, vals);

	s->value = finite_add(s->value, n);
}

/* Adds 1 to the series of fam with four label values. */
static void counter_add4(struct rn_metrics *m, enum family fam, const char *const *vals)
{
	struct rn_metric_series *s = rn__metrics_series_get(m, fam, vals);

	s->value = finite_add(s->value, 1);
}

/* Durations are kept to the microsecond: adding them as doubles drifts by an
 * ulp (0.009 + 0.019 is 0.027999999999999997, printed as such), so a sum is
 * snapped back to the microsecond grid and prints as written (0.028). */
#define US_PER_S 1e6
#define SNAP_MAX 9e12   /* seconds: beyond, microseconds could overflow a long long */

static double add_seconds(double a, double b)
{
	double s = finite_add(a, b);
	double us;

	if (fabs(s) >= SNAP_MAX)
		return s;
	us = s * US_PER_S;
	/* Rounded to the nearest by hand: no libm for one llround(). */
	return (double)(long long)(us + (us < 0 ? -0.5 : 0.5)) / US_PER_S;
}

void rn_metrics_observe_role(struct rn_metrics *m, const char *skill, const char *step,
			     const char *role, const char *verdict)
{
	const char *vals[MAX_LABELS] = { skill, step, role, verdict };

	counter_add4(m, F_ROLE_VERDICTS, vals);
}

void rn_metrics_observe_check(struct rn_metrics *m, const char *skill, const char *step,
			      const char *check, const char *outcome)
{
	const char *vals[MAX_LABELS] = { skill, step, check, outcome };

	counter_add4(m, F_CHECK_RESULTS, vals);
}

static void histogram_observe(struct rn_metrics *m, const char *skill, const char *step, double x)
{
	const char *vals[MAX_LABELS] = { skill, step, NULL, NULL };
	struct rn_metric_series *s = rn__metrics_series_get(m, F_DURATION, vals);

	/* A negative or non-finite duration is a clock oddity, not a real
	 * observation; counting it as 0 keeps _sum finite and parseable. */
	if (!isfinite(x) || x < 0)
		x = 0;
	for (size_t i = 0; i < NBUCKETS; i++)
		if (i == NBUCKETS - 1 || x <= bucket_bound[i])
			s->bucket[i] = finite_add(s->bucket[i], 1);
	s->sum = add_seconds(s->sum, x);
	s->count = finite_add(s->count, 1);
}

void rn_metrics_observe_cycle(struct rn_metrics *m, const char *skill, const char *step,
			      const char *verdict, double elapsed_seconds)
{
	counter_add(m, F_CYCLES, skill, step, NULL, 1);
	counter_add(m, F_VERDICTS, skill, step, verdict, 1);
	histogram_observe(m, skill, step, elapsed_seconds);
}

void rn_metrics_add_sweep_caught(struct rn_metrics *m, const char *skill, const char *step, unsigned n)
{
	counter_add(m, F_SWEEP, skill, step, NULL, n);
}

void rn_metrics_add_forged(struct rn_metrics *m, const char *skill, const char *step,
			   const char *source)
{
	counter_add(m, F_FORGED, skill, step, source, 1);
}

void rn_metrics_add_exhausted(struct rn_metrics *m, const char *skill, const char *step)
{
	counter_add(m, F_EXHAUSTED, skill, step, NULL, 1);
}

void rn_metrics_add_run(struct rn_metrics *m, const char *step, const char *outcome)
{
	counter_add(m, F_RUNS, step, outcome, NULL, 1);
}

/* Costs are kept to the nano-dollar for the same reason durations are kept
 * to the microsecond (add_seconds): sums print as written. */
static double add_usd(double a, double b)
{
	double s = finite_add(a, b);

	if (s >= 1e9)
		return s;
	return (double)(long long)(s * 1e9 + 0.5) / 1e9;
}

void rn_metrics_add_usage(struct rn_metrics *m, const char *skill, const char *step, const char *role,
			  const struct fg_usage *u)
{
	static const struct { unsigned bit; const char *kind; } kinds[] = {
		{ FG_USAGE_INPUT, "input" }, { FG_USAGE_OUTPUT, "output" },
		{ FG_USAGE_CACHED, "cached_input" }, { FG_USAGE_REASONING, "reasoning" },
	};
	const int64_t v[] = { u->input_tokens, u->output_tokens, u->cached_input_tokens, u->reasoning_tokens };

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		const char *vals[MAX_LABELS] = { skill, step, role, kinds[i].kind };

		if (u->have & kinds[i].bit) {
			struct rn_metric_series *s = rn__metrics_series_get(m, F_AGENT_TOKENS, vals);

			s->value = finite_add(s->value, (double)v[i]);
		}
	}
	if (u->have & FG_USAGE_COST) {
		const char *vals[MAX_LABELS] = { skill, step, role, NULL };
		struct rn_metric_series *s = rn__metrics_series_get(m, F_AGENT_COST, vals);

		s->value = add_usd(s->value, u->cost_usd);
	}
}

/* ---- rendering ---- */

static int series_cmp(const void *pa, const void *pb)
{
	const struct rn_metric_series *a = *(const struct rn_metric_series *const *)pa;
	const struct rn_metric_series *b = *(const struct rn_metric_series *const *)pb;

	if (a->fam != b->fam)
		return a->fam < b->fam ? -1 : 1;
	for (size_t j = 0; j < rn__metric_families[a->fam].nlabels; j++) {
		int c = strcmp(a->label[j], b->label[j]);

		if (c)
			return c;
	}
	return 0;
}

/* Shortest decimal form that reads back as the same double; integers without exponent. */
static void format_value(double v, char *out, size_t outlen)
{
	if (isinf(v)) {
		snprintf(out, outlen, "%s", v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (isnan(v)) {
		snprintf(out, outlen, "NaN");
		return;
	}
	if (v == floor(v) && fabs(v) < 1e15) {
		snprintf(out, outlen, "%.0f", v);
		return;
	}
	/* 17 significant digits always round-trip; stop at the first that does. */
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(out, outlen, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			return;
	}
}


/* Label values escape exactly backslash, double quote and newline (format 0.0.4). */
static int add_escaped(struct fg_buf *b, const char *s)
{
	int r = 0;

	for (; *s && !r; s++) {
		if (*s == '\\')
			r = fg_buf_adds(b, "\\\\");
		else if (*s == '"')
			r = fg_buf_adds(b, "\\\"");
		else if (*s == '\n')
			r = fg_buf_adds(b, "\\n");
		else
			r = fg_buf_addc(b, *s);
	}
	return r;
}

/* Appends "name{k="v",...[,le="x"]} value\n". le may be NULL. */
static int add_sample(struct fg_buf *b, const struct rn_metric_series *s, const char *suffix,
		      const char *le, double v)
{
	const struct family_def *f = &rn__metric_families[s->fam];
	char num[64];
	int r;

	r = fg_buf_addf(b, "%s%s{", f->name, suffix);
	for (size_t j = 0; j < f->nlabels && !r; j++) {
		r = fg_buf_addf(b, "%s%s=\"", j ? "," : "", f->labels[j]);
		if (!r)
			r = add_escaped(b, s->label[j]);
		if (!r)
			r = fg_buf_addc(b, '"');
	}
	if (!r && le)
		r = fg_buf_addf(b, ",le=\"%s\"", le);
	format_value(v, num, sizeof(num));
	if (!r)
		r = fg_buf_addf(b, "} %s\n", num);
	return r;
}

static int render_series(struct fg_buf *b, const struct rn_metric_series *s)
{
	int r = 0;

	if (!rn__metric_families[s->fam].histogram)
		return add_sample(b, s, "", NULL, s->value);
	for (size_t i = 0; i < NBUCKETS && !r; i++)
		r = add_sample(b, s, "_bucket", bucket_le[i], s->bucket[i]);
	if (!r)
		r = add_sample(b, s, "_sum", NULL, s->sum);
	if (!r)
		r = add_sample(b, s, "_count", NULL, s->count);
	return r;
}

int rn_metrics_render(const struct rn_metrics *m, struct fg_buf *out)
{
	const struct rn_metric_series **v = fg_xcalloc(m->n ? m->n : 1, sizeof(*v));
	size_t old_len = out->len;
	int old_err = fg_buf_error(out), r = 0;

	for (size_t i = 0; i < m->n; i++)
		v[i] = &m->series[i];
	qsort(v, m->n, sizeof(*v), series_cmp);
	for (size_t i = 0; i < m->n && !r; i++) {
		const struct family_def *f = &rn__metric_families[v[i]->fam];

		if (i == 0 || v[i - 1]->fam != v[i]->fam)
			r = fg_buf_addf(out, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help,
					f->name, f->histogram ? "histogram" : "counter");
		if (!r)
			r = render_series(out, v[i]);
	}
	free(v);
	/* On -E2BIG drop the partial text so out is left as it was. */
	if (r)
		fg_buf_rewind(out, old_len, old_err);
	return r;
}

/* ---- merging into the textfile ---- */

/* Adds every series of src into dst. */
static void metrics_add(struct rn_metrics *dst, const struct rn_metrics *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct rn_metric_series *s = &src->series[i];
		struct rn_metric_series *t = rn__metrics_series_get(dst, s->fam, (const char *const *)s->label);

		t->value = t->fam == F_AGENT_COST ? add_usd(t->value, s->value) : finite_add(t->value, s->value);
		for (size_t b = 0; b < NBUCKETS; b++)
			t->bucket[b] = finite_add(t->bucket[b], s->bucket[b]);
		t->sum = add_seconds(t->sum, s->sum);
		t->count = finite_add(t->count, s->count);
	}
}

/* Opens and exclusively flocks "path.lock"; returns the descriptor or -errno. */
static int lock_file(const char *path)
{
	char *lock_path = fg_xasprintf("%s.lock", path);
	int fd, r;

	do
		fd = open(lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	while (fd < 0 && errno == EINTR);
	free(lock_path);
	if (fd < 0)
		return -errno;
	do
		r = flock(fd, LOCK_EX);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

/*
 * Reads and parses the current file (missing is empty), adds m and writes
 * the result atomically. Called with the lock held.
 */
static int merge_locked(const struct rn_metrics *m, const char *path, char *err, size_t errlen)
{
	struct rn_metrics acc;
	struct fg_buf old, keep, out;
	const char *why;
	unsigned lineno;
	int r;

	rn_metrics_init(&acc);
	fg_buf_init(&old, METRICS_FILE_MAX);
	fg_buf_init(&keep, METRICS_FILE_MAX);
	fg_buf_init(&out, 2 * METRICS_FILE_MAX);
	r = fg_read_file_at(AT_FDCWD, path, METRICS_FILE_MAX, 0, &old, NULL);
	if (r == -ENOENT) {
		r = 0;
	} else if (r) {
		snprintf(err, errlen, "cannot read metrics file '%s': %s", path, strerror(-r));
		goto out;
	}
	r = rn__metrics_parse_textfile(fg_buf_str(&old), old.len, &acc, &keep, &lineno, &why);
	if (r) {
		if (lineno)
			snprintf(err, errlen, "corrupt metrics file '%s': line %u: %s", path, lineno, why);
		else
			snprintf(err, errlen, "corrupt metrics file '%s': %s", path, why);
		goto out;
	}
	metrics_add(&acc, m);
	r = rn_metrics_render(&acc, &out);
	if (!r)
		r = fg_buf_add(&out, keep.data ? keep.data : "", keep.len);
	if (!r)
		r = fg_write_atomic_path(path, fg_buf_str(&out), out.len);
	if (r)
		snprintf(err, errlen, "cannot write metrics file '%s': %s", path, strerror(-r));
out:
	fg_buf_release(&old);
	fg_buf_release(&keep);
	fg_buf_release(&out);
	rn_metrics_release(&acc);
	return r;
}

int rn_metrics_merge_file(const struct rn_metrics *m, const char *path, char *err, size_t errlen)
{
	char dummy[1];
	int fd, r;

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	fd = lock_file(path);
	if (fd < 0) {
		snprintf(err, errlen, "cannot lock metrics file '%s.lock': %s", path, strerror(-fd));
		return fd;
	}
	r = merge_locked(m, path, err, errlen);
	/* Closing the descriptor releases the flock; the lock file stays for the next runner. */
	close(fd);
	return r;
}
