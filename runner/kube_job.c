/*
 * kube_job.c - `forge-runner kubernetes-job`: the child the kubernetes
 * engine spawns for one run (kube_job.h has the flow). Its standard error
 * carries the pod's log lines (the frames) and, last, one line
 * "forge-runner: error: kubernetes: <reason>" when the run failed for a reason of
 * the cluster's; its exit code is the run's: the container's code, 137
 * for OOMKilled, 124 for the Job's deadline, 125 when the pod could not
 * start, was deleted or evicted, or kubectl failed.
 */
#include "kube_job.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli.h"
#include "forge/alloc.h"
#include "forge/exit.h"
#include "forge/num.h"
#include "forge/seal.h"
#include "forge/util.h"

extern char **environ;

static void poll_status(uv_timer_t *t);
static void finish(struct kjob *j, int code, const char *reason, int linger_ms);
static void logs_ended(struct kjob *j);

static void on_closed(uv_handle_t *h)
{
	(void)h;
}

/* ---- the end ---- */

static void close_all(struct kjob *j)
{
	uv_close((uv_handle_t *)&j->poll, on_closed);
	uv_close((uv_handle_t *)&j->linger, on_closed);
	for (int i = 0; i < 3; i++)
		uv_close((uv_handle_t *)&j->sig[i], on_closed);
	j->state = KJ_DONE;
}

static void on_cleaned(struct rn_kube_cmd *c)
{
	struct kjob *j = c->data;

	if (c->code != 0) {
		char *e = rn_kube_cmd_error(c);

		rn__kjob_say("could not delete the objects of job forge-%s: %s", j->p.run_id, e);
		free(e);
	}
	rn_kube_cmd_release(c);
	close_all(j);
}

/* Every object of the run deleted, waited for (bounded), then out. */
static void clean(struct kjob *j)
{
	struct fg_strvec argv;

	j->state = KJ_CLEAN;
	uv_timer_stop(&j->poll);
	uv_timer_stop(&j->linger);
	if (j->logs_running)
		rn_kube_cmd_kill(&j->logs);
	if (rn_kube_cmd_busy(&j->attach))
		rn_kube_cmd_kill(&j->attach);
	fg_strvec_init(&argv);
	rn_kube_delete_argv(&j->p, &argv);
	/* The last of rn_kube_delete_argv() is --wait=false: wait here. */
	free(argv.v[argv.n - 1]);
	argv.v[argv.n - 1] = fg_xstrdup("--wait=true");
	fg_strvec_push(&argv, "--timeout=60s");
	if (rn_kube_cmd_start(&j->query, &j->loop, argv.v, NULL, 90000, on_cleaned, j)) {
		rn__kjob_say("cannot run '%s delete'", j->p.program);
		close_all(j);
	}
	fg_strvec_release(&argv);
}

static void maybe_clean(struct kjob *j)
{
	if (j->state != KJ_CLEAN && j->state != KJ_DONE && j->final && !j->logs_running &&
	    !rn_kube_cmd_busy(&j->query) && !rn_kube_cmd_busy(&j->stopper))
		clean(j);
}

static void on_linger(uv_timer_t *t)
{
	struct kjob *j = t->data;

	/* The stream did not end by itself after the container did. */
	if (j->logs_running)
		rn_kube_cmd_kill(&j->logs);
}

/* The outcome is known; the stream may still bring the last lines (the
 * summary frame) for linger_ms before the objects are deleted. */
static void finish(struct kjob *j, int code, const char *reason, int linger_ms)
{
	if (!j->final) {
		j->final = 1;
		j->code = code;
		/* A reason longer than the field is cut, and the precision says
		 * so to the compiler (the log escapes a cut sequence). */
		snprintf(j->reason, sizeof(j->reason), "%.*s", (int)sizeof(j->reason) - 1,
			 reason ? reason : "");
	}
	uv_timer_stop(&j->poll);
	if (j->logs_running)
		uv_timer_start(&j->linger, on_linger, (uint64_t)linger_ms, 0);
	maybe_clean(j);
}

/* ---- stopping ---- */

