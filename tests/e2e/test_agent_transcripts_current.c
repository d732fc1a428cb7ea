/*
 * test_agent_transcripts_current.c - the current CLI versions' outputs kept
 * in ../shared/agent-transcripts-current/ (Claude Code 2.1.22x, Codex CLI
 * 0.14x - 0.15x, Gemini CLI 0.5x; read its README) through `forge-entrypoint
 * agent-output`, checked against expectations written by reading each
 * sample: the outcome, the text, every usage field (reasoning_tokens
 * included) and the tools the CLI denied. The older folder has its own test
 * (test_agent_transcripts.c), unchanged. Skipped, saying why, when the
 * folder is absent (FG_AGENT_TRANSCRIPTS_CURRENT names another one); a
 * sample without an expectation fails the test.
 *
 * Two samples are a terminal session, not CLI output (a shell prompt, the
 * CLI's standard error, `echo $?`): the adapter finds no JSON in them, which
 * is a failure naming it, and the exit status they show is named by
 * ep_output_exit_meaning() (checked here through the loop's run: see
 * test_agent_loop.c; the meanings in tests/entrypoint/test_output.c).
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"

TestSuite(agent_transcripts_current, .timeout = 120);

#define NUL (-1) /* null */

struct sample {
	const char *file, *format;
	bool ok;
	const char *error;             /* prefix of "error"; NULL: null */
	const char *text;              /* exact */
	long long usage[6];            /* input, output, cached, reasoning, turns, duration_ms; NUL */
	double cost;                   /* NUL: null */
	const char *session;           /* NULL: null */
	const char *denied;            /* "A,B" of denied_tools; "" none */
};

static const char *const FIELDS[] = {
	"input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens", "turns", "duration_ms",
};

static const struct sample SAMPLES[] = {
	/* No permission mode: Bash denied, yet is_error false: ok, with the denial kept. */
	{ "claude_json_v2.1.220_default-mode-bash-denied_is_error-false_headless-audit-EXCERPT.json", "claude",
	  true, NULL, "The command needs your approval to run ... nothing executed yet.",
	  { NUL, NUL, NUL, NUL, NUL, NUL }, NUL, NULL, "Bash" },
	/* "type" last in the result; modelUsage emptied by the author: usage stands in. */
	{ "claude_stream-json_v2.1.226_bash-echo_tool_use-tool_result-result-type-last_empty-modelUsage_"
	  "amux-fixtures-SELECTED.jsonl", "claude",
	  true, NULL, "done", { 58805, 157, 48151, NUL, 2, 14478 }, 0.269648,
	  "7f98a57c-818a-4214-a869-ac5af20aa972", "" },
	/* reasoning_output_tokens are part of output_tokens (26 of which 18). */
	{ "codex_exec-json_v0.141.0_say-hi_success_4-field-usage-reasoning_amux-fixtures.jsonl", "codex",
	  true, NULL, "Hi!", { 13836, 26, 3456, 18, 1, NUL }, NUL, "019fe715-0c25-72c3-878b-7728e09afc96", "" },
	/* A web_search item with "id" twice; cache_write_input_tokens (0) is part of input. */
	{ "codex_exec-json_v0.159.0_success_shell-patch-websearch-duplicate-id-key_fakeserver-research.jsonl",
	  "codex", true, NULL, "All steps done.", { 5800, 190, 1300, 35, 1, NUL }, NUL,
	  "01a0edaa-e7d5-7a30-97d1-434253371da2", "" },
	{ "codex_exec-text_v0.151.0_full-auto-rejected_exit2_codex-image-issue5.txt", "codex",
	  false, "no codex JSON in the output (8 line(s)", "", { NUL, NUL, NUL, NUL, NUL, NUL }, NUL, NULL, "" },
	{ "gemini_json_v2026-unknown_untrusted-folder_yolo-overridden_fatal_stderr_AOG-report.txt", "gemini",
	  false, "no gemini JSON in the output (6 line(s)", "", { NUL, NUL, NUL, NUL, NUL, NUL }, NUL, NULL, "" },
	/* 643 thought tokens are in total_tokens, not in output_tokens (74): output 717. */
	{ "gemini_stream-json_v0.53.1_shell-echo_yolo-trust-env_two-models_thoughts-not-in-output_tokens_"
	  "amux-fixtures-SELECTED.jsonl", "gemini",
	  true, NULL, "amux-fixture", { 22915, 717, 8115, 643, NUL, 7175 }, NUL,
	  "d1f03c4d-470b-4894-a540-3fd31e12be65", "" },
};

