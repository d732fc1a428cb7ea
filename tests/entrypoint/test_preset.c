/*
 * test_preset.c - presets (preset.h) and the agent environment they
 * shape (agentenv.h, the allow-list: the preset's own vendor's credentials
 * only, no Claude Code session's variables, no vendor key for a command of
 * the user's own, the CLI's own settings added, the user's values kept),
 * the credentials each preset declares, FORGE_*_ARGS.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "agentenv.h"
#include "preset.h"

TestSuite(preset, .timeout = 10);

extern char **environ;

static const char *const VARS[] = {
	"ANTHROPIC_API_KEY", "CODEX_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
	"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT", "CLAUDE_CODE_OAUTH_TOKEN",
	"CLAUDE_CODE_USE_BEDROCK", "GEMINI_CLI_TRUST_WORKSPACE", "IS_SANDBOX", "HOME_NOT_TOUCHED",
};

static void set_all(void)
{
	for (size_t i = 0; i < sizeof(VARS) / sizeof(VARS[0]); i++)
		setenv(VARS[i], "v", 1);
	unsetenv("GEMINI_CLI_TRUST_WORKSPACE");
	unsetenv("IS_SANDBOX");
}

/* The agent's value of name, or NULL (from env, borrowed). */
static const char *get(const struct fg_strvec *env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < env->n; i++)
		if (!strncmp(env->v[i], name, n) && env->v[i][n] == '=')
			return env->v[i] + n + 1;
	return NULL;
}

/* Fails the test unless each NULL-terminated name is absent from env
 * (expect_unset) or there with the value set_all() gave it (expect_passed). */
#define expect_unset(env, ...) expect_each((env), (const char *const[]){ __VA_ARGS__, NULL }, NULL)
#define expect_passed(env, ...) expect_each((env), (const char *const[]){ __VA_ARGS__, NULL }, "v")

static void expect_each(const struct fg_strvec *env, const char *const *names, const char *want)
{
	for (size_t i = 0; names[i]; i++) {
		const char *got = get(env, names[i]);

		if (want)
			cr_assert(got && !strcmp(got, want), "%s is '%s', not '%s'", names[i], got ? got : "(unset)",
				  want);
		else
			cr_assert_null(got, "%s reached the agent", names[i]);
	}
}

/* A worker's whole environment for preset (agentenv.h), its directories
 * removed again. */
static void agent_env(const char *preset, struct fg_strvec *env)
{
	struct ep_agentenv ae;
	struct ep_agentenv_dirs d;
	struct ep_agentenv_spec s = { EP_AGENTENV_WORKER, preset, NULL, NULL };

	fg_strvec_init(env);
	cr_assert_eq(ep_agentenv_init(&ae, NULL), 0);
	cr_assert_eq(ep_agentenv_start(&ae, NULL, &s, &d, env), 0);
	ep_agentenv_stop(&d);
	ep_agentenv_release(&ae);
}

Test(preset, an_agent_gets_its_own_vendors_credentials_and_none_of_the_others)
{
	struct fg_strvec e;

	set_all();
	agent_env("codex", &e);
	expect_passed(&e, "CODEX_API_KEY", "OPENAI_API_KEY");
	expect_unset(&e, "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "GEMINI_API_KEY",
		     "GOOGLE_API_KEY", "HOME_NOT_TOUCHED");
	cr_assert_not_null(strstr(get(&e, "HOME"), "/forge-agents."));
	fg_strvec_release(&e);
	agent_env("claude", &e);
	expect_passed(&e, "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK");
	expect_unset(&e, "CODEX_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY");
	if (geteuid() == 0)
		cr_assert_str_eq(get(&e, "IS_SANDBOX"), "1");
	fg_strvec_release(&e);
	agent_env("gemini", &e);
	cr_assert_str_eq(get(&e, "GEMINI_API_KEY"), "v");
	cr_assert_str_eq(get(&e, "GEMINI_CLI_TRUST_WORKSPACE"), "true");
	expect_unset(&e, "ANTHROPIC_API_KEY", "CODEX_API_KEY", "IS_SANDBOX");
	fg_strvec_release(&e);
}

/* A command of the user's own gets no vendor's credential (agentenv.h: only
 * what agent_env or FORGE_AGENT_ENV names); no agent gets a running Claude
 * Code session's variables. */
Test(preset, session_variables_go_for_every_agent_credentials_only_when_named_for_a_custom_command)
{
	struct fg_strvec e;

	set_all();
	unsetenv("FORGE_AGENT_ENV");
	agent_env(NULL, &e);
	expect_unset(&e, "ANTHROPIC_API_KEY", "CODEX_API_KEY", "CLAUDECODE",
		     "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT", "CLAUDE_CODE_USE_BEDROCK",
		     "CLAUDE_CODE_OAUTH_TOKEN");
	fg_strvec_release(&e);
	setenv("FORGE_AGENT_ENV", "CODEX_API_KEY, CLAUDE_CODE_USE_BEDROCK", 1);
	agent_env(NULL, &e);
	expect_passed(&e, "CODEX_API_KEY", "CLAUDE_CODE_USE_BEDROCK");
	cr_assert_null(get(&e, "ANTHROPIC_API_KEY"));
	fg_strvec_release(&e);
	unsetenv("FORGE_AGENT_ENV");
	agent_env("claude", &e);
	expect_unset(&e, "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT");
	fg_strvec_release(&e);
}

/* The user's own value of a variable the preset sets wins. */
Test(preset, the_users_value_wins_over_the_presets)
{
	struct fg_strvec e;

	set_all();
	setenv("GEMINI_CLI_TRUST_WORKSPACE", "false", 1);
	agent_env("gemini", &e);
	cr_assert_str_eq(get(&e, "GEMINI_CLI_TRUST_WORKSPACE"), "false");
	fg_strvec_release(&e);
}

Test(preset, args_are_appended_and_an_unsplittable_value_is_refused)
{
	struct ep_role_agent a;
	char err[256] = "";

	unsetenv("FORGE_REVIEWER_CMD");
	unsetenv("FORGE_REVIEWER_OUTPUT");
	setenv("FORGE_REVIEWER_AGENT", "codex", 1);
	setenv("FORGE_REVIEWER_ARGS", "--model 'gpt 5'", 1);
	ep_role_agent_init(&a);
	cr_assert_eq(ep_role_agent_load(&a, "reviewer", err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(a.cmd, "codex exec --json --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check "
			 "-c project_doc_max_bytes=0 - --model 'gpt 5'");
	cr_assert(a.cmd_from_preset);
	setenv("FORGE_REVIEWER_ARGS", "--model 'unclosed", 1);
	cr_assert_eq(ep_role_agent_load(&a, "reviewer", err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "invalid FORGE_REVIEWER_ARGS"), "%s", err);
	cr_assert_null(a.cmd);
	ep_role_agent_release(&a);
}

Test(preset, every_preset_declares_credentials_and_a_product)
{
	for (size_t i = 0; ep_preset_name(i); i++) {
		const struct ep_preset_creds *c = ep_preset_creds(ep_preset_name(i));

		cr_assert_not_null(c);
		cr_assert_not_null(c->product);
		cr_assert_not_null(c->secrets[0], "%s", ep_preset_name(i));
	}
	cr_assert_null(ep_preset_creds("claude-code"));
	cr_assert_null(ep_preset_creds(NULL));
}