static void on_stop_sent(struct rn_kube_cmd *c)
{
	struct kjob *j = c->data;

	rn_kube_cmd_release(c);
	if (j->state == KJ_WAIT)
		finish(j, FG_EXIT_SIGNAL_BASE + SIGTERM, NULL, 0);
	maybe_clean(j);
}

/* Deletes the Job: the pod gets SIGTERM, the entrypoint stops its agent,
 * writes its summary and exits 143, and the stream ends. */
static void send_stop(struct kjob *j)
{
	struct fg_strvec argv;
	char *name = rn_kube_job_name(j->p.run_id);

	if (j->stop_sent || rn_kube_cmd_busy(&j->stopper))
		return;
	j->stop_sent = 1;
	fg_strvec_init(&argv);
	rn_kube_cli_prefix(&j->p, &argv);
	fg_strvec_push(&argv, "delete");
	fg_strvec_pushf(&argv, "jobs/%s", name);
	fg_strvec_pushl(&argv, "--ignore-not-found", "--wait=false", NULL);
	if (rn_kube_cmd_start(&j->stopper, &j->loop, argv.v, NULL, RN_KUBE_QUERY_TIMEOUT_MS,
			      on_stop_sent, j))
		rn__kjob_say("cannot run '%s delete'", j->p.program);
	fg_strvec_release(&argv);
	free(name);
}

static void on_signal(uv_signal_t *h, int signum)
{
	struct kjob *j = h->data;

	if (signum == SIGHUP)
		return;
	if (j->stopping) {
		/* A second signal: no waiting for the pod's own end. */
		finish(j, FG_EXIT_SIGNAL_BASE + SIGTERM, NULL, 0);
		if (j->logs_running)
			rn_kube_cmd_kill(&j->logs);
		return;
	}
	j->stopping = 1;
	if (j->state == KJ_WAIT || j->state == KJ_FOLLOW)
		send_stop(j);
}

/* ---- the status ---- */

static void schedule_poll(struct kjob *j, int ms)
{
	if (j->state == KJ_WAIT || j->state == KJ_FOLLOW)
		uv_timer_start(&j->poll, poll_status, (uint64_t)ms, 0);
}

static double elapsed_s(struct kjob *j)
{
	uv_update_time(&j->loop);
	return (double)(uv_now(&j->loop) - j->t_created) / 1000.0;
}

static void drop_line(struct rn_kube_cmd *c, const char *line, size_t n, int piece)
{
	(void)c;
	(void)line;
	(void)n;
	(void)piece;
}

static void on_attach_done(struct rn_kube_cmd *c)
{
	rn_kube_cmd_release(c);
}

/* Sealed runs: the key line into the pod's stdin through kubectl attach,
 * which then stays connected: its end closes the pod's stdin (stdinOnce),
 * the entrypoint's lifeline. Its output (the container's) is the log's. */
static void attach_key(struct kjob *j)
{
	struct fg_strvec argv;
	int r;

	if (!j->p.sealed || !j->have_key || j->attach_started)
		return;
	j->attach_started = 1;
	fg_strvec_init(&argv);
	rn_kube_cli_prefix(&j->p, &argv);
	fg_strvec_pushl(&argv, "attach", "--stdin", "--quiet", "--container=" RN_KUBE_CONTAINER, NULL);
	fg_strvec_pushf(&argv, "pod/%s", j->last.pod);
	j->attach.lines = drop_line;
	j->attach.keep_input = 1;
	r = rn_kube_cmd_start(&j->attach, &j->loop, argv.v, j->key_line, 0, on_attach_done, j);
	fg_seal_wipe(j->key_line, sizeof(j->key_line));
	if (r)
		rn__kjob_say("cannot run '%s attach': %s", j->p.program, uv_strerror(r));
	fg_strvec_release(&argv);
}

/* The session writes the key line first thing into our stdin. */
static void read_key(struct kjob *j)
{
	size_t n = 0;

	while (j->p.sealed && n < 65) {
		ssize_t k = read(STDIN_FILENO, j->key_line + n, 65 - n);

		if (k <= 0)
			break;
		n += (size_t)k;
	}
	j->key_line[n] = '\0';
	j->have_key = n == 65 && j->key_line[64] == '\n';
	if (j->p.sealed && !j->have_key)
		rn__kjob_say("no key line on standard input: the run's records will not be sealed");
}

