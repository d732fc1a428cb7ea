/*
 * msg.h - the message lines both programs write on their standard error,
 * and their levels: the one definition both use. Each program has one
 * writer over fg_msg_vline() (the entrypoint's ep_log(), the runner's
 * rn_msg()), and the runner's output reader parses the entrypoint's lines
 * back (fg_msg_level_of()).
 *
 * Three kinds of line share the sandbox's stderr: frames (forge/frame.h,
 * FG_FRAME_PREFIX), the agents' lines ("[worker] ...", "[reviewer] ..."),
 * and the entrypoint's messages:
 *   FG_MSG_PREFIX + level prefix + message, one line, e.g.
 *   "forge-entrypoint: warning: cannot write '/w/.forge/s/x': permission denied"
 * and its progress lines, which carry no prefix at all
 * ("Review cycle 1/3: APPROVED").
 *
 * Levels and their prefixes (after FG_MSG_PREFIX):
 *   FG_MSG_PLAIN   no FG_MSG_PREFIX either: progress lines (read back, any
 *                  line that is not one of the entrypoint's messages)
 *   FG_MSG_INFO    ""
 *   FG_MSG_WARN    "warning: "
 *   FG_MSG_ERROR   "error: "
 *   FG_MSG_FAILED  "the task failed: " (an error: why the task ended failed)
 */
#ifndef FORGE_MSG_H
#define FORGE_MSG_H

#include <stdarg.h>
#include <stddef.h>

struct fg_buf;

#define FG_MSG_PREFIX "forge-entrypoint: "
#define FG_MSG_PREFIX_LEN (sizeof(FG_MSG_PREFIX) - 1)

enum fg_msg_level { FG_MSG_PLAIN, FG_MSG_INFO, FG_MSG_WARN, FG_MSG_ERROR, FG_MSG_FAILED };

/* The level's prefix after FG_MSG_PREFIX (above; "" for PLAIN, INFO and a
 * value out of range). Static. */
const char *fg_msg_level_prefix(enum fg_msg_level level);

/*
 * The level of one line of the entrypoint's stderr (NUL-terminated,
 * borrowed): FG_MSG_PLAIN when it does not start with FG_MSG_PREFIX, else
 * the level whose prefix follows it (none: FG_MSG_INFO). *text (text may be
 * NULL) is set to what follows FG_MSG_PREFIX (the level prefix included),
 * or to line for FG_MSG_PLAIN.
 */
enum fg_msg_level fg_msg_level_of(const char *line, const char **text);

/*
 * One message line, as the program's writer prints it: prefix (the
 * program's "name: ", borrowed; left out for FG_MSG_PLAIN), level's prefix
 * and the message fmt and ap make, then "\n" ("...\n" when cut). The level
 * prefix and the message are cut at max bytes; controls are escaped as
 * fg_escape_controls() does, so no value quoted in a message can start a
 * line of its own or rewrite one on a terminal. Returns the owned line;
 * *text_len (text_len may be NULL) is its length before the ending.
 */
char *fg_msg_vline(const char *prefix, enum fg_msg_level level, size_t max, const char *fmt,
		   va_list ap, size_t *text_len);

#endif
