/*
 * reviewmd.h - the review.md format (docs/reference/review-md-schema.md).
 *
 * A review.md is optional YAML frontmatter followed by Markdown instructions:
 *   - the opening "---" must be the very first line (no BOM-less leading
 *     whitespace or blank lines); the closing "---" stands on its own line;
 *     CRLF line ends work; a file that opens with "---" and never closes it
 *     has no frontmatter (warning) and is instructions as a whole;
 *   - known fields: max_retries (YAML integer >= 0), stop_when_stalled (YAML
 *     bool), reviewers (a list of {role, instructions}: the reviewer panel),
 *     rereview ("rejected" or "all"), max_cost_usd (YAML number, 0 ..
 *     FG_MAX_COST_USD_LIMIT), require_evidence (YAML bool, default false:
 *     an approval needs a "**Verified:**" line or a passing check), checks
 *     (a list of {name, run, timeout_seconds}: name a slug like a role,
 *     unique; run a non-empty command line that fg_cmdline_split() accepts,
 *     at most FG_CHECK_RUN_MAX bytes; timeout_seconds a plain integer
 *     1..FG_CHECK_TIMEOUT_MAX, default FG_CHECK_TIMEOUT_DEFAULT; an invalid
 *     entry is an error-level diagnostic and is skipped, as are entries past
 *     FG_CHECKS_MAX), agent_env (a list of environment variable names,
 *     [A-Za-z_][A-Za-z0-9_]* of at most FG_AGENT_ENV_NAME_MAX bytes, at
 *     most FG_AGENT_ENV_MAX: variables the agents get from the entrypoint's
 *     environment beside their allow-list; an invalid name is an
 *     error-level diagnostic and is skipped); unknown fields are ignored (one within
 *     FG_REVIEWMD_TYPO_DISTANCE edits of a known field with a "did you mean"
 *     warning); a field of the wrong type is a warning and falls back;
 *     malformed YAML (also: nested deeper than FG_REVIEWMD_MAX_DEPTH or more
 *     than FG_REVIEWMD_MAX_EVENTS events) is a warning, defaults are used and
 *     the body is still the instructions;
 *   - a file over FG_REVIEWMD_MAX_BYTES, unreadable, not UTF-8 or holding a
 *     NUL byte is treated as an empty file with a warning saying why; review
 *     is never skipped because the configuration is broken.
 *
 * max_retries priority: AUTO_REVIEW_MAX_RETRIES=0 disables review whatever
 * the frontmatter says; else a valid frontmatter value; else a valid
 * AUTO_REVIEW_MAX_RETRIES (an invalid one is ignored with a warning); else 3.
 * stop_when_stalled: frontmatter, else AUTO_REVIEW_STOP_WHEN_STALLED, else false.
 *
 * The panel (reviewers:): each entry needs a role, a slug [a-z0-9][a-z0-9-]*
 * of at most FG_ROLE_MAX bytes, unique in the list; instructions is optional,
 * a relative path to a file beside review.md that stays inside review.md's
 * directory (no absolute path, no "..", no symlink on the way). An invalid
 * entry is an error-level diagnostic and is skipped; entries past
 * FG_REVIEWERS_MAX are skipped the same way; a list left without any valid
 * entry means one reviewer, as without the field. Role files are read only
 * by fg_review_config_load() (fg_review_config_parse() has no directory):
 * a role file that cannot be read, escapes the directory or is not UTF-8
 * text skips its role with a diagnostic.
 *
 * max_cost_usd: a valid frontmatter value, else a valid
 * AUTO_REVIEW_MAX_COST_USD (an invalid one is ignored with a warning), else
 * no budget (-1).
 */
#ifndef FORGE_REVIEWMD_H
#define FORGE_REVIEWMD_H

#include <stdbool.h>
#include <stddef.h>

#include "forge/diag.h"
#include "forge/evidence.h"

#define FG_REVIEWMD_MAX_BYTES (1024 * 1024)
/* Bounds on the frontmatter's YAML (a real one has a few dozen events):
 * past either the frontmatter is malformed (fields ignored, defaults used,
 * body kept), found in milliseconds whatever follows. */
#define FG_REVIEWMD_MAX_DEPTH 64
#define FG_REVIEWMD_MAX_EVENTS 10000
/* An unknown field this many edits or fewer from a known one is taken for
 * a typo: a warning with "did you mean" at run time and in config too (other
 * unknown fields stay silent outside lint, for forward compatibility). */
#define FG_REVIEWMD_TYPO_DISTANCE 3
#define FG_DEFAULT_MAX_RETRIES 3
#define FG_MAX_RETRIES_LIMIT 100
/* At most this many roles in a panel, and this long a role slug. */
#define FG_REVIEWERS_MAX 8
#define FG_ROLE_MAX 40
#define FG_MAX_COST_USD_LIMIT 1000000
/* A check's command line (checks:) is at most this long; its timeout is
 * 1..FG_CHECK_TIMEOUT_MAX seconds, FG_CHECK_TIMEOUT_DEFAULT when absent. */
