/*
 * cmd_report.c - `forge-runner report`: merge result files into one auto-review
 * report (JSON, or a Markdown "Auto-Review Notes" section). The contract is
 * in report.h; the user's manual in docs/reference/report.md.
 *
 * Flow: parse options, load each result file into an entry (or a warning),
 * merge the entry into the report by key (report_put), sort by key, render,
 * write. A report holds a handful of steps, so the key lookup is a linear
 * scan: O(n^2) over the inputs, which is fine below thousands of files.
 */
#include "report.h"
#include "report_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "forge/json.h"
#include "forge/text.h"
#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/cycle.h"
#include "forge/exit.h"
#include "forge/fsutil.h"
#include "forge/names.h"
#include "forge/summary.h"
#include "cli.h"
#include "result.h"

enum { R_FORMAT = 1, R_OUTPUT, R_ONLY_OPEN, R_HELP };

const struct fg_opt rn_report_options[] = {
	{ R_FORMAT, "format", 0, "FMT", NULL, "json (default), markdown or html" },
	{ R_OUTPUT, "output", 'o', "FILE", NULL, "write the report to FILE (atomically) instead of stdout" },
	{ R_ONLY_OPEN, "only-open", 0, NULL, NULL, "only steps left exhausted, stalled, blocked, over_budget or failed" },
	{ R_HELP, "help", 'h', NULL, NULL, "show help" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

static void entry_release(struct entry *e)
{
	for (size_t i = 0; i < e->ncycles; i++)
		fg_cycle_release(&e->cycles[i]);
	if (e->audit)
		fg_audit_release(e->audit);
	FG_FREE_ALL(e->cycles, e->error, e->reason, e->cycle_dir, e->key, e->task_key, e->step, e->skill, e->run_id,
		    e->source, e->audit);
	memset(e, 0, sizeof(*e));
}

static void report_release(struct report *rp)
{
	for (size_t i = 0; i < rp->n; i++)
		entry_release(&rp->v[i]);
	free(rp->v);
	fg_strvec_release(&rp->warnings);
}

/* Warnings go to stderr as they happen and into the JSON "warnings". */
static void report_warn(struct report *rp, char *msg)
{
	rn_msg(FG_MSG_WARN, "%s", msg);
	fg_strvec_push_take(&rp->warnings, msg);
}

/* ---- loading ---- */

_Static_assert(RN_REPORT_MAX_INPUT == 72u * 1024 * 1024, "read_error() names the bound");

static const char *read_error(int r)
{
	if (r == -EFBIG)
		return "larger than 72 MiB, the most a result file of forge-runner run holds";
	if (r == -EINVAL || r == -EISDIR)
		return "not a regular file";
	return strerror(-r);
}

/* Reads path into out. The user names the file, so a symlink is followed. */
static int read_input(const char *path, struct fg_buf *out, char *err, size_t errlen)
{
	int r = fg_read_file_at(AT_FDCWD, path, RN_REPORT_MAX_INPUT, FG_READ_FOLLOW, out, NULL);
	struct stat st;

	if (r && !stat(path, &st) && S_ISDIR(st.st_mode)) {
		/* A step directory (.forge/STEP) is what one reaches for first. */
		snprintf(err, errlen, "a directory: report reads result files, the --result FILE of "
			 "'forge-runner run' (for a step directory's cycle files: 'forge-runner sweep DIR')");
		return -1;
	}
	if (r) {
		snprintf(err, errlen, "%s", read_error(r));
		return -1;
	}
	return 0;
}

/*
 * A string field that may be null or absent (*out NULL) or must hold a
 * valid name of kind (when kind >= 0). "" counts as absent. 0 or -1 with
 * err filled.
 */
static int opt_string(const cJSON *o, const char *field, int kind, char **out, char *err,
		      size_t errlen)
{
	const char *v;
	char nerr[256];

	*out = NULL;
	if (fg_json_opt_str(o, field, &v, nerr, sizeof(nerr))) {
		snprintf(err, errlen, "not a result file: %s", nerr);
		return -1;
	}
	if (!v || !v[0])
		return 0;
	if (kind >= 0 && fg_name_check((enum fg_name_kind)kind, v, strlen(v), nerr, sizeof(nerr))) {
		snprintf(err, errlen, "not a result file: %s", nerr);
		return -1;
	}
	*out = fg_xstrdup(v);
	return 0;
}

static int parse_state(const cJSON *o, struct entry *e, char *err, size_t errlen)
{
	const cJSON *v = fg_json_get(o, "review_state");
	size_t n;

	if (!v) {
		snprintf(err, errlen, "not a result file: missing field 'review_state'");
		return -1;
	}
	if (cJSON_IsString(v) && !fg_review_state_parse(v->valuestring, &e->state))
		return 0;
	/* The word older results used for disabled and no_review. */
	if (cJSON_IsString(v) && !strcmp(v->valuestring, "none")) {
		e->state = FG_STATE_NO_REVIEW;
		return 0;
	}
	n = (size_t)snprintf(err, errlen, "not a result file: field 'review_state' must be one of");
	for (int i = 0; i < FG_STATE_COUNT && n < errlen; i++)
		n += (size_t)snprintf(err + n, errlen - n, " %s,", fg_review_state_name((enum fg_review_state)i));
	if (n < errlen)
		snprintf(err + n, errlen - n, " none");
	return -1;
}

static int cmp_cycle(const void *a, const void *b)
{
	const struct fg_cycle *x = a, *y = b;

	return (x->cycle > y->cycle) - (x->cycle < y->cycle);
}

/* Each element of review_cycles must be a valid cycle object (cycle.h):
 * it is re-serialised and fed to fg_cycle_parse so both readers agree. */
static int parse_cycles(const cJSON *o, struct entry *e, char *err, size_t errlen)
{
	const cJSON *arr = fg_json_get(o, "review_cycles");
	const cJSON *it;
	char cerr[256];

	if (!cJSON_IsArray(arr)) {
		snprintf(err, errlen, "not a result file: %s",
			 arr ? "field 'review_cycles' must be an array" : "missing field 'review_cycles'");
		return -1;
	}
	e->cycles = fg_xcalloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*e->cycles));
	cJSON_ArrayForEach(it, arr) {
		char *text = cJSON_PrintUnformatted(it);
		struct fg_cycle *c = &e->cycles[e->ncycles];
		int r;

		fg_cycle_init(c);
		r = text ? fg_cycle_parse(c, text, strlen(text), cerr, sizeof(cerr)) : -ENOMEM;
		cJSON_free(text);
		if (r) {
			snprintf(err, errlen, "not a result file: review_cycles[%zu]: %s", e->ncycles,
				 r == -ENOMEM ? "out of memory" : cerr);
			return -1;
		}
		e->ncycles++;
	}
	/* Written in order by the runner; sorted anyway so "last" is the highest. */
	if (e->ncycles > 1)
		qsort(e->cycles, e->ncycles, sizeof(*e->cycles), cmp_cycle);
	return 0;
}

