/*
 * agentenv_git.c - git's overrides for the reviewers and the checks (see
 * agentenv.h, ep_agentenv_git).
 *
 * A repository's configuration is where git finds the programs it runs:
 * core.fsmonitor, hooks, pagers, and the filter and diff drivers that
 * attributes (an in-tree .gitattributes, .git/info/attributes) only name.
 * GIT_CONFIG_COUNT entries are read as command-line configuration, which
 * outranks every file, includes and includeIf'd files too; so each key
 * that runs a program gets an override here: the fixed ones always (with
 * the value git would use anyway when nothing set them), and each
 * named-driver key the workspace's configuration defines right now (read
 * with `git config --list --name-only`, which runs no program) an empty
 * or inert value. An emptied diff or merge driver makes the command that
 * needed it fail ("cannot run"), which the reviewer sees; it runs nothing.
 */
#include "agentenv.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent.h"
#include "capture.h"
#include "cli.h"
#include "forge/alloc.h"
#include "forge/fsutil.h"
#include "forge/util.h"
#include "forge/text.h"

/* What `git config --list --name-only -z` may print that we read. */
#define SCAN_OUT_MAX (1024u * 1024)
#define SCAN_TIMEOUT_S 30

/* Nested repositories (a .git below the workspace's top) whose
 * configuration is read too: at most this many, found in at most this many
 * directories, this deep. */
#define NESTED_MAX 16
#define NESTED_DIRS_MAX 20000
#define NESTED_DEPTH_MAX 12

/* Set for every reviewer and check: each value is git's own default or
 * runs nothing ("cat" is no pager, ":" no editor, an empty helper list). */
static const char *const FIXED[][2] = {
	{ "core.fsmonitor", "false" }, { "core.hooksPath", "/dev/null" }, { "core.pager", "cat" },
	{ "core.editor", ":" }, { "sequence.editor", ":" }, { "core.askPass", "" },
	{ "core.sshCommand", "ssh" }, { "credential.helper", "" }, { "log.showSignature", "false" },
	{ "gpg.program", "gpg" }, { "gpg.ssh.program", "ssh-keygen" }, { "gpg.x509.program", "gpgsm" },
	{ "protocol.ext.allow", "never" }, { "core.attributesFile", "/dev/null" },
};

/* Keys git lowercases (section and variable; a subsection keeps its case)
 * whose value is a program, by section and variable: "*" any. */
static const struct rule {
	const char *section, *var, *value;
} RULES[] = {
	{ "filter", "clean", "" }, { "filter", "smudge", "" }, { "filter", "process", "" },
	{ "filter", "required", "false" }, { "diff", "command", "" }, { "diff", "textconv", "cat" },
	{ "diff", "external", "" }, { "merge", "driver", "" }, { "alias", "*", "" },
	{ "pager", "*", "false" }, { "credential", "helper", "" },
	{ "remote", "uploadpack", "git-upload-pack" }, { "remote", "receivepack", "git-receive-pack" },
	{ "submodule", "update", "none" }, { "hook", "command", "" },
	{ "core", "alternaterefscommand", "" }, { "core", "gitproxy", "" },
	{ "gpg", "defaultkeycommand", "" },
	{ "difftool", "cmd", "" }, { "difftool", "path", "" }, { "mergetool", "cmd", "" },
	{ "mergetool", "path", "" }, { "man", "cmd", "" }, { "man", "path", "" },
	{ "browser", "cmd", "" }, { "browser", "path", "" },
	{ "sendemail", "tocmd", "" }, { "sendemail", "cccmd", "" }, { "sendemail", "headercmd", "" },
};

static bool part_is(const char *s, size_t n, const char *want)
{
	return !strcmp(want, "*") || (strlen(want) == n && !strncmp(s, want, n));
}

/* The override value for key, or NULL when it runs no program. "path" is a
 * tool's program (mergetool.X.path, man.X.path) only under a subsection
 * (difftool.path is no key). */
static const char *rule_for(const char *key)
{
	const char *dot = strchr(key, '.'), *last = strrchr(key, '.');

	/* An include names a file, which the listing has read already. */
	if (!dot || fg_skip_prefix(key, "include.", NULL) || fg_skip_prefix(key, "includeif.", NULL))
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(RULES); i++) {
		const struct rule *r = &RULES[i];

		if (!strcmp(r->var, "path") && dot == last)
			continue;
		if (part_is(key, (size_t)(dot - key), r->section) && part_is(last + 1, strlen(last + 1), r->var))
			return r->value;
	}
	return NULL;
}

