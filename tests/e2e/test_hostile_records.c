/*
 * test_hostile_records.c - forge-runner against what an agent can plant in
 * the step directory: thousands of cycle files, big ones rewritten, the
 * .forge directory swapped for a symlink, entries planted under cycle
 * names, files that are not UTF-8 (sweep, watch, run, report, metrics).
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"
#include "forge/fsutil.h"
#include "forge/text.h"

TestSuite(hostile_records, .timeout = 180);

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

Test(hostile_records, thousands_of_cycle_files_are_capped_and_counted)
{
	struct fgw f;
	const cJSON *cs, *ev;

	fgw_init_runner(&f);
	fgw_runner(&f, FGW_RUN(.ep_sh = "cycs 1 2000 rejected\n"
					"exit 0\n"));
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

Test(hostile_records, big_cycle_files_rewritten_keep_memory_bounded)
{
	struct fgw f;
	const cJSON *cs, *ev;
	char *bound = fgt_fmt("%ld", TEST_CYCLES_MAX);
	int kept;

	fgw_init_runner(&f);
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

Test(hostile_records, test_bound_only_lowers_the_retained_bytes)
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

Test(hostile_records, forge_dir_swapped_for_a_symlink_mid_run_is_never_followed)
{
	struct fgw f;
	const cJSON *cs, *ev;
	char *outside;

	fgw_init_runner(&f);
	/* Cycle 1 where it belongs; then a valid cycle 2 of this very run
	 * outside, and W/.forge replaced by a link that puts it at
	 * W/.forge/impl/review_cycle_2.json. */
	fgw_runner(&f, FGW_RUN(.ep_sh = "cyc 1 rejected\nwait_log '\"file\":\"review_cycle_1.json\"'\n"
					"mkdir -p \"$OUT/impl\"\nDIR=$OUT/impl cyc 2 approved \"\" OUTSIDE\n"
					"printf '{\"state\":\"approved\",\"cycles\":2,\"max_cycles\":3,\"step\":\"impl\","
					"\"skill\":\"impl\",\"task_key\":\"\",\"run_id\":\"%s\",\"review_md\":null}' "
					"\"$FORGE_RUN_ID\" > \"$OUT/impl/review_summary.json\"\n"
					"mv \"$W/.forge\" \"$W/.forge.old\"\nln -s \"$OUT\" \"$W/.forge\"\n"
					"exit 0\n"));
	cs = fgw_assert_run(&f, 0, 1);
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
	fgw_release(&f);
}

