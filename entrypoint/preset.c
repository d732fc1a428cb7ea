/*
 * preset.c - agent commands, output formats and presets (see preset.h).
 *
 * The command lines are the CLIs' current headless flags, checked against
 * real runs (../shared/agent-transcripts-current/) and the vendors' sources,
 * docs and issue trackers: Claude Code 2.1.220 - 2.1.226, Codex CLI 0.141.0
 * - 0.159.0, Gemini CLI 0.53.1. docs/guide/agents.md#presets shows each line
 * with the version and the source each flag comes from.
 */
#include "preset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/cmdline.h"
#include "forge/util.h"

#define PRESET_ENV_MAX 4
#define PRESET_ALLOW_MAX 20

struct preset {
	const char *name;
	enum ep_output_format format;
	const char *worker;
	const char *reviewer;
	bool system_in_prompt;           /* the reviewer CLI takes no system prompt */
	const char *env[PRESET_ENV_MAX]; /* "NAME=value" the CLI needs headless; NULL-ended */
	const char *root_env;            /* also set when we run as root, or NULL */
	struct ep_preset_creds creds;
	/* The variables its agent may get (agentenv.h): names, or NAME*
	 * patterns; NULL-ended. The CLI's own configuration directory variable
	 * (creds.dir_var) is never among them: the agent's HOME is fresh. */
	const char *allow[PRESET_ALLOW_MAX];
};

/*
 * The reviewers load no project configuration the worker could write
 * (docs/guide/agents.md#a-clean-reviewer): Claude Code reads the user
 * settings of its fresh HOME only (--setting-sources user: no
 * .claude/settings*.json, no project CLAUDE.md) and no .mcp.json
 * (--strict-mcp-config without --mcp-config); Codex reads no AGENTS.md
 * (project_doc_max_bytes=0) and, its CODEX_HOME being fresh, trusts no
 * project, so .codex/ is not loaded; Gemini gets a system settings file
 * (agentenv.c) that outranks the workspace's.
 */
static const struct preset PRESETS[] = {
	{ "claude", EP_OUTPUT_CLAUDE,
	  "claude -p --output-format stream-json --verbose --dangerously-skip-permissions",
	  "claude -p --output-format stream-json --verbose --append-system-prompt {system_prompt} "
	  "--setting-sources user --strict-mcp-config "
	  "--allowedTools Bash,Read,Glob,Grep --disallowedTools Edit,Write,NotebookEdit",
	  false, { NULL }, "IS_SANDBOX=1",
	  { "Claude Code", { "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN", NULL },
	    { NULL }, { "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", NULL },
	    "CLAUDE_CONFIG_DIR", ".claude", ".credentials.json", NULL },
	  { "ANTHROPIC_*", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_*", "CLAUDE_CODE_SKIP_*",
	    "CLAUDE_CODE_MAX_*", "CLAUDE_CODE_DISABLE_*", "AWS_*", "CLOUD_ML_REGION", "VERTEX_REGION_*",
	    "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT", "MAX_THINKING_TOKENS",
	    "DISABLE_PROMPT_CACHING", "IS_SANDBOX", NULL } },
	{ "codex", EP_OUTPUT_CODEX,
	  "codex exec --json --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check -",
	  "codex exec --json --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check "
	  "-c project_doc_max_bytes=0 -",
	  true, { NULL }, NULL,
	  { "Codex CLI", { "CODEX_API_KEY", NULL }, { "OPENAI_API_KEY", NULL }, { NULL },
	    "CODEX_HOME", ".codex", "auth.json",
	    "codex exec reads CODEX_API_KEY, not OPENAI_API_KEY" },
	  { "CODEX_*", "OPENAI_*", "AZURE_OPENAI_API_KEY", NULL } },
	{ "gemini", EP_OUTPUT_GEMINI,
	  "gemini --output-format stream-json --skip-trust --approval-mode yolo",
	  "gemini --output-format stream-json --skip-trust --approval-mode yolo",
	  true, { "GEMINI_CLI_TRUST_WORKSPACE=true", NULL }, NULL,
	  { "Gemini CLI", { "GEMINI_API_KEY", "GOOGLE_API_KEY", NULL }, { "GOOGLE_APPLICATION_CREDENTIALS", NULL },
	    { "GOOGLE_GENAI_USE_VERTEXAI", NULL }, NULL, NULL, NULL, NULL },
	  { "GEMINI_*", "GOOGLE_API_KEY", "GOOGLE_GENAI_*", "GOOGLE_GEMINI_*", "GOOGLE_CLOUD_*",
	    "GOOGLE_APPLICATION_CREDENTIALS", NULL } },
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

const struct ep_preset_creds *ep_preset_creds(const char *preset)
{
	const struct preset *p = find(preset);

	return p ? &p->creds : NULL;
}

const char *ep_preset_name(size_t i)
{
	return i < NPRESETS ? PRESETS[i].name : NULL;
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

static void push_unless_set(struct fg_strvec *set, const char *kv)
{
	char name[64];
	size_t n = strcspn(kv, "=");

	if (n >= sizeof(name))
		return;
	memcpy(name, kv, n);
	name[n] = '\0';
	if (!getenv(name))
		fg_strvec_push(set, kv);
}

void ep_preset_env(const char *preset, struct fg_strvec *set)
{
	const struct preset *p = find(preset);

	if (!p)
		return;
	for (size_t i = 0; i < PRESET_ENV_MAX && p->env[i]; i++)
		push_unless_set(set, p->env[i]);
	if (p->root_env && geteuid() == 0)
		push_unless_set(set, p->root_env);
}

const char *const *ep_preset_allow(const char *preset)
{
	const struct preset *p = find(preset);

	return p ? p->allow : NULL;
}

/* FORGE_*_ARGS appended to a->cmd. 0, or -EINVAL with err set. */
static int append_args(struct ep_role_agent *a, const char *up, char *err, size_t errlen)
{
	char var[64], why[128];
	struct fg_strvec v;
	const char *args;
	char *both;
	int rc;

	snprintf(var, sizeof(var), "FORGE_%s_ARGS", up);
	args = env(var);
	if (!args || !a->cmd)
		return 0;
	fg_strvec_init(&v);
	rc = fg_cmdline_split(args, &v, why, sizeof(why));
	fg_strvec_release(&v);
	if (rc < 0) {
		snprintf(err, errlen, "invalid %s: %s", var, why);
		return -EINVAL;
	}
	both = fg_xasprintf("%s %s", a->cmd, args);
	free(a->cmd);
	a->cmd = both;
	return 0;
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
	if (append_args(a, up, err, errlen) < 0) {
		ep_role_agent_release(a);
		return -EINVAL;
	}
	return 0;
}
