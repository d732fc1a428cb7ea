/*
 * test_output.c - the agent output adapters (output.h) on fixtures of our
 * own (tests/fixtures/output/): outcome, answer, usage, session, and the
 * streaming reader's rules (noise, pretty-printed documents, arrays, cut
 * off, a stray brace, byte-by-byte feeding, size limits).
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "forge/usage.h"
#include "forge/util.h"
#include "output.h"

TestSuite(output, .timeout = 30);

/* Runs format over data fed in chunks of step bytes (0: all at once). */
static void run_on(struct ep_output *o, enum ep_output_format f, const char *data, size_t len, size_t step)
{
	ep_output_init(o, f);
	for (size_t i = 0; i < len;) {
		size_t n = step && len - i > step ? step : len - i;

		ep_output_feed(o, data + i, n);
		i += n;
	}
	ep_output_finish(o);
}

/* The fixture through format, whole and byte by byte: both must agree. */
static void run_fixture(struct ep_output *o, enum ep_output_format f, const char *name)
{
	char *path = fgt_fmt("%s/output/%s", FG_FIXTURES_DIR, name);
	size_t len;
	char *data = fgt_read(path, &len);
	struct ep_output bytewise;

	cr_assert(data, "cannot read %s", path);
	run_on(o, f, data, len, 0);
	run_on(&bytewise, f, data, len, 1);
	cr_assert_eq(bytewise.ok, o->ok, "%s: byte-by-byte feeding changed ok", name);
	cr_assert_str_eq(bytewise.text, o->text, "%s: byte-by-byte feeding changed the text", name);
	cr_assert_eq(bytewise.usage.have, o->usage.have, "%s", name);
	ep_output_release(&bytewise);
	free(data);
	free(path);
}

/* One fixture and what its adapter makes of it. NULL or -1: not checked. */
struct fixture_case {
	const char *what;
	enum ep_output_format format;
	const char *file;
	bool ok;
	const char *error;       /* the whole error, or with a leading '~' a part of it */
	const char *text;
	const char *session;
	const char *usage;       /* fg_usage_to_cjson(), unformatted */
	int messages;
	int min_noise;           /* at least this many noise lines */
};

/* The usage as fg_usage_to_cjson() prints it: null where nothing was reported. */
#define USAGE(in, out, cached, usd, turns, ms)                                                   \
	"{\"input_tokens\":" #in ",\"output_tokens\":" #out ",\"cached_input_tokens\":" #cached     \
	",\"cost_usd\":" #usd ",\"turns\":" #turns ",\"duration_ms\":" #ms ",\"reasoning_tokens\":null}"
#define C EP_OUTPUT_CLAUDE
#define X EP_OUTPUT_CODEX
#define G EP_OUTPUT_GEMINI

static const struct fixture_case fixture_cases[] = {
	/* input_tokens 6: 1 + cache read 2 + cache creation 3; the warning line is noise. */
	{ "claude: an empty result falls back to the last assistant text", C, "claude_result_empty_fallback.jsonl",
	  true, NULL, "REJECTED: the answer", "s-1", USAGE(6, 4, 2, 0.5, 2, 10), -1, 1 },
	/* A cost reported as 0 is kept as 0, not turned into null. */
	{ "claude: is_error with subtype success is a failure", C, "claude_is_error_success.json",
	  false, "API Error: 529 Overloaded", NULL, "s-2", USAGE(null, null, null, 0, null, null), -1, 0 },
	{ "claude: an error subtype without a result is a failure", C, "claude_error_during_execution.json",
	  false, "claude reported an error (error_during_execution)", NULL, NULL,
	  USAGE(null, null, null, null, 3, null), -1, 0 },
	{ "claude: output cut off inside the result is a failure", C, "claude_cut_off.jsonl",
	  false, "~cut off", "half", NULL, NULL, -1, 0 },
	/* An array's elements are messages, brackets in strings do not count;
	 * modelUsage is summed over both models (m2 reports no cache reads). */
	{ "claude: array elements are messages", C, "claude_array_crlf.json",
	  true, NULL, "done {ok]", "s-5", USAGE(35, 3, 5, 0.25, null, null), 3, 0 },
	{ "codex: reconnecting is no failure, the answer is the last agent message", X,
	  "codex_reconnect_then_ok.jsonl", true, NULL, "APPROVED", "th-1", USAGE(100, 7, 60, null, 1, null), -1, 0 },
	{ "codex: turn.failed is a failure", X, "codex_turn_failed.jsonl",
	  false, "stream disconnected before completion", NULL, NULL, NULL, -1, 0 },
	{ "codex: only retries names no outcome and the last error", X, "codex_only_errors.jsonl",
	  false, "~names no outcome; last error: Reconnecting... 2/5", NULL, NULL, NULL, -1, 0 },
	{ "gemini: an error object after a warning line is a failure", G, "gemini_error.json",
	  false, "API key not valid (FatalAuthenticationError)", NULL, NULL,
	  USAGE(null, null, null, null, null, null), -1, 0 },
	{ "gemini: the stream's answer is the text after the last tool call", G,
	  "gemini_stream_tool_then_answer.jsonl", true, NULL, "APPROVED all good", "g-1",
	  USAGE(9, 3, 4, null, null, 77), -1, 0 },
	{ "gemini: a stream error status is a failure", G, "gemini_stream_error.jsonl",
	  false, "Quota exceeded (quota)", NULL, NULL, USAGE(1, 0, null, null, null, 5), -1, 0 },
	{ "a stray open document does not swallow a JSON lines stream", X, "stray_brace_then_jsonl.txt",
	  true, NULL, "hi", "th-4", NULL, -1, 0 },
};

