/*
 * test_engine_kubernetes.c - the kubernetes engine's pure parts: the
 * manifest (every option to its field, names, labels, quantities, the
 * secret by name, the refusals), the status table (canned pod and Job
 * documents, one per row of docs/design/kubernetes.md), the log timestamps.
 * The flow against a real cluster is tests/e2e/test_runner_kubernetes.c.
 */
#include <limits.h>
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/num.h"
#include "engine.h"
#include "fgtest.h"
#include "kube.h"
#include "kube_job.h"

#define RUN_ID "0123456789abcdef"

static char *env_secret[] = { "FORGE_WORKER_CMD=/w.sh", "API_TOKEN=s3cr3t-value", "HOME=/x", NULL };

/* The engine's own options of the run params() makes, reset by it. */
static struct rn_kube_opts kopts;

static struct rn_engine_params params(void)
{
	static const char *extra[] = { "API_TOKEN" };
	struct rn_engine_params p = {
		.ops = rn_engine_find("kubernetes"), .data = &kopts, .program = "kubectl",
		.image = "forge-review:test", .workspace_volume = "claim-1", .step = "implement_task",
		.skill = "implement-task", .run_id = RUN_ID, .extra_env = extra, .nextra_env = 1,
		.environ = env_secret,
	};

	rn_kube_opts_release(&kopts);
	rn_kube_opts_init(&kopts);
	return p;
}

static const cJSON *item_of(const cJSON *list, const char *kind)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
		if (!strcmp(cJSON_GetObjectItemCaseSensitive(it, "kind")->valuestring, kind))
			return it;
	return NULL;
}

static const cJSON *path(const cJSON *o, const char *const *keys)
{
	long i;

	for (; o && *keys; keys++)
		o = !cJSON_IsArray(o) ? cJSON_GetObjectItemCaseSensitive(o, *keys)
		    : fg_parse_long(*keys, 0, INT_MAX, &i) == 0 ? cJSON_GetArrayItem(o, (int)i) : NULL;
	return o;
}
#define AT(o, ...) path((o), (const char *const[]){ __VA_ARGS__, NULL })

static const cJSON *container_of(const cJSON *job)
{
	return AT(job, "spec", "template", "spec", "containers", "0");
}

Test(engine_kubernetes, manifest_fields_labels_and_the_secret_by_name)
{
	struct rn_engine_params p = params();
	char err[512] = "";

	kopts.c.memory = "512m";
	kopts.c.cpus = "1.5";
	p.timeout = 30.2;
	kopts.run_as = "1000650000:0";
	kopts.fs_group = "10001";
	kopts.workspace_subpath = "ws/a";
	cJSON *list = rn_kube_manifest_for(&p, getpid(), err, sizeof(err));
	cr_assert_not_null(list, "%s", err);
	const cJSON *job = item_of(list, "Job"), *secret = item_of(list, "Secret");
	cr_assert_not_null(job);
	cr_assert_str_eq(AT(job, "metadata", "name")->valuestring, "forge-" RUN_ID);
	cr_assert_str_eq(AT(job, "metadata", "labels", RN_KUBE_LABEL_RUN_ID)->valuestring, RUN_ID);
	cr_assert_str_eq(AT(job, "metadata", "annotations", "forge-review/step")->valuestring, "implement_task");
	cr_assert_eq(AT(job, "spec", "backoffLimit")->valueint, 0);
	cr_assert_eq(AT(job, "spec", "activeDeadlineSeconds")->valueint, 31);
	cr_assert_eq(AT(job, "spec", "template", "spec", "securityContext", "runAsUser")->valuedouble, 1000650000.0);
	cr_assert_eq(AT(job, "spec", "template", "spec", "securityContext", "runAsGroup")->valueint, 0);
	/* --fs-group: the kubelet gives the claim to that group. */
	cr_assert_eq(AT(job, "spec", "template", "spec", "securityContext", "fsGroup")->valueint, 10001);
	cr_assert(cJSON_IsFalse(AT(job, "spec", "template", "spec", "automountServiceAccountToken")));
	const cJSON *c = container_of(job);
	cr_assert_str_eq(AT(c, "resources", "limits", "memory")->valuestring, "512Mi");
	cr_assert_str_eq(AT(c, "resources", "requests", "cpu")->valuestring, "1500m");
	cr_assert_str_eq(AT(c, "volumeMounts", "0", "subPath")->valuestring, "ws/a");
	cr_assert_str_eq(AT(job, "spec", "template", "spec", "volumes", "0", "persistentVolumeClaim",
			    "claimName")->valuestring, "claim-1");
	/* The value is in the Secret only; the Job names it. */
	cr_assert_str_eq(AT(secret, "stringData", "API_TOKEN")->valuestring, "s3cr3t-value");
	char *job_text = cJSON_PrintUnformatted(job);
	cr_assert_null(strstr(job_text, "s3cr3t"), "the --env value is in the Job: %s", job_text);
	cr_assert_not_null(strstr(job_text, "\"secretKeyRef\":{\"name\":\"forge-" RUN_ID "-env\",\"key\":\"API_TOKEN\"}"));
	cr_assert_not_null(strstr(job_text, "\"name\":\"FORGE_WORKER_CMD\",\"value\":\"/w.sh\""));
	cr_assert_null(strstr(job_text, "HOME"), "a variable outside the allowlist reached the pod");
	free(job_text);
	cJSON_Delete(list);
}

