/*
 * preset.c - agent commands, output formats and presets (see preset.h).
 *
 * The command lines are the CLIs' documented headless flags, checked
 * against real runs (../shared/agent-transcripts/) and the vendors' docs:
 * Claude Code 2.0.28 - 2.1.x, Codex CLI 0.46.0 - 0.66.0, Gemini CLI 0.11.0.
 * docs/guide/agents.md shows each line with the version its flags come from.
 */
#include "preset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/util.h"

struct preset {
	const char *name;
	enum ep_output_format format;
	const char *worker;
	const char *reviewer;
	bool system_in_prompt;           /* the reviewer CLI takes no system prompt */
};

static const struct preset PRESETS[] = {
	{ "claude", EP_OUTPUT_CLAUDE,
	  "claude -p --output-format stream-json --verbose --dangerously-skip-permissions",
	  "claude -p --output-format stream-json --verbose --append-system-prompt {system_prompt} "
	  "--disallowedTools Edit,Write,NotebookEdit",
	  false },
	{ "codex", EP_OUTPUT_CODEX,
	  "codex exec --json --full-auto --skip-git-repo-check -",
	  "codex exec --json --sandbox read-only --skip-git-repo-check -",
	  true },
	{ "gemini", EP_OUTPUT_GEMINI,
	  "gemini --output-format stream-json --yolo",
	  "gemini --output-format stream-json",
	  true },
};

#define NPRESETS ARRAY_SIZE(PRESETS)

void ep_role_agent_init(struct ep_role_agent *a)
{
	memset(a, 0, sizeof(*a));
	a->format = EP_OUTPUT_TEXT;
}

void ep_role_agent_release(struct ep_role_agent *a)
{
	free(a->cmd);
	ep_role_agent_init(a);
}

static const struct preset *find(const char *name)
{
	for (size_t i = 0; name && i < NPRESETS; i++)
		if (!strcmp(PRESETS[i].name, name))
			return &PRESETS[i];
	return NULL;
}

const char *ep_preset_command(const char *preset, const char *role)
{
	const struct preset *p = find(preset);

	if (!p)
		return NULL;
	return !strcmp(role, "worker") ? p->worker : p->reviewer;
}

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

int ep_role_agent_load(struct ep_role_agent *a, const char *role, char *err, size_t errlen)
{
	const char *up = !strcmp(role, "worker") ? "WORKER" : "REVIEWER";
	char var[64];
	const char *agent, *cmd, *out;
	const struct preset *p = NULL;

	ep_role_agent_release(a);
	snprintf(var, sizeof(var), "FORGE_%s_AGENT", up);
	agent = env(var);
	if (agent && !(p = find(agent))) {
		snprintf(err, errlen, "invalid %s '%.40s': expected claude, codex or gemini", var, agent);
		return -EINVAL;
	}
	snprintf(var, sizeof(var), "FORGE_%s_OUTPUT", up);
	out = env(var);
	if (out && ep_output_format_parse(out, &a->format) < 0) {
		snprintf(err, errlen, "invalid %s '%.40s': expected text, claude, codex or gemini", var, out);
		ep_role_agent_init(a);
		return -EINVAL;
	}
	if (!out && p)
		a->format = p->format;
	snprintf(var, sizeof(var), "FORGE_%s_CMD", up);
	cmd = env(var);
	if (cmd) {
		a->cmd = fg_xstrdup(cmd);
	} else if (p) {
		a->cmd = fg_xstrdup(ep_preset_command(p->name, role));
		a->cmd_from_preset = true;
		a->system_in_prompt = p->system_in_prompt;
	}
	a->preset = p ? p->name : NULL;
	return 0;
}
