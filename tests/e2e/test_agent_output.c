/*
 * test_agent_output.c - forge-entrypoint agent-output over the sample
 * transcripts of every agent (tests/fixtures/output): the outcome, the
 * final text, usage and denials each sample must give, a case for every
 * sample, and its usage errors.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <regex.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"

TestSuite(agent_output, .timeout = 120);

enum unwrap { RAW, LOG_PREFIX, MD_RESPONSE };

#define NUL_I (-1)   /* a null count */
#define NUL_C (-1.0) /* a null cost */

struct expect {
	const char *file;
	const char *format;
	enum unwrap unwrap;
	bool ok;
	const char *error;    /* prefix of "error"; NULL: error is null */
	const char *text;     /* exact "text"; NULL: see text_prefix */
	const char *text_prefix;
	long long in, out, cached;
	double cost;
	long long turns, ms;
	const char *session;  /* NULL: null */
};

static const char NO_OUTCOME[] = "the claude output names no outcome";

static const struct expect EXPECT[] = {
	{ "claude_json-verbose-array_v2.1.4_success_tool-use_vecsum-report.md", "claude", MD_RESPONSE,
	  true, NULL, NULL, "Now let me verify each requirement against the test:\n\n**$REQ_TIMING_001**",
	  89740, 932, 80746, 0.0745213, 3, 22631, "d49d1efb-0239-4aa2-a2b0-f6c86b2320a6" },
	{ "claude_json-verbose-array_v2.1.4_success_tool-use_vecsum-report.md", "claude", RAW,
	  false, NO_OUTCOME, "", NULL, NUL_I, NUL_I, NUL_I, NUL_C, NUL_I, NUL_I, NULL },
	{ "claude_json_DOC-EXAMPLE_sdk-headless_response-and-schema.md", "claude", RAW,
	  true, NULL, "The response text here...", NULL, NUL_I, NUL_I, NUL_I, 0.003, 6, 1234, "abc123" },
	{ "claude_json_TRIMMED_permission-denial_and_budget-error_shepherdcore.jsonl", "claude", RAW,
	  false, "Reached maximum budget ($0.0001)", "", NULL, NUL_I, NUL_I, NUL_I, NUL_C, NUL_I, NUL_I,
	  "ab59fac9-3575-4670-ab0c-920df5530a01" },
	{ "claude_json_error_max_turns_full-envelope_terminal_reason.json", "claude", RAW,
	  false, "Reached maximum number of turns (40)", "", NULL, 1649314, 15946, 1617801, 1.4020935, 41,
	  283992, "495cc7e5-d22e-4192-92ba-4ce2d14827a6" },
	{ "claude_json_v2.0.28_success_agentcmd-doc.json", "claude", RAW,
	  true, NULL, "2 + 2 = 4", NULL, 26398, 213, 4804, 0.0826424, 1, 2926,
	  "45929484-a577-456f-933c-a5aff0d315b0" },
	{ "claude_json_v2.0.62_invalid-api-key_exit1_hyperyolo-abbrev.txt", "claude", RAW,
	  false, "Invalid API key \xc2\xb7 Fix external API key", "Invalid API key \xc2\xb7 Fix external API key",
	  NULL, NUL_I, NUL_I, NUL_I, NUL_C, NUL_I, NUL_I, "..." },
	{ "claude_json_v2.1.177_error_max_turns_exit1_claude-remember-issue98.txt", "claude", RAW,
	  false, "Reached maximum number of turns (1)", "", NULL, NUL_I, NUL_I, NUL_I, NUL_C, 2, NUL_I, NULL },
	{ "claude_stream-json_FIXTURE-handmade_claude-code-action_sample-turns.json", "claude", RAW,
	  true, NULL, "Successfully removed debug print statement from file and added review comment to "
	  "document the change.", NULL, NUL_I, NUL_I, NUL_I, 0.0347, NUL_I, 18750, "sample-session-id" },
	{ "claude_stream-json_v2.0.28_success_agentcmd-doc.jsonl", "claude", RAW,
	  true, NULL, "4", NULL, 21591, 5, 0, 0.081039, 1, 1889, "13a34b05-d65d-4e6e-bb70-00ef7be077a8" },
	{ "claude_stream-json_v2.0.55_api-error-404_is_error-true_exit0_hive-mind.log", "claude", LOG_PREFIX,
	  false, "API Error: 404 {\"type\":\"error\"", NULL, "API Error: 404 {", 2237, 979, 0, 0.027108, 1, 4848,
	  "16a26db9-fd28-4a13-b08f-8b06aed6552c" },
	{ "claude_stream-json_v2.0.55_api-error-404_is_error-true_exit0_hive-mind.log", "claude", RAW,
	  false, NO_OUTCOME, "", NULL, NUL_I, NUL_I, NUL_I, NUL_C, NUL_I, NUL_I, NULL },
	{ "claude_stream-json_v2.1.3_tool-use-events_gleam-fixtures.json", "claude", RAW,
	  true, NULL, "Here are the files in the current directory.", NULL, 59972, 765, 28775, 0.24722425, 2,
	  8722, "40e7b02d-c0f9-4876-9010-f514d4eb0603" },
	{ "claude_stream-json_v2.1.7_success_gleam-golden.ndjson", "claude", RAW,
	  true, NULL, "4", NULL, 21580, 25, 0, 0.1354875, 1, 2360, "1d1e46f9-35c7-4834-b529-846d5bb82288" },
	{ "codex_exec-json_401-retry-exhausted_turn-failed_hive-mind.log", "codex", LOG_PREFIX,
	  false, "exceeded retry limit, last status: 401 Unauthorized, request id: 99cdbe04acfb0b34-AMS", "",
	  NULL, NUL_I, NUL_I, NUL_I, NUL_C, NUL_I, NUL_I, "019a72db-80ed-7911-8a8a-94994ffc009b" },
	{ "codex_exec-json_401-retry-exhausted_turn-failed_hive-mind.log", "codex", RAW,
	  false, "exceeded retry limit, last status: 401 Unauthorized", "", NULL, NUL_I, NUL_I, NUL_I, NUL_C,
	  NUL_I, NUL_I, NULL },
	{ "codex_exec-json_DOC-EXAMPLE_openai-codex-docs-exec-md.jsonl", "codex", RAW,
	  true, NULL, "Yep \xe2\x80\x94 there\xe2\x80\x99s a `README.md` in the repository root.", NULL, 24763, 122,
	  24448, NUL_C, 1, NUL_I, "0199a213-81c0-7800-8aa1-bbab2a035a53" },
	{ "codex_exec-json_partial_turn-completed_codex-acp-issue99.jsonl", "codex", RAW,
	  true, NULL, "", NULL, 70021, 2374, 57088, NUL_C, 1, NUL_I, NULL },
	{ "codex_exec-json_v0.46.0_2plus2_agentcmd-doc.jsonl", "codex", RAW,
	  true, NULL, "2+2 is 4.", NULL, 2940, 13, 2048, NUL_C, 1, NUL_I, "019a2d8b-1cee-78e1-aabc-f97964366cac" },
	{ "codex_exec-json_v0.46.0_command-execution_agentcmd.jsonl", "codex", RAW,
	  true, NULL, "Files here: `stream-output-1.jsonl`, `stream-output-2.jsonl`, `test.js`.", NULL, 6040, 129,
	  4992, NUL_C, 1, NUL_I, "019a2d7a-6455-7170-a661-c6d8b94c630a" },
	{ "codex_exec-json_v0.46.0_file-change_agentcmd.jsonl", "codex", RAW,
	  true, NULL, "Created `hello.txt` containing `Hello from Codex`.", NULL, 6008, 51, 4096, NUL_C, 1, NUL_I,
	  "019a2d7a-8e1c-7111-b1a6-8cec551a55a0" },
	{ "codex_exec-json_v0.46.0_simple-answer_agentcmd.jsonl", "codex", RAW,
	  true, NULL, "4", NULL, 2946, 7, 0, NUL_C, 1, NUL_I, "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5" },
	{ "codex_exec-json_v0.66.0_ping_hyperyolo.jsonl", "codex", RAW,
	  true, NULL, "PING", NULL, 3523, 7, 3072, NUL_C, 1, NUL_I, "019b0524-3ac5-71c2-8e8a-fb9d1e8ab10b" },
	/* Codex's plain mode is not JSON: the codex adapter refuses it, the text one keeps it whole. */
	{ "codex_exec-text_v0.46.0_full-auto_agentcmd-doc.txt", "codex", RAW,
	  false, "no codex JSON in the output (21 line(s)", "", NULL, NUL_I, NUL_I, NUL_I, NUL_C, NUL_I, NUL_I, NULL },
	{ "codex_exec-text_v0.46.0_full-auto_agentcmd-doc.txt", "text", RAW,
	  true, NULL, NULL, "$ codex exec \"What is 2+2?\"", NUL_I, NUL_I, NUL_I, NUL_C, NUL_I, NUL_I, NULL },
	{ "codex_exec-text_v0.66.0_banner_hyperyolo-condensed.txt", "codex", RAW,
	  false, "no codex JSON in the output (6 line(s)", "", NULL, NUL_I, NUL_I, NUL_I, NUL_C, NUL_I, NUL_I, NULL },
	{ "gemini_json_DOC-EXAMPLE_headless-md.json", "gemini", RAW,
	  true, NULL, "The capital of France is Paris.", NULL, 33904, 214, 21263, NUL_C, NUL_I, NUL_I, NULL },
	{ "gemini_json_v0.11.0_success_agentcmd-doc.json", "gemini", RAW,
	  true, NULL, "The capital of France is Paris.", NULL, 19340, 185, 0, NUL_C, NUL_I, NUL_I, NULL },
	{ "gemini_json_v0.6.1_success_oneryalcin-issue9.json", "gemini", RAW,
	  true, NULL, "4", NULL, 7173, 17, 0, NUL_C, NUL_I, NUL_I, NULL },
	{ "gemini_stream-json_DOC-EXAMPLE_headless-md.jsonl", "gemini", RAW,
	  true, NULL, "Here are the files...", NULL, 50, 200, NUL_I, NUL_C, NUL_I, 3000, "abc123" },
	/* output_tokens include the thoughts (18 of total_tokens 7386, as the
	 * json format counts them; reasoning_tokens: test_agent_output.c). */
	{ "gemini_stream-json_v0.11.0_hello_agentcmd-doc.jsonl", "gemini", RAW,
	  true, NULL, "Hello! I'm ready to help. What can I do for you?", NULL, 7352, 34, NUL_I, NUL_C, NUL_I, 2239,
	  "2aa2472d-f175-41f6-a5a9-fd4f42cc345a" },
	/* Two runs in one file: the second run's result is the last word (77
	 * output tokens + 486 thoughts). */
	{ "gemini_stream-json_v0.11.0_tool-use-read-replace_agentcmd-doc.txt", "gemini", RAW,
	  true, NULL, "Done.", NULL, 21694, 563, NUL_I, NUL_C, NUL_I, 13099, "453aa339-7d2b-4709-a41a-b0b73beaff85" },
	/* One tool_result event alone: a tool error is no outcome of the run. */
	{ "gemini_stream-json_v0.11.0_tool_not_registered_agentcmd-doc-abbrev.json", "gemini", RAW,
	  false, "the gemini output names no outcome", "", NULL, NUL_I, NUL_I, NUL_I, NUL_C, NUL_I, NUL_I, NULL },
};

