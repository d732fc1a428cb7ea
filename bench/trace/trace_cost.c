/*
 * trace_cost.c - forge-bench-trace: the runner's CPU per cycle for its trace
 * (runner/trace.c): the spans of a realistic cycle (a worker turn, a check,
 * a two-role panel, usage on every run) built and handed to a trace file
 * and to the OTLP exporter child, against the same with the export off.
 * The exporter's own work is in its child process, not the runner's.
 * Target: on within 1 ms of off per cycle. Prints one line per mode and the
 * verdict; exit 0 when the target is met, 1 when not.
 *
 * Usage: forge-bench-trace [CYCLES]   (default 2000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"
#include "trace.h"
#include "forge/alloc.h"
#include "forge/cycle.h"
#include "forge/timeutil.h"

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static struct fg_agent_run run_at(int64_t t0, int64_t ms)
{
	struct fg_agent_run r;

	fg_agent_run_init(&r);
	r.t.started_ms = t0;
	r.t.ended_ms = t0 + ms;
	fg_usage_set(&r.usage, FG_USAGE_INPUT, 52632);
	fg_usage_set(&r.usage, FG_USAGE_OUTPUT, 1312);
	fg_usage_set(&r.usage, FG_USAGE_CACHED, 52000);
	fg_usage_set_cost(&r.usage, 0.0412);
	fg_trace_random_hex(r.span_id, FG_SPAN_ID_HEX);
	snprintf(r.provider, sizeof(r.provider), "anthropic");
	return r;
}

static void fill(struct fg_cycle *c, int n)
{
	static const char *const roles[] = { "correctness", "security" };
	int64_t t0 = fg_time_now_ms();
	struct fg_check_result *k;

	fg_cycle_init(c);
	c->cycle = n;
	c->max_cycles = 100000;
	c->j.feedback = fg_xstrdup("The second turn is missing.");
	c->skill = fg_xstrdup("implement-task");
	c->worker_run = run_at(t0, 40000);
	k = fg_evidence_add_check(&c->ev, "unit");
	k->exit_code = 0;
	k->t = (struct fg_phase){ t0 + 40000, t0 + 52000 };
	c->has_reviews = true;
	c->reviews = fg_xcalloc(2, sizeof(*c->reviews));
	c->nreviews = 2;
	for (size_t i = 0; i < 2; i++) {
		struct fg_agent_run r = run_at(t0 + 52000, 30000);

		fg_review_init(&c->reviews[i]);
		snprintf(c->reviews[i].role, sizeof(c->reviews[i].role), "%s", roles[i]);
		c->reviews[i].j.feedback = fg_xstrdup("");
		fg_agent_runs_push(&c->reviews[i].runs, &r);
	}
}

/* CPU ns per cycle of n cycles traced with t. */
static double per_cycle(struct rn_trace *t, int n)
{
	struct fg_cycle c;
	double total = 0;

	for (int i = 1; i <= n; i++) {
		double a;

		fill(&c, i);
		a = cpu_ns();
		rn_trace_cycle(t, &c);
		total += cpu_ns() - a;
		fg_cycle_release(&c);
	}
	return total / n;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 2000;
	char file[] = "/tmp/forge-bench-trace.XXXXXX";
	struct rn_trace_params p = { "implement_task", "implement-task", "0123456789abcdef", "DEMO-1", NULL, NULL };
	struct rn_trace off, on;
	struct rn_log log;
	struct rn_log_cfg lc = { 0 };
	double t_off, t_on;
	int fd = mkstemp(file);

	if (n < 1 || n > 100000 || fd < 0)
		return 2;
	close(fd);
	lc.level = "error";
	if (rn_log_setup(&log, &lc, stderr))
		return 2;
	p.log = &log;
	unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
	unsetenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
	rn_trace_init(&off, &p);
	t_off = per_cycle(&off, n);
	/* On: the trace file and the exporter child (to a port nothing
	 * listens on: the child's failures cost the runner nothing). */
	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9", 1);
	p.trace_file = file;
	rn_trace_init(&on, &p);
	t_on = per_cycle(&on, n);
	printf("trace off: %.1f us CPU per cycle (%d cycles)\n", t_off / 1000, n);
	printf("trace on:  %.1f us CPU per cycle (file and OTLP exporter%s)\n", t_on / 1000,
	       on.exporting ? "" : ": exporter not started");
	printf("%s: on - off = %.3f ms per cycle (target <= 1 ms)\n", t_on - t_off <= 1e6 ? "PASS" : "MISS",
	       (t_on - t_off) / 1e6);
	rn_trace_release(&on);
	rn_trace_release(&off);
	unlink(file);
	rn_log_close(&log);
	return t_on - t_off <= 1e6 ? 0 : 1;
}
