/*
 * loop.c - the worker and the review loop: its phases and its endings (see
 * loop.h; calling an agent is call.c, judging a review judge.c, a panel
 * panel.c).
 */
#include "loop.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "audit.h"
#include "call.h"
#include "cycle_evidence.h"
#include "cli.h"
#include "frames.h"
#include "lifeline.h"
#include "judge.h"
#include "output.h"
#include "panel.h"
#include "pid1.h"
#include "preflight.h"
#include "prompt.h"
#include "sandbox.h"
#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/cmdline.h"
#include "forge/cycle.h"
#include "forge/exit.h"
#include "forge/fsutil.h"
#include "forge/num.h"
#include "forge/resolve.h"
#include "forge/rules.h"
#include "forge/stepdir.h"
#include "forge/reviewmd.h"
#include "forge/summary.h"
#include "forge/text.h"
#include "forge/timeutil.h"
#include "forge/util.h"
#include "forge/verdict.h"

static void print_diags(const char *subject, const struct fg_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct fg_diag *g = &d->v[i];

		enum fg_msg_level level = g->level == FG_DIAG_ERROR ? FG_MSG_ERROR : FG_MSG_WARN;

		if (g->line > 0)
			ep_log(level, "%s:%d: %s", subject, g->line, g->msg);
		else
			ep_log(level, "%s: %s", subject, g->msg);
	}
}

/* AUTO_REVIEW_REQUIRED=1: a skill without a review.md is a configuration
 * error (FG_EXIT_USAGE) before any agent runs; unset, empty or 0: 0. An
 * invalid value is an error too: a required review must not be skipped
 * because of a typo. */
static int review_required(void)
{
	const char *v = getenv("AUTO_REVIEW_REQUIRED");
	int on = 0;

	if (!v || !*v)
		return 0;
	if (fg_parse_bool(v, &on)) {
		ep_log(FG_MSG_ERROR, "invalid AUTO_REVIEW_REQUIRED '%s' (1 or 0)", v);
		return FG_EXIT_USAGE;
	}
	return on ? FG_EXIT_USAGE : 0;
}

/* Step 1: which review.md, and its configuration. FG_EXIT_USAGE or 0. */
static int configure(struct ep_loop *l)
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
		rc = review_required();
		if (rc)
			ep_log(FG_MSG_ERROR, "%s, and AUTO_REVIEW_REQUIRED=1 makes a review required", fg_buf_str(&why));
		else
			ep_log(FG_MSG_WARN, "%s: nothing is reviewed, the worker's result is final", fg_buf_str(&why));
		fg_buf_release(&why);
		return rc;
	}
	fg_review_env_from_environ(&env);
	fg_review_config_load(&l->cfg, l->review_md, &env);
	print_diags(l->review_md, &l->cfg.diags);
	l->max = l->cfg.max_retries;
	ep_log(FG_MSG_INFO, "review.md: %s (max_retries %d%s)", l->review_md, l->max,
	    l->max == 0 ? ": review disabled" : "");
	if (l->max > 0 && !l->t->reviewer_cmd) {
		ep_log(FG_MSG_ERROR, "FORGE_REVIEWER_CMD is not set, but '%s' asks for review", l->review_md);
		return FG_EXIT_USAGE;
	}
	/* The task's paths are absolute (task.c), so is review.md's directory. */
	fg_path_split(l->review_md, &l->skill_dir, NULL);
	l->checks = (struct ep_checks){ .t = l->t, .cfg = &l->cfg, .ae = &l->ae, .skill_dir = l->skill_dir };
	return l->max > 0 ? ep_checks_preflight(&l->checks) : 0;
}

/* Nothing of the worker's turn may run beside a reviewer: the agent
 * supervisor already killed its leftovers (agent.h); this makes sure no
 * child of ours is left at all (a container's PID 1: no process but us).
 * False, with r->what saying why, when one survived SIGKILL. */