static void waiting(struct kjob *j, const struct rn_kube_status *st)
{
	char msg[1200];

	switch (st->phase) {
	case RN_KUBE_RUNNING:
		attach_key(j);
		/* fallthrough */
	case RN_KUBE_DONE:
		j->state = KJ_FOLLOW;
		j->seen_running = 1;
		rn__kjob_follow(j, logs_ended);
		schedule_poll(j, RN_KUBE_POLL_RUN_MS);
		return;
	case RN_KUBE_CANNOT_START:
		finish(j, FG_EXIT_RUNTIME, st->reason, 0);
		return;
	case RN_KUBE_DEADLINE:
		finish(j, FG_EXIT_TIMEOUT, "timed out: the job's activeDeadlineSeconds ran out", 0);
		return;
	case RN_KUBE_GONE:
		snprintf(msg, sizeof(msg), "the pod of job forge-%s went before it started: %s",
			 j->p.run_id, st->reason);
		finish(j, j->stopping ? FG_EXIT_SIGNAL_BASE + SIGTERM : FG_EXIT_RUNTIME, msg, 0);
		return;
	default:
		break;
	}
	if (elapsed_s(j) > j->k.start_timeout) {
		snprintf(msg, sizeof(msg), "%s (still not running after %g s: --start-timeout)",
			 st->reason, j->k.start_timeout);
		finish(j, FG_EXIT_RUNTIME, msg, 0);
		return;
	}
	schedule_poll(j, RN_KUBE_POLL_START_MS);
}

static void oom_reason(struct kjob *j, char *msg, size_t n)
{
	snprintf(msg, n, "killed: out of memory (limit %s)", j->k.c.memory ? j->k.c.memory : "none set");
}

/* The pod went (deleted, evicted) while it ran and the runner did not ask. */
static void gone(struct kjob *j, const struct rn_kube_status *st)
{
	char msg[1200];

	if (st->phase == RN_KUBE_GONE && strstr(st->reason, "evicted"))
		snprintf(msg, sizeof(msg), "pod %s %s", j->last.pod, st->reason);
	else
		snprintf(msg, sizeof(msg), "pod %s was deleted while the run was going on (not by "
			 "the runner)%s%s", j->last.pod, st->reason[0] ? ": " : "", st->reason);
	finish(j, FG_EXIT_RUNTIME, msg, 2000);
}

static void on_reconnect(uv_timer_t *t)
{
	struct kjob *j = t->data;

	if (!j->final && !j->logs_running && j->state == KJ_FOLLOW)
		rn__kjob_follow(j, logs_ended);
}

/* The stream ended but the container runs: again from where it ended. */
static void reconnect(struct kjob *j)
{
	char msg[256];
	int wait_s;

	if (++j->reconnects > RN_KUBE_RECONNECT_MAX) {
		snprintf(msg, sizeof(msg), "lost the log stream of job forge-%s (%d reconnects)",
			 j->p.run_id, RN_KUBE_RECONNECT_MAX);
		finish(j, FG_EXIT_RUNTIME, msg, 0);
		return;
	}
	wait_s = j->reconnects >= 6 ? 30 : 1 << (j->reconnects - 1);
	rn_msg(FG_MSG_WARN, "kubernetes: the log stream ended before the container; reconnecting (attempt %d, since %s)",
	       j->reconnects, j->last_ts[0] ? j->last_ts : "the start");
	uv_timer_start(&j->linger, on_reconnect, (uint64_t)wait_s * 1000u, 0);
}

