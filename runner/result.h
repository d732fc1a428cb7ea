/*
 * result.h - the run's detected cycles and the result file (--result).
 *
 * Result file (spec section 3), written atomically:
 *   {"success", "exit_code", "error_message", "step", "skill", "task_key",
 *    "run_id", "engine", "duration_seconds", "review_cycles": [...ordered by
 *    cycle], "review_exhausted", "review_state", "stale_files_cleared",
 *    "sweep_caught", "cycles_by_source": {"watch","poll","sweep","stream"},
 *    "forged_records", "isolation", "cycles_dropped"?, "questions"?, "advice"?,
 *    "usage"?, "audit"?, "failure"?: {"cause", "reason"}, "cycle_dir"?}
 * audit is the sealed summary's record of the held-out audit (forge/audit.h),
 * copied as it is: its usage is already in "usage", the step's totals.
 * cycle_dir is the step directory on the host (where the cycle files, the
 * logs and the diffs are), absent when the runner cannot see it.
 * failure says why a run that did not succeed ended (rn_failure_cause());
 * absent on success.
 * isolation is the box the agents ran in (forge/isolation.h): the sealed
 * summary's, else the entrypoint's isolation event frame's, else null (an entrypoint
 * that never said: another launcher, an older image, a run that failed
 * before it).
 * forged_records counts the records of the run whose seal did not verify
 * (record_forged: unsealed, bad_seal, replayed; forge/seal.h): none of them
 * is in review_cycles or decides review_state.
 * cycles_by_source counts the cycles reported (new numbers and rewrites) by
 * the source that reported each first.
 * review_state is one of the summary's names (fg_review_state_name(): the
 * result said "none" for no_review and disabled in older versions) and comes
 * from review_summary.json when it belongs to this run,
 * else it is derived from the cycles: no_review without cycles when the
 * sandbox exited 0 (failed when it did not: a crash, a timeout or a
 * configuration error is not "no review.md"), exhausted per
 * fg_cycles_exhausted(), stalled when the last cycle says so, approved when
 * the last cycle is approved, failed otherwise (the loop ended early: the
 * worker failed, a timeout, a signal).
 *
 * Bounds (the cycle files are written by an untrusted sandbox): the watch
 * tracks at most RN_WATCH_MAX_CYCLE_FILES cycle numbers per directory (it
 * counts the rest in `untracked`), and the cycle objects kept for
 * review_cycles cost at most RN_CYCLES_MAX_BYTES and RN_CYCLES_MAX_NODES in
 * all (so `report` can read every result: RN_RESULT_MAX_*): a cycle whose
 * content does not fit keeps its record (number, verdict, max_cycles,
 * stalled: the state derivation still sees it) but not its object. The
 * result then says "cycles_dropped": untracked numbers plus records without
 * an object; the field is absent when nothing was dropped.
 */
#ifndef RN_RESULT_H
#define RN_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cycle_report.h"
#include "forge/cycle.h"
#include "forge/summary.h"

struct cJSON;

/* 100 cycles (FG_MAX_RETRIES_LIMIT) of FG_FEEDBACK_MAX (256 KiB) feedback
 * with findings fit with room to spare; a sandbox writing 8 MiB cycles
 * cannot make the host keep more. */
#define RN_CYCLES_MAX_BYTES ((size_t)64 * 1024 * 1024)
/* At most this many cJSON nodes in the kept cycles (a node is at least
 * 64 bytes, so the byte bound alone allows about this many). */
#define RN_CYCLES_MAX_NODES ((size_t)1024 * 1024)

/*
 * What `report` accepts of a result file: everything the writer can
 * produce. The kept cycles print as at most RN_CYCLES_MAX_BYTES (their
 * cost bounds their text too) and at most 2 structural tokens per node
 * ('{' or '[', and ':' or ','); the result's own fields (the error message
 * of at most 8 KiB of output, the questions, the counters) add far less
 * than the margins.
 */
#define RN_RESULT_MAX_BYTES (RN_CYCLES_MAX_BYTES + (size_t)8 * 1024 * 1024)
#define RN_RESULT_MAX_TOKENS (2 * RN_CYCLES_MAX_NODES + (size_t)64 * 1024)

/* The latest reported content of one cycle number. */
struct rn_cycle_rec {
	struct fg_cycle c;    /* the fields the state derivation needs (no owned strings but skill,
			       * NULL when obj was dropped) */
	struct cJSON *obj;    /* owned: fg_cycle_to_cjson() of the content; NULL: dropped */
	size_t bytes;         /* what obj and skill cost (heap and printed text), 0 when dropped */
	size_t nodes;         /* cJSON nodes of obj, 0 when dropped */
	uint64_t h_full;      /* fingerprint of the whole content (unset when shortened) */
	uint64_t h_min;       /* fingerprint of fg_frame_cycle_min() of it */
	bool shortened;       /* only a truncated frame's form is known */
	enum rn_source source;  /* the source that reported this content first */
	unsigned reports;     /* contents reported for this number (rn_cycle_report_admit()) */
};

/* Cycles ordered by number; a newer content replaces an older one. */
struct rn_cycles {
	struct rn_cycle_rec *v;
	size_t n, cap;
	size_t bytes;         /* sum of v[].bytes, at most max_bytes */
	size_t max_bytes;     /* RN_CYCLES_MAX_BYTES, or the test-only lower bound */
	size_t nodes;         /* sum of v[].nodes, at most RN_CYCLES_MAX_NODES */
	size_t untracked;     /* cycle files the watch did not track (set by the session) */
};