static bool turn_cleared(struct ep_loop *l, struct ep_agent_result *r)
{
	size_t left = ep_pid1_kill_orphans(&l->pid1, NULL, 0, l->t->kill_grace_s + 2);

	if (!left)
		return true;
	snprintf(r->what, sizeof(r->what), "%zu process(es) of the worker's turn outlived it and "
		 "survived SIGKILL: no reviewer runs beside them", left);
	return false;
}

/* A worker run; 0 success, FG_EXIT_FAILED (r->what says why) or EP_STOP_SIGNAL. */
static int run_worker(struct ep_loop *l, int cycle, struct ep_agent_result *r)
{
	char *prompt = cycle ? ep_prompt_worker_retry(l->t, l->hist, l->nhist) : ep_prompt_worker(l->t);
	struct ep_output out;
	struct ep_call c = { "worker", cycle, prompt, "worker-prompt.md", false, cycle > 0, &out, -1, NULL, NULL, NULL };
	struct fg_buf fb;
	bool failed;
	int rc = 0;

	fg_buf_init(&fb, EP_PROMPT_MAX);
	if (cycle) {
		ep_prompt_feedback(&fb, &l->hist[l->nhist - 1]);
		c.feedback_text = fg_buf_str(&fb);
	}
	ep_log(FG_MSG_INFO, "running the worker (%s)",
	       cycle ? "retry with the reviewer's feedback" : "first run");
	c.run = &l->worker_run;
	rc = ep_call_run(l, &c, r);
	failed = ep_call_failed(r, &out);
	l->worker_run.failed = failed;
	ep_output_release(&out);
	fg_buf_release(&fb);
	free(prompt);
	if (rc == EP_STOP_SIGNAL)
		return EP_STOP_SIGNAL;
	return failed || !turn_cleared(l, r) ? FG_EXIT_FAILED : 0;
}

void ep_loop_stamp(const struct ep_loop *l, struct fg_cycle *c, int n, double elapsed)
{
	c->cycle = n;
	c->max_cycles = l->max;
	free(c->skill);
	c->skill = fg_xstrdup(l->t->skill);
	free(c->run_id);
	c->run_id = *l->t->run_id ? fg_xstrdup(l->t->run_id) : NULL;
	c->elapsed_seconds = elapsed;
	c->usage.worker = l->worker_last;
	c->worker_run = l->worker_run;
	fg_denied_merge(&c->denied.worker, &l->worker_denied);
	fg_time_iso_utc(c->timestamp, time(NULL));
}

bool ep_loop_over_budget(const struct ep_loop *l, double *spent)
{
	return fg_rules_over_budget(l->cfg.max_cost_usd, &l->total, spent);
}

/* Writes c's file, then (after the file: the stream never reports a cycle
 * that has no file) its frame. 0, or the negative errno after an error
 * message. */
static int record(const struct ep_loop *l, const struct fg_cycle *c)
{
	int rc = fg_cycle_write_sealed(l->step_dir, c, ep_seal_key(), l->t->step);

	if (rc < 0) {
		ep_log(FG_MSG_ERROR, "cannot write '%s/review_cycle_%d.json': %s", l->step_dir, c->cycle,
			 strerror(-rc));
		return rc;
	}
	ep_frame_cycle(c, l->t->step);
	return 0;
}

/* The last two cycles rejected the work for the same reasons (issue 10). */
static bool stalled(const struct ep_loop *l)
{
	if (!l->cfg.stop_when_stalled || l->nhist < 2)
		return false;
	/* Turns that changed nothing: two in a row are a stall. */
	if (l->hist[l->nhist - 1].ev.no_change)
		return l->hist[l->nhist - 2].ev.no_change;
	return fg_rules_stalled(&l->hist[l->nhist - 2], l->reviewer_failed[l->nhist - 2],
				&l->hist[l->nhist - 1], l->reviewer_failed[l->nhist - 1]);
}

/* The progress lines of cycle c: its verdict (the feedback's first line:
 * the reviewer's text, escaped by ep_log() like every message, so it
 * cannot rewrite the terminal line), then each panel role's review. */
