/*
 * loop.c - the worker and the review loop (see loop.h).
 */
#include "loop.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "capture.h"
#include "cli.h"
#include "frames.h"
#include "output.h"
#include "panel.h"
#include "pid1.h"
#include "preset.h"
#include "prompt.h"
#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/cmdline.h"
#include "forge/cycle.h"
#include "forge/exit.h"
#include "forge/fsutil.h"
#include "forge/resolve.h"
#include "forge/stepdir.h"
#include "forge/reviewmd.h"
#include "forge/summary.h"
#include "forge/text.h"
#include "forge/timeutil.h"
#include "forge/util.h"
#include "forge/verdict.h"

extern char **environ;

/* Internal: an agent run ended because we received a signal. */
#define STOP_SIGNAL (-1)

static const char *const TMP_FILES[] = {
	"worker-prompt.md", "reviewer-prompt.md", "system-prompt.md", "feedback.md",
};

struct loop {
	const struct ep_task *t;
	struct ep_pid1 pid1;
	char *tmpdir;                 /* owned */
	char *step_dir;               /* owned: W/ + fg_cycle_dir() */
	char *review_md;              /* owned or NULL */
	struct fg_review_config cfg;
	int max;                      /* resolved max_retries */
	struct fg_cycle *hist;        /* owned: real cycles so far */
	bool *reviewer_failed;        /* parallel to hist */
	size_t nhist;
	char *system_prompt;          /* owned: the reviewer's, once review starts */
	char *role_system[FG_REVIEWERS_MAX];  /* owned: each panel role's system prompt */
	struct fg_usage worker_last;  /* the last worker run's usage, for the next cycle */
	struct fg_usage_pair total;   /* the step's totals */
	const struct fg_cycle *blocked_by;  /* the cycle whose questions a blocked summary lists */
	bool checks_passed;           /* this cycle's checks ran and passed (evidence) */
};


static void print_diags(const char *subject, const struct fg_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct fg_diag *g = &d->v[i];

		if (g->line > 0)
			ep_error("%s: %s:%d: %s", g->level == FG_DIAG_ERROR ? "error" : "warning", subject,
			    g->line, g->msg);
		else
			ep_error("%s: %s: %s", g->level == FG_DIAG_ERROR ? "error" : "warning", subject, g->msg);
	}
}

/* Step 1: which review.md, and its configuration. FG_EXIT_USAGE or 0. */
static int configure(struct loop *l)
{
	struct fg_review_env env;
	struct fg_diags d;
	int rc;

	fg_diags_init(&d);
	rc = fg_resolve_review_md(l->t->skills_dir, l->t->skill, l->t->task_key, &l->review_md, &d);
	print_diags("resolve", &d);
	fg_diags_release(&d);
	if (rc < 0 && rc != -ENOENT)
		return FG_EXIT_USAGE;
	if (!l->review_md) {
		struct fg_buf why;

		/* A warning: a misspelled skill or a forgotten --skills-dir
		 * otherwise looks like a run that was reviewed. */
		fg_buf_init(&why, 8192);
		fg_resolve_explain_missing(l->t->skills_dir, l->t->skill, l->t->task_key, &why);
		ep_error("warning: %s: nothing is reviewed, the worker's result is final", fg_buf_str(&why));
		fg_buf_release(&why);
		return 0;
	}
	fg_review_env_from_environ(&env);
	fg_review_config_load(&l->cfg, l->review_md, &env);
	print_diags(l->review_md, &l->cfg.diags);
	l->max = l->cfg.max_retries;
	ep_error("review.md: %s (max_retries %d%s)", l->review_md, l->max,
	    l->max == 0 ? ": review disabled" : "");
	if (l->max > 0 && !l->t->reviewer_cmd) {
		ep_error("error: FORGE_REVIEWER_CMD is not set, but '%s' asks for review", l->review_md);
		return FG_EXIT_USAGE;
	}
	return 0;
}

static int make_tmpdir(struct loop *l)
{
	const char *base = getenv("TMPDIR");
	char *tmpl = fg_xasprintf("%s/forge-ep.XXXXXX", base && *base ? base : "/tmp");

	if (!mkdtemp(tmpl)) {
		ep_error("error: cannot create a temporary directory '%s': %s", tmpl, strerror(errno));
		free(tmpl);
		return -1;
	}
	l->tmpdir = tmpl;
	return 0;
}

static void remove_tmpdir(struct loop *l)
{
	if (!l->tmpdir)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(TMP_FILES); i++) {
		char *p = fg_path_join(l->tmpdir, TMP_FILES[i]);

		unlink(p);
		free(p);
	}
	/* A panel's per-role prompt files. */
	for (size_t i = 0; i < l->cfg.nreviewers; i++) {
		static const char *const kinds[] = { "system-prompt", "reviewer-prompt" };

		for (size_t j = 0; j < 2; j++) {
			char *p = fg_xasprintf("%s/%s.%s.md", l->tmpdir, kinds[j], l->cfg.reviewers[i].role);

			unlink(p);
			free(p);
		}
	}
	rmdir(l->tmpdir);
	free(l->tmpdir);
	l->tmpdir = NULL;
}

/* One agent invocation: what differs between worker and reviewer runs. */
struct call {
	const char *role;          /* "worker" or "reviewer" */
	int cycle;                 /* FORGE_CYCLE: 0 first worker run */
	const char *prompt;
	const char *prompt_name;   /* file in tmpdir */
	bool system;               /* reviewer: FORGE_SYSTEM_PROMPT_FILE */
	bool feedback;             /* worker retry: FORGE_FEEDBACK_FILE */
	struct ep_output *out;     /* initialised here, finished after the run */
	int log_fd;
	const char *panel_role;    /* a panel's reviewer: its role; NULL otherwise */
};

/* The system prompt file of a reviewer: one per panel role. Owned name. */
static char *system_name(const char *panel_role)
{
	return panel_role ? fg_xasprintf("system-prompt.%s.md", panel_role)
			  : fg_xstrdup("system-prompt.md");
}

/* The reviewer's system prompt text: its panel role's, or the single one's. */
static const char *system_text(const struct loop *l, const struct call *c)
{
	for (size_t i = 0; c->panel_role && i < l->cfg.nreviewers; i++)
		if (!strcmp(l->cfg.reviewers[i].role, c->panel_role))
			return l->role_system[i];
	return c->panel_role ? NULL : l->system_prompt;
}

/* {system_prompt}: the text itself, or, past what one argument may hold
 * (Linux: 128 KiB), a pointer to the file that holds it. Owned. */
