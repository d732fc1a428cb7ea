/*
 * checks.c - review.md's checks after each worker turn (see checks.h).
 */
#include "checks.h"
#include "forge/quote.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "capture.h"
#include "cli.h"
#include "forge/alloc.h"
#include "forge/cmdline.h"
#include "forge/cycle.h"
#include "forge/exit.h"
#include "forge/fsutil.h"
#include "forge/text.h"
#include "forge/util.h"

extern char **environ;

int ep_step_log_open(const char *dir, const char *name)
{
	int dfd = fg_open_dir(AT_FDCWD, dir, 0);
	int fd = -1;

	if (dfd < 0)
		errno = -dfd;
	if (dfd >= 0) {
		/* The workspace is the agents' playground: a symlink or a hard
		 * link planted under this name must not redirect or truncate
		 * anything. Unlink the name, then create a fresh inode
		 * (O_EXCL implies no symlink is followed). */
		if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
			ep_log(FG_MSG_WARN, "cannot replace '%s/%s': %s", dir, name, strerror(errno));
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		close(dfd);
	}
	if (fd < 0)
		ep_log(FG_MSG_WARN, "cannot write '%s/%s': %s", dir, name, strerror(errno));
	return fd;
}

/* The words of k's command line, placeholders not expanded. */
static void split_run(const struct fg_check *k, struct fg_strvec *argv)
{
	char err[160];

	/* Validated by the review.md parser: this split cannot fail. */
	fg_cmdline_split(k->run, argv, err, sizeof(err));
}

/* argv's placeholders expanded (cycle: "" before any cycle). */
static void expand(const struct ep_checks *x, const char *cycle, struct fg_strvec *argv)
{
	const struct ep_task *t = x->t;
	const struct fg_placeholder ph[] = {
		{ "workspace", t->workspace }, { "step", t->step }, { "skill", t->skill },
		{ "task_key", t->task_key }, { "cycle", cycle }, { "skill_dir", x->skill_dir },
	};

	fg_cmdline_expand(argv, ph, ARRAY_SIZE(ph));
}

/* The check's argv, placeholders expanded. */
static void check_argv(const struct ep_checks *x, const struct fg_check *k, const char *cycle,
		       struct fg_strvec *argv)
{
	split_run(k, argv);
	expand(x, cycle, argv);
}

/* The first word of k's command that names a {skill_dir} path which does
 * not exist, expanded (owned), or NULL: a script the skill was meant to
 * ship and does not. */
static char *skill_path_missing(const struct ep_checks *x, const struct fg_check *k)
{
	struct fg_strvec raw, one;
	struct stat st;
	char *missing = NULL;

	fg_strvec_init(&raw);
	split_run(k, &raw);
	for (size_t i = 0; !missing && i < raw.n; i++) {
		if (!strstr(raw.v[i], "{skill_dir}"))
			continue;
		fg_strvec_init(&one);
		fg_strvec_push(&one, raw.v[i]);
		expand(x, "1", &one);
		if (stat(one.v[0], &st) < 0)
			missing = fg_xstrdup(one.v[0]);
		fg_strvec_release(&one);
	}
	fg_strvec_release(&raw);
	return missing;
}

/* An executable regular file at path (relative: to the workspace). */
static int executable_at(const char *workspace, const char *path)
{
	char *full = path[0] == '/' ? fg_xstrdup(path) : fg_path_join(workspace, path);
	struct stat st;
	int rc = 0;

	if (stat(full, &st) < 0)
		rc = -errno;
	else if (!S_ISREG(st.st_mode))
		rc = -EACCES;
	else if (access(full, X_OK) < 0)
		rc = -errno;
	free(full);
	return rc;
}

/* The value of PATH in envp, or the default search path. */
static const char *env_path(char *const *envp)
{
	const char *v = ep_env_get(envp, "PATH");

	return v ? v : "/usr/local/bin:/usr/bin:/bin";
}

/* Whether execvpe() could start prog: 0 or -errno (the last one seen). */
static int startable(const char *workspace, const char *prog, char *const *envp)
{
	const char *path = env_path(envp);
	int rc = -ENOENT;

	if (strchr(prog, '/'))
		return executable_at(workspace, prog);
	for (const char *p = path; rc && *p;) {
		size_t n = strcspn(p, ":");
		char *dir = n ? fg_xasprintf("%.*s", (int)n, p) : fg_xstrdup(".");
		char *full = fg_path_join(dir, prog);

		rc = executable_at(workspace, full);
		free(full);
		free(dir);
		p += n + (p[n] == ':');
	}
	return rc;
}