#define FG_CHECK_RUN_MAX 2048
#define FG_CHECK_TIMEOUT_MAX 86400
#define FG_CHECK_TIMEOUT_DEFAULT 600

/* Where the resolved max_retries came from. */
enum fg_retries_source {
	FG_RETRIES_DEFAULT,
	FG_RETRIES_ENV,
	FG_RETRIES_FRONTMATTER,
	FG_RETRIES_ENV_DISABLED  /* AUTO_REVIEW_MAX_RETRIES=0 */
};

/* The environment the parser honours; NULL members mean "unset". Borrowed. */
struct fg_review_env {
	const char *max_retries;        /* AUTO_REVIEW_MAX_RETRIES */
	const char *stop_when_stalled;  /* AUTO_REVIEW_STOP_WHEN_STALLED */
	const char *max_cost_usd;       /* AUTO_REVIEW_MAX_COST_USD */
};

/* Which roles run again from cycle 2 on (review.md "rereview"). */
enum fg_rereview {
	FG_REREVIEW_REJECTED,   /* only roles whose last review rejected or failed (default) */
	FG_REREVIEW_ALL         /* every role, every cycle */
};

/* One role of a panel. */
struct fg_reviewer {
	char role[FG_ROLE_MAX + 1];
	char *instructions_file;         /* owned: the path as written, or NULL */
	char *instructions;              /* owned: the role file's text ("" when none) */
	int line;                        /* line of the entry in review.md */
};

/* One check (checks:): a command run in the workspace after every worker
 * turn, before any reviewer. */
struct fg_check {
	char name[FG_CHECK_NAME_MAX + 1];   /* a slug, unique in the list */
	char *run;                          /* owned: the command line, agents' syntax */
	int timeout_s;
	int line;                           /* line of the entry in review.md */
};

/* review.md agent_env: at most this many names, each at most this long. */
#define FG_AGENT_ENV_MAX 32
#define FG_AGENT_ENV_NAME_MAX 64

struct fg_review_config {
	int max_retries;                 /* resolved; 0 means review disabled */
	enum fg_retries_source source;
	bool stop_when_stalled;
	double max_cost_usd;             /* resolved step budget in US dollars; < 0: none */
	bool has_frontmatter;
	char *instructions;              /* owned, never NULL after parse ("" when none) */
	struct fg_reviewer reviewers[FG_REVIEWERS_MAX];  /* the panel's valid roles */
	size_t nreviewers;               /* 0: one reviewer, role "default" (no panel) */
	enum fg_rereview rereview;
	bool panel_given;                /* the frontmatter had a reviewers: list */
	bool require_evidence;           /* an approval needs a Verified line or a passing check */
	struct fg_check checks[FG_CHECKS_MAX];   /* the valid checks, in order */
	size_t nchecks;
	char agent_env[FG_AGENT_ENV_MAX][FG_AGENT_ENV_NAME_MAX + 1];  /* agent_env: the valid names */
	size_t nagent_env;
	struct fg_diags diags;           /* warnings (and, for lint, errors) with line numbers */
};

/* Fills env from getenv(). */
void fg_review_env_from_environ(struct fg_review_env *env);

void fg_review_config_init(struct fg_review_config *c);
void fg_review_config_release(struct fg_review_config *c);

/*
 * Parses len bytes of review.md content (data NULL: empty). c must have been
 * initialised; whatever it held is released first, so a config can be
 * parsed again. env may be NULL (nothing set).
 * Always succeeds for any input (problems become diagnostics): returns 0.
 * Diagnostics that lint must treat as errors are FG_DIAG_ERROR (invalid
 * max_retries type, malformed YAML, binary/oversized content, unclosed
 * frontmatter); those that are only advice are FG_DIAG_WARNING.
 */
int fg_review_config_parse(struct fg_review_config *c, const char *data, size_t len,
			   const struct fg_review_env *env);

/*
 * Reads path (a regular file, at most FG_REVIEWMD_MAX_BYTES) and parses it.
 * An unreadable file is treated as empty with a diagnostic; returns 0 then
 * too. Returns -ENOENT only when the file does not exist; c is then filled
 * as for an empty file, with the diagnostic "file does not exist".
 * Symlinks are followed (the resolver checks where they lead).
 */
int fg_review_config_load(struct fg_review_config *c, const char *path,
			  const struct fg_review_env *env);

/*
 * Lints one review.md (path, used for messages and the name check: it must
 * be exactly "review.md"). Appends diagnostics with line numbers to out.
 * Returns the number of errors appended.
 */
size_t fg_review_lint_file(const char *path, struct fg_diags *out);

/* 1 when s is a valid role slug ([a-z0-9][a-z0-9-]*, 1..FG_ROLE_MAX bytes). */
int fg_role_valid(const char *s);

/* 1 when s is a valid environment variable name for agent_env
 * ([A-Za-z_][A-Za-z0-9_]*, 1..FG_AGENT_ENV_NAME_MAX bytes). */
int fg_env_name_valid(const char *s);

/* "rejected" / "all". */
const char *fg_rereview_name(enum fg_rereview r);

#endif