static char *system_arg(const struct loop *l, const struct call *c, const char *file)
{
	const char *text = c->system ? system_text(l, c) : NULL;

	if (!text)
		return fg_xstrdup("");
	if (strlen(text) <= EP_SYSTEM_ARG_MAX)
		return fg_xstrdup(text);
	return fg_xasprintf("Your instructions as the reviewer are in the file %s. Read all of it "
			    "before anything else and follow it.", file);
}

static void build_argv(struct loop *l, const struct call *c, const char *prompt_file,
		       const char *cycle, struct fg_strvec *argv)
{
	const struct ep_task *t = l->t;
	char *name = system_name(c->panel_role);
	char *sys = c->system ? fg_path_join(l->tmpdir, name) : fg_xstrdup("");
	char *text = system_arg(l, c, sys);
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

static void build_env(struct loop *l, const struct call *c, const char *prompt_file,
		      struct fg_strvec *envp)
{
	const struct ep_task *t = l->t;
	struct fg_strvec set;

	fg_strvec_init(&set);
	fg_strvec_pushf(&set, "FORGE_ROLE=%s", c->role);
	fg_strvec_pushf(&set, "FORGE_CYCLE=%d", c->cycle);
	fg_strvec_pushf(&set, "FORGE_PROMPT_FILE=%s", prompt_file);
	if (c->system) {
		char *name = system_name(c->panel_role);

		fg_strvec_pushf(&set, "FORGE_SYSTEM_PROMPT_FILE=%s/%s", l->tmpdir, name);
		fg_strvec_pushf(&set, "FORGE_REVIEWER_ROLE=%s", c->panel_role ? c->panel_role : "default");
		free(name);
	} else {
		fg_strvec_push(&set, "FORGE_SYSTEM_PROMPT_FILE");
		fg_strvec_push(&set, "FORGE_REVIEWER_ROLE");
	}
	if (c->feedback)
		fg_strvec_pushf(&set, "FORGE_FEEDBACK_FILE=%s/feedback.md", l->tmpdir);
	else
		fg_strvec_push(&set, "FORGE_FEEDBACK_FILE");
	fg_strvec_pushf(&set, "FORGE_WORKSPACE=%s", t->workspace);
	fg_strvec_pushf(&set, "FORGE_STEP_NAME=%s", t->step);
	fg_strvec_pushf(&set, "FORGE_SKILL_NAME=%s", t->skill);
	fg_strvec_pushf(&set, "FORGE_TASK_KEY=%s", t->task_key);
	fg_strvec_pushf(&set, "FORGE_RUN_ID=%s", t->run_id);
	ep_preset_env(!strcmp(c->role, "worker") ? t->worker_preset : t->reviewer_preset, &set);
	ep_env_build(envp, environ, set.v);
	fg_strvec_release(&set);
}

/*
 * Whether a run failed, by its exit and by what its output says: a run the
 * output marks as failed is a failed run whatever the exit status. When it
 * failed, r->what is rewritten to say why (the output's reason included)
 * and true is returned.
 */
static bool run_failed(struct ep_agent_result *r, const struct ep_output *o)
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
		{ FG_USAGE_CACHED, "cached_input_tokens" }, { FG_USAGE_TURNS, "turns" },
		{ FG_USAGE_DURATION, "duration_ms" },
	};
	const int64_t v[] = { u->input_tokens, u->output_tokens, u->cached_input_tokens, u->turns,
			      u->duration_ms };
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(f) && o < n; i++)
		if (u->have & f[i].bit)
			o += (size_t)snprintf(buf + o, n - o, "%s%s=%lld", o ? " " : "", f[i].name,
					      (long long)v[i]);
	if ((u->have & FG_USAGE_COST) && o < n)
		snprintf(buf + o, n - o, "%scost_usd=%.6f", o ? " " : "", u->cost_usd);
}

/* Adds a finished run's usage to the step's totals. */
static void account(struct loop *l, const struct call *c, const struct ep_agent_result *r)
{
	const struct fg_usage *u = &c->out->usage;
	bool worker = !strcmp(c->role, "worker");

	char line[512];

	(void)r;
	fg_usage_add(worker ? &l->total.worker : &l->total.reviewer, u);
	if (worker)
		l->worker_last = *u;
	if (!fg_usage_empty(u)) {
		usage_line(u, line, sizeof(line));
		ep_error("%s usage: %s", c->role, line);
	}
}

/* Runs one agent. 0 (r filled, whatever the agent did) or STOP_SIGNAL. */
static int call_agent(struct loop *l, const struct call *c, struct ep_agent_result *r)
{
	struct fg_strvec argv, envp;
	char *prompt_file = fg_path_join(l->tmpdir, c->prompt_name);
	char cycle[16], prefix[64];
	struct ep_agent_spec s;
	int rc;

	/* A signal that came between two agents: start no new one. */
	ep_pid1_poll(&l->pid1, 0, NULL);
	if (l->pid1.term_sig) {
		memset(r, 0, sizeof(*r));
		r->end = EP_AGENT_INTERRUPTED;
		r->signal = l->pid1.term_sig;
		ep_output_init(c->out, EP_OUTPUT_TEXT);
		free(prompt_file);
		return STOP_SIGNAL;
	}
	rc = fg_write_atomic(l->tmpdir, c->prompt_name, c->prompt, strlen(c->prompt));
	snprintf(cycle, sizeof(cycle), "%d", c->cycle);
	fg_strvec_init(&argv);
	fg_strvec_init(&envp);
	build_argv(l, c, prompt_file, cycle, &argv);
	build_env(l, c, prompt_file, &envp);
	if (c->panel_role)
		snprintf(prefix, sizeof(prefix), "%s:%s", c->role, c->panel_role);
	ep_output_init(c->out, !strcmp(c->role, "worker") ? l->t->worker_output : l->t->reviewer_output);
	s = (struct ep_agent_spec){
		.role = c->panel_role ? prefix : c->role, .argv = argv.v, .envp = envp.v, .cwd = l->t->workspace,
		.input = c->prompt, .input_len = strlen(c->prompt),
		.timeout_s = l->t->timeout_s, .idle_timeout_s = l->t->idle_timeout_s,
		.kill_grace_s = l->t->kill_grace_s, .output = c->out, .log_fd = c->log_fd,
		.log_max = EP_REVIEWER_LOG_MAX, .echo_fd = 2, .atomic_echo = c->panel_role != NULL,
	};
	if (rc < 0)
		ep_error("warning: cannot write the prompt file '%s': %s", prompt_file, strerror(-rc));
	rc = ep_agent_run(&l->pid1, &s, r);
	if (rc < 0) {
		memset(r, 0, sizeof(*r));
		r->end = EP_AGENT_NOT_STARTED;
		r->error = -rc;
		snprintf(r->what, sizeof(r->what), "cannot run %s: %s", c->role, strerror(-rc));
	}
	ep_output_finish(c->out);
	account(l, c, r);
	fg_strvec_release(&argv);
	fg_strvec_release(&envp);
	free(prompt_file);
	return r->end == EP_AGENT_INTERRUPTED || l->pid1.term_sig ? STOP_SIGNAL : 0;
}