static char *samples_dir(void)
{
	const char *env = getenv("FG_AGENT_TRANSCRIPTS_CURRENT");
	char *dir = env && *env ? fgt_fmt("%s", env)
				: fgt_fmt("%s/../shared/agent-transcripts-current", FG_SOURCE_DIR);

	if (!fgt_exists(dir)) {
		char *why = fgt_fmt("no current agent transcripts at '%s' (the shared/ folder beside the checkout)",
				    dir);

		free(dir);
		cr_skip_test("%s", why);
	}
	return dir;
}

/* denied_tools joined with ",". Owned. */
static char *joined(const cJSON *a)
{
	char *s = fgt_fmt("%s", ""), *t;
	const cJSON *e;

	cr_assert(cJSON_IsArray(a), "denied_tools is not an array");
	cJSON_ArrayForEach(e, a) {
		t = fgt_fmt("%s%s%s", s, *s ? "," : "", cJSON_GetStringValue(e));
		free(s);
		s = t;
	}
	return s;
}

static void expect_sample(const struct sample *e, const cJSON *j)
{
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "usage");
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(j, "error");
	const cJSON *cost = cJSON_GetObjectItemCaseSensitive(u, "cost_usd");
	const char *sid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "session_id"));
	char *denied = joined(cJSON_GetObjectItemCaseSensitive(j, "denied_tools"));

	cr_expect_eq(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok")), e->ok, "%s: ok", e->file);
	if (e->error)
		cr_expect(cJSON_IsString(err) && !strncmp(err->valuestring, e->error, strlen(e->error)),
			  "%s: error '%s'", e->file, cJSON_GetStringValue(err));
	else
		cr_expect(cJSON_IsNull(err), "%s: error should be null", e->file);
	cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "text")), e->text, "%s", e->file);
	for (size_t i = 0; i < sizeof(FIELDS) / sizeof(FIELDS[0]); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(u, FIELDS[i]);

		if (e->usage[i] == NUL)
			cr_expect(cJSON_IsNull(v), "%s: %s should be null", e->file, FIELDS[i]);
		else
			cr_expect(cJSON_IsNumber(v) && v->valuedouble == (double)e->usage[i], "%s: %s: want %lld",
				  e->file, FIELDS[i], e->usage[i]);
	}
	if (e->cost == NUL)
		cr_expect(cJSON_IsNull(cost), "%s: cost_usd should be null", e->file);
	else
		cr_expect(cJSON_IsNumber(cost) && fabs(cost->valuedouble - e->cost) < 1e-9, "%s: cost", e->file);
	cr_expect(e->session ? sid && !strcmp(sid, e->session) : !sid, "%s: session_id '%s'", e->file, sid);
	cr_expect_str_eq(denied, e->denied, "%s: denied_tools", e->file);
	free(denied);
}

Test(agent_transcripts_current, every_sample_gives_the_expected_outcome_usage_and_denials)
{
	char *dir = samples_dir();

	for (size_t i = 0; i < sizeof(SAMPLES) / sizeof(SAMPLES[0]); i++) {
		char *path = fgt_fmt("%s/%s", dir, SAMPLES[i].file);
		const char *argv[] = { FG_ENTRYPOINT_BIN, "agent-output", "--format", SAMPLES[i].format, path,
				       NULL };
		struct fgt_proc p;
		cJSON *j;

		cr_assert_eq(fgt_run(&p, argv, NULL, NULL, "", 30), 0);
		cr_assert_eq(p.exit_code, 0, "%s: exit %d: %s", SAMPLES[i].file, p.exit_code, p.err);
		j = cJSON_Parse(p.out);
		cr_assert(j, "%s: not JSON: %s", SAMPLES[i].file, p.out);
		expect_sample(&SAMPLES[i], j);
		cJSON_Delete(j);
		fgt_proc_release(&p);
		free(path);
	}
	free(dir);
}

static bool has_sample(const char *name, void *ctx)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(SAMPLES) / sizeof(SAMPLES[0]); i++)
		if (!strcmp(SAMPLES[i].file, name))
			return true;
	return false;
}

Test(agent_transcripts_current, every_sample_has_an_expectation)
{
	char *dir = samples_dir();

	fgt_expect_every_file(dir, has_sample, NULL);
	free(dir);
}
