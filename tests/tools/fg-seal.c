/*
 * fg-seal - the tests' stand-in for the entrypoint's sealing (forge/seal.h),
 * for scripted entrypoints that write cycle files and frames themselves:
 *
 *   fg-seal KEY STEP NAME < record > sealed   a cycle file (NAME
 *       review_cycle_N.json) or the summary (review_summary.json): the
 *       record as read (trailing newlines cut) sealed for its own run_id,
 *       STEP, NAME and N (0 for the summary), as a compact object;
 *   fg-seal KEY < frame-line > sealed-line    a frame (@@forge-review ...),
 *       sealed for its header's run_id, step and file.
 * KEY is the line forge-runner sends on the entrypoint's stdin (64 hex
 * digits); "" seals nothing (the input is copied). Input that is not a JSON
 * object (a deliberately broken record) is copied unchanged. Exit 0, 2 on
 * usage errors.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/buf.h"
#include "forge/cycle.h"
#include "forge/frame.h"
#include "forge/json.h"
#include "forge/seal.h"
#include "forge/summary.h"

static char *slurp(size_t *n)
{
	struct fg_buf b;
	char chunk[4096];
	size_t got;

	fg_buf_init(&b, (size_t)16 << 20);
	while ((got = fread(chunk, 1, sizeof(chunk), stdin)) > 0)
		fg_buf_add(&b, chunk, got);
	while (b.len && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == '\r'))
		b.len--;
	return fg_buf_detach(&b, n);
}

/* The binding of a record: file (NAME) or frame (its header). 0 or -1. */
static int bind_of(const char *text, size_t n, const char *step, const char *name, int frame,
		   struct fg_seal_bind *b, cJSON **tree)
{
	const char *json = frame ? text + FG_FRAME_PREFIX_LEN : text;
	/* As lenient as cJSON: the runner decides what is valid. */
	cJSON *o = cJSON_ParseWithLength(json, n - (size_t)(json - text));
	const cJSON *cyc;

	*tree = o;
	if (!cJSON_IsObject(o))
		return -1;
	b->run_id = fg_json_str(o, "run_id");
	if (!frame) {
		b->step = step;
		b->file = name;
		if (!fg_cycle_name_parse(name, &b->cycle))
			b->cycle = 0;
		return 0;
	}
	b->step = fg_json_str(o, "step");
	b->file = fg_json_str(o, "file");
	cyc = cJSON_GetObjectItemCaseSensitive(o, "cycle");
	b->cycle = cJSON_IsObject(cyc) ? (int)fg_json_num(cyc, "cycle") : 0;
	return b->step && b->file ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct fg_seal_key k;
	struct fg_seal_bind b = { 0 };
	cJSON *tree = NULL;
	size_t n = 0, out_n = 0;
	char *text, *out = NULL;
	int frame;

	if (argc != 2 && argc != 4) {
		fprintf(stderr, "usage: fg-seal KEY [STEP NAME] < record\n");
		return 2;
	}
	text = slurp(&n);
	frame = fg_frame_is(text, n);
	if (*argv[1] && fg_seal_key_parse(argv[1], strlen(argv[1]), &k)) {
		fprintf(stderr, "fg-seal: not a key: '%s'\n", argv[1]);
		return 2;
	}
	if (*argv[1] && (frame || argc == 4) &&
	    !bind_of(text, n, argc == 4 ? argv[2] : NULL, argc == 4 ? argv[3] : NULL, frame, &b, &tree)) {
		size_t skip = frame ? FG_FRAME_PREFIX_LEN : 0;

		out = fg_seal_append(&k, frame ? FG_SEAL_FRAME : FG_SEAL_FILE, &b, text + skip, n - skip,
				     &out_n);
	}
	if (out && frame)
		fputs(FG_FRAME_PREFIX, stdout);
	fwrite(out ? out : text, 1, out ? out_n : n, stdout);
	if (frame)
		fputc('\n', stdout);
	cJSON_Delete(tree);
	free(out);
	free(text);
	return 0;
}