/* A worker run; 0 success, FG_EXIT_FAILED (r->what says why) or STOP_SIGNAL. */
static int run_worker(struct loop *l, int cycle, struct ep_agent_result *r)
{
	char *prompt = cycle ? ep_prompt_worker_retry(l->t, l->hist, l->nhist) : ep_prompt_worker(l->t);
	struct ep_output out;
	struct call c = { "worker", cycle, prompt, "worker-prompt.md", false, cycle > 0, &out, -1, NULL };
	bool failed;
	int rc = 0;

	if (cycle) {
		struct fg_buf fb;

		fg_buf_init(&fb, EP_PROMPT_MAX);
		ep_prompt_feedback(&fb, &l->hist[l->nhist - 1]);
		rc = fg_write_atomic(l->tmpdir, "feedback.md", fg_buf_str(&fb), fb.len);
		if (rc < 0)
			ep_error("warning: cannot write the feedback file: %s", strerror(-rc));
		fg_buf_release(&fb);
	}
	ep_error("running the worker (%s)", cycle ? "retry with the reviewer's feedback" : "first run");
	rc = call_agent(l, &c, r);
	failed = run_failed(r, &out);
	ep_output_release(&out);
	free(prompt);
	if (rc == STOP_SIGNAL)
		return STOP_SIGNAL;
	return failed ? FG_EXIT_FAILED : 0;
}

