/*
 * test_isolation_reach.c - what an agent in the sandbox
 * can no longer do to the entrypoint, with the real binaries and stand-in
 * sh agents (same uid as the entrypoint, as in a container):
 *   - block a write: a directory planted at the temp name an agent could
 *     predict (".review_summary.json.tmp.<its $PPID>") or under the
 *     summary's own name (reproduction 4); a summary that cannot be written
 *     at all is an error with exit 1, never a warning with exit 0.
 * (docs/security.md, items 3 to 6, lists the outcome of each.)
 */
#include <limits.h>
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "forge/num.h"
#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"
#include "forge/fsutil.h"

TestSuite(isolation_reach, .timeout = 120);

/* The run id the entrypoint runs are given. */
#define REACH_RUN ((const char *const[]){ "FORGE_RUN_ID=reach-run", NULL })

/* The summary an agent would plant: approved, with the run id it is given. */
#define PLANT_SUMMARY                                                                              \
	"printf '{\"state\":\"approved\",\"cycles\":0,\"max_cycles\":1,\"step\":\"impl\","          \
	"\"skill\":\"impl\",\"task_key\":\"ABC-12\",\"run_id\":\"%s\"}\\n' \"$FORGE_RUN_ID\" "       \
	"> .forge/impl/review_summary.json\n"

static const char REVIEWER_REJECTS[] = "cat > /dev/null\necho 'REJECTED: the greeting must be louder'\n";

/* The state in the step directory's review_summary.json (owned), or NULL. */
static char *summary_state(const struct fgw *f)
{
	char *path = fgt_fmt("%s/review_summary.json", f->step_dir);
	char *text = fgt_read(path, NULL);
	cJSON *o = text ? cJSON_Parse(text) : NULL;
	const cJSON *st = cJSON_GetObjectItem(o, "state");
	char *out = cJSON_IsString(st) ? strdup(st->valuestring) : NULL;

	cJSON_Delete(o);
	free(text);
	free(path);
	return out;
}

/* Reproduction 4: the worker plants an approved summary and a directory at
 * the entrypoint's old, predictable temp name; every cycle is rejected. */
Test(isolation_reach, a_directory_at_the_predictable_temp_name_cannot_block_the_summary)
{
	struct fgw f;
	char *wk, *rv, *state;

	fgw_init_runner(&f);
	wk = fgw_script(&f, "worker.sh", NULL,
		       "echo hello >> greeting.txt\n"
		       "mkdir -p \".forge/impl/.review_summary.json.tmp.$PPID/x\"\n" PLANT_SUMMARY);
	rv = fgw_script(&f, "reviewer.sh", NULL, REVIEWER_REJECTS);
	fgw_runner(&f, FGW_RUN(.worker = wk, .reviewer = rv));
	cr_assert_not_null(f.res, "no result; stderr:\n%s\nlog:\n%s", f.err, f.logtext);
	state = summary_state(&f);
	cr_assert_not_null(state, "no summary in the step directory; log:\n%s", f.logtext);
	/* The file is the entrypoint's own: the review was never approved. */
	cr_assert_str_neq(state, "approved", "log:\n%s", f.logtext);
	cr_assert_str_eq(fge_jstr(f.res, "review_state"), state, "log:\n%s", f.logtext);
	cr_assert_null(strstr(f.logtext, "cannot write"), "log:\n%s", f.logtext);
	free(state);
	free(wk);
	free(rv);
	fgw_release(&f);
}

/* A directory under review_summary.json itself (holding a symlink to a
 * file outside the workspace) is cleared away without following the link. */
