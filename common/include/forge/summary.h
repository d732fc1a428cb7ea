/*
 * summary.h - review_summary.json, written once by the entrypoint when the
 * review phase ends (spec section 1):
 * {"state", "cycles", "max_cycles", "step", "skill", "task_key", "run_id",
 *  "review_md": path-or-null} plus, when an agent reported usage, the step's
 * totals "usage": {"worker": usage, "reviewer": usage} (usage.h; every run of
 * the step, the first worker run included) and, when a budget applied,
 * "max_cost_usd"; "questions" (blocked) and "advice" (approved with advice
 * findings only) list findings. Same atomic write rule as cycle files.
 */
#ifndef FORGE_SUMMARY_H
#define FORGE_SUMMARY_H

#include "forge/audit.h"
#include "forge/buf.h"
#include "forge/isolation.h"
#include "forge/phase.h"
#include "forge/usage.h"
#include "forge/verdict.h"

struct cJSON;

#define FG_SUMMARY_FILE "review_summary.json"
#define FG_SUMMARY_MAX_BYTES (64 * 1024)
/* Questions a blocked summary lists, each title and path cut to
 * FG_SUMMARY_TEXT_MAX bytes: far inside FG_SUMMARY_MAX_BYTES. */
#define FG_SUMMARY_QUESTIONS_MAX 50
#define FG_SUMMARY_TEXT_MAX 200

/* How a review phase ended: one name per state everywhere (summary, result,
 * logs, metrics, report). Programs keep the enum; the names appear only
 * where JSON or a log line is written or read (fg_review_state_name() and
 * fg_review_state_parse()). */
enum fg_review_state {
	FG_STATE_APPROVED,
	FG_STATE_EXHAUSTED,
	FG_STATE_STALLED,
	FG_STATE_BLOCKED,       /* a reviewer panel member blocked the change */
	FG_STATE_OVER_BUDGET,   /* the run's usage budget ran out */
	FG_STATE_FAILED,
	FG_STATE_DISABLED,      /* max_retries resolved to 0 */
	FG_STATE_NO_REVIEW,     /* no review.md applied */
	FG_STATE_AUDIT_REJECTED /* the loop approved, a blocking audit disagreed */
};
#define FG_STATE_COUNT (FG_STATE_AUDIT_REJECTED + 1)

/* Why a run that did not succeed ended, one name each (the summary's and
 * the result's "failure": {"cause", "reason"}; docs/reference/exit-codes.md).
 * FG_CAUSE_NONE: nothing to say, no "failure" member is written. */
enum fg_failure_cause {
	FG_CAUSE_NONE,
	FG_CAUSE_TIMEOUT,          /* the run's time ran out (exit 124) */
	FG_CAUSE_INTERRUPTED,      /* stopped by a signal (exit 128+N) */
	FG_CAUSE_WORKER_FAILED,    /* the worker failed (exit 1) */
	FG_CAUSE_REVIEWER_FAILED,  /* the review failed twice in a row (exit 1) */
	FG_CAUSE_CONFIG_ERROR,     /* a setup problem, nothing judged (exit 2) */
	FG_CAUSE_ENGINE_ERROR      /* the runner or its engine failed (exit 125) */
};
#define FG_CAUSE_COUNT (FG_CAUSE_ENGINE_ERROR + 1)

/* A failure's reason keeps at most this many bytes (cut on a UTF-8
 * boundary, scrubbed): the whole message, bounded. */
#define FG_FAILURE_REASON_MAX 4096

struct fg_summary {
	enum fg_review_state state;
	int cycles;
	int max_cycles;
	char *step;       /* owned */
	char *skill;      /* owned */
	char *task_key;   /* owned, "" when none */
	char *run_id;     /* owned, "" when none */
	char *review_md;  /* owned or NULL */
	struct fg_usage_pair usage;   /* the step's totals per role */
	double max_cost_usd;          /* < 0: no budget */
	struct fg_phase t;            /* the step as a whole: "started_at", "ended_at" */
	/* State blocked: the questions left for a person (owned, at most
	 * FG_SUMMARY_QUESTIONS_MAX, only role, severity, location and title
	 * kept); written as "questions" when nquestions > 0. */
	struct fg_finding *questions;
	size_t nquestions;
	size_t questions_alloc;       /* its capacity (FG_ALLOC_GROW) */
	/* State approved with findings that were all advice: those
	 * findings, listed, not looped on (same bounds and trimming); written
	 * as "advice" when nadvice > 0. */
	struct fg_finding *advice;
	size_t nadvice;
	size_t advice_alloc;          /* its capacity (FG_ALLOC_GROW) */
	/* The held-out audit's record (owned, NULL: no audit was asked for or
	 * the loop did not approve); written as "audit". */
	struct fg_audit *audit;
	enum fg_failure_cause cause;  /* FG_CAUSE_NONE: no "failure" written */
	char *reason;                 /* owned or NULL: the failure's reason */
	/* The box the agents ran in (isolation.h); written as "isolation"
	 * when known. */
	struct fg_isolation isolation;
};

