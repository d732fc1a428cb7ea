/*
 * cmd_reap.c - `forge-runner reap`: deletes what kubernetes runs whose
 * runner died left on the cluster (kube.h).
 *
 * Every object the kubernetes engine creates carries the run id as a label
 * and its runner's host, pid and the pid's start time as annotations. A
 * run is dead when its runner was on this host and that process no longer
 * exists (or the pid now belongs to another process: another start time).
 * A run of a runner on another host is never touched (this host cannot
 * tell whether it lives) unless named with --run-id. Deleted: the run's
 * Job, pod, ConfigMaps, Secret and NetworkPolicy, by its run-id label.
 *
 * Exit: 0 (reaped, or nothing to reap); 1 (FG_EXIT_FAILED) when kubectl
 * failed; 2 on a usage error.
 */
#include "kube.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kube_cmd.h"
#include "forge/alloc.h"
#include "forge/exit.h"
#include "forge/json.h"
#include "forge/names.h"

enum { P_CLI = 1, P_NS, P_CTX, P_RUN_ID, P_STEP, P_DRY, P_HELP };

const struct fg_opt rn_reap_options[] = {
	{ P_CLI, "engine-cli", 0, "PATH", "FORGE_ENGINE_CLI", "kubectl (default) or oc" },
	{ P_NS, "namespace", 0, "NS", "FORGE_KUBE_NAMESPACE", "the namespace (default: the context's)" },
	{ P_CTX, "kube-context", 0, "NAME", "FORGE_KUBE_CONTEXT", "the kubeconfig context (default: the current one)" },
	{ P_RUN_ID, "run-id", 0, "ID", NULL, "reap this run whatever its runner (repeatable)" },
	{ P_STEP, "step", 0, "NAME", NULL, "only runs of this step" },
	{ P_DRY, "dry-run", 'n', NULL, NULL, "list what would be deleted, delete nothing" },
	{ P_HELP, "help", 'h', NULL, NULL, "show help" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

struct reap_args {
	struct rn_engine_params p;
	struct fg_strvec run_ids;   /* --run-id */
	unsigned flags;             /* RN_KUBE_REAP_* */
};

static const char *ann(const cJSON *o, const char *key)
{
	const cJSON *a = fg_json_obj(fg_json_obj(o, "metadata"), "annotations");

	return fg_json_str(a, key);
}

static const char *label(const cJSON *o, const char *key)
{
	const cJSON *l = fg_json_obj(fg_json_obj(o, "metadata"), "labels");

	return fg_json_str(l, key);
}

/* The runner of an object: alive, dead, or on another host (-1). */
static int runner_dead(const cJSON *o, const char *host)
{
	const char *h = ann(o, RN_KUBE_ANN_HOST), *pid_s = ann(o, RN_KUBE_ANN_PID);
	const char *start_s = ann(o, RN_KUBE_ANN_START);
	long pid;

	if (!h || !pid_s || strcmp(h, host))
		return -1;
	pid = strtol(pid_s, NULL, 10);
	if (pid <= 1)
		return -1;
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return 1;
	return start_s && strtoull(start_s, NULL, 10) != rn_kube_proc_start((pid_t)pid);
}

static int listed(const struct fg_strvec *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return 1;
	return 0;
}

/* The run ids to delete from the listing, each once. */
static void pick(const struct reap_args *a, const cJSON *items, struct fg_strvec *dead)
{
	char host[256] = "";
	const cJSON *it;

	gethostname(host, sizeof(host) - 1);
	cJSON_ArrayForEach(it, items) {
		const char *id = label(it, RN_KUBE_LABEL_RUN_ID);
		int d;

		if (!id || listed(dead, id))
			continue;
		d = listed(&a->run_ids, id) ? 1 : runner_dead(it, host);
		if (d == 1)
			fg_strvec_push(dead, id);
		else if (d < 0 && !a->run_ids.n && !(a->flags & RN_KUBE_REAP_QUIET))
			printf("left: run %s (its runner was on host %s; name it with --run-id to reap it)\n",
			       id, ann(it, RN_KUBE_ANN_HOST) ? ann(it, RN_KUBE_ANN_HOST) : "unknown");
	}
}

static int list_runs(const struct reap_args *a, const char *step, struct rn_kube_cmd *c)
{
	struct fg_strvec argv;
	char hash[17];
	int r;

	fg_strvec_init(&argv);
	rn_kube_cli_prefix(&a->p, &argv);
	fg_strvec_pushl(&argv, "get", RN_KUBE_KINDS, NULL);
	if (step) {
		rn_kube_step_hash(step, hash);
		fg_strvec_pushf(&argv, "--selector=%s=forge-runner,%s=%s", RN_KUBE_LABEL_MANAGED,
				RN_KUBE_LABEL_STEP, hash);
	} else {
		fg_strvec_pushf(&argv, "--selector=%s=forge-runner", RN_KUBE_LABEL_MANAGED);
	}
	fg_strvec_push(&argv, "--output=json");
	r = rn_kube_cmd_run(c, argv.v, NULL, 60000);
	fg_strvec_release(&argv);
	return r;
}

static int delete_run(const struct reap_args *a, const char *id)
{
	struct rn_engine_params p = a->p;
	struct rn_kube_cmd c = { 0 };
	struct fg_strvec argv;
	int r;

	p.run_id = id;
	fg_strvec_init(&argv);
	rn_kube_delete_argv(&p, &argv);
	r = rn_kube_cmd_run(&c, argv.v, NULL, 60000);
	if (r) {
		char *e = rn_kube_cmd_error(&c);

		rn_msg(FG_MSG_ERROR, "cannot reap run %s: %s", id, e);
		free(e);
	} else {
		printf("reaped: run %s (its runner is gone)\n", id);
		fflush(stdout);
	}
	rn_kube_cmd_release(&c);
	fg_strvec_release(&argv);
	return r;
}

int rn_kube_reap(const struct rn_engine_params *p, const char *step, const struct fg_strvec *ids,
		 unsigned flags)
{
	struct reap_args a = { .p = *p, .flags = flags };
	struct rn_kube_cmd c = { 0 };
	struct fg_strvec dead;
	cJSON *doc;
	int r = list_runs(&a, step, &c), failed = 0;

	a.run_ids = *ids;
	doc = r ? NULL : fg_json_parse_exact(c.out.data ? c.out.data : "", c.out.len);
	if (!doc) {
		char *e = rn_kube_cmd_error(&c);

		if (!(flags & RN_KUBE_REAP_QUIET))
			rn_msg(FG_MSG_ERROR, "cannot list the runs: %s", e);
		free(e);
		rn_kube_cmd_release(&c);
		return FG_EXIT_FAILED;
	}
	rn_kube_cmd_release(&c);
	fg_strvec_init(&dead);
	pick(&a, fg_json_get(doc, "items"), &dead);
	for (size_t i = 0; i < dead.n; i++)
		if (flags & RN_KUBE_REAP_DRY)
			printf("would reap: run %s\n", dead.v[i]);
		else
			failed |= delete_run(&a, dead.v[i]) != 0;
	fg_strvec_release(&dead);
	cJSON_Delete(doc);
	return failed ? FG_EXIT_FAILED : 0;
}

static int take_arg(struct reap_args *a, struct rn_kube_opts *k, const char **step, int id,
		    const char *v)
{
	switch (id) {
	case P_CLI: a->p.program = v; return 0;
	case P_NS: k->kube_namespace = v; return 0;
	case P_CTX: k->kube_context = v; return 0;
	case P_RUN_ID:
		if (strlen(v) != 16 || strspn(v, "0123456789abcdef") != 16)
			return rn_cmd_usage("reap", "invalid run id '%.64s' (16 lowercase hex digits)", v);
		fg_strvec_push(&a->run_ids, v);
		return 0;
	case P_STEP: *step = v; return 0;
	case P_DRY: a->flags |= RN_KUBE_REAP_DRY; return 0;
	case P_HELP: return -1;
	default: return rn_cmd_usage("reap", "unexpected argument '%s'", v ? v : "");
	}
}

int rn_cmd_reap(int argc, char **argv)
{
	struct reap_args a = { 0 };
	struct rn_kube_opts k;
	struct fg_opts_iter it;
	const char *step = NULL;
	int r = 0;

	rn_kube_opts_init(&k);
	a.p.ops = &rn_engine_kubernetes_ops;
	a.p.data = &k;
	a.p.program = getenv("FORGE_ENGINE_CLI") && *getenv("FORGE_ENGINE_CLI") ? getenv("FORGE_ENGINE_CLI") : "kubectl";
	k.kube_namespace = getenv("FORGE_KUBE_NAMESPACE");
	k.kube_context = getenv("FORGE_KUBE_CONTEXT");
	fg_strvec_init(&a.run_ids);
	fg_opts_init(&it, rn_reap_options, argc, argv, 1);
	while (!r && fg_opts_each(&it))
		r = it.id == FG_OPT_POSITIONAL ? rn_cmd_usage("reap", "unexpected argument '%s'", it.value)
					    : take_arg(&a, &k, &step, it.id, it.value);
	if (!r && fg_opts_failed(&it))
		r = rn_cmd_usage("reap", "%s", it.err);
	if (r < 0)
		r = rn_cmd_help("forge-runner reap [--namespace NS] [--kube-context NAME] [--step NAME] "
				"[--run-id ID]... [--dry-run]", rn_reap_options);
	else if (!r)
		r = rn_kube_reap(&a.p, step, &a.run_ids, a.flags);
	fg_strvec_release(&a.run_ids);
	rn_kube_opts_release(&k);
	return r;
}
