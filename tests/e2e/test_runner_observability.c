/*
 * test_runner_observability.c - issue 5's "Done when", through the real
 * `forge-runner run --engine local`: every event of a normal run, a timeout,
 * a stale-clear, a foreign run_id, a corrupt file and a sweep catch in both
 * log forms; FORGE_LOG_LEVEL, --log-file appending and the SIGHUP reopen;
 * the three recording modes; metrics accumulated by several runs sharing one
 * file (sequentially and at once) and checked by promtool.
 *
 * As in test_runner_run.c, the entrypoint is a scripted --entrypoint that
 * writes cycle files itself (atomically, with mv). Scripts that must know the
 * runner saw something wait for its log line instead of sleeping.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(runner_obs, .timeout = 120);

/* cyc N VERDICT [FEEDBACK] [ELAPSED] [RUN_ID]; FEEDBACK is inserted into the
 * JSON string as is, so it may carry JSON escapes. */
static const char *script_head =
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

#define MAX_FIELDS 32

/* One parsed log line: text lines are split into key/value pairs (values
 * unescaped), JSON lines are kept as the parsed object. */
struct ev {
	char *level;   /* lower case */
	char *event;
	size_t nf;
	char *key[MAX_FIELDS];
	char *val[MAX_FIELDS];
	cJSON *json;
};

struct ob {
	struct fgw w;    /* the tree: ws (README), ep.sh, runner.log */
	char *script;
	int json;
	struct fgt_proc p;
	struct ev *evs;
	size_t nev;
};

/* ---- parsing the log ---- */

static bool ts_ok(const char *s, size_t n)
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

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Reads one text value at *pp (bare or quoted with C escapes) into an owned
 * string; fails the test on a malformed value. */
static char *text_value(const char **pp, const char *line)
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
		else if (*p == 'x' && hexval(p[1]) >= 0 && hexval(p[2]) >= 0)
			out[o++] = (char)(hexval(p[1]) * 16 + hexval(p[2])), p += 2;
		else
			cr_assert_fail("bad escape '\\%c': %s", *p, line);
	}
	cr_assert_eq(*p, '"', "unterminated quoted value: %s", line);
	out[o] = '\0';
	*pp = p + 1;
	return out;
}

/* `TS LEVEL event key=value...`, exactly one space between parts. */
static void parse_text_line(const char *line, struct ev *e)
{
	static const char *const levels[] = { "DEBUG", "INFO", "WARN", "ERROR" };
	static const char *const lower[] = { "debug", "info", "warn", "error" };
	const char *p = strchr(line, ' '), *q;

	cr_assert(p && ts_ok(line, (size_t)(p - line)), "bad timestamp: %s", line);
	q = strchr(++p, ' ');
	cr_assert_not_null(q, "no event: %s", line);
	for (int i = 0; i < 4 && !e->level; i++) {
		if ((size_t)(q - p) == strlen(levels[i]) && !strncmp(p, levels[i], (size_t)(q - p)))
			e->level = strdup(lower[i]);
	}
	cr_assert_not_null(e->level, "bad level: %s", line);
	p = q + 1;
	e->event = text_value(&p, line);
	while (*p) {
		cr_assert_eq(*p, ' ', "junk after a value: %s", line);
		q = strchr(++p, '=');
		cr_assert(q && q > p && e->nf < MAX_FIELDS, "bad field: %s", line);
		for (const char *k = p; k < q; k++)
			cr_assert(isalnum((unsigned char)*k) || *k == '_', "bad key: %s", line);
		e->key[e->nf] = fgt_fmt("%.*s", (int)(q - p), p);
		p = q + 1;
		e->val[e->nf++] = text_value(&p, line);
	}
}

static void parse_json_line(const char *line, struct ev *e)
{
	const cJSON *ts, *lv, *evn;

	e->json = cJSON_Parse(line);
	cr_assert_not_null(e->json, "log line is not JSON: %s", line);
	ts = cJSON_GetObjectItem(e->json, "ts");
	lv = cJSON_GetObjectItem(e->json, "level");
	evn = cJSON_GetObjectItem(e->json, "event");
	cr_assert(cJSON_IsString(ts) && ts_ok(ts->valuestring, strlen(ts->valuestring)),
		  "bad ts: %s", line);
	cr_assert(cJSON_IsString(lv) && cJSON_IsString(evn), "no level or event: %s", line);
	cr_assert(!strcmp(lv->valuestring, "debug") || !strcmp(lv->valuestring, "info") ||
		  !strcmp(lv->valuestring, "warn") || !strcmp(lv->valuestring, "error"),
		  "bad level: %s", line);
	e->level = strdup(lv->valuestring);
	e->event = strdup(evn->valuestring);
}

static void ev_release(struct ev *e)
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
static void load_log(const char *path, int json, struct ev **evs, size_t *nev)
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
			parse_json_line(line, &(*evs)[(*nev)++]);
		else
			parse_text_line(line, &(*evs)[(*nev)++]);
		line = nl + 1;
	}
	free(text);
}

/* The value of key as text (JSON strings as they are, other JSON values
 * printed), owned; NULL if the event lacks it. */
static char *ev_val(const struct ev *e, const char *key)
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

static bool ev_is(const struct ev *e, const char *event, const char *key, const char *val)
{
	char *v;
	bool ok;

	if (strcmp(e->event, event))
		return false;
	if (!key)
		return true;
	v = ev_val(e, key);
	ok = v && !strcmp(v, val);
	free(v);
	return ok;
}

