/*
 * forge-otlp-export - the OTLP/HTTP exporter child of forge-runner
 * (otlp.h): it reads one OTLP JSON batch per line on its standard input,
 * posts each with libcurl to the endpoint the standard OTEL_* variables
 * name, one request at a time, and says how it went on RN_OTLP_STATUS_FD.
 * A program of its own so that only it maps libcurl and the libraries
 * libcurl brings: every forge-runner process stays small. Not for use by
 * hand; forge-runner starts it from its own directory.
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "otlp.h"
#include "forge/buf.h"
#include "forge/fsutil.h"

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

/* The batches on standard input, the last word on RN_OTLP_STATUS_FD: "ok"
 * or "fail WHY". The runner set the signals and the death signal before
 * the exec (otlp.c). */
int main(void)
{
	struct rn_otlp_config c;
	char why[600] = "", word[700];
	long failed = 0;

	rn_otlp_config_load(&c);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return 1;
	export_lines(0, &c, why, sizeof(why), &failed);
	if (failed)
		snprintf(word, sizeof(word), "fail %ld batch(es) not accepted, first: %s\n", failed, why);
	else
		snprintf(word, sizeof(word), "ok\n");
	(void)fg_write_all(RN_OTLP_STATUS_FD, word, strlen(word));
	curl_global_cleanup();
	rn_otlp_config_release(&c);
	return failed ? 1 : 0;
}
