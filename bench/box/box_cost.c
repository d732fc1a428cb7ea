/*
 * box_cost.c - what the agents' box (entrypoint/sandbox.h) costs an agent
 * start: the issue "Agents in a box of their own" asks for less than 1 ms.
 * Times, N times each and in alternation (so that load drifts hit both):
 *   prepare   ep_box_prepare() alone: the ruleset built in the parent (one
 *             landlock_create_ruleset, a rule per read grant opened at
 *             setup, the workspace, HOME, TMPDIR, the prompt directory);
 *   unboxed   ep_agent_run() of /bin/true without the box: fork, exec,
 *             supervision, reaping (the agent start as before);
 *   boxed     the same with the box: prepare + prctl + restrict_self;
 * and prints one JSON object with the medians and p90s in microseconds, of
 * wall time and of CPU time (ours and the child's, getrusage), and the
 * box's cost per start: the median of the paired differences (boxed -
 * unboxed of the same round), wall and CPU. On a loaded machine the wall
 * figures are the scheduler's; the CPU figures are the work done.
 * Usage: forge-bench-box [N] (default 400).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "pid1.h"
#include "sandbox.h"
#include "forge/alloc.h"
#include "forge/timeutil.h"

extern char **environ;

static void die(const char *what)
{
	fprintf(stderr, "forge-bench-box: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile of v[0..n) (sorted here), in microseconds. */
static double quantile(double *v, size_t n, double q)
{
	qsort(v, n, sizeof(*v), cmp);
	return v[(size_t)(q * (double)(n - 1))] * 1e6;
}

/* CPU seconds so far of us and of our reaped children. */
static double cpu_now(void)
{
	struct rusage a, b;

	getrusage(RUSAGE_SELF, &a);
	getrusage(RUSAGE_CHILDREN, &b);
	return (double)(a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec + b.ru_stime.tv_sec) +
	       (double)(a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec + b.ru_stime.tv_usec) / 1e6;
}

/* One ep_agent_run() of /bin/true in ws (boxed or not); its wall time in
 * seconds, its CPU time in *cpu. */
static double run_true(struct ep_pid1 *p, const char *ws, const char *indir, bool box, double *cpu)
{
	static char prog[] = "/bin/true";
	char *argv[] = { prog, NULL };
	struct ep_agent_spec s = {
		.role = "bench", .argv = argv, .envp = environ, .cwd = ws, .input = "",
		.timeout_s = 30, .kill_grace_s = 1, .log_fd = -1, .echo_fd = -1, .read_dir = indir,
		.unboxed = !box,
	};
	struct ep_agent_result r;
	double c0 = cpu_now();
	uint64_t t0 = fg_monotonic_ns();

	if (ep_agent_run(p, &s, &r) < 0 || !ep_agent_ok(&r)) {
		fprintf(stderr, "forge-bench-box: /bin/true failed: %s\n", r.what);
		exit(1);
	}
	*cpu = cpu_now() - c0;
	return (double)(fg_monotonic_ns() - t0) / 1e9;
}

static double time_prepare(const char *ws, const char *indir)
{
	struct ep_box b;
	uint64_t t0 = fg_monotonic_ns();

	if (ep_box_prepare(&b, ws, environ, indir) < 0)
		die("ep_box_prepare");
	ep_box_release(&b);
	return (double)(fg_monotonic_ns() - t0) / 1e9;
}

/* A fresh directory base/prefix.XXXXXX (owned), as the loop makes its
 * private and prompt directories right in $TMPDIR. */
static char *scratch(const char *base, const char *prefix)
{
	char *p = fg_xasprintf("%s/%s.XXXXXX", base, prefix);

	if (!mkdtemp(p))
		die(p);
	return p;
}

struct samples {
	size_t n;
	double *prep, *plain, *boxed, *plain_cpu, *boxed_cpu, *dwall, *dcpu;
};

/* N rounds, each an unboxed start, a prepare and a boxed start. */
static void measure(struct samples *sm, const char *ws, const char *indir)
{
	struct ep_pid1 p;

	if (ep_pid1_init(&p) < 0)
		die("ep_pid1_init");
	for (size_t i = 0; i < sm->n; i++) {
		sm->plain[i] = run_true(&p, ws, indir, false, &sm->plain_cpu[i]);
		sm->prep[i] = time_prepare(ws, indir);
		sm->boxed[i] = run_true(&p, ws, indir, true, &sm->boxed_cpu[i]);
		sm->dwall[i] = sm->boxed[i] - sm->plain[i];
		sm->dcpu[i] = sm->boxed_cpu[i] - sm->plain_cpu[i];
	}
	ep_pid1_release(&p);
}

/* "name": {"p50": .., "p90": ..} of v. */
static void pair(const char *name, double *v, size_t n, const char *sep)
{
	double p50 = quantile(v, n, 0.5);

	printf("\"%s\": {\"p50\": %.1f, \"p90\": %.1f}%s", name, p50, quantile(v, n, 0.9), sep);
}

static void report(struct samples *sm, int abi)
{
	double dw = quantile(sm->dwall, sm->n, 0.5), dc = quantile(sm->dcpu, sm->n, 0.5);

	printf("{\"n\": %zu, \"abi\": %d, ", sm->n, abi);
	pair("prepare_us", sm->prep, sm->n, ", ");
	pair("start_unboxed_us", sm->plain, sm->n, ", ");
	pair("start_boxed_us", sm->boxed, sm->n, ", ");
	pair("start_unboxed_cpu_us", sm->plain_cpu, sm->n, ", ");
	pair("start_boxed_cpu_us", sm->boxed_cpu, sm->n, ", ");
	printf("\"box_cost_per_start_us\": {\"wall\": %.1f, \"cpu\": %.1f}, \"target_us\": 1000, "
	       "\"met\": %s}\n", dw, dc, dw < 1000 && dc < 1000 ? "true" : "false");
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	const char *base = tmp && *tmp ? tmp : "/tmp";
	struct samples sm = { .n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 400 };
	char *paths[4];
	struct fg_isolation iso;

	if (sm.n < 10 || sm.n > 1000000)
		die("usage: forge-bench-box [N from 10]");
	paths[0] = scratch(base, "forge-bench-ws");
	paths[1] = scratch(base, "forge-ep");
	paths[2] = scratch(base, "forge-in");
	paths[3] = scratch(paths[2], "agent");
	if (ep_sandbox_setup((const char *const[]){ paths[1], paths[2] }, 2, paths[0], &iso) < 0 ||
	    !iso.landlock) {
		fprintf(stderr, "forge-bench-box: no Landlock here: %s\n", iso.reason);
		return 1;
	}
	sm.prep = fg_xcalloc(sm.n, sizeof(double));
	sm.plain = fg_xcalloc(sm.n, sizeof(double));
	sm.boxed = fg_xcalloc(sm.n, sizeof(double));
	sm.plain_cpu = fg_xcalloc(sm.n, sizeof(double));
	sm.boxed_cpu = fg_xcalloc(sm.n, sizeof(double));
	sm.dwall = fg_xcalloc(sm.n, sizeof(double));
	sm.dcpu = fg_xcalloc(sm.n, sizeof(double));
	measure(&sm, paths[0], paths[3]);
	report(&sm, iso.abi);
	ep_sandbox_release();
	for (int i = 3; i >= 0; i--) {
		rmdir(paths[i]);
		free(paths[i]);
	}
	free(sm.prep);
	free(sm.plain);
	free(sm.boxed);
	free(sm.plain_cpu);
	free(sm.boxed_cpu);
	free(sm.dwall);
	free(sm.dcpu);
	return 0;
}