#undef C
#undef X
#undef G
#undef USAGE

static void check_fixture(const struct fixture_case *k)
{
	struct ep_output o;

	run_fixture(&o, k->format, k->file);
	cr_assert_eq(o.ok, k->ok, "%s: %s", k->what, o.error ? o.error : "no error");
	if (!k->error)
		cr_assert_null(o.error, "%s: %s", k->what, o.error);
	else if (k->error[0] == '~')
		cr_assert(o.error && strstr(o.error, k->error + 1), "%s: %s", k->what, o.error);
	else
		cr_assert_str_eq(o.error, k->error, "%s", k->what);
	if (k->text)
		cr_assert_str_eq(o.text, k->text, "%s", k->what);
	if (k->session)
		cr_assert_str_eq(o.session_id, k->session, "%s", k->what);
	if (k->usage) {
		cJSON *u = fg_usage_to_cjson(&o.usage);
		char *got = cJSON_PrintUnformatted(u);

		cr_expect_str_eq(got, k->usage, "%s: usage %s", k->what, got);
		cJSON_free(got);
		cJSON_Delete(u);
	}
	if (k->messages >= 0)
		cr_assert_eq(o.messages, k->messages, "%s", k->what);
	cr_assert_geq(o.noise_lines, k->min_noise, "%s", k->what);
	ep_output_release(&o);
}

Test(output, fixtures_table)
{
	for (size_t i = 0; i < ARRAY_SIZE(fixture_cases); i++)
		check_fixture(&fixture_cases[i]);
}


Test(output, empty_and_noise_only_outputs_are_failures_saying_which)
{
	static const char noise[] = "Loading...\nwarning: deprecated flag\n";
	struct ep_output o;

	run_on(&o, EP_OUTPUT_CLAUDE, "", 0, 0);
	cr_assert_not(o.ok);
	cr_assert_str_eq(o.error, "the agent printed nothing");
	ep_output_release(&o);
	run_on(&o, EP_OUTPUT_GEMINI, noise, strlen(noise), 0);
	cr_assert_not(o.ok);
	cr_assert_str_eq(o.error, "no gemini JSON in the output (2 line(s) of other text)");
	cr_assert_str_eq(o.text, "");
	ep_output_release(&o);
	/* Valid JSON of the wrong kind names no outcome either. */
	run_on(&o, EP_OUTPUT_CODEX, "{\"type\":\"turn.started\"}", 23, 0);
	cr_assert_not(o.ok);
	cr_assert(strstr(o.error, "names no outcome"), "%s", o.error);
	ep_output_release(&o);
}

Test(output, text_format_keeps_the_output_and_succeeds)
{
	static const char out[] = "{\"type\":\"result\",\"is_error\":true}\nAPPROVED\n";
	struct ep_output o;

	run_on(&o, EP_OUTPUT_TEXT, out, strlen(out), 3);
	cr_assert(o.ok);
	cr_assert_null(o.error);
	cr_assert_str_eq(o.text, out);
	cr_assert(fg_usage_empty(&o.usage));
	cr_assert_null(o.session_id);
	ep_output_release(&o);
}

Test(output, a_line_over_the_limit_is_skipped_and_memory_stays_bounded)
{
	size_t big = EP_OUTPUT_LINE_MAX + 10;
	char *line = malloc(big);
	static const char tail[] = "\n{\"type\":\"turn.completed\",\"usage\":{}}\n";
	struct ep_output o;

	memset(line, 'x', big);
	line[0] = '{';
	line[1] = '"';
	ep_output_init(&o, EP_OUTPUT_CODEX);
	ep_output_feed(&o, line, big);
	cr_assert_leq(o.line.len, EP_OUTPUT_LINE_MAX);
	ep_output_feed(&o, tail, strlen(tail));
	ep_output_finish(&o);
	cr_assert(o.ok, "%s", o.error);
	cr_assert_eq(o.skipped, 1);
	ep_output_release(&o);
	free(line);
}

