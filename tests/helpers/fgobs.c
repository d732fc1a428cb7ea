/*
 * fgobs.c - the runner log's fixture (see fgobs.h).
 */
#include "fgobs.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

/* cyc N VERDICT [FEEDBACK] [ELAPSED] [RUN_ID]; FEEDBACK is inserted into the
 * JSON string as is, so it may carry JSON escapes. */
static const char *FGO_SCRIPT_HEAD =
	"#!/bin/sh\n"
	FGE_SEAL_LINES
	"while [ $# -gt 0 ]; do case $1 in --step) S=$2; shift;; --workspace) W=$2; shift;; esac; shift; done\n"
	"D=$W/.forge/$S\n"
	"cyc() {\n"
	"  printf '{\"cycle\":%s,\"max_cycles\":%s,\"verdict\":\"%s\",\"feedback\":\"%s\",\"skill\":\"sk\","
	"\"elapsed_seconds\":%s,\"timestamp\":\"2026-01-01T00:00:00Z\",\"run_id\":\"%s\"}\\n' "
	"\"$1\" \"${MAX:-3}\" \"$2\" \"${3:-fb$1}\" \"${4:-1}\" \"${5:-$FORGE_RUN_ID}\" "
	"| fgseal \"$S\" \"review_cycle_$1.json\" > \"$D/.c$1.tmp\"\n"
	"  mv \"$D/.c$1.tmp\" \"$D/review_cycle_$1.json\"\n"
	"}\n"
	"wait_log() { i=0; while ! grep -q \"$1\" \"$LOG\" 2>/dev/null; do i=$((i+1)); "
	"[ $i -gt 3000 ] && exit 99; sleep 0.01; done; }\n";

/* ---- parsing the log ---- */

static bool fgo_ts_ok(const char *s, size_t n)
{
	static const char pat[] = "dddd-dd-ddTdd:dd:dd.dddZ";

	if (n != sizeof(pat) - 1)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (pat[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != pat[i])
			return false;
	}
	return true;
}

static int fgo_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Reads one text value at *pp (bare or quoted with C escapes) into an owned
 * string; fails the test on a malformed value. */
static char *fgo_text_value(const char **pp, const char *line)
{
	const char *p = *pp;
	char *out = malloc(strlen(p) + 1);
	size_t o = 0;

	cr_assert_not_null(out);
	if (*p != '"') {
		while (*p && *p != ' ') {
			unsigned char c = (unsigned char)*p;

			cr_assert(c > 0x20 && c < 0x7f && c != '"' && c != '=' && c != '\\',
				  "unquoted value with byte 0x%02x: %s", c, line);
			out[o++] = *p++;
		}
		cr_assert(o > 0, "empty bare value: %s", line);
		out[o] = '\0';
		*pp = p;
		return out;
	}
	for (p++; *p && *p != '"'; p++) {
		unsigned char c = (unsigned char)*p;

		cr_assert(c >= 0x20 && c != 0x7f, "raw control byte in a quoted value: %s", line);
		if (c != '\\') {
			out[o++] = *p;
			continue;
		}
		p++;
		if (*p == 'n' || *p == 'r' || *p == 't')
			out[o++] = *p == 'n' ? '\n' : *p == 'r' ? '\r' : '\t';
		else if (*p == '"' || *p == '\\')
			out[o++] = *p;
		else if (*p == 'x' && fgo_hexval(p[1]) >= 0 && fgo_hexval(p[2]) >= 0)
			out[o++] = (char)(fgo_hexval(p[1]) * 16 + fgo_hexval(p[2])), p += 2;
		else
			cr_assert_fail("bad escape '\\%c': %s", *p, line);
	}
	cr_assert_eq(*p, '"', "unterminated quoted value: %s", line);
	out[o] = '\0';
	*pp = p + 1;
	return out;
}