Test(isolation_reach, a_directory_under_the_summary_name_is_cleared_without_following_links)
{
	struct fgw f;
	struct fgt_proc p;
	char *wk, *rv, *state, *victim, *body, *got;

	fgw_init_runner(&f);
	victim = fgt_fmt("%s/precious", f.out);
	fgt_write(victim, "keep me");
	wk = fgw_script(&f, "worker.sh", NULL, "echo hello >> greeting.txt\n");
	body = fgt_fmt("cat > /dev/null\n"
		       "mkdir -p .forge/impl/review_summary.json/a/b\n"
		       "ln -s '%s' .forge/impl/review_summary.json/a/link\n"
		       "ln -s '%s' .forge/impl/review_summary.json/a/b/dirlink\n"
		       "echo APPROVED\n", victim, f.out);
	rv = fgw_script(&f, "reviewer.sh", NULL, body);
	fgw_entrypoint(&f, &p, wk, rv, REACH_RUN);
	fgt_assert_exit(&p, 0);
	state = summary_state(&f);
	cr_assert_not_null(state, "no summary written; stderr:\n%s", p.err);
	cr_assert_str_eq(state, "approved");
	got = fgt_read(victim, NULL);
	cr_assert_str_eq(got, "keep me");
	free(got);
	free(state);
	free(body);
	free(victim);
	free(wk);
	free(rv);
	fgw_release_run(&f, &p);
}

/* The step directory runs out of inodes after the last cycle file: the
 * summary cannot be written. Documented: an error, exit 1, state failed in
 * the summary frame; the approval is not reported as one. */
Test(isolation_reach, a_summary_that_cannot_be_written_is_an_error_with_exit_1)
{
	struct fgw f;
	struct fgt_proc p;
	char *wk, *rv;

	fgw_init_runner(&f);
	fgt_private_mounts();
	cr_assert_eq(fg_mkdir_p(f.step_dir, 0755), 0);
	if (mount("tmpfs", f.step_dir, "tmpfs", 0, "size=1m,nr_inodes=64") < 0)
		cr_skip("cannot mount a tmpfs on '%s': %s", f.step_dir, strerror(errno));
	wk = fgw_script(&f, "worker.sh", NULL, "echo hello >> greeting.txt\n");
	/* Every inode but one taken: the cycle file gets it, the summary none. */
	rv = fgw_script(&f, "reviewer.sh", NULL,
		       "cat > /dev/null\n"
		       "i=0; while true > .forge/impl/fill$i 2>/dev/null; do i=$((i+1)); done\n"
		       "rm -f .forge/impl/fill0\n"
		       "echo APPROVED\n");
	fgw_entrypoint(&f, &p, wk, rv, REACH_RUN);
	fgt_assert_exit(&p, 1);
	cr_assert(strstr(p.err, "error: cannot write") && strstr(p.err, "review_summary.json") &&
		  strstr(p.err, strerror(ENOSPC)), "no clear error; stderr:\n%s", p.err);
	fgt_assert_has(p.err, "\"type\":\"review_summary\"", "\"state\":\"failed\"",
		       "review failed after 1 cycle(s): exit 1");
	cr_assert_eq(umount2(f.step_dir, MNT_DETACH), 0);
	free(wk);
	free(rv);
	fgw_release_run(&f, &p);
}

/* ---- item 3: signals and /proc of the entrypoint ---------------------- */

/* Reproduction 3's signal: the worker, then a process of its own in a
 * session of its own, send SIGTERM, SIGINT and SIGHUP to the entrypoint
 * ($PPID); it logs each (signal_ignored, with the sender's pid), goes on
 * and the review approves. */
