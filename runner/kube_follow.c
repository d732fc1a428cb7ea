/*
 * kube_follow.c - the kubernetes-job child's log stream (kube_job.h):
 * `kubectl logs -f --timestamps` of the pod's forge container, each line's
 * timestamp stripped and the line written to stderr, where the session's
 * frame reader takes it. A reconnect asks again from the last second seen
 * (--since-time); the lines already written are skipped by their times.
 */
#include "kube_job.h"
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/fsutil.h"

int rn__kube_ts_norm(const char *ts, char out[RN_KUBE_TS_LEN + 1])
{
	size_t n = strlen(ts), digits = n > 21 ? n - 21 : 0;

	if (n < 20 || ts[n - 1] != 'Z' || (n > 20 && (ts[19] != '.' || digits < 1 || digits > 9)))
		return -EINVAL;
	for (size_t i = 0; i < digits; i++)
		if (ts[20 + i] < '0' || ts[20 + i] > '9')
			return -EINVAL;
	memcpy(out, ts, 19);
	out[19] = '.';
	memcpy(out + 20, ts + 20, digits);
	memset(out + 20 + digits, '0', 9 - digits);
	out[29] = 'Z';
	out[30] = '\0';
	return 0;
}

static void write_err(const char *p, size_t n)
{
	/* The runner may be gone (EPIPE: SIGPIPE is ignored); nothing to do. */
	(void)fg_write_all(STDERR_FILENO, p, n);
}

/* 1 when the line (time ts) was written before the reconnect. */
static int already_seen(struct kjob *j, const char *ts)
{
	int c;

	if (!j->skip_ts[0])
		return 0;
	c = strcmp(ts, j->skip_ts);
	if (c < 0)
		return 1;
	if (c == 0 && j->skip_left > 0) {
		j->skip_left--;
		return 1;
	}
	j->skip_ts[0] = '\0';
	return 0;
}

static void on_line(struct rn_kube_cmd *c, const char *line, size_t n, int piece)
{
	struct kjob *j = c->data;
	char raw[48], ts[RN_KUBE_TS_LEN + 1];
	size_t k = j->in_piece ? 0 : rn_kube_ts_prefix(line, n, raw, sizeof(raw));

	if (k && !rn__kube_ts_norm(raw, ts)) {
		if (already_seen(j, ts)) {
			j->skipping = piece;
			j->in_piece = piece;
			return;
		}
		if (strcmp(ts, j->last_ts)) {
			memcpy(j->last_ts, ts, sizeof(ts));
			j->at_last_ts = 0;
		}
		j->at_last_ts++;
	}
	if (j->in_piece && j->skipping) {
		/* The rest of a line that was written before. */
		j->in_piece = j->skipping = piece;
		return;
	}
	j->lines++;
	write_err(line + k, n - k);
	if (!piece)
		write_err("\n", 1);
	j->in_piece = piece;
}

void rn__kjob_say(const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	rn_msg(FG_MSG_ERROR, "kubernetes: %s", line);
}

static void on_logs_done(struct rn_kube_cmd *c)
{
	struct kjob *j = c->data;

	j->logs_running = 0;
	rn_kube_cmd_release(c);
	j->logs_ended(j);
}

void rn__kjob_follow(struct kjob *j, void (*ended)(struct kjob *j))
{
	struct fg_strvec argv;
	char since[48];
	int r;

	j->logs_ended = ended;
	fg_strvec_init(&argv);
	rn_kube_cli_prefix(&j->p, &argv);
	fg_strvec_pushl(&argv, "logs", "--follow", "--timestamps", "--container=" RN_KUBE_CONTAINER,
			NULL);
	if (j->last_ts[0]) {
		/* The server counts from whole seconds: lines of the last second
		 * come again and are skipped by their times. */
		snprintf(since, sizeof(since), "%.19sZ", j->last_ts);
		fg_strvec_pushf(&argv, "--since-time=%s", since);
		memcpy(j->skip_ts, j->last_ts, sizeof(j->skip_ts));
		j->skip_left = j->at_last_ts;
	}
	fg_strvec_pushf(&argv, "pod/%s", j->last.pod);
	j->logs.lines = on_line;
	r = rn_kube_cmd_start(&j->logs, &j->loop, argv.v, NULL, 0, on_logs_done, j);
	fg_strvec_release(&argv);
	if (r) {
		rn__kjob_say("cannot run '%s logs': %s", j->p.program, uv_strerror(r));
		rn_kube_cmd_release(&j->logs);
		ended(j);
		return;
	}
	j->logs_running = 1;
}
