/*
 * test_review_watch.c - review findings on the watcher: a file whose
 * (inode, size, mtime) identity is unchanged but whose content changed
 * (an in-place rewrite of the same length within the filesystem's timestamp
 * granularity, or with the mtime carried over as cp -p, tar and rsync -t do;
 * inode reuse after delete and create) must still be reported when inotify
 * says the file was written.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "fgtest.h"
#include "watch.h"

TestSuite(review_watch, .timeout = 20);

struct seen {
	char fb[16][32];
	int count;
};

static void on_cycle(struct rn_watch *w, const struct rn_cycle_report *r)
{
	struct seen *s = w->opts.data;

	cr_assert_lt(s->count, 16);
	snprintf(s->fb[s->count++], sizeof(s->fb[0]), "%s", r->cycle->feedback);
}

static char *cycle_json(int n, const char *fb)
{
	return fgt_fmt("{\"cycle\":%d,\"max_cycles\":3,\"verdict\":\"rejected\",\"feedback\":\"%s\","
		       "\"skill\":\"s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}\n",
		       n, fb);
}

struct fixture {
	uv_loop_t loop;
	struct rn_watch w;
	struct rn_log log;
	char *logbuf;
	size_t loglen;
	FILE *logfp;
	struct seen seen;
	char *root, *dir;
};

static void fx_open(struct fixture *f)
{
	struct rn_watch_opts o = {
		.poll_interval = 600, .log = &f->log, .cb = on_cycle, .data = &f->seen,
	};

	memset(f, 0, sizeof(*f));
	f->root = fgt_tmpdir();
	f->dir = fgt_fmt("%s/step", f->root);
	cr_assert_eq(mkdir(f->dir, 0755), 0);
	f->logfp = open_memstream(&f->logbuf, &f->loglen);
	rn_log_init(&f->log, RN_LOG_TEXT, RN_LOG_INFO, f->logfp);
	cr_assert_eq(uv_loop_init(&f->loop), 0);
	rn_watch_init(&f->w, &f->loop, &o);
	cr_assert_eq(rn_watch_add(&f->w, f->dir), 0);
	cr_assert_eq(rn_watch_start(&f->w), 0);
}

static void fx_wait(struct fixture *f, int count)
{
	for (int i = 0; i < 2000 && f->seen.count < count; i++) {
		uv_run(&f->loop, UV_RUN_NOWAIT);
		usleep(1000);
	}
}

static void fx_close(struct fixture *f)
{
	rn_watch_close(&f->w, NULL);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	cr_assert_eq(uv_loop_close(&f->loop), 0);
	fclose(f->logfp);
	free(f->logbuf);
	fgt_rm_rf(f->root);
	free(f->root);
	free(f->dir);
}

/* Sets path's mtime to exactly mt (what cp -p does, and what a second
 * write within the same timestamp tick yields by itself). */
static void set_mtime(const char *path, struct timespec mt)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, mt };

	cr_assert_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

Test(review_watch, same_identity_rewrite_in_place_is_reported)
{
	struct fixture f;
	char *path, *a, *b;
	struct stat st1, st2;

	fx_open(&f);
	path = fgt_fmt("%s/review_cycle_1.json", f.dir);
	a = cycle_json(1, "first");
	b = cycle_json(1, "again");         /* same length, other content */
	cr_assert_eq(strlen(a), strlen(b));
	fgt_write(path, a);
	fx_wait(&f, 1);
	cr_assert_eq(f.seen.count, 1);
	cr_assert_eq(stat(path, &st1), 0);
	fgt_write(path, b);                 /* in place: same inode, same size */
	set_mtime(path, st1.st_mtim);
	cr_assert_eq(stat(path, &st2), 0);
	cr_assert_eq(st1.st_ino, st2.st_ino);
	cr_assert_eq(st1.st_size, st2.st_size);
	fx_wait(&f, 2);
	rn_watch_drain(&f.w);
	cr_assert_eq(f.seen.count, 2, "the rewrite with new content was not reported");
	cr_assert_str_eq(f.seen.fb[1], "again");
	/* The sweep does not report it a third time. */
	rn_watch_sweep(&f.w);
	cr_assert_eq(f.seen.count, 2);
	fx_close(&f);
	free(path);
	free(a);
	free(b);
}

Test(review_watch, identical_rewrite_in_place_is_not_reported_again)
{
	struct fixture f;
	char *path, *a;

	fx_open(&f);
	path = fgt_fmt("%s/review_cycle_1.json", f.dir);
	a = cycle_json(1, "first");
	fgt_write(path, a);
	fx_wait(&f, 1);
	fgt_write(path, a);
	fgt_write(path, a);
	for (int i = 0; i < 30; i++) {
		uv_run(&f.loop, UV_RUN_NOWAIT);
		usleep(1000);
	}
	rn_watch_drain(&f.w);
	rn_watch_sweep(&f.w);
	cr_assert_eq(f.seen.count, 1);
	fx_close(&f);
	free(path);
	free(a);
}
