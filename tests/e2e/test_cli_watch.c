/*
 * test_cli_watch.c - forge-runner watch and sweep as operator tools, the
 * run subcommand with the real forge-entrypoint, and SIGINT to a run.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(cli_watch, .timeout = 60);

#define CYCLE_FMT "{\"cycle\":%d,\"max_cycles\":10,\"verdict\":\"rejected\",\"feedback\":\"f\"," \
	"\"skill\":\"s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}\n"

static int count_lines_with(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* Runs the shell script (arguments: the runner, the tree's root) on a
 * fresh tree with an empty directory a (when a is not NULL); the caller
 * releases p and w. */
static void run_watch_script(struct fgw *w, struct fgt_proc *p, const char *script, int a)
{
	const char *argv[] = { "/bin/sh", "-c", script, "sh", FG_RUNNER_BIN, NULL, NULL };
	char *dir;

	fgw_init(w);
	argv[5] = w->root;
	if (a) {
		dir = fgw_path(w, "a");
		cr_assert_eq(mkdir(dir, 0755), 0);
		free(dir);
	}
	cr_assert_eq(fgt_run(p, argv, NULL, NULL, NULL, 40), 0);
}

/* The head of every watch script: R (the runner) and T (the tree) from the
 * arguments, wl TEXT [FILE] waits until FILE (default T/watch.out) holds
 * TEXT (exit 9 after about 20 s), stop ends the watch started as $pid with
 * SIGTERM and prints its exit code as rc=N. */
#define WATCH_HEAD \
	"R=$1; T=$2\n" \
	"wl() { f=${2:-$T/watch.out}; i=0; while ! grep -q \"$1\" \"$f\"; do i=$((i+1)); [ $i -gt 2000 ] && exit 9; " \
	"sleep 0.01; done; }\n" \
	"stop() { kill -TERM $pid; wait $pid; echo rc=$?; }\n"

static const char *watch_script =
	WATCH_HEAD
	"\"$R\" watch \"$T/a\" \"$T/later/b\" --log-format json --poll-interval 0.05 > \"$T/watch.out\" &\n"
	"pid=$!\n"
	"put() { printf '{\"cycle\":%d,\"max_cycles\":10,\"verdict\":\"rejected\",\"feedback\":\"f\",'"
	"'\"skill\":\"s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}' $2 > \"$1/.t\"; "
	"mv \"$1/.t\" \"$1/review_cycle_$2.json\"; }\n"
	"sleep 0.3\n"
	"put \"$T/a\" 1; wl review_cycle_1.json\n"
	"mkdir -p \"$T/later/b\"; put \"$T/later/b\" 2; wl review_cycle_2.json\n"
	"stop\n";

Test(cli_watch, watch_several_dirs_reports_each_once_then_exits_0)
{
	struct fgw w;
	struct fgt_proc p;
	char *out;

	run_watch_script(&w, &p, watch_script, 1);
	cr_assert_not_null(strstr(p.out, "rc=0"), "out: %s err: %s", p.out, p.err);
	out = fgw_read(&w, "watch.out");
	cr_assert_eq(count_lines_with(out, "\"event\":\"review_cycle\""), 2, "%s", out);
	cr_assert_eq(count_lines_with(out, "review_cycle_1.json"), 1);
	cr_assert_eq(count_lines_with(out, "review_cycle_2.json"), 1);
	for (char *line = out; line && *line;) {
		char *nl = strchr(line, '\n');
		cJSON *o;

		*nl = '\0';
		o = cJSON_Parse(line);
		cr_assert_not_null(o, "not JSON: %s", line);
		/* watch, or poll when the rename beat the first scan: never sweep. */
		cr_assert_str_neq(cJSON_GetObjectItem(o, "source")->valuestring, "sweep");
		cJSON_Delete(o);
		line = nl + 1;
	}
	free(out);
	fgw_release_run(&w, &p);
}

/* Watch printed nothing when it started and reported a corrupt
 * file only at exit; an unparsed verdict was a plain rejection. Now a
 * watch_start line comes first, a corrupt file still unchanged at the next
 * poll scan is reported while watching (before the SIGTERM), and a cycle
 * without a parsable verdict gets verdict_unparsed naming its reviewer log. */
static const char *corrupt_script =
	WATCH_HEAD
	"\"$R\" watch \"$T/a\" --log-format json --poll-interval 0.05 > \"$T/watch.out\" 2> \"$T/watch.err\" &\n"
	"pid=$!\n"
	"wl watch_start \"$T/watch.err\"\n"
	"printf garbage > \"$T/a/.t\"; mv \"$T/a/.t\" \"$T/a/review_cycle_1.json\"\n"
	"wl cycle_corrupt \"$T/watch.err\"; echo corrupt-seen-while-watching\n"
	"printf '{\"cycle\":2,\"max_cycles\":3,\"verdict\":\"rejected\",\"feedback\":\"Verdict could not be parsed\",'"
	"'\"format\":\"none\",\"skill\":\"s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}' > \"$T/a/.t\"\n"
	"mv \"$T/a/.t\" \"$T/a/review_cycle_2.json\"\n"
	"wl verdict_unparsed \"$T/watch.err\"\n"
	"stop\n";