int ep_checks_preflight(const struct ep_checks *x)
{
	int bad = 0;

	for (size_t i = 0; i < x->cfg->nchecks; i++) {
		const struct fg_check *k = &x->cfg->checks[i];
		struct fg_strvec argv;
		int rc;

		char *missing = skill_path_missing(x, k);

		fg_strvec_init(&argv);
		check_argv(x, k, "1", &argv);
		rc = startable(x->t->workspace, argv.v[0], environ);
		if (missing) {
			ep_log(FG_MSG_ERROR, "check '%s' (review.md line %d) cannot run: '%s' does not exist "
			       "({skill_dir} is the directory of the step's review.md: ship the file there)",
			       k->name, k->line, missing);
			bad = 1;
		} else if (rc < 0) {
			ep_log(FG_MSG_ERROR, "check '%s' (review.md line %d) cannot start: '%s': %s%s", k->name, k->line,
				 argv.v[0], strerror(-rc),
				 strchr(argv.v[0], '/') && argv.v[0][0] != '/'
					 ? " (a relative path is resolved from the workspace)" : "");
			bad = 1;
		}
		free(missing);
		fg_strvec_release(&argv);
	}
	return bad ? FG_EXIT_USAGE : 0;
}

/* The last bytes of the capture, as valid UTF-8 without a cut character
 * at the start. Owned. */
static char *tail_text(const struct ep_capture *cap)
{
	struct fg_buf b;
	size_t skip = 0;
	char *out;

	fg_buf_init(&b, EP_CAPTURE_HEAD_MAX);
	ep_capture_text(cap, &b);
	if (b.len > FG_CHECK_TAIL_BYTES)
		skip = b.len - FG_CHECK_TAIL_BYTES;
	while (skip < b.len && ((unsigned char)b.data[skip] & 0xc0) == 0x80)
		skip++;
	out = fg_utf8_scrub(b.data ? b.data + skip : "", b.len - skip);
	fg_buf_release(&b);
	return out;
}

/* The check's environment (agentenv.h: a check's allow-list, with the
 * workspace, step and task) with its role, name, cycle and the skill's
 * directory, and its fresh HOME and TMPDIR in d. 0 or -errno. */
static int check_env(const struct ep_checks *x, struct ep_pid1 *p, const struct fg_check *k, int cycle,
		     struct ep_agentenv_dirs *d, struct fg_strvec *envp)
{
	struct ep_agentenv_spec spec = { EP_AGENTENV_CHECK, NULL, NULL, x->t };
	struct fg_strvec set;
	int rc;

	fg_strvec_init(&set);
	fg_strvec_push(&set, "FORGE_ROLE=check");
	fg_strvec_pushf(&set, "FORGE_CHECK_NAME=%s", k->name);
	fg_strvec_pushf(&set, "FORGE_CYCLE=%d", cycle);
	fg_strvec_pushf(&set, "FORGE_SKILL_DIR=%s", x->skill_dir ? x->skill_dir : "");
	spec.set = set.v;
	rc = ep_agentenv_start(x->ae, p, &spec, d, envp);
	fg_strvec_release(&set);
	return rc;
}

/* Runs check k for cycle `cycle` into r. 0, 1 on a stop signal, or
 * EP_CHECKS_CANNOT_RUN (not started, exit status 126 or 127). */
static int run_one(const struct ep_checks *x, struct ep_pid1 *p, const struct fg_check *k, int cycle,
		   struct fg_check_result *r)
{
	char role[FG_CHECK_NAME_MAX + 8], num[16];
	char *logname = fg_check_log_name(cycle, k->name);
	int log_fd = ep_step_log_open(x->step_dir, logname);
	struct fg_strvec argv, envp;
	struct ep_agentenv_dirs dirs;
	struct ep_agent_result ar;
	struct ep_capture cap;
	struct ep_agent_spec s;
	int env_rc;

	snprintf(role, sizeof(role), "check:%s", k->name);
	snprintf(num, sizeof(num), "%d", cycle);
	fg_strvec_init(&argv);
	fg_strvec_init(&envp);
	check_argv(x, k, num, &argv);
	env_rc = check_env(x, p, k, cycle, &dirs, &envp);
	ep_capture_init(&cap, 0, FG_CHECK_TAIL_BYTES + 8);
	s = (struct ep_agent_spec){
		.role = role, .argv = argv.v, .envp = envp.v, .cwd = x->t->workspace, .input = "",
		.timeout_s = k->timeout_s, .kill_grace_s = x->t->kill_grace_s, .capture = &cap,
		.log_fd = log_fd, .log_max = EP_CHECK_LOG_MAX, .echo_fd = 2, .merge_stderr = true,
	};
	if (env_rc < 0 || ep_agent_run(p, &s, &ar) < 0) {
		memset(&ar, 0, sizeof(ar));
		ar.end = EP_AGENT_NOT_STARTED;
		snprintf(ar.what, sizeof(ar.what), "cannot run check '%s'", k->name);
	}
	ep_agentenv_stop(&dirs);
	r->exit_code = ar.end == EP_AGENT_EXITED ? ar.exit_code : -1;
	r->timed_out = ar.end == EP_AGENT_TIMEOUT;
	r->duration_seconds = ar.seconds;
	r->t = ar.t;
	free(r->output_tail);
	r->output_tail = ar.end == EP_AGENT_NOT_STARTED ? fg_xstrdup(ar.what) : tail_text(&cap);
	r->log = log_fd >= 0 ? fg_xstrdup(logname) : NULL;
	if (log_fd >= 0)
		close(log_fd);
	ep_capture_release(&cap);
	fg_strvec_release(&argv);
	fg_strvec_release(&envp);
	free(logname);
	if (ar.end == EP_AGENT_INTERRUPTED || p->term_sig)
		return 1;
	return ar.end == EP_AGENT_NOT_STARTED || r->exit_code == 126 || r->exit_code == 127
		       ? EP_CHECKS_CANNOT_RUN : 0;
}