/* `TS LEVEL event key=value...`, exactly one space between parts. */
static void fgo_parse_text_line(const char *line, struct fgo_ev *e)
{
	static const char *const levels[] = { "DEBUG", "INFO", "WARN", "ERROR" };
	static const char *const lower[] = { "debug", "info", "warn", "error" };
	const char *p = strchr(line, ' '), *q;

	cr_assert(p && fgo_ts_ok(line, (size_t)(p - line)), "bad timestamp: %s", line);
	q = strchr(++p, ' ');
	cr_assert_not_null(q, "no event: %s", line);
	for (int i = 0; i < 4 && !e->level; i++) {
		if ((size_t)(q - p) == strlen(levels[i]) && !strncmp(p, levels[i], (size_t)(q - p)))
			e->level = strdup(lower[i]);
	}
	cr_assert_not_null(e->level, "bad level: %s", line);
	p = q + 1;
	e->event = fgo_text_value(&p, line);
	while (*p) {
		cr_assert_eq(*p, ' ', "junk after a value: %s", line);
		q = strchr(++p, '=');
		cr_assert(q && q > p && e->nf < MAX_FIELDS, "bad field: %s", line);
		for (const char *k = p; k < q; k++)
			cr_assert(isalnum((unsigned char)*k) || *k == '_', "bad key: %s", line);
		e->key[e->nf] = fgt_fmt("%.*s", (int)(q - p), p);
		p = q + 1;
		e->val[e->nf++] = fgo_text_value(&p, line);
	}
}

static void fgo_parse_json_line(const char *line, struct fgo_ev *e)
{
	const cJSON *ts, *lv, *evn;

	e->json = cJSON_Parse(line);
	cr_assert_not_null(e->json, "log line is not JSON: %s", line);
	ts = cJSON_GetObjectItem(e->json, "ts");
	lv = cJSON_GetObjectItem(e->json, "level");
	evn = cJSON_GetObjectItem(e->json, "event");
	cr_assert(cJSON_IsString(ts) && fgo_ts_ok(ts->valuestring, strlen(ts->valuestring)),
		  "bad ts: %s", line);
	cr_assert(cJSON_IsString(lv) && cJSON_IsString(evn), "no level or event: %s", line);
	cr_assert(!strcmp(lv->valuestring, "debug") || !strcmp(lv->valuestring, "info") ||
		  !strcmp(lv->valuestring, "warn") || !strcmp(lv->valuestring, "error"),
		  "bad level: %s", line);
	e->level = strdup(lv->valuestring);
	e->event = strdup(evn->valuestring);
}

void fgo_ev_release(struct fgo_ev *e)
{
	free(e->level);
	free(e->event);
	for (size_t i = 0; i < e->nf; i++) {
		free(e->key[i]);
		free(e->val[i]);
	}
	cJSON_Delete(e->json);
}

/* Parses every line of path (each must be well formed) into evs. */
void fgo_load_log(const char *path, int json, struct fgo_ev **evs, size_t *nev)
{
	char *text = fgt_read(path, NULL), *line;

	cr_assert_not_null(text, "no log file '%s'", path);
	for (line = text; *line;) {
		char *nl = strchr(line, '\n');

		cr_assert_not_null(nl, "last log line not terminated: %s", line);
		*nl = '\0';
		*evs = realloc(*evs, (*nev + 1) * sizeof(**evs));
		cr_assert_not_null(*evs);
		memset(&(*evs)[*nev], 0, sizeof(**evs));
		if (json)
			fgo_parse_json_line(line, &(*evs)[(*nev)++]);
		else
			fgo_parse_text_line(line, &(*evs)[(*nev)++]);
		line = nl + 1;
	}
	free(text);
}

/* The value of key as text (JSON strings as they are, other JSON values
 * printed), owned; NULL if the event lacks it. */
char *fgo_ev_val(const struct fgo_ev *e, const char *key)
{
	const cJSON *v;

	if (!e->json) {
		for (size_t i = 0; i < e->nf; i++)
			if (!strcmp(e->key[i], key))
				return strdup(e->val[i]);
		return NULL;
	}
	v = cJSON_GetObjectItem(e->json, key);
	if (!v)
		return NULL;
	return cJSON_IsString(v) ? strdup(v->valuestring) : cJSON_PrintUnformatted(v);
}

