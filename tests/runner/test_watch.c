/*
 * test_watch.c - the watcher on a real loop: identity tracking (a rewrite
 * with new content reported again, an identical one not), pending files
 * retried, corrupt files at the sweep, foreign run ids, a directory created
 * later and recreated, the watch-limit fallback, and uv_loop_close() == 0.
 * Also a file whose (inode, size, mtime) identity is unchanged but whose
 * content changed (an in-place rewrite of the same length within the
 * timestamp granularity, or with the mtime carried over as cp -p, tar and
 * rsync -t do) must still be reported when inotify says it was written.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "fgtest.h"
#include "watch.h"

TestSuite(watch, .timeout = 20);

struct seen {
	int n[64];
	char fb[64][32];
	enum rn_source src[64];
	int count;
};

static void on_cycle(struct rn_watch *w, const struct rn_cycle_report *r)
{
	struct seen *s = w->opts.data;

	cr_assert_lt(s->count, 64);
	s->n[s->count] = r->n;
	snprintf(s->fb[s->count], sizeof(s->fb[0]), "%s", r->cycle->j.feedback);
	s->src[s->count++] = r->source;
}

static char *cycle_json(int n, const char *fb, const char *run_id)
{
	return fgt_fmt("{\"cycle\":%d,\"max_cycles\":3,\"verdict\":\"rejected\",\"feedback\":\"%s\","
		       "\"skill\":\"s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"%s%s%s}\n",
		       n, fb, run_id ? ",\"run_id\":\"" : "", run_id ? run_id : "", run_id ? "\"" : "");
}

/* Writes a cycle atomically (temp + rename), as the entrypoint does. */
static void put(const char *dir, int n, const char *fb, const char *run_id)
{
	char *tmp = fgt_fmt("%s/.tmp", dir), *dst = fgt_fmt("%s/review_cycle_%d.json", dir, n);
	char *json = cycle_json(n, fb, run_id);

	fgt_write(tmp, json);
	cr_assert_eq(rename(tmp, dst), 0);
	free(tmp);
	free(dst);
	free(json);
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

/* Starts a watch of f->dir and of the NULL-terminated more (NULL: none)
 * with o, whose log, callback and data become the fixture's. */
static void fx_start_with(struct fixture *f, struct rn_watch_opts o, const char *const *more)
{
	o.log = &f->log;
	o.cb = on_cycle;
	o.data = &f->seen;
	memset(&f->seen, 0, sizeof(f->seen));
	f->logfp = open_memstream(&f->logbuf, &f->loglen);
	rn_log_init(&f->log, RN_LOG_TEXT, RN_LOG_INFO, f->logfp);
	cr_assert_eq(uv_loop_init(&f->loop), 0);
	rn_watch_init(&f->w, &f->loop, &o);
	cr_assert_eq(rn_watch_add(&f->w, f->dir), 0);
	for (size_t i = 0; more && more[i]; i++)
		cr_assert_eq(rn_watch_add(&f->w, more[i]), 0);
	cr_assert_eq(rn_watch_start(&f->w), 0);
}

static void fx_start(struct fixture *f, const char *run_id, size_t max_watches, int no_inotify)
{
	struct rn_watch_opts o = {
		.poll_interval = 600, .run_id = run_id, .max_watches = max_watches, .no_inotify = no_inotify,
	};

	fx_start_with(f, o, NULL);
}

/* Runs the loop until count reports arrived (or a bounded number of turns). */
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
}

static void fx_free(struct fixture *f)
{
	free(f->logbuf);
	fgt_rm_rf(f->root);
	free(f->root);
	free(f->dir);
}

static void fx_init(struct fixture *f, int create)
{
	char *forge;

	memset(f, 0, sizeof(*f));
	f->root = fgt_tmpdir();
	f->dir = fgt_fmt("%s/.forge/step", f->root);
	forge = fgt_fmt("%s/.forge", f->root);
	if (create)
		cr_assert_eq(mkdir(forge, 0755) || mkdir(f->dir, 0755), 0);
	free(forge);
}

/* The common opening: .forge/step made and watched, inotify on, no run id. */
static void fx_open(struct fixture *f)
{
	fx_init(f, 1);
	fx_start(f, NULL, 0, 0);
}

/* The common closing: the loop closed (uv_loop_close() == 0), all freed. */
static void fx_end(struct fixture *f)
{
	fx_close(f);
	fx_free(f);
}

