/*
 * report_internal.h - what the files of `forge-runner report` share:
 * cmd_report.c (options, loading the result files, merging them by key,
 * writing) builds a struct report; report_render.c prints it as JSON or as
 * the Markdown section, report_html.c as one HTML page. report.h is the subcommand's contract.
 */
#ifndef RN_REPORT_INTERNAL_H
#define RN_REPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "forge/buf.h"
#include "forge/cycle.h"
#include "forge/summary.h"

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
	enum fg_failure_cause cause;  /* the result's failure.cause (none: absent) */
	char *reason;       /* its failure.reason; NULL: none */
	char *cycle_dir;    /* the result's cycle_dir (the step directory); NULL: unknown */
	struct fg_cycle *cycles;   /* sorted by cycle number */
	size_t ncycles;
	struct fg_usage_pair usage;  /* the result's "usage" (the step's totals) */
	struct fg_audit *audit;      /* owned or NULL: the result's "audit" */
	char *source;       /* the path as given */
};

struct report {
	struct entry *v;
	size_t n, cap;
	struct fg_strvec warnings;
};

/* Open: the review left work to do, or the run failed. */
bool rn__entry_open(const struct entry *e);
/* The last cycle's feedback when it was rejected, else NULL (borrowed). */
const char *rn__open_feedback(const struct entry *e);
/* The last cycle's findings when it was rejected (borrowed; *n set). */
const struct fg_finding *rn__open_findings(const struct entry *e, size_t *n);

/*
 * The report as pretty JSON with a trailing newline (rn__report_json), or
 * as the Markdown section, blocks separated by one blank line, ending with
 * one newline (rn__report_markdown), appended to out. only_open keeps the
 * open entries alone. 0, or -E2BIG when out's maximum was reached (out
 * then holds a cut text, which the caller does not write).
 */
int rn__report_json(const struct report *rp, bool only_open, struct fg_buf *out);
int rn__report_markdown(const struct report *rp, bool only_open, struct fg_buf *out);
/* The report as one self-contained HTML page (report_html.c): inline CSS
 * and SVG, no script, a Content-Security-Policy of default-src 'none';
 * every string from a result escaped. Same returns. */
int rn__report_html(const struct report *rp, bool only_open, struct fg_buf *out);

#endif
