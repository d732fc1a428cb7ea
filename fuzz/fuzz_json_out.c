/*
 * fuzz_json_out.c - no JSON the programs print or write ever holds bytes
 * that are not UTF-8, and `report` reads every result `run` writes.
 *
 * The input is taken as a cycle file and as a summary file. Whatever the
 * readers accept goes through the writers a run uses: the cycle as `sweep`
 * prints it and as the entrypoint writes it, and a result holding it whose
 * error message is the raw input (an agent's output line is such an
 * unvalidated string). Every output must be valid UTF-8, and the result
 * must parse back within the report reader's bounds.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forge/json.h"
#include "forge/cycle.h"
#include "forge/summary.h"
#include "forge/text.h"
#include "result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must_be_utf8(const char *s)
{
	if (fg_utf8_check(s, strlen(s), NULL))
		abort();
}

static void result_of(const struct fg_cycle *c, const uint8_t *data, size_t size)
{
	char *msg = malloc(size + 1);
	struct rn_cycles cs;
	struct rn_result res = {
		.step = "s", .skill = "k", .run_id = "0123456789abcdef", .engine = "local",
		.review_state = FG_STATE_FAILED,
	};
	char *text;
	cJSON *back;

	/* The raw bytes as a C string, as an output line reaches the result. */
	memcpy(msg, data, size);
	msg[size] = '\0';
	res.error_message = msg;
	rn_cycles_init(&cs);
	if (c)
		rn_cycles_put(&cs, c, false, 0);
	res.cycles = &cs;
	text = rn_result_to_json(&res);
	must_be_utf8(text);
	back = fg_json_parse_bounded(text, strlen(text), RN_RESULT_MAX_TOKENS, NULL, 0);
	if (!back || strlen(text) > RN_RESULT_MAX_BYTES)
		abort();
	cJSON_Delete(back);
	free(text);
	rn_cycles_release(&cs);
	free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_cycle c;
	struct fg_summary s;
	char err[256] = "";
	int ok;

	fg_cycle_init(&c);
	ok = fg_cycle_parse(&c, (const char *)data, size, err, sizeof(err)) == 0;
	if (ok) {
		cJSON *arr = cJSON_CreateArray();
		char *text;

		/* What `sweep` prints and what the entrypoint writes. */
		cJSON_AddItemToArray(arr, fg_cycle_to_cjson(&c));
		text = fg_json_print(arr);
		must_be_utf8(text);
		free(text);
		cJSON_Delete(arr);
		text = fg_cycle_to_json(&c);
		must_be_utf8(text);
		free(text);
	}
	must_be_utf8(err);
	result_of(ok ? &c : NULL, data, size);
	fg_cycle_release(&c);
	fg_summary_init(&s);
	if (fg_summary_parse(&s, (const char *)data, size, err, sizeof(err)) == 0) {
		must_be_utf8(s.step);
		must_be_utf8(s.skill);
		must_be_utf8(s.task_key);
		must_be_utf8(s.run_id);
	}
	fg_summary_release(&s);
	return 0;
}
