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
 * and prints one JSON object with the medians and p90s in microseconds and
 * the box's cost per start (boxed - unboxed, medians).
 * Usage: forge-bench-box [N] (default 400).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* One ep_agent_run() of /bin/true in ws (boxed or not); its wall time in
 * seconds. */
static double run_true(struct ep_pid1 *p, const char *ws, const char *indir, bool box)
{
	static char prog[] = "/bin/true";
	char *argv[] = { prog, NULL };
	struct ep_agent_spec s = {
		.role = "bench", .argv = argv, .envp = environ, .cwd = ws, .input = "",
		.timeout_s = 30, .kill_grace_s = 1, .log_fd = -1, .echo_fd = -1, .read_dir = indir,
		.unboxed = !box,
	};
	struct ep_agent_result r;
	uint64_t t0 = fg_monotonic_ns();

	if (ep_agent_run(p, &s, &r) < 0 || !ep_agent_ok(&r)) {
		fprintf(stderr, "forge-bench-box: /bin/true failed: %s\n", r.what);
		exit(1);
	}
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
	double *prep, *plain, *boxed;
};

/* N rounds, each an unboxed start, a prepare and a boxed start. */
static void measure(struct samples *sm, const char *ws, const char *indir)
{
	struct ep_pid1 p;

	if (ep_pid1_init(&p) < 0)
		die("ep_pid1_init");
	for (size_t i = 0; i < sm->n; i++) {
		sm->plain[i] = run_true(&p, ws, indir, false);
		sm->prep[i] = time_prepare(ws, indir);
		sm->boxed[i] = run_true(&p, ws, indir, true);
	}
	ep_pid1_release(&p);
}

static void report(struct samples *sm, int abi)
{
	double pp50 = quantile(sm->prep, sm->n, 0.5), pp90 = quantile(sm->prep, sm->n, 0.9);
	double u50 = quantile(sm->plain, sm->n, 0.5), u90 = quantile(sm->plain, sm->n, 0.9);
	double b50 = quantile(sm->boxed, sm->n, 0.5), b90 = quantile(sm->boxed, sm->n, 0.9);

	printf("{\"n\": %zu, \"abi\": %d, \"prepare_us\": {\"p50\": %.1f, \"p90\": %.1f}, "
	       "\"start_unboxed_us\": {\"p50\": %.1f, \"p90\": %.1f}, \"start_boxed_us\": {\"p50\": %.1f, "
	       "\"p90\": %.1f}, \"box_cost_per_start_us\": %.1f, \"target_us\": 1000, \"met\": %s}\n",
	       sm->n, abi, pp50, pp90, u50, u90, b50, b90, b50 - u50, b50 - u50 < 1000 ? "true" : "false");
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	const char *base = tmp && *tmp ? tmp : "/tmp";
	struct samples sm = { argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 400, NULL, NULL, NULL };
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
	return 0;
}