static int count_ev(const struct ob *o, const char *event, const char *key, const char *val)
{
	int n = 0;

	for (size_t i = 0; i < o->nev; i++)
		n += ev_is(&o->evs[i], event, key, val);
	return n;
}

static const struct ev *find_ev(const struct ob *o, const char *event, const char *key,
				const char *val)
{
	for (size_t i = 0; i < o->nev; i++)
		if (ev_is(&o->evs[i], event, key, val))
			return &o->evs[i];
	return NULL;
}

/* ---- running ---- */

static void ob_setup(struct ob *o, const char *body)
{
	fgw_init(&o->w);
	o->script = fgw_script(&o->w, "ep.sh", script_head, body);
	fgw_write(&o->w, "ws/README", "workspace\n");
}

static void ob_clear_events(struct ob *o)
{
	for (size_t i = 0; i < o->nev; i++)
		ev_release(&o->evs[i]);
	free(o->evs);
	o->evs = NULL;
	o->nev = 0;
}

/* Runs `forge-runner run` on the tree with --log-file and the given format,
 * extra args and environment changes (both NULL-terminated or NULL), then
 * parses the log (when it exists). The environment knobs under test start
 * unset, so the host's settings cannot leak in. */
static void ob_exec(struct ob *o, int json, const char *const *extra, const char *const *env)
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
	ob_clear_events(o);
	if (fgt_exists(o->w.log))
		load_log(o->w.log, json, &o->evs, &o->nev);
	free(logenv);
}

static void ob_free(struct ob *o)
{
	ob_clear_events(o);
	fgt_proc_release(&o->p);
	fgw_release(&o->w);
	free(o->script);
}

/* Owned path of the step's cycle file N in the workspace. */
static char *ws_cycle(const struct ob *o, int n)
{
	return fgt_fmt("%s/.forge/impl/review_cycle_%d.json", o->w.ws, n);
}

/* The run id of the run whose log is loaded (from run_start). */
static char *run_id_of(const struct ob *o)
{
	const struct ev *e = find_ev(o, "run_start", NULL, NULL);

	cr_assert_not_null(e, "no run_start event");
	return ev_val(e, "run_id");
}

/* ---- events in both forms ---- */

struct want {
	const char *event;
	const char *level;
	const char *fields;   /* space-separated keys every such event carries */
	const char *key, *val; /* NULL, or a value at least one such event has */
};

struct scenario {
	const char *name;
	const char *body;
	const char *extra[6];
	int plant_stale;
	struct want want[10];  /* exactly the events a run at level info emits */
};

#define F_START "engine image step skill task_key run_id poll_interval inotify record timeout workspace entrypoint"
#define F_EXIT "step run_id exit_code review_state review_exhausted cycles sweep_caught duration_seconds"
#define F_FILE "dir step file"
#define F_SOURCES "sources reason workspace_volume engine_host"
/* review_cycle: the text form packs cycle/max_cycles and elapsed for people. */
#define F_CYCLE_TEXT "step skill cycle verdict elapsed source file feedback"
#define F_CYCLE_JSON "step skill cycle max_cycles verdict elapsed_seconds feedback file source run_id"

static const struct scenario SCENARIOS[] = {
	{ "normal",
	  "echo 'hello out'\necho 'err line' >&2\n"
	  "cyc 1 rejected 'say \\\"hi\\\" a=b\\nnext'\ncyc 2 approved \"$LONG\" 45.2\nexit 0\n",
	  { NULL }, 1,
	  { { "run_start", "info", F_START, "engine", "local" },
	    { "detection_sources", "info", F_SOURCES, "sources", "watch,poll,sweep,stream" },
	    { "stale_cleared", "info", "dir count", "count", "1" },
	    { "output", "info", "stream line", "line", "hello out" },
	    { "review_cycle", "info", NULL, "verdict", "approved" },
	    { "sweep", "info", "sweep_caught", "sweep_caught", "0" },
	    { "run_exit", "info", F_EXIT, "review_state", "approved" } } },
	{ "timeout", "cyc 1 rejected\nexec sleep 30\n", { "--timeout", "0.5", NULL }, 0,
	  { { "run_start", "info", F_START, "timeout", "0.5" },
	    { "detection_sources", "info", F_SOURCES, "sources", "watch,poll,sweep,stream" },
	    { "review_cycle", "info", NULL, "cycle", NULL },
	    { "timeout", "warn", "timeout_seconds", "timeout_seconds", "0.5" },
	    { "sweep", "info", "sweep_caught", NULL, NULL },
	    { "run_exit", "warn", F_EXIT, "exit_code", "124" } } },
	{ "foreign_run_id", "cyc 1 rejected '' 1 someoneelse\ncyc 2 approved\nexit 0\n", { NULL }, 0,
	  { { "run_start", "info", F_START, NULL, NULL },
	    { "detection_sources", "info", F_SOURCES, "sources", "watch,poll,sweep,stream" },
	    { "cycle_ignored", "warn", F_FILE " run_id expected_run_id", "run_id", "someoneelse" },
	    { "review_cycle", "info", NULL, "file", "review_cycle_2.json" },
	    { "sweep", "info", "sweep_caught", NULL, NULL },
	    { "run_exit", "info", F_EXIT, "cycles", "1" } } },
	{ "corrupt_file",
	  "cyc 1 rejected\necho 'not json' > \"$D/review_cycle_2.json\"\ncyc 3 approved\nexit 0\n",
	  { NULL }, 0,
	  { { "run_start", "info", F_START, NULL, NULL },
	    { "detection_sources", "info", F_SOURCES, "sources", "watch,poll,sweep,stream" },
	    { "cycle_corrupt", "warn", F_FILE " error", "file", "review_cycle_2.json" },
	    { "review_cycle", "info", NULL, "file", "review_cycle_3.json" },
	    { "sweep", "info", "sweep_caught", NULL, NULL },
	    { "run_exit", "info", F_EXIT, "cycles", "2" } } },
	{ "sweep_catch", "cyc 1 rejected\ncyc 2 approved\nexit 0\n",
	  { "--no-inotify", "--poll-interval", "600", NULL }, 0,
	  { { "run_start", "info", F_START, "inotify", "false" },
	    { "detection_sources", "info", F_SOURCES, "sources", "poll,sweep,stream" },
	    { "review_cycle", "info", NULL, "source", "sweep" },
	    { "sweep", "info", "sweep_caught", "sweep_caught", "2" },
	    { "run_exit", "info", F_EXIT, "sweep_caught", "2" } } },
};

