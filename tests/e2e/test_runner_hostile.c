/*
 * test_runner_hostile.c - forge-runner run next to a hostile sandbox, with
 * a scripted entrypoint that plays the sandbox: thousands of cycle files,
 * big cycle files rewritten with new content (the runner's memory must stay
 * bounded, its peak RSS is read from wait4), and W/.forge swapped for a
 * symlink to a directory outside the workspace mid-run (nothing behind it
 * may be read), and `sweep DIR` named through a symlink. docs/security.md
 * lists the promised behaviour of each.
 */
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

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

#include <sys/prctl.h>

#include "forge/fsutil.h"

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
static void assert_rss_below(const struct fgw *f, long max_kb, const char *what)
{
	cr_log_info("%s: peak RSS %ld KiB", what, f->maxrss_kb);
	if (RSS_MEANINGFUL)
		cr_assert_lt(f->maxrss_kb, max_kb, "%s: peak RSS %ld KiB", what, f->maxrss_kb);
}

/* The result's cycles_dropped (fails when absent or not a number). */
static int dropped(const struct fgw *f)
{
	cr_assert_not_null(f->res, "no result file; stderr:\n%s", f->err);
	return fge_jint(f->res, "cycles_dropped");
}

Test(runner_hostile, thousands_of_cycle_files_are_capped_and_counted)
{
	struct fgw f;
	const cJSON *cs, *ev;
	char *ep;

	fgw_init(&f);
	fgw_runner_tree(&f);
	ep = fgw_fake_entrypoint(&f,
				"cycs 1 2000 rejected\n"
				"exit 0\n");
	fgw_runner(&f, FGW_RUN(.ep = ep));
	cr_assert_eq(fgw_code(&f), 0, "exit %d; stderr:\n%s", fgw_code(&f), f.err);
	cs = fgw_cycles(&f);
	/* RN_WATCH_MAX_CYCLE_FILES (1000) are tracked, the other 1000 never read. */
	cr_assert_eq(cJSON_GetArraySize(cs), 1000);
	cr_assert_eq(dropped(&f), 1000);
	cr_assert_eq(fge_count_events(f.events, "cycle_limit", NULL, NULL), 1);
	ev = fge_find_event(f.events, "cycle_limit", "limit", "cycle_files");
	cr_assert_not_null(ev);
	cr_assert_eq(fge_jint(ev, "max"), 1000);
	assert_rss_below(&f, 64 * 1024, "2000 cycle files");
	free(ep);
	fgw_release(&f);
}

/*
 * The memory bound is tested against a test-only lower bound: the runner's
 * FORGE_TEST_CYCLES_MAX_BYTES lowers RN_CYCLES_MAX_BYTES (64 MiB, never
 * raises it) to TEST_CYCLES_MAX, and the cycle files shrink by the same
 * factor (TEST_SCALE): the same 40 files, rewritten twice, the same 9 kept,
 * 105 MiB written instead of 840.
 */
#define TEST_SCALE 8
#define TEST_CYCLES_MAX ((64L * 1024 * 1024) / TEST_SCALE)
#define TEST_FEEDBACK_BYTES ((7L * 1024 * 1024) / TEST_SCALE)

/* big N C: review_cycle_N.json with TEST_FEEDBACK_BYTES of feedback made of
 * the letter C. */
static const char BIG_CYCLE[] =
	"big() {\n"
	"  { printf '{\"cycle\":%s,\"max_cycles\":40,\"verdict\":\"rejected\",\"feedback\":\"' \"$1\"\n"
	"    head -c \"$BIG_BYTES\" /dev/zero | tr '\\0' \"$2\"\n"
	"    printf '\",\"skill\":\"%s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\","
	"\"run_id\":\"%s\"}\\n' \"$K\" \"$FORGE_RUN_ID\"; } | fgseal \"$S\" \"review_cycle_$1.json\" > \"$D/.big\"\n"
	"  mv \"$D/.big\" \"$D/review_cycle_$1.json\"\n"
	"}\n";

