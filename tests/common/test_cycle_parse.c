/*
 * test_cycle_parse.c - fg_cycle_parse(): what makes a cycle invalid (each
 * field, JSON itself, a truncated file), what is tolerated (integral numbers
 * however written, optional fields of the wrong type) and that a failed
 * parse leaves nothing behind.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "forge/cycle.h"
#include "forge/fsutil.h"
#include "forge/util.h"

#include "cycle_sample.h"

TestSuite(cycle, .timeout = 60);

/* ---- validation ---- */

/* Parses text, expecting it refused with reason and nothing kept. */
static void expect_refused(const char *text, const char *reason)
{
	char err[256] = "";
	struct fg_cycle c;

	fg_cycle_init(&c);
	cr_expect_eq(fg_cycle_parse(&c, text, strlen(text), err, sizeof(err)), -EINVAL, "%s", text);
	cr_expect_str_eq(err, reason, "%s", text);
	cr_expect_null(c.j.feedback, "left empty on failure");
	cr_expect_null(c.skill);
	cr_expect_eq(c.cycle, 0);
	fg_cycle_release(&c);
}

Test(cycle, missing_required_field_is_named)
{
	static const char *const keys[] = { "cycle", "max_cycles", "verdict", "feedback",
					    "skill", "elapsed_seconds", "timestamp" };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		char *text = cycle_patched(keys[i], NULL);
		char *reason = fgt_fmt("missing field '%s'", keys[i]);

		expect_refused(text, reason);
		free(reason);
		free(text);
	}
}

/* Each group: the values (JSON text) that key refuses with the same reason. */
struct bad_group {
	const char *key;
	const char *values[10];
	const char *reason;
};

#define INT_RULE(k) "field '" k "' must be an integer >= 1"
#define ELAPSED_RULE "field 'elapsed_seconds' must be a number from 0 to 1000000000"
#define TIMESTAMP_RULE "field 'timestamp' must be UTC 'YYYY-MM-DDTHH:MM:SSZ'"
#define SKILL_RULE(v, why) { "skill", { "\"" v "\"" }, "field 'skill': invalid skill name '" why }

Test(cycle, invalid_fields_table)
{
	static const struct bad_group groups[] = {
		{ "cycle", { "1.5", "\"1\"", "true", "0", "-1", "null", "[1]", "{}", "0.999" }, INT_RULE("cycle") },
		{ "cycle", { "100001", "1e300" }, "field 'cycle' must be at most 100000" },
		{ "max_cycles", { "0", "-3", "2.5", "\"3\"", "false" }, INT_RULE("max_cycles") },
		{ "max_cycles", { "1e20", "100001" }, "field 'max_cycles' must be at most 100000" },
		{ "verdict", { "\"APPROVED\"", "\"Rejected\"", "\"approve\"", "\" approved\"", "\"\"" },
		  "field 'verdict' must be \"approved\" or \"rejected\"" },
		{ "verdict", { "true", "null" }, "field 'verdict' must be a string" },
		{ "feedback", { "1", "null", "[\"a\"]" }, "field 'feedback' must be a string" },
		{ "skill", { "5", "null" }, "field 'skill' must be a string" },
		/* The skill becomes a metrics label and the result's skill, so it
		 * is held to the names rule. */
		SKILL_RULE("", "': is empty"),
		SKILL_RULE("a b", "a b': contains whitespace"),
		SKILL_RULE("a\\u0007b", "a\\x07b': contains a control character"),
		SKILL_RULE("a\\nb", "a\\x0ab': contains a control character"),
		SKILL_RULE("../x", "../x': contains '/'"),
		{ "elapsed_seconds", { "1e10", "-0.1", "\"1.5\"", "null", "true", "1e999" }, ELAPSED_RULE },
		{ "timestamp", { "12345", "null" }, "field 'timestamp' must be a string" },
		{ "timestamp", { "\"2026-01-15 10:30:00Z\"", "\"2026-01-15T10:30:00\"", "\"2026-13-01T00:00:00Z\"",
				 "\"2026-01-15T10:30:00.123Z\"", "\"2026-01-15T10:30:00+00:00\"", "\"\"" },
		  TIMESTAMP_RULE },
	};

	for (size_t i = 0; i < ARRAY_SIZE(groups); i++) {
		for (size_t k = 0; k < ARRAY_SIZE(groups[i].values) && groups[i].values[k]; k++) {
			char *text = cycle_patched(groups[i].key, groups[i].values[k]);

			expect_refused(text, groups[i].reason);
			free(text);
		}
	}
}

struct json_case { const char *text; size_t len; const char *reason; }; /* len 0: strlen(text) */

