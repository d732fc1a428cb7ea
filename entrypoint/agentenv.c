/*
 * agentenv.c - the agents' and checks' allow-listed environments and their
 * fresh HOME and TMPDIR (see agentenv.h; git's overrides: agentenv_git.c).
 */
#include "agentenv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "cli.h"
#include "preset.h"
#include "forge/alloc.h"
#include "forge/fsutil.h"
#include "forge/util.h"

extern char **environ;

/* A login file copied into a fresh HOME is at most this big. */
#define LOGIN_FILE_MAX (1024 * 1024)

/* Every role's. HOME and TMPDIR are the run's own, set below. */
static const char *const BASE[] = { "PATH", "LANG", "LC_*", "TZ", "TERM", NULL };

/* The agents' (not the checks'): reaching the network through a proxy, and
 * the CAs that proxy needs. A proxy URL may hold a password. */
static const char *const NET[] = {
	"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
	"NO_PROXY", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
	"REQUESTS_CA_BUNDLE", NULL,
};

/* Whatever the lists say: the entrypoint's own settings and the variables
 * the builder sets itself. */
static const char *const NEVER[] = { "FORGE_*", "AUTO_REVIEW_*", "HOME", "TMPDIR", "GIT_*", NULL };

/* Gemini CLI's system settings for a reviewer: they outrank the
 * workspace's .gemini/settings.json (settings.ts, mergeSettings: system
 * last), so a worker-written file can start no hook, MCP server or tool
 * command and load no .env, and no GEMINI.md is read as context. */
static const char GEMINI_SYSTEM_SETTINGS[] =
	"{\"hooksConfig\": {\"enabled\": false},\n"
	" \"admin\": {\"mcp\": {\"enabled\": false}, \"extensions\": {\"enabled\": false}},\n"
	" \"mcp\": {\"allowed\": [\"forge-review-none\"]},\n"
	" \"tools\": {\"discoveryCommand\": \"\", \"callCommand\": \"\"},\n"
	" \"advanced\": {\"ignoreLocalEnv\": true},\n"
	" \"context\": {\"fileName\": \"forge-review-no-context-file.md\"}}\n";

static bool matches(const char *name, size_t n, const char *pat)
{
	size_t k = strlen(pat);

	if (k && pat[k - 1] == '*')
		return n >= k - 1 && !strncmp(name, pat, k - 1);
	return n == k && !strncmp(name, pat, n);
}

static bool in_list(const char *name, size_t n, const char *const *list)
{
	for (size_t i = 0; list && list[i]; i++)
		if (matches(name, n, list[i]))
			return true;
	return false;
}

static bool in_vec(const char *name, size_t n, const struct fg_strvec *v)
{
	for (size_t i = 0; v && i < v->n; i++)
		if (matches(name, n, v->v[i]))
			return true;
	return false;
}

/* Whether the variable name[0..n) may reach an agent of this kind. */
static bool allowed(const char *name, size_t n, const struct ep_agentenv_spec *s, const struct fg_strvec *extra)
{
	if (in_list(name, n, BASE))
		return true;
	if (s->kind == EP_AGENTENV_CHECK)
		return false;
	if (in_vec(name, n, extra))
		return true;
	if (in_list(name, n, NEVER))
		return false;
	return in_list(name, n, NET) || in_list(name, n, ep_preset_allow(s->preset));
}

void ep_agentenv_names(enum ep_agentenv_kind kind, const char *preset, const struct fg_strvec *extra,
		       struct fg_strvec *out)
{
	static const char *const OWN[] = { "HOME", "TMPDIR", NULL };
	static const char *const FORGE_AGENT[] = {
		"FORGE_ROLE", "FORGE_CYCLE", "FORGE_PROMPT_FILE", "FORGE_SYSTEM_PROMPT_FILE",
		"FORGE_REVIEWER_ROLE", "FORGE_FEEDBACK_FILE", "FORGE_WORKSPACE", "FORGE_STEP_NAME",
		"FORGE_SKILL_NAME", "FORGE_TASK_KEY", "FORGE_RUN_ID", NULL,
	};
	static const char *const FORGE_CHECK[] = {
		"FORGE_ROLE", "FORGE_CHECK_NAME", "FORGE_CYCLE", "FORGE_WORKSPACE", "FORGE_STEP_NAME",
		"FORGE_SKILL_NAME", "FORGE_TASK_KEY", "FORGE_RUN_ID", NULL,
	};
	const char *const *lists[] = {
		BASE, OWN, kind == EP_AGENTENV_CHECK ? FORGE_CHECK : FORGE_AGENT,
		kind == EP_AGENTENV_CHECK ? NULL : NET,
		kind == EP_AGENTENV_CHECK ? NULL : ep_preset_allow(preset),
	};

