/*
 * cmd_run.c - `forge-runner run`: the configuration (run_config.c), then
 * preparation, the session, the result file and the metrics (see run.h for
 * the protocol).
 */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "closing.h"
#include "events.h"
#include "hostcheck.h"
#include "prepare.h"
#include "session.h"
#include "trace.h"
#include "forge/alloc.h"
#include "forge/exit.h"
#include "forge/cycle.h"
#include "forge/fsutil.h"
#include "forge/json.h"
#include "forge/names.h"
#include "forge/num.h"
#include "forge/seal.h"
#include "forge/summary.h"
#include "forge/text.h"
#include "watch.h"

extern char **environ;

/* ---- after the session ---- */

static const char *outcome(const struct rn_session_result *sr, enum fg_review_state state)
{
	/* The engine's own failures (exit 125) are errors, as documented,
	 * not "failed" runs of the step. */
	if (sr->failed || sr->exit_code == FG_EXIT_RUNTIME)
		return "error";
	if (sr->timed_out)
		return "timeout";
	if ((state == FG_STATE_NO_REVIEW || state == FG_STATE_DISABLED) && sr->exit_code != 0)
		return "failed";
	return fg_review_state_name(state);
}

/* Why the run did not succeed (the result's failure), set by conclude(). */
struct run_failure {
	enum fg_failure_cause cause;
	char *reason;           /* owned or NULL */
};

struct run_state {
	struct rn_run_config *cfg;
	struct rn_log *log;
	const char *run_id;
	char *step_dir;         /* owned: workspace + step_rel, for messages */
	char *step_rel;         /* owned: fg_cycle_dir() */
	int wsfd;               /* the workspace, opened once; -1 when it could not be */
	/* owned: the run's one skill, decided before the run (rn_run_derived_skill()):
	 * the result's skill and every metric label. Never taken from a cycle
	 * file, whose skill the sandbox chooses. */
	char *skill;
	struct rn_cycles cycles;
	struct rn_metrics metrics;
	struct rn_session_result sr;
	long stale;
	uint64_t t0;
	struct fg_seal_key key;   /* the run's seal key (fresh, from the kernel) */
	struct run_failure fail;
	struct rn_trace trace;    /* the run's spans (trace.h; may be off) */
};

/* The workflow span, and the end of the export (after the result and the
 * closing line: at most RN_OTLP_FINISH_MS more, never in the result). */
static void end_trace(struct run_state *st, enum fg_review_state state, const struct fg_usage_pair *usage)
{
	struct rn_trace_end e = {
		.review_state = fg_review_state_name(state), .outcome = outcome(&st->sr, state),
		.exit_code = st->sr.exit_code, .cycles = (long)st->cycles.n, .usage = usage,
	};

	rn_trace_finish(&st->trace, &e);
}

/* The summary file is not believed: like the session's forgeries. */
static void forged_summary(struct run_state *st, enum fg_seal_status seal)
{
	rn_event_forged(st->log, st->cfg->step, st->step_dir, FG_SUMMARY_FILE, RN_SOURCE_SWEEP, seal);
	rn_trace_forged(&st->trace, FG_SUMMARY_FILE, rn_source_name(RN_SOURCE_SWEEP), fg_seal_status_name(seal));
	rn_metrics_add_forged(&st->metrics, st->skill, st->cfg->step, rn_source_name(RN_SOURCE_SWEEP));
	st->sr.forged_records++;
}

/* Reads the entrypoint's summary through the workspace descriptor, one
 * component at a time without following symlinks, like every other access
 * to the step directory: a sandbox that swapped .forge for a link must not
 * feed the result a summary from outside the workspace. A summary of
 * another run (a stale or foreign writer) says nothing about ours; one of
 * ours whose seal does not verify is a forgery (record_forged, source
 * sweep). */