/* The names of the workspace's configuration into names (no duplicates). */
static void scan(struct ep_pid1 *p, const char *workspace, const char *home, struct fg_strvec *names)
{
	const char *path = getenv("PATH");
	struct fg_strvec argv, envp;
	struct ep_agent_result r;
	struct ep_capture cap;
	struct ep_agent_spec s = {
		.role = "git", .cwd = workspace, .input = "", .timeout_s = SCAN_TIMEOUT_S, .kill_grace_s = 1,
		.echo_fd = -1, .log_fd = -1,
	};

	fg_strvec_init(&argv);
	fg_strvec_init(&envp);
	fg_strvec_pushl(&argv, "git", "config", "--list", "--name-only", "-z", NULL);
	fg_strvec_pushf(&envp, "PATH=%s", path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	fg_strvec_pushf(&envp, "HOME=%s", home);
	fg_strvec_pushl(&envp, "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", NULL);
	s.argv = argv.v;
	s.envp = envp.v;
	ep_capture_init(&cap, SCAN_OUT_MAX, 0);
	s.capture = &cap;
	if (ep_agent_run(p, &s, &r) == 0 && ep_agent_ok(&r)) {
		const char *q = cap.head.data ? cap.head.data : "", *end = q + cap.head.len;

		for (; q < end; q += strnlen(q, (size_t)(end - q)) + 1) {
			char *k = fg_xstrndup(q, strnlen(q, (size_t)(end - q)));

			if (*k && !fg_strvec_has(names, k))
				fg_strvec_push_take(names, k);
			else
				free(k);
		}
	}
	ep_capture_release(&cap);
	fg_strvec_release(&argv);
	fg_strvec_release(&envp);
}

struct walk {
	struct fg_strvec *repos;
	size_t dirs;
};

/* The directories below dir (a path) that hold a .git, into w->repos;
 * never following a symlink, never into a .git. */
static void find_nested(struct walk *w, const char *dir, int depth)
{
	struct fg_dir it;
	const char *name;

	if (depth > NESTED_DEPTH_MAX || w->dirs >= NESTED_DIRS_MAX || w->repos->n >= NESTED_MAX)
		return;
	w->dirs++;
	fg_dir_open(&it, AT_FDCWD, dir, 0);
	while (w->repos->n < NESTED_MAX && (name = fg_dir_next(&it)) != NULL) {
		struct stat st;

		if (!strcmp(name, ".git")) {
			if (depth > 0 && !fg_strvec_has(w->repos, dir))
				fg_strvec_push(w->repos, dir);
		} else if (fstatat(fg_dir_fd(&it), name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
			char *sub = fg_path_join(dir, name);

			find_nested(w, sub, depth + 1);
			free(sub);
		}
	}
	fg_dir_close(&it);
}

static void push_override(struct fg_strvec *set, size_t *n, const char *key, const char *value)
{
	fg_strvec_pushf(set, "GIT_CONFIG_KEY_%zu=%s", *n, key);
	fg_strvec_pushf(set, "GIT_CONFIG_VALUE_%zu=%s", *n, value);
	(*n)++;
}

void ep_agentenv_git(struct ep_pid1 *p, const char *workspace, const char *home, struct fg_strvec *set)
{
	struct fg_strvec names, over;
	size_t n = 0;

	fg_strvec_init(&names);
	fg_strvec_init(&over);
	if (workspace) {
		struct fg_strvec repos;
		struct walk w = { &repos, 0 };

		/* The workspace's repository, and any a worker nested in it: a
		 * reviewer's `cd sub && git diff` reads sub/.git/config. */
		fg_strvec_init(&repos);
		fg_strvec_push(&repos, workspace);
		find_nested(&w, workspace, 0);
		for (size_t i = 0; i < repos.n; i++)
			scan(p, repos.v[i], home, &names);
		fg_strvec_release(&repos);
	}
	fg_strvec_pushl(set, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_PAGER=cat", NULL);
	for (size_t i = 0; i < ARRAY_SIZE(FIXED); i++)
		push_override(&over, &n, FIXED[i][0], FIXED[i][1]);
	for (size_t i = 0; i < names.n && n <= EP_AGENTENV_GIT_MAX; i++) {
		const char *v = rule_for(names.v[i]);

		if (v)
			push_override(&over, &n, names.v[i], v);
	}
	if (n > EP_AGENTENV_GIT_MAX) {
		ep_log(FG_MSG_WARN, "the workspace's git configuration names more than %d programs: the agent's "
		       "git sees no repository (GIT_DIR=/dev/null)", EP_AGENTENV_GIT_MAX);
		fg_strvec_push(set, "GIT_DIR=/dev/null");
	} else {
		fg_strvec_pushf(set, "GIT_CONFIG_COUNT=%zu", n);
		for (size_t i = 0; i < over.n; i++)
			fg_strvec_push(set, over.v[i]);
	}
	fg_strvec_release(&over);
	fg_strvec_release(&names);
}
