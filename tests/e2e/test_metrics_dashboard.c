/*
 * test_metrics_dashboard.c - every query of the Grafana dashboard
 * (docs/examples/grafana/forge-review.json) returns data from a real
 * Prometheus after real runs.
 *
 * Three runs of `forge-runner run --engine local` with the real
 * forge-entrypoint and a stand-in `claude` (stream-json, as in
 * test_agent_usage.c) share one --metrics-file in a directory:
 *   1. approved in cycle 2, after a check that fails in cycle 1 (runs,
 *      cycles, verdicts, durations, check results failed and passed, the
 *      agents' tokens and cost by role);
 *   2. exhausted (max_retries 1, the reviewer rejects);
 *   3. approved, while the worker writes an unsealed cycle file (a forged
 *      record).
 * Debian's prometheus-node-exporter serves that directory (textfile
 * collector only) and Debian's prometheus scrapes it every second; then each
 * panel's each target expr runs against /api/v1/query (a child curl) until
 * it returns at least one series with a finite value above 0 (bounded:
 * 60 s). The runs come twice, the second time after Prometheus has scraped
 * the first's, so every increase() has something to count.
 *
 * The substitution of Grafana's variables, written plainly:
 *   $__rate_interval, $__range, $__interval  ->  1m
 *   $step                                    ->  .*   (the "All" value)
 * 1m spans many 1 s scrapes, so increase() and rate() have the two samples
 * they need seconds after the start; no query needs longer history. Every
 * family the dashboard uses is produced; none is skipped.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgagent.h"
#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

#define PROMETHEUS "/usr/bin/prometheus"
#define NODE_EXPORTER "/usr/bin/prometheus-node-exporter"
#define CURL "/usr/bin/curl"
#define SETPRIV "/usr/bin/setpriv"

/* The servers (and their trees), so fini stops them even when an assertion
 * ended the test; setpriv --pdeathsig kills them when the test process dies
 * without its fini (Criterion's timeout). */
static struct fgw srv_ne, srv_prom;
static pid_t pid_ne, pid_prom;

static void stop_server(struct fgw *w, pid_t *pid)
{
	if (*pid > 0) {
		kill(-*pid, SIGTERM);
		fgw_wait(w, *pid, 30);
		*pid = 0;
	}
	if (w->root)
		fgw_release(w);
}

static void stop_servers(void)
{
	stop_server(&srv_prom, &pid_prom);
	stop_server(&srv_ne, &pid_ne);
}

TestSuite(metrics_dashboard, .timeout = 240);

/* One real run in a fresh tree, its metrics into metrics; returns its exit code. */
static int real_run(const char *metrics, const char *review_md, const char *standin)
{
	struct fgw w;
	struct fgt_proc p;
	char *path, *body;
	int code;

	fgw_init(&w);
	fgw_review_md(&w, "default", review_md);
	body = fgt_fmt("init\n%s", standin);
	free(fge_script(w.bin, "claude", FGA_STANDIN_HEAD, body));
	free(body);
	path = fgt_fmt("PATH=%s:/usr/local/bin:/usr/bin:/bin", w.bin);
	{
		const char *argv[] = { FG_RUNNER_BIN, "run", "--engine", "local", "--workspace", w.ws,
				       "--step", "impl", "--skill", "impl", "--skills-dir", w.skills,
				       "--entrypoint", FG_ENTRYPOINT_BIN, "--result", w.result,
				       "--metrics-file", metrics, "--log-format", "json", "--log-file", w.log,
				       NULL };
		const char *env[] = { path, "FORGE_WORKER_AGENT=claude", "FORGE_REVIEWER_AGENT=claude",
				      "FORGE_WORKER_CMD", "FORGE_REVIEWER_CMD", "FORGE_WORKER_OUTPUT",
				      "FORGE_REVIEWER_OUTPUT", "AUTO_REVIEW_MAX_COST_USD", "AUTO_REVIEW_REASK",
				      "AUTO_REVIEW_MAX_RETRIES", "AUTO_REVIEW_FAIL_ON_EXHAUSTION",
				      "FORGE_WORKER_ARGS", "FORGE_REVIEWER_ARGS",
				      "ANTHROPIC_API_KEY=sk-test-anthropic", NULL };

		cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 60), 0);
	}
	cr_assert(!p.timed_out, "the runner hung: %s", p.err);
	code = p.exit_code;
	fgt_proc_release(&p);
	free(path);
	fgw_release(&w);
	return code;
}

