/*
 * fgagent.c - the stand-in CLI fixture of the agent tests (see fgagent.h).
 */
#include "fgagent.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

/* The stand-in's common head: the run number of this role, stdin drained
 * (the preset closes it after the prompt), the arguments recorded, and as
 * the worker a change to the workspace (a turn that changes nothing costs
 * no review). */
const char FGA_STANDIN_HEAD[] =
	"#!/bin/sh\n"
	"cat > /dev/null\n"
	"C=\"$FORGE_WORKSPACE/../count.$FORGE_ROLE\"\n"
	"n=$(cat \"$C\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$C\"\n"
	"echo \"$*\" > \"$FORGE_WORKSPACE/../args.$FORGE_ROLE\"\n"
	"if [ \"$FORGE_ROLE\" = worker ]; then " FGW_WORKS "fi\n"
	"init() { echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-1\"}'; }\n"
	"result() { printf '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":%s,"
	"\"result\":\"%s\",\"session_id\":\"s-%s\",\"num_turns\":1,\"duration_ms\":100,"
	"\"total_cost_usd\":%s,\"usage\":{\"input_tokens\":10,\"cache_creation_input_tokens\":0,"
	"\"cache_read_input_tokens\":5,\"output_tokens\":%s}}\\n' \"$1\" \"$2\" \"$FORGE_ROLE\" \"$3\" \"$4\"; }\n";

void fga_init(struct fga *l, const char *review_md, const char *standin_body)
{
	fgw_init(&l->w);
	fgw_review_md(&l->w, "default", review_md);
	free(fge_script(l->w.bin, "claude", FGA_STANDIN_HEAD, standin_body));
	l->result = NULL;
}

void fga_run(struct fga *l, const char *const *extra_env)
{
	const char *argv[] = { FG_RUNNER_BIN, "run", "--engine", "local", "--workspace", l->w.ws,
			       "--step", "impl", "--skill", "impl", "--skills-dir", l->w.skills,
			       "--entrypoint", FG_ENTRYPOINT_BIN, "--result", l->w.result,
			       "--metrics-file", l->w.metrics, "--log-format", "json", "--log-file", l->w.log,
			       NULL };
	char *path = fgt_fmt("PATH=%s:/usr/local/bin:/usr/bin:/bin", l->w.bin);
	static const char *const defaults[] = {
		"FORGE_WORKER_AGENT=claude", "FORGE_REVIEWER_AGENT=claude", "FORGE_WORKER_CMD",
		"FORGE_REVIEWER_CMD", "FORGE_WORKER_OUTPUT", "FORGE_REVIEWER_OUTPUT",
		"AUTO_REVIEW_MAX_COST_USD", "AUTO_REVIEW_REASK", "AUTO_REVIEW_MAX_RETRIES",
		"AUTO_REVIEW_FAIL_ON_EXHAUSTION", "FORGE_WORKER_ARGS", "FORGE_REVIEWER_ARGS", "IS_SANDBOX",
		"GEMINI_CLI_TRUST_WORKSPACE", "ANTHROPIC_API_KEY=sk-test-anthropic", "CODEX_API_KEY=test-codex",
		"GEMINI_API_KEY=test-gemini",
	};
	const char *env[32] = { path };
	size_t n = 1;
	char *text;

	/* The test's own settings first: the first of two equal names wins. */
	for (size_t i = 0; extra_env && extra_env[i]; i++)
		env[n++] = extra_env[i];
	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		bool set = false;

		for (size_t j = 0; extra_env && extra_env[j]; j++)
			set = set || (strcspn(extra_env[j], "=") == strcspn(defaults[i], "=") &&
				      !strncmp(extra_env[j], defaults[i], strcspn(defaults[i], "=")));
		if (!set)
			env[n++] = defaults[i];
	}
	env[n] = NULL;
	cr_assert_eq(fgt_run(&l->p, argv, env, NULL, NULL, 60), 0);
	cr_assert(!l->p.timed_out);
	text = fgt_read(l->w.result, NULL);
	cr_assert_not_null(text, "no result file; stderr:\n%s", l->p.err);
	l->result = cJSON_Parse(text);
	cr_assert_not_null(l->result, "result not JSON: %s", text);
	free(text);
	l->logtext = fgt_read(l->w.log, NULL);
	cr_assert_not_null(l->logtext, "no runner log");
	free(path);
}

void fga_run_exit(struct fga *l, const char *const *extra_env, int code)
{
	fga_run(l, extra_env);
	cr_assert_eq(l->p.exit_code, code, "exit %d, not %d; log:\n%s", l->p.exit_code, code, l->logtext);
}

void fga_release(struct fga *l)
{
	cJSON_Delete(l->result);
	free(l->logtext);
	fgt_proc_release(&l->p);
	fgw_release(&l->w);
}

/* dir/name (the test's root), read; owned, "" when absent. */
char *fga_read(const struct fga *l, const char *name)
{
	char *t = fge_read_in(l->w.root, name);

	return t ? t : strdup("");
}

cJSON *fga_json(const struct fga *l, const char *name)
{
	char *path = fgt_fmt("%s/%s", l->w.step_dir, name);
	cJSON *o = fge_json_file(path, l->logtext);

	free(path);
	return o;
}

double fga_num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	cr_assert(cJSON_IsNumber(v), "'%s' is not a number", k);
	return v->valuedouble;
}

const cJSON *fga_path2(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b);

	cr_assert_not_null(v, "no %s.%s", a, b);
	return v;
}