static const struct want *want_of(const struct scenario *s, const char *event)
{
	for (size_t i = 0; i < 10 && s->want[i].event; i++)
		if (!strcmp(s->want[i].event, event))
			return &s->want[i];
	return NULL;
}

static void check_fields(const struct ev *e, const char *fields, const char *scen)
{
	char *copy = strdup(fields), *save = NULL;

	for (char *k = strtok_r(copy, " ", &save); k; k = strtok_r(NULL, " ", &save)) {
		char *v = ev_val(e, k);

		cr_assert_not_null(v, "%s: %s event lacks '%s'", scen, e->event, k);
		free(v);
	}
	free(copy);
}

/* Every event seen is one the scenario names, at its level, with its fields;
 * every named event is seen, and its named value holds for one of them. */
static void check_scenario(const struct scenario *s, const struct ob *o)
{
	for (size_t i = 0; i < o->nev; i++) {
		const struct ev *e = &o->evs[i];
		const struct want *w = want_of(s, e->event);
		const char *fields = w && w->fields ? w->fields : o->json ? F_CYCLE_JSON : F_CYCLE_TEXT;

		cr_assert_not_null(w, "%s: unexpected event '%s'", s->name, e->event);
		cr_assert_str_eq(e->level, w->level, "%s: %s at %s", s->name, e->event, e->level);
		check_fields(e, fields, s->name);
	}
	for (size_t i = 0; i < 10 && s->want[i].event; i++) {
		const struct want *w = &s->want[i];

		cr_assert(count_ev(o, w->event, NULL, NULL) > 0, "%s: no %s event", s->name, w->event);
		if (w->key && w->val)
			cr_assert(count_ev(o, w->event, w->key, w->val) > 0, "%s: no %s with %s=%s",
				  s->name, w->event, w->key, w->val);
	}
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* review_cycle of the normal run: escaping in text, types and the feedback
 * cap in JSON. */
static void check_normal_cycles(const struct ob *o, const char *long_fb)
{
	const struct ev *c1 = find_ev(o, "review_cycle", "file", "review_cycle_1.json");
	const struct ev *c2 = find_ev(o, "review_cycle", "file", "review_cycle_2.json");
	char *fb1, *fb2;

	cr_assert(c1 && c2, "cycles 1 and 2 not both logged");
	fb1 = ev_val(c1, "feedback");
	fb2 = ev_val(c2, "feedback");
	cr_assert_str_eq(fb1, "say \"hi\" a=b\nnext");
	cr_assert_leq(utf8_chars(fb2), 200, "feedback has %zu characters", utf8_chars(fb2));
	cr_assert_geq(utf8_chars(fb2), 150, "feedback cut too short: %s", fb2);
	/* What is kept is the start of the feedback (a cut may end in "..."). */
	if (strlen(fb2) > 3 && !strcmp(fb2 + strlen(fb2) - 3, "..."))
		fb2[strlen(fb2) - 3] = '\0';
	cr_assert_eq(strncmp(fb2, long_fb, strlen(fb2)), 0, "not a prefix: %s", fb2);
	if (o->json) {
		cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(c2->json, "cycle")));
		cr_assert_eq(cJSON_GetObjectItem(c2->json, "cycle")->valueint, 2);
		cr_assert_eq(cJSON_GetObjectItem(c2->json, "max_cycles")->valueint, 3);
		cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(c2->json, "elapsed_seconds")));
		cr_assert_float_eq(cJSON_GetObjectItem(c2->json, "elapsed_seconds")->valuedouble, 45.2, 1e-9);
		cr_assert(cJSON_IsString(cJSON_GetObjectItem(c2->json, "source")));
	} else {
		char *cyc = ev_val(c2, "cycle"), *el = ev_val(c2, "elapsed");

		cr_assert_str_eq(cyc, "2/3");
		cr_assert_str_eq(el, "45.2s");
		free(cyc);
		free(el);
	}
	free(fb1);
	free(fb2);
}

static char *long_feedback(void)
{
	/* 300 characters, two bytes each: the cap counts characters, not bytes. */
	char *s = malloc(601);

	cr_assert_not_null(s);
	for (int i = 0; i < 300; i++) {
		s[2 * i] = (char)0xc3;
		s[2 * i + 1] = (char)0xa9;
	}
	s[600] = '\0';
	return s;
}

