/*
 * panel.h - a reviewer panel, a stage of the loop (stage.h): several roles
 * review each cycle, in parallel.
 *
 * Three parts:
 *
 * 1. Fan-out (ep_panel_fork). Each role's review runs in a helper process
 *    forked from the entrypoint. The helper sets up its own signal handling
 *    and subreaper (ep_pid1_init), runs the reviewer agent exactly as the
 *    single reviewer runs (agent.h: its own process group, the same
 *    timeouts, idle watchdog, output caps and group cleanup), and writes
 *    its result to a pipe as one JSON document, then exits. Keeping each
 *    agent under its own helper means the agent supervisor's duties (reap
 *    "every child of ours", SIGKILL the leftovers of a group) stay as they
 *    are for one agent and never touch a sibling role's agent.
 *    The entrypoint meanwhile reads the pipes, reaps, and forwards every
 *    stop signal it receives (SIGTERM, SIGINT, ...) to the helpers, which
 *    forward it to their agents' groups as the single reviewer does.
 *    It also supervises them: a helper is the agent's parent
 *    and an agent of the same uid can signal it, so the entrypoint itself
 *    enforces each role's deadline (ep_panel_deadline), and a helper that
 *    dies (SIGKILL), stops (SIGSTOP) or passes its deadline is SIGKILLed
 *    and its role is failed with the reason (ep_panel_end); whatever its
 *    tree leaves (its agent and their leftovers, re-parented to us as the
 *    helper dies) is killed at once, each tick: every child of ours that
 *    is not a live helper is such a leftover. When the fan-out returns,
 *    no process of any role is left.
 *
 * 2. Decisions on cycles (pure functions on struct fg_cycle): which roles
 *    run again, the cycle's verdict, feedback and findings from its
 *    reviews, whether its reviewer failed, and whether the loop is blocked.
 *
 * 3. A panel's cycle (stage.h): ep_panel_system_prompts() once when review
 *    starts, then ep_panel_review() per cycle: the roles that run again
 *    (2.) each review in a helper (1.: the reviewer's answer is judged
 *    there, judge.h, and sent back as the role's review JSON); the roles
 *    that stand are copied from the previous cycle; the reviews are merged
 *    into the stage's output, which the loop stamps.
 *
 * Protocol of ep_panel_fork: the caller's pid1 is initialised; job runs in
 * the helper (never returns there: the helper _exit()s with job's value
 * after it wrote its output to out_fd); out[i] receives what helper i
 * wrote (bounded by EP_PANEL_OUT_MAX; more is dropped and reported as
 * truncated[i]).
 */
#ifndef EP_PANEL_H
#define EP_PANEL_H

#include <stdbool.h>
#include <stddef.h>

#include "pid1.h"
#include "stage.h"
#include "forge/buf.h"
#include "forge/cycle.h"
#include "forge/reviewmd.h"

#define EP_PANEL_OUT_MAX (16u * 1024 * 1024)

/* Runs in helper i with its own pid1 (initialised), writes its result to
 * out_fd; the return value is the helper's exit status. */
typedef int (*ep_panel_job)(void *ctx, size_t i, struct ep_pid1 *p, int out_fd);

/* How a helper ended, when not by itself with status 0 and a result. */
struct ep_panel_end {
	bool failed;          /* killed, stopped, past its deadline, or exit status != 0 */
	char why[256];        /* "its helper process was stopped by signal 19 (Stopped (signal))" */
};

/* Per agent run of a role, on top of its timeout and twice its grace: the
 * time the agent supervisor may take to close the pipes of leftovers. */
#define EP_PANEL_RUN_SLACK_S 5.0
/* How long the last sweep after the helpers may go on killing leftovers. */
#define EP_PANEL_CLEANUP_S 5.0

/*
 * Forks n helpers (n <= FG_REVIEWERS_MAX) and waits until every one has
 * closed its pipe and been reaped, deadline_s at most (then it is killed).
 * out[0..n-1] must be initialised buffers; each receives what its helper
 * wrote (a helper that could not be forked writes nothing); end[0..n-1]
 * says how each ended (filled here). Returns 0, or 1 when a stop signal
 * arrived meanwhile (p's term_sig; it was forwarded to the helpers, which
 * were waited for). No child of ours is left when it returns (bar one
 * that outlived EP_PANEL_CLEANUP_S of SIGKILLs).
 */
int ep_panel_fork(struct ep_pid1 *p, size_t n, ep_panel_job job, void *ctx, double deadline_s,
		  struct fg_buf *out, struct ep_panel_end *end);

/* A role's deadline in seconds: per agent run it may make (the answer, a
 * re-ask, an evidence re-ask) FORGE_AGENT_TIMEOUT + 2 x
 * FORGE_AGENT_KILL_GRACE + EP_PANEL_RUN_SLACK_S. */
double ep_panel_deadline(const struct ep_stage_in *in);

/* True when role (index in the panel) runs in a cycle after prev (NULL: the
 * first cycle, every role runs): rereview all, or its review in prev was
 * rejected or failed, or prev has no review of it. */
bool ep_panel_runs(const struct fg_cycle *prev, const char *role, enum fg_rereview rr);

/* prev's review of role, or NULL. Borrowed. */
const struct fg_review *ep_panel_review_of(const struct fg_cycle *c, const char *role);

/*
 * Sets c's top-level judgement c->j (reset first): verdict (rejected when
 * any review is rejected), feedback (the rejecting roles' feedback, each
 * under "[role]") and findings (every review's findings, role set, in
 * panel order) from c->reviews.
 */
void ep_panel_merge(struct fg_cycle *c);

/* True when c is rejected, no role failed, every rejecting role gave
 * structured findings, and every finding that is not advice (NOTE,
 * NITPICK) is a QUESTION, at least one: only a person can move on. Also
 * for one reviewer (c without reviews: its own findings). */
bool ep_panel_blocked(const struct fg_cycle *c);

/* True when c's reviewer failed: any review of a panel's cycle, the single
 * reviewer's reviewer_failed otherwise. Whatever asks it of a whole cycle
 * asks here. */
bool ep_panel_any_failed(const struct fg_cycle *c);

/* Each role's system prompt (protocol, review.md body, role file) into
 * role_system[0..cfg->nreviewers) (owned by the caller); its file is
 * written with each of the role's runs, in the run's own prompt directory
 * (call.h). */
void ep_panel_system_prompts(const struct fg_review_config *cfg, char **role_system);

/* Cycle in->k of a panel into out (initialised; not stamped: out->elapsed
 * is the time it took). 0, or EP_STOP_SIGNAL (out->c then empty; the
 * helpers were stopped and waited for). */
int ep_panel_review(const struct ep_stage_in *in, struct ep_stage_out *out);

#endif