Test(isolation_reach, stop_signals_from_the_agents_processes_are_logged_and_ignored)
{
	struct fgw f;
	char *wk, *pid;
	const cJSON *e;

	/* The defence for kernels before Landlock ABI 6: there the signal
	 * reaches the entrypoint, which ignores it. From ABI 6 the agent's box
	 * refuses it outright (test_isolation_box.c). */
	setenv("FORGE_TEST_LANDLOCK_ABI", "5", 1);
	fgw_init_runner(&f);
	wk = fgw_script(&f, "worker.sh", NULL,
		       "ep=$PPID\n"
		       "echo $$ > \"$OUT/worker_pid\"\n"
		       "kill -TERM $ep; kill -INT $ep; kill -HUP $ep\n"
		       /* A signal still pending merges with the next of its
		        * kind: the second SIGTERM waits until the first is read. */
		       "i=0; while [ \"$(grep -c signal_ignored \"$LOG\")\" -lt 3 ]; do\n"
		       "  i=$((i+1)); [ $i -gt 400 ] && exit 99; sleep 0.05; done\n"
		       "setsid sh -c \"kill -TERM $ep; sleep 1\" &\n"
		       "wait\n"
		       "echo hello >> greeting.txt\n");
	fgw_runner(&f, FGW_RUN(.worker = wk,
			       .reviewer_sh = "cat > /dev/null\necho APPROVED\n"));
	fgw_assert_run(&f, 0, -1);
	cr_assert_str_eq(fge_jstr(f.res, "review_state"), "approved");
	pid = fge_read_in(f.out, "worker_pid");
	pid[strcspn(pid, "\n")] = '\0';
	cr_assert_geq(fge_count_events(f.events, "signal_ignored", NULL, NULL), 4, "log:\n%s", f.logtext);
	for (const char *const *sig = (const char *const[]){ "TERM", "INT", "HUP", NULL }; *sig; sig++) {
		e = fge_find_event(f.events, "signal_ignored", "signal", *sig);
		cr_assert_not_null(e, "no signal_ignored for %s; log:\n%s", *sig, f.logtext);
		long want;

		cr_assert_eq(fg_parse_long(pid, 1, LONG_MAX, &want), 0, "pid file: '%s'", pid);
		cr_assert_eq(fge_jint(e, "sender_pid"), want, "log:\n%s", f.logtext);
	}
	cr_assert_eq(fge_count_events(f.events, "signal_ignored", "signal", "TERM"), 2, "log:\n%s", f.logtext);
	free(pid);
	free(wk);
	fgw_release(&f);
}

/* After ignoring an agent's SIGTERM the runner's own SIGTERM still stops
 * the run at once (the runner is the entrypoint's parent, not one of its
 * descendants). */
Test(isolation_reach, the_runners_sigterm_still_stops_it_after_an_agents_was_ignored)
{
	struct fgw f;
	char *marker;
	pid_t pid;

	/* The defence for kernels before Landlock ABI 6: there the signal
	 * reaches the entrypoint, which ignores it. From ABI 6 the agent's box
	 * refuses it outright (test_isolation_box.c). */
	setenv("FORGE_TEST_LANDLOCK_ABI", "5", 1);
	fgw_init_runner(&f);
	marker = fgt_fmt("%s/ignored", f.out);
	/* It waits until the runner logged the ignored signal, then sleeps. */
	pid = fgw_runner_start(&f, FGW_RUN(.worker_sh = "kill -TERM $PPID\n"
							"i=0; while ! grep -q signal_ignored \"$LOG\" 2>/dev/null; do\n"
							"  i=$((i+1)); [ $i -gt 300 ] && exit 99; sleep 0.1; done\n"
							": > \"$OUT/ignored\"\n"
							"sleep 30\n",
					   .reviewer_sh = "cat > /dev/null\necho APPROVED\n"));
	for (int i = 0; i < 3000 && !fgt_exists(marker); i++)
		usleep(10000);
	cr_assert(fgt_exists(marker), "the worker never saw its signal ignored");
	cr_assert_eq(kill(pid, SIGTERM), 0);
	fgw_wait(&f, pid, 20);
	fgw_load(&f, 1);
	fgw_assert_run(&f, 143, -1);
	cr_assert_eq(fge_count_events(f.events, "signal_ignored", NULL, NULL), 1, "log:\n%s", f.logtext);
	free(marker);
	fgw_release(&f);
}

/*
 * What a same-uid agent can read of process $1: prints one word per probe
 * that worked (environ, fd, fd2, mem, ptrace), "none" when none did.
 * strace attaches with PTRACE_SEIZE: refused at once, or it stays until
 * timeout ends it (124).
 */