static void following(struct kjob *j, const struct rn_kube_status *st)
{
	char msg[256];
	int went = st->phase == RN_KUBE_GONE || st->deleting;
	int sigterm = st->phase != RN_KUBE_DONE || st->exit_code == FG_EXIT_SIGNAL_BASE + SIGTERM;

	if (st->phase == RN_KUBE_DEADLINE) {
		finish(j, FG_EXIT_TIMEOUT, "timed out: the job's activeDeadlineSeconds ran out", 5000);
	} else if (went && !j->stopping && sigterm) {
		gone(j, st);
	} else if (st->phase == RN_KUBE_DONE) {
		if (st->oom)
			oom_reason(j, msg, sizeof(msg));
		finish(j, st->exit_code, st->oom ? msg : NULL, RN_KUBE_STREAM_LINGER_MS);
	} else if (went) {
		/* Our stop: the entrypoint writes its summary within the grace. */
		finish(j, FG_EXIT_SIGNAL_BASE + SIGTERM, NULL, (RN_KUBE_TERM_GRACE + 5) * 1000);
	} else if (!j->logs_running && !uv_is_active((uv_handle_t *)&j->linger)) {
		reconnect(j);
	}
	schedule_poll(j, RN_KUBE_POLL_RUN_MS);
}

static void on_status(struct rn_kube_cmd *c)
{
	struct kjob *j = c->data;
	struct rn_kube_status st;
	int bad = c->code != 0 || rn_kube_status_parse(c->out.data ? c->out.data : "", c->out.len, &st);

	if (bad) {
		char *e = rn_kube_cmd_error(c);

		if (++j->query_fails >= RN_KUBE_QUERY_FAIL_MAX)
			finish(j, FG_EXIT_RUNTIME, e, 0);
		else
			schedule_poll(j, RN_KUBE_POLL_RUN_MS);
		free(e);
	} else {
		j->query_fails = 0;
		if (!st.pod[0])
			memcpy(st.pod, j->last.pod, sizeof(st.pod));
		j->last = st;
	}
	rn_kube_cmd_release(c);
	if (!bad && !j->final && j->state == KJ_WAIT)
		waiting(j, &st);
	else if (!bad && !j->final && j->state == KJ_FOLLOW)
		following(j, &st);
	maybe_clean(j);
}

static void poll_status(uv_timer_t *t)
{
	struct kjob *j = t->data;
	struct fg_strvec argv;

	if (j->final || rn_kube_cmd_busy(&j->query)) {
		schedule_poll(j, RN_KUBE_POLL_START_MS);
		return;
	}
	fg_strvec_init(&argv);
	rn_kube_cli_prefix(&j->p, &argv);
	fg_strvec_pushl(&argv, "get", "jobs,pods", NULL);
	fg_strvec_pushf(&argv, "--selector=%s=%s", RN_KUBE_LABEL_RUN_ID, j->p.run_id);
	fg_strvec_push(&argv, "--output=json");
	if (rn_kube_cmd_start(&j->query, &j->loop, argv.v, NULL, RN_KUBE_QUERY_TIMEOUT_MS, on_status, j))
		finish(j, FG_EXIT_RUNTIME, "cannot run kubectl get", 0);
	fg_strvec_release(&argv);
}

static void logs_ended(struct kjob *j)
{
	if (j->final) {
		maybe_clean(j);
		return;
	}
	/* Ask now rather than at the next tick: ended with the container, or not. */
	uv_timer_stop(&j->poll);
	poll_status(&j->poll);
}

/* ---- creating the objects ---- */

static void on_created(struct rn_kube_cmd *c)
{
	struct kjob *j = c->data;
	char msg[1200];

	if (c->code != 0) {
		char *e = rn_kube_cmd_error(c);

		snprintf(msg, sizeof(msg), "cannot create the objects of job forge-%s: %s", j->p.run_id, e);
		free(e);
		rn_kube_cmd_release(c);
		j->state = KJ_WAIT;
		finish(j, FG_EXIT_RUNTIME, msg, 0);
		return;
	}
	rn_kube_cmd_release(c);
	uv_update_time(&j->loop);
	j->t_created = uv_now(&j->loop);
	j->state = KJ_WAIT;
	if (j->stopping) {
		send_stop(j);
		return;
	}
	schedule_poll(j, 0);
}

