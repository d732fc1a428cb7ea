/*
 * metrics_internal.h - what the two halves of the metrics module share:
 * metrics.c (observations, rendering, merging into the textfile under a
 * lock) and metrics_parse.c (the series set, and reading an existing
 * textfile back into it, strictly: what node_exporter or promtool would
 * refuse is never merged into). metrics.c calls metrics_parse.c, never the
 * other way. metrics.h is the module's contract.
 */
#ifndef RN_METRICS_INTERNAL_H
#define RN_METRICS_INTERNAL_H

#include <stddef.h>

#include "forge/buf.h"
#include "metrics.h"

#define NBUCKETS 9               /* the finite bounds plus +Inf */
#define MAX_LABELS 4             /* the most labels one of our families has */
#define PARSE_MAX_LABELS 64      /* labels accepted on a foreign sample */
#define METRICS_FILE_MAX ((size_t)16 << 20)
#define SEEN_SUM (1u << NBUCKETS)
#define SEEN_COUNT (1u << (NBUCKETS + 1))
#define SEEN_HISTOGRAM ((1u << (NBUCKETS + 2)) - 1)

/* A histogram's buckets: upper bounds and their le labels (the last +Inf). */
struct buckets {
	double bound[NBUCKETS - 1];
	const char *le[NBUCKETS];
};

/* In alphabetical order of name: sorting series by family sorts the file. */
enum family {
	F_AGENT_COST, F_AGENT_TOKENS, F_AUDITS, F_CHECK_RESULTS, F_CYCLES, F_DURATION, F_EXHAUSTED,
	F_REJECTIONS, F_ROLE_VERDICTS, F_SWEEP, F_VERDICTS, F_FORGED, F_LAST_SUCCESS, F_RUN_DURATION, F_RUNS,
	F_COUNT
};

enum family_type { T_COUNTER, T_HISTOGRAM, T_GAUGE };

struct family_def {
	const char *name;
	const char *help;
	enum family_type type;
	size_t nlabels;
	const char *labels[MAX_LABELS];
	/* Labels past the first nrequired may be absent from a file written
	 * before they were added (they read as ""); 0: every label required. */
	size_t nrequired;
	const struct buckets *buckets;   /* histograms */
};

struct rn_metric_series {
	enum family fam;
	char *label[MAX_LABELS];     /* owned values, in the family's label order */
	double value;                /* counters */
	double bucket[NBUCKETS];     /* histograms: cumulative counts */
	double sum;
	double count;
	unsigned seen;               /* parsing only: samples of this series already read */
};

/* The families, indexed by enum family (metrics_parse.c). */
extern const struct family_def rn__metric_families[F_COUNT];
/* "counter", "histogram" or "gauge": f's # TYPE. */
const char *rn__metric_type_name(enum family f);

/* Finds the series of fam with these label values (NULL reads as ""),
 * adding it if new; the pointer is valid until the next addition. */
struct rn_metric_series *rn__metrics_series_get(struct rn_metrics *m, enum family fam,
					       const char *const *vals);

/*
 * Parses a whole textfile into acc (our families) and keep (every other
 * line, verbatim, in order). Returns 0, or -EINVAL with *lineno and *why
 * saying where and why (lineno 0: a whole-file problem). metrics_parse.c.
 */
int rn__metrics_parse_textfile(const char *data, size_t len, struct rn_metrics *acc,
				struct fg_buf *keep, unsigned *lineno, const char **why);

#endif