/* The optional failure {cause, reason}: an unknown cause (a newer
 * runner's) is none, a reason of another type is refused. */
static int parse_failure(const cJSON *o, struct entry *e, char *err, size_t errlen)
{
	const cJSON *f = fg_json_get(o, "failure");

	if (!cJSON_IsObject(f))
		return 0;
	if (fg_failure_cause_parse(fg_json_str(f, "cause"), &e->cause))
		e->cause = FG_CAUSE_NONE;
	return opt_string(f, "reason", -1, &e->reason, err, errlen);
}

/* success, exit_code and error_message: how the run ended, shown for a run
 * that failed before (or outside) any review. Each is optional; a wrong type
 * is refused like any other field. */
static int parse_outcome(const cJSON *o, struct entry *e, char *err, size_t errlen)
{
	const cJSON *ok = fg_json_get(o, "success");
	const cJSON *code = fg_json_get(o, "exit_code");

	if (code && (!cJSON_IsNumber(code) || code->valuedouble != (double)code->valueint)) {
		snprintf(err, errlen, "not a result file: field 'exit_code' must be an integer");
		return -1;
	}
	if (ok && !cJSON_IsBool(ok)) {
		snprintf(err, errlen, "not a result file: field 'success' must be a boolean");
		return -1;
	}
	e->exit_code = code ? code->valueint : 0;
	e->success = ok ? cJSON_IsTrue(ok) : e->exit_code == 0;
	if (opt_string(o, "error_message", -1, &e->error, err, errlen))
		return -1;
	return parse_failure(o, e, err, errlen);
}

/* The optional "audit" (forge/audit.h); one that does not read is left out. */
static void parse_audit(const cJSON *o, struct entry *e)
{
	const cJSON *v = fg_json_get(o, "audit");

	if (!cJSON_IsObject(v))
		return;
	e->audit = fg_xmalloc(sizeof(*e->audit));
	fg_audit_init(e->audit);
	if (!fg_audit_from_cjson(e->audit, v))
		return;
	fg_audit_release(e->audit);
	FG_FREE_AND_NULL(e->audit);
}

