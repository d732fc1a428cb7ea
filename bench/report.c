/*
 * report.c - one list of rows feeds both the printed table and the JSON, so
 * they cannot disagree. Columns: ratio to the limit first, then absolute
 * numbers (forge-runner, the limit, the polling reference), then PASS/MISS.
 */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "forge/alloc.h"

enum status { ST_INFO, ST_PASS, ST_MISS, ST_FAIL };

struct row {
	char metric[48];
	char target[32];
	char ratio[16];
	char runner[24];
	char limit[24];
	char ref[24];
	enum status st;
	double value;          /* runner's number, in the row's unit */
	double limit_value;
	const char *unit;
};

#define MAX_ROWS 40

/* The watch's targets, as ratios to inotifywait measured in the same run. */
#define FB_TARGET_P50 1.5
#define FB_TARGET_CPU 2.5

static const char *const st_name[] = { "-", "PASS", "MISS", "FAIL" };

static void fmt_ms(char *out, size_t n, double v)
{
	if (isnan(v))
		snprintf(out, n, "n/a");
	else if (v >= 1000)
		snprintf(out, n, "%.2f s", v / 1000);
	else if (v >= 10)
		snprintf(out, n, "%.1f ms", v);
	else
		snprintf(out, n, "%.3f ms", v);
}

static void fmt_ratio(char *out, size_t n, double a, double b)
{
	if (isnan(a) || isnan(b) || b <= 0)
		snprintf(out, n, "n/a");
	else
		snprintf(out, n, "%.2fx", a / b);
}

static struct row *add(struct row *rows, int *n, const char *metric, const char *target)
{
	struct row *r = &rows[(*n)++];

	memset(r, 0, sizeof(*r));
	snprintf(r->metric, sizeof(r->metric), "%s", metric);
	snprintf(r->target, sizeof(r->target), "%s", target);
	snprintf(r->ratio, sizeof(r->ratio), "-");
	snprintf(r->runner, sizeof(r->runner), "-");
	snprintf(r->limit, sizeof(r->limit), "-");
	snprintf(r->ref, sizeof(r->ref), "-");
	r->value = NAN;
	r->limit_value = NAN;
	r->unit = "";
	return r;
}

static void cell_md(char *out, size_t n, const struct fb_detect *d)
{
	if (!d->ok)
		snprintf(out, n, "broken");
	else
		snprintf(out, n, "%d / %d", d->missed, d->dup);
}

/* missed/duplicated row: PASS only when every run worked and both are 0. */
static void row_md(struct row *rows, int *n, const char *metric, const struct fb_detect *run,
		   const struct fb_detect *lim, const struct fb_detect *ref)
{
	struct row *r = add(rows, n, metric, "0 / 0");

	cell_md(r->runner, sizeof(r->runner), run);
	if (lim)
		cell_md(r->limit, sizeof(r->limit), lim);
	if (ref)
		cell_md(r->ref, sizeof(r->ref), ref);
	r->value = run->missed + run->dup;
	r->unit = "files";
	r->st = !run->ok || run->missed || run->dup ? ST_FAIL : ST_PASS;
	if ((lim && (!lim->ok || lim->missed || lim->dup)) || (ref && (!ref->ok || ref->missed || ref->dup)))
		r->st = ST_FAIL;
}

static void row_lat(struct row *rows, int *n, const char *metric, const char *target,
		    double run, double lim, double ref, enum status st)
{
	struct row *r = add(rows, n, metric, target);

	fmt_ratio(r->ratio, sizeof(r->ratio), run, lim);
	fmt_ms(r->runner, sizeof(r->runner), run);
	fmt_ms(r->limit, sizeof(r->limit), lim);
	if (!isnan(ref))
		fmt_ms(r->ref, sizeof(r->ref), ref);
	r->value = run;
	r->limit_value = lim;
	r->unit = "ms";
	r->st = isnan(run) ? ST_FAIL : st;
}

static enum status pass(int ok)
{
	return ok ? ST_PASS : ST_MISS;
}