static int open_log(struct loop *l, const char *name)
{
	int dfd = open(l->step_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd = -1;

	if (dfd >= 0) {
		/* The workspace is the agents' playground: a symlink or a hard
		 * link planted under this name must not redirect or truncate
		 * anything. Unlink the name, then create a fresh inode
		 * (O_EXCL implies no symlink is followed). */
		if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
			ep_error("warning: cannot replace '%s/%s': %s", l->step_dir, name, strerror(errno));
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		close(dfd);
	}
	if (fd < 0)
		ep_error("warning: cannot write '%s/%s': %s", l->step_dir, name, strerror(errno));
	return fd;
}

static bool blank(const char *s)
{
	for (; *s; s++)
		if (!strchr(" \t\r\n\v\f", *s))
			return false;
	return true;
}

/* Turns a reviewer run into c's verdict, feedback, format and findings
 * (releasing what an earlier judgement of the same cycle put there). */
static void judge(struct ep_agent_result *r, const struct ep_output *out, struct fg_cycle *c,
		  bool *failed, bool *out_of_scope)
{
	struct fg_verdict v;

	free(c->feedback);
	fg_findings_free(c->findings, c->nfindings);
	c->findings = NULL;
	c->nfindings = 0;
	c->has_findings = false;
	c->verdict = FG_VERDICT_REJECTED;
	c->has_format = true;
	c->format = FG_FORMAT_NONE;
	*failed = run_failed(r, out) || blank(out->text);
	if (*failed) {
		c->feedback = fg_xasprintf("The review could not be completed: %s.",
					   ep_agent_ok(r) && out->ok ? "the reviewer printed nothing" : r->what);
		return;
	}
	fg_verdict_init(&v);
	fg_verdict_parse(&v, out->text, strlen(out->text));
	c->verdict = v.verdict;
	c->format = v.format;
	if (out_of_scope)
		*out_of_scope = v.out_of_scope;
	c->feedback = v.feedback;
	c->has_findings = v.has_findings;
	c->findings = v.findings;
	c->nfindings = v.nfindings;
	fg_strvec_release(&c->ev.verified);
	c->ev.verified = v.verified;
	fg_strvec_init(&v.verified);
	v.feedback = NULL;
	v.findings = NULL;
	v.nfindings = 0;
	fg_verdict_release(&v);
}

/* Appends s to a reviewer log (best effort: the log is a record). */
static void log_note(int fd, const char *s, size_t n)
{
	while (fd >= 0 && n) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* After the raw output, the log keeps the final text the verdict parser
 * saw, when an output format extracted it (for text they are the same). */
static void log_final_text(int fd, const struct ep_output *o)
{
	char *head;

	if (o->format == EP_OUTPUT_TEXT)
		return;
	head = fg_xasprintf("\n----- forge-entrypoint: final text (%s output%s%s) -----\n",
			    ep_output_format_name(o->format), o->ok ? "" : ", failed: ",
			    o->ok ? "" : o->error);
	log_note(fd, head, strlen(head));
	log_note(fd, o->text, strlen(o->text));
	log_note(fd, "\n", 1);
	free(head);
}

/* The step's reported cost has passed max_cost_usd (*spent: the cost). */
static bool over_budget(const struct loop *l, double *spent)
{
	double usd = 0;

	if (l->cfg.max_cost_usd < 0 || !fg_usage_pair_cost(&l->total, &usd))
		return false;
	if (spent)
		*spent = usd;
	return usd > l->cfg.max_cost_usd;
}

/* An answer with no verdict at all (not a rejection) is asked for once more. */
static bool want_reask(const struct loop *l, const struct fg_cycle *c, bool failed)
{
	return l->t->reask && !failed && c->format == FG_FORMAT_NONE && !over_budget(l, NULL);
}

/* What differs between the single reviewer and a panel role's. */
struct rv_call {
	int k;
	const char *prompt_name;     /* file in tmpdir */
	const char *panel_role;      /* NULL: the single reviewer */
	int log_fd;
	bool out_of_scope;           /* set by the judgement */
};

/* One reviewer run judged into c (its usage added to c's). 0 or STOP_SIGNAL. */
static int reviewer_run(struct loop *l, struct rv_call *rc_, const char *prompt, struct fg_cycle *c,
			bool *failed)
{
	struct ep_output out;
	struct call call = { "reviewer", rc_->k, prompt, rc_->prompt_name, true, false, &out,
			     rc_->log_fd, rc_->panel_role };
	struct ep_agent_result r;
	int rc = call_agent(l, &call, &r);

	if (rc != STOP_SIGNAL) {
		judge(&r, &out, c, failed, &rc_->out_of_scope);
		log_final_text(rc_->log_fd, &out);
		fg_usage_add(&c->usage.reviewer, &out.usage);
	}
	ep_output_release(&out);
	return rc;
}

/* An approval that rests on nothing executed: no passing check ran and
 * the review has no "**Verified:**" line naming something that ran
 * ("nothing executable" does not count). Only with require_evidence. */
static bool lacks_evidence(const struct loop *l, const struct fg_cycle *c, bool failed)
{
	if (!l->cfg.require_evidence || failed || c->verdict != FG_VERDICT_APPROVED || l->checks_passed)
		return false;
	for (size_t i = 0; i < c->ev.verified.n; i++)
		if (strncasecmp(c->ev.verified.v[i], "nothing executable", 18))
			return false;
	return true;
}

/* Why a reviewer is asked once more in the same cycle. */
enum ask_why { ASK_NO_VERDICT, ASK_NO_EVIDENCE };

/* Asks the reviewer of c once more (the prompt with a section saying why),
 * the new answer judged into c. 0 or STOP_SIGNAL. */
static int ask_again(struct loop *l, struct rv_call *rc_, const char *prompt, struct fg_cycle *c,
		     bool *failed, enum ask_why why)
{
	static const char *const notes[] = {
		"\n----- forge-entrypoint: no verdict, asked once more -----\n",
		"\n----- forge-entrypoint: approval without evidence, asked once more -----\n",
	};
	static const char *const says[] = { "'s answer holds no verdict", " approved without executed evidence" };
	char *again = why == ASK_NO_VERDICT ? ep_prompt_reask(prompt) : ep_prompt_evidence_reask(prompt);
	int rc;

	ep_error("the reviewer%s%s%s: asking once more (cycle %d/%d)", rc_->panel_role ? " " : "",
		 rc_->panel_role ? rc_->panel_role : "", says[why], rc_->k, l->max);
	log_note(rc_->log_fd, notes[why], strlen(notes[why]));
	c->reask = true;
	rc = reviewer_run(l, rc_, again, c, failed);
	free(again);
	return rc;
}

/* require_evidence: an approval without executed evidence is asked for
 * once more; still none, the cycle is rejected. 0 or STOP_SIGNAL. */
static int evidence_answer(struct loop *l, struct rv_call *rc_, const char *prompt, struct fg_cycle *c,
			   bool *failed)
{
	int rc = ask_again(l, rc_, prompt, c, failed, ASK_NO_EVIDENCE);

	if (rc == STOP_SIGNAL || !lacks_evidence(l, c, *failed))
		return rc;
	c->verdict = FG_VERDICT_REJECTED;
	free(c->feedback);
	c->feedback = fg_xstrdup(EP_NO_EVIDENCE_FEEDBACK);
	return rc;
}

/* A reviewer's run into c, asked once more when its answer holds no
 * verdict (want_reask) or approves without evidence (require_evidence).
 * 0 or STOP_SIGNAL. */
static int reviewer_answer(struct loop *l, struct rv_call *rc_, const char *prompt, struct fg_cycle *c,
			   bool *failed)
{
	int rc = reviewer_run(l, rc_, prompt, c, failed);

	if (rc != STOP_SIGNAL && want_reask(l, c, *failed))
		rc = ask_again(l, rc_, prompt, c, failed, ASK_NO_VERDICT);
	if (rc != STOP_SIGNAL && lacks_evidence(l, c, *failed))
		return evidence_answer(l, rc_, prompt, c, failed);
	return rc;
}


static char *reviewer_prompt(const struct loop *l)
{
	char *p = ep_prompt_reviewer(l->t, l->hist, l->nhist), *both;

	if (!l->t->reviewer_system_in_prompt || !l->system_prompt)
		return p;
	both = ep_prompt_with_system(l->system_prompt, p);
	free(p);
	return both;
}

/* Cycle k's review into c (initialised here), re-asked once when the
 * answer holds no verdict. 0 or STOP_SIGNAL (c then empty). */
static int review(struct loop *l, int k, struct fg_cycle *c, bool *failed)
{
	uint64_t t0 = fg_monotonic_ns();
	char *prompt = reviewer_prompt(l);
	char *logname = fg_reviewer_log_name(k, NULL);
	int log_fd = open_log(l, logname);
	struct rv_call call = { k, "reviewer-prompt.md", NULL, log_fd, false };
	int rc;

	fg_cycle_init(c);
	c->usage.worker = l->worker_last;
	ep_error("running the reviewer (cycle %d/%d)", k, l->max);
	rc = reviewer_answer(l, &call, prompt, c, failed);
	if (rc == STOP_SIGNAL) {
		fg_cycle_release(c);
	} else {
		c->cycle = k;
		c->max_cycles = l->max;
		c->skill = fg_xstrdup(l->t->skill);
		c->run_id = *l->t->run_id ? fg_xstrdup(l->t->run_id) : NULL;
		c->reviewer_log = log_fd >= 0 ? fg_xstrdup(logname) : NULL;
		c->elapsed_seconds = fg_seconds_since(t0);
		fg_time_iso_utc(c->timestamp, time(NULL));
	}
	if (log_fd >= 0)
		close(log_fd);
	free(logname);
	free(prompt);
	return rc;
}

/* ---- a reviewer panel (panel.h) ----------------------------------------- */

struct panel_run {
	struct loop *l;
	int k;
	const struct fg_cycle *prev;     /* the last cycle; NULL in cycle 1 */
	size_t idx[FG_REVIEWERS_MAX];    /* panel indices of the roles that run */
};

/* A role's prompt: from cycle 2 on its own previous rejection, as a
 * one-cycle history (borrowed pointers: the view is never released). */
static char *role_prompt(struct loop *l, const struct fg_cycle *prev, const struct fg_review *last)
{
	struct fg_cycle view;

	if (!prev || !last || last->verdict != FG_ROLE_REJECTED)
		return ep_prompt_reviewer(l->t, NULL, 0);
	fg_cycle_init(&view);
	view.cycle = prev->cycle;
	view.max_cycles = prev->max_cycles;
	view.verdict = FG_VERDICT_REJECTED;
	view.feedback = last->feedback;
	view.has_findings = last->has_findings;
	view.findings = last->findings;
	view.nfindings = last->nfindings;
	return ep_prompt_reviewer(l->t, &view, 1);
}

/* Moves a judged reviewer run (c) into rv. */
static void take_judged(struct fg_review *rv, struct fg_cycle *c, bool failed, bool oos)
{
	rv->verdict = c->verdict == FG_VERDICT_REJECTED ? FG_ROLE_REJECTED
			: oos ? FG_ROLE_OUT_OF_SCOPE : FG_ROLE_APPROVED;
	rv->failed = failed;
	rv->has_format = c->has_format;
	rv->format = c->format;
	rv->feedback = c->feedback;
	rv->has_findings = c->has_findings;
	rv->findings = c->findings;
	rv->nfindings = c->nfindings;
	c->feedback = NULL;
	c->findings = NULL;
	c->nfindings = 0;
	for (size_t i = 0; i < rv->nfindings; i++) {
		free(rv->findings[i].role);
		rv->findings[i].role = fg_xstrdup(rv->role);
	}
}

/* One role's reviewer run into rv (initialised), in the role's helper.
 * 0 or STOP_SIGNAL. */
static int review_role(struct loop *l, int k, const struct fg_reviewer *role,
		       const struct fg_cycle *prev, struct fg_review *rv)
{
	uint64_t t0 = fg_monotonic_ns();
	char *prompt = role_prompt(l, prev, ep_panel_review_of(prev, role->role));
	char *pname = fg_xasprintf("reviewer-prompt.%s.md", role->role);
	char *logname = fg_reviewer_log_name(k, role->role);
	struct rv_call call = { k, pname, role->role, open_log(l, logname), false };
	struct fg_cycle c;
	bool failed = false;
	int rc;

	if (l->t->reviewer_system_in_prompt && system_text(l, &(struct call){ .system = true,
								      .panel_role = role->role })) {
		char *both = ep_prompt_with_system(l->role_system[role - l->cfg.reviewers], prompt);

		free(prompt);
		prompt = both;
	}
	fg_cycle_init(&c);
	rc = reviewer_answer(l, &call, prompt, &c, &failed);
	memcpy(rv->role, role->role, sizeof(rv->role));
	if (rc != STOP_SIGNAL) {
		take_judged(rv, &c, failed, call.out_of_scope);
		rv->reviewer_log = call.log_fd >= 0 ? fg_xstrdup(logname) : NULL;
		rv->elapsed_seconds = fg_seconds_since(t0);
		if (!fg_usage_empty(&c.usage.reviewer))
			rv->usage = fg_usage_to_cjson(&c.usage.reviewer);
		rv->reask = c.reask;
	}
	fg_cycle_release(&c);
	if (call.log_fd >= 0)
		close(call.log_fd);
	free(logname);
	free(pname);
	free(prompt);
	return rc;
}

/* The helper's job (panel.h): review, then send the review as JSON. */
static int role_job(void *ctx, size_t i, struct ep_pid1 *p, int out_fd)
{
	struct panel_run *pr = ctx;
	struct loop *l = pr->l;
	struct fg_review rv;
	cJSON *o;
	char *text;

	l->pid1 = *p;   /* this helper's own signals and children */
	fg_review_init(&rv);
	if (review_role(l, pr->k, &l->cfg.reviewers[pr->idx[i]], pr->prev, &rv) == STOP_SIGNAL) {
		fg_review_release(&rv);
		return 1;
	}
	o = fg_review_to_cjson(&rv);
	text = fg_json_print(o);
	ep_write_all(out_fd, text, strlen(text));
	free(text);
	cJSON_Delete(o);
	fg_review_release(&rv);
	return 0;
}

/* What a helper sent, as role's review; nothing valid is a failed review. */
static void take_review(const struct fg_buf *out, const char *role, struct fg_review *rv)
{
	cJSON *o = out->len ? fg_json_parse_exact(out->data, out->len) : NULL;

	if (!o || fg_review_from_cjson(rv, o) < 0 || strcmp(rv->role, role) != 0) {
		fg_review_release(rv);
		snprintf(rv->role, sizeof(rv->role), "%s", role);
		rv->verdict = FG_ROLE_REJECTED;
		rv->failed = true;
		rv->has_format = true;
		rv->format = FG_FORMAT_NONE;
		rv->feedback = fg_xstrdup("The review could not be completed: the reviewer's helper "
					  "process ended without a result.");
	}
	cJSON_Delete(o);
}

static void announce(const struct loop *l, int k, const struct panel_run *pr, size_t n)
{
	char names[FG_REVIEWERS_MAX * (FG_ROLE_MAX + 2) + 1] = "";
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		int m = snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
				 l->cfg.reviewers[pr->idx[i]].role);

		len += m > 0 ? (size_t)m : 0;
	}
	ep_error("running %zu of %zu reviewer(s) in parallel (cycle %d/%d): %s", n,
		 l->cfg.nreviewers, k, l->max, names);
}

