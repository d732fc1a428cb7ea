/*
 * cmd_agent_output.c - `forge-entrypoint agent-output --format FMT [FILE|-]`:
 * what an output adapter makes of a saved agent output (see inspect.h).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inspect.h"
#include "output.h"

enum { OPT_HELP = 1, OPT_FORMAT };

static const struct fg_opt OPTS[] = {
	{ OPT_FORMAT, "format", 'f', "FMT", NULL, "output format: text, claude, codex or gemini (required)" },
	{ OPT_HELP, "help", 'h', NULL, NULL, "show this help" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

static const char USAGE[] = "forge-entrypoint agent-output --format FMT [FILE|-]";
static const char ABOUT[] =
	"Reads an agent's saved standard output (a file, or standard input) and prints what\n"
	"the FMT adapter makes of it, as FORGE_WORKER_OUTPUT / FORGE_REVIEWER_OUTPUT=FMT would:\n"
	"{\"ok\", \"error\", \"text\", \"usage\": {\"input_tokens\", \"output_tokens\",\n"
	"\"cached_input_tokens\", \"cost_usd\", \"turns\", \"duration_ms\", \"reasoning_tokens\"},\n"
	"\"session_id\", \"denied_tools\": [NAME, ...]} (null where the CLI reports nothing).\n"
	"Exit 0 when the input could be read, whatever \"ok\" says; 2 on a usage error or an\n"
	"unreadable input.";

static void feed_output(void *ctx, const void *p, size_t n)
{
	ep_output_feed(ctx, p, n);
}

static int parse_args(int argc, char **argv, const char **fmt, const char **file)
{
	struct fg_opts_iter it;

	fg_opts_init(&it, OPTS, argc, argv, 1);
	while (fg_opts_each(&it)) {
		if (it.id == OPT_HELP) {
			ep_help(USAGE, ABOUT, OPTS);
			return -1;
		}
		if (it.id == OPT_FORMAT)
			*fmt = it.value;
		else if (*file)
			return ep_cmd_usage("agent-output", "unexpected argument '%s'", it.value);
		else
			*file = it.value;
	}
	if (fg_opts_failed(&it))
		return ep_cmd_usage("agent-output", "%s", it.err);
	if (!*fmt)
		return ep_cmd_usage("agent-output", "--format is required (text, claude, codex or gemini)");
	return 0;
}

int ep_cmd_agent_output(int argc, char **argv)
{
	const char *fmt = NULL, *file = NULL;
	enum ep_output_format f;
	struct ep_output o;
	cJSON *j;
	char *s;
	int rc = parse_args(argc, argv, &fmt, &file);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (ep_output_format_parse(fmt, &f) < 0)
		return ep_cmd_usage("agent-output", "unknown format '%s' (text, claude, codex or gemini)", fmt);
	ep_output_init(&o, f);
	rc = ep_read_input(file, feed_output, &o);
	if (rc < 0) {
		ep_log(FG_MSG_INFO, "agent-output: cannot read '%s': %s", file ? file : "-", strerror(-rc));
		ep_output_release(&o);
		return FG_EXIT_USAGE;
	}
	ep_output_finish(&o);
	ep_output_say_refused_cost(&o, "agent-output");
	j = ep_output_to_cjson(&o);
	s = cJSON_PrintUnformatted(j);
	if (!s)
		abort();
	printf("%s\n", s);
	fflush(stdout);
	free(s);
	cJSON_Delete(j);
	ep_output_release(&o);
	return 0;
}
