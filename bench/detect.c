/*
 * detect.c - latency, burst and scale: a writer thread renames complete
 * cycle files into step directories while the main thread reads the
 * watcher's stdout and stamps every line the moment read() returns it.
 *
 * Latency of a file = (read() returned its line) - (just before rename()),
 * both CLOCK_MONOTONIC. The stamp is stored before rename() is called, so
 * the reader can never see a line before its stamp exists.
 */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forge/alloc.h"

struct track {
	enum fb_kind kind;
	int files;
	uint64_t *t0;            /* per file: just before rename(), 0 before */
	uint64_t *t1;            /* per file: first report */
	int *count;              /* reports per file */
	int *sweep;              /* first report came after SIGTERM */
	int stopping;
	int seen;
	uint64_t last_ns;        /* last first-report */
	uint64_t w_first, w_last; /* first and last rename */
};

struct writer {
	const struct fb_load *load;
	char **dirs;
	unsigned seed;
	uint64_t *t0;
	uint64_t first_ns, last_ns;
	atomic_int done;
	int err;
};

/* "review_cycle_<N>.json" (after the last '/') -> N, else 0. */
static int cycle_number(const char *s, size_t len)
{
	const char *base = memrchr(s, '/', len);
	static const char pre[] = "review_cycle_";
	long n = 0;
	size_t i;

	if (base) {
		len -= (size_t)(base + 1 - s);
		s = base + 1;
	}
	if (len < sizeof(pre) - 1 + 6 || memcmp(s, pre, sizeof(pre) - 1))
		return 0;
	for (i = sizeof(pre) - 1; i < len && s[i] >= '0' && s[i] <= '9' && n < 1000000; i++)
		n = n * 10 + (s[i] - '0');
	if (len - i != 5 || memcmp(s + i, ".json", 5))
		return 0;
	return (int)n;
}

/* The file a line reports, or 0 when the line is not a cycle report. */
static int line_file(enum fb_kind kind, const char *line, size_t len)
{
	const cJSON *ev, *file;
	cJSON *j;
	int n = 0;

	if (kind == FB_INOTIFYWAIT)
		return cycle_number(line, len);
	j = cJSON_ParseWithLength(line, len);
	ev = cJSON_GetObjectItemCaseSensitive(j, "event");
	file = cJSON_GetObjectItemCaseSensitive(j, "file");
	if (cJSON_IsString(ev) && !strcmp(ev->valuestring, "review_cycle") && cJSON_IsString(file))
		n = cycle_number(file->valuestring, strlen(file->valuestring));
	cJSON_Delete(j);
	return n;
}

