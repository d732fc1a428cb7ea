/*
 * reviewmd_internal.h - what the files of the review.md parser share
 * (not installed):
 *   reviewmd.c         the whole file's checks, the split into frontmatter
 *                      and body, the settings with their environment, the API;
 *   reviewmd_yaml.c    the walker over libyaml's events, its value helpers,
 *                      the loops over a mapping's pairs and a list's items,
 *                      the scalar fields and the root mapping's field table;
 *   reviewmd_panel.c   reviewers: entries and the role files;
 *   reviewmd_checks.c  checks: entries;
 *   reviewmd_audit.c   audit: and its instructions file.
 * Each reader of a field is called with its value as the walker's current
 * event and leaves the rest of the walk to its caller.
 */
#ifndef FORGE_REVIEWMD_INTERNAL_H
#define FORGE_REVIEWMD_INTERNAL_H

#include <stddef.h>
#include <yaml.h>

#include "forge/diag.h"
#include "forge/evidence.h"
#include "forge/reviewmd.h"
#include "forge/text.h"

/* First line of the frontmatter text inside the file (line 1 is "---"). */
#define FM_FIRST_LINE 2
/* Longest key read as written (longer ones are unknown anyway, shown cut);
 * the longest compared for "did you mean" too. */
#define FG__RMD_KEY_MAX FG_EDIT_MAX

/* How much of an offending value a message echoes. */
#define SHOW_MAX 40

/* A role path as written; longer ones are refused. */
#define ROLE_FILE_MAX 255

/* One reviewers: entry that passed the syntactic checks. */
struct fm_reviewer {
	char role[FG_ROLE_MAX + 1];
	char file[ROLE_FILE_MAX + 1];   /* "" when the entry names no file */
	int line;
};

/* One checks: entry that passed the checks (reviewmd_checks.c). */
struct fm_check {
	char name[FG_CHECK_NAME_MAX + 1];
	char run[FG_CHECK_RUN_MAX + 1];
	long timeout;
	int line;
};

/* What the frontmatter set, before the environment is applied. Plain data
 * (no owned pointers): it is copied and reset freely. */
struct fm_fields {
	int has_retries;
	long retries;
	int retries_line;    /* line of the first max_retries key, for duplicates */
	int has_stalled;
	int stalled;
	int stalled_line;
	int has_reviewers;   /* a reviewers: list was given (maybe with no valid entry) */
	int reviewers_line;
	size_t nrev;
	struct fm_reviewer rev[FG_REVIEWERS_MAX];
	int has_rereview;
	int rereview;
	int rereview_line;
	int has_cost;
	double cost;
	int cost_line;
	int has_checks;      /* a checks: list was given */
	int checks_line;
	size_t nchecks;
	struct fm_check checks[FG_CHECKS_MAX];
	int has_evidence;
	int evidence;
	int evidence_line;
	int has_audit;       /* a valid audit: mapping was given */
	int audit_line;
	char audit_file[ROLE_FILE_MAX + 1];   /* "" when it names none */
	double audit_sample;
	int audit_blocks;
	int agent_env_line;
	size_t nagent_env;
	char agent_env[FG_AGENT_ENV_MAX][FG_AGENT_ENV_NAME_MAX + 1];
};

/* State of one walk over the frontmatter's YAML events. */
struct walker {
	yaml_parser_t parser;
	yaml_event_t ev;
	int have_ev;          /* ev holds an event that must be deleted */
	int failed;           /* the YAML is malformed */
	int lint;             /* add advice (unknown fields, duplicates) */
	long depth;           /* open collections around the current event */
	long events;          /* events read so far */
	const char *limit;    /* set when a bound below stopped the walk */
	struct fm_fields f;
	struct fg_diags diags; /* kept only if the whole frontmatter parses */
};

/* The first SHOW_MAX bytes of s[0..n) for a message, control characters
 * as '?', "..." when cut, into out (outlen >= SHOW_MAX + 4). */
void fg__rmd_show(const char *s, size_t n, char *out, size_t outlen);
/* The review.md line of an event. */
int fg__rmd_ev_line(const yaml_event_t *ev);
/* The next event into w->ev; 0 when the YAML is malformed or past a bound. */
int fg__rmd_next_event(struct walker *w);
/* Skips the node that starts with the current event; 0 as next_event. */
int fg__rmd_skip_node(struct walker *w);
/* What the current node is, for messages ("a quoted string", ...). */
const char *fg__rmd_node_kind(const yaml_event_t *ev, const char *ok_tag);
/* An error-level "invalid 'field' value ... expected ...; ignored". */
void fg__rmd_bad_value(struct walker *w, const char *field, const char *kind, const char *expect);
/* An untagged (or !!bool) plain YAML 1.2 boolean into *has and *val (an
 * error-level diagnostic naming field otherwise, *has 0). */