Test(watch, rewrite_reported_per_distinct_content)
{
	struct fixture f;

	fx_open(&f);
	put(f.dir, 1, "a", NULL);
	fx_wait(&f, 1);
	put(f.dir, 1, "a", NULL);          /* identical content: nothing new */
	put(f.dir, 2, "b", NULL);
	fx_wait(&f, 2);
	put(f.dir, 1, "c", NULL);          /* new content, same name: reported again */
	fx_wait(&f, 3);
	rn_watch_drain(&f.w);
	rn_watch_sweep(&f.w);
	cr_assert_eq(f.seen.count, 3);
	cr_assert_str_eq(f.seen.fb[0], "a");
	cr_assert_str_eq(f.seen.fb[1], "b");
	cr_assert_str_eq(f.seen.fb[2], "c");
	for (int i = 0; i < 3; i++)
		cr_assert_eq(f.seen.src[i], RN_SOURCE_WATCH);
	fx_end(&f);
}

Test(watch, invalid_file_retried_then_corrupt_at_sweep)
{
	struct fixture f;
	char *p, *p2, *p01, *json;

	fx_open(&f);
	p = fgt_fmt("%s/review_cycle_1.json", f.dir);
	p2 = fgt_fmt("%s/review_cycle_2.json", f.dir);
	p01 = fgt_fmt("%s/review_cycle_01.json", f.dir);
	fgt_write(p, "{\"cycle\": 1,");           /* not JSON yet */
	fgt_write(p2, "garbage");
	fgt_write(p01, "ignored name");
	for (int i = 0; i < 50; i++) {
		uv_run(&f.loop, UV_RUN_NOWAIT);
		usleep(1000);
	}
	cr_assert_eq(f.seen.count, 0);
	json = cycle_json(1, "now valid", NULL);
	fgt_write(p, json);                         /* rewritten in place */
	fx_wait(&f, 1);
	cr_assert_eq(f.seen.count, 1);
	rn_watch_sweep(&f.w);
	rn_watch_sweep(&f.w);
	cr_assert_eq(f.seen.count, 1);
	fx_close(&f);
	cr_assert_not_null(strstr(f.logbuf, "cycle_corrupt"));
	cr_assert_null(strstr(strstr(f.logbuf, "cycle_corrupt") + 1, "cycle_corrupt"), "corrupt once");
	cr_assert_not_null(strstr(f.logbuf, "file=review_cycle_2.json"));
	free(p);
	free(p2);
	free(p01);
	free(json);
	fx_free(&f);
}

Test(watch, foreign_run_id_ignored_once)
{
	struct fixture f;

	fx_init(&f, 1);
	fx_start(&f, "mine", 0, 0);
	put(f.dir, 1, "x", "theirs");
	put(f.dir, 2, "y", "mine");
	put(f.dir, 3, "z", NULL);
	fx_wait(&f, 2);
	rn_watch_sweep(&f.w);
	cr_assert_eq(f.seen.count, 2);
	cr_assert_eq(f.seen.n[0], 2);
	cr_assert_eq(f.seen.n[1], 3);
	fx_close(&f);
	cr_assert_not_null(strstr(f.logbuf, "cycle_ignored"));
	cr_assert_null(strstr(strstr(f.logbuf, "cycle_ignored") + 1, "cycle_ignored"));
	fx_free(&f);
}

Test(watch, directory_created_later_and_recreated)
{
	struct fixture f;
	char *forge;

	fx_init(&f, 0);
	fx_start(&f, NULL, 0, 0);
	forge = fgt_fmt("%s/.forge", f.root);
	cr_assert_eq(mkdir(forge, 0755), 0);
	cr_assert_eq(mkdir(f.dir, 0755), 0);
	put(f.dir, 1, "a", NULL);
	fx_wait(&f, 1);
	cr_assert_eq(f.seen.count, 1);
	fgt_rm_rf(forge);
	cr_assert_eq(mkdir(forge, 0755), 0);
	cr_assert_eq(mkdir(f.dir, 0755), 0);
	put(f.dir, 2, "b", NULL);
	fx_wait(&f, 2);
	cr_assert_eq(f.seen.count, 2);
	cr_assert_eq(f.seen.src[0], RN_SOURCE_WATCH);
	cr_assert_eq(f.seen.src[1], RN_SOURCE_WATCH);
	free(forge);
	fx_end(&f);
}