Test(hostile_records, sweep_dir_given_as_a_symlink_is_refused)
{
	struct fgw f;
	struct fgt_proc p;
	char *link, *dotp;
	const char *argv[] = { FG_RUNNER_BIN, "sweep", NULL, NULL };

	fgw_init_runner(&f);
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

/* A directory (with contents, and a link to a file
 * outside) planted under a cycle name by an earlier step, a FIFO under the
 * next one and a directory under a reviewer log name: clearing removes them
 * without following the link, says so, and the run then writes its cycles. */
Test(hostile_records, entries_planted_under_cycle_names_are_cleared_and_logged)
{
	struct fgw f;
	char *planted, *inner, *link, *fifo, *logdir, *keep;
	const cJSON *ev;

	fgw_init_runner(&f);
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
	fgw_runner(&f, FGW_RUN(.worker_sh = "echo done > \"$PWD/out.txt\"",
			       .reviewer_sh = "echo 'REJECTED: louder'; exit 0"));
	/* Before the fix the directory survived and every cycle write failed
	 * with "Is a directory" (exit 1, no cycle). */
	fgw_assert_run(&f, 0, 3);
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

/* A process in the workspace swaps W/.forge for a
 * symlink with renameat2(RENAME_EXCHANGE) in a loop while runs prepare
 * their step directory. No run may delete a file outside the workspace
 * (OUT/impl/review_cycle_1.json behind the link) or create a directory
 * there (OUT/fresh for step "fresh", which exists nowhere). Before the fix
 * (lstat of W/.forge, then mkdir -p and open by path) the outside cycle
 * file was deleted in about one run in five. */
Test(hostile_records, forge_swapped_in_a_loop_never_makes_prepare_leave_the_workspace)
{
	static const char *const fresh[] = { "--step", "fresh", NULL };
	struct fgw f;
	char *forge, *x, *victim, *made;
	int status, rounds = 40;
	pid_t sw;

	fgw_init_runner(&f);
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
	sw = start_swapper(f.ws, 20000000L);
	for (int i = 0; i < rounds; i++) {
		fgw_runner(&f, FGW_RUN(.ep_sh = "exit 0\n",
				       .args = i % 2 ? fresh : NULL));
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
	fgw_release(&f);
}

#define HEAD "{\"cycle\":%d,\"max_cycles\":9,\"verdict\":\"rejected\","
#define TAIL "\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\""

/* Each entry: the cycle's fields after HEAD, one string per case holding
 * bytes that are not UTF-8 (FF FE, a truncated sequence, an overlong '/',
 * an encoded surrogate, a lone continuation byte). Cycle 1 is valid. */
static const char *const corpus[] = {
	"\"feedback\":\"all good \xc3\xa9\",\"skill\":\"impl\"," TAIL "}",
	"\"feedback\":\"ok \xff\xfe\",\"skill\":\"impl\"," TAIL "}",
	"\"feedback\":\"f\",\"skill\":\"imp\xc3\"," TAIL "}",
	"\"feedback\":\"f\",\"skill\":\"impl\"," TAIL ",\"run_id\":\"\xc0\xaf\"}",
	"\"feedback\":\"f\",\"skill\":\"impl\"," TAIL ",\"findings\":[{\"severity\":\"BLOCKING\","
	"\"title\":\"\xed\xa0\x80\"}]}",
	"\"feedback\":\"f\",\"skill\":\"impl\"," TAIL ",\"reviewer_log\":\"\x80.log\"}",
	"\"feedback\":\"f\",\"skill\":\"impl\"," TAIL ",\"unknown\":{\"k\xfe\":1}}",
};
#define NCORPUS (sizeof(corpus) / sizeof(corpus[0]))

static void write_corpus(const char *dir)
{
	for (size_t i = 0; i < NCORPUS; i++) {
		char *body = fgt_fmt(HEAD "%s\n", (int)i + 1, corpus[i]);
		char *path = fgt_fmt("%s/review_cycle_%zu.json", dir, i + 1);

		fgt_write(path, body);
		free(path);
		free(body);
	}
}

/* Fails unless the len bytes at s are valid UTF-8. */
static void assert_utf8(const char *what, const char *s, size_t len)
{
	cr_assert_not_null(s, "%s: no output", what);
	for (size_t i = 0, k; i < len; i += k) {
		k = fg_utf8_seq(s + i, len - i);
		cr_assert_neq(k, 0, "%s: not UTF-8 at byte %zu:\n%s", what, i, s);
	}
}

/* Fails unless every line of text is a JSON object. Returns how many
 * contain needle. */
static int json_lines_with(const char *what, const char *text, const char *needle)
{
	char *copy = strdup(text), *save = NULL;
	int n = 0;

	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		cJSON *o = cJSON_Parse(l);

		cr_assert(cJSON_IsObject(o), "%s: not a JSON line: %s", what, l);
		n += strstr(l, needle) != NULL;
		cJSON_Delete(o);
	}
	free(copy);
	return n;
}

Test(hostile_records, sweep_skips_every_file_that_is_not_utf8_and_prints_utf8)
{
	char *dir = fgt_tmpdir();
	char *step = fgt_fmt("%s/impl", dir);
	const char *argv[] = { FG_RUNNER_BIN, "sweep", step, NULL };
	struct fgt_proc p;
	cJSON *arr;

	write_corpus(step);
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 30), 0);
	fgt_assert_exit(&p, 0);
	/* Before the fix FF FE went raw into this array (a consumer's
	 * json.loads failed on the whole output). */
	assert_utf8("sweep stdout", p.out, p.out_len);
	arr = cJSON_Parse(p.out);
	cr_assert(cJSON_IsArray(arr), "stdout:\n%s", p.out);
	cr_assert_eq(cJSON_GetArraySize(arr), 1, "stdout:\n%s", p.out);
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 0), "feedback")->valuestring,
			 "all good \xc3\xa9");
	for (size_t i = 2; i <= NCORPUS; i++) {
		char *want = fgt_fmt("review_cycle_%zu.json': not valid UTF-8 at byte", i);

		cr_assert_not_null(strstr(p.err, want), "no reason for cycle %zu; stderr:\n%s", i, p.err);
		free(want);
	}
	cJSON_Delete(arr);
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(step);
	free(dir);
}

