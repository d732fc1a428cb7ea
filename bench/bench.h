/*
 * bench.h - forge-bench: detection latency, burst, scale and footprint of
 * `forge-runner watch`, side by side with the limit (`inotifywait -m`, the
 * kernel's own notification) and with the 5 s polling reference design.
 *
 * The harness only observes: it starts the real binaries, talks to them
 * through their stdout pipe and reads /proc. Nothing here asserts timing;
 * timing targets become PASS/MISS rows of the table, while missed or
 * duplicated files and broken runs make the exit code non-zero (that is
 * what the CTest smoke test checks).
 *
 * Modules: proc.c (spawning, line reader, /proc), detect.c (latency, burst,
 * scale), footprint.c (idle CPU, RSS of run, entrypoint overhead),
 * report.c (table and JSON).
 */
#ifndef FB_BENCH_H
#define FB_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "watch.h"

/* The watcher tracks at most this many cycle numbers per directory: a
 * burst larger than it is spread over several directories, as a workflow
 * with many steps would. */
#define FB_DIR_MAX_FILES RN_WATCH_MAX_CYCLE_FILES

/* What kind of watcher produced a stdout line. */
enum fb_kind {
	FB_RUNNER,        /* forge-runner watch --log-format json */
	FB_RUNNER_POLL,   /* forge-runner watch --no-inotify (reference design) */
	FB_INOTIFYWAIT,   /* inotifywait -m -e moved_to,close_write --format %f */
};

/* Settings shared by every benchmark; filled by main.c, read-only after. */
struct fb_cfg {
	const char *runner;          /* forge-runner binary */
	const char *entrypoint;      /* forge-entrypoint binary */
	const char *inotifywait;     /* NULL when not installed */
	const char *workdir;         /* scratch root (owned by main, removed at exit) */
	int smoke;                   /* short run: small N, short waits */
	unsigned seed;
	int lat_n;                   /* files for the latency runs */
	int ref_n;                   /* files for the polling reference */
	double ref_interval;         /* reference --poll-interval (5, smoke 0.2) */
	double net_interval;         /* --poll-interval of the inotify runs (safety net) */
	int burst_n;
	int burst_dirs;              /* burst_n spread over these, at most FB_DIR_MAX_FILES each */
	int scale_n;                 /* files per scale point */
	int scale_dirs[3];
	double idle_seconds;
	int ep_cycles;               /* max_retries for the entrypoint loop */
	int ep_reps;
	int verbose;
};

/* ---- proc.c ---- */

/* A started child with its stdout on a pipe and stderr in a file. */
struct fb_child {
	pid_t pid;
	int out_fd;                  /* read end of its stdout, O_NONBLOCK */
	char errpath[512];           /* its stderr */
	char buf[1 << 16];           /* partial line */
	size_t len;
};

/* Called once per complete stdout line; t_ns is when read() returned it. */
typedef void (*fb_line_cb)(void *data, char *line, size_t len, uint64_t t_ns);

uint64_t fb_now_ns(void);
void fb_sleep_ns(uint64_t ns);
/* Starts argv[0] (searched in PATH) with extra environment entries env
 * (NULL-terminated, may be NULL). 0 or -errno. */
int fb_child_start(struct fb_child *c, const char *const argv[], char *const env[], const char *errpath);
/* The same with stdin read from inpath (fb_child_start: /dev/null). */
int fb_child_start_in(struct fb_child *c, const char *const argv[], char *const env[],
		      const char *errpath, const char *inpath);
/* Waits up to timeout_ms for output and hands every complete line to cb.
 * Returns 1 when data was read, 0 on timeout, -EPIPE at EOF, other -errno. */
int fb_child_read(struct fb_child *c, int timeout_ms, fb_line_cb cb, void *data);
/* SIGTERM, then reads until EOF (cb sees the final lines) for up to
 * grace_ms, then SIGKILL; reaps. Returns the wait status, or -errno. */
int fb_child_stop(struct fb_child *c, int grace_ms, fb_line_cb cb, void *data);
/* VmRSS or VmHWM ("VmRSS", "VmHWM") of pid in KiB, or -errno. */
long fb_proc_status_kib(pid_t pid, const char *field);
/* utime+stime of pid in clock ticks converted to ns (tick resolution), or -errno. */
int64_t fb_proc_cpu_ticks_ns(pid_t pid);
/* Sum of /proc/pid/task/ * /schedstat run times in ns (exact), or -errno. */
int64_t fb_proc_cpu_sched_ns(pid_t pid);
/* 1 when every directory's inode is watched by an inotify fd of pid. */
int fb_inotify_ready(pid_t pid, const char *const dirs[], size_t ndirs);
/* Waits (up to timeout_ms) for fb_inotify_ready(). 0 or -ETIMEDOUT. */
int fb_wait_inotify_ready(pid_t pid, const char *const dirs[], size_t ndirs, int timeout_ms);
/* Writes a valid cycle file dir/review_cycle_<n>.json through a temp name and
 * rename(); *t_ns (may be NULL) is stamped just before rename(). 0 or -errno. */