Test(engine_kubernetes, skills_and_task_become_configmaps)
{
	char *tmp = fgt_tmpdir(), *task = fgt_fmt("%s/task.json", tmp), *skills = fgt_fmt("%s/skills", tmp);
	char *rmd = fgt_fmt("%s/default/implement-task/review.md", skills), err[512] = "";
	struct rn_engine_params p = params();

	fgt_write(task, "{\"task_key\": \"A-1\"}\n");
	fgt_write(rmd, "Check it.\n");
	p.task_file = task;
	p.skills_dir = skills;
	cJSON *list = rn_kube_manifest_for(&p, getpid(), err, sizeof(err));
	cr_assert_not_null(list, "%s", err);
	const cJSON *maps = cJSON_GetObjectItemCaseSensitive(list, "items"), *it;
	int seen = 0;
	cJSON_ArrayForEach(it, maps) {
		const char *name = AT(it, "metadata", "name")->valuestring;

		if (!strcmp(name, "forge-" RUN_ID "-skills")) {
			cr_assert_str_eq(AT(it, "data", "default__implement-task__review.md")->valuestring, "Check it.\n");
			seen |= 1;
		} else if (!strcmp(name, "forge-" RUN_ID "-task")) {
			cr_assert_str_eq(AT(it, "data", "task.json")->valuestring, "{\"task_key\": \"A-1\"}\n");
			seen |= 2;
		}
	}
	cr_assert_eq(seen, 3);
	const cJSON *vol = AT(item_of(list, "Job"), "spec", "template", "spec", "volumes", "1");
	cr_assert_str_eq(AT(vol, "configMap", "items", "0", "path")->valuestring, "default/implement-task/review.md");
	cJSON_Delete(list);
	/* A symlink is refused: a ConfigMap holds copies. */
	char *link = fgt_fmt("%s/default/link.md", skills);
	cr_assert_eq(symlink("/etc/passwd", link), 0);
	cr_assert_null(rn_kube_manifest_for(&p, getpid(), err, sizeof(err)));
	cr_assert_not_null(strstr(err, "link.md"), "%s", err);
	free(link);
	fgt_rm_rf(tmp);
	free(tmp);
	free(task);
	free(skills);
	free(rmd);
}

