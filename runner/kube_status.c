/*
 * kube_status.c - what `kubectl get jobs,pods -l forge-review/run-id=ID -o
 * json` says about a run, which waiting reasons are fatal, and the
 * timestamp prefix of a `kubectl logs --timestamps` line (kube.h). Pure
 * functions of the text, so each row of the design's exit-code table is a
 * unit test.
 */
#include "kube.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "forge/json.h"
#include "forge/util.h"

/* o's string member a (or a's member b), or NULL. */
static const char *str_at(const cJSON *o, const char *a, const char *b)
{
	return b ? fg_json_str(fg_json_obj(o, a), b) : fg_json_str(o, a);
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

	return FG_NAME_INDEX(fatal, reason, 0) >= 0;
}

/* The Job's Failed condition: DeadlineExceeded, or (no pod left) why. */
static void read_job(const cJSON *job, struct rn_kube_status *st, int *failed)
{
	const cJSON *c, *conds = fg_json_arr(fg_json_obj(job, "status"), "conditions");

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
	const cJSON *c, *list = fg_json_arr(fg_json_obj(pod, "status"), "containerStatuses");

	cJSON_ArrayForEach(c, list) {
		const char *name = str_at(c, "name", NULL);

		if (name && !strcmp(name, RN_KUBE_CONTAINER))
			return c;
	}
	return NULL;
}

static void read_terminated(const cJSON *t, struct rn_kube_status *st)
{
	double code = fg_json_num(t, "exitCode");
	const char *reason = str_at(t, "reason", NULL), *msg = str_at(t, "message", NULL);

	st->phase = RN_KUBE_DONE;
	st->exit_code = code >= INT_MIN && code <= INT_MAX ? (int)code : 125;
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
	state = fg_json_obj(c, "state");
	if (fg_json_obj(state, "terminated")) {
		read_terminated(fg_json_obj(state, "terminated"), st);
		return 1;
	}
	if (fg_json_obj(state, "running")) {
		st->phase = RN_KUBE_RUNNING;
		return 1;
	}
	w = fg_json_obj(state, "waiting");
	reason = str_at(w, "reason", NULL);
	st->phase = rn_kube_waiting_fatal(reason) ? RN_KUBE_CANNOT_START : RN_KUBE_PENDING;
	set_reason(st, "cannot start: ", reason ? reason : "waiting", str_at(w, "message", NULL));
	return 1;
}

/* A pod without a container status: unscheduled, or refused by the node. */
static void read_unstarted(const cJSON *pod, struct rn_kube_status *st)
{
	const cJSON *status = fg_json_obj(pod, "status"), *c;
	const char *phase = str_at(status, "phase", NULL);

	st->phase = RN_KUBE_PENDING;
	if (phase && !strcmp(phase, "Failed")) {
		st->phase = RN_KUBE_CANNOT_START;
		set_reason(st, "cannot start: ", str_at(status, "reason", NULL),
			   str_at(status, "message", NULL));
		return;
	}
	cJSON_ArrayForEach(c, fg_json_arr(status, "conditions")) {
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
	const cJSON *items = fg_json_arr(doc, "items"), *it, *pod = NULL;
	int have_job = 0, failed = 0;

	memset(st, 0, sizeof(*st));
	if (!items) {
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