static void progress(const struct fg_cycle *c)
{
	char line[1024];

	if (c->j.verdict == FG_VERDICT_APPROVED && c->ev.advice_only) {
		ep_log(FG_MSG_PLAIN, "Review cycle %d/%d: APPROVED - %zu advice finding(s), not looped on",
		       c->cycle, c->max_cycles, c->j.nfindings);
	} else if (c->j.verdict == FG_VERDICT_APPROVED) {
		ep_log(FG_MSG_PLAIN, "Review cycle %d/%d: APPROVED", c->cycle, c->max_cycles);
	} else {
		ep_one_line(line, sizeof(line), c->j.feedback, EP_FEEDBACK_LINE_CHARS);
		ep_log(FG_MSG_PLAIN, "Review cycle %d/%d: REJECTED - %s%s%s", c->cycle, c->max_cycles, line,
		       c->stalled ? " (stalled: same findings as the previous cycle)" : "",
		       c->over_budget ? " (over budget: the step's cost passed max_cost_usd)" : "");
	}
	for (size_t i = 0; i < c->nreviews; i++) {
		const struct fg_review *r = &c->reviews[i];

		if (r->from_cycle)
			ep_log(FG_MSG_PLAIN, "  %s: %s (cycle %d stands)", r->role,
			       fg_role_verdict_name(fg_review_verdict(r)), r->from_cycle);
		else
			ep_log(FG_MSG_PLAIN, "  %s: %s%s, %zu finding(s), %.1f s", r->role,
			       fg_role_verdict_name(fg_review_verdict(r)), r->failed ? " (failed)" : "",
			       r->j.nfindings, r->elapsed_seconds);
	}
}

/* Writes review_summary.json and returns code. */
static int finish(struct ep_loop *l, enum fg_review_state state, int code)
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
	if (state == FG_STATE_FAILED)
		fg_summary_set_failure(&s, l->cause, l->reason);
	s.isolation = l->iso;
	s.t.started_ms = l->step_t.started_ms;
	s.t.ended_ms = fg_time_now_ms();
	for (size_t i = 0; state == FG_STATE_BLOCKED && l->blocked_by && i < l->blocked_by->j.nfindings; i++)
		if (fg_finding_rank(&l->blocked_by->j.findings[i]) == FG_RANK_QUESTION)
			fg_summary_add_question(&s, &l->blocked_by->j.findings[i]);
	for (size_t i = 0; state == FG_STATE_APPROVED && l->nhist && l->hist[l->nhist - 1].ev.advice_only &&
			   i < l->hist[l->nhist - 1].j.nfindings; i++)
		fg_summary_add_advice(&s, &l->hist[l->nhist - 1].j.findings[i]);
	if (l->audit)
		fg_summary_set_audit(&s, l->audit);
	rc = fg_summary_write_sealed(l->step_dir, &s, ep_seal_key());
	if (rc < 0) {
		/* The review's outcome is not on record: never a success (a
		 * summary planted meanwhile must not pass for ours either). */
		ep_log(FG_MSG_ERROR, "cannot write '%s/%s': %s; the review's outcome is not recorded, "
		       "the task failed", l->step_dir, FG_SUMMARY_FILE, strerror(-rc));
		s.state = state = FG_STATE_FAILED;
		code = FG_EXIT_FAILED;
	}
	/* Sent even when the file could not be written: a runner that cannot
	 * see the workspace learns how the review ended from this frame. */
	ep_frame_summary(&s);
	if (fg_usage_pair_cost(&l->total, &usd))
		ep_log(FG_MSG_INFO, "review %s after %d cycle(s): exit %d (the agents reported $%.4f)",
			 fg_review_state_name(state), s.cycles, code, usd);
	else
		ep_log(FG_MSG_INFO, "review %s after %d cycle(s): exit %d", fg_review_state_name(state),
		       s.cycles, code);
	fg_summary_release(&s);
	return code;
}

/* Ends the step failed for cause, with reason (borrowed, may be NULL; the
 * summary's failure) and exit code code. */