/* Runs the 40-files-rewritten-twice script with FORGE_TEST_CYCLES_MAX_BYTES=bound. */
static void run_big_rewrites(struct fgw *f, const char *bound)
{
	char *body, *ep, *lim = fgt_fmt("FORGE_TEST_CYCLES_MAX_BYTES=%s", bound);
	const char *env[] = { lim, NULL };

	/* 40 files, each rewritten twice with new content: 35 MiB of distinct
	 * cycles at any time, 105 MiB written in all. */
	body = fgt_fmt("BIG_BYTES=%ld\n%sfor c in a b c; do i=1; while [ $i -le 40 ]; do big $i $c; i=$((i+1)); done; done\n"
		       "exit 0\n", TEST_FEEDBACK_BYTES, BIG_CYCLE);
	ep = fgw_fake_entrypoint(f, body);
	fgw_runner(f, FGW_RUN(.ep = ep, .env = env));
	cr_assert_eq(fgw_code(f), 0, "exit %d; stderr:\n%s", fgw_code(f), f->err);
	free(body);
	free(ep);
	free(lim);
}

Test(runner_hostile, big_cycle_files_rewritten_keep_memory_bounded)
{
	struct fgw f;
	const cJSON *cs, *ev;
	char *bound = fgt_fmt("%ld", TEST_CYCLES_MAX);
	int kept;

	fgw_init(&f);
	fgw_runner_tree(&f);
	run_big_rewrites(&f, bound);
	cs = fgw_cycles(&f);
	kept = cJSON_GetArraySize(cs);
	/* The bound holds 9 of them; the rest are counted. */
	cr_assert(kept > 0 && kept < 10, "%d cycles kept", kept);
	cr_assert_eq(kept + dropped(&f), 40, "%d kept, %d dropped", kept, dropped(&f));
	ev = fge_find_event(f.events, "cycle_limit", "limit", "retained_bytes");
	cr_assert_not_null(ev);
	cr_assert_eq(fge_jint(ev, "max"), TEST_CYCLES_MAX);
	/* The dropped cycle 40 (rejected, 40 of 40) still decides the state. */
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(f.res, "review_exhausted")));
	cr_assert_str_eq(fge_jstr(f.res, "review_state"), "exhausted");
	/* The bound kept, one file being read, and printing the result (about
	 * 45 MiB here); keeping every cycle takes about 125 MiB (the next test
	 * logs it). */
	assert_rss_below(&f, 40 * 1024 + 320 * 1024 / TEST_SCALE, "big rewritten cycle files");
	free(bound);
	fgw_release(&f);
}

Test(runner_hostile, test_bound_only_lowers_the_retained_bytes)
{
	struct fgw f;

	/* A bound above RN_CYCLES_MAX_BYTES is ignored: all 40 scaled files
	 * (35 MiB) fit in the real 64 MiB. */
	fgw_init(&f);	fgw_runner_tree(&f);
	run_big_rewrites(&f, "1099511627776");
	cr_assert_eq(cJSON_GetArraySize(fgw_cycles(&f)), 40);
	cr_log_info("every cycle kept: peak RSS %ld KiB", f.maxrss_kb);
	cr_assert_null(cJSON_GetObjectItem(f.res, "cycles_dropped"));
	cr_assert_null(fge_find_event(f.events, "cycle_limit", NULL, NULL));
	fgw_release(&f);
}

