/*
 * fg-seal - the tests' stand-in for the entrypoint's sealing (forge/seal.h),
 * for scripted entrypoints that write cycle files and frames themselves:
 *
 *   fg-seal KEY STEP NAME < record > sealed   a cycle file (NAME
 *       review_cycle_N.json) or the summary (review_summary.json): the
 *       record as read (trailing newlines cut) sealed for its own run_id,
 *       STEP, NAME and N (0 for the summary), as a compact object;
 *   fg-seal KEY < frame-line > sealed-line    a frame (@@forge-review ...),
 *       sealed for its header's run_id, step and file;
 *   fg-seal KEY STEP --cycles DIR < lines       many cycle files at once:
 *       each line "N RECORD" is what the first form seals for NAME
 *       review_cycle_N.json, written to DIR/.cN.tmp and renamed to
 *       DIR/review_cycle_N.json, one line after the other (what the scripted
 *       entrypoints' cyc() does with one fg-seal and one mv per cycle; one
 *       process for thousands of cycles, which under AddressSanitizer saves
 *       some 30 ms of start-up and leak check a cycle).
 * KEY is the line forge-runner sends on the entrypoint's stdin (64 hex
 * digits); "" seals nothing (the input is copied). Input that is not a JSON
 * object (a deliberately broken record) is copied unchanged. Exit 0, 2 on
 * usage errors.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
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
	for (got = fread(chunk, 1, sizeof(chunk), stdin); got > 0; got = fread(chunk, 1, sizeof(chunk), stdin))
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

/* Seals text (n bytes, NUL-terminated) as the record NAME of STEP (frame:
 * for its header) and writes it to out. key NULL: copied unchanged. */
static void seal_to(FILE *out, const struct fg_seal_key *k, const char *step, const char *name,
		    const char *text, size_t n)
{
	struct fg_seal_bind b = { 0 };
	cJSON *tree = NULL;
	size_t out_n = 0;
	char *sealed = NULL;
	int frame = fg_frame_is(text, n);

	if (k && (frame || name) && !bind_of(text, n, step, name, frame, &b, &tree)) {
		size_t skip = frame ? FG_FRAME_PREFIX_LEN : 0;

		sealed = fg_seal_append(k, frame ? FG_SEAL_FRAME : FG_SEAL_FILE, &b, text + skip, n - skip,
					&out_n);
	}
	if (sealed && frame)
		fputs(FG_FRAME_PREFIX, out);
	fwrite(sealed ? sealed : text, 1, sealed ? out_n : n, out);
	if (frame)
		fputc('\n', out);
	cJSON_Delete(tree);
	free(sealed);
}

/* --cycles DIR: one "N RECORD" line after the other. 0, or 1 on a bad line
 * or a failed write (said on stderr). */
static int seal_cycles(const struct fg_seal_key *k, const char *step, const char *dir)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int status = 0;

	while (status == 0 && (len = getline(&line, &cap, stdin)) > 0) {
		char *sp = strchr(line, ' ');
		char *tmp, *name;
		FILE *f;

		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!sp || sp == line) {
			fprintf(stderr, "fg-seal: not \"N RECORD\": '%s'\n", line);
			status = 1;
			break;
		}
		*sp = '\0';
		tmp = fg_xasprintf("%s/.c%s.tmp", dir, line);
		name = fg_xasprintf("review_cycle_%s.json", line);
		f = fopen(tmp, "w");
		if (!f) {
			fprintf(stderr, "fg-seal: cannot open '%s': %s\n", tmp, strerror(errno));
			status = 1;
		} else {
			char *path = fg_xasprintf("%s/%s", dir, name);

			seal_to(f, k, step, name, sp + 1, (size_t)(line + len - (sp + 1)));
			if (fclose(f) != 0 || rename(tmp, path) != 0) {
				fprintf(stderr, "fg-seal: cannot write '%s': %s\n", path, strerror(errno));
				status = 1;
			}
			free(path);
		}
		free(tmp);
		free(name);
	}
	free(line);
	return status;
}

int main(int argc, char **argv)
{
	struct fg_seal_key k;
	size_t n = 0;
	char *text;

	if (argc != 2 && argc != 4 && !(argc == 5 && !strcmp(argv[3], "--cycles"))) {
		fprintf(stderr, "usage: fg-seal KEY [STEP NAME | STEP --cycles DIR] < record\n");
		return 2;
	}
	if (*argv[1] && fg_seal_key_parse(argv[1], strlen(argv[1]), &k)) {
		fprintf(stderr, "fg-seal: not a key: '%s'\n", argv[1]);
		return 2;
	}
	if (argc == 5)
		return seal_cycles(*argv[1] ? &k : NULL, argv[2], argv[4]);
	text = slurp(&n);
	seal_to(stdout, *argv[1] ? &k : NULL, argc == 4 ? argv[2] : NULL, argc == 4 ? argv[3] : NULL,
		text, n);
	free(text);
	return 0;
}
