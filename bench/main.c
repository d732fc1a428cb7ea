/*
 * main.c - forge-bench: options, the order of the benchmarks, the table and
 * the JSON file. Exit 0 when every run worked and no file was missed or
 * duplicated (timing targets only print PASS/MISS), 1 otherwise, 2 on a
 * usage error.
 */
#include "bench.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/num.h"
#include "forge/opts.h"

#ifndef FB_RUNNER_PATH
#define FB_RUNNER_PATH "forge-runner"
#endif
#ifndef FB_ENTRYPOINT_PATH
#define FB_ENTRYPOINT_PATH "forge-entrypoint"
#endif

enum { O_RUNNER = 1, O_ENTRYPOINT, O_INOTIFYWAIT, O_JSON, O_SMOKE, O_ONLY, O_SEED, O_WORKDIR,
       O_VERBOSE, O_HELP };

static const struct fg_opt options[] = {
	{ O_RUNNER, "runner", 0, "PATH", NULL, "forge-runner binary (default: the one built with this)" },
	{ O_ENTRYPOINT, "entrypoint", 0, "PATH", NULL, "forge-entrypoint binary" },
	{ O_INOTIFYWAIT, "inotifywait", 0, "PATH", NULL, "the limit (default: from PATH; 'none' skips)" },
	{ O_JSON, "json", 0, "FILE", NULL, "also write the results as JSON to FILE" },
	{ O_SMOKE, "smoke", 0, NULL, NULL, "a few seconds: small N, short waits, --poll-interval 0.2" },
	{ O_ONLY, "only", 0, "LIST", NULL, "comma list of latency,burst,scale,footprint" },
	{ O_SEED, "seed", 0, "N", NULL, "random gaps and directories (default 1)" },
	{ O_WORKDIR, "workdir", 0, "DIR", "TMPDIR", "where scratch step directories go (default /tmp)" },
	{ O_VERBOSE, "verbose", 'v', NULL, NULL, "show the watchers' standard error" },
	{ O_HELP, "help", 'h', NULL, NULL, "show help" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

struct args {
	struct fb_cfg cfg;
	const char *json;
	const char *only;
	const char *workroot;
};

static void set_sizes(struct fb_cfg *c)
{
	static const int full_dirs[3] = { 1, 100, 1000 }, smoke_dirs[3] = { 1, 10, 100 };

	c->lat_n = c->smoke ? 100 : 1000;
	c->ref_n = c->smoke ? 5 : 12;
	c->ref_interval = c->smoke ? 0.2 : 5;
	c->net_interval = c->smoke ? 0.2 : 5;
	/* The smoke run spreads its burst too, so the spreading is tested. */
	c->burst_n = c->smoke ? 2000 : 10000;
	c->burst_dirs = (c->burst_n + FB_DIR_MAX_FILES - 1) / FB_DIR_MAX_FILES;
	c->scale_n = c->smoke ? 50 : 500;
	memcpy(c->scale_dirs, c->smoke ? smoke_dirs : full_dirs, sizeof(c->scale_dirs));
	c->idle_seconds = c->smoke ? 1 : 60;
	c->ep_cycles = c->smoke ? 5 : 20;
	c->ep_reps = c->smoke ? 1 : 9;
}

static const char *find_in_path(const char *name)
{
	static char found[4096];
	const char *path = getenv("PATH");

	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(found, sizeof(found), "%.*s/%s", (int)n, path, name);
		if (n && !access(found, X_OK))
			return found;
		path += n + (path[n] == ':');
	}
	return NULL;
}

static int usage(const char *msg, const char *what)
{
	fprintf(stderr, "forge-bench: %s '%s'\ntry 'forge-bench --help'\n", msg, what);
	return 2;
}

static int help(void)
{
	struct fg_buf b;

	fg_buf_init(&b, 64 * 1024);
	fg_opts_help(options, &b);
	printf("usage: forge-bench [options]\n\noptions:\n%s", fg_buf_str(&b));
	fg_buf_release(&b);
	return 0;
}

static int apply(struct args *a, int id, const char *v)
{
	long n;

	switch (id) {
	case O_RUNNER: a->cfg.runner = v; break;
	case O_ENTRYPOINT: a->cfg.entrypoint = v; break;
	case O_INOTIFYWAIT: a->cfg.inotifywait = strcmp(v, "none") ? v : NULL; break;
	case O_JSON: a->json = v; break;
	case O_SMOKE: a->cfg.smoke = 1; break;
	case O_ONLY: a->only = v; break;
	case O_WORKDIR: a->workroot = v; break;
	case O_VERBOSE: a->cfg.verbose = 1; break;
	case O_SEED:
		if (fg_parse_long(v, 0, 0x7fffffff, &n))
			return usage("invalid --seed", v);
		a->cfg.seed = (unsigned)n;
		break;
	default:
		return usage("unexpected argument", v ? v : "");
	}
	return 0;
}

/* 1 (run it), 0 (skip), or 3 for --help. */
static int parse(int argc, char **argv, struct args *a)
{
	struct fg_opts_iter it;
	int r;

	memset(a, 0, sizeof(*a));
	a->cfg.runner = FB_RUNNER_PATH;
	a->cfg.entrypoint = FB_ENTRYPOINT_PATH;
	a->cfg.inotifywait = find_in_path("inotifywait");
	a->cfg.seed = 1;
	a->workroot = getenv("TMPDIR");
	fg_opts_init(&it, options, argc, argv, 1);
	while (fg_opts_each(&it)) {
		if (it.id == O_HELP)
			return 3;
		r = apply(a, it.id, it.value);
		if (r)
			return r;
	}
	if (fg_opts_failed(&it)) {
		fprintf(stderr, "forge-bench: %s\ntry 'forge-bench --help'\n", it.err);
		return 2;
	}
	set_sizes(&a->cfg);
	return 0;
}

static int wanted(const struct args *a, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = a->only; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		if (strcspn(p, ",") == n && !strncmp(p, name, n))
			return 1;
	}
	return !a->only;
}

