/*
 * kube_manifest.c - the objects of one kubernetes run as one v1/List
 * (kube.h, docs/design/kubernetes.md "Objects created for one run"): the
 * refusals of what a run cannot express, the metadata and labels (the
 * Job's name, the step's hash), the task ConfigMap, the --env Secret and
 * the NetworkPolicy; the Job and the skills come from kube_spec.c. Pure:
 * reads the task file and the skills directory, builds cJSON.
 */
#include "kube.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/fsutil.h"
#include "forge/json.h"
#include "forge/num.h"
#include "forge/text.h"

#include "internal_util.h"

#define MOUNT_WORKSPACE "/workspace"
#define MOUNT_SKILLS "/skills"
#define MOUNT_TASK "/forge/task"
#define TTL_AFTER_FINISHED 600

char *rn_kube_job_name(const char *run_id)
{
	return fg_xasprintf("forge-%s", run_id);
}

void rn_kube_step_hash(const char *step, char out[17])
{
	snprintf(out, 17, "%016llx", (unsigned long long)fg_hash64(step, strlen(step)));
}

/* ---- metadata ---- */

static cJSON *labels(const struct rn_engine_params *p)
{
	cJSON *l = cJSON_CreateObject();
	char hash[17];

	rn_kube_step_hash(p->step, hash);
	cJSON_AddStringToObject(l, RN_KUBE_LABEL_NAME, "forge-review");
	cJSON_AddStringToObject(l, RN_KUBE_LABEL_MANAGED, "forge-runner");
	cJSON_AddStringToObject(l, RN_KUBE_LABEL_RUN_ID, p->run_id);
	cJSON_AddStringToObject(l, RN_KUBE_LABEL_STEP, hash);
	return l;
}

/* The runner's identity for the reap: host, pid and the pid's start time
 * (a reused pid is not the same runner). */
static void add_runner(cJSON *a, pid_t runner)
{
	char host[256] = "", buf[32];

	gethostname(host, sizeof(host) - 1);
	cJSON_AddStringToObject(a, RN_KUBE_ANN_HOST, host);
	snprintf(buf, sizeof(buf), "%ld", (long)runner);
	cJSON_AddStringToObject(a, RN_KUBE_ANN_PID, buf);
	snprintf(buf, sizeof(buf), "%llu", rn_kube_proc_start(runner));
	cJSON_AddStringToObject(a, RN_KUBE_ANN_START, buf);
}

static cJSON *metadata(const struct rn_engine_params *p, const char *suffix, pid_t runner)
{
	cJSON *m = cJSON_CreateObject(), *a = cJSON_CreateObject();
	char *name = fg_xasprintf("forge-%s%s", p->run_id, suffix);

	cJSON_AddStringToObject(m, "name", name);
	free(name);
	cJSON_AddItemToObject(m, "labels", labels(p));
	cJSON_AddStringToObject(a, "forge-review/step", p->step);
	fg_json_add_str_if(a, "forge-review/skill", p->skill);
	fg_json_add_str_if(a, "forge-review/task-key", p->task_key);
	add_runner(a, runner);
	cJSON_AddItemToObject(m, "annotations", a);
	return m;
}

static cJSON *object(const char *api, const char *kind, cJSON *meta)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "apiVersion", api);
	cJSON_AddStringToObject(o, "kind", kind);
	cJSON_AddItemToObject(o, "metadata", meta);
	return o;
}

/* ---- Secret, ConfigMaps, NetworkPolicy ---- */

/* The --env values (set ones only), or NULL when none is set. */
static cJSON *secret(const struct rn_engine_params *p, pid_t runner)
{
	cJSON *data = cJSON_CreateObject(), *o;

	for (size_t i = 0; i < p->nextra_env; i++) {
		const char *v = rn_kube_env_value(p, p->extra_env[i]);

		if (v && !fg_json_str(data, p->extra_env[i]))
			cJSON_AddStringToObject(data, p->extra_env[i], v);
	}
	if (!data->child) {
		cJSON_Delete(data);
		return NULL;
	}
	o = object("v1", "Secret", metadata(p, "-env", runner));
	cJSON_AddStringToObject(o, "type", "Opaque");
	cJSON_AddItemToObject(o, "stringData", data);
	return o;
}

/* 1 when the n bytes are UTF-8 text without NUL (a ConfigMap's data). */
static int is_text(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k = s[i] ? fg_utf8_seq(s + i, n - i) : 0;

		if (!k)
			return 0;
		i += k;
	}
	return 1;
}