static void on_line(void *data, char *line, size_t len, uint64_t t)
{
	struct track *tr = data;
	int n = line_file(tr->kind, line, len);

	if (n < 1 || n > tr->files + 1)
		return;
	n--;
	if (n == tr->files) {
		tr->count[n]++;   /* the readiness probe */
		return;
	}
	if (tr->count[n]++)
		return;
	tr->t1[n] = t;
	if (tr->stopping) {
		tr->sweep[n] = 1;
		return;
	}
	tr->seen++;
	tr->last_ns = t;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	const struct fb_load *l = w->load;

	for (int i = 0; i < l->files; i++) {
		unsigned gap = l->gap_max_us ? (unsigned)rand_r(&w->seed) % ((unsigned)l->gap_max_us + 1) : 0;
		int d = l->burst ? i % l->ndirs : l->ndirs > 1 ? rand_r(&w->seed) % l->ndirs : 0;

		if (gap)
			fb_sleep_ns((uint64_t)gap * 1000u);
		w->err = l->burst ? fb_rename_cycle(w->dirs[d], i + 1, &w->t0[i])
				  : fb_write_cycle(w->dirs[d], i + 1, l->files + 1, &w->t0[i]);
		if (w->err)
			break;
		if (!i)
			w->first_ns = w->t0[i];
		w->last_ns = w->t0[i];
	}
	atomic_store(&w->done, 1);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct_ms(const uint64_t *v, size_t n, double p)
{
	size_t k = (size_t)ceil(p * (double)n);

	if (!n)
		return NAN;
	return (double)v[k ? k - 1 : 0] / 1e6;
}

static void summarise(const struct track *tr, struct fb_detect *o)
{
	uint64_t *lat = fg_xcalloc((size_t)tr->files + 1, sizeof(*lat));
	size_t n = 0;
	double sum = 0;

	o->files = tr->files;
	for (int i = 0; i < tr->files; i++) {
		if (tr->count[i] > 1)
			o->dup += tr->count[i] - 1;
		if (!tr->count[i] || tr->sweep[i])
			o->missed++;
		if (tr->sweep[i])
			o->sweep_only++;
		if (tr->count[i] && !tr->sweep[i] && tr->t0[i]) {
			lat[n] = tr->t1[i] > tr->t0[i] ? tr->t1[i] - tr->t0[i] : 0;
			sum += (double)lat[n++];
		}
	}
	o->seen = (int)n;
	qsort(lat, n, sizeof(*lat), cmp_u64);
	o->p50_ms = pct_ms(lat, n, 0.50);
	o->p99_ms = pct_ms(lat, n, 0.99);
	o->max_ms = n ? (double)lat[n - 1] / 1e6 : NAN;
	o->mean_ms = n ? sum / (double)n / 1e6 : NAN;
	o->write_s = (double)(tr->w_last - tr->w_first) / 1e9;
	o->total_s = tr->last_ns > tr->w_first ? (double)(tr->last_ns - tr->w_first) / 1e9 : NAN;
	o->files_per_s = o->total_s > 0 ? (double)tr->files / o->total_s : NAN;
	free(lat);
}

/* argv of the watcher under test; strings owned by the returned vector's caller via v. */
static const char **watcher_argv(const struct fb_cfg *cfg, const struct fb_load *l, char **dirs,
				 char *interval, size_t isz)
{
	const char **v = fg_xcalloc((size_t)l->ndirs + 16, sizeof(*v));
	size_t k = 0;

	if (l->kind == FB_INOTIFYWAIT) {
		v[k++] = cfg->inotifywait;
		v[k++] = "-m";
		v[k++] = "-q";
		v[k++] = "-e";
		v[k++] = "moved_to,close_write";
		v[k++] = "--format";
		v[k++] = "%f";
	} else {
		snprintf(interval, isz, "%g", l->poll_interval);
		v[k++] = cfg->runner;
		v[k++] = "watch";
		v[k++] = "--log-format";
		v[k++] = "json";
		v[k++] = "--poll-interval";
		v[k++] = interval;
		if (l->kind == FB_RUNNER_POLL)
			v[k++] = "--no-inotify";
	}
	for (int i = 0; i < l->ndirs; i++)
		v[k++] = dirs[i];
	return v;
}

static char **make_dirs(const char *root, int n)
{
	char **dirs = fg_xcalloc((size_t)n + 1, sizeof(*dirs));

	for (int i = 0; i < n; i++) {
		dirs[i] = fg_xasprintf("%s/.forge/step_%04d", root, i);
		if (fb_mkdirs(dirs[i]) < 0) {
			fprintf(stderr, "forge-bench: cannot create '%s'\n", dirs[i]);
			return dirs;
		}
	}
	return dirs;
}

static void free_dirs(char **dirs, int n)
{
	for (int i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
}

/* Waits until the watcher is armed: inotify watches on every directory, or
 * for the polling design, the initial scan reporting a probe file. */
static int wait_ready(struct fb_child *c, const struct fb_load *l, char **dirs, struct track *tr)
{
	uint64_t deadline = fb_now_ns() + 20000000000ull;
	int r;

	if (l->kind != FB_RUNNER_POLL)
		return fb_wait_inotify_ready(c->pid, (const char *const *)dirs, (size_t)l->ndirs, 20000);
	/* The probe is file files+1: counted in tr but outside the results. */
	r = fb_write_cycle(dirs[0], l->files + 1, l->files + 1, NULL);
	while (!r && !tr->count[l->files] && fb_now_ns() < deadline) {
		r = fb_child_read(c, 50, on_line, tr);
		r = r < 0 ? r : 0;
	}
	return r ? r : tr->count[l->files] ? 0 : -ETIMEDOUT;
}

static int waited_out(const struct writer *w, uint64_t wait_ns)
{
	return atomic_load(&w->done) && fb_now_ns() > w->last_ns + wait_ns;
}

/* Reads until every file was reported, or the writer is done and wait_ns passed. */
static int read_until_seen(struct fb_child *c, struct writer *w, struct track *tr, uint64_t wait_ns)
{
	int r = 0;

	while (tr->seen < tr->files && !waited_out(w, wait_ns) && !w->err) {
		r = fb_child_read(c, 20, on_line, tr);
		if (r < 0)
			return r;
	}
	return 0;
}

static void drain_for(struct fb_child *c, struct track *tr, uint64_t ns)
{
	uint64_t end = fb_now_ns() + ns;

	while (fb_now_ns() < end && fb_child_read(c, 20, on_line, tr) >= 0)
		;
}

static void track_init(struct track *tr, enum fb_kind kind, int files)
{
	memset(tr, 0, sizeof(*tr));
	tr->kind = kind;
	tr->files = files;
	/* One extra slot for the readiness probe. */
	tr->t0 = fg_xcalloc((size_t)files + 1, sizeof(*tr->t0));
	tr->t1 = fg_xcalloc((size_t)files + 1, sizeof(*tr->t1));
	tr->count = fg_xcalloc((size_t)files + 1, sizeof(*tr->count));
	tr->sweep = fg_xcalloc((size_t)files + 1, sizeof(*tr->sweep));
}

static void track_release(struct track *tr)
{
	free(tr->t0);
	free(tr->t1);
	free(tr->count);
	free(tr->sweep);
}

/* How long to keep waiting for stragglers, and for duplicates once all are seen. */
static void waits(const struct fb_load *l, uint64_t *wait_ns, uint64_t *grace_ns)
{
	double net = l->kind == FB_INOTIFYWAIT ? 0 : l->poll_interval;

	*wait_ns = (uint64_t)((2.0 * net + 2.0) * 1e9);
	/* One full rescan period: a rescan that re-reports would show up in it. */
	*grace_ns = (uint64_t)((net + 0.3) * 1e9);
}

static int measure(const struct fb_cfg *cfg, const struct fb_load *l, char **dirs,
		   struct fb_child *c, struct track *tr, struct fb_detect *o)
{
	struct writer w = { .load = l, .dirs = dirs, .seed = cfg->seed, .t0 = tr->t0 };
	uint64_t wait_ns, grace_ns;
	int64_t cpu0;
	pthread_t th;
	int r;

	r = wait_ready(c, l, dirs, tr);
	if (r) {
		fprintf(stderr, "forge-bench: %s: watcher not ready: %s\n", o->label, strerror(-r));
		return r;
	}
	fb_sleep_ns(100000000);
	drain_for(c, tr, 0);
	waits(l, &wait_ns, &grace_ns);
	cpu0 = fb_proc_cpu_sched_ns(c->pid);
	atomic_init(&w.done, 0);
	r = pthread_create(&th, NULL, writer_main, &w);
	if (r)
		return -r;
	r = read_until_seen(c, &w, tr, wait_ns);
	pthread_join(th, NULL);
	if (!r && w.err)
		r = w.err;
	if (r) {
		fprintf(stderr, "forge-bench: %s: %s\n", o->label, strerror(-r));
		return r;
	}
	drain_for(c, tr, grace_ns);
	o->cpu_ms = (double)(fb_proc_cpu_sched_ns(c->pid) - cpu0) / 1e6;
	o->rss_kib = fb_proc_status_kib(c->pid, "VmRSS");
	o->hwm_kib = fb_proc_status_kib(c->pid, "VmHWM");
	tr->stopping = 1;
	tr->w_first = w.first_ns;
	tr->w_last = w.last_ns;
	return 0;
}

int fb_detect_run(const struct fb_cfg *cfg, const struct fb_load *l, struct fb_detect *o)
{
	char *root = fg_xasprintf("%s/detect-%d-%d-%d", cfg->workdir, (int)l->kind, l->files, l->ndirs);
	char *errpath = fg_xasprintf("%s.stderr", root);
	char **dirs = make_dirs(root, l->ndirs);
	char interval[32];
	const char **argv = watcher_argv(cfg, l, dirs, interval, sizeof(interval));
	struct fb_child c;
	struct track tr;
	int r, st;

	track_init(&tr, l->kind, l->files);
	r = 0;
	/* Burst: creating 10,000 inodes costs ext4 far more than renaming them
	 * (and depends on what was deleted before), so the contents are written
	 * before the watcher starts and only the renames are timed. */
	for (int i = 0; l->burst && i < l->files && !r; i++)
		r = fb_write_cycle_temp(dirs[i % l->ndirs], i + 1, l->files + 1);
	c.pid = -1;
	if (!r)
		r = fb_child_start(&c, (const char *const *)argv, NULL, errpath);
	if (!r)
		r = measure(cfg, l, dirs, &c, &tr, o);
	if (c.pid > 0) {
		st = fb_child_stop(&c, 8000, on_line, &tr);
		/* Summarised after the exit sweep: it may report files the live
		 * watch never did (missed) or report seen ones again (duplicates). */
		if (!r)
			summarise(&tr, o);
		if (!r && l->kind != FB_INOTIFYWAIT && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			fprintf(stderr, "forge-bench: %s: watcher exit status %d\n", o->label, st);
			r = -ECHILD;
		}
	}
	o->ok = !r;
	if (r || cfg->verbose)
		fb_dump_tail(errpath, o->label);
	track_release(&tr);
	free(argv);
	free_dirs(dirs, l->ndirs);
	fb_rmtree(root);
	unlink(errpath);
	free(errpath);
	free(root);
	return r;
}
