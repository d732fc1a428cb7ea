/*
 * footprint.c - idle CPU of `watch`, resident memory of `run`, and the
 * entrypoint's own cost per review cycle with instant agents.
 *
 * Entrypoint overhead: one run of forge-entrypoint with a worker that exits
 * at once and a reviewer that prints REJECTED at once, max_retries cycles;
 * minus the time the very same agent scripts take when spawned alone the
 * same number of times (stdout drained, waited for); divided by the cycles.
 * What is left is the loop's own work: prompts, verdict parsing, cycle
 * files, process management.
 */
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forge/alloc.h"

static int write_text(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	size_t n = strlen(text);
	ssize_t w;

	if (fd < 0)
		return -errno;
	w = write(fd, text, n);
	close(fd);
	return w == (ssize_t)n ? 0 : -EIO;
}

int fb_agents_write(const char *root, int max_retries)
{
	char *p, *body;
	int r;

	p = fg_xasprintf("%s/skills/default/bench", root);
	r = fb_mkdirs(p);
	free(p);
	if (!r) {
		p = fg_xasprintf("%s/ws", root);
		r = fb_mkdirs(p);
		free(p);
	}
	body = fg_xasprintf("---\nmax_retries: %d\n---\n\nReject everything (benchmark).\n", max_retries);
	p = fg_xasprintf("%s/skills/default/bench/review.md", root);
	r = r ? r : write_text(p, body, 0644);
	free(p);
	free(body);
	/* Each agent appends one byte so the baseline spawns exactly as many. */
	p = fg_xasprintf("%s/worker.sh", root);
	r = r ? r : write_text(p, "#!/bin/sh\nprintf w >>\"$FORGE_BENCH_COUNT\"\nexit 0\n", 0755);
	free(p);
	p = fg_xasprintf("%s/reviewer.sh", root);
	r = r ? r : write_text(p, "#!/bin/sh\nprintf r >>\"$FORGE_BENCH_COUNT\"\n"
			       "echo 'REJECTED: add the missing test'\n", 0755);
	free(p);
	/* A fixed key: what is measured is the sealing, not the key. */
	p = fg_xasprintf("%s/seal.key", root);
	r = r ? r : write_text(p, "5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed\n", 0600);
	free(p);
	p = fg_xasprintf("%s/task.json", root);
	r = r ? r : write_text(p, "{\"task_key\": \"BENCH-1\", \"summary\": \"bench\", "
			       "\"description\": \"benchmark task\", \"skill_name\": \"bench\", "
			       "\"step_name\": \"bench\", \"previous_task_keys\": []}\n", 0644);
	free(p);
	return r;
}

/* Drains c's stdout until EOF (or timeout), then reaps. Wait status or -errno. */
static int child_finish(struct fb_child *c, int timeout_ms)
{
	uint64_t deadline = fb_now_ns() + (uint64_t)timeout_ms * 1000000u;
	int r = 0, st = 0;

	while (r != -EPIPE && fb_now_ns() < deadline) {
		r = fb_child_read(c, 100, NULL, NULL);
		if (r < 0 && r != -EPIPE)
			break;
	}
	if (r != -EPIPE)
		kill(c->pid, SIGKILL);
	while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
		;
	close(c->out_fd);
	c->out_fd = -1;
	c->pid = -1;
	return r == -EPIPE ? st : -ETIMEDOUT;
}

static int exit_code(int st)
{
	if (st < 0)
		return st;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int count_cycles(const char *dir)
{
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	for (de = readdir(d); de; de = readdir(d))
		n += !strncmp(de->d_name, "review_cycle_", 13) && strstr(de->d_name, ".json") &&
		     de->d_name[strlen(de->d_name) - 1] == 'n';
	closedir(d);
	return n;
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) < 0 ? 0 : (long)st.st_size;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : NAN;
}

struct agents {
	char *root, *ws, *forge, *count, *count_base, *task, *skills;
	char *keyfile;   /* the seal key line, the entrypoint's stdin */
	char *env[8];
};

