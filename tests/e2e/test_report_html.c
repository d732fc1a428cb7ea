/*
 * test_report_html.c - `forge-runner report --format html` in a real
 * browser: a two-cycle run (the real entrypoint, a check and a two-role
 * panel) whose reviewer's feedback is hostile (<script>, <img onerror> to a
 * listener of the test's own, </svg>, bidi controls, a 1 MB line) is
 * reported as HTML and opened in headless Chromium (Debian's chromium):
 * its DOM holds one timeline bar per phase of the run, the hostile strings
 * as text and no element made from them, and no request left the page. The
 * screenshot is kept in the build directory (artifacts/report-html.png) for
 * the docs.
 */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(report_html, .timeout = 300);

static const char *const CHROMIUM = "/usr/bin/chromium";

static const char REVIEW_MD[] =
	"---\nmax_retries: 2\nchecks:\n  - name: unit\n    run: sh check.sh\n    timeout_seconds: 20\n"
	"reviewers:\n  - role: correctness\n  - role: security\n---\nReview it.\n";

/* correctness rejects with hostile feedback (PORT: the test's listener). */
static const char REVIEWER[] =
	"cat > /dev/null\n"
	"if [ \"$FORGE_REVIEWER_ROLE\" = correctness ]; then\n"
	"  echo REJECTED; echo\n"
	"  echo '<script>document.title=\"pwned\"</script>'\n"
	"  echo \"<img src=http://127.0.0.1:$PORT/img onerror=alert(1)>\"\n"
	"  echo '</svg></pre><b id=\"made\">bold</b>'\n"
	"  printf 'bidi \\342\\200\\256evil\\342\\200\\254 end\\n'\n"
	"  head -c 1048576 /dev/zero | tr '\\0' x; echo\n"
	"else echo APPROVED; fi\n";

/* A listener of the test's own on 127.0.0.1; *port set. */
static int listener(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(fd, 16), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* Phases the result's cycles record: the bars the timeline must draw. */
static int phases(const cJSON *res)
{
	const cJSON *c, *k, *r;
	int n = 0;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(res, "review_cycles")) {
		n += cJSON_GetObjectItem(c, "worker_run") != NULL;
		cJSON_ArrayForEach(k, cJSON_GetObjectItem(c, "checks"))
			n += cJSON_GetObjectItem(k, "started_at") != NULL;
		n += cJSON_GetArraySize(cJSON_GetObjectItem(c, "reviewer_runs"));
		cJSON_ArrayForEach(r, cJSON_GetObjectItem(c, "reviews"))
			n += cJSON_GetArraySize(cJSON_GetObjectItem(r, "runs"));
	}
	return n;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void chromium(struct fgt_proc *p, const char *what, const char *page, const char *home)
{
	char *url = fgt_fmt("file://%s", page);
	char *homeenv = fgt_fmt("HOME=%s", home);
	const char *argv[] = { CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
			       "--disable-extensions", "--window-size=1100,900", what, url, NULL };
	const char *env[] = { homeenv, NULL };

	cr_assert_eq(fgt_run(p, argv, env, home, NULL, 120), 0);
	cr_assert(p->exited && p->exit_code == 0, "chromium %s: %s", what, p->err);
	free(url);
	free(homeenv);
}

Test(report_html, hostile_feedback_is_text_in_chromium_and_the_timeline_has_a_bar_per_phase)
{
	struct fgw w;
	struct fgt_proc run, dom, shot;
	int port, lfd, bars, n;
	char *worker, *reviewer, *page, *portenv, *shotarg, *artifact;
	struct pollfd pfd;

	if (access(CHROMIUM, X_OK))
		cr_skip_test("no %s here (Debian's chromium package: scripts/setup.sh --test)", CHROMIUM);
	lfd = listener(&port);
	fgw_init_runner(&w);
	fgw_review_md(&w, "default", REVIEW_MD);
	fge_write_in(w.ws, "check.sh", "test -f work.txt\n");
	worker = fgw_script(&w, "worker.sh", NULL, "cat > /dev/null\necho \"turn $FORGE_CYCLE\" >> work.txt\n");
	reviewer = fgw_script(&w, "reviewer.sh", NULL, REVIEWER);
	portenv = fgt_fmt("PORT=%d", port);
	fgw_runner(&w, FGW_RUN(.worker = worker, .reviewer = reviewer,
		.env = (const char *const[]){ portenv, NULL }));
	cr_assert_str_eq(fge_jstr(w.res, "review_state"), "exhausted", "log:\n%s", w.logtext);
	page = fgw_path(&w, "report.html");
	{
		const char *argv[] = { FG_RUNNER_BIN, "report", "--format", "html", "--output", page, w.result, NULL };

		cr_assert_eq(fgt_run(&run, argv, NULL, NULL, NULL, 60), 0);
		fgt_assert_exit(&run, 0);
	}
	chromium(&dom, "--dump-dom", page, w.root);
	n = phases(w.res);
	bars = count(dom.out, "<rect class=\"bar ");
	cr_expect_geq(n, 8, "two cycles of worker, check and two roles");
	cr_expect_eq(bars, n, "one bar per phase: %d bars, %d phases", bars, n);
	cr_expect_eq(count(dom.out, "<script"), 0, "no script element");
	cr_expect_eq(count(dom.out, "<img"), 0, "no image element");
	cr_expect_eq(count(dom.out, "<b id=\"made\""), 0, "no element from the feedback");
	cr_expect_geq(count(dom.out, "&lt;/svg&gt;&lt;/pre&gt;&lt;b id="), 1, "the closing tags show as text");
	cr_expect_eq(count(dom.out, "</svg>"), 1, "one svg, closed once");
	cr_expect_geq(count(dom.out, "&lt;script&gt;document.title"), 1, "the script shows as text: %.3000s",
		      strstr(dom.out, "<h3>") ? strstr(dom.out, "<h3>") : dom.out);
	cr_expect_geq(count(dom.out, "&lt;img src=http://127.0.0.1:"), 1, "the image shows as text");
	cr_expect_geq(count(dom.out, "[U+202E]evil[U+202C]"), 1, "the bidi controls show as codes");
	cr_expect_not_null(strstr(dom.out, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
			   "the long line shows");
	cr_expect_null(strstr(dom.out, "<title>pwned"), "the title was not changed");
	/* The screenshot, kept for the docs. */
	artifact = fgt_fmt("%s/artifacts", FG_BUILD_DIR);
	mkdir(artifact, 0755);
	free(artifact);
	artifact = fgt_fmt("%s/artifacts/report-html.png", FG_BUILD_DIR);
	shotarg = fgt_fmt("--screenshot=%s", artifact);
	chromium(&shot, shotarg, page, w.root);
	cr_expect(fgt_exists(artifact), "no screenshot at %s", artifact);
	/* Nothing asked the listener for the image, in either load. */
	pfd = (struct pollfd){ .fd = lfd, .events = POLLIN };
	cr_expect_eq(poll(&pfd, 1, 200), 0, "a request left the page");
	close(lfd);
	fgt_proc_release(&run);
	fgt_proc_release(&dom);
	fgt_proc_release(&shot);
	free(worker);
	free(reviewer);
	free(page);
	free(portenv);
	free(shotarg);
	free(artifact);
	fgw_release(&w);
}
