/*
 * resolve.h - which review.md applies to a skill for a ticket.
 *
 * Order: {skills_dir}/{project}/{skill}/review.md (project = the ticket's
 * project key, see names.h), then {skills_dir}/default/{skill}/review.md,
 * else none. Only regular files count; the path, once symlinks are resolved,
 * must stay inside the real skills_dir (a symlink to /etc is refused with a
 * diagnostic and the next candidate is tried).
 */
#ifndef FORGE_RESOLVE_H
#define FORGE_RESOLVE_H

#include <stddef.h>

#include "forge/diag.h"

struct fg_buf;

/*
 * Resolves the review.md. skills_dir, skill and ticket are borrowed; ticket
 * may be NULL or "" (no project override). On 0, *out_path is an owned path
 * (skills_dir joined with the relative part, as given, not canonicalised).
 * Returns 0 found, -ENOENT none, -EINVAL invalid skill or ticket name
 * (diagnostic added), other negative errno when skills_dir is unusable
 * (error diagnostic added; a missing skills_dir is -ENOTDIR, never -ENOENT).
 * On failure *out_path is NULL.
 * Warnings (e.g. a ticket without project key, a refused symlink) go to diags.
 */
int fg_resolve_review_md(const char *skills_dir, const char *skill, const char *ticket,
			 char **out_path, struct fg_diags *diags);

/* A skill whose name is at most this many edits from the one asked for is
 * offered as "did you mean" (fg_resolve_explain_missing()). */
#define FG_RESOLVE_SUGGEST_DISTANCE 3
/* Most directory entries looked at per directory for a suggestion. */
#define FG_RESOLVE_SUGGEST_SCAN 10000

/*
 * After fg_resolve_review_md() returned -ENOENT: appends to out why, in one
 * line without a trailing period:
 *   no review.md for skill 'S' (tried 'DIR/proj/S/review.md', 'DIR/default/S/review.md')
 * with, inside the parentheses, "; did you mean 'T'?" when a skill with a
 * review.md in one of those directories has a name within
 * FG_RESOLVE_SUGGEST_DISTANCE edits of S (and fewer than S's length): the
 * closest, ties by name order.
 * skill and ticket must be valid names (as fg_resolve_review_md() checked).
 */
void fg_resolve_explain_missing(const char *skills_dir, const char *skill, const char *ticket,
				struct fg_buf *out);

#endif
