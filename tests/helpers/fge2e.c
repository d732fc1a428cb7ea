/*
 * fge2e.c - helpers for the end-to-end tests (see fge2e.h).
 */
#include "fge2e.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"

const char FGE_FAKE_EP_HEAD[] =
	"#!/bin/sh\n"
	FGE_SEAL_LINES
	"while [ $# -gt 0 ]; do case $1 in --step) S=$2; shift;; --workspace) W=$2; shift;;"
	" --skill) K=$2; shift;; esac; shift; done\n"
	"D=$W/.forge/$S\n"
	"cyc() {\n"
	"  r=${3:-$FORGE_RUN_ID}; f=${4:-fb$1}; dd=${DIR:-$D}\n"
	"  printf '{\"cycle\":%s,\"max_cycles\":%s,\"verdict\":\"%s\",\"feedback\":\"%s\",\"skill\":\"%s\","
	"\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\",\"run_id\":\"%s\"}\\n' "
	"\"$1\" \"${MAX:-3}\" \"$2\" \"$f\" \"$K\" \"$r\" | fgseal \"$S\" \"review_cycle_$1.json\" > \"$dd/.c$1.tmp\"\n"
	"  mv \"$dd/.c$1.tmp\" \"$dd/review_cycle_$1.json\"\n"
	"}\n"
	"wait_log() { i=0; while ! grep -q \"$1\" \"$LOG\"; do i=$((i+1)); [ $i -gt 3000 ] && exit 99; sleep 0.01; done; }\n";

char *fge_script(const char *dir, const char *name, const char *head, const char *body)
{
	char *path = fgt_fmt("%s/%s", dir, name);
	char *text = fgt_fmt("%s%s\n", head, body);

	fgt_write(path, text);
	fgt_chmod_x(path);
	free(text);
	return path;
}

void fge_write_in(const char *dir, const char *name, const char *content)
{
	char *path = fgt_fmt("%s/%s", dir, name);

	fgt_write(path, content);
	free(path);
}

char *fge_read_in(const char *dir, const char *name)
{
	char *path = fgt_fmt("%s/%s", dir, name);
	char *text = fgt_read(path, NULL);

	free(path);
	return text;
}

int fge_exists_in(const char *dir, const char *name)
{
	char *path = fgt_fmt("%s/%s", dir, name);
	int ok = fgt_exists(path);

	free(path);
	return ok;
}

cJSON *fge_json_file(const char *path, const char *context)
{
	char *text = fgt_read(path, NULL);
	cJSON *j;

	cr_assert_not_null(text, "no %s%s%s", path, context ? "; " : "", context ? context : "");
	j = cJSON_Parse(text);
	cr_assert_not_null(j, "%s is not JSON: %s", path, text);
	free(text);
	return j;
}

cJSON *fge_json_lines(const char *text)
{
	cJSON *all = cJSON_CreateArray();
	const char *line = text;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char *copy = fgt_fmt("%.*s", (int)len, line);
		cJSON *j = cJSON_Parse(copy);

		cr_assert_not_null(j, "log line is not JSON: '%s'", copy);
		cJSON_AddItemToArray(all, j);
		free(copy);
		line += len + (nl ? 1 : 0);
	}
	return all;
}

/* 1 if e is an event named event with key == val (key NULL: any). */
static int event_is(const cJSON *e, const char *event, const char *key, const char *val)
{
	const char *name = fge_jstr_or_null(e, "event");
	const char *v = key ? fge_jstr_or_null(e, key) : NULL;

	if (!name || strcmp(name, event))
		return 0;
	return !key || (v && !strcmp(v, val));
}

int fge_count_events(const cJSON *events, const char *event, const char *key, const char *val)
{
	const cJSON *e;
	int n = 0;

	cJSON_ArrayForEach(e, events)
		n += event_is(e, event, key, val);
	return n;
}

const cJSON *fge_find_event(const cJSON *events, const char *event, const char *key, const char *val)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, events)
		if (event_is(e, event, key, val))
			return e;
	return NULL;
}

const char *fge_jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	cr_assert(cJSON_IsString(v), "field '%s' is not a string", k);
	return v->valuestring;
}

const char *fge_jstr_or_null(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int fge_jint(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	cr_assert(cJSON_IsNumber(v), "field '%s' is not a number", k);
	return v->valueint;
}