static void detect(const struct fb_cfg *cfg, struct fb_load l, const char *label, struct fb_detect *o)
{
	fprintf(stderr, "forge-bench: %s: %d files in %d dir(s)\n", label, l.files, l.ndirs);
	o->label = label;
	fb_detect_run(cfg, &l, o);
}

static void run_latency(const struct fb_cfg *c, struct fb_results *r)
{
	int gap = c->smoke ? 4000 : 20000;

	detect(c, (struct fb_load){ FB_RUNNER, c->lat_n, 1, gap, c->net_interval, 0 },
	       "latency forge-runner", &r->lat_runner);
	if (r->have_limit)
		detect(c, (struct fb_load){ FB_INOTIFYWAIT, c->lat_n, 1, gap, 0, 0 },
		       "latency inotifywait", &r->lat_limit);
	/* Gaps spread over a whole poll period sample every phase of the timer. */
	detect(c, (struct fb_load){ FB_RUNNER_POLL, c->ref_n, 1, (int)(c->ref_interval * 1e6), c->ref_interval, 0 },
	       "latency polling reference", &r->lat_ref);
}

static void run_burst(const struct fb_cfg *c, struct fb_results *r)
{
	detect(c, (struct fb_load){ FB_RUNNER, c->burst_n, c->burst_dirs, 0, c->net_interval, 1 },
	       "burst forge-runner", &r->burst_runner);
	if (r->have_limit)
		detect(c, (struct fb_load){ FB_INOTIFYWAIT, c->burst_n, c->burst_dirs, 0, 0, 1 },
		       "burst inotifywait", &r->burst_limit);
}

