/*
 * closing.h - the one line every `forge-runner run` ends with on stderr,
 * whatever the log level (unless --quiet):
 *   implement_task: approved in 2/3 cycles, $0.55, 41 s; result: /r/result.json
 *   greet: approved in 1/3 cycles (2 advice findings, not looped on), 0.8 s
 *   impl: audit_rejected in 3/3 cycles (the audit disagreed), $0.28, 0.7 s; exit 4: ...
 *   implement_task: failed, 3.2 s; exit 1: the task failed: worker exited with status 3
 * A log in JSON on stderr gets it as a `run_summary` event instead (with
 * the line in `summary`), so stderr stays one JSON object per line.
 */
#ifndef RN_CLOSING_H
#define RN_CLOSING_H

#include <stdbool.h>
#include <stddef.h>

#include "log.h"

/* What the line says; all borrowed. */
struct rn_closing {
	const char *step;
	const char *outcome;      /* the review state, or error, timeout, failed */
	size_t cycles;            /* cycles reported */
	int max_cycles;           /* 0: unknown */
	size_t advice;            /* the last cycle approved with this many advice findings */
	const char *audit;        /* the held-out audit's outcome (audit.h), or NULL: none */
	bool have_cost;
	double cost_usd;
	double seconds;
	int exit_code;
	const char *reason;       /* why a failed run failed, or NULL; escaped, cut to 200 bytes */
	const char *result_path;  /* NULL: no result file */
};

/* The line, without a newline, owned. Pure. */
char *rn_closing_line(const struct rn_closing *c);

/* Writes the line on stderr, or, when l is a JSON log on stderr, as a
 * run_summary event at INFO whatever l's threshold. */
void rn_closing_print(struct rn_log *l, const struct rn_closing *c);

#endif