Test(runner_hostile, forge_dir_swapped_for_a_symlink_mid_run_is_never_followed)
{
	struct fgw f;
	const cJSON *cs, *ev;
	char *ep, *outside;

	fgw_init(&f);
	fgw_runner_tree(&f);
	/* Cycle 1 where it belongs; then a valid cycle 2 of this very run
	 * outside, and W/.forge replaced by a link that puts it at
	 * W/.forge/impl/review_cycle_2.json. */
	ep = fgw_fake_entrypoint(&f,
				"cyc 1 rejected\nwait_log '\"file\":\"review_cycle_1.json\"'\n"
				"mkdir -p \"$OUT/impl\"\nDIR=$OUT/impl cyc 2 approved \"\" OUTSIDE\n"
				"printf '{\"state\":\"approved\",\"cycles\":2,\"max_cycles\":3,\"step\":\"impl\","
				"\"skill\":\"impl\",\"task_key\":\"\",\"run_id\":\"%s\",\"review_md\":null}' "
				"\"$FORGE_RUN_ID\" > \"$OUT/impl/review_summary.json\"\n"
				"mv \"$W/.forge\" \"$W/.forge.old\"\nln -s \"$OUT\" \"$W/.forge\"\n"
				"exit 0\n");
	fgw_runner(&f, FGW_RUN(.ep = ep));
	cr_assert_eq(fgw_code(&f), 0, "exit %d; log:\n%s", fgw_code(&f), f.logtext);
	cs = fgw_cycles(&f);
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
	fgw_release(&f);
}

Test(runner_hostile, sweep_dir_given_as_a_symlink_is_refused)
{
	struct fgw f;
	struct fgt_proc p;
	char *link, *dotp;
	const char *argv[] = { FG_RUNNER_BIN, "sweep", NULL, NULL };

	fgw_init(&f);
	fgw_runner_tree(&f);
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
	fgt_assert_exit(&p, 0);
	cr_assert_not_null(strstr(p.out, "OUTSIDE"));
	fgt_proc_release(&p);
	free(link);
	free(dotp);
	fgw_release(&f);
}

/* Issue 18 defect 5: a directory (with contents, and a link to a file
 * outside) planted under a cycle name by an earlier step, a FIFO under the
 * next one and a directory under a reviewer log name: clearing removes them
 * without following the link, says so, and the run then writes its cycles. */
Test(runner_hostile, entries_planted_under_cycle_names_are_cleared_and_logged)
{
	struct fgw f;
	char *planted, *inner, *link, *fifo, *logdir, *keep, *wk, *rv;
	const cJSON *cs, *ev;

	fgw_init(&f);
	fgw_runner_tree(&f);
	planted = fgt_fmt("%s/review_cycle_1.json", f.step_dir);
	inner = fgt_fmt("%s/deep/er/file", planted);
	link = fgt_fmt("%s/outside", planted);
	fifo = fgt_fmt("%s/review_cycle_2.json", f.step_dir);
	logdir = fgt_fmt("%s/review_cycle_1.reviewer.log", f.step_dir);
	keep = fgt_fmt("%s/.keep", f.out);
	fgt_write(inner, "planted");
	cr_assert_eq(symlink(f.out, link), 0);
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	cr_assert_eq(mkdir(logdir, 0755), 0);
	wk = fgw_script(&f, "worker.sh", NULL, "echo done > \"$PWD/out.txt\"");
	rv = fgw_script(&f, "reviewer.sh", NULL, "echo 'REJECTED: louder'; exit 0");
	fgw_runner(&f, FGW_RUN(.worker = wk, .reviewer = rv));
	/* Before the fix the directory survived and every cycle write failed
	 * with "Is a directory" (exit 1, no cycle). */
	cr_assert_eq(fgw_code(&f), 0, "exit %d; log:\n%s", fgw_code(&f), f.logtext);
	cs = fgw_cycles(&f);
	cr_assert_eq(cJSON_GetArraySize(cs), 3, "log:\n%s", f.logtext);
	cr_assert_str_eq(fge_jstr(f.res, "review_state"), "exhausted");
	cr_assert_eq(fge_count_events(f.events, "stale_special", "action", "removed"), 3, "log:\n%s",
		     f.logtext);
	ev = fge_find_event(f.events, "stale_special", "file", "review_cycle_1.json");
	cr_assert_not_null(ev);
	cr_assert_str_eq(fge_jstr(ev, "type"), "directory");
	ev = fge_find_event(f.events, "stale_special", "file", "review_cycle_2.json");
	cr_assert_not_null(ev);
	cr_assert_str_eq(fge_jstr(ev, "type"), "fifo");
	cr_assert_eq(fge_jint(f.res, "stale_files_cleared"), 2);
	/* The link inside the planted directory was removed, not followed. */
	cr_assert(fgt_exists(keep), "a file outside the workspace was removed");
	free(planted);
	free(inner);
	free(link);
	free(fifo);
	free(logdir);
	free(keep);
	free(wk);
	free(rv);
	fgw_release(&f);
}

