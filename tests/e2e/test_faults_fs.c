/*
 * test_faults_fs.c - filesystem faults and hostile files in the shared
 * .forge directory, with the real binaries: a full disk while a cycle file
 * is written, a read-only .forge, the step directory replaced by a symlink,
 * a cycle file planted as a symlink, a 100 MB cycle file, a FIFO named like
 * a cycle file (docs/security.md lists the promised behaviour of each).
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

#include "forge/fsutil.h"

TestSuite(faults_fs, .timeout = 120);

/* A worker that succeeds, and one that first fills the step directory. */
static const char WORKER_OK[] = "echo hello >> greeting.txt\n";
static const char WORKER_FILLS_DISK[] =
	"echo hello >> greeting.txt\n"
	"cat /dev/zero > \"$PWD/.forge/impl/filler\" 2>/dev/null\n"
	"exit 0\n";

/* Runs forge-entrypoint run on the tree. */
static void run_entrypoint(struct fgw *f, struct fgt_proc *p, const char *worker, const char *reviewer)
{
	char *wenv = fgt_fmt("FORGE_WORKER_CMD=%s", worker);
	char *renv = fgt_fmt("FORGE_REVIEWER_CMD=%s", reviewer);
	const char *argv[] = { FG_ENTRYPOINT_BIN, "run", "--workspace", f->ws, "--skills-dir", f->skills,
			       "--task-file", f->task, NULL };
	const char *env[40];
	size_t n = 0;

	for (size_t i = 0; FGW_BASE_ENV[i]; i++)
		env[n++] = FGW_BASE_ENV[i];
	env[n++] = "FORGE_RUN_ID=fault-run";
	env[n++] = wenv;
	env[n++] = renv;
	env[n] = NULL;
	cr_assert_eq(fgt_run(p, argv, env, f->root, NULL, 90), 0);
	cr_assert(!p->timed_out, "forge-entrypoint hung; stderr:\n%s", p->err);
	free(wenv);
	free(renv);
}

/* No file of ours half-written: no atomic temp file left in dir. */
static void assert_no_temp_files(const char *dir)
{
	char *names = fgt_listing(dir), *save = NULL;

	for (char *n = strtok_r(names, "\n", &save); n; n = strtok_r(NULL, "\n", &save))
		cr_assert(!fg_is_atomic_tmp_name(n) && n[0] != '.', "leftover temporary file '%s' in %s", n, dir);
	free(names);
}

Test(faults_fs, disk_full_while_writing_a_cycle_file)
{
	struct fgw f;
	struct fgt_proc p;
	char *wk, *rv, *c1, *filler;

	fgw_init_runner(&f);
	fgt_private_mounts();
	cr_assert_eq(fg_mkdir_p(f.step_dir, 0755), 0);
	if (mount("tmpfs", f.step_dir, "tmpfs", 0, "size=64k") < 0)
		cr_skip("cannot mount a tmpfs on '%s': %s", f.step_dir, strerror(errno));
	wk = fgw_script(&f, "worker.sh", NULL, WORKER_FILLS_DISK);
	rv = fgw_script(&f, "reviewer.sh", NULL, "echo 'REJECTED: the greeting must be louder'");
	run_entrypoint(&f, &p, wk, rv);
	/* Documented: a cycle file that cannot be written fails the task (1). */
	fgt_assert_exit(&p, 1);
	cr_assert(strstr(p.err, "cannot write") && strstr(p.err, "review_cycle_1.json") &&
		  strstr(p.err, strerror(ENOSPC)), "no clear message; stderr:\n%s", p.err);
	c1 = fgt_fmt("%s/review_cycle_1.json", f.step_dir);
	cr_assert(!fgt_exists(c1), "a partial review_cycle_1.json was left");
	assert_no_temp_files(f.step_dir);
	filler = fgt_fmt("%s/filler", f.step_dir);
	cr_assert(fgt_exists(filler), "the worker did not fill the disk");
	free(filler);
	cr_assert_eq(umount2(f.step_dir, MNT_DETACH), 0);
	free(c1);
	free(wk);
	free(rv);
	fgw_release_run(&f, &p);
}

