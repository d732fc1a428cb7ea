/*
 * cycle.h - review_cycle_N.json files (spec section 1).
 *
 * Required fields: cycle (int >= 1), max_cycles (int >= 1), verdict
 * ("approved"|"rejected"), feedback (string), skill (string),
 * elapsed_seconds (number >= 0), timestamp ("YYYY-MM-DDTHH:MM:SSZ").
 * Optional: run_id, synthetic, format, findings, reviewer_log, stalled,
 * reviews (a panel's per-role reviews, below), over_budget, reask, usage
 * ({"worker": usage, "reviewer": usage}, usage.h), denied_tools
 * ({"worker": [names], "reviewer": [names]}, denied.h), and the evidence
 * (evidence.h): checks, changes, changes_truncated, changes_since, diff,
 * no_change, advice_only, verified, reviewer_changed; the phase times
 * (phase.h): worker_run, reviewer_runs, and each review's runs.
 * Readers tolerate and ignore unknown fields.
 *
 * Validation (fg_cycle_parse): required fields are checked in the order
 * above and the first problem is reported. Integers must be integral JSON
 * numbers (1.5, "1", true, null are refused; 2.0 and 2e0 are 2, JSON does
 * not tell them apart); cycle is at most FG_CYCLE_NUMBER_MAX, max_cycles
 * at most INT_MAX. verdict is exactly "approved" or "rejected" (case
 * matters). elapsed_seconds is a finite number >= 0. timestamp must pass
 * fg_time_iso_valid(). An optional field of the wrong type, or with a value
 * we do not know (format "telepathy"), counts as absent; it never makes the
 * cycle invalid. reviewer_log is kept only when it is a plain file name (no
 * '/', not "." or ".."), since readers open it next to the cycle file.
 *
 * Writing: required fields always; run_id when non-NULL, synthetic,
 * stalled, over_budget and reask only when true, usage when a role reported
 * anything, denied_tools when a role was refused a tool, format when has_format, findings when has_findings (possibly
 * []), reviewer_log when non-NULL, reviews when has_reviews. elapsed_seconds is
 * rounded to milliseconds; a non-finite or negative value is written as 0 so
 * that what we write always reads back.
 *
 * The canonical file name is "review_cycle_N.json", N in decimal without
 * leading zeros; other names (review_cycle_01.json, review_cycle_x.json)
 * are not cycle files.
 */
#ifndef FORGE_CYCLE_H
#define FORGE_CYCLE_H

#include <stdbool.h>
#include <stddef.h>

#include "forge/buf.h"
#include "forge/denied.h"
#include "forge/evidence.h"
#include "forge/phase.h"
#include "forge/reviewmd.h"
#include "forge/seal.h"
#include "forge/timeutil.h"
#include "forge/usage.h"
#include "forge/verdict.h"

#define FG_CYCLE_MAX_BYTES (8 * 1024 * 1024)
#define FG_CYCLE_NUMBER_MAX 100000
/* Largest elapsed_seconds read (about 31 years): a number in range. */
#define FG_CYCLE_ELAPSED_MAX 1e9

/*
 * One role's review inside a cycle of a panel (the "reviews" array):
 * {role, verdict, format, feedback, findings, elapsed_seconds, reviewer_log,
 * usage, denied_tools: [names] when its CLI refused a tool (denied.h),
 * runs: its calls in this cycle with their times (phase.h),
 * verified: its "**Verified:**" lines (evidence.h; the cycle's "verified"
 * merges those of the roles that ran in it)}
 * plus "failed": true when the reviewer could not complete and
 * "from_cycle": K when the role was not run in this cycle and its review of
 * cycle K stands. Reading: an entry without a valid role slug or verdict is
 * skipped; other members of the wrong type count as absent; at most
 * FG_REVIEWERS_MAX entries are kept.
 */
enum fg_role_verdict { FG_ROLE_APPROVED, FG_ROLE_REJECTED, FG_ROLE_OUT_OF_SCOPE };

struct fg_review {
	char role[FG_ROLE_MAX + 1];
	/* verdict (rejected, or approved with out_of_scope telling the two
	 * approvals apart: fg_review_verdict()), format, feedback (owned,
	 * never NULL once filled), findings (owned; each carries role) */
	struct fg_judgement j;
	bool failed;                     /* crashed, timed out, printed nothing */
	int from_cycle;                  /* 0: reviewed in this cycle */
	double elapsed_seconds;
	char *reviewer_log;              /* owned or NULL: file name in the same dir */
	struct cJSON *usage;             /* owned or NULL: the agent's usage object, as is */
	bool reask;                      /* this role was asked again for a verdict */
	struct fg_strvec denied;         /* tools its CLI refused ("denied_tools", denied.h) */
	struct fg_agent_runs runs;       /* its calls in this cycle, re-asks included (phase.h) */
};

