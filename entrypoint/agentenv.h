/*
 * agentenv.h - what each agent and each check starts with: an environment
 * built from an allow-list, never the entrypoint's minus a few names, and a
 * HOME and TMPDIR of its own, fresh and empty (docs/security.md, "The
 * agents' environment").
 *
 * The allow-list of a role:
 *   - every role: PATH, LANG, LC_*, TZ, TERM; HOME and TMPDIR (its own
 *     directories, never the entrypoint's); the FORGE_* the caller sets
 *     (FORGE_ROLE, FORGE_CYCLE, ...), no other FORGE_*;
 *   - the worker and the reviewers also: the proxy and CA variables
 *     (HTTPS_PROXY, NO_PROXY, SSL_CERT_FILE, ...), the credential and
 *     setting variables of their own preset only (ep_agentenv_preset_vars:
 *     Claude on the API, Bedrock or Vertex; Codex; Gemini on the API or
 *     Vertex), and the names review.md's agent_env and FORGE_AGENT_ENV
 *     (comma-separated; the runner's --agent-env sets it) add;
 *   - a command of the user's own (no preset) gets no vendor variable but
 *     those agent_env / FORGE_AGENT_ENV name;
 *   - a check: no credential at all (neither a preset's nor agent_env's,
 *     nor the proxies, whose URLs may hold one).
 * The reviewers and the checks also get git's overrides (ep_agentenv_git):
 * a workspace .git/config the worker wrote cannot make their git run a
 * program.
 *
 * Directories: ep_agentenv_init() makes the run's base directory
 * "forge-agents.XXXXXX" ($TMPDIR or /tmp, mode 0711), outside the
 * entrypoint's private directory; each agent run gets base/ROLE.XXXXXX/
 * {home,tmp} (mode 0700) from ep_agentenv_start(), removed by
 * ep_agentenv_stop() after every process of that run is gone; the base goes
 * in ep_agentenv_release(). A preset whose CLI logs in with a file under
 * its configuration directory (~/.claude/.credentials.json,
 * ~/.codex/auth.json) gets a copy of that file as ep_agentenv_init() read
 * it (before any agent ran), and nothing else, in the fresh HOME. A Gemini reviewer also gets a system settings file
 * (GEMINI_CLI_SYSTEM_SETTINGS_PATH) that outranks the workspace's
 * .gemini/settings.json: no hooks, MCP servers, tool discovery or .env.
 *
 * Protocol: ep_agentenv_init() once before the first agent; per agent or
 * check ep_agentenv_start() -> run it -> ep_agentenv_stop(); then
 * ep_agentenv_release(). One thread (a panel helper works on its own copy
 * after fork: its mkdtemp names cannot collide).
 */
#ifndef EP_AGENTENV_H
#define EP_AGENTENV_H

#include <stdbool.h>
#include <stddef.h>

#include "pid1.h"
#include "task.h"
#include "forge/buf.h"
#include "forge/reviewmd.h"

enum ep_agentenv_kind { EP_AGENTENV_WORKER, EP_AGENTENV_REVIEWER, EP_AGENTENV_CHECK };

/* How many presets' login files a run keeps (preset.h has three). */
#define EP_AGENTENV_PRESETS_MAX 4

/* The run's part: the base directory, the extra names, the login files. */
struct ep_agentenv {
	char *base;                  /* owned: forge-agents.XXXXXX, or NULL */
	struct fg_strvec extra;      /* agent_env and FORGE_AGENT_ENV names, no duplicates */
	/* Each preset's login file as it was when the run began, before any
	 * agent could write the entrypoint's HOME (index: ep_preset_name). */
	char *login[EP_AGENTENV_PRESETS_MAX];
	size_t login_len[EP_AGENTENV_PRESETS_MAX];
};

/* One agent run's directories. */
struct ep_agentenv_dirs {
	char *dir, *home, *tmp;      /* owned, or NULL */
};

/* What one agent run is. All borrowed. */
struct ep_agentenv_spec {
	enum ep_agentenv_kind kind;
	const char *preset;          /* the role's preset (preset.h), or NULL; checks: ignored */
	char *const *set;            /* "NAME=value" the caller sets (FORGE_ROLE, ...), NULL-terminated */
	const struct ep_task *task;  /* FORGE_WORKSPACE, _STEP_NAME, _SKILL_NAME, _TASK_KEY, _RUN_ID
	                              * are its values; its workspace's .git/config is what the
	                              * git overrides read (reviewers, checks); may be NULL */
};

/*
 * Reads FORGE_AGENT_ENV (names separated by ',' or spaces; an invalid name
 * is an error) and adds cfg's agent_env (cfg may be NULL), reads each
 * preset's login file, then makes the base directory. 0, -EINVAL (a bad
 * name) or another negative errno, after saying why (ep_log).
 */
int ep_agentenv_init(struct ep_agentenv *ae, const struct fg_review_config *cfg);
/* Removes the base directory and all below it; frees ae. */
void ep_agentenv_release(struct ep_agentenv *ae);

/*
 * Makes d's fresh directories (and the preset's login file copy) and builds
 * the run's whole environment into out (initialised) from environ. p runs
 * the git that reads the workspace's config (reviewers, checks). 0, or a
 * negative errno after saying why (d is then left empty, out untouched).
 */
int ep_agentenv_start(const struct ep_agentenv *ae, struct ep_pid1 *p, const struct ep_agentenv_spec *s,
		      struct ep_agentenv_dirs *d, struct fg_strvec *out);
/* Removes d's directories (never following a link) and frees d. */
void ep_agentenv_stop(struct ep_agentenv_dirs *d);

/*
 * The names (and NAME* patterns) a role's environment may hold, in order,
 * into out (initialised): what `forge-entrypoint config` prints. extra (may
 * be NULL) are the agent_env / FORGE_AGENT_ENV names.
 */
void ep_agentenv_names(enum ep_agentenv_kind kind, const char *preset, const struct fg_strvec *extra,
		       struct fg_strvec *out);

/* The extra names of FORGE_AGENT_ENV and cfg (may be NULL) into out. 0, or
 * -EINVAL with err naming the bad entry. */
int ep_agentenv_extra(const struct fg_review_config *cfg, struct fg_strvec *out, char *err, size_t errlen);

/*
 * git's overrides for a reviewer's or a check's environment, appended to
 * set as "NAME=value": GIT_CONFIG_NOSYSTEM=1, GIT_CONFIG_GLOBAL=/dev/null,
 * GIT_PAGER=cat, and GIT_CONFIG_COUNT with GIT_CONFIG_KEY_n/VALUE_n: the
 * fixed keys that run a program (core.fsmonitor=false,
 * core.hooksPath=/dev/null, core.pager, core.editor, core.sshCommand,
 * credential.helper, diff.external, protocol.ext.allow=never, ...), then,
 * for every such key the workspace's repository configuration, and that of
 * each repository nested below it (at most 16, agentenv_git.c), read by
 * `git config --list --name-only` with its includes, right now, defines by
 * name (filter.NAME.clean, diff.NAME.textconv, alias.NAME, ...), an empty
 * or inert value. Past EP_AGENTENV_GIT_MAX overrides the agent's git gets
 * GIT_DIR=/dev/null instead (no repository at all) and a warning says so.
 * home: a directory of this run's own for the scan's git.
 */
#define EP_AGENTENV_GIT_MAX 256
void ep_agentenv_git(struct ep_pid1 *p, const char *workspace, const char *home, struct fg_strvec *set);

#endif
