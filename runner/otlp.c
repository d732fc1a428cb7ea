/*
 * otlp.c - the OTLP/HTTP export's configuration and the runner's side of
 * its exporter child, forge-otlp-export (see otlp.h).
 */
#include "otlp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "forge/fsutil.h"
#include "forge/num.h"
#include "forge/timeutil.h"
#include "forge/text.h"

#define DEFAULT_URL "http://localhost:4318/v1/traces"
#define DEFAULT_TIMEOUT_MS 10000

/* The signal-specific variable, else the general one; unset or empty: NULL. */
static const char *env2(const char *specific, const char *general)
{
	const char *v = getenv(specific);

	if (v && *v)
		return v;
	v = getenv(general);
	return v && *v ? v : NULL;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool rn_otlp_decode(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (c == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			c = hexval(s[i + 1]) * 16 + hexval(s[i + 2]);
			i += 2;
		}
		if (c < 0x20 || c == 0x7f || o + 1 >= cap)
			return false;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return true;
}

/* An HTTP header name: a token (RFC 9110). */
static bool token(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr("!#$%&'*+-.^_`|~", *s) && !((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
							(*s >= 'A' && *s <= 'Z')))
			return false;
	return true;
}

/* "name=value,..." into c->headers; a malformed pair is skipped and said. */
static void load_headers(struct rn_otlp_config *c, const char *v)
{
	while (v && *v) {
		const char *end = strchr(v, ','), *eq;
		size_t n = end ? (size_t)(end - v) : strlen(v);
		char name[256], value[4096];

		eq = memchr(v, '=', n);
		if (eq && rn_otlp_decode(v, (size_t)(eq - v), name, sizeof(name)) && token(name) &&
		    rn_otlp_decode(eq + 1, n - (size_t)(eq + 1 - v), value, sizeof(value)))
			fg_buf_addf(&c->headers, "%s: %s\n", name, value);
		else if (n)
			snprintf(c->warning, sizeof(c->warning), "a malformed OTEL_EXPORTER_OTLP_HEADERS pair was skipped");
		v = end ? end + 1 : NULL;
	}
}

/* The exporter's endpoint, protocol and timeout. */
static void load_target(struct rn_otlp_config *c)
{
	const char *url = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
	const char *base = getenv("OTEL_EXPORTER_OTLP_ENDPOINT");
	const char *proto = env2("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL");
	const char *t = env2("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT");
	long ms = DEFAULT_TIMEOUT_MS;

	if (url && *url) {
		snprintf(c->url, sizeof(c->url), "%s", url);
	} else if (base && *base) {
		size_t n = strlen(base);

		snprintf(c->url, sizeof(c->url), "%.*s/v1/traces", (int)(n && base[n - 1] == '/' ? n - 1 : n),
			 base);
	} else {
		snprintf(c->url, sizeof(c->url), "%s", DEFAULT_URL);
	}
	if (proto && strcmp(proto, "http/json") && strcmp(proto, "http/protobuf")) {
		snprintf(c->warning, sizeof(c->warning), "OTEL_EXPORTER_OTLP_PROTOCOL '%.40s' is not supported "
			 "(http/json): no OTLP export", proto);
		c->on = false;
	}
	if (t && fg_parse_long(t, 1, 600000, &ms))
		snprintf(c->warning, sizeof(c->warning), "invalid OTEL_EXPORTER_OTLP_TIMEOUT '%.40s': "
			 "%d ms", t, DEFAULT_TIMEOUT_MS);
	c->timeout_ms = ms;
}

void rn_otlp_config_load(struct rn_otlp_config *c)
{
	const char *exporter = getenv("OTEL_TRACES_EXPORTER");
	bool endpoint = env2("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT") != NULL;

	memset(c, 0, sizeof(*c));
	fg_buf_init(&c->headers, 64 * 1024);
	c->timeout_ms = DEFAULT_TIMEOUT_MS;
	if (exporter && *exporter && strcmp(exporter, "otlp")) {
		if (strcmp(exporter, "none"))
			snprintf(c->warning, sizeof(c->warning), "OTEL_TRACES_EXPORTER '%.40s' is not supported "
				 "(otlp or none): no OTLP export", exporter);
		return;
	}
	c->on = endpoint || (exporter && !strcmp(exporter, "otlp"));
	if (!c->on)
		return;
	load_target(c);
	load_headers(c, env2("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"));
}

void rn_otlp_config_release(struct rn_otlp_config *c)
{
	fg_buf_release(&c->headers);
}

/* The exporter program beside this one (forge-otlp-export), owned, or
 * NULL when there is none. */
static char *exporter_path(void)
{
	char self[4096], *slash, *path;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return NULL;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	path = fg_path_join(self, RN_OTLP_EXPORTER);
	if (access(path, X_OK) == 0)
		return path;
	free(path);
	return NULL;
}

/* In the forked child: the exporter's signals (it dies with the runner and
 * ignores a terminal's stop signals, so the last batch of an interrupted
 * run still leaves), its descriptors, then the exec. Never returns. */
static void exec_exporter(const char *path, int in_fd, int status_fd)
{
	static const char msg[] = "fail cannot run " RN_OTLP_EXPORTER "\n";
	struct sigaction ign = { .sa_handler = SIG_IGN };
	sigset_t none;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGTERM, &ign, NULL);
	sigaction(SIGHUP, &ign, NULL);
	sigaction(SIGPIPE, &ign, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(in_fd, 0) < 0 || dup2(status_fd, RN_OTLP_STATUS_FD) < 0)
		_exit(127);
	execl(path, RN_OTLP_EXPORTER, (char *)NULL);
	(void)fg_write_all(RN_OTLP_STATUS_FD, msg, sizeof(msg) - 1);
	_exit(127);
}