int fb_write_cycle(const char *dir, int n, int max_cycles, uint64_t *t_ns);
/* The two halves of fb_write_cycle(): the complete temp file, then the rename. */
int fb_write_cycle_temp(const char *dir, int n, int max_cycles);
int fb_rename_cycle(const char *dir, int n, uint64_t *t_ns);
/* mkdir -p for a scratch path. 0 or -errno. */
int fb_mkdirs(const char *path);
/* Removes a scratch tree (best effort). */
void fb_rmtree(const char *path);
/* Prints the last bytes of a file to stderr (diagnostics of a failed run). */
void fb_dump_tail(const char *path, const char *what);

/* ---- detect.c ---- */

/* Outcome of one watcher under one workload. */
struct fb_detect {
	const char *label;           /* borrowed */
	int files;                   /* files renamed into place */
	int seen;                    /* distinct files reported live */
	int missed;                  /* never reported, or only by the exit sweep */
	int dup;                     /* extra reports of a file */
	int sweep_only;              /* reported only by the final sweep */
	double p50_ms, p99_ms, max_ms, mean_ms;
	double total_s;              /* first rename to last report (burst) */
	double write_s;              /* first rename to last rename */
	double files_per_s;
	double cpu_ms;               /* watcher's CPU (schedstat) from ready to the end of the run */
	long rss_kib;                /* VmRSS after the run */
	long hwm_kib;                /* VmHWM after the run */
	int ok;                      /* harness worked (process ran, became ready) */
};

struct fb_load {
	enum fb_kind kind;
	int files;
	int ndirs;
	int gap_max_us;              /* random gap before each rename: 0..gap_max_us */
	double poll_interval;        /* runner --poll-interval */
	int burst;                   /* 1: temp files written before the watcher starts,
					renamed back to back, file i into directory
					i % ndirs; throughput numbers */
};

/* Runs one watcher against one workload in a fresh scratch dir. 0, or -errno
 * when the harness itself failed (then out->ok == 0). */
int fb_detect_run(const struct fb_cfg *cfg, const struct fb_load *load, struct fb_detect *out);

/* ---- footprint.c ---- */

struct fb_idle {
	double seconds;
	double runner_cpu_ms_min;       /* schedstat, ms of CPU per minute */
	double runner_tick_ms_min;      /* utime+stime, same unit, 10 ms ticks */
	double limit_cpu_ms_min;
	double limit_tick_ms_min;
	long runner_rss_kib, limit_rss_kib;
	int ok, limit_ok;
};

struct fb_runrss {
	long hwm_kib;                   /* peak VmHWM of forge-runner run */
	long ep_hwm_kib;                /* peak VmHWM of its forge-entrypoint child */
	int exit_code;
	int cycles;                     /* review_cycles in its result */
	int ok;
};

struct fb_epcost {
	int cycles;                     /* review cycles per entrypoint run */
	int spawns;                     /* agent processes per run */
	int reps;
	double ep_ms;                   /* median wall time of a full entrypoint run */
	double agents_ms;               /* median wall time of the same spawns alone */
	double per_cycle_ms;            /* (ep_ms - agents_ms) / cycles */
	int exit_code;
	int ok;
};

int fb_idle_run(const struct fb_cfg *cfg, struct fb_idle *out);
int fb_runrss_run(const struct fb_cfg *cfg, struct fb_runrss *out);
int fb_epcost_run(const struct fb_cfg *cfg, struct fb_epcost *out);
/* Writes the instant agents and a skills tree under root; 0 or -errno. */
int fb_agents_write(const char *root, int max_retries);

/* ---- report.c ---- */

struct fb_results {
	struct fb_detect lat_runner, lat_limit, lat_ref;
	struct fb_detect burst_runner, burst_limit;
	struct fb_detect scale_runner[3], scale_limit[3];
	struct fb_idle idle;
	struct fb_runrss runrss;
	struct fb_epcost ep;
	int have_limit;
	int ran_latency, ran_burst, ran_scale, ran_footprint;   /* --only */
};

/* Prints the table to stdout. Returns the number of MISS rows. */
int fb_report_table(const struct fb_cfg *cfg, const struct fb_results *r);
/* Builds the JSON document (owned by the caller). */
cJSON *fb_report_json(const struct fb_cfg *cfg, const struct fb_results *r);
/* Number of correctness failures (missed, duplicated, broken runs). */
int fb_report_failures(const struct fb_cfg *cfg, const struct fb_results *r);

#endif