static void agents_init(struct agents *a, const struct fb_cfg *cfg, const char *name)
{
	a->root = fg_xasprintf("%s/%s", cfg->workdir, name);
	a->ws = fg_xasprintf("%s/ws", a->root);
	a->forge = fg_xasprintf("%s/ws/.forge", a->root);
	a->count = fg_xasprintf("%s/count", a->root);
	a->count_base = fg_xasprintf("%s/count-base", a->root);
	a->task = fg_xasprintf("%s/task.json", a->root);
	a->skills = fg_xasprintf("%s/skills", a->root);
	a->env[0] = fg_xasprintf("FORGE_WORKER_CMD=%s/worker.sh", a->root);
	a->env[1] = fg_xasprintf("FORGE_REVIEWER_CMD=%s/reviewer.sh", a->root);
	a->env[2] = fg_xasprintf("AUTO_REVIEW_MAX_RETRIES=%d", cfg->ep_cycles);
	a->env[3] = fg_xasprintf("FORGE_BENCH_COUNT=%s", a->count);
	a->env[4] = fg_xstrdup("AUTO_REVIEW_FAIL_ON_EXHAUSTION=0");
	/* Sealed, as forge-runner runs it: the key is the first stdin line
	 * and every record is sealed, so the overhead includes sealing them. */
	a->env[5] = fg_xstrdup(getenv("FORGE_BENCH_UNSEALED") ? "FORGE_SEAL_KEY_STDIN=0"
							    : "FORGE_SEAL_KEY_STDIN=1");
	/* The stand-in agents' counter reaches them by name (their
	 * environment is an allow-list, agentenv.h). */
	a->env[6] = fg_xstrdup("FORGE_AGENT_ENV=FORGE_BENCH_COUNT");
	a->env[7] = NULL;
	a->keyfile = fg_xasprintf("%s/seal.key", a->root);
}

static void agents_release(struct agents *a)
{
	fb_rmtree(a->root);
	free(a->root);
	free(a->ws);
	free(a->forge);
	free(a->count);
	free(a->count_base);
	free(a->task);
	free(a->skills);
	free(a->keyfile);
	for (int i = 0; a->env[i]; i++)
		free(a->env[i]);
}

/* One full entrypoint run; *ms its wall time. Returns the exit code or -errno. */
static int ep_once(const struct fb_cfg *cfg, struct agents *a, double *ms)
{
	const char *argv[] = { cfg->entrypoint, "run", "--task-file", a->task, "--workspace", a->ws,
			 "--skills-dir", a->skills, "--step", "bench", "--skill", "bench",
			 "--task-key", "BENCH-1", NULL };
	char *errpath = fg_xasprintf("%s/ep.stderr", a->root);
	struct fb_child c;
	uint64_t t0;
	int r;

	fb_rmtree(a->forge);
	unlink(a->count);
	t0 = fb_now_ns();
	r = fb_child_start_in(&c, argv, a->env, errpath, a->keyfile);
	if (!r)
		r = exit_code(child_finish(&c, 120000));
	*ms = (double)(fb_now_ns() - t0) / 1e6;
	if (r)
		fb_dump_tail(errpath, "forge-entrypoint stderr");
	free(errpath);
	return r;
}

/* Spawns the agents recorded in the count file, one after the other, as the
 * entrypoint did; *ms their total wall time. 0 or -errno. */
static int agents_alone(struct agents *a, const char *order, double *ms)
{
	char *w = fg_xasprintf("%s/worker.sh", a->root), *rv = fg_xasprintf("%s/reviewer.sh", a->root);
	char *env[] = { fg_xasprintf("FORGE_BENCH_COUNT=%s", a->count_base), NULL };
	char *errpath = fg_xasprintf("%s/agents.stderr", a->root);
	uint64_t t0 = fb_now_ns();
	int r = 0;

	unlink(a->count_base);
	for (const char *p = order; *p && !r; p++) {
		const char *argv[] = { *p == 'w' ? w : rv, NULL };
		struct fb_child c;

		r = fb_child_start(&c, argv, env, errpath);
		if (!r)
			r = exit_code(child_finish(&c, 10000));
	}
	*ms = (double)(fb_now_ns() - t0) / 1e6;
	free(env[0]);
	free(w);
	free(rv);
	free(errpath);
	return r > 0 ? -ECHILD : r;
}

static char *read_small(const char *path)
{
	char *s = fg_xcalloc(4096, 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, s, 4095) < 0)
			s[0] = '\0';
		close(fd);
	}
	return s;
}

