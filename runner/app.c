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
		"       forge-runner reap [options]   (kubernetes: what dead runners left)\n"
		"       forge-runner --help | --version\n"
		"\n"
		"Launches one workflow step's sandbox (local process, docker, podman or a\n"
		"Kubernetes Job), reports every review cycle it writes to .forge/{step}/,\n"
		"and writes a result.\n"
		"\nrun options:\n");
	fg_opts_help(rn_run_options(), &b);
	fg_buf_adds(&b, rn_run_needs);
	fg_buf_adds(&b, "\nwatch options:\n");
	fg_opts_help(rn_watch_options, &b);
	fg_buf_adds(&b, "\nsweep options:\n");
	fg_opts_help(rn_sweep_options, &b);
	fg_buf_adds(&b, "\nreport options:\n");
	fg_opts_help(rn_report_options, &b);
	fg_buf_adds(&b, "\nreap options:\n");
	fg_opts_help(rn_reap_options, &b);
	fg_buf_adds(&b,
		"\nContainers get the FORGE_* and AUTO_REVIEW_* environment, plus --env NAME.\n"
		"\nExit codes (run): the entrypoint's code; " FG_XSTR(FG_EXIT_TIMEOUT) " timeout; "
		FG_XSTR(FG_EXIT_RUNTIME) " runner failure;\n"
		FG_XSTR(FG_EXIT_SIGNAL_BASE) "+N ended by signal N; " FG_XSTR(FG_EXIT_USAGE)
		" usage or configuration error.\n");
	fputs(fg_buf_str(&b), stdout);
	fg_buf_release(&b);
}

static int cmd_help(int argc, char **argv)
{
	print_help();
	return 0;
}

static int cmd_version(int argc, char **argv)
{
	printf("forge-runner %s\n", FORGE_VERSION);
	return 0;
}

/* The command table (as the entrypoint's): each gets argv from its name on. */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "run", rn_cmd_run }, { "watch", rn_cmd_watch }, { "sweep", rn_cmd_sweep },
	{ "report", rn_cmd_report }, { "reap", rn_cmd_reap }, { RN_KUBE_JOB_CMD, rn_cmd_kube_job },
	{ "--help", cmd_help }, { "-h", cmd_help },
	{ "help", cmd_help }, { "--version", cmd_version },
};

int rn_main(int argc, char **argv)
{
	static const char *const names[] = { "run", "watch", "sweep", "report", "reap", "help" };
	const char *cmd = argc > 1 ? argv[1] : NULL, *near;

	if (!cmd)
		return rn_usage("missing subcommand (run, watch, sweep, report or reap)");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (!strcmp(cmd, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	}
	near = fg_suggest(cmd, names, ARRAY_SIZE(names));
	if (near)
		return rn_usage("unknown subcommand '%s'; did you mean '%s'?", cmd, near);
	return rn_usage("unknown subcommand '%s' (run, watch, sweep, report or reap)", cmd);
}
