/*
 * test_limits.c - the limits, with the real binaries: what a sandbox that floods, rewrites or lies about its cost can
 * make of the runner's log, result and metrics (reproductions 9, 10 and 11;
 * docs/security.md lists the outcome of each).
 */
#include <limits.h>
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "forge/num.h"
#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(limits, .timeout = 180);

/* Reproduction 10: the output cap counted text, not log bytes: 1 MB of empty
 * agent lines made a 103 MB JSON log without output_dropped (the 64 MiB cap
 * was reached near 750 MB). The run below lowers the cap to 1 MiB
 * (FORGE_TEST_OUTPUT_LOG_MAX, test-only, never raises it) and its worker
 * prints 200,000 empty lines: 1.8 MB of "[worker] " text, some 20 MB of JSON
 * without the cap. The log must stay near the cap and say what it dropped. */
Test(limits, empty_agent_lines_are_capped_by_their_log_bytes)
{
	struct fgw f;
	const cJSON *ev;
	struct stat st;
	static const char *const env[] = { "FORGE_TEST_OUTPUT_LOG_MAX=1048576", NULL };

	fgw_init_runner(&f);
	fgw_runner(&f, FGW_RUN(.worker_sh = "yes '' | head -n 200000\n",
			       .reviewer_sh = "echo APPROVED",
			       .env = env));
	cr_assert_eq(fgw_code(&f), 0, "exit %d; stderr:\n%s", fgw_code(&f), f.err);
	cr_assert_eq(stat(f.log, &st), 0);
	cr_log_info("log: %lld bytes", (long long)st.st_size);
	cr_assert_lt(st.st_size, 1024 * 1024 + 64 * 1024, "a %lld-byte log for a 1 MiB cap",
		     (long long)st.st_size);
	ev = fge_find_event(f.events, "output_dropped", NULL, NULL);
	cr_assert_not_null(ev, "no output_dropped");
	cr_assert_str_eq(fge_jstr(ev, "level"), "warn");
	cr_assert_eq(fge_jint(ev, "limit"), 1024 * 1024);
	cr_assert_gt(fge_jint(ev, "lines"), 150000, "lines %d", fge_jint(ev, "lines"));
	cr_assert_eq(fge_count_events(f.events, "output_dropped", NULL, NULL), 1);
	cr_assert_str_eq(fge_jstr(f.res, "review_state"), "approved");
	fgw_release(&f);
}

/* Reproduction 11, the runner's side: a cycle file (and a summary) whose
 * usage says 1e308 USD. The cost is refused where the runner reads it:
 * cost_invalid (WARN) names the file and the role, the result says null,
 * the metrics count nothing, and the file stays valid. */
Test(limits, a_cycle_file_cost_of_1e308_is_refused_with_cost_invalid)
{
	struct fgw f;
	char *metrics, *m;
	const cJSON *ev, *c1;
	const char *extra[3] = { "--metrics-file", NULL, NULL };

	fgw_init_runner(&f);
	metrics = fgt_fmt("%s/forge.prom", f.root);
	extra[1] = metrics;
	fgw_runner(&f, FGW_RUN(.ep_sh = "mkdir -p \"$D\"\n"
					"printf '{\"cycle\":1,\"max_cycles\":3,\"verdict\":\"approved\",\"feedback\":\"ok\","
					"\"skill\":\"%s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\","
					"\"run_id\":\"%s\",\"usage\":{\"worker\":{\"cost_usd\":1e308,\"output_tokens\":4}}}\\n' "
					"\"$K\" \"$FORGE_RUN_ID\" | fgseal \"$S\" review_cycle_1.json > \"$D/.c1\"\n"
					"mv \"$D/.c1\" \"$D/review_cycle_1.json\"\n"
					"printf '{\"state\":\"approved\",\"cycles\":1,\"max_cycles\":3,\"step\":\"%s\","
					"\"skill\":\"%s\",\"run_id\":\"%s\",\"usage\":{\"reviewer\":{\"cost_usd\":2e6}}}\\n' "
					"\"$S\" \"$K\" \"$FORGE_RUN_ID\" | fgseal \"$S\" review_summary.json > \"$D/review_summary.json\"\n"
					"exit 0\n",
			       .args = extra));
	cr_assert_eq(fgw_code(&f), 0, "exit %d; stderr:\n%s\nlog:\n%s", fgw_code(&f), f.err, f.logtext);
	ev = fge_find_event(f.events, "cost_invalid", "file", "review_cycle_1.json");
	cr_assert_not_null(ev, "no cost_invalid for the cycle; log:\n%s", f.logtext);
	fge_assert_strs(ev, "level", "warn", "role", "worker");
	cr_assert_eq(cJSON_GetObjectItem(ev, "cost_usd")->valuedouble, 1e308);
	cr_assert_eq(cJSON_GetObjectItem(ev, "limit")->valuedouble, 1e6);
	ev = fge_find_event(f.events, "cost_invalid", "file", "review_summary.json");
	cr_assert_not_null(ev, "no cost_invalid for the summary; log:\n%s", f.logtext);
	fge_assert_strs(ev, "role", "reviewer", "source", "summary");
	c1 = cJSON_GetArrayItem(fgw_cycles(&f), 0);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(c1, "usage"),
								       "worker"), "cost_usd")));
	m = fgt_read(metrics, NULL);
	cr_assert_not_null(m);
	fgt_assert_lacks(m, "forge_review_agent_cost_usd_total{", "Inf\n");
	free(m);
	free(metrics);
	fgw_release(&f);
}