/* Fills c's reviews: the roles that ran, and the others' standing reviews. */
static void assemble(struct loop *l, const struct panel_run *pr, size_t n, struct fg_buf *out,
		     struct fg_cycle *c)
{
	size_t j = 0;

	c->has_reviews = true;
	c->nreviews = l->cfg.nreviewers;
	c->reviews = fg_xcalloc(c->nreviews, sizeof(*c->reviews));
	for (size_t i = 0; i < c->nreviews; i++) {
		const char *role = l->cfg.reviewers[i].role;
		struct fg_review *rv = &c->reviews[i];

		fg_review_init(rv);
		if (j < n && pr->idx[j] == i) {
			take_review(&out[j++], role, rv);
			continue;
		}
		fg_review_copy(rv, ep_panel_review_of(pr->prev, role));
		if (!rv->from_cycle)
			rv->from_cycle = pr->prev->cycle;
	}
	ep_panel_merge(c);
}

/* The roles that ran this cycle did so in helper processes: their usage
 * comes back in their reviews and is counted here, in the cycle and the
 * step's totals. */
static void panel_usage(struct loop *l, struct fg_cycle *c)
{
	for (size_t i = 0; i < c->nreviews; i++) {
		struct fg_usage u;

		if (c->reviews[i].from_cycle)
			continue;
		fg_usage_from_cjson(&u, c->reviews[i].usage);
		fg_usage_add(&c->usage.reviewer, &u);
		fg_usage_add(&l->total.reviewer, &u);
		c->reask = c->reask || c->reviews[i].reask;
	}
}

/* One cycle of a panel into c (initialised here). 0 or STOP_SIGNAL. */
static int panel_review(struct loop *l, int k, struct fg_cycle *c)
{
	struct panel_run pr = { l, k, l->nhist ? &l->hist[l->nhist - 1] : NULL, { 0 } };
	struct fg_buf out[FG_REVIEWERS_MAX];
	uint64_t t0 = fg_monotonic_ns();
	size_t n = 0;
	int rc;

	for (size_t i = 0; i < l->cfg.nreviewers; i++)
		if (ep_panel_runs(pr.prev, l->cfg.reviewers[i].role, l->cfg.rereview))
			pr.idx[n++] = i;
	for (size_t i = 0; i < n; i++)
		fg_buf_init(&out[i], EP_PANEL_OUT_MAX);
	announce(l, k, &pr, n);
	/* A signal that came between two agents: start no new one. */
	ep_pid1_poll(&l->pid1, 0, NULL);
	rc = l->pid1.term_sig ? 1 : ep_panel_fork(&l->pid1, n, role_job, &pr, out);
	fg_cycle_init(c);
	if (!rc) {
		assemble(l, &pr, n, out, c);
		c->usage.worker = l->worker_last;
		panel_usage(l, c);
		c->cycle = k;
		c->max_cycles = l->max;
		c->skill = fg_xstrdup(l->t->skill);
		c->run_id = *l->t->run_id ? fg_xstrdup(l->t->run_id) : NULL;
		c->elapsed_seconds = fg_seconds_since(t0);
		fg_time_iso_utc(c->timestamp, time(NULL));
	}
	for (size_t i = 0; i < n; i++)
		fg_buf_release(&out[i]);
	return rc ? STOP_SIGNAL : 0;
}