static void load_summary(struct run_state *st, struct fg_summary *sum, int *have)
{
	struct fg_seal_bind b = { NULL, st->cfg->step, FG_SUMMARY_FILE, 0 };
	char err[256];
	int dfd = st->wsfd < 0 ? -1 : fg_open_beneath(st->wsfd, st->step_rel, 0, NULL, 0);
	struct fg_buf raw;
	enum fg_seal_status seal;
	int r;

	*have = 0;
	fg_buf_init(&raw, FG_SUMMARY_MAX_BYTES);
	r = dfd < 0 ? -ENOENT : fg_summary_read_raw_at(dfd, sum, &raw, err, sizeof(err));
	if (dfd >= 0)
		close(dfd);
	if (!r && (!sum->run_id || !*sum->run_id || !strcmp(sum->run_id, st->run_id))) {
		b.run_id = sum->run_id;
		seal = fg_seal_check(&st->key, FG_SEAL_FILE, &b, NULL, fg_buf_str(&raw), raw.len);
		*have = seal == FG_SEAL_OK;
		if (!*have)
			forged_summary(st, seal);
		else
			rn_event_cost_invalid(st->log, st->cfg->step, FG_SUMMARY_FILE, "summary",
					      &sum->usage);
	}
	fg_buf_release(&raw);
}

static void write_result(struct run_state *st, enum fg_review_state state, bool exhausted,
			 const struct fg_summary *sum, const struct fg_usage_pair *usage)
{
	struct rn_result res = {
		.exit_code = st->sr.exit_code, .error_message = st->sr.error_message,
		.step = st->cfg->step, .skill = st->skill, .task_key = st->cfg->task_key,
		.run_id = st->run_id, .engine = st->cfg->engine->name,
		.duration_seconds = fg_seconds_since(st->t0), .cycles = &st->cycles,
		.review_exhausted = exhausted, .review_state = state,
		.stale_files_cleared = st->stale, .sweep_caught = st->sr.sweep_caught,
		.cycles_by_source = st->sr.cycles_by_source, .usage = usage,
		.forged_records = st->sr.forged_records,
		.questions = sum ? sum->questions : NULL, .nquestions = sum ? sum->nquestions : 0,
		.audit = sum ? sum->audit : NULL,
		.advice = sum ? sum->advice : NULL, .nadvice = sum ? sum->nadvice : 0,
		.cause = st->fail.cause, .failure_reason = st->fail.reason,
		.cycle_dir = st->cfg->workspace_local ? st->step_dir : NULL,
		.isolation = sum && sum->isolation.known ? &sum->isolation
			     : st->sr.isolation.known ? &st->sr.isolation : NULL,
	};
	int r;

	if (!st->cfg->result_path)
		return;
	r = rn_result_write(st->cfg->result_path, &res);
	if (r) {
		rn_log(st->log, RN_LOG_ERROR, "result_error", RN_LS("file", st->cfg->result_path),
		       RN_LS("error", strerror(-r)));
		st->sr.exit_code = FG_EXIT_RUNTIME;
	}
}

static void write_metrics(struct run_state *st, enum fg_review_state state, bool exhausted,
			  const struct fg_usage_pair *usage, const struct fg_audit *audit)
{
	const char *skill = st->skill ? st->skill : "";
	struct rn_metrics_run run = { .skill = skill, .step = st->cfg->step,
				      .engine = st->cfg->engine->name };
	char err[256] = "";
	int r;

	if (exhausted)
		rn_metrics_add_exhausted(&st->metrics, skill, st->cfg->step);
	if (st->sr.sweep_caught > 0)
		rn_metrics_add_sweep_caught(&st->metrics, skill, st->cfg->step,
					    (unsigned)st->sr.sweep_caught);
	run.outcome = outcome(&st->sr, state);
	run.seconds = fg_seconds_since(st->t0);
	/* A success: exit 0 with the work approved, or nothing to review. */
	if (!st->sr.exit_code && (state == FG_STATE_APPROVED || state == FG_STATE_NO_REVIEW ||
				  state == FG_STATE_DISABLED))
		run.succeeded_at = (double)time(NULL);
	rn_metrics_add_run(&st->metrics, &run);
	rn_metrics_add_usage(&st->metrics, skill, st->cfg->step, "worker", &usage->worker);
	rn_metrics_add_usage(&st->metrics, skill, st->cfg->step, "reviewer", &usage->reviewer);
	if (audit)
		rn_metrics_add_audit(&st->metrics, skill, st->cfg->step, fg_audit_outcome_name(audit->outcome));
	if (!st->cfg->metrics_file)
		return;
	r = rn_metrics_merge_file(&st->metrics, st->cfg->metrics_file, err, sizeof(err));
	if (r)
		rn_log(st->log, RN_LOG_ERROR, "metrics_error", RN_LS("file", st->cfg->metrics_file),
		       RN_LS("error", err[0] ? err : strerror(-r)));
}