static void rows_latency(const struct fb_results *res, struct row *rows, int *n)
{
	const struct fb_detect *r = &res->lat_runner, *l = &res->lat_limit, *p = &res->lat_ref;
	double lim50 = res->have_limit ? l->p50_ms : NAN;
	int p50_ok = r->p50_ms < 1.0 && (!res->have_limit || r->p50_ms <= FB_TARGET_P50 * lim50);

	row_lat(rows, n, "latency p50", "<= 1.5x limit, < 1 ms", r->p50_ms, lim50, p->p50_ms,
		res->have_limit ? pass(p50_ok) : ST_MISS);
	row_lat(rows, n, "latency p99", "< 5 ms", r->p99_ms, res->have_limit ? l->p99_ms : NAN,
		p->p99_ms, pass(r->p99_ms < 5.0));
	row_lat(rows, n, "latency max", "", r->max_ms, res->have_limit ? l->max_ms : NAN,
		p->max_ms, ST_INFO);
	row_md(rows, n, "latency missed / dup", r, res->have_limit ? l : NULL, p);
}

static void rows_burst(const struct fb_results *res, struct row *rows, int *n, int files, int dirs)
{
	const struct fb_detect *r = &res->burst_runner, *l = res->have_limit ? &res->burst_limit : NULL;
	char metric[48];
	struct row *x;

	snprintf(metric, sizeof(metric), "burst %d in %d dirs missed / dup", files, dirs);
	row_md(rows, n, metric, r, l, NULL);
	x = add(rows, n, "burst files/s", "");
	fmt_ratio(x->ratio, sizeof(x->ratio), r->files_per_s, l ? l->files_per_s : NAN);
	snprintf(x->runner, sizeof(x->runner), "%.0f /s", r->files_per_s);
	if (l)
		snprintf(x->limit, sizeof(x->limit), "%.0f /s", l->files_per_s);
	x->value = r->files_per_s;
	x->limit_value = l ? l->files_per_s : NAN;
	x->unit = "files/s";
	x = add(rows, n, "burst watcher CPU/file", "<= 2.5x limit");
	fmt_ratio(x->ratio, sizeof(x->ratio), r->cpu_ms, l ? l->cpu_ms : NAN);
	x->st = l && l->ok && r->ok && r->cpu_ms <= FB_TARGET_CPU * l->cpu_ms ? ST_PASS : ST_MISS;
	snprintf(x->runner, sizeof(x->runner), "%.1f us", r->cpu_ms * 1000 / r->files);
	if (l)
		snprintf(x->limit, sizeof(x->limit), "%.1f us", l->cpu_ms * 1000 / l->files);
	x->value = r->cpu_ms * 1000 / r->files;
	x->limit_value = l ? l->cpu_ms * 1000 / l->files : NAN;
	x->unit = "us";
	x = add(rows, n, "burst writer time", "");
	fmt_ratio(x->ratio, sizeof(x->ratio), r->write_s, l ? l->write_s : NAN);
	fmt_ms(x->runner, sizeof(x->runner), r->write_s * 1000);
	if (l)
		fmt_ms(x->limit, sizeof(x->limit), l->write_s * 1000);
	x->value = r->write_s * 1000;
	x->limit_value = l ? l->write_s * 1000 : NAN;
	x->unit = "ms";
	x = add(rows, n, "burst total time", "");
	fmt_ratio(x->ratio, sizeof(x->ratio), r->total_s, l ? l->total_s : NAN);
	fmt_ms(x->runner, sizeof(x->runner), r->total_s * 1000);
	if (l)
		fmt_ms(x->limit, sizeof(x->limit), l->total_s * 1000);
	x->value = r->total_s * 1000;
	x->limit_value = l ? l->total_s * 1000 : NAN;
	x->unit = "ms";
}

static void row_rss(struct row *rows, int *n, const char *metric, const char *target,
		    long run_kib, long lim_kib, double max_mib)
{
	struct row *x = add(rows, n, metric, target);
	double run = (double)run_kib / 1024, lim = lim_kib > 0 ? (double)lim_kib / 1024 : NAN;

	fmt_ratio(x->ratio, sizeof(x->ratio), run, lim);
	snprintf(x->runner, sizeof(x->runner), run_kib > 0 ? "%.2f MiB" : "n/a", run);
	if (lim_kib > 0)
		snprintf(x->limit, sizeof(x->limit), "%.2f MiB", lim);
	x->value = run;
	x->limit_value = lim;
	x->unit = "MiB";
	x->st = run_kib <= 0 ? ST_FAIL : max_mib > 0 ? pass(run < max_mib) : ST_INFO;
}

