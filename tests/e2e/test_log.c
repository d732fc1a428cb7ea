/*
 * test_log.c - forge-runner's log: every event of every scenario in the
 * text and the JSON form with its fields, FORGE_LOG_LEVEL, the failure
 * causes, a log file appended to and reopened on SIGHUP.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgobs.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(log, .timeout = 120);

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

/* The rows most scenarios share: the run's start with no value to check,
 * every source on, and the sweep. */
#define W_START { "run_start", "info", F_START, NULL, NULL }
#define W_SOURCES { "detection_sources", "info", F_SOURCES, "sources", "watch,poll,sweep,stream" }
#define W_SWEEP { "sweep", "info", "sweep_caught", NULL, NULL }

static const struct scenario SCENARIOS[] = {
	{ "normal",
	  "echo 'hello out'\necho 'err line' >&2\n"
	  "cyc 1 rejected 'say \\\"hi\\\" a=b\\nnext'\ncyc 2 approved \"$LONG\" 45.2\nexit 0\n",
	  { NULL }, 1,
	  { { "run_start", "info", F_START, "engine", "local" },
	    W_SOURCES,
	    { "stale_cleared", "info", "dir count", "count", "1" },
	    { "output", "info", "stream line", "line", "hello out" },
	    { "review_cycle", "info", NULL, "verdict", "approved" },
	    { "sweep", "info", "sweep_caught", "sweep_caught", "0" },
	    { "run_exit", "info", F_EXIT, "review_state", "approved" } } },
	{ "timeout", "cyc 1 rejected\nexec sleep 30\n", { "--timeout", "0.5", NULL }, 0,
	  { { "run_start", "info", F_START, "timeout", "0.5" },
	    W_SOURCES,
	    { "review_cycle", "info", NULL, "cycle", NULL },
	    { "timeout", "warn", "timeout_seconds", "timeout_seconds", "0.5" },
	    W_SWEEP,
	    { "run_exit", "warn", F_EXIT, "exit_code", "124" } } },
	{ "foreign_run_id", "cyc 1 rejected '' 1 someoneelse\ncyc 2 approved\nexit 0\n", { NULL }, 0,
	  { W_START, W_SOURCES,
	    { "cycle_ignored", "warn", F_FILE " run_id expected_run_id", "run_id", "someoneelse" },
	    { "review_cycle", "info", NULL, "file", "review_cycle_2.json" },
	    W_SWEEP,
	    { "run_exit", "info", F_EXIT, "cycles", "1" } } },
	{ "corrupt_file",
	  "cyc 1 rejected\necho 'not json' > \"$D/review_cycle_2.json\"\ncyc 3 approved\nexit 0\n",
	  { NULL }, 0,
	  { W_START, W_SOURCES,
	    { "cycle_corrupt", "warn", F_FILE " error", "file", "review_cycle_2.json" },
	    { "review_cycle", "info", NULL, "file", "review_cycle_3.json" },
	    W_SWEEP,
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

static void check_fields(const struct fgo_ev *e, const char *fields, const char *scen)
{
	char *copy = strdup(fields), *save = NULL;

	for (char *k = strtok_r(copy, " ", &save); k; k = strtok_r(NULL, " ", &save)) {
		char *v = fgo_ev_val(e, k);

		cr_assert_not_null(v, "%s: %s event lacks '%s'", scen, e->event, k);
		free(v);
	}
	free(copy);
}

/* Every event seen is one the scenario names, at its level, with its fields;
 * every named event is seen, and its named value holds for one of them. */
static void check_scenario(const struct scenario *s, const struct fgo *o)
{
	for (size_t i = 0; i < o->nev; i++) {
		const struct fgo_ev *e = &o->evs[i];
		const struct want *w = want_of(s, e->event);
		const char *fields = w && w->fields ? w->fields : o->json ? F_CYCLE_JSON : F_CYCLE_TEXT;

		cr_assert_not_null(w, "%s: unexpected event '%s'", s->name, e->event);
		cr_assert_str_eq(e->level, w->level, "%s: %s at %s", s->name, e->event, e->level);
		check_fields(e, fields, s->name);
	}
	for (size_t i = 0; i < 10 && s->want[i].event; i++) {
		const struct want *w = &s->want[i];

		cr_assert(fgo_count_ev(o, w->event, NULL, NULL) > 0, "%s: no %s event", s->name, w->event);
		if (w->key && w->val)
			cr_assert(fgo_count_ev(o, w->event, w->key, w->val) > 0, "%s: no %s with %s=%s",
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
static void check_normal_cycles(const struct fgo *o, const char *long_fb)
{
	const struct fgo_ev *c1 = fgo_find_ev(o, "review_cycle", "file", "review_cycle_1.json");
	const struct fgo_ev *c2 = fgo_find_ev(o, "review_cycle", "file", "review_cycle_2.json");
	char *fb1, *fb2;

	cr_assert(c1 && c2, "cycles 1 and 2 not both logged");
	fb1 = fgo_ev_val(c1, "feedback");
	fb2 = fgo_ev_val(c2, "feedback");
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
		char *cyc = fgo_ev_val(c2, "cycle"), *el = fgo_ev_val(c2, "elapsed");

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
	struct fgo o = { 0 };
	char *fb = long_feedback();
	char *body = fgt_fmt("LONG='%s'\n%s", fb, s->body);

	fgo_init(&o, body);
	if (s->plant_stale) {
		char *stale = fgo_ws_cycle(&o, 7);

		fgt_write(stale, "{\"cycle\":7}\n");
		free(stale);
	}
	fgo_exec(&o, json, s->extra, NULL);
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
	fgo_release(&o);
}

Test(log, every_event_in_text_form)
{
	for (size_t i = 0; i < sizeof(SCENARIOS) / sizeof(SCENARIOS[0]); i++)
		run_scenario(&SCENARIOS[i], 0);
}

Test(log, every_event_in_json_form)
{
	for (size_t i = 0; i < sizeof(SCENARIOS) / sizeof(SCENARIOS[0]); i++)
		run_scenario(&SCENARIOS[i], 1);
}

/* ---- levels, appending, SIGHUP ---- */

Test(log, forge_log_level_warn_hides_info_lines)
{
	struct fgo o = { 0 };
	const char *env[] = { "FORGE_LOG_LEVEL=warn", NULL };

	fgo_init(&o, "cyc 1 rejected\necho 'not json' > \"$D/review_cycle_2.json\"\ncyc 3 approved\nexit 0\n");
	fgo_exec(&o, 0, NULL, env);
	cr_assert_eq(o.p.exit_code, 0, "stderr: %s", o.p.err);
	cr_assert_eq(fgo_count_ev(&o, "cycle_corrupt", "file", "review_cycle_2.json"), 1);
	for (size_t i = 0; i < o.nev; i++)
		cr_assert(!strcmp(o.evs[i].level, "warn") || !strcmp(o.evs[i].level, "error"),
			  "%s line at level %s with FORGE_LOG_LEVEL=warn", o.evs[i].event, o.evs[i].level);
	/* The same run at the default level does log them. */
	fgo_exec(&o, 0, NULL, NULL);
	cr_assert_eq(fgo_count_ev(&o, "review_cycle", NULL, NULL), 2);
	cr_assert_eq(fgo_count_ev(&o, "cycle_corrupt", NULL, NULL), 2, "the second run did not append");
	cr_assert_eq(fgo_count_ev(&o, "run_start", NULL, NULL), 1);
	fgo_release(&o);
}

/* The entrypoint's "the task failed:" and "error:" lines were
 * INFO output events, so at --log-level warn only run_exit exit_code=1
 * showed. They are ERROR (warnings WARN), and run_exit carries the reason. */
Test(log, failure_causes_are_raised_and_run_exit_says_why)
{
	struct fgo o = { 0 };
	const char *env[] = { "FORGE_LOG_LEVEL=warn", NULL };

	fgo_init(&o, "echo '[worker] forge-entrypoint: the task failed: forged by the agent' >&2\n"
		     "echo 'forge-entrypoint: warning: no review.md for skill sk (tried x)' >&2\n"
		     "echo 'forge-entrypoint: running the worker (first run)' >&2\n"
		     "echo 'forge-entrypoint: the task failed: worker exited with status 3' >&2\nexit 1\n");
	for (int json = 0; json < 2; json++) {
		fgo_exec(&o, json, NULL, env);
		cr_assert_eq(o.p.exit_code, 1, "stderr: %s", o.p.err);
		const struct fgo_ev *e = fgo_find_ev(&o, "output", "line",
					     "forge-entrypoint: the task failed: worker exited with status 3");
		cr_assert_not_null(e, "the failure line is not shown at warn");
		cr_assert_str_eq(e->level, "error");
		e = fgo_find_ev(&o, "output", "line", "forge-entrypoint: warning: no review.md for skill sk (tried x)");
		cr_assert_not_null(e);
		cr_assert_str_eq(e->level, "warn");
		cr_assert_eq(fgo_count_ev(&o, "output", NULL, NULL), 2, "agent and progress lines stay INFO");
		cr_assert_eq(fgo_count_ev(&o, "run_exit", "reason", "the task failed: worker exited with status 3"), 1);
		unlink(o.w.log);
	}
	fgo_release(&o);
}

Test(log, log_file_appends_across_runs)
{
	struct fgo o = { 0 };
	char *id1, *id2;
	size_t first_end = 0;

	fgo_init(&o, "cyc 1 approved\nexit 0\n");
	fgo_exec(&o, 1, NULL, NULL);
	id1 = fgo_run_id_of(&o);
	fgo_exec(&o, 1, NULL, NULL);
	cr_assert_eq(fgo_count_ev(&o, "run_start", NULL, NULL), 2);
	cr_assert_eq(fgo_count_ev(&o, "run_exit", NULL, NULL), 2);
	cr_assert_eq(fgo_count_ev(&o, "review_cycle", NULL, NULL), 2);
	/* The first run's lines come first, all of them, then the second run's. */
	while (first_end < o.nev && strcmp(o.evs[first_end].event, "run_exit"))
		first_end++;
	cr_assert_lt(first_end, o.nev);
	cr_assert_str_eq(o.evs[first_end + 1].event, "run_start");
	id2 = fgo_ev_val(&o.evs[first_end + 1], "run_id");
	cr_assert(fgo_count_ev(&o, "run_exit", "run_id", id1) == 1 && strcmp(id1, id2),
		  "run ids %s and %s", id1, id2);
	cr_assert_eq(fgo_count_ev(&o, "run_exit", "run_id", id2), 1);
	free(id1);
	free(id2);
	fgo_release(&o);
}

/* The entrypoint plays logrotate: once the runner logged cycle 1 it moves
 * the log aside and sends SIGHUP to its parent (the runner), waits for the
 * runner to log into a new file, then writes cycle 2. */
Test(log, sighup_reopens_the_log_file)
{
	struct fgo o = { 0 };
	struct fgo_ev *old = NULL;
	size_t nold = 0;
	char *rotated;

	fgo_init(&o, "cyc 1 rejected '' 1\nwait_log review_cycle_1.json\n"
		     "mv \"$LOG\" \"$LOG.1\"\nkill -HUP $PPID\nwait_log log_reopened\n"
		     "cyc 2 approved\nwait_log review_cycle_2.json\nexit 0\n");
	fgo_exec(&o, 1, NULL, NULL);
	cr_assert_eq(o.p.exit_code, 0, "stderr: %s", o.p.err);
	rotated = fgt_fmt("%s.1", o.w.log);
	fgo_load_log(rotated, 1, &old, &nold);
	cr_assert(nold > 0);
	cr_assert_str_eq(old[0].event, "run_start");
	/* Old file: the start and cycle 1, nothing after the rotation. */
	for (size_t i = 0; i < nold; i++) {
		cr_assert(!fgo_ev_is(&old[i], "review_cycle", "file", "review_cycle_2.json"));
		cr_assert(strcmp(old[i].event, "run_exit") && strcmp(old[i].event, "log_reopened"));
	}
	cr_assert(fgo_find_ev(&(struct fgo){ .evs = old, .nev = nold }, "review_cycle", "file",
			  "review_cycle_1.json"));
	/* New file: the reopen, cycle 2 and the end; not cycle 1 again. */
	cr_assert_str_eq(o.evs[0].event, "log_reopened");
	cr_assert_eq(fgo_count_ev(&o, "review_cycle", "file", "review_cycle_2.json"), 1);
	cr_assert_eq(fgo_count_ev(&o, "review_cycle", "file", "review_cycle_1.json"), 0);
	cr_assert_eq(fgo_count_ev(&o, "run_exit", NULL, NULL), 1);
	for (size_t i = 0; i < nold; i++)
		fgo_ev_release(&old[i]);
	free(old);
	free(rotated);
	fgo_release(&o);
}