static void make_runs(const char *metrics)
{
	int code;

	code = real_run(metrics, "---\nmax_retries: 3\nchecks:\n  - name: tests\n    run: test -f done.txt\n"
				 "---\nCheck.\n",
			"if [ $FORGE_ROLE = worker ]; then\n"
			"  [ $n -ge 2 ] && echo ok > \"$FORGE_WORKSPACE/done.txt\"\n"
			"  result false done 0.25 40; exit 0; fi\n"
			"result false 'All good. APPROVED' 0.5 3\n");
	cr_assert_eq(code, 0, "the approved run");
	code = real_run(metrics, "---\nmax_retries: 1\n---\nCheck.\n",
			"if [ $FORGE_ROLE = worker ]; then result false done 0.25 40; exit 0; fi\n"
			"result false 'REJECTED: not done' 0.5 3\n");
	/* Exhaustion exits 0 unless AUTO_REVIEW_FAIL_ON_EXHAUSTION says otherwise. */
	cr_assert_eq(code, 0, "the exhausted run");
	code = real_run(metrics, "---\nmax_retries: 3\n---\nCheck.\n",
			"if [ $FORGE_ROLE = worker ]; then\n"
			"  d=\"$FORGE_WORKSPACE/.forge/impl\"; mkdir -p \"$d\"\n"
			"  printf '{\"cycle\":3,\"max_cycles\":3,\"verdict\":\"approved\",\"feedback\":\"\","
			"\"skill\":\"impl\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\","
			"\"run_id\":\"%s\"}' \"$FORGE_RUN_ID\" > \"$d/review_cycle_3.json\"\n"
			"  result false done 0.25 40; exit 0; fi\n"
			"result false 'All good. APPROVED' 0.5 3\n");
	cr_assert_eq(code, 0, "the run with a forged record");
	{
		static const char *const want[] = {
			"outcome=\"approved\"", "outcome=\"exhausted\"", "forge_review_check_results_total{",
			"forge_runner_forged_records_total{", "role=\"reviewer\"", "forge_review_duration_seconds_bucket{",
		};
		char *text = fgt_read(metrics, NULL);

		cr_assert_not_null(text, "no metrics file");
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			cr_assert_not_null(strstr(text, want[i]), "no %s in the metrics:\n%s", want[i], text);
		free(text);
	}
}

/* A port free on 127.0.0.1 now (the kernel's pick; closed again at once). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	cr_assert_geq(fd, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static void start_servers(const char *textfile_dir, int *prom_port)
{
	int ne_port = free_port();
	char *ne_listen = fgt_fmt("--web.listen-address=127.0.0.1:%d", ne_port);
	char *ne_dir = fgt_fmt("--collector.textfile.directory=%s", textfile_dir);

	fgw_init(&srv_ne);
	{
		const char *argv[] = { SETPRIV, "--pdeathsig", "KILL", NODE_EXPORTER,
				       "--collector.disable-defaults", "--collector.textfile", ne_dir, ne_listen,
				       "--log.level=warn", NULL };

		pid_ne = fgw_spawn(&srv_ne, argv, NULL);
	}
	fgw_init(&srv_prom);
	*prom_port = free_port();
	{
		char *conf = fgt_fmt("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
				     "scrape_configs:\n  - job_name: node\n    static_configs:\n"
				     "      - targets: ['127.0.0.1:%d']\n", ne_port);
		char *conf_arg = fgt_fmt("--config.file=%s/prometheus.yml", srv_prom.root);
		char *tsdb = fgt_fmt("--storage.tsdb.path=%s/data", srv_prom.root);
		char *listen = fgt_fmt("--web.listen-address=127.0.0.1:%d", *prom_port);
		const char *argv[] = { SETPRIV, "--pdeathsig", "KILL", PROMETHEUS, conf_arg, tsdb, listen,
				       "--log.level=warn", NULL };

		fgw_write(&srv_prom, "prometheus.yml", conf);
		pid_prom = fgw_spawn(&srv_prom, argv, NULL);
		free(conf);
		free(conf_arg);
		free(tsdb);
		free(listen);
	}
	free(ne_listen);
	free(ne_dir);
}

/* s with every `from` replaced by `to` (owned). */
static char *replace_all(const char *s, const char *from, const char *to)
{
	char *out = strdup(s);
	char *hit = strstr(out, from);
	size_t off = 0;

	while (hit) {
		size_t at = (size_t)(hit - out);
		char *head = strndup(out, at);
		char *next = fgt_fmt("%s%s%s", head, to, hit + strlen(from));

		off = at + strlen(to);
		free(head);
		free(out);
		out = next;
		hit = strstr(out + off, from);
	}
	return out;
}

/* The dashboard's expr with Grafana's variables replaced (owned). */
static char *substitute(const char *expr)
{
	static const char *const subst[][2] = {
		{ "$__rate_interval", "1m" }, { "$__range", "1m" }, { "$__interval", "1m" }, { "$step", ".*" },
	};
	char *q = strdup(expr);

	for (size_t i = 0; i < sizeof(subst) / sizeof(subst[0]); i++) {
		char *n = replace_all(q, subst[i][0], subst[i][1]);

		free(q);
		q = n;
	}
	cr_assert_null(strchr(q, '$'), "a Grafana variable is left in: %s", q);
	return q;
}

struct query {
	char *title, *expr;
};