static void rows_scale(const struct fb_cfg *cfg, const struct fb_results *res, struct row *rows, int *n)
{
	for (int i = 0; i < 3; i++) {
		const struct fb_detect *r = &res->scale_runner[i];
		const struct fb_detect *l = res->have_limit ? &res->scale_limit[i] : NULL;
		int d = cfg->scale_dirs[i];
		/* The targets name 1 and 1,000 directories; other counts are informative. */
		double max = d == 1 ? 8 : d == 1000 ? 32 : 0;
		char m[48];

		snprintf(m, sizeof(m), "scale %d dirs: RSS", d);
		row_rss(rows, n, m, d == 1 ? "< 8 MiB" : d == 1000 ? "< 32 MiB" : "", r->rss_kib,
			l ? l->rss_kib : 0, max);
		snprintf(m, sizeof(m), "scale %d dirs: p50", cfg->scale_dirs[i]);
		row_lat(rows, n, m, "< 1 ms", r->p50_ms, l ? l->p50_ms : NAN, NAN, pass(r->p50_ms < 1.0));
		snprintf(m, sizeof(m), "scale %d dirs: p99", cfg->scale_dirs[i]);
		row_lat(rows, n, m, "< 5 ms", r->p99_ms, l ? l->p99_ms : NAN, NAN, pass(r->p99_ms < 5.0));
		snprintf(m, sizeof(m), "scale %d dirs: missed / dup", cfg->scale_dirs[i]);
		row_md(rows, n, m, r, l, NULL);
	}
}

static void rows_footprint(const struct fb_results *res, struct row *rows, int *n)
{
	const struct fb_idle *i = &res->idle;
	struct row *x = add(rows, n, "idle watch CPU (schedstat)", "< 10 ms/min");

	fmt_ratio(x->ratio, sizeof(x->ratio), i->runner_cpu_ms_min, i->limit_ok ? i->limit_cpu_ms_min : NAN);
	snprintf(x->runner, sizeof(x->runner), "%.3f ms/min", i->runner_cpu_ms_min);
	if (i->limit_ok)
		snprintf(x->limit, sizeof(x->limit), "%.3f ms/min", i->limit_cpu_ms_min);
	x->value = i->runner_cpu_ms_min;
	x->limit_value = i->limit_ok ? i->limit_cpu_ms_min : NAN;
	x->unit = "ms/min";
	x->st = i->ok ? pass(i->runner_cpu_ms_min < 10.0) : ST_FAIL;
	x = add(rows, n, "idle watch CPU (utime+stime)", "< 10 ms/min");
	snprintf(x->runner, sizeof(x->runner), "%.0f ms/min", i->runner_tick_ms_min);
	if (i->limit_ok)
		snprintf(x->limit, sizeof(x->limit), "%.0f ms/min", i->limit_tick_ms_min);
	x->value = i->runner_tick_ms_min;
	x->unit = "ms/min";
	x->st = i->ok ? pass(i->runner_tick_ms_min < 10.0) : ST_FAIL;
	row_rss(rows, n, "idle watch RSS (1 dir)", "< 8 MiB", i->runner_rss_kib,
		i->limit_ok ? i->limit_rss_kib : 0, 8);
	row_rss(rows, n, "run RSS peak (1 dir)", "< 8 MiB", res->runrss.ok ? res->runrss.hwm_kib : 0, 0, 8);
	row_rss(rows, n, "run: entrypoint RSS peak", "", res->runrss.ep_hwm_kib, 0, 0);
	x = add(rows, n, "entrypoint overhead/cycle", "< 5 ms");
	fmt_ms(x->runner, sizeof(x->runner), res->ep.ok ? res->ep.per_cycle_ms : NAN);
	x->value = res->ep.ok ? res->ep.per_cycle_ms : NAN;
	x->unit = "ms";
	x->st = res->ep.ok ? pass(res->ep.per_cycle_ms < 5.0) : ST_FAIL;
}