Test(engine_kubernetes, refusals)
{
	struct rn_engine_params p = params();
	char err[512];
	const char *args[] = { "--privileged" };

	p.workspace_volume = NULL;
	cr_assert_null(rn_kube_manifest_for(&p, getpid(), err, sizeof(err)));
	cr_assert_not_null(strstr(err, "--workspace-volume"), "%s", err);
	p = params();
	kopts.c.network = "host";
	cr_assert_null(rn_kube_manifest_for(&p, getpid(), err, sizeof(err)));
	p = params();
	fg_strvec_push(&kopts.c.engine_args, args[0]);
	cr_assert_null(rn_kube_manifest_for(&p, getpid(), err, sizeof(err)));
	p = params();
	kopts.run_as = "0";
	cr_assert_null(rn_kube_manifest_for(&p, getpid(), err, sizeof(err)));
	p = params();
	kopts.fs_group = "0";
	cr_assert_null(rn_kube_manifest_for(&p, getpid(), err, sizeof(err)));
	cr_assert_not_null(strstr(err, "invalid --fs-group '0'"), "%s", err);
	p = params();
	kopts.c.network = "none";
	cJSON *list = rn_kube_manifest_for(&p, getpid(), err, sizeof(err));
	cr_assert_not_null(item_of(list, "NetworkPolicy"), "--network none makes a NetworkPolicy");
	cJSON_Delete(list);
}

Test(engine_kubernetes, quantities)
{
	char *q;

	cr_assert_str_eq((q = rn_kube_quantity_memory("16m")), "16Mi");
	free(q);
	cr_assert_str_eq((q = rn_kube_quantity_memory("2g")), "2Gi");
	free(q);
	cr_assert_str_eq((q = rn_kube_quantity_memory("1024")), "1024");
	free(q);
	cr_assert_null(rn_kube_quantity_memory("1x"));
	cr_assert_str_eq((q = rn_kube_quantity_cpus("0.25")), "250m");
	free(q);
}

static struct rn_kube_status status_of(const char *json)
{
	struct rn_kube_status st;

	cr_assert_eq(rn_kube_status_parse(json, strlen(json), &st), 0, "not a List: %s", json);
	return st;
}

#define POD(status) "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"forge-x-abc\"},\"spec\":{\"nodeName\":\"n\"},\"status\":" status "}"
#define JOB(conds) "{\"kind\":\"Job\",\"metadata\":{\"name\":\"forge-x\"},\"status\":{\"conditions\":" conds "}}"
#define LIST(a) "{\"kind\":\"List\",\"items\":[" a "]}"
#define LIST2(a, b) LIST(a "," b)
#define CSTATE(s) "{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"forge\",\"state\":" s "}]}"

Test(engine_kubernetes, status_table)
{
	struct rn_kube_status st;

	st = status_of(LIST2(JOB("[]"), POD(CSTATE("{\"terminated\":{\"exitCode\":3,\"reason\":\"Error\"}}"))));
	cr_assert_eq(st.phase, RN_KUBE_DONE);
	cr_assert_eq(st.exit_code, 3);
	st = status_of(LIST(POD(CSTATE("{\"terminated\":{\"exitCode\":137,\"reason\":\"OOMKilled\"}}"))));
	cr_assert(st.oom && st.exit_code == 137);
	st = status_of(LIST2(JOB("[{\"type\":\"Failed\",\"status\":\"True\",\"reason\":\"DeadlineExceeded\"}]"),
			    POD(CSTATE("{\"terminated\":{\"exitCode\":143}}"))));
	cr_assert_eq(st.phase, RN_KUBE_DEADLINE);
	st = status_of(LIST(POD(CSTATE("{\"waiting\":{\"reason\":\"ErrImagePull\",\"message\":\"no such image\"}}"))));
	cr_assert_eq(st.phase, RN_KUBE_CANNOT_START);
	cr_assert_not_null(strstr(st.reason, "ErrImagePull: no such image"), "%s", st.reason);
	st = status_of(LIST(POD(CSTATE("{\"waiting\":{\"reason\":\"ContainerCreating\"}}"))));
	cr_assert_eq(st.phase, RN_KUBE_PENDING);
	st = status_of(LIST("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{},\"status\":{\"phase\":"
			    "\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
			    "\"message\":\"0/1 nodes are available: 1 Insufficient cpu.\"}]}}"));
	cr_assert_eq(st.phase, RN_KUBE_PENDING);
	cr_assert(!st.scheduled);
	cr_assert_str_eq(st.reason, "not scheduled: 0/1 nodes are available: 1 Insufficient cpu.");
	st = status_of(LIST(POD("{\"phase\":\"Failed\",\"reason\":\"Evicted\",\"message\":\"low on memory\"}")));
	cr_assert_eq(st.phase, RN_KUBE_GONE);
	cr_assert_str_eq(st.reason, "evicted: low on memory");
	st = status_of(LIST(JOB("[]")));
	cr_assert_eq(st.phase, RN_KUBE_NONE);
	st = status_of(LIST(""));
	cr_assert_eq(st.phase, RN_KUBE_GONE);
	st = status_of(LIST(JOB("[{\"type\":\"Failed\",\"status\":\"True\",\"reason\":\"BackoffLimitExceeded\"}]")));
	cr_assert_eq(st.phase, RN_KUBE_GONE);
	cr_assert_neq(rn_kube_status_parse("[]", 2, &st), 0);
}