Test(watch, watch_limit_falls_back_to_polling_with_a_warning)
{
	struct rn_watch_opts o = { .poll_interval = 0.01, .max_watches = 1 };
	struct fixture f;
	char *second;

	fx_init(&f, 1);
	/* One directory is within the limit of one watch. */
	fx_start(&f, NULL, 1, 0);
	fx_close(&f);
	free(f.logbuf);
	f.logbuf = NULL;
	/* A second directory is beyond it. */
	second = fgt_fmt("%s/other", f.root);
	cr_assert_eq(mkdir(second, 0755), 0);
	fx_start_with(&f, o, (const char *const[]){ second, NULL });
	put(second, 1, "polled", NULL);
	fx_wait(&f, 1);
	cr_assert_eq(f.seen.count, 1);
	cr_assert_eq(f.seen.src[0], RN_SOURCE_POLL);
	fx_close(&f);
	cr_assert_not_null(strstr(f.logbuf, "WARN watch_fallback"));
	free(second);
	fx_free(&f);
}

Test(watch, no_inotify_polls_and_loop_closes)
{
	struct fixture f;

	fx_init(&f, 1);
	fx_start(&f, NULL, 0, 1);
	put(f.dir, 1, "a", NULL);
	rn_watch_drain(&f.w);
	cr_assert_eq(f.seen.count, 0);
	rn_watch_sweep(&f.w);
	cr_assert_eq(f.seen.count, 1);
	cr_assert_eq(f.seen.src[0], RN_SOURCE_SWEEP);
	fx_end(&f);
}

/* Sets path's mtime to exactly mt (what cp -p does, and what a second
 * write within the same timestamp tick yields by itself). */
static void set_mtime(const char *path, struct timespec mt)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, mt };

	cr_assert_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

Test(watch, same_identity_rewrite_in_place_is_reported)
{
	struct fixture f;
	char *path, *a, *b;
	struct stat st1, st2;

	fx_open(&f);
	path = fgt_fmt("%s/review_cycle_1.json", f.dir);
	a = cycle_json(1, "first", NULL);
	b = cycle_json(1, "again", NULL);         /* same length, other content */
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
	fx_end(&f);
	free(path);
	free(a);
	free(b);
}

Test(watch, identical_rewrite_in_place_is_not_reported_again)
{
	struct fixture f;
	char *path, *a;

	fx_open(&f);
	path = fgt_fmt("%s/review_cycle_1.json", f.dir);
	a = cycle_json(1, "first", NULL);
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
	fx_end(&f);
	free(path);
	free(a);
}

/* Descriptors of this process open on path (readlink of /proc/self/fd/N). */
static int fds_on(const char *path)
{
	DIR *d = opendir("/proc/self/fd");
	char real[PATH_MAX], link[PATH_MAX + 1];
	int n = 0;

	cr_assert_not_null(d);
	cr_assert_not_null(realpath(path, real));
	for (struct dirent *de = readdir(d); de; de = readdir(d)) {
		char *p = fgt_fmt("/proc/self/fd/%s", de->d_name);
		ssize_t len = readlink(p, link, PATH_MAX);

		free(p);
		if (len > 0) {
			link[len] = '\0';
			n += !strcmp(link, real);
		}
	}
	closedir(d);
	return n;
}

/* One descriptor per watched directory, kept between events (not opened
 * per event) and released at close. */
Test(watch, one_descriptor_per_directory_kept_between_events)
{
	struct fixture f;

	fx_open(&f);
	cr_assert_eq(fds_on(f.dir), 1, "after start");
	for (int i = 1; i <= 3; i++) {
		put(f.dir, i, "x", NULL);
		fx_wait(&f, i);
		cr_assert_eq(f.seen.count, i);
		cr_assert_eq(fds_on(f.dir), 1, "after event %d", i);
	}
	fx_close(&f);
	cr_assert_eq(fds_on(f.dir), 0, "after close");
	fx_free(&f);
}

/* Watches the inotify descriptor fd of this process holds (its fdinfo has
 * one "inotify wd:" line per watch). */