static void run_scale(const struct fb_cfg *c, struct fb_results *r)
{
	static char lr[3][48], ll[3][48];
	int gap = c->smoke ? 4000 : 20000;

	for (int i = 0; i < 3; i++) {
		snprintf(lr[i], sizeof(lr[i]), "scale %d dirs forge-runner", c->scale_dirs[i]);
		snprintf(ll[i], sizeof(ll[i]), "scale %d dirs inotifywait", c->scale_dirs[i]);
		detect(c, (struct fb_load){ FB_RUNNER, c->scale_n, c->scale_dirs[i], gap, c->net_interval, 0 },
		       lr[i], &r->scale_runner[i]);
		if (r->have_limit)
			detect(c, (struct fb_load){ FB_INOTIFYWAIT, c->scale_n, c->scale_dirs[i], gap, 0, 0 },
			       ll[i], &r->scale_limit[i]);
	}
}

static void run_footprint(const struct fb_cfg *c, struct fb_results *r)
{
	fprintf(stderr, "forge-bench: idle watch for %g s\n", c->idle_seconds);
	fb_idle_run(c, &r->idle);
	fprintf(stderr, "forge-bench: forge-runner run, %d instant cycles\n", c->ep_cycles);
	fb_runrss_run(c, &r->runrss);
	fprintf(stderr, "forge-bench: entrypoint overhead, %d cycles x %d\n", c->ep_cycles, c->ep_reps);
	fb_epcost_run(c, &r->ep);
}

static int write_json(const char *path, const struct fb_cfg *cfg, const struct fb_results *r)
{
	cJSON *j = fb_report_json(cfg, r);
	char *s = cJSON_Print(j);
	FILE *f = fopen(path, "w");
	int ok = f && fputs(s, f) >= 0 && fputc('\n', f) != EOF;

	if (f && fclose(f))
		ok = 0;
	if (!ok)
		fprintf(stderr, "forge-bench: cannot write '%s': %s\n", path, strerror(errno));
	cJSON_free(s);
	cJSON_Delete(j);
	return ok ? 0 : -EIO;
}

static int bench(struct args *a)
{
	struct fb_results *r = fg_xcalloc(1, sizeof(*r));
	struct fb_cfg *c = &a->cfg;
	int fails;

	r->have_limit = c->inotifywait != NULL;
	r->ran_latency = wanted(a, "latency");
	r->ran_burst = wanted(a, "burst");
	r->ran_scale = wanted(a, "scale");
	r->ran_footprint = wanted(a, "footprint");
	if (r->ran_latency)
		run_latency(c, r);
	if (r->ran_burst)
		run_burst(c, r);
	if (r->ran_scale)
		run_scale(c, r);
	if (r->ran_footprint)
		run_footprint(c, r);
	fb_report_table(c, r);
	fails = fb_report_failures(c, r);
	if (a->json && write_json(a->json, c, r))
		fails++;
	if (fails)
		fprintf(stderr, "forge-bench: %d correctness failure(s): missed, duplicated or broken runs\n", fails);
	free(r);
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = SIG_IGN };
	struct args a;
	char *work;
	int r = parse(argc, argv, &a);

	if (r == 3)
		return help();
	if (r)
		return r;
	sigaction(SIGPIPE, &sa, NULL);
	work = fg_xasprintf("%s/forge-bench.XXXXXX", a.workroot && *a.workroot ? a.workroot : "/tmp");
	if (!mkdtemp(work)) {
		fprintf(stderr, "forge-bench: cannot create a scratch directory in '%s': %s\n",
			a.workroot ? a.workroot : "/tmp", strerror(errno));
		free(work);
		return 1;
	}
	a.cfg.workdir = work;
	/* The scripted agents live in the scratch directory, which is in
	 * $TMPDIR, of which the agents' box grants nothing: the box lets them
	 * read (and write) it, as the test suite's stand-ins (test-only). */
	setenv("FORGE_TEST_AGENT_WRITE_DIR", work, 1);
	r = bench(&a);
	fb_rmtree(work);
	free(work);
	return r;
}