static void run_scenario(const struct scenario *s, int json)
{
	struct ob o = { 0 };
	char *fb = long_feedback();
	char *body = fgt_fmt("LONG='%s'\n%s", fb, s->body);

	ob_setup(&o, body);
	if (s->plant_stale) {
		char *stale = ws_cycle(&o, 7);

		fgt_write(stale, "{\"cycle\":7}\n");
		free(stale);
	}
	ob_exec(&o, json, s->extra, NULL);
	cr_assert(o.nev > 0, "%s: empty log; stderr: %s", s->name, o.p.err);
	cr_assert_eq(o.p.exit_code, strcmp(s->name, "timeout") ? 0 : 124, "%s: stderr: %s", s->name, o.p.err);
	check_scenario(s, &o);
	if (!strcmp(s->name, "normal"))
		check_normal_cycles(&o, fb);
	cr_assert_str_eq(o.evs[0].event, "run_start", "%s: first line is %s", s->name, o.evs[0].event);
	cr_assert_str_eq(o.evs[o.nev - 1].event, "run_exit", "%s: last line is %s", s->name,
			 o.evs[o.nev - 1].event);
	free(body);
	free(fb);
	ob_free(&o);
}

Test(runner_obs, every_event_in_text_form)
{
	for (size_t i = 0; i < sizeof(SCENARIOS) / sizeof(SCENARIOS[0]); i++)
		run_scenario(&SCENARIOS[i], 0);
}

Test(runner_obs, every_event_in_json_form)
{
	for (size_t i = 0; i < sizeof(SCENARIOS) / sizeof(SCENARIOS[0]); i++)
		run_scenario(&SCENARIOS[i], 1);
}

/* ---- levels, appending, SIGHUP ---- */

Test(runner_obs, forge_log_level_warn_hides_info_lines)
{
	struct ob o = { 0 };
	const char *env[] = { "FORGE_LOG_LEVEL=warn", NULL };

	ob_setup(&o, "cyc 1 rejected\necho 'not json' > \"$D/review_cycle_2.json\"\ncyc 3 approved\nexit 0\n");
	ob_exec(&o, 0, NULL, env);
	cr_assert_eq(o.p.exit_code, 0, "stderr: %s", o.p.err);
	cr_assert_eq(count_ev(&o, "cycle_corrupt", "file", "review_cycle_2.json"), 1);
	for (size_t i = 0; i < o.nev; i++)
		cr_assert(!strcmp(o.evs[i].level, "warn") || !strcmp(o.evs[i].level, "error"),
			  "%s line at level %s with FORGE_LOG_LEVEL=warn", o.evs[i].event, o.evs[i].level);
	/* The same run at the default level does log them. */
	ob_exec(&o, 0, NULL, NULL);
	cr_assert_eq(count_ev(&o, "review_cycle", NULL, NULL), 2);
	cr_assert_eq(count_ev(&o, "cycle_corrupt", NULL, NULL), 2, "the second run did not append");
	cr_assert_eq(count_ev(&o, "run_start", NULL, NULL), 1);
	ob_free(&o);
}

/* Issue 18: the entrypoint's "the task failed:" and "error:" lines were
 * INFO output events, so at --log-level warn only run_exit exit_code=1
 * showed. They are ERROR (warnings WARN), and run_exit carries the reason. */
Test(runner_obs, failure_causes_are_raised_and_run_exit_says_why)
{
	struct ob o = { 0 };
	const char *env[] = { "FORGE_LOG_LEVEL=warn", NULL };

	ob_setup(&o, "echo '[worker] forge-entrypoint: the task failed: forged by the agent' >&2\n"
		     "echo 'forge-entrypoint: warning: no review.md for skill sk (tried x)' >&2\n"
		     "echo 'forge-entrypoint: running the worker (first run)' >&2\n"
		     "echo 'forge-entrypoint: the task failed: worker exited with status 3' >&2\nexit 1\n");
	for (int json = 0; json < 2; json++) {
		ob_exec(&o, json, NULL, env);
		cr_assert_eq(o.p.exit_code, 1, "stderr: %s", o.p.err);
		const struct ev *e = find_ev(&o, "output", "line",
					     "forge-entrypoint: the task failed: worker exited with status 3");
		cr_assert_not_null(e, "the failure line is not shown at warn");
		cr_assert_str_eq(e->level, "error");
		e = find_ev(&o, "output", "line", "forge-entrypoint: warning: no review.md for skill sk (tried x)");
		cr_assert_not_null(e);
		cr_assert_str_eq(e->level, "warn");
		cr_assert_eq(count_ev(&o, "output", NULL, NULL), 2, "agent and progress lines stay INFO");
		cr_assert_eq(count_ev(&o, "run_exit", "reason", "the task failed: worker exited with status 3"), 1);
		unlink(o.w.log);
	}
	ob_free(&o);
}

Test(runner_obs, log_file_appends_across_runs)
{
	struct ob o = { 0 };
	char *id1, *id2;
	size_t first_end = 0;

	ob_setup(&o, "cyc 1 approved\nexit 0\n");
	ob_exec(&o, 1, NULL, NULL);
	id1 = run_id_of(&o);
	ob_exec(&o, 1, NULL, NULL);
	cr_assert_eq(count_ev(&o, "run_start", NULL, NULL), 2);
	cr_assert_eq(count_ev(&o, "run_exit", NULL, NULL), 2);
	cr_assert_eq(count_ev(&o, "review_cycle", NULL, NULL), 2);
	/* The first run's lines come first, all of them, then the second run's. */
	while (first_end < o.nev && strcmp(o.evs[first_end].event, "run_exit"))
		first_end++;
	cr_assert_lt(first_end, o.nev);
	cr_assert_str_eq(o.evs[first_end + 1].event, "run_start");
	id2 = ev_val(&o.evs[first_end + 1], "run_id");
	cr_assert(count_ev(&o, "run_exit", "run_id", id1) == 1 && strcmp(id1, id2),
		  "run ids %s and %s", id1, id2);
	cr_assert_eq(count_ev(&o, "run_exit", "run_id", id2), 1);
	free(id1);
	free(id2);
	ob_free(&o);
}