static int build_rows(const struct fb_cfg *cfg, const struct fb_results *res, struct row *rows)
{
	int n = 0;

	if (res->ran_latency)
		rows_latency(res, rows, &n);
	if (res->ran_burst)
		rows_burst(res, rows, &n, cfg->burst_n, cfg->burst_dirs);
	if (res->ran_scale)
		rows_scale(cfg, res, rows, &n);
	if (res->ran_footprint)
		rows_footprint(res, rows, &n);
	return n;
}

static void cpu_model(char *out, size_t n)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(out, n, "unknown");
	while (f && fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !c)
			continue;
		c += strspn(c + 1, " ") + 1;
		c[strcspn(c, "\n")] = '\0';
		snprintf(out, n, "%s", c);
		break;
	}
	if (f)
		fclose(f);
}

static void loadavg(char *out, size_t n)
{
	FILE *f = fopen("/proc/loadavg", "r");

	snprintf(out, n, "unknown");
	if (f && fgets(out, (int)n, f))
		out[strcspn(out, "\n")] = '\0';
	if (f)
		fclose(f);
}

static void print_machine(const struct fb_cfg *cfg)
{
	char la[64];

	struct utsname u;
	char cpu[128];

	uname(&u);
	cpu_model(cpu, sizeof(cpu));
	printf("forge-bench%s: %ld cores, %s, Linux %s\n", cfg->smoke ? " (smoke)" : "",
	       sysconf(_SC_NPROCESSORS_ONLN), cpu, u.release);
	loadavg(la, sizeof(la));
	printf("load average at the end (other processes share the cores): %s\n", la);
	printf("limit: %s; reference: forge-runner watch --no-inotify --poll-interval %g\n\n",
	       cfg->inotifywait ? "inotifywait -m -e moved_to,close_write" : "inotifywait not found",
	       cfg->ref_interval);
}

static void print_row(const char *a, const char *b, const char *c, const char *d, const char *e,
		      const char *f, const char *g)
{
	printf("%-36s %-22s %-8s %-15s %-15s %-13s %s\n", a, b, c, d, e, f, g);
}

/* One target measured against the limit in this same run. */
static void print_target(const char *what, double run, double lim, double target)
{
	double ratio = run / lim;

	if (isnan(ratio) || lim <= 0)
		printf("  %-34s <= %.1fx inotifywait: not measured\n", what, target);
	else if (ratio <= target)
		printf("  %-34s <= %.1fx inotifywait: met (%.2fx)\n", what, target, ratio);
	else
		printf("  %-34s <= %.1fx inotifywait: missed (%.2fx, %.0f%% over)\n", what, target, ratio,
		       (ratio / target - 1) * 100);
}

static void print_targets(const struct fb_results *res)
{
	if (!res->have_limit || (!res->ran_latency && !res->ran_burst))
		return;
	printf("\ntargets (both against inotifywait in this run):\n");
	if (res->ran_latency)
		print_target("latency p50", res->lat_runner.p50_ms, res->lat_limit.p50_ms, FB_TARGET_P50);
	if (res->ran_burst)
		print_target("burst watcher CPU per file", res->burst_runner.cpu_ms / res->burst_runner.files,
			     res->burst_limit.cpu_ms / res->burst_limit.files, FB_TARGET_CPU);
}

int fb_report_table(const struct fb_cfg *cfg, const struct fb_results *res)
{
	struct row rows[MAX_ROWS];
	int n = build_rows(cfg, res, rows), miss = 0;

	print_machine(cfg);
	print_row("metric", "target", "ratio", "forge-runner", "inotifywait", "poll-ref", "status");
	print_row("------", "------", "-----", "------------", "-----------", "--------", "------");
	for (int i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		print_row(r->metric, r->target[0] ? r->target : "-", r->ratio, r->runner, r->limit,
		       r->ref, st_name[r->st]);
		miss += r->st == ST_MISS || r->st == ST_FAIL;
	}
	printf("\nratio = forge-runner / inotifywait (the kernel's own notification, the limit)\n");
	print_targets(res);
	fflush(stdout);
	return miss;
}