	for (size_t i = 0; i < ARRAY_SIZE(lists); i++)
		for (size_t j = 0; lists[i] && lists[i][j]; j++)
			fg_strvec_push(out, lists[i][j]);
	for (size_t i = 0; kind != EP_AGENTENV_CHECK && extra && i < extra->n; i++)
		if (!fg_strvec_has(out, extra->v[i]))
			fg_strvec_push(out, extra->v[i]);
	if (kind == EP_AGENTENV_CHECK || kind == EP_AGENTENV_REVIEWER)
		fg_strvec_pushl(out, "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_PAGER", "GIT_CONFIG_COUNT",
				"GIT_CONFIG_KEY_*", "GIT_CONFIG_VALUE_*", NULL);
	if (kind == EP_AGENTENV_REVIEWER && preset && !strcmp(preset, "gemini"))
		fg_strvec_push(out, "GEMINI_CLI_SYSTEM_SETTINGS_PATH");
}

/* Adds the names of list (separated by ',' or white space) to out. */
static int add_names(const char *list, struct fg_strvec *out, char *err, size_t errlen)
{
	static const char SEP[] = ", \t\n";

	for (const char *p = list + strspn(list, SEP); *p; p += strspn(p, SEP)) {
		size_t n = strcspn(p, SEP);
		char *name = fg_xstrndup(p, n);

		if (!fg_env_name_valid(name)) {
			snprintf(err, errlen, "invalid FORGE_AGENT_ENV entry '%.64s': a variable name "
				 "([A-Za-z_][A-Za-z0-9_]*, at most %d bytes)", name, FG_AGENT_ENV_NAME_MAX);
			free(name);
			return -EINVAL;
		}
		if (fg_strvec_has(out, name))
			free(name);
		else
			fg_strvec_push_take(out, name);
		p += n;
	}
	return 0;
}

int ep_agentenv_extra(const struct fg_review_config *cfg, struct fg_strvec *out, char *err, size_t errlen)
{
	const char *v = getenv("FORGE_AGENT_ENV");

	if (v && add_names(v, out, err, errlen) < 0)
		return -EINVAL;
	for (size_t i = 0; cfg && i < cfg->nagent_env; i++)
		if (!fg_strvec_has(out, cfg->agent_env[i]))
			fg_strvec_push(out, cfg->agent_env[i]);
	return 0;
}

/* Writes path (mode 0600, a fresh file). 0 or -errno. */
static int write_private(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int rc;

	if (fd < 0)
		return -errno;
	rc = fg_write_all(fd, data, len);
	if (close(fd) < 0 && !rc)
		rc = -errno;
	return rc;
}

/* Where preset's CLI keeps its login file: $DIR_VAR/FILE, else
 * $HOME/HOME_DIR/FILE (owned), or NULL when it has none. */
static char *login_path(const struct ep_preset_creds *c)
{
	const char *dir = c && c->dir_var ? getenv(c->dir_var) : NULL, *h = getenv("HOME");

	if (!c || !c->file)
		return NULL;
	if (dir && *dir)
		return fg_path_join(dir, c->file);
	return h && *h ? fg_xasprintf("%s/%s/%s", h, c->home_dir, c->file) : NULL;
}

/* Each preset's login file as it is now (before the first agent). */
static void read_logins(struct ep_agentenv *ae)
{
	for (size_t i = 0; i < EP_AGENTENV_PRESETS_MAX && ep_preset_name(i); i++) {
		char *src = login_path(ep_preset_creds(ep_preset_name(i)));
		struct fg_buf b;

		fg_buf_init(&b, LOGIN_FILE_MAX);
		if (src && fg_read_file_at(AT_FDCWD, src, LOGIN_FILE_MAX, FG_READ_FOLLOW, &b, NULL) == 0) {
			ae->login_len[i] = b.len;
			ae->login[i] = fg_buf_detach(&b, NULL);
			if (!ae->login[i])
				ae->login[i] = fg_xstrdup("");
		}
		fg_buf_release(&b);
		free(src);
	}
}

/* The preset's login file, as read at the start, copied to
 * home/HOME_DIR/FILE: the CLI logs in as it would, and finds nothing else
 * there. */
static void copy_login(const struct ep_agentenv *ae, const char *preset, const char *home)
{
	const struct ep_preset_creds *c = ep_preset_creds(preset);
	char *ddir, *dst;
	size_t i = 0;

	while (preset && ep_preset_name(i) && strcmp(ep_preset_name(i), preset))
		i++;
	if (!c || !c->file || i >= EP_AGENTENV_PRESETS_MAX || !ae->login[i])
		return;
	ddir = fg_path_join(home, c->home_dir);
	dst = fg_path_join(ddir, c->file);
	if ((mkdir(ddir, 0700) < 0 && errno != EEXIST) || write_private(dst, ae->login[i], ae->login_len[i]) < 0)
		ep_log(FG_MSG_WARN, "cannot copy the %s login file into the agent's HOME '%s'", c->product, dst);
	FG_FREE_ALL(ddir, dst);
}

