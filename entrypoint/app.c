/*
 * app.c - subcommand dispatch and the `run` options (see app.h).
 */
#include "pid1.h"
#include "app.h"
#include "lifeline.h"

#include <stdio.h>
#include <string.h>

#include "forge/buf.h"
#include "forge/cmd.h"
#include "forge/opts.h"
#include "forge/util.h"

#include "cli.h"
#include "frames.h"
#include "inspect.h"
#include "loop.h"
#include "task.h"

enum {
	OPT_HELP = 1, OPT_VERSION, OPT_TASK_FILE, OPT_WORKSPACE, OPT_SKILLS_DIR, OPT_STEP,
	OPT_SKILL, OPT_TASK_KEY, OPT_CLEAR_STALE
};

static const struct fg_opt RUN_OPTS[] = {
	{ OPT_TASK_FILE, "task-file", 0, "FILE", "FORGE_TASK_FILE",
	  "task JSON {task_key, summary, description, skill_name, step_name, previous_task_keys}" },
	{ OPT_WORKSPACE, "workspace", 0, "DIR", "FORGE_WORKSPACE", "the agents' working directory (default /workspace)" },
	{ OPT_SKILLS_DIR, "skills-dir", 0, "DIR", "FORGE_SKILLS_DIR", "skills root holding review.md files (default /skills)" },
	{ OPT_STEP, "step", 0, "NAME", "FORGE_STEP_NAME", "workflow step: cycle files go to WORKSPACE/.forge/NAME/ (unless FORGE_CYCLE_DIR)" },
	{ OPT_SKILL, "skill", 0, "NAME", "FORGE_SKILL_NAME", "skill under review (default: the step, '_' -> '-')" },
	{ OPT_TASK_KEY, "task-key", 0, "KEY", "FORGE_TASK_KEY", "ticket key; PROJ-1 selects skills/proj/ overrides" },
	{ OPT_CLEAR_STALE, "clear-stale", 0, NULL, "FORGE_CLEAR_STALE",
	  "first remove an earlier run's cycle files from the step directory (the runner passes it when it cannot see the workspace)" },
	{ OPT_HELP, "help", 'h', NULL, NULL, "show this help" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

static const struct fg_opt TOP_OPTS[] = {
	{ OPT_HELP, "help", 'h', NULL, NULL, "show this help" },
	{ OPT_VERSION, "version", 'V', NULL, NULL, "print the version" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

static const char RUN_ABOUT[] =
	"Runs the worker agent on the task, then, when the skill has a review.md, the review\n"
	"loop: reviewer, verdict, review_cycle_N.json in the cycle directory (FORGE_CYCLE_DIR,\n"
	"default WORKSPACE/.forge/STEP/), retry with the feedback, until approved or out of\n"
	"retries.\n"
	"\n"
	"environment:\n"
	"  FORGE_WORKER_CMD, FORGE_REVIEWER_CMD  agent commands (quoted words, no shell);\n"
	"      placeholders {prompt_file} {system_prompt_file} {workspace} {cycle} {step}\n"
	"      {skill} {task_key} {system_prompt} {role} (the reviewer's panel role);\n"
	"      FORGE_WORKER_CMD is required (or a preset), FORGE_REVIEWER_CMD when a\n"
	"      review.md applies\n"
	"  FORGE_WORKER_AGENT, FORGE_REVIEWER_AGENT  presets claude, codex or gemini: the CLI's\n"
	"      headless command line and output format (an explicit _CMD or _OUTPUT wins)\n"
	"  FORGE_WORKER_ARGS, FORGE_REVIEWER_ARGS  words appended to the role's command\n"
	"  FORGE_WORKER_OUTPUT, FORGE_REVIEWER_OUTPUT  text (default), claude, codex or gemini:\n"
	"      how the agent's stdout is read (answer, failure, usage)\n"
	"  FORGE_AGENT_TIMEOUT (3600)        seconds per agent run\n"
	"  FORGE_AGENT_IDLE_TIMEOUT (900)    seconds without output before an agent counts\n"
	"                                    as hung (0: off)\n"
	"  FORGE_AGENT_KILL_GRACE (5)        seconds between SIGTERM and SIGKILL\n"
	"  FORGE_AGENT_HEARTBEAT (30)        seconds between 'agent_running' lines while an\n"
	"                                    agent runs (0: never)\n"
	"  FORGE_DEADLINE                    UTC epoch seconds the run's time runs out (the\n"
	"                                    runner's --timeout): stopped shortly before, exit\n"
	"                                    " FG_XSTR(FG_EXIT_TIMEOUT) "\n"
	"  FORGE_RUN_ID                      copied into every cycle file\n"
	"  FORGE_AGENT_ENV                   names (',' or spaces) the worker and reviewers get\n"
	"                                    beside their allow-listed environment (never checks)\n"
	"  FORGE_SEAL_KEY_STDIN              1: the first stdin line is the run's seal key\n"
	"                                    (forge-runner sets it; unset: records unsealed)\n"
	"  FORGE_LIFELINE                    stdin: end of stdin stops the run (the runner died)\n"
	"  FORGE_CYCLE_DIR (.forge/{step})   the cycle files' directory in the workspace;\n"
	"                                    also {task_key}, {skill}\n"
	"  AUTO_REVIEW_MAX_RETRIES           default max_retries (0 disables review)\n"
	"  AUTO_REVIEW_STOP_WHEN_STALLED     stop when two rejections in a row are the same\n"
	"  AUTO_REVIEW_FAIL_ON_EXHAUSTION    1: exhausted, stalled, blocked or over_budget exits 3\n"
	"  AUTO_REVIEW_MAX_COST_USD          default step budget in US dollars (review.md\n"
	"                                    max_cost_usd wins); past it: over_budget\n"
	"  AUTO_REVIEW_REASK (1)             0: no second ask for an answer without a verdict\n"
	"  AUTO_REVIEW_REQUIRED (0)          1: a skill without a review.md is exit " FG_XSTR(FG_EXIT_USAGE) "\n"
	"                                    before any agent runs\n"
	"  FORGE_REQUIRE_ISOLATION (0)       1: agents without a kernel sandbox (Landlock) is\n"
	"                                    exit " FG_XSTR(FG_EXIT_USAGE) " before any agent runs\n"
	"\n"
	"exit: " FG_XSTR(FG_EXIT_OK) " success (approved, no review, disabled, or\n"
	"exhausted/stalled/blocked/over_budget), " FG_XSTR(FG_EXIT_FAILED) " the task failed (an agent's exit "
	"status or its output said so),\n" FG_XSTR(FG_EXIT_USAGE)
	" configuration or usage error (nothing run), " FG_XSTR(FG_EXIT_EXHAUSTED)
	" exhausted, stalled, blocked or over_budget with\nAUTO_REVIEW_FAIL_ON_EXHAUSTION=1, "
	FG_XSTR(FG_EXIT_AUDIT_REJECTED) " audit_rejected (review.md audit: with blocks: true disagreed),\n"
	FG_XSTR(FG_EXIT_TIMEOUT) " the run's time ran out (FORGE_DEADLINE), "
	FG_XSTR(FG_EXIT_SIGNAL_BASE) "+N ended by signal N.";

/* run's synopsis, the first usage line of both --help texts. */
#define RUN_SYNOPSIS                                                       \
	"[run] [--task-file F] [--workspace DIR] [--skills-dir DIR]\n"     \
	"                        [--step NAME] [--skill NAME] [--task-key KEY] [--clear-stale]"
static const char RUN_USAGE[] = "forge-entrypoint " RUN_SYNOPSIS;

int ep_cmd_run(int argc, char **argv)
{
	struct ep_run_args a = { 0 };
	struct fg_opts_iter it;
	struct ep_task t;
	char err[512];
	int rc;

	fg_opts_init(&it, RUN_OPTS, argc, argv, 1);
	while (fg_opts_each(&it)) {
		const char **slot[] = { [OPT_TASK_FILE] = &a.task_file, [OPT_WORKSPACE] = &a.workspace,
					[OPT_SKILLS_DIR] = &a.skills_dir, [OPT_STEP] = &a.step,
					[OPT_SKILL] = &a.skill, [OPT_TASK_KEY] = &a.task_key };

		if (it.id == OPT_HELP)
			return ep_help(RUN_USAGE, RUN_ABOUT, RUN_OPTS);
		if (it.id == FG_OPT_POSITIONAL)
			return ep_usage("run: unexpected argument '%s'", it.value);
		if (it.id == OPT_CLEAR_STALE) {
			a.clear_stale = true;
			continue;
		}
		*slot[it.id] = it.value;
	}
	if (fg_opts_failed(&it))
		return ep_usage("%s", it.err);
	/* From here on a stop signal must reach the loop (pending), not be
	 * dropped while the task and configuration load. */
	ep_pid1_block();
	/* The seal key, before the task is loaded and any agent exists. */
	rc = ep_lifeline_setup();
	if (rc)
		return rc;
	/* From this frame on the runner reads no line of ours (agents may
	 * write them): events and reasons come as frames. */
	ep_frame_event("started", NULL);
	ep_task_init(&t);
	rc = ep_task_load(&t, &a, err, sizeof(err));
	if (rc < 0) {
		/* "error: ": the runner logs such lines at ERROR (output.h). */
		ep_log(FG_MSG_ERROR, "%s", err);
		ep_task_release(&t);
		return FG_EXIT_USAGE;
	}
	ep_frames_set_task(t.run_id, t.step);
	/* FORGE_DEADLINE: the loop stops itself shortly before it (pid1.h). */
	ep_pid1_set_deadline(t.deadline_s, t.kill_grace_s);
	rc = ep_loop_run(&t);
	ep_frames_set_task(NULL, NULL);
	ep_task_release(&t);
	return rc;
}

/* The command table (forge/cmd.h, as the runner's): each command gets argv
 * from its name on. */
static const struct fg_cmd CMDS[] = {
	{ "run", ep_cmd_run, RUN_SYNOPSIS, "run the worker agent and the review loop (the default)", NULL },
	{ "resolve", ep_cmd_resolve, "resolve --skills-dir DIR --skill NAME [--ticket KEY]",
	  "print the review.md that applies to a skill and ticket", NULL },
	{ "config", ep_cmd_config, "config [FILE]", "print the configuration a review.md resolves to", NULL },
	{ "verdict", ep_cmd_verdict, "verdict [FILE|-]", "read a reviewer's output as the loop does", NULL },
	{ "lint", ep_cmd_lint, "lint PATH...", "check review.md files and skills directories", NULL },
	{ "agent-output", ep_cmd_agent_output, "agent-output --format FMT [FILE|-]",
	  "read an agent's saved output as its format's adapter does", NULL },
};

/* The usage lines and command list, the global options, then run's own
 * help (run is the default command). Each part once: no second "usage:"
 * line for the global options. */
static int top_help(void)
{
	struct fg_buf b;

	fg_buf_init(&b, 16 * 1024);
	fg_cmd_usage(&b, "forge-entrypoint", CMDS, ARRAY_SIZE(CMDS));
	fg_buf_adds(&b, "\nThe container side of forge-review: runs the worker agent and the automatic review\n"
		    "loop (run, the default), and inspects review.md files and reviewer outputs.\n"
		    "'forge-entrypoint COMMAND --help' describes each command.\n\n");
	fg_cmd_list(&b, CMDS, ARRAY_SIZE(CMDS));
	fg_buf_adds(&b, "\nglobal options:\n");
	fg_opts_help(TOP_OPTS, &b);
	fputs(fg_buf_str(&b), stdout);
	putchar('\n');
	fg_buf_release(&b);
	return ep_help("forge-entrypoint run [options]", RUN_ABOUT, RUN_OPTS);
}

int ep_main(int argc, char **argv)
{
	const char *first = argc > 1 ? argv[1] : NULL, *near;
	const struct fg_cmd *c;
	struct fg_buf names;
	int rc;

	if (first && (!strcmp(first, "--help") || !strcmp(first, "-h")))
		return top_help();
	if (first && (!strcmp(first, "--version") || !strcmp(first, "-V"))) {
		printf("forge-entrypoint %s\n", FORGE_VERSION);
		return 0;
	}
	if (!first || first[0] == '-')
		return ep_cmd_run(argc, argv);   /* run is the default subcommand */
	c = fg_cmd_find(CMDS, ARRAY_SIZE(CMDS), first);
	if (c)
		return c->run(argc - 1, argv + 1);
	near = fg_cmd_suggest(CMDS, ARRAY_SIZE(CMDS), first);
	if (near)
		return ep_usage("unknown command '%s'; did you mean '%s'?", first, near);
	fg_buf_init(&names, 1024);
	fg_cmd_names(&names, CMDS, ARRAY_SIZE(CMDS));
	rc = ep_usage("unknown command '%s' (%s)", first, fg_buf_str(&names));
	fg_buf_release(&names);
	return rc;
}