static int fail(struct ep_loop *l, enum fg_failure_cause cause, const char *reason, int code)
{
	if (reason != l->reason) {
		free(l->reason);
		l->reason = reason ? fg_xstrdup(reason) : NULL;
	}
	l->cause = cause;
	return finish(l, FG_STATE_FAILED, code);
}

static int exhausted_code(const struct ep_loop *l)
{
	return l->t->fail_on_exhaustion ? FG_EXIT_EXHAUSTED : 0;
}

/* The exhaustion marker after a failed worker retry (issue 3 item 4). */
static int synthetic(struct ep_loop *l, int after, const struct ep_agent_result *r)
{
	struct fg_cycle c;

	fg_cycle_init(&c);
	c.synthetic = true;
	c.j.feedback = fg_xasprintf("The worker failed while addressing the feedback of review cycle %d: "
				    "%s. The review loop stopped; the work was not approved.", after, r->what);
	ep_loop_stamp(l, &c, l->max, r->seconds);
	record(l, &c);
	ep_log(FG_MSG_FAILED, "%s", r->what);
	fg_cycle_release(&c);
	return fail(l, FG_CAUSE_WORKER_FAILED, r->what, FG_EXIT_FAILED);
}

/* The budget ran out after a worker run, before review cycle n: a
 * synthetic cycle n records it (usage: that worker run), then the summary. */
static int budget_cycle(struct ep_loop *l, int n, const char *after)
{
	struct fg_cycle c;
	double spent = 0;

	ep_loop_over_budget(l, &spent);
	fg_cycle_init(&c);
	c.synthetic = true;
	c.over_budget = true;
	c.j.feedback = fg_xasprintf("The step's reported cost, $%.4f, passed its budget (max_cost_usd $%.4f) "
				    "after %s: no further agent run was started; the work was not approved.",
				    spent, l->cfg.max_cost_usd, after);
	ep_loop_stamp(l, &c, n, 0);
	record(l, &c);
	progress(&c);
	fg_cycle_release(&c);
	return finish(l, FG_STATE_OVER_BUDGET, exhausted_code(l));
}

/* Every finding is a question for a person: stop now, list them. */
static int blocked(struct ep_loop *l, const struct fg_cycle *c)
{
	char line[512];

	ep_log(FG_MSG_INFO, "review blocked: every remaining finding needs a person's decision:");
	for (size_t i = 0; i < c->j.nfindings; i++) {
		const struct fg_finding *f = &c->j.findings[i];

		if (fg_finding_rank(f) != FG_RANK_QUESTION)
			continue;
		ep_one_line(line, sizeof(line), f->title ? f->title : "", EP_FEEDBACK_LINE_CHARS);
		if (f->file_path && f->line > 0)
			ep_log(FG_MSG_INFO, "  [%s] %s:%d: %s", f->role ? f->role : "default",
			       f->file_path, f->line, line);
		else
			ep_log(FG_MSG_INFO, "  [%s] %s: %s", f->role ? f->role : "default",
				 f->file_path ? f->file_path : "-", line);
	}
	l->blocked_by = c;
	return finish(l, FG_STATE_BLOCKED, exhausted_code(l));
}

/* The feedback of cycle c's review that could not be started (the single
 * reviewer's, or a panel role's run in this cycle), or NULL. */
static const char *unstartable(const struct fg_cycle *c, bool failed)
{
	static const size_t n = sizeof(EP_JUDGE_UNSTARTABLE) - 1;

	if (failed && !c->nreviews && c->j.feedback && !strncmp(c->j.feedback, EP_JUDGE_UNSTARTABLE, n))
		return c->j.feedback;
	for (size_t i = 0; i < c->nreviews; i++) {
		const struct fg_review *r = &c->reviews[i];

		if (r->failed && !r->from_cycle && r->j.feedback && !strncmp(r->j.feedback, EP_JUDGE_UNSTARTABLE, n))
			return r->j.feedback;
	}
	return NULL;
}

