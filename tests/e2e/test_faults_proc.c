/*
 * test_faults_proc.c - process and kernel faults with the real binaries:
 * the inotify watch limit exhausted, agents killed with SIGKILL, the runner
 * killed with SIGKILL mid-run and started again on the same workspace, and
 * feedback full of terminal escape sequences (docs/security.md).
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

TestSuite(faults_proc, .timeout = 180);

static const char WORKER_OK[] = "echo hello >> greeting.txt\n";

/*
 * The limit is per user; lowering it for root on a shared machine would
 * starve every other program. A new user namespace has its own
 * /proc/sys/user/max_inotify_watches: 0 there makes every
 * inotify_add_watch() of the runner fail with ENOSPC, and nobody else's.
 */
static const char *const NO_WATCHES[] = {
	"unshare", "-U", "-r", "sh", "-c",
	"echo 0 > /proc/sys/user/max_inotify_watches || exit 90; exec \"$@\"", "sh", NULL,
};

static void require_userns_limit(void)
{
	struct fgt_proc p;
	const char *argv[] = { "/bin/sh", "-c",
			       "unshare -U -r sh -c 'echo 0 > /proc/sys/user/max_inotify_watches && "
			       "inotifywait -t 1 /tmp' 2>&1", NULL };
	int ok;

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 20), 0);
	ok = p.exited && strstr(p.out, "upper limit on inotify watches reached") != NULL;
	fgt_proc_release(&p);
	if (!ok)
		cr_skip("cannot set a private inotify watch limit (unshare -U, inotifywait): %s",
			"user namespaces unavailable or inotify-tools missing");
}

Test(faults_proc, inotify_limit_exhausted_falls_back_to_polling)
{
	struct fgw f;
	const cJSON *cs, *ev;

	require_userns_limit();
	fgw_init(&f);	fgw_runner_tree(&f);
	/* The script waits for each report: only polling can deliver them. */
	fgw_runner(&f, FGW_RUN(.wrap = NO_WATCHES,
			       .ep_sh = "cyc 1 rejected\nwait_log '\"file\":\"review_cycle_1.json\"'\n"
					"cyc 2 rejected\nwait_log '\"file\":\"review_cycle_2.json\"'\n"
					"cyc 3 approved\nexit 0\n"));
	cr_assert_eq(fgw_code(&f), 0, "exit %d; stderr:\n%s\nlog:\n%s", fgw_code(&f), f.err, f.logtext);
	ev = fge_find_event(f.events, "watch_fallback", NULL, NULL);
	cr_assert_not_null(ev, "no watch_fallback logged; log:\n%s", f.logtext);
	cr_assert_str_eq(fge_jstr_or_null(ev, "level"), "warn");
	cr_assert_not_null(strstr(fge_jstr_or_null(ev, "reason"), strerror(ENOSPC)), "%s", fge_jstr_or_null(ev, "reason"));
	cr_assert_eq(fge_count_events(f.events, "watch_fallback", NULL, NULL), 1);
	cs = fgw_cycles(&f);
	cr_assert_eq(cJSON_GetArraySize(cs), 3, "log:\n%s", f.logtext);
	cr_assert_eq(fge_count_events(f.events, "review_cycle", NULL, NULL), 3);
	cr_assert_eq(fge_count_events(f.events, "review_cycle", "source", "watch"), 0);
	/* Cycles 1 and 2 only by polling (the script waits for them); cycle 3,
	 * written just before the exit, by the poll or the final sweep,
	 * whichever comes first: a race the test must not depend on. */
	cr_assert_geq(fge_count_events(f.events, "review_cycle", "source", "poll"), 2, "log:\n%s", f.logtext);
	cr_assert_eq(fge_count_events(f.events, "review_cycle", "source", "poll") +
		     fge_count_events(f.events, "review_cycle", "source", "sweep"), 3, "log:\n%s", f.logtext);
	fgw_release(&f);
}

Test(faults_proc, reviewer_killed_by_sigkill_is_a_rejected_cycle)
{
	struct fgw f;
	char *wk;
	const cJSON *cs, *c1;

	fgw_init_runner(&f);
	wk = fgw_script(&f, "worker.sh", NULL, WORKER_OK);
	fgw_runner(&f, FGW_RUN(.worker = wk,
			       .reviewer_sh = "if [ \"$FORGE_CYCLE\" = 1 ]; then echo 'half a review'; kill -9 $$; fi\necho APPROVED"));
	cs = fgw_assert_run(&f, 0, 2);
	c1 = cJSON_GetArrayItem(cs, 0);
	cr_assert_str_eq(fge_jstr_or_null(c1, "verdict"), "rejected");
	cr_assert_not_null(strstr(fge_jstr_or_null(c1, "feedback"), "killed by signal 9"), "%s", fge_jstr_or_null(c1, "feedback"));
	cr_assert_str_eq(fge_jstr_or_null(cJSON_GetArrayItem(cs, 1), "verdict"), "approved");
	cr_assert_str_eq(fge_jstr_or_null(f.res, "review_state"), "approved");
	free(wk);
	fgw_release(&f);
}