/* run_exit's reason when the run failed (owned, or NULL): the entrypoint's
 * last error line, else the whole error message ("timed out after 5s",
 * "docker exited with code 125; last output:\n..."): the log escapes its
 * line breaks, so the output after "last output:" is not lost. */
static char *exit_reason(const struct rn_session_result *sr)
{
	const char *m = sr->error_message;

	if (!sr->exit_code)
		return NULL;
	if (sr->reason)
		return fg_xstrdup(sr->reason);
	return m ? fg_xstrdup(m) : NULL;
}

/* The closing line (closing.h), once the exit code is final. */
/* The findings of an advice-only approval, from the cycle's kept content
 * (the record's copy holds only scalar fields); 0 otherwise. */
static size_t advice_count(const cJSON *cycle)
{
	if (!fg_json_true(cycle, "advice_only"))
		return 0;
	return (size_t)cJSON_GetArraySize(fg_json_get(cycle, "findings"));
}

static void close_run(struct run_state *st, enum fg_review_state state, const struct fg_summary *s,
		      const struct fg_usage_pair *usage)
{
	struct rn_closing c = {
		.step = st->cfg->step, .outcome = outcome(&st->sr, state), .cycles = st->cycles.n,
		.max_cycles = s ? s->max_cycles : 0, .seconds = fg_seconds_since(st->t0),
		.exit_code = st->sr.exit_code, .result_path = st->cfg->result_path,
	};
	char *reason = exit_reason(&st->sr);

	if (!c.max_cycles && st->cycles.n)
		c.max_cycles = st->cycles.v[st->cycles.n - 1].c.max_cycles;
	if (st->cycles.n)
		c.advice = advice_count(st->cycles.v[st->cycles.n - 1].obj);
	c.have_cost = fg_usage_pair_cost(usage, &c.cost_usd);
	c.audit = s && s->audit ? fg_audit_outcome_name(s->audit->outcome) : NULL;
	c.reason = reason;
	if (!st->cfg->quiet)
		rn_closing_print(st->log, &c);
	free(reason);
}

/* The exit code follows the sealed records: a sandbox that
 * exited 0 with no sealed summary while forged records stood where its own
 * should be, and whose sealed cycles do not end approved, ran no review the
 * runner can vouch for. (The entrypoint never exits 0 without its sealed
 * summary.) */
static void follow_state(struct run_state *st, const struct fg_summary *s,
			 enum fg_review_state state)
{
	if (st->sr.exit_code != 0 || s || !st->sr.forged_records || state == FG_STATE_APPROVED)
		return;
	st->sr.exit_code = FG_EXIT_FAILED;
	free(st->sr.error_message);
	st->sr.error_message = fg_xasprintf("the sandbox exited 0 without a sealed summary and its "
					    "sealed records support no approval (%ld forged)",
					    st->sr.forged_records);
}

/* The failure's cause and reason: the runner's own message for what it
 * saw itself (a timeout, its engine, its signal), else the summary's
 * reason, else the run's last error line. */
static void name_failure(struct run_state *st, const struct fg_summary *s)
{
	const struct rn_session_result *sr = &st->sr;
	enum fg_failure_cause c = rn_failure_cause(sr->exit_code, sr->timed_out, sr->failed, sr->signal, s);

	st->fail.cause = c;
	free(st->fail.reason);
	st->fail.reason = NULL;
	if (c == FG_CAUSE_NONE)
		return;
	if (!sr->timed_out && !sr->failed && !sr->signal && s && s->cause == c && s->reason)
		st->fail.reason = fg_xstrdup(s->reason);
	else
		st->fail.reason = exit_reason(sr);
}

/* The sweep's count (a run the runner cannot see is never swept: no sweep
 * event then) and run_exit. */
