/*
 * cmd_watch.c - `forge-runner watch DIR...`: prints one review_cycle line
 * per detected cycle to stdout (text or JSON, the same shapes as the run
 * log) and its warnings to stderr, until SIGINT or SIGTERM; then it sweeps
 * once more and exits 0.
 *
 * With --cycle-dir TEMPLATE (and --step, maybe --skill and --task-key) each
 * DIR is a workspace instead, and the directory watched is the template's
 * expansion below it, reached without following a symlink (fg_cycle_dir(),
 * as `run` does).
 */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "events.h"
#include "forge/alloc.h"
#include "forge/cycle.h"
#include "forge/fsutil.h"
#include "forge/names.h"
#include "forge/seal.h"
#include "watch.h"

enum {
	W_POLL = 1, W_RUN_ID, W_LOG_FORMAT, W_LOG_LEVEL, W_NO_INOTIFY, W_CYCLE_DIR, W_STEP, W_SKILL,
	W_TASK_KEY, W_SEAL_KEY, W_HELP,
};

const struct fg_opt rn_watch_options[] = {
	{ W_POLL, "poll-interval", 0, "SEC", "AUTO_REVIEW_POLL_INTERVAL",
	  "safety-net rescan period, fractional allowed (default 5)" },
	{ W_NO_INOTIFY, "no-inotify", 0, NULL, NULL, "poll only (network filesystems)" },
	{ W_RUN_ID, "run-id", 0, "ID", NULL, "ignore cycles carrying another run_id" },
	{ W_CYCLE_DIR, "cycle-dir", 0, "TEMPLATE", NULL, "each DIR is a workspace: watch DIR/TEMPLATE ({step}, {task_key}, {skill})" },
	{ W_STEP, "step", 0, "NAME", NULL, "{step} of --cycle-dir (required with it)" },
	{ W_SKILL, "skill", 0, "NAME", NULL, "{skill} of --cycle-dir (default: the step, '_' -> '-')" },
	{ W_TASK_KEY, "task-key", 0, "KEY", NULL, "{task_key} of --cycle-dir" },
	{ W_SEAL_KEY, "seal-key-file", 0, "FILE", NULL,
	  "the run's seal key (64 hex digits): verify each record, report forgeries as record_forged "
	  "(without it every record says seal=unverified)" },
	RN_OPT_LOG_FORMAT(W_LOG_FORMAT),
	RN_OPT_LOG_LEVEL(W_LOG_LEVEL),
	{ W_HELP, "help", 'h', NULL, NULL, "show help" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

struct watch_cmd {
	uv_loop_t loop;
	struct rn_watch w;
	uv_signal_t sig[3];  /* SIGINT, SIGTERM, SIGHUP */
	struct rn_log out;   /* review_cycle lines: stdout */
	struct rn_log err;   /* warnings: stderr */
	int stopping;
	struct fg_seal_key key;   /* --seal-key-file */
};

static void on_watch_cycle(struct rn_watch *w, const struct rn_cycle_report *r)
{
	struct watch_cmd *wc = w->opts.data;

	if (fg_seal_forged(r->seal)) {
		rn_event_forged(&wc->err, r->step, r->dir, r->name, r->source, r->seal);
		return;
	}
	rn_event_cycle(&wc->out, RN_LOG_INFO, r, 1);
	rn_event_verdict_unparsed(&wc->err, r, 1);
	rn_event_cost_invalid(&wc->err, r->step, r->name, rn_source_name(r->source), &r->cycle->usage);
}

static void on_handle_closed(uv_handle_t *h)
{
	(void)h;
}

static void on_stop_signal(uv_signal_t *s, int signum)
{
	struct watch_cmd *wc = s->data;

	/* logrotate's postrotate sends SIGHUP to every forge-runner: watch
	 * writes to stdout/stderr only, so there is nothing to reopen, but
	 * the signal must not kill it (its default action). */
	if (signum == SIGHUP || wc->stopping)
		return;
	wc->stopping = 1;
	rn_log(&wc->err, RN_LOG_INFO, "watch_stop", RN_LS("signal", sigabbrev_np(signum)));
	rn_watch_drain(&wc->w);
	rn_watch_sweep(&wc->w);
	rn_watch_close(&wc->w, NULL);
	for (int i = 0; i < 3; i++)
		uv_close((uv_handle_t *)&wc->sig[i], on_handle_closed);
}

/* --cycle-dir and the names it expands with. */
struct cycle_dir_args {
	const char *tmpl, *step, *skill, *task_key;
	char *rel;          /* owned: the expansion */
};

static int take_cycle_dir_opt(struct cycle_dir_args *cd, int id, const char *v)
{
	switch (id) {
	case W_CYCLE_DIR: cd->tmpl = v; return 0;
	case W_STEP: cd->step = v; return 0;
	case W_SKILL: cd->skill = v; return 0;
	case W_TASK_KEY: cd->task_key = v; return 0;
	default: return 1;
	}
}

/* The names checked as `run` checks them, then the template expanded. */
static int expand_cycle_dir(struct cycle_dir_args *cd)
{
	char err[512], *skill;
	int r = 0;

	if (!cd->tmpl)
		return cd->step || cd->skill || cd->task_key ?
		       rn_cmd_usage("watch", "--step, --skill and --task-key go with --cycle-dir") : 0;
	if (!cd->step)
		return rn_cmd_usage("watch", "--cycle-dir needs --step");
	if (fg_name_check(FG_NAME_STEP, cd->step, strlen(cd->step), err, sizeof(err)) ||
	    (cd->skill && fg_name_check(FG_NAME_SKILL, cd->skill, strlen(cd->skill), err, sizeof(err))) ||
	    (cd->task_key &&
	     fg_name_check(FG_NAME_TASK_KEY, cd->task_key, strlen(cd->task_key), err, sizeof(err))))
		return rn_cmd_usage("watch", "%s", err);
	skill = fg_xstrdup(cd->skill ? cd->skill : cd->step);
	for (char *p = skill; !cd->skill && *p; p++)
		*p = *p == '_' ? '-' : *p;
	{
		const struct fg_cycle_dir_vars v = { cd->step, cd->task_key, skill };

		if (fg_cycle_dir(cd->tmpl, &v, &cd->rel, err, sizeof(err)))
			r = rn_cmd_usage("watch", "%s", err);
	}
	free(skill);
	return r;
}

static int watch_parse(int argc, char **argv, struct rn_watch_opts *o, struct rn_log_cfg *lc,
		       struct cycle_dir_args *cd, const char ***dirs, size_t *ndirs,
		       const char **key_file)
{
	struct fg_opts_iter it;
	const char *env = getenv("AUTO_REVIEW_POLL_INTERVAL");
	size_t cap = *ndirs;

	if (env && *env && rn_parse_interval(env, &o->poll_interval))
		return rn_cmd_usage("watch", "invalid AUTO_REVIEW_POLL_INTERVAL '%s'", env);
	fg_opts_init(&it, rn_watch_options, argc, argv, 1);
	while (fg_opts_each(&it)) {
		if (it.id == FG_OPT_POSITIONAL) {
			FG_ALLOC_GROW(*dirs, *ndirs + 1, cap);
			(*dirs)[(*ndirs)++] = it.value;
		} else if (!take_cycle_dir_opt(cd, it.id, it.value)) {
			continue;
		} else if (it.id == W_POLL && rn_parse_interval(it.value, &o->poll_interval)) {
			return rn_cmd_usage("watch", "invalid --poll-interval '%s'", it.value);
		} else if (it.id == W_NO_INOTIFY) {
			o->no_inotify = 1;
		} else if (it.id == W_RUN_ID) {
			o->run_id = it.value;
		} else if (it.id == W_SEAL_KEY) {
			*key_file = it.value;
		} else if (it.id == W_LOG_FORMAT) {
			lc->format = it.value;
		} else if (it.id == W_LOG_LEVEL) {
			lc->level = it.value;
		} else if (it.id == W_HELP) {
			return -1;
		}
	}
	if (fg_opts_failed(&it))
		return rn_cmd_usage("watch", "%s", it.err);
	if (*ndirs == 0)
		return rn_cmd_usage("watch", "watch needs at least one directory");
	return expand_cycle_dir(cd);
}

/* Each DIR, or with --cycle-dir each DIR's cycle directory (-errno when a
 * workspace cannot be opened). */
static int add_dirs(struct watch_cmd *wc, const struct cycle_dir_args *cd, const char **dirs,
		    size_t ndirs)
{
	for (size_t i = 0; i < ndirs; i++) {
		int r = cd->rel ? rn_watch_add_beneath(&wc->w, dirs[i], cd->rel)
				: rn_watch_add(&wc->w, dirs[i]);

		if (r) {
			rn_msg(FG_MSG_ERROR, "cannot watch '%s': %s", dirs[i], uv_strerror(r));
			return r;
		}
	}
	return 0;
}

static int watch_run(struct watch_cmd *wc, const struct cycle_dir_args *cd, const char **dirs,
		     size_t ndirs)
{
	int signums[3] = { SIGINT, SIGTERM, SIGHUP };
	int r;

	for (int i = 0; i < 3; i++) {
		uv_signal_init(&wc->loop, &wc->sig[i]);
		wc->sig[i].data = wc;
		uv_signal_start(&wc->sig[i], on_stop_signal, signums[i]);
	}
	r = add_dirs(wc, cd, dirs, ndirs);
	if (!r)
		r = rn_watch_start(&wc->w);
	if (r) {
		rn_msg(FG_MSG_ERROR, "cannot start watching: %s", uv_strerror(r));
		on_stop_signal(&wc->sig[0], SIGTERM);
	}
	/* One line per directory, so a watch that sees nothing yet is not
	 * mistaken for one that hangs. */
	for (size_t i = 0; !r && i < ndirs; i++) {
		char *dir = cd->rel ? fg_path_join(dirs[i], cd->rel) : fg_xstrdup(dirs[i]);

		rn_log(&wc->err, RN_LOG_INFO, "watch_start", RN_LS("dir", dir),
		       RN_LN("poll_interval", wc->w.opts.poll_interval),
		       RN_LB("inotify", !wc->w.opts.no_inotify));
		free(dir);
	}
	uv_run(&wc->loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&wc->loop)) {
		rn_msg(FG_MSG_ERROR, "the event loop still has open handles");
		return FG_EXIT_RUNTIME;
	}
	return r ? FG_EXIT_FAILED : FG_EXIT_OK;
}

int rn_cmd_watch(int argc, char **argv)
{
	struct watch_cmd wc;
	struct rn_watch_opts o = { .poll_interval = RN_DEFAULT_POLL_INTERVAL };
	struct rn_log_cfg lc = { 0 };
	struct cycle_dir_args cd = { 0 };
	const char **dirs = NULL, *key_file = NULL;
	size_t ndirs = 0;
	int r;

	memset(&wc, 0, sizeof(wc));
	r = watch_parse(argc, argv, &o, &lc, &cd, &dirs, &ndirs, &key_file);
	if (r == 0 && key_file)
		r = rn_seal_key_option(key_file, &wc.key);
	o.key = key_file && !r ? &wc.key : NULL;
	if (r == 0)
		r = rn_log_setup(&wc.err, &lc, stderr);
	if (r) {
		free(dirs);
		free(cd.rel);
		if (r < 0)
			return rn_cmd_help("forge-runner watch DIR... [options]", rn_watch_options);
		return r;
	}
	/* review_cycle lines go to stdout whatever the threshold: they are the
	 * command's output, not diagnostics. */
	rn_log_init(&wc.out, wc.err.format, RN_LOG_DEBUG, stdout);
	o.log = &wc.err;
	o.corrupt_when_stable = 1;
	o.limit_reports = 1;
	/* With --cycle-dir the directory is not named after the step. */
	o.step = cd.rel ? cd.step : NULL;
	o.cb = on_watch_cycle;
	o.data = &wc;
	r = uv_loop_init(&wc.loop);
	if (r) {
		rn_msg(FG_MSG_ERROR, "cannot start the event loop: %s", uv_strerror(r));
		rn_log_close(&wc.err);
		free(dirs);
		free(cd.rel);
		return FG_EXIT_RUNTIME;
	}
	rn_watch_init(&wc.w, &wc.loop, &o);
	r = watch_run(&wc, &cd, dirs, ndirs);
	rn_log_close(&wc.err);
	free(dirs);
	free(cd.rel);
	return r;
}
