/*
 * test_runner_hostile.c - forge-runner run next to a hostile sandbox, with
 * a scripted entrypoint that plays the sandbox: thousands of cycle files,
 * big cycle files rewritten with new content (the runner's memory must stay
 * bounded, its peak RSS is read from wait4), and W/.forge swapped for a
 * symlink to a directory outside the workspace mid-run (nothing behind it
 * may be read), and `sweep DIR` named through a symlink. docs/security.md
 * lists the promised behaviour of each.
 */
#include "test_faults_helpers.h"

TestSuite(runner_hostile, .timeout = 180);

/* AddressSanitizer's quarantine keeps up to 256 MiB of freed memory and its
 * shadow adds more: a peak RSS bound says nothing about our code there. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_MEANINGFUL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_MEANINGFUL 0
#endif
#endif
#ifndef RSS_MEANINGFUL
#define RSS_MEANINGFUL 1
#endif

/* Fails when the runner's peak RSS reached max_kb (outside AddressSanitizer). */
static void assert_rss_below(const struct fx *f, long max_kb, const char *what)
{
	cr_log_info("%s: peak RSS %ld KiB", what, f->maxrss_kb);
	if (RSS_MEANINGFUL)
		cr_assert_lt(f->maxrss_kb, max_kb, "%s: peak RSS %ld KiB", what, f->maxrss_kb);
}

/* The result's cycles_dropped (fails when absent or not a number). */
static int dropped(const struct fx *f)
{
	cr_assert_not_null(f->res, "no result file; stderr:\n%s", f->err);
	return fge_jint(f->res, "cycles_dropped");
}

Test(runner_hostile, thousands_of_cycle_files_are_capped_and_counted)
{
	struct fx f;
	const cJSON *cs, *ev;
	char *ep;

	fx_setup(&f);
	ep = fx_fake_entrypoint(&f,
				"i=1; while [ $i -le 2000 ]; do cyc $i rejected; i=$((i+1)); done\n"
				"exit 0\n");
	fx_runner(&f, NULL, ep, "json", NULL, NULL, NULL, NULL);
	cr_assert_eq(fx_code(&f), 0, "exit %d; stderr:\n%s", fx_code(&f), f.err);
	cs = fx_cycles(&f);
	/* RN_WATCH_MAX_CYCLE_FILES (1000) are tracked, the other 1000 never read. */
	cr_assert_eq(cJSON_GetArraySize(cs), 1000);
	cr_assert_eq(dropped(&f), 1000);
	cr_assert_eq(fge_count_events(f.events, "cycle_limit", NULL, NULL), 1);
	ev = fge_find_event(f.events, "cycle_limit", "limit", "cycle_files");
	cr_assert_not_null(ev);
	cr_assert_eq(fge_jint(ev, "max"), 1000);
	assert_rss_below(&f, 64 * 1024, "2000 cycle files");
	free(ep);
	fx_teardown(&f);
}

/* big N C: review_cycle_N.json with 7 MiB of feedback made of the letter C. */
static const char BIG_CYCLE[] =
	"big() {\n"
	"  { printf '{\"cycle\":%s,\"max_cycles\":40,\"verdict\":\"rejected\",\"feedback\":\"' \"$1\"\n"
	"    head -c 7340032 /dev/zero | tr '\\0' \"$2\"\n"
	"    printf '\",\"skill\":\"%s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\","
	"\"run_id\":\"%s\"}\\n' \"$K\" \"$FORGE_RUN_ID\"; } > \"$D/.big\"\n"
	"  mv \"$D/.big\" \"$D/review_cycle_$1.json\"\n"
	"}\n";

Test(runner_hostile, big_cycle_files_rewritten_keep_memory_bounded)
{
	struct fx f;
	const cJSON *cs;
	char *body, *ep;
	int kept;

	fx_setup(&f);
	/* 40 files of 7 MiB, each rewritten twice with new content: 280 MiB
	 * of distinct cycles at any time, 840 MiB written in all. */
	body = fgt_fmt("%sfor c in a b c; do i=1; while [ $i -le 40 ]; do big $i $c; i=$((i+1)); done; done\n"
		       "exit 0\n", BIG_CYCLE);
	ep = fx_fake_entrypoint(&f, body);
	fx_runner(&f, NULL, ep, "json", NULL, NULL, NULL, NULL);
	cr_assert_eq(fx_code(&f), 0, "exit %d; stderr:\n%s", fx_code(&f), f.err);
	cs = fx_cycles(&f);
	kept = cJSON_GetArraySize(cs);
	/* RN_CYCLES_MAX_BYTES (64 MiB) holds 9 of them; the rest are counted. */
	cr_assert(kept > 0 && kept < 10, "%d cycles kept", kept);
	cr_assert_eq(kept + dropped(&f), 40, "%d kept, %d dropped", kept, dropped(&f));
	cr_assert_not_null(fge_find_event(f.events, "cycle_limit", "limit", "retained_bytes"));
	/* The dropped cycle 40 (rejected, 40 of 40) still decides the state. */
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(f.res, "review_exhausted")));
	cr_assert_str_eq(fge_jstr(f.res, "review_state"), "exhausted");
	/* 64 MiB kept, one 7 MiB file being read, and printing the result:
	 * keeping every cycle would take well over 600 MiB. */
	assert_rss_below(&f, 320 * 1024, "big rewritten cycle files");
	free(body);
	free(ep);
	fx_teardown(&f);
}

