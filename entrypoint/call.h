/*
 * call.h - calling an agent for the review loop (loop.h): its command line
 * (the placeholders of FORGE_WORKER_CMD / FORGE_REVIEWER_CMD), its
 * environment (FORGE_ROLE, FORGE_CYCLE, FORGE_PROMPT_FILE, ...), its prompt
 * files in the loop's private temporary directory, and the usage it
 * reported, added to the step's totals.
 *
 * Protocol: ep_call_tmpdir_make() once -> ep_call_run() per agent ->
 * ep_call_failed() on its result -> ep_output_release() of c->out ->
 * ep_call_tmpdir_remove() at the end. Everything runs on the loop's one
 * thread (or in a panel role's helper, with the helper's pid1).
 */
#ifndef EP_CALL_H
#define EP_CALL_H

#include <stdbool.h>

#include "agent.h"
#include "loop.h"
#include "output.h"

/* One agent invocation: what differs between worker and reviewer runs. */
struct ep_call {
	const char *role;          /* "worker" or "reviewer" */
	int cycle;                 /* FORGE_CYCLE: 0 first worker run */
	const char *prompt;
	const char *prompt_name;   /* file in tmpdir */
	bool system;               /* reviewer: FORGE_SYSTEM_PROMPT_FILE */
	bool feedback;             /* worker retry: FORGE_FEEDBACK_FILE */
	struct ep_output *out;     /* initialised here, finished after the run */
	int log_fd;
	const char *panel_role;    /* a panel's reviewer: its role; NULL otherwise */
	/* Filled by ep_call_run() when not NULL: the run's times, usage, span
	 * id (a traced run) and provider; its failed flag is the caller's. */
	struct fg_agent_run *run;
};

/* Creates l->tmpdir ($TMPDIR or /tmp, "forge-ep.XXXXXX", mode 0700).
 * 0, or -1 after saying why. */
int ep_call_tmpdir_make(struct ep_loop *l);
/* Removes the prompt files (the panel roles' included) and l->tmpdir. */
void ep_call_tmpdir_remove(struct ep_loop *l);
/* Writes name in the run's private temporary directory (prompts, feedback,
 * system prompts): whatever stood there is removed first (never followed),
 * then the file is created O_EXCL|O_NOFOLLOW, mode 0600. Neither atomic
 * nor fsync'ed, unlike the cycle files: only the next agent reads it, and
 * it dies with the run (issue 22's bench: four of the six fsyncs a cycle
 * cost). 0 or a negative errno. */
int ep_call_tmp_write(const struct ep_loop *l, const char *name, const void *data, size_t len);

/* The system prompt file name of a reviewer (panel_role NULL: the single
 * one's, "system-prompt.md"; else "system-prompt.ROLE.md"). Owned. */
char *ep_call_system_name(const char *panel_role);
/* The reviewer's system prompt text: its panel role's, or the single one's
 * (panel_role NULL); NULL when there is none. Borrowed from l. */
const char *ep_call_system_text(const struct ep_loop *l, const char *panel_role);

/*
 * Runs one agent: writes its prompt file, builds argv and environment
 * (in a traced run, TRACEPARENT names a new span: c->run->span_id),
 * initialises and finishes c->out, adds the usage to l's totals (and says
 * it), fills c->run. Returns 0 (r filled, whatever the agent did) or EP_STOP_SIGNAL (a
 * stop signal came before or during the run; r says so).
 */
int ep_call_run(struct ep_loop *l, const struct ep_call *c, struct ep_agent_result *r);

/*
 * Whether a run failed, by its exit and by what its output says: a run the
 * output marks as failed is a failed run whatever the exit status. When it
 * failed, r->what is rewritten to say why (the output's reason included)
 * and true is returned.
 */
bool ep_call_failed(struct ep_agent_result *r, const struct ep_output *o);

#endif