Test(output, format_names_round_trip)
{
	static const char *const names[] = { "text", "claude", "codex", "gemini" };
	enum ep_output_format f;

	for (size_t i = 0; i < 4; i++) {
		cr_assert_eq(ep_output_format_parse(names[i], &f), 0);
		cr_assert_str_eq(ep_output_format_name(f), names[i]);
	}
	cr_assert_lt(ep_output_format_parse("Claude", &f), 0);
	cr_assert_lt(ep_output_format_parse("", &f), 0);
}

Test(output, invalid_utf8_becomes_replacement_characters)
{
	static const char out[] = "ok \xff\xfe then \xe2\x82 end";
	struct ep_output o;

	run_on(&o, EP_OUTPUT_TEXT, out, strlen(out), 0);
	cr_assert_str_eq(o.text, "ok \xef\xbf\xbd\xef\xbf\xbd then \xef\xbf\xbd\xef\xbf\xbd end");
	ep_output_release(&o);
}

Test(output, gemini_exit_codes_have_a_meaning)
{
	cr_assert_str_eq(ep_output_exit_meaning(EP_OUTPUT_GEMINI, 41), "gemini: authentication failed");
	cr_assert_str_eq(ep_output_exit_meaning(EP_OUTPUT_GEMINI, 53), "gemini: turn limit reached");
	cr_assert_null(ep_output_exit_meaning(EP_OUTPUT_GEMINI, 1));
	cr_assert_null(ep_output_exit_meaning(EP_OUTPUT_CLAUDE, 41));
}

/* Every exit code the current CLIs document is named (Gemini 0.53's
 * FatalError codes, Codex's argument parser). */
