/*
 * task.h - what one `forge-entrypoint run` is about: the task, the names,
 * the directories, the agent commands and the timeouts.
 *
 * Sources, highest first: command-line option, environment twin, task file
 * (peer-compatible JSON {"task_key", "summary", "description", "skill_name",
 * "step_name", "previous_task_keys"}; unknown fields ignored), default.
 * An empty environment variable counts as unset.
 *
 * Every problem found here is a configuration error (exit 2, nothing run):
 * an unreadable or invalid task file, an invalid name, a missing step, a
 * workspace that is not a directory, an unset or unsplittable
 * FORGE_WORKER_CMD (unless FORGE_WORKER_AGENT gives one), an unsplittable
 * FORGE_REVIEWER_CMD, an unknown FORGE_*_AGENT or FORGE_*_OUTPUT, a
 * malformed number or boolean.
 */
#ifndef EP_TASK_H
#define EP_TASK_H

#include <stdbool.h>
#include <stddef.h>

#include "forge/buf.h"
#include "output.h"
#include "forge/tracectx.h"

#define EP_TASK_FILE_MAX (1024 * 1024)
#define EP_DEFAULT_TIMEOUT 3600.0
#define EP_DEFAULT_IDLE_TIMEOUT 900.0
#define EP_DEFAULT_KILL_GRACE 5.0
#define EP_DEFAULT_HEARTBEAT 30.0

/* Values given on the command line; NULL when not given. Borrowed. */
struct ep_run_args {
	const char *task_file;
	const char *workspace;
	const char *skills_dir;
	const char *step;
	const char *skill;
	const char *task_key;
	bool clear_stale;           /* --clear-stale given */
};

struct ep_task {
	char *workspace;            /* owned; FORGE_WORKSPACE, default /workspace */
	char *skills_dir;           /* owned; FORGE_SKILLS_DIR, default /skills */
	char *step;                 /* owned, valid step name */
	char *skill;                /* owned, valid skill name */
	bool skill_from_step;       /* no skill given: derived from step ('_' -> '-') */
	char *task_key;             /* owned, "" when none */
	char *summary;              /* owned, "" when none */
	char *description;          /* owned, "" when none */
	struct fg_strvec previous;  /* previous_task_keys */
	char *worker_cmd;           /* owned, never NULL after a successful load */
	char *reviewer_cmd;         /* owned or NULL when unset */
	/* preset.h: FORGE_*_CMD, FORGE_*_OUTPUT, FORGE_*_AGENT */
	enum ep_output_format worker_output, reviewer_output;
	const char *worker_preset, *reviewer_preset;   /* static or NULL */
	bool worker_cmd_from_preset, reviewer_cmd_from_preset;  /* no FORGE_*_CMD */
	bool reviewer_system_in_prompt;                 /* preset CLI without a system prompt */
	bool reask;                 /* AUTO_REVIEW_REASK (default on) */
	bool advice_approves;       /* AUTO_REVIEW_ADVICE_APPROVES (default on): advice-only findings approve */
	bool changeset;             /* FORGE_CHANGESET (default on): the change set, no-change, reviewer edits */
	bool git_exclude;           /* FORGE_GIT_EXCLUDE (default on): the cycle dir into .git/info/exclude */
	char *run_id;               /* owned, "" when none */
	char *cycle_dir;            /* owned: FORGE_CYCLE_DIR expanded, workspace-relative (fg_cycle_dir()) */
	double timeout_s;           /* FORGE_AGENT_TIMEOUT */
	double idle_timeout_s;      /* FORGE_AGENT_IDLE_TIMEOUT, 0 = off */
	double kill_grace_s;        /* FORGE_AGENT_KILL_GRACE */
	double heartbeat_s;         /* FORGE_AGENT_HEARTBEAT, 0 = never */
	/* FORGE_DEADLINE: when the run's time runs out, UTC seconds since the
	 * epoch (forge-runner's --timeout); 0 = none (pid1.h) */
	double deadline_s;
	bool fail_on_exhaustion;    /* AUTO_REVIEW_FAIL_ON_EXHAUSTION */
	bool clear_stale;           /* --clear-stale, or FORGE_CLEAR_STALE=1 */
	/* FORGE_TRACEPARENT (tracectx.h): the run's trace; each agent's
	 * TRACEPARENT names a span of its own in it (call.c) */
	bool traced;
	struct fg_trace_ctx trace;
};

void ep_task_init(struct ep_task *t);
void ep_task_release(struct ep_task *t);

/*
 * Fills t from a, the environment (getenv) and the task file. Returns 0, or
 * -EINVAL with err set to a one-line message (house style) on any
 * configuration error. t must be initialised; on failure it may be partly
 * filled and must still be released.
 */
int ep_task_load(struct ep_task *t, const struct ep_run_args *a, char *err, size_t errlen);

/*
 * Parses task-file JSON (len bytes) into t's task fields (task_key, summary,
 * description, skill, step, previous): only fields still NULL/unset in t are
 * filled. Returns 0 or -EINVAL with err set.
 */
int ep_task_parse_json(struct ep_task *t, const char *data, size_t len, char *err, size_t errlen);

/* Strict seconds value of an environment variable: unset -> def. 0 or -EINVAL
 * with err naming the variable. */
int ep_env_seconds(const char *name, double def, double min, double max, double *out,
		   char *err, size_t errlen);

#endif
