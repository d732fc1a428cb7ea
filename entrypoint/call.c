/*
 * call.c - calling an agent: the private and prompt directories, argv,
 * environment, prompt files, the usage and denied tools said, whether a
 * run failed (see call.h).
 */
#include "call.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentenv.h"
#include "cli.h"
#include "preset.h"
#include "forge/alloc.h"
#include "forge/cmdline.h"
#include "forge/fsutil.h"
#include "forge/util.h"

/* A directory made fresh: mkdtemp() of tmpl, then mode. The path (owned)
 * or NULL after saying why. */
static char *make_dir(const char *tmpl_base, const char *prefix, mode_t mode)
{
	char *tmpl = fg_xasprintf("%s/%s.XXXXXX", tmpl_base, prefix);

	if (!mkdtemp(tmpl)) {
		ep_log(FG_MSG_ERROR, "cannot create a temporary directory '%s': %s", tmpl, strerror(errno));
		free(tmpl);
		return NULL;
	}
	if (chmod(tmpl, mode) < 0) {
		ep_log(FG_MSG_ERROR, "cannot set the mode of '%s': %s", tmpl, strerror(errno));
		rmdir(tmpl);
		free(tmpl);
		return NULL;
	}
	return tmpl;
}

int ep_call_tmpdir_make(char **tmpdir, char **indir)
{
	const char *base = getenv("TMPDIR");

	if (!base || !*base)
		base = "/tmp";
	*tmpdir = make_dir(base, "forge-ep", 0700);
	/* Searchable, not listable: an agent of another uid (the entrypoint
	 * is root) reaches only the directory it is told. */
	*indir = *tmpdir ? make_dir(base, "forge-in", 0711) : NULL;
	return *indir ? 0 : -1;
}

int ep_call_tmp_write(int dfd, const char *name, const void *data, size_t len)
{
	int fd, rc;

	/* Whatever stands there (a link an agent planted) goes, never followed. */
	if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	rc = fd < 0 ? -errno : fg_write_all(fd, data, len);
	if (fd >= 0 && fchmod(fd, 0444) < 0 && !rc)
		rc = -errno;
	if (fd >= 0 && close(fd) < 0 && !rc && errno != EINTR)
		rc = -errno;
	return rc;
}

/* Removes an agent's prompt directory and what is in it (files only: the
 * agent could not write there). */
static void remove_inputs(const char *dir)
{
	struct fg_dir it;
	const char *name;

	if (fg_dir_open(&it, AT_FDCWD, dir, FG_DIR_NOFOLLOW))
		return;
	/* Ours: an agent of our uid may have changed its mode. */
	(void)fchmod(fg_dir_fd(&it), 0700);
	while ((name = fg_dir_next(&it)))
		(void)unlinkat(fg_dir_fd(&it), name, 0);
	fg_dir_close(&it);
	rmdir(dir);
}

void ep_call_tmpdir_remove(char **tmpdir, char **indir)
{
	if (*indir)
		rmdir(*indir);
	FG_FREE_AND_NULL(*indir);
	if (*tmpdir)
		rmdir(*tmpdir);
	FG_FREE_AND_NULL(*tmpdir);
}

char *ep_call_system_name(const char *panel_role)
{
	return panel_role ? fg_xasprintf("system-prompt.%s.md", panel_role)
			  : fg_xstrdup("system-prompt.md");
}

/* {system_prompt}: the text itself, or, past what one argument may hold
 * (Linux: 128 KiB), a pointer to the file that holds it. Owned. */
static char *system_arg(const struct ep_call *c, const char *file)
{
	const char *text = c->system ? c->system_text : NULL;

	if (!text)
		return fg_xstrdup("");
	if (strlen(text) <= EP_SYSTEM_ARG_MAX)
		return fg_xstrdup(text);
	return fg_xasprintf("Your instructions as the reviewer are in the file %s. Read all of it "
			    "before anything else and follow it.", file);
}

static void build_argv(const struct ep_task *t, const struct ep_call *c, const char *dir,
		       const char *prompt_file, const char *cycle, struct fg_strvec *argv)
{
	char *name = ep_call_system_name(c->panel_role);
	char *sys = c->system ? fg_path_join(dir, name) : fg_xstrdup("");
	char *text = system_arg(c, sys);
	const struct fg_placeholder ph[] = {
		{ "prompt_file", prompt_file }, { "system_prompt_file", sys }, { "system_prompt", text },
		{ "workspace", t->workspace }, { "cycle", cycle }, { "step", t->step },
		{ "skill", t->skill }, { "task_key", t->task_key },
		{ "role", c->panel_role ? c->panel_role : c->system ? "default" : "" },
	};
	char err[128];

	free(name);
	/* Validated by ep_task_load(): this split cannot fail. */
	fg_cmdline_split(!strcmp(c->role, "worker") ? t->worker_cmd : t->reviewer_cmd, argv, err,
			 sizeof(err));
	fg_cmdline_expand(argv, ph, ARRAY_SIZE(ph));
	free(text);
	free(sys);
}