Test(output, current_exit_codes_have_a_meaning)
{
	static const struct { enum ep_output_format f; int code; const char *prefix; } cases[] = {
		{ EP_OUTPUT_GEMINI, 42, "gemini: invalid input" },
		{ EP_OUTPUT_GEMINI, 44, "gemini: sandbox error" },
		{ EP_OUTPUT_GEMINI, 52, "gemini: configuration error" },
		{ EP_OUTPUT_GEMINI, 54, "gemini: tool execution failed" },
		{ EP_OUTPUT_GEMINI, 55, "gemini: the workspace is not a trusted folder (--skip-trust" },
		{ EP_OUTPUT_GEMINI, 130, "gemini: cancelled" },
		{ EP_OUTPUT_CODEX, 2, "codex: the command line was refused" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *m = ep_output_exit_meaning(cases[i].f, cases[i].code);

		cr_assert(m && !strncmp(m, cases[i].prefix, strlen(cases[i].prefix)), "%d: %s", cases[i].code, m);
	}
	cr_assert_null(ep_output_exit_meaning(EP_OUTPUT_CODEX, 1));
}

static void run_text(struct ep_output *o, enum ep_output_format f, const char *s)
{
	run_on(o, f, s, strlen(s), 0);
}

/* A result with status error and no error object keeps the message of the
 * error event just before it. */
Test(output, gemini_error_result_without_error_keeps_the_error_events_message)
{
	struct ep_output o;

	run_text(&o, EP_OUTPUT_GEMINI, "{\"type\":\"init\",\"session_id\":\"g\"}\n"
		 "{\"type\":\"error\",\"severity\":\"error\",\"message\":\"Quota exceeded for model\"}\n"
		 "{\"type\":\"result\",\"status\":\"error\",\"stats\":{\"input_tokens\":1,\"output_tokens\":0}}\n");
	cr_assert_not(o.ok);
	cr_assert_str_eq(o.error, "Quota exceeded for model");
	ep_output_release(&o);
}

/* Claude's retries are progress: a success after them is a success; with
 * no result the last retry is named. Denials are counted and kept. */
Test(output, claude_retries_are_progress_and_denials_are_kept)
{
	static const char retry[] = "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":2,\"max_retries\":10,"
				    "\"retry_delay_ms\":600,\"error_status\":529,\"error\":\"overloaded\"}\n";
	static const char tool[] = "{\"message\":{\"content\":[{\"type\":\"tool_use\",\"name\":\"Bash\"}]},"
				   "\"type\":\"assistant\"}\n";
	static const char deny[] = "{\"type\":\"system\",\"subtype\":\"permission_denied\",\"tool_name\":\"Bash\"}\n"
				   "{\"type\":\"rate_limit_event\"}\n{\"type\":\"system\",\"subtype\":\"thinking_tokens\","
				   "\"estimated_tokens\":40}\n";
	char *s = fgt_fmt("%s%s%s{\"is_error\":false,\"result\":\"ok\",\"permission_denials\":[{\"tool_name\":\"Bash\"}],"
			  "\"type\":\"result\",\"subtype\":\"success\"}\n", retry, tool, deny);
	struct ep_output o;

	run_text(&o, EP_OUTPUT_CLAUDE, s);
	cr_assert(o.ok, "%s", o.error);
	cr_assert_eq(o.retries, 1);
	cr_assert_eq(o.denied.n, 1);
	cr_assert_str_eq(o.denied.v[0], "Bash");
	cr_assert_eq(o.tool_calls, 1);
	cr_assert_eq(o.denied_calls, 1);
	cr_assert(ep_output_all_denied(&o));
	cr_assert_not(o.usage.have & FG_USAGE_REASONING);
	ep_output_release(&o);
	run_text(&o, EP_OUTPUT_CLAUDE, retry);
	cr_assert_not(o.ok);
	cr_assert_str_eq(o.error, "the claude output names no outcome; last error: API retry 2/10: overloaded (529)");
	ep_output_release(&o);
	free(s);
}

/* One allowed call beside a denied one: not every call was denied. */
Test(output, a_run_with_an_allowed_tool_call_is_not_all_denied)
{
	struct ep_output o;

	run_text(&o, EP_OUTPUT_CLAUDE,
		 "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"name\":\"Bash\"},"
		 "{\"type\":\"tool_use\",\"name\":\"Read\"},{\"type\":\"tool_use\",\"name\":\"Grep\"}]}}\n"
		 "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"x\","
		 "\"permission_denials\":[{\"tool_name\":\"Bash\"},{\"tool_name\":\"bad name\"}]}\n");
	cr_assert(o.ok);
	cr_assert_eq(o.denied_calls, 2);
	cr_assert_eq(o.denied.n, 1, "an invalid name is counted, not kept");
	cr_assert_not(ep_output_all_denied(&o));
	ep_output_release(&o);
}

/* Claude's thinking tokens (usage.output_tokens_details) are the run's
 * reasoning_tokens, whether the tokens come from modelUsage or usage; a
 * result without them leaves reasoning_tokens absent. */
Test(output, claude_thinking_tokens_are_reasoning_tokens)
{
	struct ep_output o;

	run_text(&o, EP_OUTPUT_CLAUDE,
		 "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\","
		 "\"usage\":{\"input_tokens\":10,\"output_tokens\":40,"
		 "\"output_tokens_details\":{\"thinking_tokens\":25}},"
		 "\"modelUsage\":{\"m\":{\"inputTokens\":10,\"outputTokens\":40}}}\n");
	cr_assert(o.ok);
	cr_assert_eq(o.usage.output_tokens, 40);
	cr_assert(o.usage.have & FG_USAGE_REASONING);
	cr_assert_eq(o.usage.reasoning_tokens, 25);
	ep_output_release(&o);

	run_text(&o, EP_OUTPUT_CLAUDE,
		 "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\","
		 "\"usage\":{\"input_tokens\":10,\"output_tokens\":40}}\n");
	cr_assert(o.ok);
	cr_assert_not(o.usage.have & FG_USAGE_REASONING);
	ep_output_release(&o);
}

/* Codex's turn usage is the thread's running total: the last one stands. */
Test(output, codex_usage_is_cumulative_per_thread)
{
	struct ep_output o;

	run_text(&o, EP_OUTPUT_CODEX,
		 "{\"type\":\"error\",\"message\":\"Reconnecting... 1/5\"}\n"
		 "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":100,\"cached_input_tokens\":10,"
		 "\"output_tokens\":5,\"reasoning_output_tokens\":2}}\n"
		 "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":250,\"cached_input_tokens\":90,"
		 "\"cache_write_input_tokens\":7,\"output_tokens\":12,\"reasoning_output_tokens\":4}}\n");
	cr_assert(o.ok);
	cr_assert_eq(o.usage.input_tokens, 250);
	cr_assert_eq(o.usage.cached_input_tokens, 90);
	cr_assert_eq(o.usage.output_tokens, 12);
	cr_assert_eq(o.usage.reasoning_tokens, 4);
	cr_assert_eq(o.usage.turns, 2);
	cr_assert_eq(o.retries, 1);
	ep_output_release(&o);
}