/* Writes each role's system prompt: protocol, review.md body, role file. */
static void write_role_prompts(struct loop *l)
{
	for (size_t i = 0; i < l->cfg.nreviewers; i++) {
		const struct fg_reviewer *r = &l->cfg.reviewers[i];
		char *sys = ep_prompt_reviewer_role_system(l->cfg.instructions, r->role, r->instructions);
		char *name = system_name(r->role);
		int rc = fg_write_atomic(l->tmpdir, name, sys, strlen(sys));

		if (rc < 0)
			ep_error("warning: cannot write the system prompt file of role '%s': %s", r->role,
				 strerror(-rc));
		free(name);
		l->role_system[i] = sys;   /* {system_prompt}, or in front of the prompt */
	}
}

/* Equal after collapsing whitespace runs and trimming. */
static bool same_text(const char *a, const char *b)
{
	for (;;) {
		while (*a && strchr(" \t\r\n\v\f", *a))
			a++;
		while (*b && strchr(" \t\r\n\v\f", *b))
			b++;
		if (!*a || !*b)
			return !*a && !*b;
		while (*a && *b && !strchr(" \t\r\n\v\f", *a) && *a == *b) {
			a++;
			b++;
		}
		if ((*a && !strchr(" \t\r\n\v\f", *a)) || (*b && !strchr(" \t\r\n\v\f", *b)))
			return false;
	}
}

