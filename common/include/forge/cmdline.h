/*
 * cmdline.h - agent command strings (FORGE_WORKER_CMD, FORGE_REVIEWER_CMD).
 *
 * A command string is split into argv with shell-like quoting, but never run
 * through a shell: words are separated by unquoted blanks (space, tab,
 * newline); '...' keeps everything literally; "..." keeps everything but
 * \" \\ \$ \` and \newline, which lose the backslash; outside quotes a
 * backslash quotes the next character. No globbing, no variables, no
 * operators: ';' '|' '>' are ordinary characters. Backslash-newline, inside
 * double quotes or outside quotes, is a line continuation as in sh: both
 * characters disappear (it neither starts nor ends a word). Quotes make
 * words: '' and "" give an empty argument.
 *
 * Placeholders {prompt_file}, {system_prompt_file}, {workspace}, {cycle},
 * {step}, {skill}, {task_key} are replaced inside words after splitting, so
 * a value with spaces or quotes stays one argument. Unknown {names} are left
 * as they are. A placeholder is '{', one or more of [A-Za-z0-9_], '}',
 * matched case-sensitively; values are inserted verbatim and never scanned
 * again.
 *
 * Tier: base (util.h). Uses alloc and buf.
 */
#ifndef FORGE_CMDLINE_H
#define FORGE_CMDLINE_H

#include <stddef.h>

#include "forge/buf.h"

#define FG_CMDLINE_MAX_BYTES (64 * 1024)
#define FG_CMDLINE_MAX_ARGS 1024

struct fg_placeholder {
	const char *name;   /* without braces, e.g. "workspace" */
	const char *value;  /* NULL: leave the placeholder as it is */
};

/*
 * Splits cmd into out (appending owned words). Returns 0, or -EINVAL with err
 * filled: "unterminated single quote", "unterminated double quote",
 * "trailing backslash", "empty command", "too long", "too many arguments".
 * On failure out is left as it was. cmd is borrowed (NULL reads as empty);
 * err may be NULL. "too long": cmd is over FG_CMDLINE_MAX_BYTES; "too many
 * arguments": over FG_CMDLINE_MAX_ARGS words.
 */
int fg_cmdline_split(const char *cmd, struct fg_strvec *out, char *err, size_t errlen);

/* Replaces placeholders in every word of argv in place (a replaced word is
 * freed and a new owned one put in its slot). ph is borrowed; nph may be 0.
 * A word that would grow past 16 MiB is left unexpanded. */
void fg_cmdline_expand(struct fg_strvec *argv, const struct fg_placeholder *ph, size_t nph);

#endif