Test(cli_watch, watch_says_it_started_and_reports_corrupt_files_while_watching)
{
	struct fgw w;
	struct fgt_proc p;
	char *a, *err;
	cJSON *evs;
	const cJSON *e;

	run_watch_script(&w, &p, corrupt_script, 1);
	a = fgw_path(&w, "a");
	cr_assert_not_null(strstr(p.out, "corrupt-seen-while-watching\n"), "out: %s err: %s", p.out, p.err);
	cr_assert_not_null(strstr(p.out, "rc=0"), "out: %s", p.out);
	err = fgw_read(&w, "watch.err");
	cr_assert_eq(count_lines_with(err, "\"event\":\"cycle_corrupt\""), 1, "%s", err);
	evs = fge_json_lines(err);
	cr_assert_not_null(fge_find_event(evs, "watch_start", "dir", a), "%s", err);
	e = fge_find_event(evs, "verdict_unparsed", NULL, NULL);
	cr_assert_not_null(e, "%s", err);
	char *rlog = fgt_fmt("%s/review_cycle_2.reviewer.log", a);
	cr_expect_str_eq(fge_jstr(e, "reviewer_log"), rlog);
	cr_expect(strstr(fge_jstr(e, "expected"), "APPROVED or REJECTED"), "%s", err);
	free(rlog);
	cJSON_Delete(evs);
	free(err);
	free(a);
	fgw_release_run(&w, &p);
}

/* logrotate's postrotate sends SIGHUP to every forge-runner process: a
 * watch must survive it, keep reporting, and still stop cleanly. */
static const char *hup_script =
	WATCH_HEAD
	"\"$R\" watch \"$T/a\" --log-format json > \"$T/watch.out\" &\n"
	"pid=$!\n"
	"put() { printf '{\"cycle\":%d,\"max_cycles\":10,\"verdict\":\"rejected\",\"feedback\":\"f\",'"
	"'\"skill\":\"s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}' $2 > \"$1/.t\"; "
	"mv \"$1/.t\" \"$1/review_cycle_$2.json\"; }\n"
	"sleep 0.3; put \"$T/a\" 1; wl review_cycle_1.json\n"
	"kill -HUP $pid; sleep 0.2\n"
	"kill -0 $pid || { echo died-on-hup; exit 8; }\n"
	"put \"$T/a\" 2; wl review_cycle_2.json\n"
	"stop\n";

Test(cli_watch, watch_survives_sighup)
{
	struct fgw w;
	struct fgt_proc p;

	run_watch_script(&w, &p, hup_script, 1);
	cr_assert_null(strstr(p.out, "died-on-hup"), "watch was killed by SIGHUP");
	cr_assert_not_null(strstr(p.out, "rc=0"), "out: %s err: %s", p.out, p.err);
	fgw_release_run(&w, &p);
}

Test(cli_watch, sweep_prints_valid_cycles_in_numeric_order)
{
	struct fgw w;
	struct fgt_proc p;
	cJSON *arr;

	fgw_init(&w);
	const char *argv[] = { FG_RUNNER_BIN, "sweep", w.step_dir, NULL };
	for (int n = 1; n <= 10; n++) {
		char *name = fgt_fmt("ws/.forge/impl/review_cycle_%d.json", n);
		char *json = fgt_fmt(CYCLE_FMT, n);

		fgw_write(&w, name, n == 5 ? "broken" : json);
		free(name);
		free(json);
	}
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 20), 0);
	cr_assert_eq(p.exit_code, 0);
	arr = cJSON_Parse(p.out);
	cr_assert(cJSON_IsArray(arr), "%s", p.out);
	cr_assert_eq(cJSON_GetArraySize(arr), 9);
	cr_assert_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 7), "cycle")->valueint, 9);
	cr_assert_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 8), "cycle")->valueint, 10);
	cr_assert_not_null(strstr(p.err, "review_cycle_5.json"));
	cJSON_Delete(arr);
	fgw_release_run(&w, &p);
}

Test(cli_watch, sigint_to_run_stops_sweeps_and_writes_result)
{
	struct fgw w;
	struct fgt_proc p;
	char *text, *ep;
	cJSON *o;

	fgw_init(&w);
	/* The entrypoint's parent is the runner: it interrupts it, as Ctrl-C would. */
	ep = fgw_script(&w, "ep.sh", NULL, "kill -INT $PPID\nexec sleep 30");
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", w.ws, "--step", "s",
			       "--entrypoint", ep, "--result", w.result, NULL };
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 40), 0);
	fgt_assert_exit(&p, 130);
	text = fgt_read(w.result, NULL);
	cr_assert_not_null(text);
	o = cJSON_Parse(text);
	cr_assert_eq(cJSON_GetObjectItem(o, "exit_code")->valueint, 130);
	/* Stopped before any summary: failed, by the cause's own name (not
	 * "no review.md"). */
	cr_assert_str_eq(cJSON_GetObjectItem(o, "review_state")->valuestring, "failed");
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "failure"), "cause")->valuestring,
			 "interrupted");
	cJSON_Delete(o);
	free(text);
	free(ep);
	fgw_release_run(&w, &p);
}