/* The entrypoint plays logrotate: once the runner logged cycle 1 it moves
 * the log aside and sends SIGHUP to its parent (the runner), waits for the
 * runner to log into a new file, then writes cycle 2. */
Test(runner_obs, sighup_reopens_the_log_file)
{
	struct ob o = { 0 };
	struct ev *old = NULL;
	size_t nold = 0;
	char *rotated;

	ob_setup(&o, "cyc 1 rejected '' 1\nwait_log review_cycle_1.json\n"
		     "mv \"$LOG\" \"$LOG.1\"\nkill -HUP $PPID\nwait_log log_reopened\n"
		     "cyc 2 approved\nwait_log review_cycle_2.json\nexit 0\n");
	ob_exec(&o, 1, NULL, NULL);
	cr_assert_eq(o.p.exit_code, 0, "stderr: %s", o.p.err);
	rotated = fgt_fmt("%s.1", o.w.log);
	load_log(rotated, 1, &old, &nold);
	cr_assert(nold > 0);
	cr_assert_str_eq(old[0].event, "run_start");
	/* Old file: the start and cycle 1, nothing after the rotation. */
	for (size_t i = 0; i < nold; i++) {
		cr_assert(!ev_is(&old[i], "review_cycle", "file", "review_cycle_2.json"));
		cr_assert(strcmp(old[i].event, "run_exit") && strcmp(old[i].event, "log_reopened"));
	}
	cr_assert(find_ev(&(struct ob){ .evs = old, .nev = nold }, "review_cycle", "file",
			  "review_cycle_1.json"));
	/* New file: the reopen, cycle 2 and the end; not cycle 1 again. */
	cr_assert_str_eq(o.evs[0].event, "log_reopened");
	cr_assert_eq(count_ev(&o, "review_cycle", "file", "review_cycle_2.json"), 1);
	cr_assert_eq(count_ev(&o, "review_cycle", "file", "review_cycle_1.json"), 0);
	cr_assert_eq(count_ev(&o, "run_exit", NULL, NULL), 1);
	for (size_t i = 0; i < nold; i++)
		ev_release(&old[i]);
	free(old);
	free(rotated);
	ob_free(&o);
}

/* ---- recording ---- */

static char *rec_path(const char *rec, const char *run_id, int n)
{
	return fgt_fmt("%s/impl/%s/review_cycle_%d.json", rec, run_id, n);
}

static void assert_same_file(const char *a, const char *b)
{
	size_t la, lb;
	char *ca = fgt_read(a, &la), *cb = fgt_read(b, &lb);

	cr_assert_not_null(ca, "missing '%s'", a);
	cr_assert_not_null(cb, "missing '%s'", b);
	cr_assert(la == lb && !memcmp(ca, cb, la), "'%s' differs from '%s'", a, b);
	free(ca);
	free(cb);
}

Test(runner_obs, record_log_adds_cycle_recorded_with_the_file_content)
{
	const char *extra[] = { "--record", "log", NULL };
	const char *env[] = { "AUTO_REVIEW_RECORD_POLLED_FILES=log", NULL };

	for (int twin = 0; twin < 2; twin++) {
		struct ob o = { 0 };

		ob_setup(&o, "cyc 1 rejected 'a \\\"b\\\"'\ncyc 2 approved\nexit 0\n");
		ob_exec(&o, 1, twin ? NULL : extra, twin ? env : NULL);
		cr_assert_eq(o.p.exit_code, 0, "stderr: %s", o.p.err);
		cr_assert_eq(count_ev(&o, "cycle_recorded", NULL, NULL), 2);
		cr_assert_eq(count_ev(&o, "review_cycle", NULL, NULL), 2, "review_cycle stays at info");
		cr_assert(count_ev(&o, "run_start", "record", "log"));
		for (int n = 1; n <= 2; n++) {
			char *name = fgt_fmt("review_cycle_%d.json", n), *path = ws_cycle(&o, n);
			char *content = fgt_read(path, NULL);
			const struct ev *e = find_ev(&o, "cycle_recorded", "file", name);
			char *logged = e ? ev_val(e, "content") : NULL;

			cr_assert_not_null(logged, "no cycle_recorded for %s", name);
			cr_assert_str_eq(logged, content);
			free(logged);
			free(content);
			free(path);
			free(name);
		}
		ob_free(&o);
	}
}

Test(runner_obs, record_copy_keeps_each_file_byte_for_byte_and_the_newest_rewrite)
{
	struct ob o = { 0 };
	char *rec, *id, *copy;

	ob_setup(&o, "cyc 1 rejected first\nwait_log '\"feedback\":\"first\"'\n"
		     "cyc 1 rejected second 2\nwait_log '\"feedback\":\"second\"'\n"
		     "cyc 2 approved 'caf\\u00e9 \\\"q\\\"'\nexit 0\n");
	rec = fgt_fmt("%s/rec", o.w.root);
	{
		const char *args[] = { "--record", "copy", "--recording-dir", rec, NULL };

		ob_exec(&o, 1, args, NULL);
	}
	cr_assert_eq(o.p.exit_code, 0, "stderr: %s", o.p.err);
	id = run_id_of(&o);
	for (int n = 1; n <= 2; n++) {
		char *ws = ws_cycle(&o, n);

		copy = rec_path(rec, id, n);
		assert_same_file(copy, ws);
		free(copy);
		free(ws);
	}
	copy = rec_path(rec, id, 1);
	{
		char *c = fgt_read(copy, NULL);

		cr_assert_not_null(strstr(c, "\"second\""), "the rewrite was not kept: %s", c);
		free(c);
	}
	free(copy);
	cr_assert_eq(count_ev(&o, "cycle_recorded", NULL, NULL), 0);
	cr_assert_eq(count_ev(&o, "record_error", NULL, NULL), 0);
	free(id);
	free(rec);
	ob_free(&o);
}