Test(faults_proc, worker_killed_by_sigkill_fails_the_task)
{
	struct fgw f;

	fgw_init_runner(&f);
	fgw_runner(&f, FGW_RUN(.worker_sh = "kill -9 $$",
			       .reviewer_sh = "echo APPROVED"));
	fgw_assert_run(&f, 1, -1);
	cr_assert_eq(fge_jint(f.res, "exit_code"), 1);
	cr_assert_eq(cJSON_GetArraySize(fgw_cycles(&f)), 0);
	cr_assert_not_null(strstr(f.logtext, "killed by signal 9"), "log:\n%s", f.logtext);
	fgw_release(&f);
}

Test(faults_proc, worker_killed_on_a_retry_leaves_a_synthetic_cycle)
{
	struct fgw f;
	const cJSON *cs, *last;

	fgw_init_runner(&f);
	fgw_runner(&f, FGW_RUN(.worker_sh = "[ \"$FORGE_CYCLE\" = 1 ] && kill -9 $$\necho ok",
			       .reviewer_sh = "echo 'REJECTED: not yet'"));
	cs = fgw_assert_run(&f, 1, 2);
	last = cJSON_GetArrayItem(cs, 1);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(last, "synthetic")));
	cr_assert_not_null(strstr(fge_jstr_or_null(last, "feedback"), "killed by signal 9"), "%s", fge_jstr_or_null(last, "feedback"));
	cr_assert_str_eq(fge_jstr_or_null(f.res, "review_state"), "failed");
	fgw_release(&f);
}

/* Waits (bounded) until path exists. */
static void wait_for_file(const char *path)
{
	for (int i = 0; i < 3000 && !fgt_exists(path); i++)
		usleep(10000);
	cr_assert(fgt_exists(path), "'%s' never appeared", path);
}

/* Kills pid with SIGKILL and waits until it is gone (it may not be our child). */
static void kill_and_wait_gone(pid_t pid)
{
	char *path = fgt_fmt("/proc/%d/stat", (int)pid);

	kill(pid, SIGKILL);
	for (int i = 0; i < 3000; i++) {
		char *st = fgt_read(path, NULL);
		char *rp = st ? strrchr(st, ')') : NULL;
		int gone = !rp || rp[2] == 'Z' || rp[2] == 'X';

		free(st);
		if (gone)
			break;
		usleep(10000);
	}
	free(path);
}

Test(faults_proc, runner_killed_mid_run_then_restarted_reports_only_its_own_cycles)
{
	struct fgw f;
	char *wk, *rv1, *rv2, *pids_path, *pids;
	const cJSON *cs;
	pid_t runner;
	int rpid = 0, eppid = 0;
	char *old_run_id = NULL;

	fgw_init_runner(&f);
	wk = fgw_script(&f, "worker.sh", NULL, WORKER_OK);
	pids_path = fgt_fmt("%s/reviewer.pids", f.root);
	/* First run: cycle 1 rejected ("OLD"), then the second reviewer hangs
	 * after saying who it is. */
	rv1 = fgw_script(&f, "reviewer1.sh", NULL,
			"if [ \"$FORGE_CYCLE\" = 1 ]; then echo 'REJECTED: OLD feedback'; exit 0; fi\n"
			"echo \"$$ $PPID $FORGE_RUN_ID\" > \"$OUT/../reviewer.pids.tmp\"\n"
			"mv \"$OUT/../reviewer.pids.tmp\" \"$OUT/../reviewer.pids\"\nexec sleep 60");
	runner = fgw_runner_start(&f, FGW_RUN(.worker = wk, .reviewer = rv1));
	wait_for_file(pids_path);
	/* SIGKILL the runner, then what it left behind (its entrypoint and the
	 * hanging reviewer), as when the host loses the whole run. */
	kill(runner, SIGKILL);
	fgw_wait(&f, runner, 30);
	cr_assert(WIFSIGNALED(f.status) && WTERMSIG(f.status) == SIGKILL);
	pids = fgt_read(pids_path, NULL);
	old_run_id = calloc(1, 64);
	cr_assert_eq(sscanf(pids, "%d %d %63s", &rpid, &eppid, old_run_id), 3, "%s", pids);
	kill_and_wait_gone(eppid);
	kill_and_wait_gone(rpid);
	{
		char *stale = fgt_fmt("%s/review_cycle_1.json", f.step_dir);

		cr_assert(fgt_exists(stale), "the first run left no cycle 1");
		free(stale);
	}
	/* Second run on the same workspace: rejects once, then approves. */
	rv2 = fgw_script(&f, "reviewer2.sh", NULL,
			"if [ \"$FORGE_CYCLE\" = 1 ]; then echo 'REJECTED: NEW feedback'; else echo APPROVED; fi");
	fgw_runner(&f, FGW_RUN(.worker = wk, .reviewer = rv2));
	fgw_assert_run(&f, 0, -1);
	cr_assert_geq(fge_jint(f.res, "stale_files_cleared"), 1);
	cs = fgw_cycles(&f);
	cr_assert_eq(cJSON_GetArraySize(cs), 2, "log:\n%s", f.logtext);
	for (int i = 0; i < 2; i++) {
		const cJSON *c = cJSON_GetArrayItem(cs, i);

		cr_assert_eq(fge_jint(c, "cycle"), i + 1);
		cr_assert_str_eq(fge_jstr_or_null(c, "run_id"), fge_jstr_or_null(f.res, "run_id"));
		cr_assert_str_neq(fge_jstr_or_null(c, "run_id"), old_run_id);
	}
	cr_assert_not_null(strstr(fge_jstr_or_null(cJSON_GetArrayItem(cs, 0), "feedback"), "NEW"));
	cr_assert_null(strstr(f.logtext, "OLD feedback\""), "a stale cycle was reported:\n%s", f.logtext);
	cr_assert_eq(fge_count_events(f.events, "review_cycle", NULL, NULL), 2);
	cr_assert_str_eq(fge_jstr_or_null(f.res, "review_state"), "approved");
	free(old_run_id);
	free(pids);
	free(pids_path);
	free(wk);
	free(rv1);
	free(rv2);
	fgw_release(&f);
}