void fg__rmd_take_bool(struct walker *w, const char *field, int *has, int *val);
/* A plain or !!str scalar copied into out (cut at outlen - 1): its full
 * length, or -1 when the event is no string. */
long fg__rmd_str_value(const yaml_event_t *ev, char *out, size_t outlen);

/* An unknown key of a list entry (where: "checks", "reviewers"): "did you
 * mean" the field of alias (pairs {word other tools use, our field}) or of
 * known within two edits, said at run time too (a "name:" for "role:" is
 * otherwise only a role missing); other keys a warning in lint only. */
void fg__rmd_unknown_key(struct walker *w, const char *key, int line, const char *where,
			 const char *const (*alias)[2], size_t nalias, const char *const *known, size_t nknown);

/* Walks the pairs of the mapping whose start is the current event, calling
 * pair(w, key, key_line, ctx) with the value as the current event (pair
 * skips it). A key is read as written, one longer than FG__RMD_KEY_MAX
 * shown cut ("..."); a key that is no scalar is "" (and, in lint, a warning).
 * 1 at the mapping's end, 0 when the YAML is malformed or pair returned 0. */
int fg__rmd_each_pair(struct walker *w, int (*pair)(struct walker *, const char *, int, void *), void *ctx);
/* The list field whose value is the current event: item(w) for each item
 * (the item's first event current; 0 stops the walk), and 1; a value that is
 * no list is an error-level "invalid 'field' value ... expected expect" and 0. */
int fg__rmd_each_item(struct walker *w, const char *field, const char *expect, int (*item)(struct walker *));

/* Reads the fields of the frontmatter text fm into *f (reviewmd_yaml.c); on
 * malformed YAML, *f stays empty and the only diagnostic is the YAML error
 * (field errors before it would mislead). Diagnostics are added to out. */
void fg__rmd_parse_frontmatter(struct fg_diags *out, const char *fm, size_t len, int lint,
			       struct fm_fields *f);
/* Adds a copy of every diagnostic of from to to. */
void fg__rmd_move_diags(struct fg_diags *to, const struct fg_diags *from);

/* Adds an error and returns 1 when data cannot be a review.md (too large, a
 * NUL byte, not UTF-8), so that the caller treats it as empty (reviewmd.c). */
int fg__rmd_content_refused(struct fg_diags *d, const char *data, size_t len);
/* The instructions of a body (owned): leading blank lines and trailing
 * whitespace dropped, CRLF turned into LF. */
char *fg__rmd_make_instructions(const char *p, size_t len);

/* reviewers: a list of {role, instructions} (reviewmd_panel.c). */
void fg__rmd_take_reviewers(struct walker *w);
/* Copies the panel of f into c, rereview included (reviewmd_panel.c). */
void fg__rmd_apply_panel(struct fg_review_config *c, const struct fm_fields *f);
/* Reads every role file of c, relative to the directory of review.md (path);
 * a role whose file cannot be used is dropped with an error. */
void fg__rmd_load_role_files(struct fg_review_config *c, const char *path);
/* A panel given whose entries were all skipped is no panel: a warning. */
void fg__rmd_finish_panel(struct fg_review_config *c);

/* Why a path written in review.md for a file beside it (a role's, the
 * audit's) could lead out of its directory, or NULL (reviewmd_panel.c). */
const char *fg__rmd_path_problem(const char *p);
/* Reads file (a path fg__rmd_path_problem() accepted) below the directory
 * dirfd, never following a symlink, into *text (owned, instructions made
 * as for the body): 0, or -1 after an error at line "SUBJECT refused: WHY;
 * CONSEQUENCE" (reviewmd_panel.c). */
int fg__rmd_read_beside(struct fg_review_config *c, int dirfd, const char *file, int line,
			const char *subject, const char *consequence, char **text);

/* audit: a mapping of {instructions, sample, blocks} (reviewmd_audit.c). */
void fg__rmd_take_audit(struct walker *w);
/* Copies the audit of f into c (reviewmd_audit.c). */
void fg__rmd_apply_audit(struct fg_review_config *c, const struct fm_fields *f);
/* Reads the audit's instructions file beside review.md (path); one that
 * cannot be used is an error, and the audit runs with its prompt alone. */
void fg__rmd_load_audit_file(struct fg_review_config *c, const char *path);

/* checks: a list of {name, run, timeout_seconds} (reviewmd_checks.c). */
void fg__rmd_take_checks(struct walker *w);
/* A warning for each check of c naming a {skill_dir} path that does not
 * exist beside review.md (path) (reviewmd_checks.c). */
void fg__rmd_check_skill_paths(struct fg_review_config *c, const char *path);
/* Copies the checks of f into c (reviewmd_checks.c). */
void fg__rmd_apply_checks(struct fg_review_config *c, const struct fm_fields *f);

#endif