Test(runner_obs, record_copy_from_the_environment_twins)
{
	struct ob o = { 0 };
	char *rec, *id, *copy, *ws, *e1, *e2;

	ob_setup(&o, "cyc 1 approved\nexit 0\n");
	rec = fgt_fmt("%s/rec-env", o.w.root);
	e1 = fgt_fmt("AUTO_REVIEW_RECORD_POLLED_FILES=copy");
	e2 = fgt_fmt("FORGE_REVIEW_RECORDING_DIR=%s", rec);
	{
		const char *env[] = { e1, e2, NULL };

		ob_exec(&o, 1, NULL, env);
	}
	cr_assert_eq(o.p.exit_code, 0, "stderr: %s", o.p.err);
	id = run_id_of(&o);
	copy = rec_path(rec, id, 1);
	ws = ws_cycle(&o, 1);
	assert_same_file(copy, ws);
	cr_assert(count_ev(&o, "run_start", "record", "copy"));
	free(ws);
	free(copy);
	free(id);
	free(e1);
	free(e2);
	free(rec);
	ob_free(&o);
}

Test(runner_obs, record_copy_without_a_directory_is_a_configuration_error)
{
	const char *args[] = { "--record", "copy", NULL };
	const char *env[] = { "AUTO_REVIEW_RECORD_POLLED_FILES=copy", NULL };

	for (int twin = 0; twin < 2; twin++) {
		struct ob o = { 0 };
		char *forge, *marker;

		ob_setup(&o, "touch \"$W/ran\"\ncyc 1 approved\nexit 0\n");
		ob_exec(&o, 0, twin ? NULL : args, twin ? env : NULL);
		cr_assert_eq(o.p.exit_code, 2, "exit %d; stderr: %s", o.p.exit_code, o.p.err);
		cr_assert_not_null(strstr(o.p.err, "recording"), "unclear message: %s", o.p.err);
		cr_assert_not_null(strstr(o.p.err, "copy"), "unclear message: %s", o.p.err);
		marker = fgt_fmt("%s/ran", o.w.ws);
		forge = fgt_fmt("%s/.forge", o.w.ws);
		cr_assert(!fgt_exists(marker), "the entrypoint ran");
		cr_assert(!fgt_exists(forge), "the step directory was prepared");
		cr_assert_eq(o.nev, 0, "a run was logged");
		free(marker);
		free(forge);
		ob_free(&o);
	}
}

Test(runner_obs, record_none_records_nothing)
{
	for (int mode = 0; mode < 2; mode++) {
		struct ob o = { 0 };
		char *rec, *e;
		const char *args[] = { "--record", "none", NULL };

		ob_setup(&o, "cyc 1 rejected\ncyc 2 approved\nexit 0\n");
		rec = fgt_fmt("%s/rec", o.w.root);
		e = fgt_fmt("FORGE_REVIEW_RECORDING_DIR=%s", rec);
		{
			const char *env[] = { e, NULL };

			/* mode 0: nothing said; mode 1: --record none. A recording dir is set both times. */
			ob_exec(&o, 1, mode ? args : NULL, env);
		}
		cr_assert_eq(o.p.exit_code, 0, "stderr: %s", o.p.err);
		cr_assert(count_ev(&o, "run_start", "record", "none"));
		cr_assert_eq(count_ev(&o, "review_cycle", NULL, NULL), 2);
		cr_assert_eq(count_ev(&o, "cycle_recorded", NULL, NULL), 0);
		cr_assert(!fgt_exists(rec) || fgt_count_entries(rec) == 0, "something was recorded in '%s'", rec);
		free(e);
		free(rec);
		ob_free(&o);
	}
}

/* ---- metrics ---- */

/* 1 if the label lists "k=v,k=v" a and b hold the same pairs, in any order. */
static bool same_labels(const char *a, const char *b)
{
	char *copy, *save = NULL, *in;
	bool all = true;

	if (strlen(a) != strlen(b))
		return false;
	copy = strdup(a);
	in = fgt_fmt(",%s,", b);
	for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *k = fgt_fmt(",%s,", kv);

		all = all && strstr(in, k);
		free(k);
	}
	free(in);
	free(copy);
	return all;
}

/* The value of the sample `name{labels}` in a metrics text, where want is the
 * label set as "k=v,k=v" (any order, values without quotes or escapes);
 * -1 if there is no such sample. Fails the test on a malformed sample line. */
static double sample(const char *text, const char *name, const char *want)
{
	size_t nlen = strlen(name);

	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n'), *p = line + nlen;
		char got[512] = "";
		size_t g = 0;

		cr_assert_not_null(nl, "metrics text not newline-terminated");
		if (line[0] == '#' || strncmp(line, name, nlen) || (*p != '{' && *p != ' ')) {
			line = nl + 1;
			continue;
		}
		if (*p == '{') {
			/* Flatten {k="v",k="v"} to k=v,k=v (our values need no escapes). */
			for (p++; *p != '}'; p++) {
				cr_assert(p < nl && g + 1 < sizeof(got), "bad sample: %.*s", (int)(nl - line), line);
				if (*p != '"')
					got[g++] = *p;
			}
			got[g] = '\0';
			p++;
		}
		cr_assert_eq(*p, ' ', "bad sample: %.*s", (int)(nl - line), line);
		if (same_labels(got, want))
			return strtod(p + 1, NULL);
		line = nl + 1;
	}
	return -1;
}

