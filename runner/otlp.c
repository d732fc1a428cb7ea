/*
 * otlp.c - the OTLP/HTTP exporter child and its configuration (see otlp.h).
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

#ifdef FORGE_HAVE_CURL
#include <curl/curl.h>
#endif

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

/* ---- the child ---- */

#ifdef FORGE_HAVE_CURL
/* The answer's body is not needed: read and dropped. */
static size_t discard(char *p, size_t size, size_t n, void *data)
{
	(void)p;
	(void)data;
	return size * n;
}

static struct curl_slist *header_list(const struct rn_otlp_config *c)
{
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	const char *p = fg_buf_str(&c->headers);

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		char line[4400];

		snprintf(line, sizeof(line), "%.*s", (int)(nl ? nl - p : (long)strlen(p)), p);
		h = curl_slist_append(h, line);
		p = nl ? nl + 1 : NULL;
	}
	return h;
}

/* Posts one batch. 0, or -1 with why filled. */
static int post(CURL *curl, const char *url, const char *body, size_t len, char *why, size_t n)
{
	long code = 0;
	CURLcode rc;

	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	rc = curl_easy_perform(curl);
	if (rc != CURLE_OK) {
		snprintf(why, n, "%.150s (%.300s)", curl_easy_strerror(rc), url);
		return -1;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
	if (code < 200 || code > 299) {
		snprintf(why, n, "HTTP %ld from %.300s", code, url);
		return -1;
	}
	return 0;
}

static CURL *make_curl(const struct rn_otlp_config *c, struct curl_slist *h)
{
	CURL *curl = curl_easy_init();

	if (!curl)
		return NULL;
	curl_easy_setopt(curl, CURLOPT_URL, c->url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	return curl;
}

/* Reads lines from in_fd and posts each; the first failure is kept. */
static void export_lines(int in_fd, const struct rn_otlp_config *c, char *why, size_t n, long *failed)
{
	struct curl_slist *h = header_list(c);
	CURL *curl = make_curl(c, h);
	struct fg_buf line;
	char chunk[65536];
	ssize_t got;

	fg_buf_init(&line, RN_OTLP_BATCH_MAX);
	for (got = read(in_fd, chunk, sizeof(chunk)); got != 0; got = read(in_fd, chunk, sizeof(chunk))) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		for (ssize_t i = 0; i < got; i++) {
			char why1[512];

			if (chunk[i] != '\n') {
				fg_buf_addc(&line, chunk[i]);
				continue;
			}
			if (!curl || fg_buf_error(&line) ||
			    post(curl, c->url, fg_buf_str(&line), line.len, why1, sizeof(why1)) < 0) {
				if (!(*failed)++)
					snprintf(why, n, "%s", curl ? why1 : "cannot start libcurl");
			}
			fg_buf_reset(&line);
		}
	}
	fg_buf_release(&line);
	if (curl)
		curl_easy_cleanup(curl);
	curl_slist_free_all(h);
}

/* The child: never returns. Its word on status_fd: "ok" or "fail WHY". */
static void child_main(int in_fd, int status_fd, const struct rn_otlp_config *c)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	char why[600] = "", word[700];
	long failed = 0;
	sigset_t none;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGTERM, &ign, NULL);
	sigaction(SIGHUP, &ign, NULL);
	sigaction(SIGPIPE, &ign, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		_exit(1);
	export_lines(in_fd, c, why, sizeof(why), &failed);
	if (failed)
		snprintf(word, sizeof(word), "fail %ld batch(es) not accepted, first: %s\n", failed, why);
	else
		snprintf(word, sizeof(word), "ok\n");
	(void)fg_write_all(status_fd, word, strlen(word));
	_exit(failed ? 1 : 0);
}
#endif

int rn_otlp_start(struct rn_otlp *o, const struct rn_otlp_config *c)
{
	int in[2], st[2];
	pid_t pid;

	memset(o, 0, sizeof(*o));
	o->in_fd = o->status_fd = -1;
#ifndef FORGE_HAVE_CURL
	(void)c;
	(void)in;
	(void)st;
	(void)pid;
	return -ENOSYS;
#else
	if (pipe2(in, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(st, O_CLOEXEC) < 0) {
		int e = -errno;

		close(in[0]);
		close(in[1]);
		return e;
	}
	pid = fork();
	if (pid == 0) {
		close(in[1]);
		close(st[0]);
		child_main(in[0], st[1], c);
	}
	close(in[0]);
	close(st[1]);
	if (pid < 0) {
		close(in[1]);
		close(st[0]);
		return -errno;
	}
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	(void)fcntl(in[1], F_SETPIPE_SZ, 1024 * 1024);
	o->pid = pid;
	o->in_fd = in[1];
	o->status_fd = st[0];
	return 0;
#endif
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