Test(runner_hostile, forge_dir_swapped_for_a_symlink_mid_run_is_never_followed)
{
	struct fx f;
	const cJSON *cs, *ev;
	char *ep, *outside;

	fx_setup(&f);
	/* Cycle 1 where it belongs; then a valid cycle 2 of this very run
	 * outside, and W/.forge replaced by a link that puts it at
	 * W/.forge/impl/review_cycle_2.json. */
	ep = fx_fake_entrypoint(&f,
				"cyc 1 rejected\nwait_log '\"file\":\"review_cycle_1.json\"'\n"
				"mkdir -p \"$OUT/impl\"\nDIR=$OUT/impl cyc 2 approved \"\" OUTSIDE\n"
				"printf '{\"state\":\"approved\",\"cycles\":2,\"max_cycles\":3,\"step\":\"impl\","
				"\"skill\":\"impl\",\"task_key\":\"\",\"run_id\":\"%s\",\"review_md\":null}' "
				"\"$FORGE_RUN_ID\" > \"$OUT/impl/review_summary.json\"\n"
				"mv \"$W/.forge\" \"$W/.forge.old\"\nln -s \"$OUT\" \"$W/.forge\"\n"
				"exit 0\n");
	fx_runner(&f, NULL, ep, "json", NULL, NULL, NULL, NULL);
	cr_assert_eq(fx_code(&f), 0, "exit %d; log:\n%s", fx_code(&f), f.logtext);
	cs = fx_cycles(&f);
	cr_assert_eq(cJSON_GetArraySize(cs), 1, "log:\n%s", f.logtext);
	cr_assert_eq(fge_jint(cJSON_GetArrayItem(cs, 0), "cycle"), 1);
	cr_assert_null(strstr(f.logtext, "OUTSIDE"), "read behind the link:\n%s", f.logtext);
	/* Nor the summary planted behind the link: the state comes from cycle 1. */
	cr_assert_str_neq(fge_jstr(f.res, "review_state"), "approved", "summary read behind the link");
	ev = fge_find_event(f.events, "step_dir_refused", NULL, NULL);
	cr_assert_not_null(ev, "the swap was not reported; log:\n%s", f.logtext);
	cr_assert_not_null(strstr(fge_jstr(ev, "error"), "'.forge' is a symbolic link"), "%s",
			   fge_jstr(ev, "error"));
	outside = fgt_fmt("%s/impl/review_cycle_2.json", f.out);
	cr_assert(fgt_exists(outside), "the script did not write behind the link");
	free(outside);
	free(ep);
	fx_teardown(&f);
}

Test(runner_hostile, sweep_dir_given_as_a_symlink_is_refused)
{
	struct fx f;
	struct fgt_proc p;
	char *link, *dotp;
	const char *argv[] = { FG_RUNNER_BIN, "sweep", NULL, NULL };

	fx_setup(&f);
	/* A valid cycle outside; the operator names a link to it. */
	fge_write_in(f.out, "impl/review_cycle_1.json",
		     "{\"cycle\":1,\"max_cycles\":3,\"verdict\":\"approved\",\"feedback\":\"OUTSIDE\","
		     "\"skill\":\"impl\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}\n");
	link = fgt_fmt("%s/link", f.ws);
	dotp = fgt_fmt("%s/impl/.", f.out);
	cr_assert_eq(symlink(f.out, link), 0);
	argv[2] = link;
	cr_assert_eq(fgt_run(&p, argv, NULL, f.root, NULL, 30), 0);
	cr_assert_eq(p.exit_code, 1, "exit %d; stdout:\n%s", p.exit_code, p.out);
	cr_assert_null(strstr(p.out, "OUTSIDE"));
	cr_assert_not_null(strstr(p.err, "'link' is a symbolic link"), "stderr:\n%s", p.err);
	fgt_proc_release(&p);
	/* "DIR/." names the directory itself: it is read as before. */
	argv[2] = dotp;
	cr_assert_eq(fgt_run(&p, argv, NULL, f.root, NULL, 30), 0);
	cr_assert_eq(p.exit_code, 0, "exit %d; stderr:\n%s", p.exit_code, p.err);
	cr_assert_not_null(strstr(p.out, "OUTSIDE"));
	fgt_proc_release(&p);
	free(link);
	free(dotp);
	fx_teardown(&f);
}