static cJSON *detect_json(const struct fb_detect *d)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddBoolToObject(o, "ok", d->ok);
	cJSON_AddNumberToObject(o, "files", d->files);
	cJSON_AddNumberToObject(o, "seen", d->seen);
	cJSON_AddNumberToObject(o, "missed", d->missed);
	cJSON_AddNumberToObject(o, "duplicated", d->dup);
	cJSON_AddNumberToObject(o, "sweep_only", d->sweep_only);
	/* cJSON writes NaN as null. */
	cJSON_AddNumberToObject(o, "p50_ms", d->p50_ms);
	cJSON_AddNumberToObject(o, "p99_ms", d->p99_ms);
	cJSON_AddNumberToObject(o, "max_ms", d->max_ms);
	cJSON_AddNumberToObject(o, "mean_ms", d->mean_ms);
	cJSON_AddNumberToObject(o, "total_s", d->total_s);
	cJSON_AddNumberToObject(o, "write_s", d->write_s);
	cJSON_AddNumberToObject(o, "files_per_s", d->files_per_s);
	cJSON_AddNumberToObject(o, "cpu_ms", d->cpu_ms);
	cJSON_AddNumberToObject(o, "rss_kib", (double)d->rss_kib);
	cJSON_AddNumberToObject(o, "hwm_kib", (double)d->hwm_kib);
	return o;
}

static cJSON *pair_json(const struct fb_detect *run, const struct fb_detect *lim, int have_limit)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddItemToObject(o, "forge_runner", detect_json(run));
	cJSON_AddItemToObject(o, "inotifywait", have_limit ? detect_json(lim) : cJSON_CreateNull());
	return o;
}

static cJSON *machine_json(const struct fb_cfg *cfg)
{
	cJSON *o = cJSON_CreateObject();
	struct utsname u;
	char cpu[128], ts[32];
	time_t now = time(NULL);

	uname(&u);
	cpu_model(cpu, sizeof(cpu));
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	cJSON_AddStringToObject(o, "date", ts);
	cJSON_AddNumberToObject(o, "nproc", (double)sysconf(_SC_NPROCESSORS_ONLN));
	cJSON_AddStringToObject(o, "cpu", cpu);
	cJSON_AddStringToObject(o, "kernel", u.release);
	cJSON_AddBoolToObject(o, "smoke", cfg->smoke);
	loadavg(cpu, sizeof(cpu));
	cJSON_AddStringToObject(o, "loadavg_end", cpu);
	return o;
}

static cJSON *config_json(const struct fb_cfg *cfg)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "seed", cfg->seed);
	cJSON_AddNumberToObject(o, "latency_files", cfg->lat_n);
	cJSON_AddNumberToObject(o, "reference_files", cfg->ref_n);
	cJSON_AddNumberToObject(o, "reference_poll_interval", cfg->ref_interval);
	cJSON_AddNumberToObject(o, "safety_net_poll_interval", cfg->net_interval);
	cJSON_AddNumberToObject(o, "burst_files", cfg->burst_n);
	cJSON_AddNumberToObject(o, "burst_dirs", cfg->burst_dirs);
	cJSON_AddNumberToObject(o, "scale_files", cfg->scale_n);
	cJSON_AddNumberToObject(o, "idle_seconds", cfg->idle_seconds);
	cJSON_AddNumberToObject(o, "entrypoint_cycles", cfg->ep_cycles);
	cJSON_AddNumberToObject(o, "entrypoint_reps", cfg->ep_reps);
	return o;
}