static const char *const BUCKETS[] = { "1", "5", "10", "30", "60", "120", "300", "600", "+Inf" };

/* Buckets cumulative, +Inf equal to _count; want[] the expected counts per
 * bucket (NULL: only the invariants). Returns _count. */
static double check_histogram(const char *text, const char *labels, const double *want)
{
	const char *name = "forge_review_duration_seconds";
	char *bn = fgt_fmt("%s_bucket", name), *cn = fgt_fmt("%s_count", name);
	double prev = 0, count = sample(text, cn, labels);

	cr_assert_geq(count, 0, "no %s{%s}", cn, labels);
	for (size_t i = 0; i < sizeof(BUCKETS) / sizeof(BUCKETS[0]); i++) {
		char *l = fgt_fmt("%s,le=%s", labels, BUCKETS[i]);
		double v = sample(text, bn, l);

		cr_assert_geq(v, 0, "no bucket le=%s", BUCKETS[i]);
		cr_assert_geq(v, prev, "bucket le=%s (%g) below the previous (%g)", BUCKETS[i], v, prev);
		if (want)
			cr_assert_float_eq(v, want[i], 1e-9, "bucket le=%s is %g, want %g", BUCKETS[i], v, want[i]);
		prev = v;
		free(l);
	}
	cr_assert_float_eq(prev, count, 1e-9, "+Inf bucket %g != _count %g", prev, count);
	free(bn);
	free(cn);
	return count;
}

static void run_promtool(const char *path)
{
	const char *argv[] = { "/usr/bin/promtool", "check", "metrics", NULL };
	char *text = fgt_read(path, NULL);
	struct fgt_proc p;

	cr_assert_not_null(text);
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, text, 30), 0);
	cr_assert(p.exited && p.exit_code == 0, "promtool check metrics failed (%d): %s%s\n%s",
		  p.exit_code, p.out, p.err, text);
	fgt_proc_release(&p);
	free(text);
}


static void skip_without_promtool(void)
{
	if (!fgt_exists("/usr/bin/promtool"))
		cr_skip("/usr/bin/promtool is missing (Debian package prometheus)");
}

static void metrics_run(struct ob *o, const char *kind, const char *metrics, int sweep)
{
	const char *a[] = { "--metrics-file", metrics, "--no-inotify", "--poll-interval", "600", NULL };
	char *k = fgt_fmt("KIND=%s", kind);
	const char *env[] = { k, NULL };

	if (!sweep)
		a[2] = NULL;
	ob_exec(o, 1, a, env);
	cr_assert_eq(o->p.exit_code, 0, "run %s: stderr: %s", kind, o->p.err);
	cr_assert_eq(count_ev(o, "metrics_error", NULL, NULL), 0, "run %s: metrics_error", kind);
	free(k);
}

#define SK "skill=sk,step=impl"

/* Three runs share one file: approved (elapsed 0.5 and 7), exhausted (45, 45,
 * 700) and approved with its one cycle (30) caught only by the final sweep. */
Test(runner_obs, metrics_of_three_runs_add_up_in_one_file)
{
	static const double buckets[] = { 1, 1, 2, 3, 5, 5, 5, 5, 6 };
	struct ob o = { 0 };
	char *metrics, *text;

	ob_setup(&o, "case $KIND in\n"
		     "a) cyc 1 rejected '' 0.5; cyc 2 approved '' 7;;\n"
		     "b) cyc 1 rejected '' 45; cyc 2 rejected '' 45; cyc 3 rejected '' 700;;\n"
		     "c) cyc 1 approved '' 30;;\n"
		     "esac\nexit 0\n");
	metrics = fgt_fmt("%s/forge.prom", o.w.root);
	metrics_run(&o, "a", metrics, 0);
	text = fgt_read(metrics, NULL);
	cr_assert_not_null(text, "no metrics file");
	cr_assert_float_eq(check_histogram(text, SK, NULL), 2, 1e-9);
	free(text);
	metrics_run(&o, "b", metrics, 0);
	metrics_run(&o, "c", metrics, 1);
	cr_assert_eq(count_ev(&o, "review_cycle", "source", "sweep"), 1, "run c: not a sweep catch");
	text = fgt_read(metrics, NULL);
	cr_assert_float_eq(sample(text, "forge_review_cycles_total", SK), 6, 1e-9, "%s", text);
	cr_assert_float_eq(sample(text, "forge_review_verdicts_total", SK ",verdict=approved"), 2, 1e-9);
	cr_assert_float_eq(sample(text, "forge_review_verdicts_total", SK ",verdict=rejected"), 4, 1e-9);
	cr_assert_float_eq(sample(text, "forge_runner_runs_total", "step=impl,outcome=approved,skill=sk,engine=local"), 2, 1e-9);
	cr_assert_float_eq(sample(text, "forge_runner_runs_total", "step=impl,outcome=exhausted,skill=sk,engine=local"), 1, 1e-9);
	cr_assert_float_eq(sample(text, "forge_review_exhausted_total", SK), 1, 1e-9, "%s", text);
	cr_assert_float_eq(sample(text, "forge_review_sweep_caught_total", SK), 1, 1e-9, "%s", text);
	cr_assert_float_eq(check_histogram(text, SK, buckets), 6, 1e-9);
	cr_assert_float_eq(sample(text, "forge_review_duration_seconds_sum", SK), 827.5, 1e-6);
	free(text);
	if (fgt_exists("/usr/bin/promtool"))
		run_promtool(metrics);
	free(metrics);
	ob_free(&o);
}