bool fgo_ev_is(const struct fgo_ev *e, const char *event, const char *key, const char *val)
{
	char *v;
	bool ok;

	if (strcmp(e->event, event))
		return false;
	if (!key)
		return true;
	v = fgo_ev_val(e, key);
	ok = v && !strcmp(v, val);
	free(v);
	return ok;
}

int fgo_count_ev(const struct fgo *o, const char *event, const char *key, const char *val)
{
	int n = 0;

	for (size_t i = 0; i < o->nev; i++)
		n += fgo_ev_is(&o->evs[i], event, key, val);
	return n;
}

const struct fgo_ev *fgo_find_ev(const struct fgo *o, const char *event, const char *key,
				const char *val)
{
	for (size_t i = 0; i < o->nev; i++)
		if (fgo_ev_is(&o->evs[i], event, key, val))
			return &o->evs[i];
	return NULL;
}

/* ---- running ---- */

void fgo_init(struct fgo *o, const char *body)
{
	fgw_init(&o->w);
	o->script = fgw_script(&o->w, "ep.sh", FGO_SCRIPT_HEAD, body);
	fgw_write(&o->w, "ws/README", "workspace\n");
}

static void fgo_clear_events(struct fgo *o)
{
	for (size_t i = 0; i < o->nev; i++)
		fgo_ev_release(&o->evs[i]);
	free(o->evs);
	o->evs = NULL;
	o->nev = 0;
}

/* Runs `forge-runner run` on the tree with --log-file and the given format,
 * extra args and environment changes (both NULL-terminated or NULL), then
 * parses the log (when it exists). The environment knobs under test start
 * unset, so the host's settings cannot leak in. */
void fgo_exec(struct fgo *o, int json, const char *const *extra, const char *const *env)
{
	const char *argv[48];
	const char *envv[16] = {
		"FORGE_LOG_LEVEL", "AUTO_REVIEW_RECORD_POLLED_FILES", "FORGE_REVIEW_RECORDING_DIR",
		"AUTO_REVIEW_POLL_INTERVAL", "FORGE_ENGINE",
	};
	size_t n = 0, ne = 5;
	char *logenv = fgt_fmt("LOG=%s", o->w.log);
	const char *fixed[] = {
		FG_RUNNER_BIN, "run", "--engine", "local", "--workspace", o->w.ws, "--step", "impl",
		"--skill", "sk", "--entrypoint", o->script, "--log-format", json ? "json" : "text",
		"--log-file", o->w.log,
	};

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		argv[n++] = fixed[i];
	for (size_t i = 0; extra && extra[i]; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	envv[ne++] = logenv;
	for (size_t i = 0; env && env[i]; i++)
		envv[ne++] = env[i];
	envv[ne] = NULL;
	o->json = json;
	fgt_proc_release(&o->p);
	memset(&o->p, 0, sizeof(o->p));
	cr_assert_eq(fgt_run(&o->p, argv, envv, NULL, NULL, 60), 0);
	cr_assert_eq(o->p.timed_out, 0, "runner hung; stderr: %s", o->p.err);
	fgo_clear_events(o);
	if (fgt_exists(o->w.log))
		fgo_load_log(o->w.log, json, &o->evs, &o->nev);
	free(logenv);
}

void fgo_release(struct fgo *o)
{
	fgo_clear_events(o);
	fgt_proc_release(&o->p);
	fgw_release(&o->w);
	free(o->script);
}

/* Owned path of the step's cycle file N in the workspace. */
char *fgo_ws_cycle(const struct fgo *o, int n)
{
	return fgt_fmt("%s/.forge/impl/review_cycle_%d.json", o->w.ws, n);
}

/* The run id of the run whose log is loaded (from run_start). */
char *fgo_run_id_of(const struct fgo *o)
{
	const struct fgo_ev *e = fgo_find_ev(o, "run_start", NULL, NULL);

	cr_assert_not_null(e, "no run_start event");
	return fgo_ev_val(e, "run_id");
}