/* A panel role's review that judged nothing: it failed, or its answer held
 * no verdict (after the re-ask). */
static bool role_useless(const struct fg_review *r)
{
	return !r->from_cycle && (r->failed || (r->j.has_format && r->j.format == FG_FORMAT_NONE));
}

/*
 * The reviewer (or panel role) that failed or gave no verdict, after its
 * re-ask, in both of the last two cycles, or NULL: sending the worker back
 * again would only spend more (issue 25). Borrowed from l's history.
 */
static const char *useless_twice(const struct ep_loop *l)
{
	const struct fg_cycle *a, *b;

	if (l->nhist < 2)
		return NULL;
	a = &l->hist[l->nhist - 2];
	b = &l->hist[l->nhist - 1];
	/* A cycle no reviewer ran in (the worker's turn changed nothing) says
	 * nothing about the reviewer. */
	if (a->ev.no_change || b->ev.no_change)
		return NULL;
	if (!l->cfg.nreviewers)
		return (l->reviewer_failed[l->nhist - 2] || a->j.format == FG_FORMAT_NONE) &&
		       (l->reviewer_failed[l->nhist - 1] || b->j.format == FG_FORMAT_NONE) ? "reviewer" : NULL;
	for (size_t i = 0; i < b->nreviews; i++) {
		const struct fg_review *rb = &b->reviews[i];

		for (size_t j = 0; role_useless(rb) && j < a->nreviews; j++)
			if (!strcmp(a->reviews[j].role, rb->role) && role_useless(&a->reviews[j]))
				return rb->role;
	}
	return NULL;
}

/* Why the loop must end now although the work was not judged: a reviewer
 * that cannot be started (exit 2: configuration), or one that judged
 * nothing in two cycles in a row (failed). 0 when it goes on. */
static int reviewer_stop(struct ep_loop *l, const struct fg_cycle *c, bool failed)
{
	const char *why = unstartable(c, failed), *who;

	if (why) {
		why += strlen("The review could not be completed: ");
		ep_log(FG_MSG_ERROR, "%s; check FORGE_REVIEWER_CMD (or FORGE_REVIEWER_AGENT): the loop stops "
		       "here instead of sending the worker back", why);
		return fail(l, FG_CAUSE_CONFIG_ERROR, why, FG_EXIT_USAGE);
	}
	who = useless_twice(l);
	if (!who)
		return 0;
	ep_log(FG_MSG_FAILED, "the review failed: the %s%s failed or gave no verdict in cycles %d and %d "
	       "(last: %s); the worker is not sent back again", strcmp(who, "reviewer") ? "reviewer " : "",
	       who, c->cycle - 1, c->cycle, c->j.feedback ? c->j.feedback : "no feedback");
	return fail(l, FG_CAUSE_REVIEWER_FAILED, c->j.feedback, FG_EXIT_FAILED);
}

/* The loop approved: the audit (audit.h), when review.md asks for one,
 * then the summary. The exit code or EP_STOP_SIGNAL. */
static int approved(struct ep_loop *l)
{
	int rc = ep_audit_step(l);

	if (rc == EP_STOP_SIGNAL)
		return rc;
	return rc ? finish(l, FG_STATE_AUDIT_REJECTED, FG_EXIT_AUDIT_REJECTED) : finish(l, FG_STATE_APPROVED, 0);
}

