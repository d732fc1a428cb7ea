/*
 * app.c - subcommand dispatch, --help and --version.
 */
#include "app.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "kube.h"
#include "report.h"
#include "run.h"
#include "forge/buf.h"
#include "forge/cmd.h"
#include "forge/opts.h"
#include "forge/util.h"

#define RN_MAX_HELP (64 * 1024)

/* The option tables of the commands whose table is a constant. */
static const struct fg_opt *watch_options(void) { return rn_watch_options; }
static const struct fg_opt *sweep_options(void) { return rn_sweep_options; }
static const struct fg_opt *report_options(void) { return rn_report_options; }
static const struct fg_opt *reap_options(void) { return rn_reap_options; }

/* The command table (forge/cmd.h, as the entrypoint's): each command gets
 * argv from its name on; kubernetes-job is the runner's own child, never
 * listed. */
static const struct fg_cmd commands[] = {
	{ "run", rn_cmd_run, "run --workspace DIR --step NAME [options]",
	  "launch one step's sandbox and report every review cycle it writes", rn_run_options },
	{ "watch", rn_cmd_watch, "watch DIR... [options]",
	  "report the review cycles written to .forge/ directories as they come", watch_options },
	{ "sweep", rn_cmd_sweep, "sweep DIR [--run-id ID]",
	  "report the review cycles a directory holds, once", sweep_options },
	{ "report", rn_cmd_report, "report RESULT.json... [options]",
	  "merge result files into one report (json, markdown or html)", report_options },
	{ "reap", rn_cmd_reap, "reap [options]",
	  "delete what dead runners left on kubernetes", reap_options },
	{ RN_KUBE_JOB_CMD, rn_cmd_kube_job, NULL, NULL, NULL },
};

static void print_help(void)
{
	struct fg_buf b;

	fg_buf_init(&b, RN_MAX_HELP);
	fg_cmd_usage(&b, "forge-runner", commands, ARRAY_SIZE(commands));
	fg_buf_adds(&b,
		"\n"
		"Launches one workflow step's sandbox (local process, docker, podman or a\n"
		"Kubernetes Job), reports every review cycle it writes to .forge/{step}/,\n"
		"and writes a result. 'forge-runner COMMAND --help' describes each command.\n\n");
	fg_cmd_list(&b, commands, ARRAY_SIZE(commands));
	fg_cmd_options(&b, commands, ARRAY_SIZE(commands));
	fg_buf_adds(&b, rn_run_needs);
	fg_buf_adds(&b,
		"\nContainers get the FORGE_* and AUTO_REVIEW_* environment, plus --env NAME.\n"
		"\nExit codes (run): the entrypoint's code; " FG_XSTR(FG_EXIT_TIMEOUT) " timeout; "
		FG_XSTR(FG_EXIT_RUNTIME) " runner failure;\n"
		FG_XSTR(FG_EXIT_SIGNAL_BASE) "+N ended by signal N; " FG_XSTR(FG_EXIT_USAGE)
		" usage or configuration error.\n");
	fputs(fg_buf_str(&b), stdout);
	fg_buf_release(&b);
}

/* The usage error of a missing or unknown command, naming the commands. */
static int bad_command(const char *cmd)
{
	const char *near = cmd ? fg_cmd_suggest(commands, ARRAY_SIZE(commands), cmd) : NULL;
	struct fg_buf names;
	int r;

	fg_buf_init(&names, 1024);
	fg_cmd_names(&names, commands, ARRAY_SIZE(commands));
	if (!cmd)
		r = rn_usage("missing subcommand (%s)", fg_buf_str(&names));
	else if (near)
		r = rn_usage("unknown subcommand '%s'; did you mean '%s'?", cmd, near);
	else
		r = rn_usage("unknown subcommand '%s' (%s)", cmd, fg_buf_str(&names));
	fg_buf_release(&names);
	return r;
}

int rn_main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;
	const struct fg_cmd *c = fg_cmd_find(commands, ARRAY_SIZE(commands), cmd);

	if (c)
		return c->run(argc - 1, argv + 1);
	if (cmd && (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help"))) {
		print_help();
		return 0;
	}
	if (cmd && !strcmp(cmd, "--version")) {
		printf("forge-runner %s\n", FORGE_VERSION);
		return 0;
	}
	return bad_command(cmd);
}