int ep_agentenv_init(struct ep_agentenv *ae, const struct fg_review_config *cfg)
{
	const char *tmp = getenv("TMPDIR");
	char err[256];
	char *tmpl;

	memset(ae, 0, sizeof(*ae));
	fg_strvec_init(&ae->extra);
	if (ep_agentenv_extra(cfg, &ae->extra, err, sizeof(err)) < 0) {
		ep_log(FG_MSG_ERROR, "%s", err);
		return -EINVAL;
	}
	read_logins(ae);
	tmpl = fg_xasprintf("%s/forge-agents.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpl) || chmod(tmpl, 0711) < 0) {
		int rc = -errno;

		ep_log(FG_MSG_ERROR, "cannot create the agents' directory '%s': %s", tmpl, strerror(errno));
		free(tmpl);
		return rc;
	}
	ae->base = tmpl;
	return 0;
}

void ep_agentenv_release(struct ep_agentenv *ae)
{
	if (ae->base)
		fg_rm_tree(ae->base);
	free(ae->base);
	fg_strvec_release(&ae->extra);
	for (size_t i = 0; i < EP_AGENTENV_PRESETS_MAX; i++)
		free(ae->login[i]);
	memset(ae, 0, sizeof(*ae));
}


static const char *kind_name(enum ep_agentenv_kind k)
{
	return k == EP_AGENTENV_WORKER ? "worker" : k == EP_AGENTENV_REVIEWER ? "reviewer" : "check";
}

/* base/KIND.XXXXXX/{home,tmp}. 0 or -errno (d left empty). */
static int make_dirs(const struct ep_agentenv *ae, enum ep_agentenv_kind kind, struct ep_agentenv_dirs *d)
{
	char *dir = fg_xasprintf("%s/%s.XXXXXX", ae->base, kind_name(kind));
	int rc = 0;

	memset(d, 0, sizeof(*d));
	if (!mkdtemp(dir)) {
		rc = -errno;
		free(dir);
		return rc;
	}
	d->dir = dir;
	d->home = fg_path_join(dir, "home");
	d->tmp = fg_path_join(dir, "tmp");
	if (mkdir(d->home, 0700) < 0 || mkdir(d->tmp, 0700) < 0) {
		rc = -errno;
		ep_agentenv_stop(d);
	}
	return rc;
}

void ep_agentenv_stop(struct ep_agentenv_dirs *d)
{
	if (d->dir)
		fg_rm_tree(d->dir);
	FG_FREE_ALL(d->dir, d->home, d->tmp);
	memset(d, 0, sizeof(*d));
}

/* The allowed part of environ. */
static void take_base(const struct ep_agentenv *ae, const struct ep_agentenv_spec *s, struct fg_strvec *base)
{
	for (char **e = environ; e && *e; e++) {
		size_t n = strcspn(*e, "=");

		if ((*e)[n] == '=' && allowed(*e, n, s, &ae->extra))
			fg_strvec_push(base, *e);
	}
}

int ep_agentenv_start(const struct ep_agentenv *ae, struct ep_pid1 *p, const struct ep_agentenv_spec *s,
		      struct ep_agentenv_dirs *d, struct fg_strvec *out)
{
	struct fg_strvec base, set;
	int rc = make_dirs(ae, s->kind, d);

	if (rc < 0) {
		ep_log(FG_MSG_ERROR, "cannot create a HOME for the %s in '%s': %s", kind_name(s->kind), ae->base,
		       strerror(-rc));
		return rc;
	}
	fg_strvec_init(&base);
	fg_strvec_init(&set);
	take_base(ae, s, &base);
	fg_strvec_pushf(&set, "HOME=%s", d->home);
	fg_strvec_pushf(&set, "TMPDIR=%s", d->tmp);
	for (size_t i = 0; s->set && s->set[i]; i++)
		fg_strvec_push(&set, s->set[i]);
	if (s->task) {
		fg_strvec_pushf(&set, "FORGE_WORKSPACE=%s", s->task->workspace);
		fg_strvec_pushf(&set, "FORGE_STEP_NAME=%s", s->task->step);
		fg_strvec_pushf(&set, "FORGE_SKILL_NAME=%s", s->task->skill);
		fg_strvec_pushf(&set, "FORGE_TASK_KEY=%s", s->task->task_key);
		fg_strvec_pushf(&set, "FORGE_RUN_ID=%s", s->task->run_id);
	}
	if (s->kind != EP_AGENTENV_CHECK) {
		ep_preset_env(s->preset, &set);
		copy_login(ae, s->preset, d->home);
	}
	if (s->kind == EP_AGENTENV_REVIEWER && s->preset && !strcmp(s->preset, "gemini")) {
		char *f = fg_path_join(d->home, ".forge-gemini-system-settings.json");

		if (write_private(f, GEMINI_SYSTEM_SETTINGS, sizeof(GEMINI_SYSTEM_SETTINGS) - 1) == 0)
			fg_strvec_pushf(&set, "GEMINI_CLI_SYSTEM_SETTINGS_PATH=%s", f);
		free(f);
	}
	if (s->kind != EP_AGENTENV_WORKER)
		ep_agentenv_git(p, s->task ? s->task->workspace : NULL, d->tmp, &set);
	ep_env_build(out, base.v, set.v);
	fg_strvec_release(&base);
	fg_strvec_release(&set);
	return 0;
}
