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
 * Every preset gives the prompt on standard input (closed after it, so no
 * CLI waits for more); Codex also gets "-" as its prompt argument. The
 * reviewer's system prompt goes where the CLI takes one (Claude:
 * --append-system-prompt {system_prompt}); where it does not (Codex,
 * Gemini) system_in_prompt is set and the loop puts the system prompt in
 * front of the prompt. The reviewer runs read-only where the CLI can say so.
 */
#ifndef EP_PRESET_H
#define EP_PRESET_H

#include <stdbool.h>
#include <stddef.h>

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
 * variable and the valid values (an unknown preset or format); a is then
 * left initialised-empty.
 */
int ep_role_agent_load(struct ep_role_agent *a, const char *role, char *err, size_t errlen);

/* The preset's command line for role, or NULL for an unknown name. Static. */
const char *ep_preset_command(const char *preset, const char *role);

#endif