#define NEXPECT (sizeof(EXPECT) / sizeof(EXPECT[0]))

static char *transcripts_dir(void)
{
	const char *env = getenv("FG_AGENT_TRANSCRIPTS");
	char *dir = env && *env ? fgt_fmt("%s", env) : fgt_fmt("%s/../shared/agent-transcripts", FG_SOURCE_DIR);

	if (!fgt_exists(dir)) {
		char *why = fgt_fmt("no agent transcripts at '%s' (the shared/ folder beside the checkout)", dir);

		free(dir);
		cr_skip_test("%s", why);
	}
	return dir;
}

/* Lines without hive-mind's "[timestamp] [LEVEL] " prefix. Owned. */
static char *strip_log_prefix(const char *s)
{
	regex_t re;
	char *out = calloc(1, strlen(s) + 1), *w = out;

	cr_assert_eq(regcomp(&re, "^\\[[^]]*\\] \\[[A-Z]+\\] ?", REG_EXTENDED), 0);
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s + 1) : strlen(s);
		char *line = strndup(s, n);
		regmatch_t m;
		size_t skip = regexec(&re, line, 1, &m, 0) == 0 ? (size_t)m.rm_eo : 0;

		memcpy(w, line + skip, n - skip);
		w += n - skip;
		free(line);
		s += n;
	}
	regfree(&re);
	return out;
}