/* .forge bind-mounted read-only on itself. */
static void make_forge_readonly(struct fgw *f)
{
	char *forge = fgt_fmt("%s/.forge", f->ws);

	cr_assert_eq(fg_mkdir_p(forge, 0755), 0);
	fgt_private_mounts();
	if (mount(forge, forge, NULL, MS_BIND, NULL) < 0)
		cr_skip("cannot bind-mount '%s': %s", forge, strerror(errno));
	if (mount(NULL, forge, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
		cr_skip("cannot remount '%s' read-only: %s", forge, strerror(errno));
	free(forge);
}

static void undo_readonly(struct fgw *f)
{
	char *forge = fgt_fmt("%s/.forge", f->ws);

	cr_assert_eq(umount2(forge, MNT_DETACH), 0);
	free(forge);
}

Test(faults_fs, read_only_forge_entrypoint_cannot_create_the_step_dir)
{
	struct fgw f;
	struct fgt_proc p;
	char *wk, *rv;

	fgw_init_runner(&f);
	make_forge_readonly(&f);
	wk = fgw_script(&f, "worker.sh", NULL, WORKER_OK);
	rv = fgw_script(&f, "reviewer.sh", NULL, "echo APPROVED");
	run_entrypoint(&f, &p, wk, rv);
	fgt_assert_exit(&p, 2);
	cr_assert(strstr(p.err, "cannot write the cycle directory") && strstr(p.err, strerror(EROFS)), "stderr:\n%s",
		  p.err);
	cr_assert(!strstr(p.err, "running the worker"), "the worker ran; stderr:\n%s", p.err);
	undo_readonly(&f);
	free(wk);
	free(rv);
	fgw_release_run(&f, &p);
}

Test(faults_fs, read_only_forge_runner_fails_with_125)
{
	struct fgw f;
	char *wk;

	fgw_init_runner(&f);
	make_forge_readonly(&f);
	wk = fgw_script(&f, "worker.sh", NULL, WORKER_OK);
	fgw_runner(&f, FGW_RUN(.worker = wk));
	cr_assert_eq(fgw_code(&f), 125, "exit %d; stderr:\n%s", fgw_code(&f), f.err);
	cr_assert_eq(fge_count_events(f.events, "run_error", NULL, NULL), 1, "log:\n%s", f.logtext);
	cr_assert_not_null(strstr(fge_jstr_or_null(f.res, "error_message"), "cannot prepare"));
	cr_assert_not_null(strstr(fge_jstr_or_null(f.res, "error_message"), strerror(EROFS)));
	cr_assert_eq(fge_jint(f.res, "exit_code"), 125);
	cr_assert_eq(cJSON_GetArraySize(fgw_cycles(&f)), 0);
	undo_readonly(&f);
	free(wk);
	fgw_release(&f);
}

Test(faults_fs, read_only_step_dir_stops_the_run_before_the_worker)
{
	struct fgw f;
	char *wk;

	fgw_init_runner(&f);
	cr_assert_eq(fg_mkdir_p(f.step_dir, 0755), 0);
	make_forge_readonly(&f);
	wk = fgw_script(&f, "worker.sh", NULL, WORKER_OK);
	fgw_runner(&f, FGW_RUN(.worker = wk,
			       .reviewer_sh = "echo APPROVED"));
	/* The step dir exists and is empty: the runner starts the entrypoint,
	 * whose preflight finds it unwritable before the worker runs (exit 2,
	 * a configuration error), said in the log. */
	fgw_assert_run(&f, 2, -1);
	cr_assert_not_null(strstr(f.logtext, "cannot write the cycle directory"), "log:\n%s", f.logtext);
	cr_assert_not_null(strstr(f.logtext, strerror(EROFS)), "log:\n%s", f.logtext);
	cr_assert_null(strstr(f.logtext, "running the worker"), "log:\n%s", f.logtext);
	cr_assert_eq(cJSON_GetArraySize(fgw_cycles(&f)), 0);
	undo_readonly(&f);
	free(wk);
	fgw_release(&f);
}

/* A valid cycle for the given run id, written in dir (outside the step dir). */
static void plant_cycle(const char *path, int n, const char *run_id, const char *feedback)
{
	char *text = fgt_fmt("{\"cycle\":%d,\"max_cycles\":3,\"verdict\":\"approved\",\"feedback\":\"%s\","
			     "\"skill\":\"impl\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\","
			     "\"run_id\":\"%s\"}\n", n, feedback, run_id);

	fgt_write(path, text);
	free(text);
}

Test(faults_fs, step_dir_symlink_before_the_run_is_refused)
{
	struct fgw f;
	char *outside, *forge;
	char *wk;

	fgw_init_runner(&f);
	forge = fgt_fmt("%s/.forge", f.ws);
	outside = fgt_fmt("%s/review_cycle_1.json", f.out);
	plant_cycle(outside, 1, "any", "OUTSIDE");
	mkdir(forge, 0755);
	cr_assert_eq(symlink(f.out, f.step_dir), 0);
	wk = fgw_script(&f, "worker.sh", NULL, WORKER_OK);
	fgw_runner(&f, FGW_RUN(.worker = wk));
	fgw_assert_run(&f, 125, -1);
	cr_assert_not_null(strstr(fge_jstr_or_null(f.res, "error_message"), "cannot prepare"));
	/* The message names the component that was refused. */
	cr_assert_not_null(strstr(fge_jstr_or_null(f.res, "error_message"), "'impl' is a symbolic link"), "%s",
			   fge_jstr_or_null(f.res, "error_message"));
	/* The outside file was neither removed as stale nor reported. */
	cr_assert(fgt_exists(outside), "the runner removed a file outside the workspace");
	cr_assert_eq(fge_count_events(f.events, "review_cycle", NULL, NULL), 0);
	cr_assert_null(strstr(f.logtext, "OUTSIDE"));
	free(outside);
	free(forge);
	free(wk);
	fgw_release(&f);
}

Test(faults_fs, step_dir_replaced_by_a_symlink_mid_run_is_not_followed)
{
	struct fgw f;
	char *outside;
	const cJSON *cs;

	fgw_init_runner(&f);
	/* Cycle 1 in the step dir; then the dir becomes a link to OUT and
	 * cycle 2 appears behind it. */
	fgw_runner(&f, FGW_RUN(.ep_sh = "cyc 1 rejected\nwait_log '\"file\":\"review_cycle_1.json\"'\n"
					"mv \"$D\" \"$D.old\"\nln -s \"$OUT\" \"$D\"\n"
					"DIR=$OUT cyc 2 approved \"\" OUTSIDE\nexit 0\n"));
	cs = fgw_assert_run(&f, 0, 1);
	cr_assert_eq(fge_jint(cJSON_GetArrayItem(cs, 0), "cycle"), 1);
	cr_assert_eq(fge_count_events(f.events, "review_cycle", "feedback", "OUTSIDE"), 0, "log:\n%s", f.logtext);
	outside = fgt_fmt("%s/review_cycle_2.json", f.out);
	cr_assert(fgt_exists(outside), "the script did not write behind the link");
	free(outside);
	fgw_release(&f);
}

/*
 * The run succeeded with ncycles cycles, the last one numbered last, and the
 * bad file name was skipped and reported as cycle_corrupt with an error that
 * names why.
 */
static void assert_corrupt_skipped(const struct fgw *f, int ncycles, int last, const char *name,
				   const char *why)
{
	const cJSON *cs, *ev;

	cr_assert_eq(fgw_code(f), 0, "exit %d; log:\n%s", fgw_code(f), f->logtext);
	cs = fgw_cycles(f);
	cr_assert_eq(cJSON_GetArraySize(cs), ncycles, "log:\n%s", f->logtext);
	cr_assert_eq(fge_jint(cJSON_GetArrayItem(cs, ncycles - 1), "cycle"), last);
	ev = fge_find_event(f->events, "cycle_corrupt", "file", name);
	cr_assert_not_null(ev, "%s was not reported; log:\n%s", name, f->logtext);
	cr_assert_not_null(strstr(fge_jstr(ev, "error"), why), "%s", fge_jstr(ev, "error"));
}

Test(faults_fs, planted_symlink_cycle_file_is_never_read)
{
	struct fgw f;

	fgw_init_runner(&f);
	/* The target is a valid cycle of this very run: reading it would report it. */
	fgw_runner(&f, FGW_RUN(.ep_sh = "cyc 1 rejected\n"
					"DIR=$OUT cyc 9 approved \"\" PLANTED\n"
					"ln -s \"$OUT/review_cycle_9.json\" \"$D/review_cycle_9.json\"\n"
					"cyc 2 approved\nexit 0\n"));
	assert_corrupt_skipped(&f, 2, 2, "review_cycle_9.json", "symbolic link");
	cr_assert_null(strstr(f.logtext, "PLANTED"), "the planted target was read:\n%s", f.logtext);
	fgw_release(&f);
}

/* A run whose cycle 2 is made by the shell command make (cycles 1 and 3
 * are good): cycle 2 is reported corrupt with why and skipped. */
static void cycle_2_is_corrupt(struct fgw *f, const char *make, const char *why)
{
	char *ep = fgt_fmt("cyc 1 rejected\n%s\ncyc 3 approved\nexit 0\n", make);

	fgw_runner(f, FGW_RUN(.ep_sh = ep));
	assert_corrupt_skipped(f, 2, 3, "review_cycle_2.json", why);
	free(ep);
}

Test(faults_fs, hundred_megabyte_cycle_file_refused_with_bounded_memory)
{
	struct fgw f;

	fgw_init_runner(&f);
	/* A sparse 100 MB file: only a reader that loads it would need the memory. */
	cycle_2_is_corrupt(&f, "truncate -s 100000000 \"$D/review_cycle_2.json\"", "large");
	/* FG_CYCLE_MAX_BYTES is 8 MiB: far below what loading 100 MB would take. */
	cr_assert_lt(f.maxrss_kb, 48 * 1024, "peak RSS %ld KiB", f.maxrss_kb);
	fgw_release(&f);
}

Test(faults_fs, fifo_named_like_a_cycle_file_never_blocks)
{
	struct fgw f;

	fgw_init_runner(&f);
	/* Nobody ever opens the FIFO for writing: a blocking open would hang. */
	cycle_2_is_corrupt(&f, "mkfifo \"$D/review_cycle_2.json\"", "not a regular file");
	fgw_release(&f);
}

/* sweep DIR on a directory holding every hostile kind of entry at once. */
Test(faults_fs, sweep_skips_links_fifos_and_huge_files)
{
	struct fgw f;
	struct fgt_proc p;
	char *target, *good, *link, *fifo, *big;
	const char *argv[] = { FG_RUNNER_BIN, "sweep", NULL, NULL };
	cJSON *arr;
	int fd;

	fgw_init_runner(&f);
	target = fgt_fmt("%s/review_cycle_1.json", f.out);
	plant_cycle(target, 1, "x", "PLANTED");
	good = fgt_fmt("%s/review_cycle_4.json", f.step_dir);
	plant_cycle(good, 4, "x", "good");
	link = fgt_fmt("%s/review_cycle_1.json", f.step_dir);
	fifo = fgt_fmt("%s/review_cycle_2.json", f.step_dir);
	big = fgt_fmt("%s/review_cycle_3.json", f.step_dir);
	cr_assert_eq(symlink(target, link), 0);
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	fd = open(big, O_WRONLY | O_CREAT, 0644);
	cr_assert(fd >= 0 && ftruncate(fd, 100000000) == 0);
	close(fd);
	argv[2] = f.step_dir;
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 30), 0);
	cr_assert(!p.timed_out, "sweep hung");
	fgt_assert_exit(&p, 0);
	arr = cJSON_Parse(p.out);
	cr_assert(cJSON_IsArray(arr), "stdout:\n%s", p.out);
	cr_assert_eq(cJSON_GetArraySize(arr), 1, "stdout:\n%s", p.out);
	cr_assert_eq(fge_jint(cJSON_GetArrayItem(arr, 0), "cycle"), 4);
	cr_assert(strstr(p.err, "review_cycle_1.json") && strstr(p.err, "review_cycle_2.json") &&
		  strstr(p.err, "review_cycle_3.json"), "stderr:\n%s", p.err);
	cr_assert_null(strstr(p.out, "PLANTED"));
	cJSON_Delete(arr);
	free(target);
	free(good);
	free(link);
	free(fifo);
	free(big);
	fgw_release_run(&f, &p);
}