/* TRACEPARENT: the agent's own span in the run's trace (span, chosen by
 * the caller), so that a CLI whose telemetry is on nests its spans under
 * it; never the entrypoint's own, and none in a run that is not traced. */
static void trace_env(const struct ep_task *t, const char *span, struct fg_strvec *set)
{
	char tp[FG_TRACEPARENT_LEN];

	fg_strvec_push(set, "TRACESTATE");
	if (!t->traced || !*span) {
		fg_strvec_push(set, "TRACEPARENT");
		return;
	}
	fg_traceparent_format(tp, t->trace.trace_id, span, t->trace.sampled);
	fg_strvec_pushf(set, "TRACEPARENT=%s", tp);
}

/* The agent's environment (agentenv.h), its TRACEPARENT (span), and its
 * fresh HOME and TMPDIR in d; its prompt files are in dir. 0 or a negative
 * errno (said). */
static int build_env(const struct ep_stage_in *in, const struct ep_call *c, const char *dir,
		     const char *prompt_file, const char *span, struct ep_agentenv_dirs *d,
		     struct fg_strvec *envp)
{
	const struct ep_task *t = in->t;
	bool worker = !strcmp(c->role, "worker");
	struct ep_agentenv_spec spec = {
		worker ? EP_AGENTENV_WORKER : EP_AGENTENV_REVIEWER,
		worker ? t->worker_preset : t->reviewer_preset,
		NULL, t,
	};
	struct fg_strvec set;
	int rc;

	fg_strvec_init(&set);
	trace_env(t, span, &set);
	fg_strvec_pushf(&set, "FORGE_ROLE=%s", c->role);
	fg_strvec_pushf(&set, "FORGE_CYCLE=%d", c->cycle);
	fg_strvec_pushf(&set, "FORGE_PROMPT_FILE=%s", prompt_file);
	if (c->system) {
		char *name = ep_call_system_name(c->panel_role);

		fg_strvec_pushf(&set, "FORGE_SYSTEM_PROMPT_FILE=%s/%s", dir, name);
		fg_strvec_pushf(&set, "FORGE_REVIEWER_ROLE=%s", c->panel_role ? c->panel_role : "default");
		free(name);
	} else {
		fg_strvec_push(&set, "FORGE_SYSTEM_PROMPT_FILE");
		fg_strvec_push(&set, "FORGE_REVIEWER_ROLE");
	}
	if (c->feedback)
		fg_strvec_pushf(&set, "FORGE_FEEDBACK_FILE=%s/feedback.md", dir);
	else
		fg_strvec_push(&set, "FORGE_FEEDBACK_FILE");
	spec.set = set.v;
	rc = ep_agentenv_start(in->ae, in->pid1, &spec, d, envp);
	fg_strvec_release(&set);
	return rc;
}

bool ep_call_failed(struct ep_agent_result *r, const struct ep_output *o)
{
	char what[sizeof(r->what)];

	const char *meaning = r->end == EP_AGENT_EXITED ? ep_output_exit_meaning(o->format, r->exit_code) : NULL;

	if (ep_agent_ok(r) && o->ok)
		return false;
	if (meaning) {
		size_t n = strlen(r->what);

		snprintf(r->what + n, sizeof(r->what) - n, " (%s)", meaning);
	}
	if (!o->ok && ep_agent_ok(r))
		snprintf(what, sizeof(what), "%.900s (its %s output names a failure, exit status 0)", o->error,
			 ep_output_format_name(o->format));
	else if (!o->ok && r->end == EP_AGENT_EXITED)
		snprintf(what, sizeof(what), "%.200s: %.800s", r->what, o->error);
	else
		memcpy(what, r->what, sizeof(what));
	memcpy(r->what, what, sizeof(what));
	return true;
}

/* "input_tokens=N ... cost_usd=X" of the reported fields, into buf. */
static void usage_line(const struct fg_usage *u, char *buf, size_t n)
{
	static const struct { unsigned bit; const char *name; } f[] = {
		{ FG_USAGE_INPUT, "input_tokens" }, { FG_USAGE_OUTPUT, "output_tokens" },
		{ FG_USAGE_CACHED, "cached_input_tokens" }, { FG_USAGE_REASONING, "reasoning_tokens" },
		{ FG_USAGE_TURNS, "turns" }, { FG_USAGE_DURATION, "duration_ms" },
	};
	const int64_t v[] = { u->input_tokens, u->output_tokens, u->cached_input_tokens,
			      u->reasoning_tokens, u->turns, u->duration_ms };
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(f) && o < n; i++)
		if (u->have & f[i].bit)
			o += (size_t)snprintf(buf + o, n - o, "%s%s=%lld", o ? " " : "", f[i].name,
					      (long long)v[i]);
	if ((u->have & FG_USAGE_COST) && o < n)
		snprintf(buf + o, n - o, "%scost_usd=%.6f", o ? " " : "", u->cost_usd);
}