static const char *watch_script =
	"R=$1; T=$2\n"
	"\"$R\" watch \"$T/impl\" --log-format json --poll-interval 0.05 > \"$T/out\" 2> \"$T/err\" &\n"
	"pid=$!\n"
	"i=0; while ! grep -q review_cycle_1.json \"$T/out\"; do i=$((i+1)); [ $i -gt 2000 ] && exit 9;"
	" sleep 0.01; done\n"
	"i=0; while ! grep -q cycle_corrupt \"$T/err\"; do i=$((i+1)); [ $i -gt 2000 ] && exit 9;"
	" sleep 0.01; done\n"
	"kill -TERM $pid; wait $pid; echo rc=$?\n";

Test(hostile_records, watch_json_log_is_utf8_and_names_each_corrupt_file)
{
	char *dir = fgt_tmpdir();
	char *step = fgt_fmt("%s/impl", dir);
	char *outp = fgt_fmt("%s/out", dir), *errp = fgt_fmt("%s/err", dir);
	const char *argv[] = { "/bin/sh", "-c", watch_script, "sh", FG_RUNNER_BIN, dir, NULL };
	struct fgt_proc p;
	char *out, *err;
	size_t olen, elen;

	write_corpus(step);
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 60), 0);
	cr_assert_not_null(strstr(p.out, "rc=0"), "stdout: %s stderr: %s", p.out, p.err);
	out = fgt_read(outp, &olen);
	err = fgt_read(errp, &elen);
	assert_utf8("watch stdout", out, olen);
	assert_utf8("watch stderr", err, elen);
	cr_assert_eq(json_lines_with("watch stdout", out, "\"review_cycle\""), 1, "%s", out);
	cr_assert_eq(json_lines_with("watch stderr", err, "not valid UTF-8"), (int)NCORPUS - 1, "%s", err);
	free(out);
	free(err);
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(step);
	free(outp);
	free(errp);
	free(dir);
}

/* run on a workspace whose entrypoint copies the corpus in (and ends with
 * a last output line that is not UTF-8 either), then report on the result. */
Test(hostile_records, run_result_log_and_report_are_utf8)
{
	struct fgw w;

	fgw_init(&w);
	char *corp = fgt_fmt("%s/corpus", w.root);
	char *result = fgt_fmt("%s/r.json", w.root), *log = fgt_fmt("%s/run.log", w.root);
	char *ep = fge_script(w.root, "ep.sh", FGE_FAKE_EP_HEAD,
			      "for f in \"$CORPUS\"/review_cycle_*.json; do n=${f##*/};"
			      " fgseal \"$S\" \"$n\" < \"$f\" > \"$D/$n\"; done\n"
			      "printf 'the task failed: \\377\\376\\n' >&2\nexit 1\n");
	char *corpenv = fgt_fmt("CORPUS=%s", corp);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", w.ws, "--step", "impl",
			       "--entrypoint", ep, "--result", result, "--log-format", "json",
			       "--log-file", log, "--poll-interval", "0.05", NULL };
	const char *env[] = { corpenv, "FORGE_LOG_LEVEL", NULL };
	const char *rargv[] = { FG_RUNNER_BIN, "report", result, NULL };
	struct fgt_proc p;
	char *text;
	size_t len;
	cJSON *res;

	fge_write_in(w.ws, "README", "workspace\n");
	write_corpus(corp);
	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 60), 0);
	fgt_assert_exit(&p, 1);
	fgt_proc_release(&p);
	text = fgt_read(result, &len);
	assert_utf8("result", text, len);
	res = cJSON_Parse(text);
	cr_assert_not_null(res, "%s", text);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(res, "review_cycles")), 1, "%s", text);
	cJSON_Delete(res);
	free(text);
	text = fgt_read(log, &len);
	assert_utf8("run log", text, len);
	cr_assert_eq(json_lines_with("run log", text, "not valid UTF-8"), (int)NCORPUS - 1, "%s", text);
	free(text);
	cr_assert_eq(fgt_run(&p, rargv, NULL, NULL, NULL, 30), 0);
	fgt_assert_exit(&p, 0);
	assert_utf8("report", p.out, p.out_len);
	cr_assert_not_null(strstr(p.out, "\"__impl\""), "%s", p.out);
	fgw_release_run(&w, &p);
	free(corp);
	free(result);
	free(log);
	free(ep);
	free(corpenv);
}