/* Empty, with max_bytes = RN_CYCLES_MAX_BYTES. */
void rn_cycles_init(struct rn_cycles *s);
/*
 * Test-only: FORGE_TEST_CYCLES_MAX_BYTES (a byte count) lowers s->max_bytes,
 * so the memory-bound test fills the bound with a few MiB instead of
 * hundreds. It can never raise the bound; an unset, invalid or larger value
 * leaves it alone. Returns the bound in force.
 */
size_t rn_cycles_test_bound(struct rn_cycles *s);
void rn_cycles_release(struct rn_cycles *s);
/* What a cycle reported by some source means for what is stored. Every
 * source (watch, poll, sweep, stream) delivers into one rn_cycles, so one
 * cycle is reported once whichever source saw it first. */
enum rn_cycle_news {
	RN_CYCLE_NEW,       /* a number not stored yet: report it */
	RN_CYCLE_REWRITE,   /* a stored number with other content: report it again */
	RN_CYCLE_SAME,      /* the content stored (a shortened form matches its smallest form) */
	RN_CYCLE_FULLER,    /* the whole content of a cycle stored only in shortened form */
};

/* Compares c (shortened: it came in a truncated frame) with what is stored
 * for its number; *first_source (may be NULL) gets the stored content's
 * source, RN_SOURCE_NONE when none. */
enum rn_cycle_news rn_cycles_classify(const struct rn_cycles *s, const struct fg_cycle *c,
				      bool shortened, enum rn_source *first_source);
/* Stores (a copy of) c, replacing an earlier content of the same number;
 * source is kept as the content's first source.
 * Returns 0 when its object is kept, 1 when it did not fit in
 * s->max_bytes: then only its scalar fields are kept. */
int rn_cycles_put(struct rn_cycles *s, const struct fg_cycle *c, bool shortened,
		  enum rn_source source);
/* The count of contents reported for cycle n (rn_cycle_report_admit()), or
 * NULL when n is not stored: a stored number was reported once when first
 * put, and its count is kept across later contents. */
unsigned *rn_cycles_reports(struct rn_cycles *s, int n);
/* Cycle numbers detected but absent from review_cycles: s->untracked plus
 * the records whose object was dropped. */
size_t rn_cycles_dropped(const struct rn_cycles *s);
/* fg_cycles_exhausted() over the stored cycles. */
bool rn_cycles_exhausted(const struct rn_cycles *s);

/* review_state: summary may be NULL (absent or not ours). */
enum fg_review_state rn_review_state(const struct rn_cycles *s, const struct fg_summary *summary);
/*
 * review_exhausted of the result and the run_exit event: the state is
 * exhausted, or the state had a review that did not end approved (stalled,
 * blocked, over_budget, failed) and fg_cycles_exhausted() holds for the
 * cycles (a stall on the last allowed cycle). Never true with no_review,
 * disabled or approved: the state wins over cycle files that contradict it.
 */
bool rn_review_exhausted(enum fg_review_state state, const struct rn_cycles *s);

/* Why a run ended without success, by its own name: what the runner saw
 * itself first (timeout: its --timeout; engine_error: it or its engine
 * failed, exit 125; interrupted: its own stop signal), then the sealed
 * summary's cause (summary may be NULL), then the exit code (1
 * worker_failed, 2 config_error, 126, 127 engine_error, 128+N
 * interrupted). FG_CAUSE_NONE for exit 0 and for 3 (exhausted: the state
 * says it). */
enum fg_failure_cause rn_failure_cause(int exit_code, bool timed_out, bool runner_failed, int signal,
				       const struct fg_summary *summary);

struct rn_result {
	int exit_code;
	const char *error_message;   /* NULL: null */
	const char *step, *skill, *task_key, *run_id, *engine;  /* NULL: null */
	double duration_seconds;
	const struct rn_cycles *cycles;
	bool review_exhausted;
	enum fg_review_state review_state;
	long stale_files_cleared;
	long sweep_caught;
	const long *cycles_by_source;   /* RN_SOURCE_COUNT counts (cycle_report.h), or NULL: all 0 */
	const struct fg_finding *questions;  /* blocked: the summary's questions (borrowed) */
	size_t nquestions;              /* written as "questions" when > 0 */
	const struct fg_audit *audit;   /* the summary's audit (borrowed) or NULL: written as "audit" */
	const struct fg_finding *advice;  /* approved: the summary's advice findings (borrowed) */
	size_t nadvice;                 /* written as "advice" when > 0 */
	const struct fg_usage_pair *usage;  /* the step's agent usage totals, or NULL: none */
	long forged_records;            /* records not believed (record_forged) */
	const char *cycle_dir;          /* the step directory on the host ("cycle_dir"), or NULL */
	enum fg_failure_cause cause;    /* FG_CAUSE_NONE: no "failure" written */
	const char *failure_reason;     /* the failure's reason, or NULL */
	const struct fg_isolation *isolation;  /* NULL: null */
};

/* The agents' usage summed over the stored cycles (each cycle's worker and
 * reviewer runs): the step's totals when no summary gives them. */
void rn_cycles_usage(const struct rn_cycles *s, struct fg_usage_pair *out);

/* The result as JSON text (pretty, trailing newline). Owned. */
char *rn_result_to_json(const struct rn_result *r);
/* Writes the result atomically to path. 0 or negative errno. */
int rn_result_write(const char *path, const struct rn_result *r);

#endif