/* "approved", "exhausted", "stalled", "blocked", "over_budget", "failed",
 * "disabled", "no_review", "audit_rejected" (static); "failed" for a value out of range. */
const char *fg_review_state_name(enum fg_review_state s);
/* The state named s (exactly one of the names above): 0, or -EINVAL with
 * *out untouched. */
int fg_review_state_parse(const char *s, enum fg_review_state *out);

/* "none", "timeout", "interrupted", "worker_failed", "reviewer_failed",
 * "config_error", "engine_error" (static); "none" out of range. */
const char *fg_failure_cause_name(enum fg_failure_cause c);
/* The cause named s: 0, or -EINVAL with *out untouched. */
int fg_failure_cause_parse(const char *s, enum fg_failure_cause *out);
/* Sets s's failure: cause and a copy of reason (borrowed, may be NULL)
 * bounded by FG_FAILURE_REASON_MAX and scrubbed to valid UTF-8. */
void fg_summary_set_failure(struct fg_summary *s, enum fg_failure_cause cause, const char *reason);
/* {"cause", "reason"} as a new cJSON object (owned by the caller), or NULL
 * when cause is FG_CAUSE_NONE. */
struct cJSON *fg_failure_to_cjson(enum fg_failure_cause cause, const char *reason);

void fg_summary_init(struct fg_summary *s);
void fg_summary_release(struct fg_summary *s);
/* Appends a trimmed copy of f to s->questions (role, severity, file, line,
 * title cut to FG_SUMMARY_TEXT_MAX on a UTF-8 boundary); ignored past
 * FG_SUMMARY_QUESTIONS_MAX. */
void fg_summary_add_question(struct fg_summary *s, const struct fg_finding *f);
/* The same for s->advice. */
void fg_summary_add_advice(struct fg_summary *s, const struct fg_finding *f);
/* Gives s a copy of a (replacing any audit it had). */
void fg_summary_set_audit(struct fg_summary *s, const struct fg_audit *a);
/* The summary as a new cJSON object (owned by the caller). */
struct cJSON *fg_summary_to_cjson(const struct fg_summary *s);
/* Parses and validates len bytes (the same rules as a file read). s must
 * be initialised: on 0 its earlier contents are released and it is filled;
 * on -EINVAL (err says why) it is left untouched. */
int fg_summary_parse(struct fg_summary *s, const char *data, size_t len, char *err, size_t errlen);
/* Writes dir/review_summary.json atomically (fsutil.h, FG_WRITE_CLEAR: what
 * stands under the name is cleared away first). 0 or negative errno. */
int fg_summary_write(const char *dir, const struct fg_summary *s);
/* The same, sealed with k (seal.h; NULL: unsealed) for s->run_id, s->step,
 * review_summary.json and cycle 0. */
struct fg_seal_key;
int fg_summary_write_sealed(const char *dir, const struct fg_summary *s,
			    const struct fg_seal_key *k);
/* Reads dir/review_summary.json safely. 0, -ENOENT, -EINVAL (err says why), -errno. */
int fg_summary_read(const char *dir, struct fg_summary *s, char *err, size_t errlen);
/* The same, relative to the directory descriptor dirfd (borrowed), for a
 * caller that reached the directory without following symlinks. */
int fg_summary_read_at(int dirfd, struct fg_summary *s, char *err, size_t errlen);
/* The same, raw (reset first, max at least FG_SUMMARY_MAX_BYTES) keeping the
 * exact bytes read, for a caller that checks the seal (seal.h). */
int fg_summary_read_raw_at(int dirfd, struct fg_summary *s, struct fg_buf *raw, char *err,
			   size_t errlen);

#endif
