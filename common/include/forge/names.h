/*
 * names.h - validation of step, skill and task/ticket names, and the project
 * key of a ticket.
 *
 * Names become path components (.forge/{step}/, skills/{project}/{skill}/),
 * so a valid name is: 1..FG_NAME_MAX bytes, no '/', no '\\', no NUL, not "."
 * or "..", no ".." anywhere, no leading '.', no control characters
 * (bytes < 0x20 or 0x7f, so no newline can reach a log line), no
 * whitespace, and valid UTF-8. Task keys follow the same rule.
 */
#ifndef FORGE_NAMES_H
#define FORGE_NAMES_H

#include <stddef.h>

#define FG_NAME_MAX 128

/* FG_NAME_RUN_ID: a run id read back from a cycle or summary file (the
 * runner writes 16 hex digits; anything else is held to the name rule). */
enum fg_name_kind { FG_NAME_STEP, FG_NAME_SKILL, FG_NAME_TASK_KEY, FG_NAME_RUN_ID };

/* "step", "skill", "task key" or "run id". */
const char *fg_name_kind_str(enum fg_name_kind kind);

/*
 * Validates name (len bytes, which may include NUL bytes: they are refused).
 * Returns 0, or -EINVAL with err filled (if errlen > 0) with a message such as
 * "invalid step name 'a/b': contains '/'". err is borrowed.
 */
int fg_name_check(enum fg_name_kind kind, const char *name, size_t len, char *err, size_t errlen);

/*
 * Project key of a ticket: "MYPROJECT-123" -> "myproject". The key must be
 * LETTERS (ASCII letters, then letters, digits or '_') '-' DIGITS.
 * Returns 0 with out filled, or -ENOENT when the key is a valid task key
 * without project part (out set to ""), or -EINVAL when key is NULL or not a
 * valid task key at all (fg_name_check(), e.g. "../../etc-1"; out set to ""),
 * or -ENAMETOOLONG when out is too small (out set to "").
 */
int fg_ticket_project(const char *key, char *out, size_t outlen);

#endif
