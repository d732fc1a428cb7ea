/*
 * otlp.h - the OTLP/HTTP export of a run's trace (trace.h builds the
 * spans): its configuration from the standard OTEL_* variables and the
 * exporter child that posts each batch.
 *
 * Configuration (rn_otlp_config_load, from the environment):
 *   OTEL_TRACES_EXPORTER       "otlp" (default) or "none" (off); anything
 *                              else is not supported: off, with a warning
 *   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT  the URL, as is; else
 *   OTEL_EXPORTER_OTLP_ENDPOINT         the base URL + "/v1/traces". The
 *                              export is on only when one of the two is set
 *                              or OTEL_TRACES_EXPORTER=otlp is (then
 *                              http://localhost:4318/v1/traces)
 *   OTEL_EXPORTER_OTLP_[TRACES_]HEADERS  "name=value,..." (values
 *                              percent-decoded), sent with every request
 *   OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL  http/json; http/protobuf (the
 *                              SDKs' default) is sent as JSON, which OTLP/HTTP
 *                              receivers accept as well; grpc: off, warned
 *   OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT  one request's limit, ms (10000)
 *
 * The exporter is a child process started before the run's loop starts, so
 * the network never reaches the runner's loop: the runner writes each batch
 * (one OTLP JSON document, one line) to a non-blocking pipe and goes on; a
 * full pipe (a collector that never answers) drops the batch and counts it.
 * The child is its own program, forge-otlp-export, found beside
 * forge-runner (runner/exporter/): only it links libcurl, so a runner maps
 * none of libcurl's libraries. It reads the same OTEL_* environment, posts
 * each line with libcurl, one request at a time, and at the end of its
 * input says how the export went on descriptor RN_OTLP_STATUS_FD. It dies
 * with the runner (PR_SET_DEATHSIG) and ignores the stop signals a terminal
 * sends, so the last batch of an interrupted run still leaves.
 *
 * Protocol: rn_otlp_config_load() -> rn_otlp_start() -> rn_otlp_send() per
 * batch -> rn_otlp_finish() once (waits at most its deadline, then kills
 * and reaps the child: nothing is left running).
 */
#ifndef RN_OTLP_H
#define RN_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "forge/buf.h"

/* The most one batch may be (a line longer is dropped). */
#define RN_OTLP_BATCH_MAX (4u * 1024 * 1024)
/* How long the end of a run waits for the last batches, ms. */
#define RN_OTLP_FINISH_MS 2000
#define RN_OTLP_URL_MAX 2048
/* The exporter program, in forge-runner's own directory. */
#define RN_OTLP_EXPORTER "forge-otlp-export"
/* The exporter's descriptor for its last word ("ok" or "fail WHY"). */
#define RN_OTLP_STATUS_FD 3

struct rn_otlp_config {
	bool on;                        /* export by OTLP/HTTP */
	char url[RN_OTLP_URL_MAX];
	struct fg_buf headers;          /* "Name: value\n" lines, decoded */
	long timeout_ms;
	char warning[256];              /* "" or why a setting was not taken */
};

struct rn_otlp {
	pid_t pid;                      /* the exporter child, 0 when none */
	int in_fd;                      /* batches to the child, -1 when closed */
	int status_fd;                  /* the child's last word, -1 when closed */
	long sent, dropped;             /* batches written to the pipe, and lost */
};

/* n bytes at s, trimmed of blanks and percent-decoded (the OTEL_*
 * "key=value,..." lists), into out (cap bytes): false when it does not fit
 * or decodes to a control character. */
bool rn_otlp_decode(const char *s, size_t n, char *out, size_t cap);

/* Fills c (released with rn_otlp_config_release) from the environment. */
void rn_otlp_config_load(struct rn_otlp_config *c);
void rn_otlp_config_release(struct rn_otlp_config *c);

/* Starts the exporter child for c (borrowed; c->on). 0, or a negative
 * errno (o then holds no child: the run goes on untraced by OTLP); -ENOSYS
 * when there is no forge-otlp-export beside this runner (it is built only
 * with libcurl). */
int rn_otlp_start(struct rn_otlp *o, const struct rn_otlp_config *c);
/* Hands one batch (len bytes, no newline) to the child; never blocks. */
void rn_otlp_send(struct rn_otlp *o, const char *batch, size_t len);
/*
 * Ends the export: closes the child's input, waits at most deadline_ms for
 * its word, then kills (SIGKILL) and reaps it. Returns 0 when every batch
 * was accepted, else -1 with why (a one-line reason: "HTTP 500 from URL",
 * "no answer within 2 s at exit", "3 batch(es) dropped").
 */
int rn_otlp_finish(struct rn_otlp *o, int deadline_ms, char *why, size_t whylen);

#endif