/* Four runners start at once; each entrypoint waits until all four wrote
 * their cycles, so the runners end (and merge the file) together. */
static const char *concurrent_driver =
	"R=$1; T=$2; pids=\n"
	"for i in 1 2 3 4; do\n"
	"  mkdir -p \"$T/w$i\"\n"
	"  \"$R\" run --engine local --workspace \"$T/w$i\" --step impl --skill sk --entrypoint \"$T/ep.sh\" "
	"--metrics-file \"$T/m.prom\" --log-format json --log-file \"$T/log$i\" &\n"
	"  pids=\"$pids $!\"\n"
	"done\n"
	"rc=0; for p in $pids; do wait $p || rc=$?; done; echo rc=$rc\n";

Test(runner_obs, runners_sharing_a_metrics_file_at_once_lose_no_update)
{
	static const double buckets[] = { 0, 4, 4, 8, 8, 8, 8, 8, 8 };
	struct ob o = { 0 };
	const char *argv[7];
	char *bar, *bar_env, *metrics, *text;
	struct fgt_proc p;

	ob_setup(&o, "cyc 1 rejected '' 2\ncyc 2 approved '' 20\ntouch \"$BAR/$FORGE_RUN_ID\"\n"
		     "i=0; while [ \"$(ls \"$BAR\" | wc -l)\" -lt 4 ]; do i=$((i+1)); "
		     "[ $i -gt 3000 ] && exit 98; sleep 0.01; done\nexit 0\n");
	bar = fgt_fmt("%s/barrier", o.w.root);
	cr_assert_eq(mkdir(bar, 0755), 0);
	bar_env = fgt_fmt("BAR=%s", bar);
	argv[0] = "/bin/sh"; argv[1] = "-c"; argv[2] = concurrent_driver; argv[3] = "sh";
	argv[4] = FG_RUNNER_BIN; argv[5] = o.w.root; argv[6] = NULL;
	{
		const char *env[] = { bar_env, "FORGE_LOG_LEVEL", "AUTO_REVIEW_RECORD_POLLED_FILES", NULL };

		cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 90), 0);
	}
	cr_assert_not_null(strstr(p.out, "rc=0"), "out: %s err: %s", p.out, p.err);
	metrics = fgt_fmt("%s/m.prom", o.w.root);
	text = fgt_read(metrics, NULL);
	cr_assert_not_null(text, "no metrics file");
	cr_assert_float_eq(sample(text, "forge_review_cycles_total", SK), 8, 1e-9, "%s", text);
	cr_assert_float_eq(sample(text, "forge_review_verdicts_total", SK ",verdict=approved"), 4, 1e-9);
	cr_assert_float_eq(sample(text, "forge_review_verdicts_total", SK ",verdict=rejected"), 4, 1e-9);
	cr_assert_float_eq(sample(text, "forge_runner_runs_total", "step=impl,outcome=approved,skill=sk,engine=local"), 4, 1e-9,
			   "%s", text);
	cr_assert_float_eq(check_histogram(text, SK, buckets), 8, 1e-9);
	cr_assert_float_eq(sample(text, "forge_review_duration_seconds_sum", SK), 88, 1e-6);
	if (fgt_exists("/usr/bin/promtool"))
		run_promtool(metrics);
	fgt_proc_release(&p);
	free(text);
	free(metrics);
	free(bar_env);
	free(bar);
	ob_free(&o);
}

Test(runner_obs, promtool_accepts_the_metrics_file)
{
	struct ob o = { 0 };
	char *metrics;
	const char *slow[] = { "SLOW=1", NULL };

	skip_without_promtool();
	/* Every family (an exhausted run, a sweep catch, a timeout, a failure),
	 * and a skill label that needs escaping. */
	ob_setup(&o, "[ -n \"$SLOW\" ] && exec sleep 30\n"
		     "export MAX=2\ncyc 1 rejected '' 3\ncyc 2 rejected '' 9000\nexit 1\n");
	metrics = fgt_fmt("%s/forge.prom", o.w.root);
	{
		const char *a[] = { "--metrics-file", metrics, "--no-inotify", "--poll-interval", "600",
				    "--skill", "we\"ird", NULL };
		const char *t[] = { "--metrics-file", metrics, "--timeout", "0.2", NULL };

		ob_exec(&o, 0, a, NULL);
		cr_assert_eq(o.p.exit_code, 1, "stderr: %s", o.p.err);
		ob_exec(&o, 0, t, slow);
		cr_assert_eq(o.p.exit_code, 124, "stderr: %s", o.p.err);
	}
	run_promtool(metrics);
	{
		char *text = fgt_read(metrics, NULL);

		cr_assert_not_null(strstr(text, "skill=\"we\\\"ird\""), "label not escaped: %s", text);
		cr_assert_not_null(strstr(text, "outcome=\"timeout\""), "%s", text);
		cr_assert_not_null(strstr(text, "forge_review_sweep_caught_total{"), "%s", text);
		cr_assert_not_null(strstr(text, "forge_review_exhausted_total{"), "%s", text);
		free(text);
	}
	free(metrics);
	ob_free(&o);
}