Test(engine_kubernetes, log_timestamps)
{
	char raw[48], ts[RN_KUBE_TS_LEN + 1];
	const char *line = "2026-01-15T10:30:00.1234Z [worker] hello";
	size_t k = rn_kube_ts_prefix(line, strlen(line), raw, sizeof(raw));

	cr_assert_eq(k, strlen("2026-01-15T10:30:00.1234Z "));
	cr_assert_eq(rn__kube_ts_norm(raw, ts), 0);
	cr_assert_str_eq(ts, "2026-01-15T10:30:00.123400000Z");
	cr_assert_eq(rn__kube_ts_norm("2026-01-15T10:30:00Z", ts), 0);
	cr_assert_str_eq(ts, "2026-01-15T10:30:00.000000000Z");
	cr_assert_eq(rn_kube_ts_prefix("[worker] no time", 16, raw, sizeof(raw)), 0);
	cr_assert_neq(rn__kube_ts_norm("2026-01-15T10:30:00.Z", ts), 0);
}

/* The run's deadline is a plain value of the pod's environment; without
 * --timeout there is none. */
Test(engine_kubernetes, the_deadline_is_in_the_pods_environment)
{
	struct rn_engine_params p = params();
	char err[512] = "";

	p.timeout = 30;
	p.deadline = "1767225600.250";
	cJSON *list = rn_kube_manifest_for(&p, getpid(), err, sizeof(err));
	cr_assert_not_null(list, "%s", err);
	char *job_text = cJSON_PrintUnformatted(item_of(list, "Job"));
	cr_assert_not_null(strstr(job_text, "{\"name\":\"FORGE_DEADLINE\",\"value\":\"1767225600.250\"}"), "%s",
			   job_text);
	free(job_text);
	cJSON_Delete(list);
	p.deadline = NULL;
	list = rn_kube_manifest_for(&p, getpid(), err, sizeof(err));
	job_text = cJSON_PrintUnformatted(item_of(list, "Job"));
	cr_assert_null(strstr(job_text, "FORGE_DEADLINE"), "%s", job_text);
	free(job_text);
	cJSON_Delete(list);
}

/* The pod is made by the kubernetes-job child, which knows the run only by
 * its command line: the traceparent and the deadline must be on it, or the
 * agents in the pod join no trace and the entrypoint never stops itself. */
Test(engine_kubernetes, the_child_is_given_the_traceparent_and_the_deadline)
{
	struct rn_engine_params p = params();
	struct fg_strvec argv, env;
	char err[512] = "";
	int tp = 0, dl = 0;

	p.traceparent = "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01";
	p.deadline = "1767225600.250";
	fg_strvec_init(&argv);
	fg_strvec_init(&env);
	cr_assert_eq(rn_engine_build(&p, &argv, &env, err, sizeof(err)), 0, "%s", err);
	for (size_t i = 0; i + 1 < argv.n; i++) {
		tp += !strcmp(argv.v[i], "--traceparent") && !strcmp(argv.v[i + 1], p.traceparent);
		dl += !strcmp(argv.v[i], "--deadline") && !strcmp(argv.v[i + 1], p.deadline);
	}
	cr_assert_eq(tp, 1, "no --traceparent for the child");
	cr_assert_eq(dl, 1, "no --deadline for the child");
	fg_strvec_release(&argv);
	fg_strvec_release(&env);
}