/* What the CLI refused (a warning: the runner logs it at WARN) and how
 * often it retried (progress, not the outcome). */
static void say_denied(const struct ep_call *c)
{
	const struct ep_output *o = c->out;
	struct fg_buf names;

	if (o->retries)
		ep_log(FG_MSG_INFO, "%s: the CLI retried %llu time(s)%s%s", c->role, (unsigned long long)o->retries,
			 o->retry_note ? "; last: " : "", o->retry_note ? o->retry_note : "");
	if (!o->denied_calls)
		return;
	fg_buf_init(&names, FG_DENIED_MAX * (FG_DENIED_NAME_MAX + 2) + 1);
	fg_denied_join(&o->denied, &names);
	ep_log(FG_MSG_WARN, "%s%s%s: tools denied: %s (%llu of %llu tool call(s) refused by the CLI's "
		 "permissions: see docs/guide/agents.md#presets)", c->role, c->panel_role ? " " : "",
		 c->panel_role ? c->panel_role : "", names.len ? fg_buf_str(&names) : "?",
		 (unsigned long long)o->denied_calls,
		 (unsigned long long)(o->tool_calls > o->denied_calls ? o->tool_calls : o->denied_calls));
	fg_buf_release(&names);
}

/* Says what a finished run reported: denied tools, a refused cost, the
 * usage (the caller counts it: it is in c->out). */
static void say_usage(const struct ep_call *c)
{
	const struct fg_usage *u = &c->out->usage;
	char line[512];

	say_denied(c);
	if (u->refused & FG_USAGE_COST) {
		char who[128];

		snprintf(who, sizeof(who), "%s%s%s", c->role, c->panel_role ? " " : "",
			 c->panel_role ? c->panel_role : "");
		ep_output_say_refused_cost(c->out, who);
	}
	if (!fg_usage_empty(u)) {
		usage_line(u, line, sizeof(line));
		ep_log(FG_MSG_INFO, "%s usage: %s", c->role, line);
	}
}

/* c->run: what the records say of this run (phase.h). */
static void describe_run(const struct ep_call *c, const struct ep_agent_result *r, const char *span)
{
	static const char *const providers[] = {
		[EP_OUTPUT_CLAUDE] = "anthropic", [EP_OUTPUT_CODEX] = "openai", [EP_OUTPUT_GEMINI] = "gcp.gemini",
	};
	const char *p = (size_t)c->out->format < ARRAY_SIZE(providers) ? providers[c->out->format] : NULL;

	fg_agent_run_init(c->run);
	c->run->t = r->t;
	c->run->usage = c->out->usage;
	snprintf(c->run->span_id, sizeof(c->run->span_id), "%s", span);
	snprintf(c->run->provider, sizeof(c->run->provider), "%s", p ? p : "");
}

/* Writes the agent's prompt files into dir (made fresh): its prompt, the
 * system prompt of a reviewer, the feedback of a worker retry. 0, or -1
 * after r was filled (the agent did not start). */
static int write_inputs(const struct ep_call *c, const char *dir, struct ep_agent_result *r)
{
	const char *sys = c->system ? c->system_text : NULL;
	char *sysname = ep_call_system_name(c->panel_role);
	int dfd = fg_open_dir(AT_FDCWD, dir, FG_DIR_NOFOLLOW), rc = dfd < 0 ? dfd : 0;
	const char *what = c->prompt_name;

	if (!rc)
		rc = ep_call_tmp_write(dfd, c->prompt_name, c->prompt, strlen(c->prompt));
	if (!rc && sys) {
		what = sysname;
		rc = ep_call_tmp_write(dfd, sysname, sys, strlen(sys));
	}
	if (!rc && c->feedback) {
		what = "feedback.md";
		rc = ep_call_tmp_write(dfd, what, c->feedback_text ? c->feedback_text : "",
				       c->feedback_text ? strlen(c->feedback_text) : 0);
	}
	/* Read-only from now on: the agent reads it, nobody writes it. */
	if (!rc && fchmod(dfd, 0555) < 0)
		rc = -errno;
	if (dfd >= 0)
		close(dfd);
	if (rc < 0) {
		memset(r, 0, sizeof(*r));
		r->end = EP_AGENT_NOT_STARTED;
		r->error = -rc;
		snprintf(r->what, sizeof(r->what), "cannot run %s: cannot write '%s/%s': %s", c->role, dir, what,
			 strerror(-rc));
		ep_log(FG_MSG_ERROR, "%s", r->what);
	}
	free(sysname);
	return rc < 0 ? -1 : 0;
}

