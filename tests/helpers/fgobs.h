/*
 * fgobs.h - the fixture of the tests of forge-runner's log, records and
 * metrics (tests/e2e/test_log.c, test_record.c, test_metrics.c): a
 * scripted entrypoint run by forge-runner, and its log read back event by
 * event from either form (text or JSON lines) into one shape.
 */
#ifndef FGOBS_H
#define FGOBS_H

#include <stdbool.h>
#include <stddef.h>

#include "fgtest.h"
#include "fgws.h"

#define MAX_FIELDS 32

/* One parsed log line: text lines are split into key/value pairs (values
 * unescaped), JSON lines are kept as the parsed object. */
struct fgo_ev {
	char *level;   /* lower case */
	char *event;
	size_t nf;
	char *key[MAX_FIELDS];
	char *val[MAX_FIELDS];
	cJSON *json;
};

struct fgo {
	struct fgw w;    /* the tree: ws (README), ep.sh, runner.log */
	char *script;
	int json;
	struct fgt_proc p;
	struct fgo_ev *evs;
	size_t nev;
};

/* Frees what e holds. */
void fgo_ev_release(struct fgo_ev *e);

/* Parses every line of path (each must be well formed) into evs. */
void fgo_load_log(const char *path, int json, struct fgo_ev **evs, size_t *nev);

/* The value of key as text (JSON strings as they are, other JSON values
 * printed), owned; NULL if the event lacks it. */
char *fgo_ev_val(const struct fgo_ev *e, const char *key);

/* true when e is event and, with key, its field key equals val. */
bool fgo_ev_is(const struct fgo_ev *e, const char *event, const char *key, const char *val);

/* The number of events of the last run that fgo_ev_is() matches. */
int fgo_count_ev(const struct fgo *o, const char *event, const char *key, const char *val);

/* The first event of the last run that fgo_ev_is() matches (borrowed), or
 * NULL. */
const struct fgo_ev *fgo_find_ev(const struct fgo *o, const char *event, const char *key,
				const char *val);

/* ---- running ---- */
void fgo_init(struct fgo *o, const char *body);

/* Runs `forge-runner run` on the tree with --log-file and the given format,
 * extra args and environment changes (both NULL-terminated or NULL), then
 * parses the log (when it exists). The environment knobs under test start
 * unset, so the host's settings cannot leak in. */
void fgo_exec(struct fgo *o, int json, const char *const *extra, const char *const *env);

/* Removes the tree and frees what o holds. */
void fgo_release(struct fgo *o);

/* Owned path of the step's cycle file N in the workspace. */
char *fgo_ws_cycle(const struct fgo *o, int n);

/* The run id of the run whose log is loaded (from run_start). */
char *fgo_run_id_of(const struct fgo *o);

#endif