/* Step 4: cycles 1..max. Returns the exit code or EP_STOP_SIGNAL. */
static int review_phase(struct ep_loop *l)
{
	for (int k = 1; k <= l->max; k++) {
		struct fg_cycle *c = &l->hist[l->nhist];
		struct ep_agent_result r;
		bool failed = false;
		int rc = ep_evidence_cycle(l, k, c, &failed);

		if (rc == EP_STOP_SIGNAL)
			return EP_STOP_SIGNAL;
		if (rc == EP_SETUP_ERROR) {
			ep_log(FG_MSG_ERROR, "%s", l->reason);
			return fail(l, FG_CAUSE_CONFIG_ERROR, l->reason, FG_EXIT_USAGE);
		}
		if (l->cfg.nreviewers)
			failed = ep_panel_any_failed(c);
		l->reviewer_failed[l->nhist++] = failed;
		c->stalled = stalled(l);
		c->ev.advice_only = c->j.verdict == FG_VERDICT_APPROVED && c->j.has_findings &&
				    fg_findings_advice_only(c->j.findings, c->j.nfindings);
		/* Approved, blocked, stalled and exhausted end the loop anyway;
		 * otherwise a spent budget is why no worker retry starts. */
		c->over_budget = c->j.verdict != FG_VERDICT_APPROVED && !ep_panel_blocked(c) && !c->stalled &&
				 k < l->max && ep_loop_over_budget(l, NULL);
		fg_rules_fit(c, FG_CYCLE_MAX_BYTES);
		if (record(l, c) < 0)
			return finish(l, FG_STATE_FAILED, FG_EXIT_FAILED);
		progress(c);
		if (c->j.verdict == FG_VERDICT_APPROVED)
			return approved(l);
		rc = reviewer_stop(l, c, failed);
		if (rc)
			return rc;
		if (ep_panel_blocked(c))
			return blocked(l, c);
		if (c->stalled)
			return finish(l, FG_STATE_STALLED, exhausted_code(l));
		if (k == l->max)
			return finish(l, FG_STATE_EXHAUSTED, exhausted_code(l));
		if (c->over_budget)
			return finish(l, FG_STATE_OVER_BUDGET, exhausted_code(l));
		rc = run_worker(l, k, &r);
		if (rc == EP_STOP_SIGNAL)
			return EP_STOP_SIGNAL;
		if (rc)
			return synthetic(l, k, &r);
		if (ep_loop_over_budget(l, NULL)) {
			char after[64];

			snprintf(after, sizeof(after), "the worker's retry for review cycle %d", k);
			return budget_cycle(l, k + 1, after);
		}
	}
	return finish(l, FG_STATE_EXHAUSTED, exhausted_code(l));
}

/* Steps 2-4. Returns the exit code or EP_STOP_SIGNAL. */
static int run_all(struct ep_loop *l)
{
	struct ep_agent_result r;
	int rc;

	ep_evidence_start(l);
	rc = run_worker(l, 0, &r);

	if (rc == EP_STOP_SIGNAL)
		return EP_STOP_SIGNAL;
	if (rc) {
		ep_log(FG_MSG_FAILED, "%s", r.what);
		return fail(l, FG_CAUSE_WORKER_FAILED, r.what, FG_EXIT_FAILED);
	}
	if (!l->review_md)
		return finish(l, FG_STATE_NO_REVIEW, 0);
	if (l->max == 0)
		return finish(l, FG_STATE_DISABLED, 0);
	/* The texts only: each reviewer's files are written right before it
	 * starts, in a directory of its own (call.h). */
	l->system_prompt = ep_prompt_reviewer_system(l->cfg.instructions);
	ep_panel_write_prompts(l);
	l->hist = fg_xcalloc((size_t)l->max, sizeof(*l->hist));
	l->reviewer_failed = fg_xcalloc((size_t)l->max, sizeof(*l->reviewer_failed));
	if (ep_loop_over_budget(l, NULL))
		return budget_cycle(l, 1, "the worker's first run");
	return review_phase(l);
}

/* Creates the cycle directory rel below the workspace one component at a
 * time, never following a symlink: a FORGE_CYCLE_DIR (or a .forge) that
 * leads out of the workspace through a link is refused. 0 or -errno. */
static int create_step_dir(const char *workspace, const char *rel, char *err, size_t errlen)
{
	int wsfd, fd;

	wsfd = fg_open_dir(AT_FDCWD, workspace, 0);
	if (wsfd < 0)
		return wsfd;
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
		ep_log(FG_MSG_WARN, "cannot clear the %s '%s': %s", sp->type, sp->name, strerror(-sp->error));
	else
		ep_log(FG_MSG_WARN, "%s '%s' under a name a run writes: %s%s%s", sp->type, sp->name,
			 sp->action, sp->to ? " to " : "", sp->to ? sp->to : "");
}