int ep_checks_run(const struct ep_checks *x, struct ep_pid1 *p, int k, struct fg_evidence *ev)
{
	int rc;

	for (size_t i = 0; i < x->cfg->nchecks; i++) {
		const struct fg_check *c = &x->cfg->checks[i];
		struct fg_check_result *r = fg_evidence_add_check(ev, c->name);

		if (!r)
			break;
		ep_log(FG_MSG_INFO, "running check '%s' (cycle %d/%d)", c->name, k, x->cfg->max_retries);
		rc = run_one(x, p, c, k, r);
		if (rc)
			return rc;
		ep_log(FG_MSG_INFO, "check '%s': %s (exit code %d, %.1f s)", c->name,
			 r->exit_code == 0 ? "passed" : r->timed_out ? "timed out" : "failed", r->exit_code,
			 r->duration_seconds);
		if (r->exit_code != 0)
			break;
	}
	return 0;
}

static const struct fg_check *config_of(const struct ep_checks *x, const char *name)
{
	for (size_t i = 0; i < x->cfg->nchecks; i++)
		if (!strcmp(x->cfg->checks[i].name, name))
			return &x->cfg->checks[i];
	return NULL;
}

/* The output tail as a fenced block whose fence is longer than any run of
 * backticks inside, so the output cannot close it. */
static void add_tail(struct fg_buf *b, const char *tail)
{
	fg_quote_md_fence(b, tail, NULL, "(no output)");
}

void ep_checks_feedback(struct fg_buf *b, const struct ep_checks *x, const struct fg_check_result *r)
{
	const struct fg_check *k = config_of(x, r->name);

	if (r->timed_out)
		fg_buf_addf(b, "The check '%s' timed out after %d s", r->name, k ? k->timeout_s : 0);
	else if (r->exit_code < 0)
		fg_buf_addf(b, "The check '%s' did not complete", r->name);
	else
		fg_buf_addf(b, "The check '%s' failed with exit code %d", r->name, r->exit_code);
	fg_buf_addf(b, " (command: %s). No reviewer was asked: make this check pass first.\n\n",
		    k ? k->run : "?");
	fg_buf_addf(b, "The end of its output%s%s%s:\n\n", r->log ? " (all of it: " : "", r->log ? r->log : "",
		    r->log ? ")" : "");
	add_tail(b, r->output_tail);
}

void ep_checks_setup_reason(struct fg_buf *b, const struct ep_checks *x, const struct fg_check_result *r)
{
	const struct fg_check *k = config_of(x, r->name);
	const char *how = r->exit_code == 127 ? " (127: a command was not found)"
			  : r->exit_code == 126 ? " (126: a command could not be executed)" : "";

	if (r->exit_code < 0)
		fg_buf_addf(b, "the check '%s' could not be started", r->name);
	else
		fg_buf_addf(b, "the check '%s' could not run: exit code %d%s", r->name, r->exit_code, how);
	fg_buf_addf(b, " (command: %s); this is a problem of the skill or the image, not of the "
		    "worker's work, so no worker turn is spent on it. The end of its output:\n",
		    k ? k->run : "?");
	fg_buf_adds(b, *r->output_tail ? r->output_tail : "(no output)");
}

void ep_checks_prompt(struct fg_buf *b, const struct ep_checks *x, const struct fg_evidence *ev)
{
	if (!ev->nchecks)
		return;
	fg_buf_adds(b, "\n## Checks that ran after the worker's turn\n\n"
		       "forge-entrypoint ran these in the workspace before asking you; each passed. They are "
		       "evidence you may rely on: do not repeat them unless you doubt them.\n\n");
	for (size_t i = 0; i < ev->nchecks; i++) {
		const struct fg_check_result *r = &ev->checks[i];
		const struct fg_check *k = config_of(x, r->name);

		fg_buf_addf(b, "%s`%s` (%s): exit code %d in %.1f s%s%s; the end of its output:\n\n",
			    i ? "\n" : "", r->name, k ? k->run : "?", r->exit_code, r->duration_seconds,
			    r->log ? ", log " : "", r->log ? r->log : "");
		add_tail(b, r->output_tail);
	}
}