#define PROBE_FN                                                                                   \
	"probe() {\n"                                                                              \
	"  got=''\n"                                                                               \
	"  cat /proc/$1/environ > /dev/null 2>&1 && got=\"$got environ\"\n"                         \
	"  ls /proc/$1/fd > /dev/null 2>&1 && got=\"$got fd\"\n"                                   \
	"  readlink /proc/$1/fd/2 > /dev/null 2>&1 && got=\"$got fd2\"\n"                          \
	"  (exec 3< /proc/$1/mem) 2> /dev/null && got=\"$got mem\"\n"                               \
	"  if command -v strace > /dev/null; then\n"                                              \
	"    timeout 1 strace -p $1 -o /dev/null > /dev/null 2>&1; [ $? = 124 ] && got=\"$got ptrace\"\n" \
	"  fi\n"                                                                                   \
	"  echo \"${got:- none}\"\n"                                                               \
	"}\n"

/* What each agent who[] found probing its parent (OUT/<target>_<who>):
 * nothing; and probing a process of its own (OUT/own_<who>, the control):
 * everything but ptrace, which a pid namespace's policy may refuse. */
static void assert_probes(const struct fgw *f, const struct fgt_proc *p, const char *target,
			  const char *const *who)
{
	for (; *who; who++) {
		char *name = fgt_fmt("%s_%s", target, *who), *got = fge_read_in(f->out, name);

		cr_assert_not_null(got, "%s did not probe; stderr:\n%s", *who, p->err);
		cr_assert_str_eq(got, " none\n", "%s reached its parent:%s", *who, got);
		free(got);
		free(name);
		name = fgt_fmt("own_%s", *who);
		got = fge_read_in(f->out, name);
		cr_assert(got && strstr(got, "environ fd fd2 mem"), "control of %s: %s", *who, got);
		free(got);
		free(name);
	}
}

/* Item 3: the worker and the reviewer probe the entrypoint ($PPID) and,
 * as a control, a process of their own: the entrypoint is out of reach. */
Test(isolation_reach, an_agent_cannot_open_the_entrypoints_proc_files_nor_ptrace_it)
{
	struct fgw f;
	struct fgt_proc p;
	char *wk, *rv, *body, *got;

	fgw_init_runner(&f);
	/* The agents are the scripts themselves: their $PPID is the entrypoint. */
	body = fgt_fmt(PROBE_FN "probe $PPID > \"%s/ep_$WHO\"\n"
		       "sleep 5 & probe $! > \"%s/own_$WHO\"; kill $!\n", f.out, f.out);
	got = fgt_fmt("WHO=worker\n%s", body);
	wk = fgw_script(&f, "worker.sh", NULL, got);
	free(got);
	got = fgt_fmt("cat > /dev/null\nWHO=reviewer\n%secho APPROVED\n", body);
	rv = fgw_script(&f, "reviewer.sh", NULL, got);
	free(got);
	fgw_entrypoint_as(&f, &p, fgw_as_nobody(&f), wk, rv, REACH_RUN);
	fgt_assert_exit(&p, 0);
	assert_probes(&f, &p, "ep", (const char *const[]){ "worker", "reviewer", NULL });
	free(body);
	free(wk);
	free(rv);
	fgw_release_run(&f, &p);
}

/* ---- items 4 and 5: nothing outlives its turn, helpers supervised ----- */

/* A panel of two roles; reviewer.sh behaves by $FORGE_REVIEWER_ROLE. */
static void panel_setup(struct fgw *f)
{
	fge_write_in(f->skills, "default/impl/review.md",
		     "---\nmax_retries: 1\nreviewers:\n  - role: correctness\n    instructions: correctness.md\n"
		     "  - role: security\n    instructions: security.md\n---\nCheck the work.\n");
	fge_write_in(f->skills, "default/impl/correctness.md", "Check the logic.\n");
	fge_write_in(f->skills, "default/impl/security.md", "Check the input handling.\n");
}

/* 1 when the pid in pidtext is gone (no /proc entry, or a zombie). */
static int pid_gone(const char *pidtext)
{
	return !fgt_alive((pid_t)strtol(pidtext, NULL, 10));
}