/* Fills e from the parsed object o. 0, or -1 with err filled; e is then
 * partly filled and the caller releases it. */
static int fill_entry(const cJSON *o, struct entry *e, char *err, size_t errlen)
{
	const cJSON *step = fg_json_get(o, "step");
	const cJSON *exh = fg_json_get(o, "review_exhausted");

	if (!cJSON_IsObject(o)) {
		snprintf(err, errlen, "not a result file: not a JSON object");
		return -1;
	}
	if (!cJSON_IsString(step)) {
		snprintf(err, errlen, "not a result file: %s",
			 step ? "field 'step' must be a string" : "missing field 'step'");
		return -1;
	}
	if (opt_string(o, "step", FG_NAME_STEP, &e->step, err, errlen) ||
	    opt_string(o, "task_key", FG_NAME_TASK_KEY, &e->task_key, err, errlen) ||
	    opt_string(o, "skill", FG_NAME_SKILL, &e->skill, err, errlen) ||
	    opt_string(o, "run_id", -1, &e->run_id, err, errlen) ||
	    opt_string(o, "cycle_dir", -1, &e->cycle_dir, err, errlen))
		return -1;
	if (!e->step) {
		snprintf(err, errlen, "not a result file: field 'step' is empty");
		return -1;
	}
	if (parse_state(o, e, err, errlen) || parse_cycles(o, e, err, errlen) ||
	    parse_outcome(o, e, err, errlen))
		return -1;
	/* review_exhausted is the runner's word; recomputed only when absent. */
	e->exhausted = cJSON_IsBool(exh) ? cJSON_IsTrue(exh) : fg_cycles_exhausted(e->cycles, e->ncycles);
	fg_usage_pair_from(&e->usage, o);
	parse_audit(o, e);
	e->key = fg_xasprintf("%s__%s", e->task_key ? e->task_key : "", e->step);
	return 0;
}

/* Loads one result file into e (initialised to zero). 0 or -1 with err. */
static int load_entry(const char *path, struct entry *e, char *err, size_t errlen)
{
	struct fg_buf b;
	cJSON *o;
	int r = -1;

	fg_buf_init(&b, RN_REPORT_MAX_INPUT);
	if (read_input(path, &b, err, errlen))
		goto out;
	/* The bounds say which one was hit ("more than N JSON tokens"), so a
	 * bound is never reported as broken JSON. */
	o = fg_json_parse_bounded(b.data, b.len, RN_RESULT_MAX_TOKENS, err, errlen);
	if (!o)
		goto out;
	r = fill_entry(o, e, err, errlen);
	cJSON_Delete(o);
	if (!r)
		e->source = fg_xstrdup(path);
out:
	fg_buf_release(&b);
	if (r)
		entry_release(e);
	return r;
}

/* ---- merging ---- */

/* The last cycle's timestamp, "" without cycles (older than any stamp;
 * the fixed-width ISO form compares correctly as a string). */
static const char *last_stamp(const struct entry *e)
{
	return e->ncycles ? e->cycles[e->ncycles - 1].timestamp : "";
}

/*
 * Adds e (taken) to the report. A key seen before keeps the newer of the
 * two (report.h), and the replacement is reported; entries of other keys
 * are never touched.
 */
static void report_put(struct report *rp, struct entry *e)
{
	struct entry *old = NULL;
	const char *to, *tn;
	int cmp;

	for (size_t i = 0; i < rp->n && !old; i++)
		if (!strcmp(rp->v[i].key, e->key))
			old = &rp->v[i];
	if (!old) {
		FG_ALLOC_GROW(rp->v, rp->n + 1, rp->cap);
		rp->v[rp->n++] = *e;
		memset(e, 0, sizeof(*e));
		return;
	}
	to = last_stamp(old);
	tn = last_stamp(e);
	cmp = strcmp(tn, to);
	if (cmp < 0) {
		report_warn(rp, fg_xasprintf("duplicate key '%s': kept '%s' (its last cycle is newer: %s "
					     "after %s), dropped '%s'", e->key, old->source, to,
					     tn[0] ? tn : "no cycles", e->source));
		entry_release(e);
		return;
	}
	if (cmp > 0)
		report_warn(rp, fg_xasprintf("duplicate key '%s': kept '%s' (its last cycle is newer: %s "
					     "after %s), dropped '%s'", e->key, e->source, tn,
					     to[0] ? to : "no cycles", old->source));
	else
		report_warn(rp, fg_xasprintf("duplicate key '%s': kept '%s' (last cycles equally recent, "
					     "named later), dropped '%s'", e->key, e->source,
					     old->source));
	entry_release(old);
	*old = *e;
	memset(e, 0, sizeof(*e));
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return strcmp(x->key, y->key);
}