int rn_otlp_start(struct rn_otlp *o, const struct rn_otlp_config *c)
{
	char *path = exporter_path();
	int in[2], st[2], e;
	pid_t pid;

	(void)c;   /* the exporter reads the same environment (otlp.h) */
	memset(o, 0, sizeof(*o));
	o->in_fd = o->status_fd = -1;
	if (!path)
		return -ENOSYS;
	if (pipe2(in, O_CLOEXEC) < 0) {
		e = -errno;
		free(path);
		return e;
	}
	if (pipe2(st, O_CLOEXEC) < 0) {
		e = -errno;
		close(in[0]);
		close(in[1]);
		free(path);
		return e;
	}
	pid = fork();
	if (pid == 0)
		exec_exporter(path, in[0], st[1]);
	e = -errno;
	free(path);
	close(in[0]);
	close(st[1]);
	if (pid < 0) {
		close(in[1]);
		close(st[0]);
		return e;
	}
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	(void)fcntl(in[1], F_SETPIPE_SZ, 1024 * 1024);
	o->pid = pid;
	o->in_fd = in[1];
	o->status_fd = st[0];
	return 0;
}

void rn_otlp_send(struct rn_otlp *o, const char *batch, size_t len)
{
	ssize_t w;

	if (o->in_fd < 0)
		return;
	/* The child posts only whole lines. A write that lands in part (the
	 * pipe, 1 MiB, is full: the collector does not answer) cannot be
	 * finished without blocking the loop, so it ends the export: the
	 * child drops the unfinished line at the end of its input. */
	if (len + 1 > RN_OTLP_BATCH_MAX) {
		o->dropped++;
		return;
	}
	w = write(o->in_fd, batch, len);
	if (w == (ssize_t)len && write(o->in_fd, "\n", 1) == 1) {
		o->sent++;
		return;
	}
	o->dropped++;
	if (w > 0) {
		close(o->in_fd);
		o->in_fd = -1;
	}
}

/* Waits for the child's word until deadline (monotonic ns). */
static void read_word(struct rn_otlp *o, uint64_t deadline, char *word, size_t n)
{
	size_t got = 0;

	word[0] = '\0';
	while (got + 1 < n) {
		uint64_t now = fg_monotonic_ns();
		struct pollfd p = { .fd = o->status_fd, .events = POLLIN };
		ssize_t r;

		if (now >= deadline)
			return;
		if (poll(&p, 1, (int)((deadline - now) / 1000000 + 1)) <= 0)
			continue;
		r = read(o->status_fd, word + got, n - 1 - got);
		if (r <= 0)
			return;
		got += (size_t)r;
		word[got] = '\0';
	}
}

int rn_otlp_finish(struct rn_otlp *o, int deadline_ms, char *why, size_t whylen)
{
	uint64_t deadline = fg_monotonic_ns() + (uint64_t)deadline_ms * 1000000ull;
	char word[800];
	int status, rc = 0;

	if (!o->pid)
		return 0;
	if (o->in_fd >= 0)
		close(o->in_fd);
	o->in_fd = -1;
	read_word(o, deadline, word, sizeof(word));
	close(o->status_fd);
	o->status_fd = -1;
	if (waitpid(o->pid, &status, WNOHANG) != o->pid) {
		kill(o->pid, SIGKILL);
		while (waitpid(o->pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	o->pid = 0;
	word[strcspn(word, "\n")] = '\0';
	if (!word[0]) {
		snprintf(why, whylen, "no answer within %d s at exit", deadline_ms / 1000);
		rc = -1;
	} else if (strcmp(word, "ok")) {
		const char *w = word;

		fg_skip_prefix(word, "fail ", &w);
		snprintf(why, whylen, "%s", w);
		rc = -1;
	}
	if (!rc && o->dropped) {
		snprintf(why, whylen, "%ld batch(es) dropped: the exporter fell behind", o->dropped);
		rc = -1;
	}
	return rc;
}