/* The agent's own prompt directory, fresh (the previous agent's is gone
 * with it); NULL after r was filled. */
static char *make_inputs(const struct ep_stage_in *in, const struct ep_call *c, struct ep_agent_result *r)
{
	char *tmpl = fg_xasprintf("%s/%s%s%s.XXXXXX", in->indir, c->role, c->panel_role ? "." : "",
				  c->panel_role ? c->panel_role : "");

	if (mkdtemp(tmpl) && !write_inputs(c, tmpl, r))
		return tmpl;
	if (r->end != EP_AGENT_NOT_STARTED) {
		memset(r, 0, sizeof(*r));
		r->end = EP_AGENT_NOT_STARTED;
		r->error = errno;
		snprintf(r->what, sizeof(r->what), "cannot run %s: cannot create '%s': %s", c->role, tmpl,
			 strerror(errno));
		ep_log(FG_MSG_ERROR, "%s", r->what);
	}
	remove_inputs(tmpl);
	free(tmpl);
	return NULL;
}

static void run_in_box(const struct ep_stage_in *in, const struct ep_call *c, const char *dir,
		       const char *span, struct ep_agent_result *r)
{
	const struct ep_task *t = in->t;
	char *prompt_file = fg_path_join(dir, c->prompt_name);
	struct fg_strvec argv, envp;
	char cycle[16], prefix[64];
	struct ep_agentenv_dirs dirs;
	struct ep_agent_spec s;
	int rc, env_rc;

	snprintf(cycle, sizeof(cycle), "%d", c->cycle);
	fg_strvec_init(&argv);
	fg_strvec_init(&envp);
	build_argv(t, c, dir, prompt_file, cycle, &argv);
	env_rc = build_env(in, c, dir, prompt_file, span, &dirs, &envp);
	if (c->panel_role)
		snprintf(prefix, sizeof(prefix), "%s:%s", c->role, c->panel_role);
	s = (struct ep_agent_spec){
		.role = c->panel_role ? prefix : c->role, .argv = argv.v, .envp = envp.v, .cwd = t->workspace,
		.input = c->prompt, .input_len = strlen(c->prompt),
		.timeout_s = t->timeout_s, .idle_timeout_s = t->idle_timeout_s,
		.kill_grace_s = t->kill_grace_s, .heartbeat_s = t->heartbeat_s, .output = c->out,
		.log_fd = c->log_fd, .read_dir = dir,
		.log_max = EP_REVIEWER_LOG_MAX, .echo_fd = 2, .atomic_echo = c->panel_role != NULL,
	};
	rc = env_rc < 0 ? env_rc : ep_agent_run(in->pid1, &s, r);
	ep_agentenv_stop(&dirs);
	if (rc < 0) {
		memset(r, 0, sizeof(*r));
		r->end = EP_AGENT_NOT_STARTED;
		r->error = -rc;
		snprintf(r->what, sizeof(r->what), "cannot run %s: %s", c->role, strerror(-rc));
	}
	fg_strvec_release(&argv);
	fg_strvec_release(&envp);
	free(prompt_file);
}

int ep_call_run(const struct ep_stage_in *in, const struct ep_call *c, struct ep_agent_result *r)
{
	char span[FG_SPAN_ID_HEX + 1] = "";
	char *dir;

	memset(r, 0, sizeof(*r));
	ep_output_init(c->out, !strcmp(c->role, "worker") ? in->t->worker_output : in->t->reviewer_output);
	/* A signal that came between two agents: start no new one. */
	ep_pid1_poll(in->pid1, 0, NULL);
	if (in->pid1->term_sig) {
		r->end = EP_AGENT_INTERRUPTED;
		r->signal = in->pid1->term_sig;
		return EP_STOP_SIGNAL;
	}
	/* Written now, after every process of the previous agent is gone
	 * (agent.h), in a directory of this agent's only. */
	dir = make_inputs(in, c, r);
	if (dir) {
		if (in->t->traced)
			fg_trace_random_hex(span, FG_SPAN_ID_HEX);
		run_in_box(in, c, dir, span, r);
		remove_inputs(dir);
		free(dir);
	}
	ep_output_finish(c->out);
	say_usage(c);
	if (c->run)
		describe_run(c, r, span);
	return r->end == EP_AGENT_INTERRUPTED || in->pid1->term_sig ? EP_STOP_SIGNAL : 0;
}