/* ---- command ---- */

struct report_opts {
	bool markdown;
	bool html;
	bool only_open;
	const char *output;
	struct fg_strvec inputs;
};

static const char REPORT_USAGE[] =
	"forge-runner report RESULT.json... [--format json|markdown|html] [--only-open] [--output FILE]";

/* 0 to go on, 1 after --help (exit 0), or the usage exit code. */
static int parse_opts(int argc, char **argv, struct report_opts *o, int *code)
{
	struct fg_opts_iter it;

	fg_opts_init(&it, rn_report_options, argc, argv, 1);
	while (fg_opts_each(&it)) {
		if (it.id == R_HELP) {
			*code = rn_cmd_help(REPORT_USAGE, rn_report_options);
			return 1;
		}
		if (it.id == R_FORMAT && strcmp(it.value, "json") && strcmp(it.value, "markdown") &&
		    strcmp(it.value, "html")) {
			*code = rn_cmd_usage("report", "invalid format '%s' (json, markdown or html)", it.value);
			return 1;
		}
		if (it.id == R_FORMAT) {
			o->markdown = !strcmp(it.value, "markdown");
			o->html = !strcmp(it.value, "html");
		}
		else if (it.id == R_OUTPUT)
			o->output = it.value;
		else if (it.id == R_ONLY_OPEN)
			o->only_open = true;
		else
			fg_strvec_push(&o->inputs, it.value);
	}
	if (fg_opts_failed(&it)) {
		*code = rn_cmd_usage("report", "%s", it.err);
		return 1;
	}
	if (!o->inputs.n) {
		*code = rn_cmd_usage("report", "%s", "report needs at least one result file");
		return 1;
	}
	return 0;
}

/* Writes text to --output atomically, or to stdout. 0 or the failure code. */
static int emit(const char *output, const struct fg_buf *text)
{
	int r;

	if (!output || !strcmp(output, "-")) {
		fwrite(text->data, 1, text->len, stdout);
		if (fflush(stdout) || ferror(stdout)) {
			rn_msg(FG_MSG_ERROR, "cannot write the report to standard output");
			return FG_EXIT_RUNTIME;
		}
		return 0;
	}
	r = fg_write_atomic_path(output, text->data, text->len);
	if (r) {
		rn_msg(FG_MSG_ERROR, "cannot write '%s': %s", output, strerror(-r));
		return FG_EXIT_RUNTIME;
	}
	return 0;
}

/* Loads every input into rp; returns how many could not be used. */
static size_t load_all(const struct fg_strvec *inputs, struct report *rp)
{
	size_t bad = 0;

	for (size_t i = 0; i < inputs->n; i++) {
		struct entry e;
		char err[512];

		memset(&e, 0, sizeof(e));
		if (load_entry(inputs->v[i], &e, err, sizeof(err))) {
			report_warn(rp, fg_xasprintf("cannot read '%s': %s", inputs->v[i], err));
			bad++;
			continue;
		}
		report_put(rp, &e);
	}
	return bad;
}

int rn_cmd_report(int argc, char **argv)
{
	struct report_opts o = { 0 };
	struct report rp = { 0 };
	struct fg_buf out;
	size_t bad;
	int code = 0, r;

	fg_strvec_init(&o.inputs);
	fg_strvec_init(&rp.warnings);
	if (parse_opts(argc, argv, &o, &code)) {
		fg_strvec_release(&o.inputs);
		return code;
	}
	bad = load_all(&o.inputs, &rp);
	if (rp.n > 1)
		qsort(rp.v, rp.n, sizeof(*rp.v), cmp_entry);
	fg_buf_init(&out, RN_REPORT_MAX_OUTPUT);
	r = o.markdown ? rn__report_markdown(&rp, o.only_open, &out)
	    : o.html   ? rn__report_html(&rp, o.only_open, &out)
		       : rn__report_json(&rp, o.only_open, &out);
	if (r) {
		rn_msg(FG_MSG_ERROR, "cannot build the report: %s",
			r == -E2BIG ? "larger than 256 MiB" : strerror(-r));
		code = FG_EXIT_RUNTIME;
	} else {
		code = emit(o.output, &out);
	}
	if (!code && bad)
		code = FG_EXIT_FAILED;
	fg_buf_release(&out);
	report_release(&rp);
	fg_strvec_release(&o.inputs);
	return code;
}
