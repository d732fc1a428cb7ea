/*
 * loop.c - the worker and the review loop: its state, its phases and its
 * endings (see loop.h). The stages it calls (stage.h) return what they
 * did; this file alone stamps a cycle, counts the usage, checks the
 * budget between stages, and fits, writes and frames the cycle record.
 */
#include "loop.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "audit.h"
#include "call.h"
#include "cycle_evidence.h"
#include "cli.h"
#include "frames.h"
#include "lifeline.h"
#include "judge.h"
#include "outcome.h"
#include "output.h"
#include "panel.h"
#include "pid1.h"
#include "preflight.h"
#include "prompt.h"
#include "sandbox.h"
#include "setup.h"
#include "stage.h"
#include "tracker.h"
#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/cycle.h"
#include "forge/exit.h"
#include "forge/fsutil.h"
#include "forge/num.h"
#include "forge/resolve.h"
#include "forge/rules.h"
#include "forge/reviewmd.h"
#include "forge/summary.h"
#include "forge/text.h"
#include "forge/timeutil.h"
#include "forge/util.h"
#include "forge/verdict.h"

/* The state of one run; owned by ep_loop_run(). The stages get parts of
 * it, read-only, through struct ep_stage_in (stage_in()). */
struct ep_loop {
	const struct ep_task *t;
	struct ep_pid1 pid1;
	char *tmpdir;                 /* owned: the private directory (call.h), hidden from agents */
	char *indir;                  /* owned: the base of the agents' prompt directories (call.h) */
	struct fg_isolation iso;      /* the agents' box (sandbox.h), in the summary */
	char *step_dir;               /* owned: W/ + fg_cycle_dir() */
	char *review_md;              /* owned or NULL */
	struct fg_review_config cfg;
	int max;                      /* resolved max_retries */
	struct fg_cycle *hist;        /* owned: real cycles so far */
	size_t nhist;
	char *system_prompt;          /* owned: the reviewer's, once review starts */
	char *role_system[FG_REVIEWERS_MAX];  /* owned: each panel role's system prompt */
	struct fg_usage worker_last;  /* the last worker run's usage, for the next cycle */
	struct fg_agent_run worker_run;  /* the last worker run's record, for the next cycle */
	struct fg_phase step_t;       /* the step: from the start to the summary */
	struct fg_strvec worker_denied;  /* the tools refused to the last worker run */
	struct fg_usage_pair total;   /* the step's totals */
	const struct fg_cycle *blocked_by;  /* the cycle whose questions a blocked summary lists */
	struct ep_checks checks;      /* review.md's checks (checks.h) */
	struct ep_tracker tr;         /* the workspace's states (tracker.h) */
	struct fg_audit *audit;       /* owned or NULL: the audit's record, once it was decided */
	struct ep_agentenv ae;        /* the agents' environments and HOMEs (agentenv.h) */
	char *skill_dir;              /* owned or NULL: review.md's directory, absolute */
	char *reason;                 /* owned or NULL: why the step failed (the summary's) */
	enum fg_failure_cause cause;  /* why the step failed (FG_CAUSE_NONE: not) */
};

/* What a stage for cycle k reads of l (borrowed; valid until l changes). */
static struct ep_stage_in stage_in(struct ep_loop *l, int k)
{
	return (struct ep_stage_in){
		.t = l->t, .cfg = &l->cfg, .max = l->max, .k = k, .pid1 = &l->pid1, .ae = &l->ae,
		.checks = &l->checks, .step_dir = l->step_dir, .tmpdir = l->tmpdir, .indir = l->indir,
		.system_prompt = l->system_prompt, .role_system = l->role_system, .hist = l->hist,
		.nhist = l->nhist, .total = &l->total,
	};
}

static bool over_budget(const struct ep_loop *l, double *spent)
{
	return fg_rules_over_budget(l->cfg.max_cost_usd, &l->total, spent);
}

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

/* A worker run's usage and denied tools: the step's totals, and the next
 * cycle's record. */
static void count_worker(struct ep_loop *l, const struct ep_output *out)
{
	fg_usage_add(&l->total.worker, &out->usage);
	l->worker_last = out->usage;
	fg_strvec_release(&l->worker_denied);
	fg_denied_merge(&l->worker_denied, &out->denied);
}

/* A worker run; 0 success, FG_EXIT_FAILED (r->what says why) or EP_STOP_SIGNAL. */
static int run_worker(struct ep_loop *l, int cycle, struct ep_agent_result *r)
{
	char *prompt = cycle ? ep_prompt_worker_retry(l->t, l->hist, l->nhist) : ep_prompt_worker(l->t);
	struct ep_stage_in in = stage_in(l, cycle);
	struct ep_output out;
	struct ep_call c = { "worker", cycle, prompt, "worker-prompt.md", false, NULL, cycle > 0, &out, -1, NULL,
			     NULL, NULL };
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
	rc = ep_call_run(&in, &c, r);
	count_worker(l, &out);
	failed = ep_call_failed(r, &out);
	l->worker_run.failed = failed;
	ep_output_release(&out);
	fg_buf_release(&fb);
	free(prompt);
	if (rc == EP_STOP_SIGNAL)
		return EP_STOP_SIGNAL;
	return failed || !turn_cleared(l, r) ? FG_EXIT_FAILED : 0;
}

