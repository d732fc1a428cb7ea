/*
 * app.c - subcommand dispatch, --help and --version.
 */
#include "app.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "run.h"
#include "forge/buf.h"
#include "forge/opts.h"
#include "forge/util.h"

#define RN_MAX_HELP (64 * 1024)

static void print_help(void)
{
	struct fg_buf b;

	fg_buf_init(&b, RN_MAX_HELP);
	fg_buf_adds(&b,
		"usage: forge-runner run --workspace DIR --step NAME [options]\n"
		"       forge-runner watch DIR... [options]\n"
		"       forge-runner sweep DIR [--run-id ID]\n"
		"       forge-runner report RESULT.json... [options]\n"
		"       forge-runner --help | --version\n"
		"\n"
		"Launches one workflow step's sandbox (local process, docker or podman),\n"
		"reports every review cycle it writes to .forge/{step}/, and writes a result.\n"
		"\nrun options:\n");
	fg_opts_help(rn_run_options, &b);
	fg_buf_adds(&b, rn_run_needs);
	fg_buf_adds(&b, "\nwatch options:\n");
	fg_opts_help(rn_watch_options, &b);
	fg_buf_adds(&b, "\nsweep options:\n");
	fg_opts_help(rn_sweep_options, &b);
	fg_buf_adds(&b, "\nreport options:\n");
	fg_opts_help(rn_report_options, &b);
	fg_buf_adds(&b,
		"\nContainers get the FORGE_* and AUTO_REVIEW_* environment, plus --env NAME.\n"
		"\nExit codes (run): the entrypoint's code; " FG_XSTR(FG_EXIT_TIMEOUT) " timeout; "
		FG_XSTR(FG_EXIT_RUNTIME) " runner failure;\n"
		FG_XSTR(FG_EXIT_SIGNAL_BASE) "+N ended by signal N; " FG_XSTR(FG_EXIT_USAGE)
		" usage or configuration error.\n");
	fputs(fg_buf_str(&b), stdout);
	fg_buf_release(&b);
}

int rn_main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd)
		return rn_usage("missing subcommand (run, watch, sweep or report)");
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		print_help();
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		printf("forge-runner %s\n", FORGE_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "run"))
		return rn_cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "watch"))
		return rn_cmd_watch(argc - 1, argv + 1);
	if (!strcmp(cmd, "sweep"))
		return rn_cmd_sweep(argc - 1, argv + 1);
	if (!strcmp(cmd, "report"))
		return rn_cmd_report(argc - 1, argv + 1);
	{
		static const char *const names[] = { "run", "watch", "sweep", "report", "help" };
		const char *near = fg_suggest(cmd, names, ARRAY_SIZE(names));

		if (near)
			return rn_usage("unknown subcommand '%s'; did you mean '%s'?", cmd, near);
	}
	return rn_usage("unknown subcommand '%s' (run, watch, sweep or report)", cmd);
}