/* The "_RESPONSE" of the report's ```json block, printed. Owned. */
static char *md_response(const char *s)
{
	const char *start = strstr(s, "```json\n"), *end;
	char *block, *w, *out;
	cJSON *env, *resp;

	cr_assert(start, "no ```json block");
	start += 8;
	end = strstr(start, "\n```");
	cr_assert(end);
	block = calloc(1, (size_t)(end - start) + 2);
	w = block;
	for (const char *p = start; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p + 1) : (size_t)(end - p);

		if (strncmp(p, "//", 2)) {
			memcpy(w, p, n);
			w += n;
		}
		p += n;
	}
	env = cJSON_Parse(block);
	cr_assert(env, "the report's JSON does not parse");
	resp = cJSON_GetObjectItemCaseSensitive(env, "_RESPONSE");
	cr_assert(cJSON_IsArray(resp));
	out = cJSON_Print(resp);
	cJSON_Delete(env);
	free(block);
	return out;
}

static void check_count(const cJSON *u, const char *k, long long want, const char *file)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(u, k);

	if (want == NUL_I)
		cr_expect(cJSON_IsNull(v), "%s: usage.%s should be null", file, k);
	else
		cr_expect(cJSON_IsNumber(v) && v->valuedouble == (double)want, "%s: usage.%s: want %lld, got %g",
			  file, k, want, cJSON_IsNumber(v) ? v->valuedouble : -1.0);
}