/* --clear-stale: what the runner does on the host when it can see the
 * workspace. A failure is a warning: the run id still tells this run's
 * cycles from an earlier one's. */
static void clear_stale(struct ep_loop *l)
{
	long removed = 0;
	int dfd = fg_open_dir(AT_FDCWD, l->step_dir, FG_DIR_NOFOLLOW);
	int rc = dfd < 0 ? dfd : fg_step_clear_stale(dfd, &removed, say_special, NULL);

	if (dfd >= 0)
		close(dfd);
	if (rc < 0)
		ep_log(FG_MSG_WARN, "cannot clear stale files in '%s': %s", l->step_dir, strerror(-rc));
	else if (removed > 0)
		ep_log(FG_MSG_INFO, "cleared %ld stale cycle file(s) in '%s'", removed, l->step_dir);
}

/* FORGE_REQUIRE_ISOLATION: 1 on, 0 off, -1 invalid (said). */
static int isolation_required(void)
{
	const char *v = getenv("FORGE_REQUIRE_ISOLATION");
	int on = 0;

	if (v && *v && fg_parse_bool(v, &on)) {
		ep_log(FG_MSG_ERROR, "invalid FORGE_REQUIRE_ISOLATION '%s' (1 or 0)", v);
		return -1;
	}
	return on;
}

/* What the operator named may be read and run by the agents wherever it
 * is (sandbox.h, step 1b): the skills directory (checks run its scripts),
 * and the directory of every absolute path an agent command names (its
 * program, or the script an interpreter is given, with its siblings). */
static void grant_named(const struct ep_loop *l)
{
	const char *cmds[] = { l->t->worker_cmd, l->t->reviewer_cmd };
	char err[128];

	ep_sandbox_grant_read(l->t->skills_dir);
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++) {
		struct fg_strvec argv;

		fg_strvec_init(&argv);
		if (cmds[i] && fg_cmdline_split(cmds[i], &argv, err, sizeof(err)) == 0) {
			for (size_t k = 0; k < argv.n; k++) {
				char *slash = argv.v[k][0] == '/' ? strrchr(argv.v[k], '/') : NULL;

				if (slash && slash > argv.v[k]) {
					*slash = '\0';
					ep_sandbox_grant_read(argv.v[k]);
				}
			}
		}
		fg_strvec_release(&argv);
	}
}

/* The agents' box (sandbox.h), said on one line the runner logs as its
 * `isolation` event. FG_EXIT_USAGE when it is required and there is none. */
static int box(struct ep_loop *l)
{
	const char *hidden[] = { l->tmpdir, l->indir };
	int req = isolation_required();
	cJSON *o, *f;
	char *json;

	if (req < 0 || ep_sandbox_setup(hidden, ARRAY_SIZE(hidden), l->t->workspace, &l->iso) < 0)
		return FG_EXIT_USAGE;
	grant_named(l);
	o = fg_isolation_to_cjson(&l->iso);
	json = cJSON_PrintUnformatted(o);
	ep_log(FG_MSG_INFO, "isolation: %s", json ? json : "{}");
	/* The runner learns it from the sealed event frame, never a line. */
	f = fg_isolation_to_fields(&l->iso);
	ep_frame_event("isolation", f);
	cJSON_Delete(f);
	cJSON_free(json);
	cJSON_Delete(o);
	if (l->iso.landlock)
		return 0;
	if (req) {
		ep_log(FG_MSG_ERROR, "FORGE_REQUIRE_ISOLATION=1, but the agents would run without a kernel "
		       "sandbox: %s (docs/security.md#the-box)", l->iso.reason);
		return FG_EXIT_USAGE;
	}
	ep_log(FG_MSG_WARN, "the agents run without a kernel sandbox: %s (docs/security.md#the-box)",
	       l->iso.reason);
	return 0;
}