/* "approved", "rejected", "out_of_scope"; parse: 0 or -EINVAL. */
const char *fg_role_verdict_name(enum fg_role_verdict v);
int fg_role_verdict_parse(const char *s, enum fg_role_verdict *out);
/* r's verdict as the "reviews" array spells it: rejected, out_of_scope
 * (approved with j.out_of_scope) or approved. */
enum fg_role_verdict fg_review_verdict(const struct fg_review *r);
/* Sets r->j.verdict and r->j.out_of_scope to say v. */
void fg_review_set_verdict(struct fg_review *r, enum fg_role_verdict v);

void fg_review_init(struct fg_review *r);
void fg_review_release(struct fg_review *r);
/* Deep copy of src into dst (initialised; its contents are released first). */
void fg_review_copy(struct fg_review *dst, const struct fg_review *src);
/* The review as a new cJSON object (owned); from_cjson fills r (released
 * first) from o (borrowed): 0, or -EINVAL when o is no valid review. */
struct cJSON *fg_review_to_cjson(const struct fg_review *r);
int fg_review_from_cjson(struct fg_review *r, const struct cJSON *o);

struct fg_cycle {
	int cycle;
	int max_cycles;
	/* verdict, feedback (owned, never NULL once filled), and the optional
	 * format and findings; j.out_of_scope is not written */
	struct fg_judgement j;
	char *skill;                     /* owned */
	double elapsed_seconds;
	char timestamp[FG_TIMESTAMP_LEN];
	/* optional */
	char *run_id;                    /* owned or NULL */
	bool synthetic;
	bool stalled;                    /* the loop stopped here: same findings twice */
	char *reviewer_log;              /* owned or NULL: file name in the same dir */
	bool has_reviews;                /* a panel reviewed: reviews[] is written */
	struct fg_review *reviews;       /* owned, in panel order */
	size_t nreviews;
	bool over_budget;                /* the loop stopped here: the cost budget was spent */
	bool reask;                      /* the reviewer was asked again for a verdict */
	struct fg_usage_pair usage;      /* the worker run before this review, the reviewer's */
	struct fg_evidence ev;           /* checks, changes, diff, no_change, advice_only,
	                                  * verified (evidence.h) */
	struct fg_denied denied;         /* tools refused to the same two runs */
	struct fg_agent_run worker_run;  /* the worker turn before this review ("worker_run", phase.h) */
	struct fg_agent_runs reviewer_runs;  /* the single reviewer's calls ("reviewer_runs") */
	/* Not written: the single reviewer could not complete (crashed, printed
	 * nothing, changed the workspace). A panel's cycle keeps it in its
	 * reviews' failed instead; the entrypoint reads both through
	 * ep_panel_any_failed(). */
	bool reviewer_failed;
};

void fg_cycle_init(struct fg_cycle *c);
void fg_cycle_release(struct fg_cycle *c);

/* 1 and *n set if name is a canonical "review_cycle_N.json" with
 * 1 <= N <= FG_CYCLE_NUMBER_MAX, else 0. */
int fg_cycle_name_parse(const char *name, int *n);
/* Owned "review_cycle_N.json". */
char *fg_cycle_file_name(int n);

/* Owned "review_cycle_N.reviewer.log" (role NULL) or, for one role of a
 * reviewer panel, "review_cycle_N.ROLE.reviewer.log": the reviewer's raw
 * output of cycle N, next to the cycle file. */
char *fg_reviewer_log_name(int n, const char *role);
/*
 * 1 and *n set if name is a reviewer log of ours: "review_cycle_N.reviewer.log"
 * or, for a reviewer panel, "review_cycle_N.ROLE.reviewer.log" (ROLE one
 * or more bytes without '/'), N canonical as in fg_cycle_name_parse(); else 0.
 */
int fg_reviewer_log_name_parse(const char *name, int *n);

/*
 * Where a step's cycle files live, relative to the workspace. The one place
 * the directory is built: both programs call it (the runner's --cycle-dir
 * and the entrypoint's FORGE_CYCLE_DIR are its template).
 */
#define FG_CYCLE_DIR_DEFAULT ".forge/{step}"

/* What a template's placeholders stand for; each a valid name (names.h),
 * task_key and skill NULL or "" when there is none. */
struct fg_cycle_dir_vars {
	const char *step;       /* {step} */
	const char *task_key;   /* {task_key} */
	const char *skill;      /* {skill} */
};