/* The swapper: exchanges W/.forge (a directory) and W/.forge-x (a symlink
 * to a directory outside) until killed or max rounds. */
static pid_t start_swapper(const char *ws, long max)
{
	char *a = fgt_fmt("%s/.forge", ws), *b = fgt_fmt("%s/.forge-x", ws);
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		/* Never outlive the test, whichever way it ends. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (long i = 0; i < max; i++)
			if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) < 0)
				_exit(1);
		_exit(0);
	}
	free(a);
	free(b);
	return pid;
}

/* Issue 18 defect 3: a process in the workspace swaps W/.forge for a
 * symlink with renameat2(RENAME_EXCHANGE) in a loop while runs prepare
 * their step directory. No run may delete a file outside the workspace
 * (OUT/impl/review_cycle_1.json behind the link) or create a directory
 * there (OUT/fresh for step "fresh", which exists nowhere). Before the fix
 * (lstat of W/.forge, then mkdir -p and open by path) the outside cycle
 * file was deleted in about one run in five. */
Test(runner_hostile, forge_swapped_in_a_loop_never_makes_prepare_leave_the_workspace)
{
	static const char *const fresh[] = { "--step", "fresh", NULL };
	struct fgw f;
	char *forge, *x, *victim, *made, *ep;
	int status, rounds = 40;
	pid_t sw;

	fgw_init(&f);
	fgw_runner_tree(&f);
	forge = fgt_fmt("%s/.forge", f.ws);
	x = fgt_fmt("%s/.forge-x", f.ws);
	victim = fgt_fmt("%s/impl/review_cycle_1.json", f.out);
	made = fgt_fmt("%s/fresh", f.out);
	fgt_write(victim, "{\"cycle\":1,\"max_cycles\":3,\"verdict\":\"approved\",\"feedback\":\"OUTSIDE\","
		  "\"skill\":\"impl\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}\n");
	cr_assert_eq(fg_mkdir_p(f.step_dir, 0755), 0);
	cr_assert_eq(symlink(f.out, x), 0);
	if (renameat2(AT_FDCWD, forge, AT_FDCWD, x, RENAME_EXCHANGE) < 0)
		cr_skip("renameat2(RENAME_EXCHANGE) is not supported here: %s", strerror(errno));
	ep = fgw_fake_entrypoint(&f, "exit 0\n");
	sw = start_swapper(f.ws, 20000000L);
	for (int i = 0; i < rounds; i++) {
		fgw_runner(&f, FGW_RUN(.ep = ep, .args = i % 2 ? fresh : NULL));
		/* Exit 0 when the walk got through, 125 when it met the link. */
		cr_assert(fgw_code(&f) == 0 || fgw_code(&f) == 125, "exit %d; log:\n%s", fgw_code(&f),
			  f.logtext);
		cr_assert(fgt_exists(victim), "run %d deleted a file outside the workspace; log:\n%s", i,
			  f.logtext);
		cr_assert(!fgt_exists(made), "run %d created a directory outside the workspace", i);
	}
	kill(sw, SIGKILL);
	cr_assert_eq(waitpid(sw, &status, 0), sw);
	cr_assert(WIFSIGNALED(status), "the swapper stopped early (exit %d)", WEXITSTATUS(status));
	cr_assert(fgt_exists(victim));
	free(forge);
	free(x);
	free(victim);
	free(made);
	free(ep);
	fgw_release(&f);
}