static void log_exit(struct run_state *st, enum fg_review_state state, bool exhausted,
		     const struct fg_usage_pair *usage)
{
	char *reason = exit_reason(&st->sr), cost[32];
	double usd;

	if (fg_usage_pair_cost(usage, &usd))
		snprintf(cost, sizeof(cost), "%.6f", usd);
	if (st->cfg->workspace_local)
		rn_log(st->log, RN_LOG_INFO, "sweep", RN_LI("sweep_caught", st->sr.sweep_caught));
	rn_log(st->log, st->sr.exit_code ? RN_LOG_WARN : RN_LOG_INFO, "run_exit",
	       RN_LS("step", st->cfg->step), RN_LS("run_id", st->run_id),
	       RN_LI("exit_code", st->sr.exit_code), RN_LS("review_state", fg_review_state_name(state)),
	       RN_LB("review_exhausted", exhausted), RN_LI("cycles", (long long)st->cycles.n),
	       RN_LI("sweep_caught", st->sr.sweep_caught),
	       RN_LN("duration_seconds", fg_seconds_since(st->t0)),
	       RN_LS_OPT("cause", st->fail.cause ? fg_failure_cause_name(st->fail.cause) : NULL),
	       RN_LS_OPT("reason", reason),
	       RN_LS_OPT("cost_usd", fg_usage_pair_cost(usage, &usd) ? cost : NULL));
	free(reason);
}

static void conclude(struct run_state *st)
{
	struct fg_summary sum;
	const struct fg_summary *s;
	struct fg_usage_pair usage;
	int have_sum;
	enum fg_review_state state;
	bool exhausted;

	fg_summary_init(&sum);
	load_summary(st, &sum, &have_sum);
	/* The file when it can be read, else the summary frame (the stream
	 * checked its run id): it stands in for the file on a run whose
	 * workspace the runner cannot see. */
	s = have_sum ? &sum : st->sr.stream_summary;
	state = rn_review_state(&st->cycles, s);
	follow_state(st, s, state);
	/* No summary and no cycle is "no review.md" only for a sandbox that
	 * ended well: a crash, a timeout or a setup error is a failure. */
	if (!s && state == FG_STATE_NO_REVIEW && st->sr.exit_code != 0)
		state = FG_STATE_FAILED;
	name_failure(st, s);
	/* No sweep on a run the runner cannot see: the summary frame says how
	 * many cycles ran, so frames lost on the way are at least noticed. */
	if (!st->cfg->workspace_local && s && (size_t)s->cycles > st->cycles.n)
		rn_log(st->log, RN_LOG_WARN, "cycle_unseen", RN_LS("step", st->cfg->step),
		       RN_LI("summary_cycles", s->cycles), RN_LI("reported", (long long)st->cycles.n));
	/* The summary has the step's totals (the worker's first run included);
	 * without one the cycles' usage is what is known. */
	if (s)
		usage = s->usage;
	else
		rn_cycles_usage(&st->cycles, &usage);
	exhausted = rn_review_exhausted(state, &st->cycles);
	log_exit(st, state, exhausted, &usage);
	/* The audit's word is the sealed summary's (its frame's on a run the
	 * runner cannot see), like the state. */
	if (s && s->audit) {
		rn_event_audit(st->log, st->cfg->step, st->skill ? st->skill : "", s->cycles, s->audit);
		rn_trace_audit(&st->trace, s->audit, s->cycles);
	}
	write_metrics(st, state, exhausted, &usage, s ? s->audit : NULL);
	write_result(st, state, exhausted, have_sum ? &sum : st->sr.stream_summary, &usage);
	close_run(st, state, s, &usage);
	end_trace(st, state, &usage);
	fg_summary_release(&sum);
}

/* run_start's fields: the run, then the settings of the engine in use (a
 * workspace the runner cannot see is neither polled nor watched), the
 * engine's own fields (ops->log_fields), the program. Returns their number. */