/* by_source: the result's cycles_by_source summed. */
static int counted_cycles(const struct fgw *f)
{
	const cJSON *bs = cJSON_GetObjectItem(f->res, "cycles_by_source"), *v;
	int n = 0;

	cr_assert(cJSON_IsObject(bs), "no cycles_by_source");
	cJSON_ArrayForEach(v, bs)
		n += v->valueint;
	return n;
}

/* Reproduction 9: rewriting review_cycle_1.json with new content in a loop
 * was reported every time (one real cycle became 2,994 review_cycle events
 * and as many counted cycles). Now a cycle number is reported for at most
 * 3 contents, the 4th is one cycle_rewrite_limit warning, and the 200
 * rewrites after it are neither reported nor counted nor kept. The script
 * waits for each report it expects, so the count does not depend on how
 * fast the runner reads. */
Test(limits, a_cycle_rewritten_in_a_loop_is_reported_three_times)
{
	struct fgw f;
	const cJSON *ev, *cs;

	fgw_init_runner(&f);
	fgw_runner(&f, FGW_RUN(.ep_sh = "mkdir -p \"$D\"\n"
					"for v in 1 2 3; do cyc 1 rejected '' v$v; wait_log \"\\\"feedback\\\":\\\"v$v\\\"\"; done\n"
					"cyc 1 rejected '' v4; wait_log cycle_rewrite_limit\n"
					"i=5; while [ $i -le 205 ]; do cyc 1 approved '' v$i; i=$((i+1)); done\n"
					"cyc 2 rejected; wait_log review_cycle_2.json\n"
					"exit 0\n"));
	cr_assert_eq(fgw_code(&f), 0, "exit %d; stderr:\n%s\nlog:\n%s", fgw_code(&f), f.err, f.logtext);
	cr_assert_eq(fge_count_events(f.events, "review_cycle", "file", "review_cycle_1.json"), 3,
		     "log:\n%s", f.logtext);
	cr_assert_eq(fge_count_events(f.events, "review_cycle", "file", "review_cycle_2.json"), 1);
	cr_assert_eq(fge_count_events(f.events, "cycle_rewrite_limit", NULL, NULL), 1);
	ev = fge_find_event(f.events, "cycle_rewrite_limit", NULL, NULL);
	fge_assert_strs(ev, "level", "warn", "file", "review_cycle_1.json", "step", "impl");
	cr_assert_eq(fge_jint(ev, "max"), 3);
	cr_assert_eq(counted_cycles(&f), 4, "cycles_by_source counts the rewrites past the limit");
	cs = fgw_cycles(&f);
	cr_assert_eq(cJSON_GetArraySize(cs), 2);
	cr_assert_str_eq(fge_jstr(cJSON_GetArrayItem(cs, 0), "feedback"), "v3");
	cr_assert_str_eq(fge_jstr(cJSON_GetArrayItem(cs, 0), "verdict"), "rejected");
	fgw_release(&f);
}

/* The same limit in `forge-runner watch` (no run, no session): three
 * review_cycle lines for one number, then one cycle_rewrite_limit on
 * stderr, then silence for the 100 rewrites after it. */
static const char rewrite_watch_script[] =
	"R=$1; T=$2\n"
	"\"$R\" watch \"$T/a\" --log-format json --poll-interval 0.05 > \"$T/out\" 2> \"$T/err\" &\n"
	"pid=$!\n"
	"wl() { i=0; while ! grep -q \"$1\" \"$2\"; do i=$((i+1)); [ $i -gt 2000 ] && exit 9; sleep 0.01; done; }\n"
	"put() { printf '{\"cycle\":1,\"max_cycles\":10,\"verdict\":\"rejected\",\"feedback\":\"v%s\",'"
	"'\"skill\":\"s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}' $1 > \"$T/a/.t\"; "
	"mv \"$T/a/.t\" \"$T/a/review_cycle_1.json\"; }\n"
	"wl watch_start \"$T/err\"\n"
	"for v in 1 2 3; do put $v; wl \"\\\"feedback\\\":\\\"v$v\\\"\" \"$T/out\"; done\n"
	"put 4; wl cycle_rewrite_limit \"$T/err\"\n"
	"i=5; while [ $i -le 105 ]; do put $i; i=$((i+1)); done; sleep 0.3\n"
	"kill -TERM $pid; wait $pid; echo rc=$?\n";