static int create(struct kjob *j)
{
	char err[512] = "";
	cJSON *list = rn_kube_manifest_for(&j->p, getppid(), err, sizeof(err));
	struct fg_strvec argv;
	char *json;
	int r;

	if (!list) {
		rn__kjob_say("%s", err);
		return FG_EXIT_USAGE;
	}
	json = cJSON_PrintUnformatted(list);
	cJSON_Delete(list);
	fg_strvec_init(&argv);
	rn_kube_cli_prefix(&j->p, &argv);
	fg_strvec_pushl(&argv, "create", "--filename=-", "--output=name", NULL);
	j->state = KJ_CREATE;
	r = rn_kube_cmd_start(&j->query, &j->loop, argv.v, json, RN_KUBE_QUERY_TIMEOUT_MS, on_created, j);
	fg_strvec_release(&argv);
	free(json);
	if (r) {
		rn__kjob_say("cannot run '%s': %s", j->p.program, uv_strerror(r));
		return FG_EXIT_RUNTIME;
	}
	return 0;
}

/* What dead runners of the same step left (this host's only): deleted
 * before this run's objects are made. A failure here is not the run's. */
static void reap_dead(struct kjob *j)
{
	struct fg_strvec none;

	if (j->stopping)
		return;
	fg_strvec_init(&none);
	(void)rn_kube_reap(&j->p, j->p.step, &none, RN_KUBE_REAP_QUIET);
	fg_strvec_release(&none);
}

/* ---- the command line (engine_kubernetes.c writes it) ---- */

enum { K_CLI = 1, K_NS, K_CTX, K_RUN_ID, K_IMAGE, K_VOLUME, K_SUBPATH, K_SKILLS, K_STEP, K_SKILL,
       K_TASK_KEY, K_TASK_FILE, K_CYCLE_DIR, K_MEMORY, K_CPUS, K_NETWORK, K_RUN_AS, K_FS_GROUP, K_RO,
       K_TIMEOUT, K_START, K_ENV, K_SEALED, K_TRACEPARENT, K_DEADLINE };