static bool same_str(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* Every (file, title) of a occurs in b. */
static bool findings_within(const struct fg_cycle *a, const struct fg_cycle *b)
{
	for (size_t i = 0; i < a->nfindings; i++) {
		bool found = false;

		for (size_t j = 0; j < b->nfindings && !found; j++)
			found = same_str(a->findings[i].file_path, b->findings[j].file_path) &&
				same_str(a->findings[i].title, b->findings[j].title);
		if (!found)
			return false;
	}
	return true;
}

/* The last two cycles rejected the work for the same reasons (issue 10). */
static bool stalled(const struct loop *l)
{
	const struct fg_cycle *a, *b;

	if (!l->cfg.stop_when_stalled || l->nhist < 2)
		return false;
	a = &l->hist[l->nhist - 2];
	b = &l->hist[l->nhist - 1];
	/* A crashed reviewer says nothing about the work. */
	if (a->verdict != FG_VERDICT_REJECTED || b->verdict != FG_VERDICT_REJECTED ||
	    l->reviewer_failed[l->nhist - 2] || l->reviewer_failed[l->nhist - 1])
		return false;
	if (a->has_findings && a->nfindings && b->has_findings && b->nfindings)
		return findings_within(a, b) && findings_within(b, a);
	return same_text(a->feedback, b->feedback);
}

/* The feedback is the reviewer's text: its control characters are escaped
 * (as on the "[reviewer] " lines) so it cannot rewrite the terminal line. */
static void progress(const struct fg_cycle *c)
{
	char line[1024];
	struct fg_buf b;

	if (c->verdict == FG_VERDICT_APPROVED && c->ev.advice_only) {
		fprintf(stderr, "Review cycle %d/%d: APPROVED - %zu advice finding(s), not looped on\n",
			c->cycle, c->max_cycles, c->nfindings);
	} else if (c->verdict == FG_VERDICT_APPROVED) {
		fprintf(stderr, "Review cycle %d/%d: APPROVED\n", c->cycle, c->max_cycles);
	} else {
		ep_one_line(line, sizeof(line), c->feedback, EP_FEEDBACK_LINE_CHARS);
		fg_buf_init(&b, 4 * sizeof(line));
		fg_escape_controls(&b, line, strlen(line), 0);
		fprintf(stderr, "Review cycle %d/%d: REJECTED - %s%s%s\n", c->cycle, c->max_cycles,
			fg_buf_str(&b), c->stalled ? " (stalled: same findings as the previous cycle)" : "",
			c->over_budget ? " (over budget: the step's cost passed max_cost_usd)" : "");
		fg_buf_release(&b);
	}
	for (size_t i = 0; i < c->nreviews; i++) {
		const struct fg_review *r = &c->reviews[i];

		if (r->from_cycle)
			fprintf(stderr, "  %s: %s (cycle %d stands)\n", r->role,
				fg_role_verdict_name(r->verdict), r->from_cycle);
		else
			fprintf(stderr, "  %s: %s%s, %zu finding(s), %.1f s\n", r->role,
				fg_role_verdict_name(r->verdict), r->failed ? " (failed)" : "",
				r->nfindings, r->elapsed_seconds);
	}
	fflush(stderr);
}

/* Writes review_summary.json and returns code. */
static int finish(struct loop *l, enum fg_review_state state, int code)
{
	struct fg_summary s;
	double usd;
	int rc;

	fg_summary_init(&s);
	s.state = state;
	s.cycles = (int)l->nhist;
	s.max_cycles = l->max;
	s.step = fg_xstrdup(l->t->step);
	s.skill = fg_xstrdup(l->t->skill);
	s.task_key = fg_xstrdup(l->t->task_key);
	s.run_id = fg_xstrdup(l->t->run_id);
	s.review_md = l->review_md ? fg_xstrdup(l->review_md) : NULL;
	s.usage = l->total;
	s.max_cost_usd = l->review_md ? l->cfg.max_cost_usd : -1;
	for (size_t i = 0; state == FG_STATE_BLOCKED && l->blocked_by && i < l->blocked_by->nfindings; i++)
		if (fg_finding_rank(&l->blocked_by->findings[i]) == FG_RANK_QUESTION)
			fg_summary_add_question(&s, &l->blocked_by->findings[i]);
	rc = fg_summary_write(l->step_dir, &s);
	if (rc < 0)
		ep_error("warning: cannot write '%s/%s': %s", l->step_dir, FG_SUMMARY_FILE, strerror(-rc));
	/* Sent even when the file could not be written: a runner that cannot
	 * see the workspace learns how the review ended from this frame. */
	ep_frame_summary(&s);
	if (fg_usage_pair_cost(&l->total, &usd))
		ep_error("review %s after %d cycle(s): exit %d (the agents reported $%.4f)",
			 fg_review_state_name(state), s.cycles, code, usd);
	else
		ep_error("review %s after %d cycle(s): exit %d", fg_review_state_name(state), s.cycles, code);
	fg_summary_release(&s);
	return code;
}

/* The exhaustion marker after a failed worker retry (issue 3 item 4). */
static int synthetic(struct loop *l, int after, const struct ep_agent_result *r)
{
	struct fg_cycle c;
	int rc;

	fg_cycle_init(&c);
	c.cycle = l->max;
	c.max_cycles = l->max;
	c.verdict = FG_VERDICT_REJECTED;
	c.synthetic = true;
	c.feedback = fg_xasprintf("The worker failed while addressing the feedback of review cycle %d: "
				  "%s. The review loop stopped; the work was not approved.", after, r->what);
	c.skill = fg_xstrdup(l->t->skill);
	c.run_id = *l->t->run_id ? fg_xstrdup(l->t->run_id) : NULL;
	c.elapsed_seconds = r->seconds;
	c.usage.worker = l->worker_last;
	fg_time_iso_utc(c.timestamp, time(NULL));
	rc = fg_cycle_write(l->step_dir, &c);
	if (rc < 0)
		ep_error("error: cannot write '%s/review_cycle_%d.json': %s", l->step_dir, l->max, strerror(-rc));
	else
		ep_frame_cycle(&c, l->t->step);
	ep_error("the task failed: %s", r->what);
	fg_cycle_release(&c);
	return finish(l, FG_STATE_FAILED, FG_EXIT_FAILED);
}

static int exhausted_code(const struct loop *l);

/* The budget ran out after a worker run, before review cycle n: a
 * synthetic cycle n records it (usage: that worker run), then the summary. */
static int budget_cycle(struct loop *l, int n, const char *after)
{
	struct fg_cycle c;
	double spent = 0;
	int rc;

	over_budget(l, &spent);
	fg_cycle_init(&c);
	c.cycle = n;
	c.max_cycles = l->max;
	c.verdict = FG_VERDICT_REJECTED;
	c.synthetic = true;
	c.over_budget = true;
	c.feedback = fg_xasprintf("The step's reported cost, $%.4f, passed its budget (max_cost_usd $%.4f) "
				  "after %s: no further agent run was started; the work was not approved.",
				  spent, l->cfg.max_cost_usd, after);
	c.skill = fg_xstrdup(l->t->skill);
	c.run_id = *l->t->run_id ? fg_xstrdup(l->t->run_id) : NULL;
	c.usage.worker = l->worker_last;
	fg_time_iso_utc(c.timestamp, time(NULL));
	rc = fg_cycle_write(l->step_dir, &c);
	if (rc < 0)
		ep_error("error: cannot write '%s/review_cycle_%d.json': %s", l->step_dir, n, strerror(-rc));
	else
		ep_frame_cycle(&c, l->t->step);
	progress(&c);
	fg_cycle_release(&c);
	return finish(l, FG_STATE_OVER_BUDGET, exhausted_code(l));
}

static int exhausted_code(const struct loop *l)
{
	return l->t->fail_on_exhaustion ? FG_EXIT_EXHAUSTED : 0;
}

static void shorten(struct fg_finding *f)
{
	free(f->description);
	free(f->evidence);
	free(f->fix);
	f->description = NULL;
	f->evidence = NULL;
	f->fix = NULL;
}

/* Every finding is a question for a person: stop now, list them. */
static int blocked(struct loop *l, const struct fg_cycle *c)
{
	char line[512];

	ep_error("review blocked: every remaining finding needs a person's decision:");
	for (size_t i = 0; i < c->nfindings; i++) {
		const struct fg_finding *f = &c->findings[i];

		if (fg_finding_rank(f) != FG_RANK_QUESTION)
			continue;
		ep_one_line(line, sizeof(line), f->title ? f->title : "", EP_FEEDBACK_LINE_CHARS);
		if (f->file_path && f->line > 0)
			ep_error("  [%s] %s:%d: %s", f->role ? f->role : "default", f->file_path, f->line,
				 line);
		else
			ep_error("  [%s] %s: %s", f->role ? f->role : "default",
				 f->file_path ? f->file_path : "-", line);
	}
	l->blocked_by = c;
	return finish(l, FG_STATE_BLOCKED, exhausted_code(l));
}

/* Keeps a panel's cycle file under what readers accept (FG_CYCLE_MAX_BYTES):
 * eight roles each at the verdict parser's bounds could exceed it. First
 * the findings' long texts go (their logs keep them), then each role's
 * feedback (the merged top-level feedback stays). */
static void fit(struct fg_cycle *c)
{
	for (int step = 0; step < 2 && c->has_reviews; step++) {
		char *text = fg_cycle_to_json(c);
		size_t len = strlen(text);

		free(text);
		if (len <= FG_CYCLE_MAX_BYTES)
			return;
		for (size_t i = 0; i < c->nreviews; i++) {
			struct fg_review *r = &c->reviews[i];

			if (step == 1) {
				free(r->feedback);
				r->feedback = fg_xstrdup("(too long for the cycle file: see the reviewer log)");
				continue;
			}
			for (size_t j = 0; j < r->nfindings; j++)
				shorten(&r->findings[j]);
		}
		for (size_t j = 0; step == 0 && j < c->nfindings; j++)
			shorten(&c->findings[j]);
	}
}

/* Step 4: cycles 1..max. Returns the exit code or STOP_SIGNAL. */
static int review_phase(struct loop *l)
{
	for (int k = 1; k <= l->max; k++) {
		struct fg_cycle *c = &l->hist[l->nhist];
		struct ep_agent_result r;
		bool failed = false;
		int rc = l->cfg.nreviewers ? panel_review(l, k, c) : review(l, k, c, &failed);

		if (rc == STOP_SIGNAL)
			return STOP_SIGNAL;
		if (l->cfg.nreviewers)
			failed = ep_panel_any_failed(c);
		l->reviewer_failed[l->nhist++] = failed;
		c->stalled = stalled(l);
		c->ev.advice_only = c->verdict == FG_VERDICT_APPROVED && c->has_findings &&
				    fg_findings_advice_only(c->findings, c->nfindings);
		/* Approved, blocked, stalled and exhausted end the loop anyway;
		 * otherwise a spent budget is why no worker retry starts. */
		c->over_budget = c->verdict != FG_VERDICT_APPROVED && !ep_panel_blocked(c) && !c->stalled &&
				 k < l->max && over_budget(l, NULL);
		fit(c);
		rc = fg_cycle_write(l->step_dir, c);
		if (rc < 0) {
			ep_error("error: cannot write '%s/review_cycle_%d.json': %s", l->step_dir, k, strerror(-rc));
			return finish(l, FG_STATE_FAILED, FG_EXIT_FAILED);
		}
		/* After the file: the stream never reports a cycle that has no file. */
		ep_frame_cycle(c, l->t->step);
		progress(c);
		if (c->verdict == FG_VERDICT_APPROVED)
			return finish(l, FG_STATE_APPROVED, 0);
		if (ep_panel_blocked(c))
			return blocked(l, c);
		if (c->stalled)
			return finish(l, FG_STATE_STALLED, exhausted_code(l));
		if (k == l->max)
			return finish(l, FG_STATE_EXHAUSTED, exhausted_code(l));
		if (c->over_budget)
			return finish(l, FG_STATE_OVER_BUDGET, exhausted_code(l));
		rc = run_worker(l, k, &r);
		if (rc == STOP_SIGNAL)
			return STOP_SIGNAL;
		if (rc)
			return synthetic(l, k, &r);
		if (over_budget(l, NULL)) {
			char after[64];

			snprintf(after, sizeof(after), "the worker's retry for review cycle %d", k);
			return budget_cycle(l, k + 1, after);
		}
	}
	return finish(l, FG_STATE_EXHAUSTED, exhausted_code(l));
}

/* Steps 2-4. Returns the exit code or STOP_SIGNAL. */
static int run_all(struct loop *l)
{
	struct ep_agent_result r;
	char *sys;
	int rc = run_worker(l, 0, &r);

	if (rc == STOP_SIGNAL)
		return STOP_SIGNAL;
	if (rc) {
		ep_error("the task failed: %s", r.what);
		return FG_EXIT_FAILED;
	}
	if (!l->review_md)
		return finish(l, FG_STATE_NO_REVIEW, 0);
	if (l->max == 0)
		return finish(l, FG_STATE_DISABLED, 0);
	sys = ep_prompt_reviewer_system(l->cfg.instructions);
	rc = fg_write_atomic(l->tmpdir, "system-prompt.md", sys, strlen(sys));
	l->system_prompt = sys;
	if (rc < 0)
		ep_error("warning: cannot write the system prompt file: %s", strerror(-rc));
	write_role_prompts(l);
	l->hist = fg_xcalloc((size_t)l->max, sizeof(*l->hist));
	l->reviewer_failed = fg_xcalloc((size_t)l->max, sizeof(*l->reviewer_failed));
	if (over_budget(l, NULL))
		return budget_cycle(l, 1, "the worker's first run");
	return review_phase(l);
}

/* Creates the cycle directory rel below the workspace one component at a
 * time, never following a symlink: a FORGE_CYCLE_DIR (or a .forge) that
 * leads out of the workspace through a link is refused. 0 or -errno. */
static int create_step_dir(const char *workspace, const char *rel, char *err, size_t errlen)
{
	int wsfd, fd;

	do
		wsfd = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (wsfd < 0 && errno == EINTR);
	if (wsfd < 0)
		return -errno;
	fd = fg_open_beneath(wsfd, rel, FG_BENEATH_CREATE, err, errlen);
	close(wsfd);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* Everything an agent run needs: signals, the temp dir, the step dir. */
/* A directory, FIFO or device planted under a name a run writes. */
static void say_special(const struct fg_stale_special *sp, void *data)
{
	(void)data;
	if (sp->error)
		ep_error("warning: cannot clear the %s '%s': %s", sp->type, sp->name, strerror(-sp->error));
	else
		ep_error("warning: %s '%s' under a name a run writes: %s%s%s", sp->type, sp->name,
			 sp->action, sp->to ? " to " : "", sp->to ? sp->to : "");
}

/* --clear-stale: what the runner does on the host when it can see the
 * workspace. A failure is a warning: the run id still tells this run's
 * cycles from an earlier one's. */
static void clear_stale(struct loop *l)
{
	long removed = 0;
	int dfd = open(l->step_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc = dfd < 0 ? -errno : fg_step_clear_stale(dfd, &removed, say_special, NULL);

	if (dfd >= 0)
		close(dfd);
	if (rc < 0)
		ep_error("warning: cannot clear stale files in '%s': %s", l->step_dir, strerror(-rc));
	else if (removed > 0)
		ep_error("cleared %ld stale cycle file(s) in '%s'", removed, l->step_dir);
}

static int start(struct loop *l)
{
	int rc = ep_pid1_init(&l->pid1);
	char err[512] = "";

	if (rc < 0) {
		ep_error("error: cannot set up signal handling: %s", strerror(-rc));
		return FG_EXIT_FAILED;
	}
	l->step_dir = fg_path_join(l->t->workspace, l->t->cycle_dir);
	rc = create_step_dir(l->t->workspace, l->t->cycle_dir, err, sizeof(err));
	if (rc < 0) {
		ep_error("error: cannot create '%s': %s", l->step_dir, err[0] ? err : strerror(-rc));
		return FG_EXIT_USAGE;
	}
	if (l->t->clear_stale)
		clear_stale(l);
	return make_tmpdir(l) < 0 ? FG_EXIT_FAILED : 0;
}

static void loop_release(struct loop *l)
{
	remove_tmpdir(l);
	for (size_t i = 0; i < l->nhist; i++)
		fg_cycle_release(&l->hist[i]);
	free(l->hist);
	free(l->reviewer_failed);
	free(l->system_prompt);
	for (size_t i = 0; i < FG_REVIEWERS_MAX; i++)
		free(l->role_system[i]);
	free(l->step_dir);
	free(l->review_md);
	fg_review_config_release(&l->cfg);
	/* Orphans that ended after the last agent: no zombie outlives us. */
	ep_pid1_poll(&l->pid1, 0, NULL);
	ep_pid1_release(&l->pid1);
}

int ep_loop_run(const struct ep_task *t)
{
	struct loop l;
	int rc;

	memset(&l, 0, sizeof(l));
	l.t = t;
	l.pid1.fd = -1;
	fg_review_config_init(&l.cfg);
	rc = configure(&l);
	if (!rc)
		rc = start(&l);
	if (!rc)
		rc = run_all(&l);
	if (rc == STOP_SIGNAL) {
		rc = ep_pid1_exit_code(&l.pid1);
		ep_error("stopped by signal %d (%s): exit %d", l.pid1.term_sig, strsignal(l.pid1.term_sig), rc);
	}
	loop_release(&l);
	return rc;
}