/* A reviewer whose feedback carries ESC sequences, a newline and a BEL. */
static const char ANSI_REVIEWER[] =
	"printf 'REJECTED: \\033[31mred\\033[0m alert\\007\\nsecond line \\033]0;title\\007\\n'";

static int has_byte(const char *s, size_t n, char c)
{
	return memchr(s, c, n) != NULL;
}

Test(faults_proc, ansi_feedback_escaped_in_text_log_intact_in_json_and_cycle_file)
{
	struct fgw f;
	char *wk, *rv;
	const char *fb;
	cJSON *cycle;
	const cJSON *ev;

	fgw_init_runner(&f);
	wk = fgw_script(&f, "worker.sh", NULL, WORKER_OK);
	rv = fgw_script(&f, "reviewer.sh", NULL, ANSI_REVIEWER);
	/* Text log: one line per event, no raw control byte anywhere. */
	fgw_runner(&f, FGW_RUN(.fmt = "text", .worker = wk, .reviewer = rv));
	fgw_assert_run(&f, 0, -1);
	cr_assert(!has_byte(f.logtext, strlen(f.logtext), '\033'), "raw ESC in the text log:\n%s", f.logtext);
	cr_assert(!has_byte(f.logtext, strlen(f.logtext), '\007'), "raw BEL in the text log");
	cr_assert(!has_byte(f.err, strlen(f.err), '\033'), "raw ESC on the runner's stderr");
	cr_assert_not_null(strstr(f.logtext, "\\x1b[31mred"), "log:\n%s", f.logtext);
	/* Every line starts with its timestamp: no value broke a line. */
	for (char *line = f.logtext; *line; line = strchr(line, '\n') + 1) {
		cr_assert(strlen(line) > 24 && line[4] == '-' && line[10] == 'T' && strchr(line, '\n'),
			  "a log line does not start with a timestamp:\n%s", f.logtext);
	}
	cr_assert_not_null(strstr(f.logtext, "alert\\x07\\nsecond line"), "log:\n%s", f.logtext);
	/* The cycle file keeps the feedback exactly. */
	cycle = fgw_step_json(&f, "review_cycle_1.json");
	fb = fge_jstr_or_null(cycle, "feedback");
	cr_assert(fb && strstr(fb, "\033[31mred\033[0m alert\007\nsecond line"), "feedback: %s", fb);
	cJSON_Delete(cycle);
	/* JSON log: the same bytes after decoding. */
	fgw_runner(&f, FGW_RUN(.worker = wk, .reviewer = rv));
	cr_assert_eq(fgw_code(&f), 0);
	cr_assert(!has_byte(f.logtext, strlen(f.logtext), '\033'), "raw ESC in the JSON log");
	ev = fge_find_event(f.events, "review_cycle", NULL, NULL);
	cr_assert_not_null(ev, "log:\n%s", f.logtext);
	cr_assert_not_null(strstr(fge_jstr_or_null(ev, "feedback"), "\033[31mred\033[0m alert\007\nsecond line"),
			   "json feedback: %s", fge_jstr_or_null(ev, "feedback"));
	free(wk);
	free(rv);
	fgw_release(&f);
}