static void check(const struct expect *e, const cJSON *j)
{
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(j, "error");
	const cJSON *sid = cJSON_GetObjectItemCaseSensitive(j, "session_id");
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "usage");
	const cJSON *cost = cJSON_GetObjectItemCaseSensitive(u, "cost_usd");
	const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "text"));

	cr_expect_eq(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok")), e->ok, "%s: ok", e->file);
	if (e->error)
		cr_expect(cJSON_IsString(err) && !strncmp(err->valuestring, e->error, strlen(e->error)),
			  "%s: error: want '%s...', got '%s'", e->file, e->error, cJSON_GetStringValue(err));
	else
		cr_expect(cJSON_IsNull(err), "%s: error should be null", e->file);
	cr_assert(text, "%s: no text", e->file);
	if (e->text)
		cr_expect_str_eq(text, e->text, "%s: text", e->file);
	else
		cr_expect(!strncmp(text, e->text_prefix, strlen(e->text_prefix)), "%s: text '%.80s'", e->file, text);
	check_count(u, "input_tokens", e->in, e->file);
	check_count(u, "output_tokens", e->out, e->file);
	check_count(u, "cached_input_tokens", e->cached, e->file);
	check_count(u, "turns", e->turns, e->file);
	check_count(u, "duration_ms", e->ms, e->file);
	if (e->cost < 0)
		cr_expect(cJSON_IsNull(cost), "%s: cost_usd should be null", e->file);
	else
		cr_expect(cJSON_IsNumber(cost) && fabs(cost->valuedouble - e->cost) < 1e-9, "%s: cost_usd", e->file);
	if (e->session)
		cr_expect(cJSON_IsString(sid) && !strcmp(sid->valuestring, e->session), "%s: session_id", e->file);
	else
		cr_expect(cJSON_IsNull(sid), "%s: session_id should be null", e->file);
}

