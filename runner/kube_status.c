/*
 * kube_status.c - what `kubectl get jobs,pods -l forge-review/run-id=ID -o
 * json` says about a run (kube.h). Pure functions of the document, so each
 * row of the design's exit-code table is a unit test.
 */
#include "kube.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "forge/json.h"
#include "forge/util.h"

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);

	if (b)
		v = cJSON_GetObjectItemCaseSensitive(v, b);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void set_reason(struct rn_kube_status *st, const char *what, const char *reason,
		       const char *msg)
{
	snprintf(st->reason, sizeof(st->reason), "%s%s%s%s%s", what, reason ? reason : "",
		 reason && msg ? ": " : "", msg ? msg : "", "");
}

int rn_kube_waiting_fatal(const char *reason)
{
	static const char *const fatal[] = {
		"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
		"CreateContainerConfigError", "CreateContainerError", "RunContainerError",
	};

	for (size_t i = 0; reason && i < ARRAY_SIZE(fatal); i++)
		if (!strcmp(reason, fatal[i]))
			return 1;
	return 0;
}

/* The Job's Failed condition: DeadlineExceeded, or (no pod left) why. */
static void read_job(const cJSON *job, struct rn_kube_status *st, int *failed)
{
	const cJSON *c, *conds = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(job, "status"), "conditions");

	cJSON_ArrayForEach(c, conds) {
		const char *type = str_at(c, "type", NULL), *status = str_at(c, "status", NULL);
		const char *reason = str_at(c, "reason", NULL);

		if (!type || !status || strcmp(type, "Failed") || strcmp(status, "True"))
			continue;
		*failed = 1;
		if (reason && !strcmp(reason, "DeadlineExceeded")) {
			st->phase = RN_KUBE_DEADLINE;
			set_reason(st, "", "DeadlineExceeded", str_at(c, "message", NULL));
		} else if (!st->reason[0]) {
			set_reason(st, "job failed: ", reason, str_at(c, "message", NULL));
		}
	}
}

static const cJSON *forge_container(const cJSON *pod)
{
	const cJSON *c, *list = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(pod, "status"), "containerStatuses");

	cJSON_ArrayForEach(c, list) {
		const char *name = str_at(c, "name", NULL);

		if (name && !strcmp(name, RN_KUBE_CONTAINER))
			return c;
	}
	return NULL;
}

static void read_terminated(const cJSON *t, struct rn_kube_status *st)
{
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(t, "exitCode");
	const char *reason = str_at(t, "reason", NULL), *msg = str_at(t, "message", NULL);

	st->phase = RN_KUBE_DONE;
	st->exit_code = cJSON_IsNumber(code) ? code->valueint : 125;
	st->oom = reason && !strcmp(reason, "OOMKilled");
	if (st->oom)
		st->exit_code = 137;
	if (msg)
		snprintf(st->message, sizeof(st->message), "%s", msg);
	if (reason)
		snprintf(st->reason, sizeof(st->reason), "%s", reason);
}

/* The container's state: terminated, running, or waiting (and why). */
static int read_container(const cJSON *pod, struct rn_kube_status *st)
{
	const cJSON *c = forge_container(pod), *state, *w;
	const char *reason;

	if (!c)
		return 0;
	state = cJSON_GetObjectItemCaseSensitive(c, "state");
	if (cJSON_GetObjectItemCaseSensitive(state, "terminated")) {
		read_terminated(cJSON_GetObjectItemCaseSensitive(state, "terminated"), st);
		return 1;
	}
	if (cJSON_GetObjectItemCaseSensitive(state, "running")) {
		st->phase = RN_KUBE_RUNNING;
		return 1;
	}
	w = cJSON_GetObjectItemCaseSensitive(state, "waiting");
	reason = str_at(w, "reason", NULL);
	st->phase = rn_kube_waiting_fatal(reason) ? RN_KUBE_CANNOT_START : RN_KUBE_PENDING;
	set_reason(st, "cannot start: ", reason ? reason : "waiting", str_at(w, "message", NULL));
	return 1;
}

/* A pod without a container status: unscheduled, or refused by the node. */
static void read_unstarted(const cJSON *pod, struct rn_kube_status *st)
{
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(pod, "status"), *c;
	const char *phase = str_at(status, "phase", NULL);

	st->phase = RN_KUBE_PENDING;
	if (phase && !strcmp(phase, "Failed")) {
		st->phase = RN_KUBE_CANNOT_START;
		set_reason(st, "cannot start: ", str_at(status, "reason", NULL),
			   str_at(status, "message", NULL));
		return;
	}
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(status, "conditions")) {
		const char *type = str_at(c, "type", NULL), *s = str_at(c, "status", NULL);

		if (type && s && !strcmp(type, "PodScheduled") && !strcmp(s, "False"))
			set_reason(st, "not scheduled: ", NULL, str_at(c, "message", NULL));
	}
	if (!st->reason[0])
		set_reason(st, "", st->scheduled ? "starting" : "waiting to be scheduled", NULL);
}

static void read_pod(const cJSON *pod, struct rn_kube_status *st)
{
	const char *name = str_at(pod, "metadata", "name"), *reason;

	snprintf(st->pod, sizeof(st->pod), "%s", name ? name : "");
	st->deleting = str_at(pod, "metadata", "deletionTimestamp") != NULL;
	st->scheduled = str_at(pod, "spec", "nodeName") != NULL;
	st->reason[0] = '\0';
	reason = str_at(pod, "status", "reason");
	if (reason && !strcmp(reason, "Evicted")) {
		st->phase = RN_KUBE_GONE;
		set_reason(st, "evicted: ", NULL, str_at(pod, "status", "message"));
		return;
	}
	if (!read_container(pod, st))
		read_unstarted(pod, st);
}

int rn_kube_status_parse(const char *json, size_t len, struct rn_kube_status *st)
{
	cJSON *doc = fg_json_parse_exact(json, len);
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(doc, "items"), *it, *pod = NULL;
	int have_job = 0, failed = 0;

	memset(st, 0, sizeof(*st));
	if (!cJSON_IsArray(items)) {
		cJSON_Delete(doc);
		return -EINVAL;
	}
	cJSON_ArrayForEach(it, items) {
		const char *kind = str_at(it, "kind", NULL);

		if (kind && !strcmp(kind, "Pod"))
			pod = it;  /* backoffLimit 0: one pod; the last listed if more */
		else if (kind && !strcmp(kind, "Job"))
			have_job = 1;
	}
	if (pod)
		read_pod(pod, st);
	cJSON_ArrayForEach(it, items)
		if (str_at(it, "kind", NULL) && !strcmp(str_at(it, "kind", NULL), "Job"))
			read_job(it, st, &failed);
	if (!pod && st->phase != RN_KUBE_DEADLINE)
		st->phase = have_job && !failed ? RN_KUBE_NONE : RN_KUBE_GONE;
	if (!pod && !have_job)
		set_reason(st, "", "the job and its pod were deleted", NULL);
	cJSON_Delete(doc);
	return 0;
}

size_t rn_kube_ts_prefix(const char *line, size_t n, char *ts, size_t tslen)
{
	const char *sp = memchr(line, ' ', n < 40 ? n : 40);
	size_t k = sp ? (size_t)(sp - line) : 0;

	if (k < 20 || line[4] != '-' || line[10] != 'T' || line[k - 1] != 'Z' || k >= tslen)
		return 0;
	memcpy(ts, line, k);
	ts[k] = '\0';
	return k + 1;
}
