/*
 * test_layers.c - the layers of entrypoint/ (loop.h, stage.h): a file,
 * header or source, includes only headers of its own layer or of a layer
 * below, so calls go one way: the commands, then the loop, then its
 * evidence and audit, then the judge and the panel, then calling an
 * agent, then the stages' shared types, then the services every part uses.
 * Every file of entrypoint/ must be in the table: a new module is placed
 * in a layer when it is added.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"

TestSuite(layers, .timeout = 30);

/* Top first. A module is a file's name without ".c" / ".h"; "output_*"
 * files belong to output, "agentenv_git.c" to agentenv. cli is the
 * message writer (ep_log) every part logs with, so it is a service, not a
 * command. */
static const struct layer {
	const char *name;
	const char *const modules[24];
} LAYERS[] = {
	{ "commands", { "main", "app", "inspect", "cmd_agent_output" } },
	{ "loop", { "loop" } },
	{ "evidence", { "cycle_evidence", "audit", "outcome", "setup" } },
	{ "judge and panel", { "judge", "panel" } },
	{ "call", { "call" } },
	{ "stage", { "stage" } },
	{ "services", { "agent", "agentenv", "capture", "changeset", "checks", "cli", "frames", "lifeline",
			"manifest", "output", "pid1", "preflight", "preset", "prompt", "sandbox", "task",
			"tracker" } },
};

#define NLAYERS (sizeof(LAYERS) / sizeof(LAYERS[0]))

/* The layer of module name[0..n) (0: the top), or -1 when it is in none. */
static int layer_of(const char *name, size_t n)
{
	if (n > 7 && !strncmp(name, "output_", 7))
		n = 6;
	if (n == 12 && !strncmp(name, "agentenv_git", 12))
		n = 8;
	for (size_t i = 0; i < NLAYERS; i++)
		for (size_t j = 0; LAYERS[i].modules[j]; j++)
			if (strlen(LAYERS[i].modules[j]) == n && !strncmp(LAYERS[i].modules[j], name, n))
				return (int)i;
	return -1;
}

/*
 * The includes of text (a file of module self) that break the layers,
 * one a line into why ("self includes loop.h (layer loop, above call)"),
 * or "" when none does. Headers with a '/' (forge/..., system ones in
 * quotes) are not entrypoint's. Owned.
 */
static char *violations(const char *self, const char *text)
{
	int mine = layer_of(self, strlen(self));
	size_t cap = 4096, len = 0;
	char *why = calloc(1, cap);
	const char *p;

	cr_assert_not_null(why);
	if (mine < 0)
		len += (size_t)snprintf(why, cap, "%s is in no layer of the table\n", self);
	for (p = strstr(text, "#include \""); p && len < cap; p = strstr(p + 1, "#include \"")) {
		const char *name = p + strlen("#include \"");
		size_t n = strcspn(name, "\"\n");
		int at;

		if (memchr(name, '/', n) || n < 3 || strncmp(name + n - 2, ".h", 2))
			continue;
		at = layer_of(name, n - 2);
		if (at < 0)
			len += (size_t)snprintf(why + len, cap - len, "%s includes %.*s, in no layer\n", self,
						(int)n, name);
		else if (mine >= 0 && at < mine)
			len += (size_t)snprintf(why + len, cap - len, "%s includes %.*s (layer %s, above %s)\n",
						self, (int)n, name, LAYERS[at].name, LAYERS[mine].name);
	}
	return why;
}

Test(layers, the_checker_finds_an_include_of_a_layer_above)
{
	static const struct {
		const char *self, *text;
		bool bad;
	} cases[] = {
		{ "call", "#include \"call.h\"\n#include \"loop.h\"\n", true },
		{ "judge", "#include \"judge.h\"\n#include \"cycle_evidence.h\"\n", true },
		{ "stage", "#include \"panel.h\"\n", true },
		{ "output_claude", "#include \"call.h\"\n", true },
		{ "cli", "#include \"app.h\"\n", true },
		{ "panel", "#include \"nosuchmodule.h\"\n", true },
		{ "nosuchmodule", "#include \"cli.h\"\n", true },
		{ "panel", "#include \"judge.h\"\n#include \"call.h\"\n#include \"forge/cycle.h\"\n", false },
		{ "loop", "#include \"cycle_evidence.h\"\n#include <stdio.h>\n#include \"stage.h\"\n", false },
		{ "agentenv_git", "#include \"agentenv.h\"\n#include \"agent.h\"\n", false },
		{ "app", "#include \"loop.h\"\n", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *why = violations(cases[i].self, cases[i].text);

		cr_expect_eq(*why != '\0', cases[i].bad, "%s: %s -> '%s'", cases[i].self, cases[i].text, why);
		free(why);
	}
}

Test(layers, every_entrypoint_file_includes_only_its_layer_or_below)
{
	char *dir = fgt_fmt("%s/entrypoint", FG_SOURCE_DIR);
	char *names = fgt_listing(dir);
	size_t files = 0;

	for (char *line = names, *nl; *line; line = nl + 1) {
		size_t n;

		nl = strchr(line, '\n');
		cr_assert_not_null(nl);
		*nl = '\0';
		n = strlen(line);
		if (n > 2 && (!strcmp(line + n - 2, ".c") || !strcmp(line + n - 2, ".h"))) {
			char *path = fgt_fmt("%s/%s", dir, line);
			char *text = fgt_read(path, NULL);
			char *self = strndup(line, n - 2);
			char *why;

			cr_assert_not_null(text, "cannot read %s", path);
			why = violations(self, text);
			cr_expect_str_empty(why, "%s", why);
			files++;
			free(why);
			free(self);
			free(text);
			free(path);
		}
	}
	cr_assert_gt(files, 40, "only %zu files in %s", files, dir);
	free(names);
	free(dir);
}