static void run_one(const char *dir, const struct expect *e)
{
	char *path = fgt_fmt("%s/%s", dir, e->file);
	char *raw = fgt_read(path, NULL), *in = NULL;
	const char *argv[] = { FG_ENTRYPOINT_BIN, "agent-output", "--format", e->format,
			       e->unwrap == RAW ? path : "-", NULL };
	struct fgt_proc p;
	cJSON *j;

	cr_assert(raw, "cannot read %s", path);
	if (e->unwrap == LOG_PREFIX)
		in = strip_log_prefix(raw);
	else if (e->unwrap == MD_RESPONSE)
		in = md_response(raw);
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, in, 30), 0);
	cr_assert_eq(p.exit_code, 0, "%s: exit %d: %s", e->file, p.exit_code, p.err);
	j = cJSON_Parse(p.out);
	cr_assert(j, "%s: not JSON: %s", e->file, p.out);
	check(e, j);
	cJSON_Delete(j);
	fgt_proc_release(&p);
	free(in);
	free(raw);
	free(path);
}

Test(agent_output, every_sample_gives_the_expected_outcome_text_and_usage)
{
	char *dir = transcripts_dir();

	for (size_t i = 0; i < NEXPECT; i++)
		run_one(dir, &EXPECT[i]);
	free(dir);
}

/* A table of expectations: n rows of size bytes from rows, each starting
 * with the name of its file (const char *file, the first member). */
struct file_rows {
	const void *rows;
	size_t n, size;
};

static bool names_the_file(const char *name, void *ctx)
{
	const struct file_rows *t = ctx;

	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(*(const char *const *)((const char *)t->rows + i * t->size), name))
			return true;
	return false;
}

/* Every file of dir (owned, freed here) has a row in t. */
static void expect_a_row_for_every_file(char *dir, struct file_rows t)
{
	fgt_expect_every_file(dir, names_the_file, &t);
	free(dir);
}

Test(agent_output, every_sample_has_an_expectation)
{
	_Static_assert(offsetof(struct expect, file) == 0, "a row starts with its file");
	expect_a_row_for_every_file(transcripts_dir(), (struct file_rows){ EXPECT, NEXPECT, sizeof(EXPECT[0]) });
}

/* Usage errors and unreadable input: exit 2, nothing on stdout. */
Test(agent_output, agent_output_bad_usage_and_unreadable_input_exit_2)
{
	const char *cases[][5] = {
		{ FG_ENTRYPOINT_BIN, "agent-output", "/dev/null", NULL },
		{ FG_ENTRYPOINT_BIN, "agent-output", "--format", "claude-code", NULL },
		{ FG_ENTRYPOINT_BIN, "agent-output", "--format", "codex", "/nonexistent/out.jsonl" },
		{ FG_ENTRYPOINT_BIN, "agent-output", "-f", "gemini", "/" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[6] = { cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4], NULL };
		struct fgt_proc p;

		cr_assert_eq(fgt_run(&p, argv, NULL, NULL, "", 30), 0);
		cr_expect_eq(p.exit_code, 2, "case %zu: exit %d", i, p.exit_code);
		cr_expect_str_eq(p.out, "", "case %zu", i);
		fgt_proc_release(&p);
	}
}

/* Read, whatever it says: exit 0 with ok false for output naming no outcome. */
Test(agent_output, agent_output_exits_0_on_a_failed_run)
{
	const char *argv[] = { FG_ENTRYPOINT_BIN, "agent-output", "--format", "codex", "-", NULL };
	struct fgt_proc p;

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, "{\"type\":\"turn.failed\",\"error\":{\"message\":\"boom\"}}\n", 30), 0);
	fgt_assert_exit(&p, 0);
	cr_assert(strstr(p.out, "\"ok\":false,\"error\":\"boom\""), "%s", p.out);
	fgt_proc_release(&p);
}

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

Test(agent_output, every_sample_gives_the_expected_outcome_usage_and_denials)
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

Test(agent_output, every_current_sample_has_an_expectation)
{
	_Static_assert(offsetof(struct sample, file) == 0, "a row starts with its file");
	expect_a_row_for_every_file(samples_dir(),
				    (struct file_rows){ SAMPLES, sizeof(SAMPLES) / sizeof(SAMPLES[0]), sizeof(SAMPLES[0]) });
}