/* Every panel's every target (nested rows too), substituted, into qs. */
static void collect(const cJSON *panels, struct query *qs, size_t *n, size_t max)
{
	const cJSON *p, *t;

	cJSON_ArrayForEach(p, panels) {
		const cJSON *title = cJSON_GetObjectItemCaseSensitive(p, "title");

		cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(p, "targets")) {
			const cJSON *e = cJSON_GetObjectItemCaseSensitive(t, "expr");

			cr_assert(cJSON_IsString(e), "a target of '%s' has no expr", title->valuestring);
			cr_assert_lt(*n, max);
			qs[*n].title = strdup(cJSON_IsString(title) ? title->valuestring : "?");
			qs[*n].expr = substitute(e->valuestring);
			(*n)++;
		}
		collect(cJSON_GetObjectItemCaseSensitive(p, "panels"), qs, n, max);
	}
}

/* Number of the series in result whose value is finite and above 0. */
static int positive_series(const cJSON *result)
{
	const cJSON *s;
	int n = 0;

	cJSON_ArrayForEach(s, result) {
		const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s, "value"), 1);
		double d = cJSON_IsString(v) ? strtod(v->valuestring, NULL) : NAN;

		n += isfinite(d) && d > 0;
	}
	return n;
}

/* Number of series with a value above 0 that expr returns now (-1: no
 * success answer); *answer the body (owned). */
static int query_series(int port, const char *expr, char **answer)
{
	char *url = fgt_fmt("http://127.0.0.1:%d/api/v1/query", port);
	char *data = fgt_fmt("query=%s", expr);
	const char *argv[] = { CURL, "-sS", "--max-time", "5", "-G", "--data-urlencode", data, url, NULL };
	struct fgt_proc p;
	cJSON *o;
	int n = -1;

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 10), 0);
	free(*answer);
	*answer = fgt_fmt("%s%s", p.out, p.err);
	o = cJSON_Parse(p.out);
	if (o) {
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status");
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "data"),
								  "result");

		if (cJSON_IsString(st) && !strcmp(st->valuestring, "success") && cJSON_IsArray(r))
			n = positive_series(r);
		cJSON_Delete(o);
	}
	fgt_proc_release(&p);
	free(data);
	free(url);
	return n;
}

/* Waits until q returns a series with a value above 0, while *tries (shared by all the queries,
 * 120 of 0.5 s: 60 s in all) last; fails with its last answer. */
static void expect_series(int port, const struct query *q, int *tries)
{
	char *answer = NULL, *ne_err, *prom_err;
	int n = query_series(port, q->expr, &answer);

	while (n <= 0 && *tries > 0) {
		(*tries)--;
		fgt_sleep_ms(500);
		n = query_series(port, q->expr, &answer);
	}
	ne_err = fgt_read_or_empty(srv_ne.stderr_path);
	prom_err = fgt_read_or_empty(srv_prom.stderr_path);
	cr_expect_gt(n, 0, "panel '%s': %s returned no series above 0: %s\nnode exporter: %s\nprometheus: %s",
		     q->title, q->expr, answer, n > 0 ? "" : ne_err, n > 0 ? "" : prom_err);
	free(ne_err);
	free(prom_err);
	free(answer);
}

Test(metrics_dashboard, every_panel_query_returns_data_after_real_runs, .fini = stop_servers)
{
	struct query qs[64];
	size_t nq = 0;
	struct fgw m;
	char *dir, *metrics, *text;
	cJSON *dash;
	int port, tries = 120;
	const struct query first = { "(the first runs scraped)", "count(forge_runner_forged_records_total)" };

	if (!fgt_exists(PROMETHEUS) || !fgt_exists(NODE_EXPORTER) || !fgt_exists(CURL) ||
	    !fgt_exists(SETPRIV))
		cr_skip("needs " PROMETHEUS " (Debian package prometheus), " NODE_EXPORTER
			" (prometheus-node-exporter), " CURL " (curl) and " SETPRIV " (util-linux)");
	text = fgt_read(FG_SOURCE_DIR "/docs/examples/grafana/forge-review.json", NULL);
	cr_assert_not_null(text);
	dash = cJSON_Parse(text);
	cr_assert_not_null(dash, "the dashboard is not JSON");
	collect(cJSON_GetObjectItemCaseSensitive(dash, "panels"), qs, &nq, 64);
	cr_assert_gt(nq, 0, "no panel has a query");

	fgw_init(&m);
	dir = fgt_fmt("%s/textfile", m.root);
	metrics = fgt_fmt("%s/forge.prom", dir);
	cr_assert_eq(mkdir(dir, 0755), 0);
	/* increase() counts nothing of a series' first sample: the runs come
	 * twice, the second time after Prometheus has scraped the first's. */
	start_servers(dir, &port);
	make_runs(metrics);
	expect_series(port, &first, &tries);
	make_runs(metrics);
	for (size_t i = 0; i < nq; i++)
		expect_series(port, &qs[i], &tries);
	stop_servers();

	for (size_t i = 0; i < nq; i++) {
		free(qs[i].title);
		free(qs[i].expr);
	}
	cJSON_Delete(dash);
	free(text);
	free(metrics);
	free(dir);
	fgw_release(&m);
}