Test(cli_watch, run_with_the_real_entrypoint)
{
	struct fgw w;

	fgw_init(&w);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", w.ws, "--step", "implement_task",
			       "--skill", "impl", "--task-key", "DEMO-1", "--task-file", w.task,
			       "--skills-dir", w.skills, "--entrypoint", FG_ENTRYPOINT_BIN,
			       "--result", w.result, NULL };
	const char *env[] = {
		"FORGE_WORKER_CMD=sh -c 'echo working'",
		"FORGE_REVIEWER_CMD=sh -c 'if [ -f " "$FORGE_FEEDBACK_FILE" " ]; then :; fi; "
		"test -f {workspace}/.second && echo APPROVED || { touch {workspace}/.second; echo REJECTED: add tests; }'",
		NULL,
	};
	struct fgt_proc p;
	cJSON *o, *cs;

	fgw_review_md(&w, "default", "---\nmax_retries: 3\n---\nReview the work.\n");
	fgw_task(&w, "{\"task_key\":\"DEMO-1\",\"summary\":\"do it\",\"description\":\"d\"}\n");
	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 40), 0);
	cr_assert_eq(p.exit_code, 0, "stderr: %s", p.err);
	o = fgw_result_json(&w);
	cs = cJSON_GetObjectItem(o, "review_cycles");
	cr_assert_eq(cJSON_GetArraySize(cs), 2, "stderr: %s", p.err);
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cs, 0), "verdict")->valuestring, "rejected");
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cs, 1), "verdict")->valuestring, "approved");
	cr_assert_str_eq(cJSON_GetObjectItem(o, "review_state")->valuestring, "approved");
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cs, 0), "run_id")->valuestring,
			 cJSON_GetObjectItem(o, "run_id")->valuestring);
	cJSON_Delete(o);
	fgw_release_run(&w, &p);
}

/* watch --cycle-dir: each DIR is a workspace, and the template's expansion
 * below it is watched (created after the watch started is fine). */
static const char *cycle_dir_script =
	WATCH_HEAD
	"\"$R\" watch \"$T/ws\" --cycle-dir '.forge/reviews/{task_key}__{skill}' --step implement_task"
	" --task-key DEMO-1 --log-format json --poll-interval 0.05 > \"$T/watch.out\" 2> \"$T/watch.err\" &\n"
	"pid=$!\n"
	"wl watch_start \"$T/watch.err\"\n"
	"d=\"$T/ws/.forge/reviews/DEMO-1__implement-task\"; mkdir -p \"$d\"\n"
	"printf '{\"cycle\":1,\"max_cycles\":3,\"verdict\":\"approved\",\"feedback\":\"\",'"
	"'\"skill\":\"implement-task\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}' > \"$d/.t\"\n"
	"mv \"$d/.t\" \"$d/review_cycle_1.json\"\n"
	"wl review_cycle_1.json \"$T/watch.out\"\n"
	"stop\n";

Test(cli_watch, watch_cycle_dir_watches_the_template_below_each_workspace)
{
	struct fgw w;
	struct fgt_proc p;
	char *out, *err;

	/* The workspace is the fixture's ws, which fgw_init made. */
	run_watch_script(&w, &p, cycle_dir_script, 0);
	out = fgw_read(&w, "watch.out");
	err = fgw_read(&w, "watch.err");
	cr_assert_not_null(strstr(p.out, "rc=0"), "out: %s err: %s", out, err);
	cr_assert_eq(count_lines_with(out, "\"event\":\"review_cycle\""), 1, "%s", out);
	cr_assert_not_null(strstr(err, "ws/.forge/reviews/DEMO-1__implement-task"), "%s", err);
	/* The step is --step, the directory is cycle_dir. */
	fgt_assert_has(out, "\"step\":\"implement_task\"", "/ws/.forge/reviews/DEMO-1__implement-task\"");
	free(out);
	free(err);
	fgw_release_run(&w, &p);
}

Test(cli_watch, watch_cycle_dir_needs_a_step_and_a_safe_template)
{
	static const char *const cases[][8] = {
		{ "--cycle-dir", ".forge/{step}", NULL },
		{ "--cycle-dir", "../{step}", "--step", "s", NULL },
		{ "--step", "s", NULL },
	};
	static const char *const want[] = { "--cycle-dir needs --step", "stay below the workspace",
					    "go with --cycle-dir" };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[12] = { FG_RUNNER_BIN, "watch", "/tmp" };
		size_t n = 3;
		struct fgt_proc p;

		for (size_t j = 0; cases[i][j]; j++)
			argv[n++] = cases[i][j];
		argv[n] = NULL;
		cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 20), 0);
		cr_assert_eq(p.exit_code, 2, "case %zu exited %d: %s", i, p.exit_code, p.err);
		cr_assert_not_null(strstr(p.err, want[i]), "case %zu: %s", i, p.err);
		fgt_proc_release(&p);
	}
}