Test(cycle, not_json_table)
{
	static const struct json_case cases[] = {
		{ "", 0, "not valid JSON" },
		{ "   \n", 0, "not valid JSON" },
		{ "{", 0, "not valid JSON" },
		{ "{\"cycle\": 1, \"max_cycles\": 3,", 0, "not valid JSON" },
		{ "{\"cycle\": 1} trailing", 0, "not valid JSON" },
		{ "{\"cycle\": 1}{}", 0, "not valid JSON" },
		{ "{\"cycle\": 1}\0{}", 15, "contains a NUL byte" },
		{ "\xff\xfe{}", 0, "not valid UTF-8 at byte 0" },
		/* Invalid UTF-8 in any string makes the file
		 * corrupt, whichever field holds it. */
		{ "{\"feedback\": \"ok \xff\xfe\"}", 0, "not valid UTF-8 at byte 17" },
		{ "{\"skill\": \"\xc3\"}", 0, "not valid UTF-8 at byte 11" },
		{ "{\"f\": \"\xed\xa0\x80\"}", 0, "not valid UTF-8 at byte 7" },
		{ "{\"f\": \"\\ud800\"}", 0, "not valid JSON" },
		{ "[1, 2]", 0, "not a JSON object" },
		{ "null", 0, "not a JSON object" },
		{ "\"review\"", 0, "not a JSON object" },
		{ "3", 0, "not a JSON object" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
		char err[256] = "";
		struct fg_cycle c;

		fg_cycle_init(&c);
		cr_expect_eq(fg_cycle_parse(&c, cases[i].text, len, err, sizeof(err)), -EINVAL, "case %zu", i);
		cr_expect_str_eq(err, cases[i].reason, "case %zu", i);
		fg_cycle_release(&c);
	}
}

Test(cycle, truncated_valid_file_is_never_accepted)
{
	size_t len = strlen(cycle_base_json);

	/* Every proper prefix of a valid cycle is invalid JSON: a reader that
	 * sees a half-written file from somebody else rejects it. */
	for (size_t cut = 0; cut < len; cut++) {
		struct fg_cycle c;
		char err[64];

		fg_cycle_init(&c);
		cr_assert_eq(fg_cycle_parse(&c, cycle_base_json, cut, err, sizeof(err)), -EINVAL, "cut %zu", cut);
		cr_assert_str_eq(err, "not valid JSON", "cut %zu", cut);
		fg_cycle_release(&c);
	}
}

Test(cycle, failed_parse_releases_earlier_contents)
{
	struct fg_cycle c;
	char err[64];
	const char *bad = "{\"cycle\": 0}";

	fg_cycle_init(&c);
	cr_assert_eq(fg_cycle_parse(&c, cycle_base_json, strlen(cycle_base_json), err, sizeof(err)), 0);
	cr_assert_str_eq(c.j.feedback, "fix it");
	cr_assert_eq(fg_cycle_parse(&c, bad, strlen(bad), err, sizeof(err)), -EINVAL);
	cr_assert_null(c.j.feedback);
	cr_assert_null(c.skill);
	cr_assert_eq(c.cycle, 0);
	/* A NULL error buffer is allowed. */
	cr_assert_eq(fg_cycle_parse(&c, bad, strlen(bad), NULL, 0), -EINVAL);
	fg_cycle_release(&c);
}

Test(cycle, integral_numbers_accepted_however_written)
{
	static const char *const values[] = { "2", "2.0", "2e0", "20e-1" };

	for (size_t i = 0; i < ARRAY_SIZE(values); i++) {
		char *text = cycle_patched("cycle", values[i]);
		char err[128] = "";
		struct fg_cycle c;

		fg_cycle_init(&c);
		cr_expect_eq(fg_cycle_parse(&c, text, strlen(text), err, sizeof(err)), 0, "%s: %s", text, err);
		cr_expect_eq(c.cycle, 2);
		fg_cycle_release(&c);
		free(text);
	}
}

struct opt_case { const char *key; const char *value; };

Test(cycle, optional_fields_with_wrong_types_are_ignored)
{
	static const struct opt_case cases[] = {
		{ "run_id", "17" }, { "run_id", "null" }, { "run_id", "[\"r\"]" },
		{ "synthetic", "\"true\"" }, { "synthetic", "1" }, { "synthetic", "false" },
		{ "stalled", "\"yes\"" }, { "stalled", "1" }, { "stalled", "null" },
		{ "format", "\"telepathy\"" }, { "format", "3" }, { "format", "\"MARKER\"" },
		{ "findings", "{}" }, { "findings", "\"none\"" }, { "findings", "null" },
		{ "reviewer_log", "7" }, { "reviewer_log", "\"../../etc/passwd\"" },
		{ "reviewer_log", "\"sub/x.log\"" }, { "reviewer_log", "\"..\"" },
		{ "reviewer_log", "\"\"" },
		{ "unknown_field", "{\"nested\": [1, 2, {\"x\": null}]}" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *text = cycle_patched(cases[i].key, cases[i].value);
		char err[128] = "";
		struct fg_cycle c;

		fg_cycle_init(&c);
		cr_expect_eq(fg_cycle_parse(&c, text, strlen(text), err, sizeof(err)), 0, "%s: %s", text, err);
		cr_expect_null(c.run_id, "%s", text);
		cr_expect_not(c.synthetic, "%s", text);
		cr_expect_not(c.stalled, "%s", text);
		cr_expect_not(c.j.has_format, "%s", text);
		cr_expect_not(c.j.has_findings, "%s", text);
		cr_expect_null(c.reviewer_log, "%s", text);
		cr_expect_str_eq(c.j.feedback, "fix it");
		fg_cycle_release(&c);
		free(text);
	}
}