/* The review of role in the result's last cycle (borrowed). */
static const cJSON *last_review(const struct fgw *f, const char *role)
{
	const cJSON *cycles = fgw_cycles(f);
	const cJSON *last = cJSON_GetArrayItem(cycles, cJSON_GetArraySize(cycles) - 1);
	const cJSON *rv = fge_find_by(cJSON_GetObjectItem(last, "reviews"), "role", role);

	cr_assert_not_null(rv, "no review of '%s' in the last cycle; log:\n%s", role, f->logtext);
	return rv;
}

/* A leftover that waits for the entrypoint's summary, then rewrites it as
 * approved (reproduction 5's bind-mount case), and records that it did. */
#define SUMMARY_REWRITER                                                                           \
	"setsid sh -c 'echo $$ > \"$OUT/leftover_pid\"; i=0\n"                                     \
	"  while [ ! -f .forge/impl/review_summary.json ]; do\n"                                 \
	"    i=$((i+1)); [ $i -gt 400 ] && exit 0; sleep 0.05; done; sleep 0.5\n"                \
	"  printf \"{\\\"state\\\":\\\"approved\\\",\\\"cycles\\\":1,\\\"max_cycles\\\":1,"            \
	"\\\"step\\\":\\\"impl\\\",\\\"skill\\\":\\\"impl\\\",\\\"task_key\\\":\\\"ABC-12\\\","           \
	"\\\"run_id\\\":\\\"$FORGE_RUN_ID\\\"}\\n\" > .forge/impl/review_summary.json\n"               \
	"  : > \"$OUT/leftover_wrote\"' < /dev/null > /dev/null 2>&1 &\n"                          \
	"while [ ! -s \"$OUT/leftover_pid\" ]; do sleep 0.05; done\n"

/* Right after the run: whether the leftover (bounded to about 20 s of
 * life itself) is still there; it is killed here either way, so a failing
 * test leaks nothing. A second later it must not have acted. */
static void assert_leftover_gone(struct fgw *f)
{
	char *pid = fge_read_in(f->out, "leftover_pid");
	int gone;

	cr_assert_not_null(pid, "the agent never started its leftover; log:\n%s", f->logtext);
	gone = pid_gone(pid);
	if (!gone)
		kill((pid_t)strtol(pid, NULL, 10), SIGKILL);
	usleep(1500000);
	cr_assert(gone, "the leftover %s outlived the run", pid);
	cr_assert_not(fge_exists_in(f->out, "leftover_wrote"), "the leftover rewrote the summary");
	free(pid);
}

/* A panel run whose security role's agent starts a leftover that rewrites
 * the summary and then sends SIG to its helper (its parent); the leftover
 * is gone after the run. The defence for kernels before Landlock ABI 6:
 * there the signal reaches the entrypoint, which ignores it. From ABI 6
 * the agent's box refuses it outright (test_isolation_box.c). */
static void helper_attack(struct fgw *f, const char *sig, const char *const *args)
{
	char *body = fgt_fmt("cat > /dev/null\n"
			     "if [ \"$FORGE_REVIEWER_ROLE\" = security ]; then\n" SUMMARY_REWRITER
			     "  kill -%s $PPID; sleep 30; fi\n"
			     "echo APPROVED\n", sig);
	char *wk, *rv;

	setenv("FORGE_TEST_LANDLOCK_ABI", "5", 1);
	fgw_init_runner(f);
	panel_setup(f);
	wk = fgw_script(f, "worker.sh", NULL, "echo hello >> greeting.txt\n");
	rv = fgw_script(f, "reviewer.sh", NULL, body);
	fgw_runner(f, FGW_RUN(.args = args, .worker = wk, .reviewer = rv));
	assert_leftover_gone(f);
	free(body);
	free(wk);
	free(rv);
}