/* Skills a sandbox can put in a cycle file. */
Test(hostile_records, a_cycle_skill_never_reaches_metrics_or_the_result)
{
	struct fgw w;

	fgw_init(&w);
	char *result = fgt_fmt("%s/r.json", w.root), *log = fgt_fmt("%s/run.log", w.root);
	char *prom = fgt_fmt("%s/forge.prom", w.root);
	char *ep = fge_script(w.root, "ep.sh", FGE_FAKE_EP_HEAD,
			      "put() { printf '{\"cycle\":%s,\"max_cycles\":9,\"verdict\":\"rejected\","
			      "\"feedback\":\"f\",\"skill\":\"%s\",\"elapsed_seconds\":1,"
			      "\"timestamp\":\"2026-01-01T00:00:00Z\"}' \"$1\" \"$2\" | fgseal \"$S\" \"review_cycle_$1.json\" > \"$D/.t\";"
			      " mv \"$D/.t\" \"$D/review_cycle_$1.json\"; }\n"
			      "put 1 \"$(printf 'bad\\377\\376')\"\n"
			      "put 2 \"$(head -c 1400000 /dev/zero | tr '\\000' s)\"\n"
			      "put 3 'a\\u0007b'\n"
			      "put 4 'two words'\n"
			      "put 5 another-skill\n"
			      "exit 0\n");
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", w.ws, "--step", "impl",
			       "--entrypoint", ep, "--result", result, "--log-format", "json",
			       "--log-file", log, "--poll-interval", "0.05", "--metrics-file", prom, NULL };
	const char *env[] = { "FORGE_LOG_LEVEL", "FORGE_SKILL_NAME", NULL };
	const char *rargv[] = { FG_RUNNER_BIN, "report", result, NULL };
	const char *pargv[] = { "/usr/bin/promtool", "check", "metrics", NULL };
	struct fgt_proc p;
	struct stat st;
	char *text;
	cJSON *res;

	if (access(pargv[0], X_OK))
		cr_skip("promtool is not installed (%s)", pargv[0]);
	fge_write_in(w.ws, "README", "workspace\n");
	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 60), 0);
	fgt_assert_exit(&p, 0);
	fgt_proc_release(&p);
	/* The metrics textfile node_exporter reads stays valid and small. */
	text = fgt_read(prom, NULL);
	cr_assert_not_null(text);
	cr_assert_eq(stat(prom, &st), 0);
	cr_assert_lt(st.st_size, 64 * 1024, "metrics file of %lld bytes", (long long)st.st_size);
	cr_assert_eq(fgt_run(&p, pargv, NULL, NULL, text, 30), 0);
	cr_assert_eq(p.exit_code, 0, "promtool refused the metrics:\n%s%s\n%s", p.out, p.err, text);
	fgt_proc_release(&p);
	/* One skill per run, the run's own (the step's, as the entrypoint
	 * derives it): never one a cycle file chose, valid or not. */
	cr_assert_null(strstr(text, "another-skill"), "%s", text);
	cr_assert_not_null(strstr(text, "skill=\"impl\""), "%s", text);
	free(text);
	text = fgt_read(result, NULL);
	res = cJSON_Parse(text);
	cr_assert_not_null(res);
	cr_assert_str_eq(cJSON_GetObjectItem(res, "skill")->valuestring, "impl");
	/* The four invalid skills made their files corrupt; cycle 5 is valid. */
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(res, "review_cycles")), 1, "%s", text);
	cJSON_Delete(res);
	free(text);
	text = fgt_read(log, NULL);
	cr_assert_not_null(strstr(text, "invalid skill name"), "%s", text);
	free(text);
	cr_assert_eq(fgt_run(&p, rargv, NULL, NULL, NULL, 30), 0);
	cr_assert_eq(p.exit_code, 0, "report refused the result:\n%s", p.err);
	fgw_release_run(&w, &p);
	free(result);
	free(log);
	free(prom);
	free(ep);
}