Test(limits, watch_reports_a_rewritten_cycle_three_times)
{
	char *dir = fgt_tmpdir();
	const char *argv[] = { "/bin/sh", "-c", rewrite_watch_script, "sh", FG_RUNNER_BIN, dir, NULL };
	struct fgt_proc p;
	char *a = fgt_fmt("%s/a", dir), *out, *err;
	cJSON *evs;

	cr_assert_eq(mkdir(a, 0755), 0);
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 60), 0);
	cr_assert_not_null(strstr(p.out, "rc=0"), "out: %s err: %s", p.out, p.err);
	out = fge_read_in(dir, "out");
	err = fge_read_in(dir, "err");
	evs = fge_json_lines(out);
	cr_assert_eq(fge_count_events(evs, "review_cycle", NULL, NULL), 3, "%s", out);
	cJSON_Delete(evs);
	evs = fge_json_lines(err);
	cr_assert_eq(fge_count_events(evs, "cycle_rewrite_limit", NULL, NULL), 1, "%s", err);
	cJSON_Delete(evs);
	free(out);
	free(err);
	free(a);
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(dir);
}

/* Reproduction 8: `mv .forge attic; mkdir -p .forge/STEP` blinded the
 * inotify source for the rest of the run, and 2,000 such moves left 2,000
 * inotify watches held against the operator's limit. The scripted sandbox
 * below does the 2,000 moves, then writes cycle 2 in the new directory: it
 * must be reported by inotify (the poll net is 600 s away), and the
 * runner's inotify descriptor (its /proc/PID/fdinfo, read by the script,
 * the runner's child) must hold no more watches than the components of
 * W/.forge/impl: 3. (The moves are made by perl, Debian's essential
 * perl-base, in one process: 4,000 mv and mkdir processes would take most
 * of the test's time under AddressSanitizer.) */
Test(limits, a_moved_step_directory_is_followed_without_leaking_watches)
{
	struct fgw f;
	char *watches;
	const cJSON *ev;
	static const char *const extra[] = { "--poll-interval", "600", NULL };

	fgw_init_runner(&f);
	fgw_runner(&f, FGW_RUN(.ep_sh = "count() { n=0; for fd in /proc/$PPID/fdinfo/*; do\n"
					"  c=$(grep -c '^inotify wd:' \"$fd\" 2>/dev/null); n=$((n+${c:-0})); done; echo $n; }\n"
					"mkdir -p \"$D\"; cyc 1 rejected; wait_log review_cycle_1.json\n"
					"mkdir \"$W/attic\"\n"
					"cd \"$W\" && perl -e 'for (0..1999) { rename(\".forge\", \"attic/$_\") && mkdir(\".forge\") &&"
					" mkdir(\".forge/$ARGV[0]\") or die \"$!\" }' \"$S\" || exit 98\n"
					"cyc 2 approved; wait_log review_cycle_2.json\n"
					"i=0; while [ $(count) -gt 3 ] && [ $i -lt 200 ]; do sleep 0.01; i=$((i+1)); done\n"
					"count > \"$OUT/watches\"\n"
					"exit 0\n",
			       .args = extra));
	cr_assert_eq(fgw_code(&f), 0, "exit %d; stderr:\n%s", fgw_code(&f), f.err);
	ev = fge_find_event(f.events, "review_cycle", "file", "review_cycle_2.json");
	cr_assert_not_null(ev, "cycle 2 was not reported");
	cr_assert_str_eq(fge_jstr(ev, "source"), "watch", "the inotify source was blinded");
	watches = fge_read_in(f.out, "watches");
	cr_assert_not_null(watches);
	cr_log_info("runner's inotify watches after 2,000 moves: %s", watches);
	long nwatch;

	watches[strcspn(watches, "\n")] = '\0';
	cr_assert_eq(fg_parse_long(watches, 0, LONG_MAX, &nwatch), 0, "watch count: '%s'", watches);
	cr_assert_leq(nwatch, 3, "%ld inotify watches after 2,000 moves", nwatch);
	cr_assert_gt(nwatch, 0, "the count read nothing");
	cr_assert_str_eq(fge_jstr(f.res, "review_state"), "approved");
	free(watches);
	fgw_release(&f);
}

/* The adapters themselves (forge-entrypoint agent-output, what the presets
 * read an agent's output with): a Claude result reporting 1e308 USD gives
 * cost_usd null and a warning saying why. */
Test(limits, agent_output_refuses_a_cost_of_1e308)
{
	const char *argv[] = { FG_ENTRYPOINT_BIN, "agent-output", "--format", "claude", NULL };
	struct fgt_proc p;

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL,
			     "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"x\","
			     "\"total_cost_usd\":1e308,\"usage\":{\"output_tokens\":3}}\n", 20), 0);
	fgt_assert_exit(&p, 0);
	fgt_assert_has(p.out, "\"cost_usd\":null", "\"output_tokens\":3");
	cr_assert(strstr(p.err, "warning: agent-output: reported cost 1e+308 USD refused (above 1e+06 USD "
			 "for one agent run"), "%s", p.err);
	fgt_proc_release(&p);
}