int fb_epcost_run(const struct fb_cfg *cfg, struct fb_epcost *o)
{
	struct agents a;
	double *ep = fg_xcalloc((size_t)cfg->ep_reps, sizeof(double));
	double *base = fg_xcalloc((size_t)cfg->ep_reps, sizeof(double));
	char *step, *order = NULL;
	int r = 0, i;

	agents_init(&a, cfg, "epcost");
	r = fb_agents_write(a.root, cfg->ep_cycles);
	step = fg_xasprintf("%s/bench", a.forge);
	/* Interleaved, so that drifting machine noise hits both sides alike. */
	for (i = 0; i < cfg->ep_reps && !r; i++) {
		r = ep_once(cfg, &a, &ep[i]);
		o->exit_code = r;
		if (r)
			break;
		o->cycles = count_cycles(step);
		free(order);
		order = read_small(a.count);
		r = agents_alone(&a, order, &base[i]);
	}
	o->reps = i;
	o->spawns = order ? (int)strlen(order) : 0;
	if (!r && o->cycles > 0) {
		double *diff = fg_xcalloc((size_t)i, sizeof(double));

		/* Paired per repetition before any sorting. */
		for (int k = 0; k < i; k++)
			diff[k] = (ep[k] - base[k]) / o->cycles;
		o->per_cycle_ms = median(diff, i);
		o->ep_ms = median(ep, i);
		o->agents_ms = median(base, i);
		o->ok = 1;
		free(diff);
	} else if (!r) {
		fprintf(stderr, "forge-bench: entrypoint wrote no review cycles in '%s'\n", step);
		r = -ENOENT;
	}
	free(order);
	free(step);
	free(ep);
	free(base);
	agents_release(&a);
	return r > 0 ? -ECHILD : r;
}

/* Entrypoint child of the runner (first entry of its children list), or -1. */
static pid_t first_child(pid_t pid)
{
	char path[96], buf[64] = "";
	FILE *f;
	long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 10);
	fclose(f);
	return v > 0 ? (pid_t)v : -1;
}

static void sample_peaks(pid_t pid, struct fb_runrss *o)
{
	long v = fb_proc_status_kib(pid, "VmHWM");
	pid_t ch = first_child(pid);

	if (v > o->hwm_kib)
		o->hwm_kib = v;
	if (ch > 0) {
		v = fb_proc_status_kib(ch, "VmHWM");
		if (v > o->ep_hwm_kib)
			o->ep_hwm_kib = v;
	}
}