static int start(struct ep_loop *l)
{
	int rc = ep_pid1_init(&l->pid1);
	char err[512] = "";

	if (rc < 0) {
		ep_log(FG_MSG_ERROR, "cannot set up signal handling: %s", strerror(-rc));
		return FG_EXIT_FAILED;
	}
	l->step_dir = fg_path_join(l->t->workspace, l->t->cycle_dir);
	rc = create_step_dir(l->t->workspace, l->t->cycle_dir, err, sizeof(err));
	if (rc < 0) {
		ep_log(FG_MSG_ERROR, "cannot create '%s': %s", l->step_dir, err[0] ? err : strerror(-rc));
		return FG_EXIT_USAGE;
	}
	if (l->t->clear_stale)
		clear_stale(l);
	rc = ep_agentenv_init(&l->ae, l->review_md ? &l->cfg : NULL);
	if (rc < 0)
		return rc == -EINVAL ? FG_EXIT_USAGE : FG_EXIT_FAILED;
	if (ep_call_tmpdir_make(l) < 0)
		return FG_EXIT_FAILED;
	return box(l);
}

static void loop_release(struct ep_loop *l)
{
	ep_evidence_release(l);
	ep_call_tmpdir_remove(l);
	ep_agentenv_release(&l->ae);
	for (size_t i = 0; i < l->nhist; i++)
		fg_cycle_release(&l->hist[i]);
	free(l->hist);
	free(l->reviewer_failed);
	fg_strvec_release(&l->worker_denied);
	free(l->system_prompt);
	ep_audit_release(l);
	for (size_t i = 0; i < FG_REVIEWERS_MAX; i++)
		free(l->role_system[i]);
	free(l->step_dir);
	free(l->review_md);
	free(l->skill_dir);
	free(l->reason);
	fg_review_config_release(&l->cfg);
	/* Orphans that ended after the last agent: no zombie outlives us. */
	ep_pid1_poll(&l->pid1, 0, NULL);
	ep_pid1_release(&l->pid1);
	ep_sandbox_release();
}

/* Stopped by a signal, or by the end of the lifeline: a (sealed) summary
 * says the step ended without an approval (failed, cause interrupted; at
 * the deadline, pid1.h: cause timeout, exit 124), for
 * the runner and for whoever looks at the workspace after it. */
static int stopped(struct ep_loop *l)
{
	int rc = ep_pid1_exit_code(&l->pid1);
	char why[320];

	if (l->pid1.deadline_passed) {
		ep_pid1_deadline_reason(why, sizeof(why));
		ep_log(FG_MSG_INFO, "%s: exit %d", why, rc);
		return fail(l, FG_CAUSE_TIMEOUT, why, rc);
	}
	if (!l->pid1.lifeline_lost) {
		snprintf(why, sizeof(why), "stopped by signal %d (%s)", l->pid1.term_sig,
			 strsignal(l->pid1.term_sig));
		ep_log(FG_MSG_INFO, "%s: exit %d", why, rc);
	} else {
		snprintf(why, sizeof(why), "the runner is gone (its standard input ended)");
		ep_log(FG_MSG_INFO, "%s: stopping as on its SIGTERM: exit %d", why, rc);
	}
	return fail(l, FG_CAUSE_INTERRUPTED, why, rc);
}

int ep_loop_run(const struct ep_task *t)
{
	struct ep_loop l;
	int rc;

	memset(&l, 0, sizeof(l));
	l.t = t;
	l.step_t.started_ms = fg_time_now_ms();
	l.pid1.fd = -1;
	fg_review_config_init(&l.cfg);
	rc = configure(&l);
	if (!rc)
		rc = ep_preflight_run(t, l.review_md && l.max > 0);
	if (!rc)
		rc = start(&l);
	if (!rc)
		rc = run_all(&l);
	if (rc == EP_STOP_SIGNAL)
		rc = stopped(&l);
	loop_release(&l);
	return rc;
}
