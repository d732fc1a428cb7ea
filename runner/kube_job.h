/*
 * kube_job.h - the state of `forge-runner kubernetes-job` (kube_job.c: the
 * flow; kube_follow.c: the log stream, de-duplicated across reconnects).
 *
 * Flow: reap what dead runners of the same step left -> create the run's
 * objects in one `kubectl create -f -` -> poll the pod until it runs (or
 * cannot: unschedulable past --start-timeout, an image that cannot be
 * pulled, the pod deleted) -> follow `kubectl logs -f --timestamps` onto
 * stderr while polling the status -> reconnect with --since-time when the
 * stream ends before the container -> the exit code from the status ->
 * delete every object of the run -> exit with that code.
 */
#ifndef RN_KUBE_JOB_H
#define RN_KUBE_JOB_H

#include <uv.h>

#include "engine.h"
#include "kube.h"
#include "kube_cmd.h"

/* Status polls: while waiting for the pod to start, and while following. */
#define RN_KUBE_POLL_START_MS 500
#define RN_KUBE_POLL_RUN_MS 2000
/* After the container ended (or the pod went), how long the stream may
 * take to end by itself. */
#define RN_KUBE_STREAM_LINGER_MS 5000
#define RN_KUBE_RECONNECT_MAX 10
#define RN_KUBE_QUERY_TIMEOUT_MS 30000
#define RN_KUBE_QUERY_FAIL_MAX 10
/* A normalised timestamp: "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ". */
#define RN_KUBE_TS_LEN 30

enum kjob_state { KJ_REAP, KJ_CREATE, KJ_WAIT, KJ_FOLLOW, KJ_CLEAN, KJ_DONE };

struct kjob {
	struct rn_engine_params p;
	struct rn_kube_opts k;        /* p.data: the engine's own options */
	struct fg_strvec env_names;   /* --env, for p.extra_env */
	uv_loop_t loop;
	enum kjob_state state;
	struct rn_kube_cmd query;     /* get / create / delete: one at a time */
	struct rn_kube_cmd logs;      /* kubectl logs -f */
	struct rn_kube_cmd stopper;   /* the Job's delete on SIGTERM */
	struct rn_kube_cmd attach;    /* sealed runs: kubectl attach -i, the key line, the lifeline */
	char key_line[66];            /* the key line read from our stdin (wiped after use) */
	int have_key, attach_started;
	int logs_running;
	uv_timer_t poll, linger;
	uv_signal_t sig[3];
	uint64_t t_created;           /* uv_now() when the objects exist */
	int query_fails;
	int stopping;                 /* SIGTERM/SIGINT, or the runner died */
	int stop_sent;                /* the Job's delete was issued */
	int seen_running;
	struct rn_kube_status last;   /* the last status read */
	int final;                    /* the outcome is decided: code and reason */
	int code;
	char reason[1024];
	int reconnects;
	/* The stream's position: the last line's normalised time, and how
	 * many lines carried exactly that time (they come again after a
	 * reconnect with --since-time, which the server rounds to seconds). */
	char last_ts[RN_KUBE_TS_LEN + 1];
	size_t at_last_ts;
	char skip_ts[RN_KUBE_TS_LEN + 1];
	size_t skip_left;
	size_t lines;
	int in_piece;                 /* the next piece continues a line */
	int skipping;                 /* ... one that is being skipped */
	void (*logs_ended)(struct kjob *j);  /* rn__kjob_follow()'s ended */
};

/* kube_follow.c (which calls nothing of kube_job.c: the end of the logs
 * comes back through ended) */
/* Follows the pod's log onto stderr (again from the last line seen after a
 * reconnect); ended(j) when the stream ends or cannot start. */
void rn__kjob_follow(struct kjob *j, void (*ended)(struct kjob *j));
/* "forge-runner: error: kubernetes: MSG" on stderr (rn_msg()). */
void rn__kjob_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Normalises an RFC 3339 time ("...:05.12Z") to RN_KUBE_TS_LEN characters
 * ("...:05.120000000Z") so that times compare as strings; 0 or -EINVAL. */
int rn__kube_ts_norm(const char *ts, char out[RN_KUBE_TS_LEN + 1]);


#endif
