/*
 * call.h - calling an agent for the review loop's stages (stage.h): its
 * command line (the placeholders of FORGE_WORKER_CMD / FORGE_REVIEWER_CMD),
 * its environment (FORGE_ROLE, FORGE_CYCLE, FORGE_PROMPT_FILE, ...), its
 * prompt files, and the usage and denied tools it reported, said (the
 * caller adds them to the step's totals: they are in c->out).
 *
 * Two directories per run, both beside each other in $TMPDIR (or /tmp) and
 * both hidden from every agent by its box (sandbox.h): the private one
 * ("forge-ep.XXXXXX", mode 0700: the change set's git, nothing an agent
 * reads) and the base of the prompt directories ("forge-in.XXXXXX", mode
 * 0711). Each agent start gets a prompt directory of its own below the
 * latter, made fresh right before it starts (after every process of the
 * agent before it is gone): its prompt, its system prompt, its feedback,
 * mode 0444 in a directory of mode 0555, which its box lets it read and no
 * agent write; it is removed when the agent's run ended. A file that
 * cannot be written there is an error: the agent does not start.
 *
 * Protocol: ep_call_tmpdir_make() once -> ep_call_run() per agent ->
 * ep_call_failed() on its result -> ep_output_release() of c->out ->
 * ep_call_tmpdir_remove() at the end. Everything runs on the loop's one
 * thread (or in a panel role's helper, with the helper's pid1 in the
 * stage input).
 */
#ifndef EP_CALL_H
#define EP_CALL_H

#include <stdbool.h>

#include "agent.h"
#include "output.h"
#include "stage.h"

/* Longest system prompt given as one argument ({system_prompt}); Linux
 * refuses a single argument over 128 KiB (MAX_ARG_STRLEN). */
#define EP_SYSTEM_ARG_MAX (96u * 1024)

/* Raw reviewer output kept per cycle in review_cycle_N.reviewer.log. */
#define EP_REVIEWER_LOG_MAX (32ull * 1024 * 1024)

/* One agent invocation: what differs between worker and reviewer runs. */
struct ep_call {
	const char *role;          /* "worker" or "reviewer" */
	int cycle;                 /* FORGE_CYCLE: 0 first worker run */
	const char *prompt;
	const char *prompt_name;   /* file in tmpdir */
	bool system;               /* reviewer: FORGE_SYSTEM_PROMPT_FILE */
	const char *system_text;   /* reviewer: its system prompt's text, or NULL (no file) */
	bool feedback;             /* worker retry: FORGE_FEEDBACK_FILE */
	struct ep_output *out;     /* initialised here, finished after the run */
	int log_fd;
	const char *panel_role;    /* a panel's reviewer: its role (the audit: FG_AUDIT_ROLE); NULL otherwise */
	const char *feedback_text; /* worker retry: the text of FORGE_FEEDBACK_FILE */
	/* Filled by ep_call_run() when not NULL: the run's times, usage, span
	 * id (a traced run) and provider; its failed flag is the caller's. */
	struct fg_agent_run *run;
};

/* Creates *tmpdir ("forge-ep.XXXXXX", mode 0700) and *indir
 * ("forge-in.XXXXXX", mode 0711) in $TMPDIR or /tmp, both owned by the
 * caller. 0, or -1 after saying why. */
int ep_call_tmpdir_make(char **tmpdir, char **indir);
/* Removes *indir and *tmpdir (empty by then), freed and set to NULL. */
void ep_call_tmpdir_remove(char **tmpdir, char **indir);
/* Writes name in the directory dfd (borrowed): whatever stood there is
 * removed first (never followed), then the file is created
 * O_EXCL|O_NOFOLLOW and made mode 0444. Neither atomic nor fsync'ed,
 * unlike the cycle files: only the next agent reads it, and it dies with
 * its run (measured: four of the six fsyncs a cycle cost). 0 or a
 * negative errno. */
int ep_call_tmp_write(int dfd, const char *name, const void *data, size_t len);

/* The system prompt file name of a reviewer (panel_role NULL: the single
 * one's, "system-prompt.md"; else "system-prompt.ROLE.md"). Owned. */
char *ep_call_system_name(const char *panel_role);

/*
 * Runs one agent for a stage (in: the task, directories, environments,
 * signal state): writes its prompt directory, builds argv and environment
 * (in a traced run, TRACEPARENT names a new span: c->run->span_id),
 * initialises and finishes c->out (its usage and denied tools: the
 * caller's to count), says the usage, fills c->run. Returns 0 (r filled,
 * whatever the agent did) or EP_STOP_SIGNAL (a stop signal came before or
 * during the run; r says so).
 */
int ep_call_run(const struct ep_stage_in *in, const struct ep_call *c, struct ep_agent_result *r);

/*
 * Whether a run failed, by its exit and by what its output says: a run the
 * output marks as failed is a failed run whatever the exit status. When it
 * failed, r->what is rewritten to say why (the output's reason included)
 * and true is returned.
 */
bool ep_call_failed(struct ep_agent_result *r, const struct ep_output *o);

#endif