static size_t start_fields(const struct run_state *st, struct rn_log_field *f)
{
	const struct rn_run_config *c = st->cfg;
	const struct rn_engine_ops *ops = c->engine;
	struct rn_engine_field ef[RN_ENGINE_FIELDS_MAX];
	size_t n = 0, ne = ops->log_fields ? ops->log_fields(c->engine_data, ef) : 0;

	f[n++] = RN_LS("engine", ops->name);
	f[n++] = RN_LS("image", ops->cli ? c->image : NULL);
	f[n++] = RN_LS("step", c->step);
	f[n++] = RN_LS("skill", st->skill);
	f[n++] = RN_LS("task_key", c->task_key);
	f[n++] = RN_LS("run_id", st->run_id);
	if (c->workspace_local) {
		f[n++] = RN_LN("poll_interval", c->poll_interval);
		f[n++] = RN_LB("inotify", !c->no_inotify);
	}
	f[n++] = RN_LS("record", rn_record_mode_name(c->record));
	f[n++] = RN_LN("timeout", c->timeout);
	if (c->workspace_local) {
		f[n++] = RN_LS("workspace", c->workspace);
	} else {
		f[n++] = RN_LS_OPT("workspace_volume", c->workspace_volume);
		f[n++] = RN_LS_OPT("engine_host", c->engine_host);
	}
	for (size_t i = 0; i < ne && i < RN_ENGINE_FIELDS_MAX; i++)
		f[n++] = RN_LS_OPT(ef[i].key, ef[i].value);
	f[n++] = RN_LS("entrypoint", ops->cli ? ops->cli : c->entrypoint);
	return n;
}

static void log_start(struct run_state *st)
{
	const struct rn_run_config *c = st->cfg;
	const struct rn_engine_ops *ops = c->engine;
	const char *skill = st->skill;
	struct rn_log_field f[16 + RN_ENGINE_FIELDS_MAX];

	rn_log_event(st->log, RN_LOG_INFO, "run_start", f, start_fields(st, f));
	/* A container without --skills-dir reads the image's own /skills: a
	 * review.md on the host is silently not used. */
	if (ops->cli && !c->skills_dir)
		rn_log(st->log, RN_LOG_WARN, "skills_in_image", RN_LS("engine", ops->name),
		       RN_LS("image", c->image), RN_LS("skill", skill),
		       RN_LS("hint", "no --skills-dir: review.md files are looked up in the image's own "
				     "/skills; pass --skills-dir DIR to use the host's"));
}

/* --env NAMEs that are not set: the container would silently lack them. */
static void warn_unset_env(struct run_state *st)
{
	for (size_t i = 0; i < st->cfg->extra_env.n; i++) {
		if (!getenv(st->cfg->extra_env.v[i]))
			rn_log(st->log, RN_LOG_WARN, "env_unset", RN_LS("name", st->cfg->extra_env.v[i]));
	}
}

static void run_session(struct run_state *st)
{
	struct rn_engine_params ep;
	struct rn_session_params sp = {
		.cfg = st->cfg, .run_id = st->run_id, .step_dir = st->step_dir,
		.step_rel = st->step_rel, .skill = st->skill, .log = st->log,
		.metrics = &st->metrics, .cycles = &st->cycles, .ep = &ep,
	};
	int r;

	rn_run_engine_params(st->cfg, st->run_id, &ep);
	ep.traceparent = rn_trace_traceparent(&st->trace);
	sp.key = &st->key;
	sp.trace = &st->trace;
	r = rn_session_run(&sp, &st->sr);

	if (r) {
		st->sr.failed = 1;
		st->sr.exit_code = FG_EXIT_RUNTIME;
		st->sr.error_message = fg_xasprintf("cannot set up the event loop: %s", strerror(-r));
	}
}

/* Opens the workspace and prepares the step directory beneath it. 0, or a
 * negative errno with err filled. */
static int prepare(struct run_state *st, char *err, size_t errlen)
{
	struct rn_prepare p = { .rel = st->step_rel, .dir = st->step_dir, .log = st->log };

	/* A root runner's sandbox runs as another uid: the step directory
	 * it made must be that uid's. */
	rn_run_sandbox_ids(st->cfg, &p.uid, &p.gid);
	p.give = getuid() == 0 && p.uid != 0;

	st->wsfd = fg_open_dir(AT_FDCWD, st->cfg->workspace, 0);
	if (st->wsfd < 0) {
		int r = st->wsfd;

		snprintf(err, errlen, "%s", strerror(-r));
		return r;
	}
	p.wsfd = st->wsfd;
	return rn_prepare_step_dir(&p, &st->stale, err, errlen);
}

