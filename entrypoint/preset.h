/*
 * preset.h - which command runs each agent role and which output format it
 * prints: FORGE_{WORKER,REVIEWER}_CMD, FORGE_{WORKER,REVIEWER}_OUTPUT and the
 * presets FORGE_{WORKER,REVIEWER}_AGENT = claude | codex | gemini.
 *
 * A preset sets both the command line (the CLI's documented headless flags,
 * docs/guide/agents.md#presets) and the output format. An explicit
 * FORGE_*_CMD or FORGE_*_OUTPUT wins over the preset, each on its own.
 * Without either, the command is unset and the format is text.
 *
 * FORGE_{WORKER,REVIEWER}_ARGS is split like a command line and appended
 * to the role's command (the preset's or FORGE_*_CMD), so a flag such as
 * `--model haiku` does not mean copying the whole preset line.
 *
 * Every preset gives the prompt on standard input (closed after it, so no
 * CLI waits for more); Codex also gets "-" as its prompt argument. The
 * reviewer's system prompt goes where the CLI takes one (Claude:
 * --append-system-prompt {system_prompt}); where it does not (Codex,
 * Gemini) system_in_prompt is set and the loop puts the system prompt in
 * front of the prompt. Inside the container the container is the sandbox:
 * the CLIs' own sandboxes and approval prompts are off (Codex's bubblewrap
 * cannot start under Docker's seccomp profile), and the reviewer's
 * read-only promise is forge-review's check, not the CLI's.
 * Claude's reviewer may run the shell and read, never Claude's editing
 * tools.
 *
 * A preset also sets the environment its CLI needs headless
 * (ep_preset_env): Gemini's workspace trust, and IS_SANDBOX=1 for Claude
 * when the entrypoint runs as root (Claude refuses to skip permissions as
 * root otherwise); it names the variables its agent may get (the
 * allow-list of agentenv.h: its vendor's credentials and settings, the
 * cloud switches' included). A reviewer preset loads no project
 * configuration the worker could have written (preset.c). docs/guide/agents.md#presets says which version each
 * flag was checked against.
 */
#ifndef EP_PRESET_H
#define EP_PRESET_H

#include <stdbool.h>
#include <stddef.h>

#include "forge/buf.h"
#include "output.h"

struct ep_role_agent {
	char *cmd;                       /* owned or NULL (unset) */
	enum ep_output_format format;
	const char *preset;              /* static "claude"/"codex"/"gemini", or NULL */
	bool cmd_from_preset;            /* cmd came from the preset, not FORGE_*_CMD */
	bool system_in_prompt;           /* put the system prompt in front of the prompt */
};

void ep_role_agent_init(struct ep_role_agent *a);
void ep_role_agent_release(struct ep_role_agent *a);

/*
 * Resolves role ("worker" or "reviewer") from the environment (getenv;
 * empty counts as unset). Returns 0, or -EINVAL with err naming the
 * variable and the valid values (an unknown preset or format) or why
 * FORGE_*_ARGS cannot be split; a is then left initialised-empty.
 */
int ep_role_agent_load(struct ep_role_agent *a, const char *role, char *err, size_t errlen);

/* The preset's command line for role, or NULL for an unknown name. Static. */
const char *ep_preset_command(const char *preset, const char *role);

/*
 * Appends to set (ep_env_build's list, agent.h: "NAME=value" sets) the
 * variables preset's CLI needs headless (Gemini's workspace trust; Claude's
 * IS_SANDBOX=1 as root), unless the environment sets them already (getenv,
 * even empty: the user's value wins). Nothing for NULL or an unknown name.
 */
void ep_preset_env(const char *preset, struct fg_strvec *set);

/*
 * What a preset's CLI authenticates with (docs/guide/agents.md#credentials):
 * any one of `secrets` or `settings` set (non-empty), or the login file
 * `$dir_var/file` (dir_var unset: `$HOME/home_dir/file`). `secrets` and
 * `others` are the vendor's credential variables (`others` do not log this
 * CLI in): no other vendor's agent gets them.
 */
struct ep_preset_creds {
	const char *product;             /* "Claude Code", for messages */
	const char *secrets[4];          /* NULL-ended */
	const char *others[3];           /* NULL-ended */
	const char *settings[3];         /* non-secret settings that select another login */
	const char *dir_var, *home_dir, *file;
	const char *note;                /* a hint for a common mistake, or NULL */
};

/* preset's credentials (static), or NULL for NULL or an unknown name. */
const struct ep_preset_creds *ep_preset_creds(const char *preset);
/* The variables preset's agent may get from the entrypoint's environment
 * (agentenv.h): a NULL-ended list of names and NAME* patterns (static), or
 * NULL for NULL or an unknown name. */
const char *const *ep_preset_allow(const char *preset);
/* The presets' names, for iterating: i-th name or NULL past the last. */
const char *ep_preset_name(size_t i);

#endif