/*
 * Expands tmpl (NULL: FG_CYCLE_DIR_DEFAULT) with v into *out (owned,
 * workspace-relative), e.g. ".forge/reviews/{task_key}__{skill}" ->
 * ".forge/reviews/DEMO-1__implement-task". Returns 0, or -EINVAL with err
 * filled (*out untouched) when the template has an unknown placeholder, a
 * '{' or '}' outside one, a control character, or a placeholder whose value
 * is missing, or when the result is empty, absolute, has an empty, "." or
 * ".." component, or is longer than PATH_MAX. The result can then only
 * name a directory below the workspace as long as no component is a
 * symlink: callers open it with fg_open_beneath(), which refuses those.
 */
int fg_cycle_dir(const char *tmpl, const struct fg_cycle_dir_vars *v, char **out, char *err,
		 size_t errlen);

/* The cycle as a new cJSON object (owned by the caller). */
struct cJSON *fg_cycle_to_cjson(const struct fg_cycle *c);
/* The cycle serialised (pretty-printed, trailing newline); owned string. */
char *fg_cycle_to_json(const struct fg_cycle *c);

/*
 * Parses and validates len bytes. On 0, c is filled (c must be initialised;
 * earlier contents are released). On -EINVAL, err says why ("missing field
 * 'verdict'", "field 'cycle' must be an integer >= 1", "not valid JSON")
 * and c is left initialised-empty.
 */
int fg_cycle_parse(struct fg_cycle *c, const char *data, size_t len, char *err, size_t errlen);

/*
 * Writes dir/review_cycle_{c->cycle}.json atomically (fsutil.h); _at in
 * the directory dirfd (borrowed).
 * Returns 0, -EINVAL when c->cycle is outside 1..FG_CYCLE_NUMBER_MAX
 * (nothing written), or a negative errno from fg_write_atomic().
 */
int fg_cycle_write(const char *dir, const struct fg_cycle *c);
int fg_cycle_write_at(int dirfd, const struct fg_cycle *c);
/* The same, sealed with k (seal.h; NULL: unsealed, as above) for step,
 * the cycle's run id, its file name and number. */
int fg_cycle_write_sealed(const char *dir, const struct fg_cycle *c, const struct fg_seal_key *k,
			  const char *step);
int fg_cycle_write_sealed_at(int dirfd, const struct fg_cycle *c, const struct fg_seal_key *k,
			     const char *step);
/*
 * The seal of cycle file name (number n) of step, read as c from the len
 * bytes raw, checked with k (NULL: unverified) for that place and the
 * cycle's own run id; "replayed" when it is good for the number c says
 * (seal.h).
 */
enum fg_seal_status fg_cycle_seal_check(const struct fg_seal_key *k, const char *step, const char *name, int n,
			const struct fg_cycle *c, const char *raw, size_t len);

/*
 * Reads and parses dir/name safely (fg_read_file_at with FG_CYCLE_MAX_BYTES).
 * raw (may be NULL) is reset, then receives the exact bytes whenever the
 * read succeeded, even when the content is invalid (so a caller can report
 * or fingerprint it); after a read error it is empty. Returns 0, -EINVAL
 * (invalid content, or not a regular file; err says which) or the other
 * fg_read_file_at() errors (err says why). On any failure c is released to
 * initialised-empty, never left holding an earlier cycle.
 */
int fg_cycle_read_at(int dirfd, const char *name, struct fg_cycle *c, struct fg_buf *raw,
		     char *err, size_t errlen);

/* One entry of a directory listing. */
struct fg_cycle_entry {
	int n;
	char *name;   /* owned */
};

/*
 * Lists the canonical cycle file names in the directory dirfd (borrowed;
 * read through a duplicate from its beginning, whatever read dirfd
 * before), any file type (callers filter when reading), sorted by N
 * ascending. *out is an owned array (free with fg_cycle_entries_free).
 * Returns 0, or a negative errno (a listing's read error included: a listing
 * cut short is never passed off as complete); *out and *count are then
 * untouched.
 */
int fg_cycle_list_at(int dirfd, struct fg_cycle_entry **out, size_t *count);
void fg_cycle_entries_free(struct fg_cycle_entry *e, size_t count);

/* Exhausted: the last cycle (highest number) is rejected and cycle >= max_cycles
 * (its own max_cycles). cycles need not be sorted; among equal numbers the
 * later element counts. synthetic plays no part. false when n == 0. */
bool fg_cycles_exhausted(const struct fg_cycle *cycles, size_t n);

/*
 * The run id rule every reader of cycles applies (the watch, the stream,
 * `sweep --run-id`): a record with run id got belongs to the run expected
 * when nothing is expected (expected NULL), when it carries no run id (got
 * NULL: pass NULL for a frame's empty run id), or when the two are equal.
 * Both borrowed.
 */
bool fg_run_id_accepts(const char *expected, const char *got);

#endif