static int run_prepared(struct run_state *st)
{
	char err[512] = "";
	int r;

	log_start(st);
	/* A workspace the runner cannot see is cleared by the entrypoint
	 * (--clear-stale, passed by the engine); wsfd stays -1 then. */
	r = st->cfg->workspace_local ? prepare(st, err, sizeof(err)) : 0;
	if (r) {
		const char *why = err[0] ? err : strerror(-r);

		rn_log(st->log, RN_LOG_ERROR, "run_error", RN_LS("dir", st->step_dir), RN_LS("error", why));
		st->sr.failed = 1;
		st->sr.exit_code = FG_EXIT_RUNTIME;
		st->sr.error_message = fg_xasprintf("cannot prepare '%s': %s", st->step_dir, why);
	} else {
		if (st->cfg->workspace_local)
			rn_log(st->log, st->stale ? RN_LOG_INFO : RN_LOG_DEBUG, "stale_cleared",
			       RN_LS("dir", st->step_dir), RN_LI("count", st->stale));
		if (st->cfg->engine->env_by_name)
			warn_unset_env(st);
		run_session(st);
	}
	conclude(st);
	rn_session_unblock_signals(&st->sr);
	return st->sr.exit_code;
}

static void start_trace(struct run_state *st)
{
	struct rn_trace_params p = {
		.step = st->cfg->step, .skill = st->skill, .run_id = st->run_id,
		.task_key = st->cfg->task_key, .trace_file = st->cfg->trace_file, .log = st->log,
	};

	rn_trace_init(&st->trace, &p);
}

/* libsodium could not be initialised: no run without a seal key. */
static int no_key(struct rn_log *log, struct rn_run_config *cfg)
{
	rn_log(log, RN_LOG_ERROR, "run_error", RN_LS("error", "cannot initialise libsodium for the "
							       "run's seal key"));
	rn_log_close(log);
	rn_run_config_release(cfg);
	return FG_EXIT_RUNTIME;
}

/* Everything a run held, its log and its configuration last. */
static void release_run(struct run_state *st)
{
	rn_metrics_release(&st->metrics);
	rn_cycles_release(&st->cycles);
	free(st->sr.error_message);
	free(st->fail.reason);
	if (st->sr.stream_summary)
		fg_summary_release(st->sr.stream_summary);
	FG_FREE_ALL(st->sr.stream_summary, st->sr.reason, st->step_dir, st->step_rel, st->skill);
	if (st->wsfd >= 0)
		close(st->wsfd);
	fg_seal_key_wipe(&st->key);
	rn_trace_release(&st->trace);
	rn_log_close(st->log);
	rn_run_config_release(st->cfg);
}

int rn_cmd_run(int argc, char **argv)
{
	struct rn_run_config cfg = { 0 };
	struct rn_log_cfg logcfg;
	struct rn_log log;
	struct run_state st = { .cfg = &cfg, .log = &log, .wsfd = -1 };
	char run_id[RN_RUN_ID_MAX + 1], *key;
	int r;

	r = rn_run_config_load(&cfg, argc, argv, &logcfg);
	if (!r)
		r = rn_log_setup(&log, &logcfg, stderr);
	if (r) {
		rn_run_config_release(&cfg);
		if (r > 0)
			return r;
		rn_cmd_help("forge-runner run --workspace DIR --step NAME [options]", rn_run_options());
		fputs(rn_run_needs, stdout);
		return 0;
	}
	st.t0 = fg_monotonic_ns();
	/* An orchestrator's own id, so a rerun decides the audit's sample alike. */
	if (cfg.run_id)
		snprintf(run_id, sizeof(run_id), "%s", cfg.run_id);
	else
		rn_run_id_generate(run_id);
	st.run_id = run_id;
	st.skill = rn_run_derived_skill(&cfg);
	key = rn_run_derived_task_key(&cfg);
	rn_log_set_context(&log, st.run_id, cfg.step, st.skill, key);
	free(key);
	/* Before the key exists: the exporter child (forked) never holds it. */
	start_trace(&st);
	if (fg_seal_key_new(&st.key)) {
		rn_trace_release(&st.trace);
		free(st.skill);
		return no_key(&log, &cfg);
	}
	st.step_rel = fg_xstrdup(cfg.cycle_dir);
	/* Without a host path the directory is named as the container sees it
	 * (it only appears in log lines then). */
	st.step_dir = fg_path_join(cfg.workspace ? cfg.workspace : "/workspace", st.step_rel);
	rn_cycles_init(&st.cycles);
	rn_cycles_test_bound(&st.cycles);
	rn_metrics_init(&st.metrics);
	r = run_prepared(&st);
	release_run(&st);
	return r;
}