static int watches_of(int fd)
{
	char *path = fgt_fmt("/proc/self/fdinfo/%d", fd), *text = fgt_read(path, NULL);
	int n = 0;

	cr_assert_not_null(text, "cannot read %s", path);
	for (const char *p = text; (p = strstr(p, "inotify wd:")); p++)
		n++;
	free(text);
	free(path);
	return n;
}

/* Moves .forge away (to atticN) and makes .forge/step again, times times,
 * running the loop once every turn_every moves (0: never). */
static void move_forge_away(struct fixture *f, int times, int turn_every)
{
	char *forge = fgt_fmt("%s/.forge", f->root);

	for (int i = 0; i < times; i++) {
		char *attic = fgt_fmt("%s/attic%d", f->root, i);

		cr_assert_eq(rename(forge, attic), 0);
		cr_assert_eq(mkdir(forge, 0755) || mkdir(f->dir, 0755), 0);
		free(attic);
		if (turn_every && i % turn_every == 0)
			uv_run(&f->loop, UV_RUN_NOWAIT);
	}
	free(forge);
}

/* `mv .forge attic; mkdir -p .forge/STEP` must not blind the inotify
 * source for the rest of the run (a watch left on the moved directory), nor
 * leave a watch behind per move. Here the step
 * directory's parent is moved away and recreated 300 times, the step
 * directory itself twice more: the watch follows (a file in the new one is
 * reported by inotify, not by the poll net, which is 600 s away), and no
 * more watches are held than there are components on the way: 3 for
 * base/.forge/step below a held base. */
Test(watch, moved_or_replaced_ancestors_are_followed_without_leaking_watches)
{
	struct fixture f;
	struct rn_watch_opts o = {
		.poll_interval = 600, .log = &f.log, .cb = on_cycle, .data = &f.seen,
	};
	char *attic;

	fx_init(&f, 1);
	memset(&f.seen, 0, sizeof(f.seen));
	f.logfp = open_memstream(&f.logbuf, &f.loglen);
	rn_log_init(&f.log, RN_LOG_TEXT, RN_LOG_INFO, f.logfp);
	cr_assert_eq(uv_loop_init(&f.loop), 0);
	rn_watch_init(&f.w, &f.loop, &o);
	cr_assert_eq(rn_watch_add_beneath(&f.w, f.root, ".forge/step"), 0);
	cr_assert_eq(rn_watch_start(&f.w), 0);
	cr_assert_leq(watches_of(f.w.ifd), 3, "root, .forge, step");
	put(f.dir, 1, "a", NULL);
	fx_wait(&f, 1);
	move_forge_away(&f, 300, 50);
	for (int i = 0; i < 2; i++) {
		attic = fgt_fmt("%s/attic_step%d", f.root, i);
		cr_assert_eq(rename(f.dir, attic), 0);
		cr_assert_eq(mkdir(f.dir, 0755), 0);
		free(attic);
	}
	put(f.dir, 2, "b", NULL);
	fx_wait(&f, 2);
	cr_assert_eq(f.seen.count, 2, "the file in the new directory was not reported");
	cr_assert_eq(f.seen.n[1], 2);
	cr_assert_eq(f.seen.src[1], RN_SOURCE_WATCH);
	rn_watch_drain(&f.w);
	cr_assert_leq(watches_of(f.w.ifd), 3, "%d watches after 302 moves", watches_of(f.w.ifd));
	/* And it still follows: one more file, by inotify. */
	put(f.dir, 3, "c", NULL);
	fx_wait(&f, 3);
	cr_assert_eq(f.seen.count, 3);
	cr_assert_eq(f.seen.src[2], RN_SOURCE_WATCH);
	fx_end(&f);
}

/* The same for `watch DIR`, whose base is DIR's parent named by path: the
 * parent itself moved away and made again is followed, with at most 2
 * watches (the parent and DIR). */
Test(watch, a_moved_base_named_by_path_is_followed)
{
	struct fixture f;

	fx_open(&f);
	cr_assert_leq(watches_of(f.w.ifd), 2, ".forge and step");
	move_forge_away(&f, 50, 0);
	put(f.dir, 1, "a", NULL);
	fx_wait(&f, 1);
	cr_assert_eq(f.seen.count, 1);
	cr_assert_eq(f.seen.src[0], RN_SOURCE_WATCH);
	rn_watch_drain(&f.w);
	cr_assert_leq(watches_of(f.w.ifd), 2, "%d watches", watches_of(f.w.ifd));
	fx_end(&f);
}
