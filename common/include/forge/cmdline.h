/*
 * cmdline.h - agent command strings (FORGE_WORKER_CMD, FORGE_REVIEWER_CMD).
 *
 * A command string is split into argv with shell-like quoting, but never run
 * through a shell: words are separated by unquoted blanks (space, tab,
 * newline); '...' keeps everything literally; "..." keeps everything but
 * \" \\ \$ \` and \newline, which lose the backslash; outside quotes a
 * backslash quotes the next character. No globbing, no variables, no
 * operators: ';' '|' '>' are ordinary characters.
 *
 * Placeholders {prompt_file}, {system_prompt_file}, {workspace}, {cycle},
 * {step}, {skill}, {task_key} are replaced inside words after splitting, so
 * a value with spaces or quotes stays one argument. Unknown {names} are left
 * as they are.
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
 * On failure out is left as it was.
 */
int fg_cmdline_split(const char *cmd, struct fg_strvec *out, char *err, size_t errlen);

/* Replaces placeholders in every word of argv in place. */
void fg_cmdline_expand(struct fg_strvec *argv, const struct fg_placeholder *ph, size_t nph);

#endif
