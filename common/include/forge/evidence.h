/*
 * evidence.h - what a cycle rests on besides the reviewer's word: the
 * checks that ran, the change set, the "**Verified:**" lines, and the
 * advice-only and no-change markers. One struct embedded in
 * struct fg_cycle; its JSON members are optional fields of the cycle file
 * (docs/reference/cycle-files.md):
 *
 *   "checks":      [{"name", "exit_code", "duration_seconds", "output_tail",
 *                    "log", "timed_out"?}]   (exit_code -1: did not exit)
 *   "changes":     [{"path", "status", "old_path"?, "added"?, "deleted"?}]
 *                  status "added" | "modified" | "deleted" | "renamed";
 *                  added/deleted: lines, absent when unknown (binary files,
 *                  a workspace outside git)
 *   "changes_truncated": true when the list or the workspace was cut at a
 *                  bound (the list holds what fits)
 *   "changes_since": "step" | "review" (what the list is relative to)
 *   "diff":        file name of the unified diff beside the cycle file
 *   "no_change":   true: the worker turn changed nothing; no reviewer ran
 *   "advice_only": true: approved, every finding is advice (severity.h)
 *   "verified":    ["make test → 12 passed", ...]
 *   "reviewer_changed": ["src/a.c", ...]: the reviewer changed these files
 *                  (its review failed, the worker was told)
 *
 * Writing: each member only when set (has_checks, has_changes, non-NULL
 * diff, true flags, verified.n > 0). Reading: members of the wrong type
 * count as absent, entries without a name/path are skipped (a check's
 * name must be a slug of at most FG_CHECK_NAME_MAX bytes: it labels metrics), at most
 * FG_CHECKS_MAX checks, FG_CHANGES_MAX changes and FG_VERIFIED_MAX lines
 * are kept; a log or diff name that is not a plain file name is dropped.
 */
#ifndef FORGE_EVIDENCE_H
#define FORGE_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>

#include "forge/buf.h"
#include "forge/phase.h"

struct cJSON;

/* At most this many checks per review.md, each name a slug this long. */
#define FG_CHECKS_MAX 16
#define FG_CHECK_NAME_MAX 40
/* Bytes of a check's output kept in the cycle file and the prompts. */
#define FG_CHECK_TAIL_BYTES 2000
/* Files listed in a cycle's "changes" (the diff file holds the rest). */
#define FG_CHANGES_MAX 1000

struct fg_check_result {
	char name[FG_CHECK_NAME_MAX + 1];
	int exit_code;            /* -1: killed, timed out or did not start */
	bool timed_out;
	double duration_seconds;
	char *output_tail;        /* owned, never NULL once filled: last output bytes */
	char *log;                /* owned or NULL: file name beside the cycle file */
	struct fg_phase t;        /* "started_at", "ended_at" (phase.h) */
};

enum fg_change_status { FG_CHANGE_ADDED, FG_CHANGE_MODIFIED, FG_CHANGE_DELETED, FG_CHANGE_RENAMED };

struct fg_change {
	char *path;               /* owned, workspace-relative */
	char *old_path;           /* owned or NULL: renamed from */
	enum fg_change_status status;
	long added, deleted;      /* lines; -1 unknown */
};

struct fg_evidence {
	bool has_checks;
	struct fg_check_result *checks;   /* owned */
	size_t nchecks, checks_cap;
	bool has_changes;
	struct fg_change *changes;        /* owned */
	size_t nchanges, changes_cap;
	bool changes_truncated;
	bool since_review;                /* changes relative to the last reviewed state */
	char *diff;                       /* owned or NULL: file name */
	bool no_change;
	bool advice_only;
	struct fg_strvec verified;
	struct fg_strvec reviewer_changed;  /* paths a reviewer changed: its review failed */
};

void fg_evidence_init(struct fg_evidence *e);
void fg_evidence_release(struct fg_evidence *e);

/* "added", "modified", "deleted", "renamed"; parse: 0 or -EINVAL. */
const char *fg_change_status_name(enum fg_change_status s);
int fg_change_status_parse(const char *s, enum fg_change_status *out);

/* Appends a check result named name (copied, cut at FG_CHECK_NAME_MAX),
 * exit_code -1, output_tail "", and returns it (borrowed: valid until the
 * next append); has_checks is set. Past FG_CHECKS_MAX: NULL. */
struct fg_check_result *fg_evidence_add_check(struct fg_evidence *e, const char *name);
/* Appends a change (path and old_path copied; old_path may be NULL); past
 * FG_CHANGES_MAX it is dropped and changes_truncated set. */
void fg_evidence_add_change(struct fg_evidence *e, enum fg_change_status st, const char *path,
			    const char *old_path, long added, long deleted);

/* The first check result that failed (exit_code != 0), or NULL. Borrowed. */
const struct fg_check_result *fg_evidence_failed_check(const struct fg_evidence *e);

/* Owned "review_cycle_N.check.NAME.log": check NAME's output in cycle N. */
char *fg_check_log_name(int n, const char *name);
/* Owned "review_cycle_N.diff": the change set's unified diff of cycle N. */
char *fg_diff_name(int n);
/* 1 and *n set when name is one of the two above (N canonical, 1 ..
 * FG_CYCLE_NUMBER_MAX; NAME one or more bytes without '/'), else 0: the
 * files a run writes beside its cycle files (stale ones are cleared). */
int fg_evidence_file_name_parse(const char *name, int *n);

/* Adds "verified": [lines of v] to o (both borrowed), when v holds any. */
void fg_evidence_add_verified(struct cJSON *o, const struct fg_strvec *v);
/* Appends the strings of o's "verified" array (o borrowed; a missing or
 * mistyped member adds nothing, other entries are skipped) to v, until v
 * holds FG_VERIFIED_MAX lines. */
void fg_evidence_read_verified(struct fg_strvec *v, const struct cJSON *o);
/* Appends each line of src not already in dst to dst, until dst holds
 * FG_VERIFIED_MAX lines (a panel's roles into their cycle's "verified"). */
void fg_evidence_merge_verified(struct fg_strvec *dst, const struct fg_strvec *src);
/* Adds e's members to the cycle object o (borrowed). */
void fg_evidence_add_to(struct cJSON *o, const struct fg_evidence *e);
/* Fills e (released first) from the cycle object o (borrowed). */
void fg_evidence_from(struct fg_evidence *e, const struct cJSON *o);

#endif