static const struct fg_opt kjob_options[] = {
	{ K_CLI, "cli", 0, "PATH", NULL, "" }, { K_NS, "namespace", 0, "NS", NULL, "" },
	{ K_CTX, "kube-context", 0, "C", NULL, "" }, { K_RUN_ID, "run-id", 0, "ID", NULL, "" },
	{ K_IMAGE, "image", 0, "I", NULL, "" }, { K_VOLUME, "workspace-volume", 0, "V", NULL, "" },
	{ K_SUBPATH, "workspace-subpath", 0, "P", NULL, "" }, { K_SKILLS, "skills-dir", 0, "D", NULL, "" },
	{ K_STEP, "step", 0, "S", NULL, "" }, { K_SKILL, "skill", 0, "S", NULL, "" },
	{ K_TASK_KEY, "task-key", 0, "K", NULL, "" }, { K_TASK_FILE, "task-file", 0, "F", NULL, "" },
	{ K_CYCLE_DIR, "cycle-dir", 0, "D", NULL, "" }, { K_MEMORY, "memory", 0, "M", NULL, "" },
	{ K_CPUS, "cpus", 0, "N", NULL, "" }, { K_NETWORK, "network", 0, "N", NULL, "" },
	{ K_RUN_AS, "run-as", 0, "U", NULL, "" }, { K_FS_GROUP, "fs-group", 0, "G", NULL, "" }, { K_RO, "read-only-rootfs", 0, NULL, NULL, "" },
	{ K_TIMEOUT, "timeout", 0, "S", NULL, "" }, { K_START, "start-timeout", 0, "S", NULL, "" },
	{ K_ENV, "env", 0, "NAME", NULL, "" }, { K_SEALED, "sealed", 0, NULL, NULL, "" },
	{ K_TRACEPARENT, "traceparent", 0, "TP", NULL, "" }, { K_DEADLINE, "deadline", 0, "T", NULL, "" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

static int take(struct kjob *j, int id, const char *v)
{
	struct rn_engine_params *p = &j->p;
	struct rn_kube_opts *k = &j->k;
	const char **slot[] = {
		[K_CLI] = &p->program, [K_NS] = &k->kube_namespace, [K_CTX] = &k->kube_context,
		[K_RUN_ID] = &p->run_id, [K_IMAGE] = &p->image, [K_VOLUME] = &p->workspace_volume,
		[K_SUBPATH] = &k->workspace_subpath, [K_SKILLS] = &p->skills_dir, [K_STEP] = &p->step,
		[K_SKILL] = &p->skill, [K_TASK_KEY] = &p->task_key, [K_TASK_FILE] = &p->task_file,
		[K_CYCLE_DIR] = &p->cycle_dir, [K_MEMORY] = &k->c.memory, [K_CPUS] = &k->c.cpus,
		[K_NETWORK] = &k->c.network, [K_RUN_AS] = &k->run_as, [K_FS_GROUP] = &k->fs_group,
		[K_TRACEPARENT] = &p->traceparent, [K_DEADLINE] = &p->deadline,
	};

	if (id > 0 && id < (int)(ARRAY_SIZE(slot)) && slot[id]) {
		*slot[id] = v;
		return 0;
	}
	switch (id) {
	case K_RO: k->c.read_only_rootfs = 1; return 0;
	case K_SEALED: p->sealed = 1; return 0;
	case K_TIMEOUT: return fg_parse_double(v, 0, 1e9, &p->timeout) ? -EINVAL : 0;
	case K_START: return fg_parse_double(v, 0, 1e9, &k->start_timeout) ? -EINVAL : 0;
	case K_ENV: fg_strvec_push(&j->env_names, v); return 0;
	default: return -EINVAL;
	}
}

static int parse(struct kjob *j, int argc, char **argv)
{
	struct fg_opts_iter it;

	rn_kube_opts_init(&j->k);
	j->p.ops = &rn_engine_kubernetes_ops;
	j->p.data = &j->k;
	j->p.environ = environ;
	fg_strvec_init(&j->env_names);
	fg_opts_init(&it, kjob_options, argc, argv, 1);
	while (fg_opts_each(&it))
		if (it.id == FG_OPT_POSITIONAL || take(j, it.id, it.value))
			return rn_cmd_usage(RN_KUBE_JOB_CMD, "bad argument '%s'", it.value ? it.value : "");
	if (fg_opts_failed(&it))
		return rn_cmd_usage(RN_KUBE_JOB_CMD, "%s", it.err);
	if (!j->p.program || !j->p.run_id || !j->p.step)
		return rn_cmd_usage(RN_KUBE_JOB_CMD, "needs --cli, --run-id and --step "
				    "(an internal command of the kubernetes engine)");
	j->p.extra_env = (const char *const *)j->env_names.v;
	j->p.nextra_env = j->env_names.n;
	return 0;
}

static void init_loop(struct kjob *j)
{
	int signums[3] = { SIGTERM, SIGINT, SIGHUP };

	uv_loop_init(&j->loop);
	uv_timer_init(&j->loop, &j->poll);
	uv_timer_init(&j->loop, &j->linger);
	j->poll.data = j->linger.data = j;
	for (int i = 0; i < 3; i++) {
		uv_signal_init(&j->loop, &j->sig[i]);
		j->sig[i].data = j;
		uv_signal_start(&j->sig[i], on_signal, signums[i]);
	}
}

int rn_cmd_kube_job(int argc, char **argv)
{
	struct kjob *j = fg_xcalloc(1, sizeof(*j));
	int r = parse(j, argc, argv);

	if (!r) {
		read_key(j);
		init_loop(j);
		/* The runner gone is a stop: the Job is deleted, not left running. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			j->stopping = 1;
		reap_dead(j);
		r = create(j);
		if (r)
			close_all(j);
		uv_run(&j->loop, UV_RUN_DEFAULT);
		uv_loop_close(&j->loop);
		if (!r && j->reason[0])
			rn__kjob_say("%s", j->reason);
		if (!r)
			r = j->code;
	}
	fg_strvec_release(&j->env_names);
	rn_kube_opts_release(&j->k);
	free(j);
	return r;
}
