/*
 * cycle_report.h - what every cycle source delivers to the run's one table
 * of cycles: a detected cycle (struct rn_cycle_report) and where it came
 * from (enum rn_source).
 *
 * The sources are the watch (inotify, the poll net and the final sweep,
 * watch.c) and the stream (frames on the sandbox's stderr, stream.c); the
 * sinks are the session (session.c: dedupe through rn_cycles, log, metrics,
 * record) and `forge-runner watch` (cmd_watch.c). Sources and sinks include
 * this header, never each other's: result.h stores the source of each
 * cycle as an enum rn_source.
 */
#ifndef RN_CYCLE_REPORT_H
#define RN_CYCLE_REPORT_H

#include <stddef.h>

#include "forge/cycle.h"
#include "forge/seal.h"

/* Ten times the entrypoint's FG_MAX_RETRIES_LIMIT (100): only a hostile
 * sandbox writes more cycle files into one step directory. Each source
 * tracks at most this many distinct cycle numbers. */
#define RN_WATCH_MAX_CYCLE_FILES 1000
/* Distinct contents reported for one cycle number (its first and two
 * rewrites): the entrypoint writes each cycle once, so only a sandbox
 * rewrites one in a loop (a forged sandbox once turned one real cycle into
 * 2,994 review_cycle events and as many counted cycles). */
#define RN_CYCLE_MAX_REPORTS 3

/* Where a detected cycle came from: inotify, the poll net, the final sweep
 * (watch.c), or a frame on the sandbox's stderr (stream.c). RN_SOURCE_NONE
 * only says "no source yet" (rn_cycles_classify()). */
enum rn_source {
	RN_SOURCE_NONE = -1,
	RN_SOURCE_WATCH,
	RN_SOURCE_POLL,
	RN_SOURCE_SWEEP,
	RN_SOURCE_STREAM,
	RN_SOURCE_COUNT
};

/* "watch", "poll", "sweep", "stream" ("none" for RN_SOURCE_NONE); static. */
const char *rn_source_name(enum rn_source s);

/* One detected cycle; everything is borrowed for the duration of the callback. */
struct rn_cycle_report {
	const char *dir;               /* the watched directory (absolute) */
	const char *step;              /* the step: rn_watch_opts.step (the stream's step), else dir's last component */
	const char *name;              /* file name in dir */
	int n;                         /* cycle number from the name */
	const struct fg_cycle *cycle;  /* parsed and validated */
	const char *raw;               /* the file's exact bytes */
	size_t raw_len;
	enum rn_source source;
	int first;                     /* 1 when cycle n was never reported before by this source */
	int truncated;                 /* a frame's shortened form (stream only; raw is its JSON) */
	/* What its seal says (forge/seal.h): FG_SEAL_OK, FG_SEAL_UNVERIFIED
	 * (the source has no key: `watch`, `sweep` without --seal-key-file), or
	 * a forgery, which a sink never takes for a cycle (record_forged). */
	enum fg_seal_status seal;
};

struct rn_log;

/*
 * Whether report r of its cycle number may go on (1), given *reports, the
 * number of that number's contents reported so far (incremented when it
 * may). Past RN_CYCLE_MAX_REPORTS it may not (0): the first such report is
 * logged once as `cycle_rewrite_limit` (WARN: step, file, source, max),
 * the later ones are neither reported nor counted, silently. log may be
 * NULL.
 */
int rn_cycle_report_admit(struct rn_log *log, unsigned *reports, const struct rn_cycle_report *r);

#endif