/*
 * Stamps c as cycle n of this run: cycle, max_cycles, skill, run_id (none
 * when the task has none), elapsed_seconds, the worker usage, run record
 * and denied tools before it and the timestamp (now). The one place a
 * cycle gets these.
 */
static void stamp(const struct ep_loop *l, struct fg_cycle *c, int n, double elapsed)
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

/* The exhaustion marker after a failed worker retry: the last cycle. */
static int synthetic(struct ep_loop *l, int after, const struct ep_agent_result *r)
{
	struct fg_cycle c;

	fg_cycle_init(&c);
	c.synthetic = true;
	c.j.feedback = fg_xasprintf("The worker failed while addressing the feedback of review cycle %d: "
				    "%s. The review loop stopped; the work was not approved.", after, r->what);
	stamp(l, &c, l->max, r->seconds);
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

	over_budget(l, &spent);
	fg_cycle_init(&c);
	c.synthetic = true;
	c.over_budget = true;
	c.j.feedback = fg_xasprintf("The step's reported cost, $%.4f, passed its budget (max_cost_usd $%.4f) "
				    "after %s: no further agent run was started; the work was not approved.",
				    spent, l->cfg.max_cost_usd, after);
	stamp(l, &c, n, 0);
	record(l, &c);
	ep_outcome_progress(&c);
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

/* Why the loop must end now although the work was not judged: a reviewer
 * that cannot be started (exit 2: configuration), or one that judged
 * nothing in two cycles in a row (failed). 0 when it goes on. */
static int reviewer_stop(struct ep_loop *l, const struct fg_cycle *c)
{
	const char *why = ep_outcome_unstartable(c), *who;

	if (why) {
		why += strlen("The review could not be completed: ");
		ep_log(FG_MSG_ERROR, "%s; check FORGE_REVIEWER_CMD (or FORGE_REVIEWER_AGENT): the loop stops "
		       "here instead of sending the worker back", why);
		return fail(l, FG_CAUSE_CONFIG_ERROR, why, FG_EXIT_USAGE);
	}
	who = ep_outcome_useless_twice(&l->cfg, l->hist, l->nhist);
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
	struct ep_stage_in in = stage_in(l, (int)l->nhist);
	struct ep_audit_out out;
	int rc;

	/* The approving cycle's evidence: whether checks passed in it. */
	in.ev = &l->hist[l->nhist - 1].ev;
	rc = ep_audit_step(&in, &l->tr, &out);
	fg_usage_add(&l->total.reviewer, &out.spent);
	l->audit = out.audit;
	if (l->audit && out.elapsed >= 0)
		l->audit->elapsed_seconds = out.elapsed;
	if (rc == EP_STOP_SIGNAL)
		return rc;
	return rc ? finish(l, FG_STATE_AUDIT_REJECTED, FG_EXIT_AUDIT_REJECTED) : finish(l, FG_STATE_APPROVED, 0);
}

/* The loop's rules on cycle c, the last of the history: stalled, advice
 * only, over budget (approved, blocked, stalled and exhausted end the loop
 * anyway; otherwise a spent budget is why no worker retry starts). */
static void judge_cycle(struct ep_loop *l, int k, struct fg_cycle *c)
{
	c->stalled = ep_outcome_stalled(&l->cfg, l->hist, l->nhist);
	c->ev.advice_only = c->j.verdict == FG_VERDICT_APPROVED && c->j.has_findings &&
			    fg_findings_advice_only(c->j.findings, c->j.nfindings);
	c->over_budget = c->j.verdict != FG_VERDICT_APPROVED && !ep_panel_blocked(c) && !c->stalled &&
			 k < l->max && over_budget(l, NULL);
}

/*
 * Review cycle k: the evidence stage (and the reviewer or panel it calls),
 * its usage counted, the cycle stamped, judged by the loop's rules,
 * fitted, written and framed, its progress said. The cycle (in the
 * history), or NULL when the step ended (*rc: the exit code or
 * EP_STOP_SIGNAL).
 */
static struct fg_cycle *review_cycle(struct ep_loop *l, int k, int *rc)
{
	struct ep_stage_in in = stage_in(l, k);
	struct ep_stage_out out;
	struct fg_cycle *c;

	ep_stage_out_init(&out);
	*rc = ep_evidence_cycle(&in, &l->tr, &out);
	fg_usage_add(&l->total.reviewer, &out.spent);
	if (*rc == EP_SETUP_ERROR) {
		ep_log(FG_MSG_ERROR, "%s", out.reason);
		*rc = fail(l, FG_CAUSE_CONFIG_ERROR, out.reason, FG_EXIT_USAGE);
	}
	if (*rc) {
		ep_stage_out_release(&out);
		return NULL;
	}
	c = &l->hist[l->nhist++];
	*c = out.c;   /* moved: out is not released */
	stamp(l, c, k, out.elapsed);
	judge_cycle(l, k, c);
	fg_rules_fit(c, FG_CYCLE_MAX_BYTES);
	if (record(l, c) < 0) {
		*rc = finish(l, FG_STATE_FAILED, FG_EXIT_FAILED);
		return NULL;
	}
	ep_outcome_progress(c);
	return c;
}

/* Whether the step ends after cycle k (c), and how (*rc: the exit code
 * or EP_STOP_SIGNAL). */
static bool ends_after(struct ep_loop *l, int k, const struct fg_cycle *c, int *rc)
{
	if (c->j.verdict == FG_VERDICT_APPROVED) {
		*rc = approved(l);
		return true;
	}
	*rc = reviewer_stop(l, c);
	if (*rc)
		return true;
	if (ep_panel_blocked(c))
		*rc = blocked(l, c);
	else if (c->stalled)
		*rc = finish(l, FG_STATE_STALLED, exhausted_code(l));
	else if (k == l->max)
		*rc = finish(l, FG_STATE_EXHAUSTED, exhausted_code(l));
	else if (c->over_budget)
		*rc = finish(l, FG_STATE_OVER_BUDGET, exhausted_code(l));
	else
		return false;
	return true;
}

/* The worker's retry after cycle k; whether the step ended with it (*rc:
 * the exit code or EP_STOP_SIGNAL): a failed retry, a spent budget. */
static bool retry_ends(struct ep_loop *l, int k, int *rc)
{
	struct ep_agent_result r;
	char after[64];

	*rc = run_worker(l, k, &r);
	if (*rc == EP_STOP_SIGNAL)
		return true;
	if (*rc) {
		*rc = synthetic(l, k, &r);
		return true;
	}
	if (!over_budget(l, NULL))
		return false;
	snprintf(after, sizeof(after), "the worker's retry for review cycle %d", k);
	*rc = budget_cycle(l, k + 1, after);
	return true;
}

/* Step 4: cycles 1..max. Returns the exit code or EP_STOP_SIGNAL. */
static int review_phase(struct ep_loop *l)
{
	for (int k = 1; k <= l->max; k++) {
		int rc;
		const struct fg_cycle *c = review_cycle(l, k, &rc);

		if (!c || ends_after(l, k, c, &rc) || retry_ends(l, k, &rc))
			return rc;
	}
	return finish(l, FG_STATE_EXHAUSTED, exhausted_code(l));
}

/* Steps 2-4. Returns the exit code or EP_STOP_SIGNAL. */
static int run_all(struct ep_loop *l)
{
	struct ep_stage_in in = stage_in(l, 0);
	struct ep_agent_result r;
	int rc;

	ep_evidence_start(&l->tr, &in);
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
	ep_panel_system_prompts(&l->cfg, l->role_system);
	l->hist = fg_xcalloc((size_t)l->max, sizeof(*l->hist));
	if (over_budget(l, NULL))
		return budget_cycle(l, 1, "the worker's first run");
	return review_phase(l);
}

/* Everything an agent run needs: signals, the step dir, the agents'
 * environments, the temporary directories, the box. */
static int start(struct ep_loop *l)
{
	const char *hidden[2];
	int rc = ep_pid1_init(&l->pid1);

	if (rc < 0) {
		ep_log(FG_MSG_ERROR, "cannot set up signal handling: %s", strerror(-rc));
		return FG_EXIT_FAILED;
	}
	rc = ep_setup_step_dir(l->t, &l->step_dir);
	if (rc)
		return rc;
	l->checks.step_dir = l->step_dir;
	rc = ep_agentenv_init(&l->ae, l->review_md ? &l->cfg : NULL);
	if (rc < 0)
		return rc == -EINVAL ? FG_EXIT_USAGE : FG_EXIT_FAILED;
	if (ep_call_tmpdir_make(&l->tmpdir, &l->indir) < 0)
		return FG_EXIT_FAILED;
	hidden[0] = l->tmpdir;
	hidden[1] = l->indir;
	return ep_setup_box(l->t, hidden, ARRAY_SIZE(hidden), &l->iso);
}

static void loop_release(struct ep_loop *l)
{
	ep_evidence_release(&l->tr);
	ep_call_tmpdir_remove(&l->tmpdir, &l->indir);
	ep_agentenv_release(&l->ae);
	for (size_t i = 0; i < l->nhist; i++)
		fg_cycle_release(&l->hist[i]);
	free(l->hist);
	fg_strvec_release(&l->worker_denied);
	free(l->system_prompt);
	if (l->audit)
		fg_audit_release(l->audit);
	free(l->audit);
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