static int result_cycles(const char *path)
{
	char *s = NULL;
	cJSON *j, *rc;
	long n = file_size(path);
	int fd = open(path, O_RDONLY | O_CLOEXEC), cycles = -1;

	if (fd < 0 || n <= 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	s = fg_xcalloc((size_t)n + 1, 1);
	if (read(fd, s, (size_t)n) != n)
		s[0] = '\0';
	close(fd);
	j = cJSON_Parse(s);
	rc = cJSON_GetObjectItemCaseSensitive(j, "review_cycles");
	if (cJSON_IsArray(rc))
		cycles = cJSON_GetArraySize(rc);
	cJSON_Delete(j);
	free(s);
	return cycles;
}

int fb_runrss_run(const struct fb_cfg *cfg, struct fb_runrss *o)
{
	struct agents a;
	char *result, *errpath, interval[32];
	struct fb_child c;
	int r, st = 0;

	agents_init(&a, cfg, "runrss");
	result = fg_xasprintf("%s/result.json", a.root);
	errpath = fg_xasprintf("%s/run.stderr", a.root);
	snprintf(interval, sizeof(interval), "%g", cfg->net_interval);
	const char *argv[] = { cfg->runner, "run", "--workspace", a.ws, "--step", "bench",
			 "--skill", "bench", "--task-key", "BENCH-1", "--task-file", a.task,
			 "--engine", "local", "--skills-dir", a.skills, "--result", result,
			 "--poll-interval", interval, "--log-format", "json", NULL };
	r = fb_agents_write(a.root, cfg->ep_cycles);
	if (!r)
		r = fb_child_start(&c, argv, a.env, errpath);
	while (!r) {
		pid_t w;

		sample_peaks(c.pid, o);
		if (fb_child_read(&c, 1, NULL, NULL) == -EPIPE)
			fb_sleep_ns(1000000);
		w = waitpid(c.pid, &st, WNOHANG);
		if (w == c.pid)
			break;
		if (w < 0 && errno != EINTR)
			r = -errno;
	}
	if (c.out_fd >= 0)
		close(c.out_fd);
	o->exit_code = r ? r : exit_code(st);
	o->cycles = result_cycles(result);
	o->ok = !r && o->exit_code == 0 && o->cycles == cfg->ep_cycles && o->hwm_kib > 0;
	if (!o->ok) {
		fprintf(stderr, "forge-bench: run: exit %d, %d cycles in the result (expected %d)\n",
			o->exit_code, o->cycles, cfg->ep_cycles);
		fb_dump_tail(errpath, "forge-runner run stderr");
	}
	free(result);
	free(errpath);
	agents_release(&a);
	return o->ok ? 0 : -ECHILD;
}

struct idle_proc {
	struct fb_child c;
	int64_t sched0, tick0;
	int started;
};

static int idle_start(struct idle_proc *p, const char **argv, const char *errpath, const char *dir)
{
	const char *dirs[] = { dir };
	int r = fb_child_start(&p->c, argv, NULL, errpath);

	if (!r)
		r = fb_wait_inotify_ready(p->c.pid, dirs, 1, 20000);
	p->started = p->c.pid > 0;
	return r;
}

/* CPU since the baseline, as ms per minute of wall time. */
static void idle_take(struct idle_proc *p, double secs, double *sched_ms, double *tick_ms, long *rss)
{
	int64_t s = fb_proc_cpu_sched_ns(p->c.pid), t = fb_proc_cpu_ticks_ns(p->c.pid);

	*sched_ms = (double)(s - p->sched0) / 1e6 * 60.0 / secs;
	*tick_ms = (double)(t - p->tick0) / 1e6 * 60.0 / secs;
	*rss = fb_proc_status_kib(p->c.pid, "VmRSS");
}

int fb_idle_run(const struct fb_cfg *cfg, struct fb_idle *o)
{
	char *dir = fg_xasprintf("%s/idle/.forge/idle_step", cfg->workdir);
	char *e1 = fg_xasprintf("%s/idle-runner.stderr", cfg->workdir);
	char *e2 = fg_xasprintf("%s/idle-limit.stderr", cfg->workdir);
	char interval[32];
	const char *ra[] = { cfg->runner, "watch", "--log-format", "json", "--poll-interval", interval, dir, NULL };
	const char *la[] = { cfg->inotifywait, "-m", "-q", "-e", "moved_to,close_write", "--format", "%f", dir, NULL };
	struct idle_proc rp = { 0 }, lp = { 0 };
	uint64_t t0;
	double secs;
	int r;

	snprintf(interval, sizeof(interval), "%g", cfg->net_interval);
	r = fb_mkdirs(dir);
	if (!r)
		r = idle_start(&rp, ra, e1, dir);
	if (!r && cfg->inotifywait)
		o->limit_ok = !idle_start(&lp, la, e2, dir);
	if (!r) {
		/* Start-up is not idle: let both settle, then take the baseline. */
		fb_sleep_ns(500000000);
		rp.sched0 = fb_proc_cpu_sched_ns(rp.c.pid);
		rp.tick0 = fb_proc_cpu_ticks_ns(rp.c.pid);
		if (o->limit_ok) {
			lp.sched0 = fb_proc_cpu_sched_ns(lp.c.pid);
			lp.tick0 = fb_proc_cpu_ticks_ns(lp.c.pid);
		}
		t0 = fb_now_ns();
		fb_sleep_ns((uint64_t)(cfg->idle_seconds * 1e9));
		secs = (double)(fb_now_ns() - t0) / 1e9;
		o->seconds = secs;
		idle_take(&rp, secs, &o->runner_cpu_ms_min, &o->runner_tick_ms_min, &o->runner_rss_kib);
		if (o->limit_ok)
			idle_take(&lp, secs, &o->limit_cpu_ms_min, &o->limit_tick_ms_min, &o->limit_rss_kib);
		o->ok = rp.sched0 >= 0 && o->runner_rss_kib > 0;
	}
	if (rp.started)
		fb_child_stop(&rp.c, 5000, NULL, NULL);
	if (lp.started)
		fb_child_stop(&lp.c, 5000, NULL, NULL);
	if (!o->ok)
		fb_dump_tail(e1, "forge-runner watch stderr (idle)");
	unlink(e1);
	unlink(e2);
	fb_rmtree(dir);
	free(dir);
	free(e1);
	free(e2);
	return o->ok ? 0 : (r ? r : -EIO);
}