static cJSON *task_map(const struct rn_engine_params *p, pid_t runner, char *err, size_t errlen)
{
	struct fg_buf b;
	cJSON *o = NULL, *data;
	int r;

	fg_buf_init(&b, RN_KUBE_TASK_MAX);
	r = fg_read_file_at(AT_FDCWD, p->task_file, RN_KUBE_TASK_MAX, FG_READ_FOLLOW, &b, NULL);
	if (r || !is_text(b.data, b.len)) {
		rn__seterr(err, errlen, "task file '%s' cannot go into a ConfigMap: %s", p->task_file,
			   r == -EFBIG ? "larger than 1 MiB" : r ? strerror(-r) : "not UTF-8 text");
	} else {
		o = object("v1", "ConfigMap", metadata(p, "-task", runner));
		data = cJSON_AddObjectToObject(o, "data");
		cJSON_AddStringToObject(data, "task.json", fg_buf_str(&b));
	}
	fg_buf_release(&b);
	return o;
}

static cJSON *network_policy(const struct rn_engine_params *p, pid_t runner)
{
	cJSON *o = object("networking.k8s.io/v1", "NetworkPolicy", metadata(p, "", runner));
	cJSON *spec = cJSON_AddObjectToObject(o, "spec");
	cJSON *sel = cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "podSelector"), "matchLabels");
	cJSON *types = cJSON_AddArrayToObject(spec, "policyTypes");

	cJSON_AddStringToObject(sel, RN_KUBE_LABEL_RUN_ID, p->run_id);
	cJSON_AddItemToArray(types, cJSON_CreateString("Egress"));
	cJSON_AddArrayToObject(spec, "egress");
	return o;
}

/* ---- refusals ---- */

static int check_params(const struct rn_engine_params *p, char *err, size_t errlen)
{
	const struct rn_kube_opts *k = rn_kube_opts_of(p);

	if (!p->image || !*p->image)
		return rn__seterr(err, errlen, "engine 'kubernetes' needs an image (--image or FORGE_IMAGE)"), -EINVAL;
	if (!p->workspace_volume)
		return rn__seterr(err, errlen, "engine 'kubernetes' needs --workspace-volume CLAIM "
				  "(a PersistentVolumeClaim holding the workspace); --workspace "
				  "names a directory of this host, which a pod does not see"), -EINVAL;
	if (k->c.engine_args.n)
		return rn__seterr(err, errlen, "--engine-arg does not apply to engine 'kubernetes' "
				  "(there is no command line to append to)"), -EINVAL;
	if (k->c.network && strcmp(k->c.network, "none"))
		return rn__seterr(err, errlen, "engine 'kubernetes' takes only --network none "
				  "(a NetworkPolicy denying all egress), not '%s'", k->c.network), -EINVAL;
	if (k->run_as && rn_kube_run_as_parse(k->run_as, NULL, NULL))
		return rn__seterr(err, errlen, "invalid --run-as '%s' (UID or UID:GID, numbers; "
				  "UID not 0)", k->run_as), -EINVAL;
	if (k->fs_group && rn_kube_fs_group_parse(k->fs_group, NULL))
		return rn__seterr(err, errlen, "invalid --fs-group '%s' (a group id, a number from 1 "
				  "to 2147483647)", k->fs_group), -EINVAL;
	if (k->workspace_subpath && (k->workspace_subpath[0] == '/' ||
				     strstr(k->workspace_subpath, "..")))
		return rn__seterr(err, errlen, "invalid --workspace-subpath '%s' (a relative path "
				  "inside the claim, without '..')", k->workspace_subpath), -EINVAL;
	return 0;
}

static int add_maps(const struct rn_engine_params *p, pid_t runner, cJSON *items,
		    cJSON **skill_items, char *err, size_t errlen)
{
	cJSON *o;

	if (p->task_file) {
		o = task_map(p, runner, err, errlen);
		if (!o)
			return -EINVAL;
		cJSON_AddItemToArray(items, o);
	}
	if (p->skills_dir) {
		o = rn_kube_skills_map(p, metadata(p, "-skills", runner), skill_items, err, errlen);
		if (!o)
			return -EINVAL;
		cJSON_AddItemToArray(items, o);
	}
	o = secret(p, runner);
	if (o)
		cJSON_AddItemToArray(items, o);
	if (rn_kube_opts_of(p)->c.network)
		cJSON_AddItemToArray(items, network_policy(p, runner));
	return 0;
}

cJSON *rn_kube_manifest_for(const struct rn_engine_params *p, pid_t runner, char *err,
			    size_t errlen)
{
	cJSON *list, *items, *job, *skill_items = NULL;

	if (check_params(p, err, errlen))
		return NULL;
	list = cJSON_CreateObject();
	cJSON_AddStringToObject(list, "apiVersion", "v1");
	cJSON_AddStringToObject(list, "kind", "List");
	items = cJSON_AddArrayToObject(list, "items");
	if (add_maps(p, runner, items, &skill_items, err, errlen)) {
		cJSON_Delete(list);
		return NULL;
	}
	job = object("batch/v1", "Job", metadata(p, "", runner));
	rn_kube_job_spec(p, job, skill_items);
	cJSON_AddItemToArray(items, job);
	return list;
}