/* Reproduction 5: a role's agent starts a leftover and SIGKILLs its helper. */
Test(isolation_reach, a_role_that_kills_its_helper_fails_and_its_leftovers_die)
{
	struct fgw f;
	char *state;

	helper_attack(&f, "KILL", NULL);
	cr_assert_not_null(f.res, "no result; log:\n%s", f.logtext);
	cr_assert_str_neq(fge_jstr(f.res, "review_state"), "approved", "log:\n%s", f.logtext);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(last_review(&f, "security"), "failed")));
	cr_assert_not_null(strstr(fge_jstr(last_review(&f, "security"), "feedback"),
				  "its helper process was killed by signal 9"), "log:\n%s", f.logtext);
	cr_assert_not_null(fge_find_event(f.events, "role_failed", "role", "security"), "log:\n%s", f.logtext);
	state = summary_state(&f);
	cr_assert_str_eq(state, fge_jstr(f.res, "review_state"));
	free(state);
	fgw_release(&f);
}

/* Reproduction 6: a role's agent SIGSTOPs its helper, which enforced its
 * timeouts: the entrypoint sees it stopped, kills it, fails the role. */
Test(isolation_reach, a_role_that_stops_its_helper_fails_at_once_instead_of_hanging)
{
	struct fgw f;
	const char *extra[] = { "--timeout", "40", NULL };

	helper_attack(&f, "STOP", extra);
	cr_assert_neq(fgw_code(&f), 124, "the review hung until --timeout; log:\n%s", f.logtext);
	cr_assert_str_neq(fge_jstr(f.res, "review_state"), "approved", "log:\n%s", f.logtext);
	cr_assert_not_null(strstr(fge_jstr(last_review(&f, "security"), "feedback"),
				  "its helper process was stopped by signal 19"), "log:\n%s", f.logtext);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(last_review(&f, "correctness"), "failed")) == 0);
	fgw_release(&f);
}

/* Item 4: the worker leaves a daemon (its own session, its parent gone);
 * the reviewer finds it gone before it starts, and nothing of the run is
 * left afterwards. With a panel, the same for a role's leftover. */
Test(isolation_reach, nothing_of_the_workers_turn_runs_beside_the_reviewer)
{
	struct fgw f;
	char *got;

	fgw_init_runner(&f);
	fgw_runner(&f, FGW_RUN(.worker_sh = "echo hello >> greeting.txt\n"
					    "sh -c 'setsid sh -c \"echo \\$\\$ > $OUT/daemon; exec sleep 60\" &' < /dev/null > /dev/null 2>&1\n"
					    "while [ ! -s \"$OUT/daemon\" ]; do sleep 0.05; done\n",
			       .reviewer_sh = "cat > /dev/null\n"
					      "d=$(cat \"$OUT/daemon\")\n"
					      "if [ -d /proc/$d ] && ! grep -q '^State:.*Z' /proc/$d/status; then echo alive > \"$OUT/seen\";"
					      " else echo gone > \"$OUT/seen\"; fi\n"
					      "echo APPROVED\n"));
	cr_assert_eq(fgw_code(&f), 0, "log:\n%s", f.logtext);
	got = fge_read_in(f.out, "seen");
	cr_assert_str_eq(got, "gone\n", "the worker's daemon ran beside the reviewer");
	free(got);
	got = fge_read_in(f.out, "daemon");
	cr_assert(pid_gone(got));
	free(got);
	fgw_release(&f);
}

/* Item 3 for a panel: each role's agent probes its helper ($PPID). */
Test(isolation_reach, a_panel_role_cannot_open_its_helpers_proc_files_nor_ptrace_it)
{
	struct fgw f;
	struct fgt_proc p;
	char *rv, *body;

	fgw_init_runner(&f);
	panel_setup(&f);
	body = fgt_fmt("cat > /dev/null\n" PROBE_FN "probe $PPID > \"%s/helper_$FORGE_REVIEWER_ROLE\"\n"
		       "sleep 5 & probe $! > \"%s/own_$FORGE_REVIEWER_ROLE\"; kill $!\necho APPROVED\n",
		       f.out, f.out);
	rv = fgw_script(&f, "reviewer.sh", NULL, body);
	fgw_entrypoint_as(&f, &p, fgw_as_nobody(&f), "true", rv, REACH_RUN);
	fgt_assert_exit(&p, 0);
	assert_probes(&f, &p, "helper", (const char *const[]){ "correctness", "security", NULL });
	free(body);
	free(rv);
	fgw_release_run(&f, &p);
}