static cJSON *footprint_json(const struct fb_results *r)
{
	cJSON *o = cJSON_CreateObject(), *x;

	x = cJSON_AddObjectToObject(o, "idle");
	cJSON_AddNumberToObject(x, "seconds", r->idle.seconds);
	cJSON_AddNumberToObject(x, "runner_cpu_ms_per_min", r->idle.runner_cpu_ms_min);
	cJSON_AddNumberToObject(x, "runner_utime_stime_ms_per_min", r->idle.runner_tick_ms_min);
	cJSON_AddNumberToObject(x, "runner_rss_kib", (double)r->idle.runner_rss_kib);
	cJSON_AddNumberToObject(x, "limit_cpu_ms_per_min", r->idle.limit_ok ? r->idle.limit_cpu_ms_min : NAN);
	cJSON_AddNumberToObject(x, "limit_utime_stime_ms_per_min",
				r->idle.limit_ok ? r->idle.limit_tick_ms_min : NAN);
	cJSON_AddNumberToObject(x, "limit_rss_kib", r->idle.limit_ok ? (double)r->idle.limit_rss_kib : NAN);
	x = cJSON_AddObjectToObject(o, "run");
	cJSON_AddBoolToObject(x, "ok", r->runrss.ok);
	cJSON_AddNumberToObject(x, "exit_code", r->runrss.exit_code);
	cJSON_AddNumberToObject(x, "cycles", r->runrss.cycles);
	cJSON_AddNumberToObject(x, "runner_hwm_kib", (double)r->runrss.hwm_kib);
	cJSON_AddNumberToObject(x, "entrypoint_hwm_kib", (double)r->runrss.ep_hwm_kib);
	x = cJSON_AddObjectToObject(o, "entrypoint");
	cJSON_AddBoolToObject(x, "ok", r->ep.ok);
	cJSON_AddNumberToObject(x, "cycles", r->ep.cycles);
	cJSON_AddNumberToObject(x, "agent_spawns", r->ep.spawns);
	cJSON_AddNumberToObject(x, "reps", r->ep.reps);
	cJSON_AddNumberToObject(x, "run_ms", r->ep.ep_ms);
	cJSON_AddNumberToObject(x, "agents_alone_ms", r->ep.agents_ms);
	cJSON_AddNumberToObject(x, "overhead_ms_per_cycle", r->ep.per_cycle_ms);
	return o;
}

cJSON *fb_report_json(const struct fb_cfg *cfg, const struct fb_results *res)
{
	struct row rows[MAX_ROWS];
	int n = build_rows(cfg, res, rows);
	cJSON *o = cJSON_CreateObject(), *lat, *scale, *t;

	cJSON_AddItemToObject(o, "machine", machine_json(cfg));
	cJSON_AddItemToObject(o, "config", config_json(cfg));
	lat = pair_json(&res->lat_runner, &res->lat_limit, res->have_limit);
	cJSON_AddItemToObject(lat, "reference_poll", detect_json(&res->lat_ref));
	cJSON_AddItemToObject(o, "latency", lat);
	cJSON_AddItemToObject(o, "burst", pair_json(&res->burst_runner, &res->burst_limit, res->have_limit));
	scale = cJSON_AddArrayToObject(o, "scale");
	for (int i = 0; i < 3; i++) {
		cJSON *s = pair_json(&res->scale_runner[i], &res->scale_limit[i], res->have_limit);

		cJSON_AddNumberToObject(s, "dirs", cfg->scale_dirs[i]);
		cJSON_AddItemToArray(scale, s);
	}
	cJSON_AddItemToObject(o, "footprint", footprint_json(res));
	t = cJSON_AddArrayToObject(o, "table");
	for (int i = 0; i < n; i++) {
		cJSON *r = cJSON_CreateObject();

		cJSON_AddStringToObject(r, "metric", rows[i].metric);
		cJSON_AddStringToObject(r, "target", rows[i].target);
		cJSON_AddStringToObject(r, "ratio", rows[i].ratio);
		cJSON_AddStringToObject(r, "forge_runner", rows[i].runner);
		cJSON_AddStringToObject(r, "inotifywait", rows[i].limit);
		cJSON_AddStringToObject(r, "reference_poll", rows[i].ref);
		cJSON_AddNumberToObject(r, "value", rows[i].value);
		cJSON_AddNumberToObject(r, "limit_value", rows[i].limit_value);
		cJSON_AddStringToObject(r, "unit", rows[i].unit);
		cJSON_AddStringToObject(r, "status", st_name[rows[i].st]);
		cJSON_AddItemToArray(t, r);
	}
	return o;
}

int fb_report_failures(const struct fb_cfg *cfg, const struct fb_results *res)
{
	struct row rows[MAX_ROWS];
	int n = build_rows(cfg, res, rows), fails = 0;

	for (int i = 0; i < n; i++)
		fails += rows[i].st == ST_FAIL;
	return fails;
}
