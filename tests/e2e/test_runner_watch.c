/*
 * test_runner_watch.c - forge-runner watch and sweep as operator tools, the
 * run subcommand with the real forge-entrypoint, and SIGINT to a run.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fge2e.h"
#include "fgtest.h"

TestSuite(runner_tools, .timeout = 60);

#define CYCLE_FMT "{\"cycle\":%d,\"max_cycles\":10,\"verdict\":\"rejected\",\"feedback\":\"f\"," \
	"\"skill\":\"s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}\n"

static int count_lines_with(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

static const char *watch_script =
	"R=$1; T=$2\n"
	"\"$R\" watch \"$T/a\" \"$T/later/b\" --log-format json --poll-interval 0.05 > \"$T/out\" &\n"
	"pid=$!\n"
	"wl() { i=0; while ! grep -q \"$1\" \"$T/out\"; do i=$((i+1)); [ $i -gt 2000 ] && exit 9; sleep 0.01; done; }\n"
	"put() { printf '{\"cycle\":%d,\"max_cycles\":10,\"verdict\":\"rejected\",\"feedback\":\"f\",'"
	"'\"skill\":\"s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}' $2 > \"$1/.t\"; "
	"mv \"$1/.t\" \"$1/review_cycle_$2.json\"; }\n"
	"sleep 0.3\n"
	"put \"$T/a\" 1; wl review_cycle_1.json\n"
	"mkdir -p \"$T/later/b\"; put \"$T/later/b\" 2; wl review_cycle_2.json\n"
	"kill -TERM $pid; wait $pid; echo rc=$?\n";

Test(runner_tools, watch_several_dirs_reports_each_once_then_exits_0)
{
	char *dir = fgt_tmpdir();
	const char *argv[] = { "/bin/sh", "-c", watch_script, "sh", FG_RUNNER_BIN, dir, NULL };
	struct fgt_proc p;
	char *out, *outp = fgt_fmt("%s/out", dir), *a = fgt_fmt("%s/a", dir);

	cr_assert_eq(mkdir(a, 0755), 0);
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 40), 0);
	cr_assert_not_null(strstr(p.out, "rc=0"), "out: %s err: %s", p.out, p.err);
	out = fgt_read(outp, NULL);
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
	free(outp);
	free(a);
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(dir);
}

/* Issue 18: watch printed nothing when it started and reported a corrupt
 * file only at exit; an unparsed verdict was a plain rejection. Now a
 * watch_start line comes first, a corrupt file still unchanged at the next
 * poll scan is reported while watching (before the SIGTERM), and a cycle
 * without a parsable verdict gets verdict_unparsed naming its reviewer log. */
static const char *corrupt_script =
	"R=$1; T=$2\n"
	"\"$R\" watch \"$T/a\" --log-format json --poll-interval 0.05 > \"$T/out\" 2> \"$T/err\" &\n"
	"pid=$!\n"
	"wl() { i=0; while ! grep -q \"$1\" \"$2\"; do i=$((i+1)); [ $i -gt 2000 ] && exit 9; sleep 0.01; done; }\n"
	"wl watch_start \"$T/err\"\n"
	"printf garbage > \"$T/a/.t\"; mv \"$T/a/.t\" \"$T/a/review_cycle_1.json\"\n"
	"wl cycle_corrupt \"$T/err\"; echo corrupt-seen-while-watching\n"
	"printf '{\"cycle\":2,\"max_cycles\":3,\"verdict\":\"rejected\",\"feedback\":\"Verdict could not be parsed\",'"
	"'\"format\":\"none\",\"skill\":\"s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}' > \"$T/a/.t\"\n"
	"mv \"$T/a/.t\" \"$T/a/review_cycle_2.json\"\n"
	"wl verdict_unparsed \"$T/err\"\n"
	"kill -TERM $pid; wait $pid; echo rc=$?\n";

Test(runner_tools, watch_says_it_started_and_reports_corrupt_files_while_watching)
{
	char *dir = fgt_tmpdir();
	const char *argv[] = { "/bin/sh", "-c", corrupt_script, "sh", FG_RUNNER_BIN, dir, NULL };
	struct fgt_proc p;
	char *errp = fgt_fmt("%s/err", dir), *a = fgt_fmt("%s/a", dir), *err;
	cJSON *evs;
	const cJSON *e;

	cr_assert_eq(mkdir(a, 0755), 0);
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 40), 0);
	cr_assert_not_null(strstr(p.out, "corrupt-seen-while-watching\n"), "out: %s err: %s", p.out, p.err);
	cr_assert_not_null(strstr(p.out, "rc=0"), "out: %s", p.out);
	err = fgt_read(errp, NULL);
	cr_assert_eq(count_lines_with(err, "\"event\":\"cycle_corrupt\""), 1, "%s", err);
	evs = fge_json_lines(err);
	e = fge_find_event(evs, "watch_start", NULL, NULL);
	cr_assert_not_null(e, "%s", err);
	cr_expect_str_eq(fge_jstr(e, "dir"), a);
	e = fge_find_event(evs, "verdict_unparsed", NULL, NULL);
	cr_assert_not_null(e, "%s", err);
	char *rlog = fgt_fmt("%s/review_cycle_2.reviewer.log", a);
	cr_expect_str_eq(fge_jstr(e, "reviewer_log"), rlog);
	cr_expect(strstr(fge_jstr(e, "expected"), "APPROVED or REJECTED"), "%s", err);
	free(rlog);
	cJSON_Delete(evs);
	free(err);
	free(errp);
	free(a);
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(dir);
}

/* logrotate's postrotate sends SIGHUP to every forge-runner process: a
 * watch must survive it, keep reporting, and still stop cleanly. */
static const char *hup_script =
	"R=$1; T=$2\n"
	"\"$R\" watch \"$T/a\" --log-format json > \"$T/out\" &\n"
	"pid=$!\n"
	"wl() { i=0; while ! grep -q \"$1\" \"$T/out\"; do i=$((i+1)); [ $i -gt 2000 ] && exit 9; sleep 0.01; done; }\n"
	"put() { printf '{\"cycle\":%d,\"max_cycles\":10,\"verdict\":\"rejected\",\"feedback\":\"f\",'"
	"'\"skill\":\"s\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}' $2 > \"$1/.t\"; "
	"mv \"$1/.t\" \"$1/review_cycle_$2.json\"; }\n"
	"sleep 0.3; put \"$T/a\" 1; wl review_cycle_1.json\n"
	"kill -HUP $pid; sleep 0.2\n"
	"kill -0 $pid || { echo died-on-hup; exit 8; }\n"
	"put \"$T/a\" 2; wl review_cycle_2.json\n"
	"kill -TERM $pid; wait $pid; echo rc=$?\n";

Test(runner_tools, watch_survives_sighup)
{
	char *dir = fgt_tmpdir();
	const char *argv[] = { "/bin/sh", "-c", hup_script, "sh", FG_RUNNER_BIN, dir, NULL };
	struct fgt_proc p;
	char *a = fgt_fmt("%s/a", dir);

	cr_assert_eq(mkdir(a, 0755), 0);
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 40), 0);
	cr_assert_null(strstr(p.out, "died-on-hup"), "watch was killed by SIGHUP");
	cr_assert_not_null(strstr(p.out, "rc=0"), "out: %s err: %s", p.out, p.err);
	free(a);
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(dir);
}

Test(runner_tools, sweep_prints_valid_cycles_in_numeric_order)
{
	char *dir = fgt_tmpdir();
	const char *argv[] = { FG_RUNNER_BIN, "sweep", dir, NULL };
	struct fgt_proc p;
	cJSON *arr;

	for (int n = 1; n <= 10; n++) {
		char *path = fgt_fmt("%s/review_cycle_%d.json", dir, n);
		char *json = fgt_fmt(CYCLE_FMT, n);

		fgt_write(path, n == 5 ? "broken" : json);
		free(path);
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
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(dir);
}

Test(runner_tools, sigint_to_run_stops_sweeps_and_writes_result)
{
	char *dir = fgt_tmpdir();
	char *ep = fgt_fmt("%s/ep.sh", dir), *ws = fgt_fmt("%s/ws", dir);
	char *res = fgt_fmt("%s/r.json", dir);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", ws, "--step", "s",
			       "--entrypoint", ep, "--result", res, NULL };
	struct fgt_proc p;
	char *text;
	cJSON *o;

	/* The entrypoint's parent is the runner: it interrupts it, as Ctrl-C would. */
	fgt_write(ep, "#!/bin/sh\nkill -INT $PPID\nexec sleep 30\n");
	fgt_chmod_x(ep);
	cr_assert_eq(mkdir(ws, 0755), 0);
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 40), 0);
	cr_assert_eq(p.exit_code, 130, "stderr: %s", p.err);
	text = fgt_read(res, NULL);
	cr_assert_not_null(text);
	o = cJSON_Parse(text);
	cr_assert_eq(cJSON_GetObjectItem(o, "exit_code")->valueint, 130);
	cr_assert_str_eq(cJSON_GetObjectItem(o, "review_state")->valuestring, "no_review");
	cJSON_Delete(o);
	free(text);
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(dir);
	free(ep);
	free(ws);
	free(res);
}

Test(runner_tools, run_with_the_real_entrypoint)
{
	char *dir = fgt_tmpdir();
	char *ws = fgt_fmt("%s/ws", dir), *skills = fgt_fmt("%s/skills", dir);
	char *res = fgt_fmt("%s/r.json", dir), *task = fgt_fmt("%s/task.json", dir);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", ws, "--step", "implement_task",
			       "--skill", "impl", "--task-key", "DEMO-1", "--task-file", task,
			       "--skills-dir", skills, "--entrypoint", FG_ENTRYPOINT_BIN,
			       "--result", res, NULL };
	const char *env[] = {
		"FORGE_WORKER_CMD=sh -c 'echo working'",
		"FORGE_REVIEWER_CMD=sh -c 'if [ -f " "$FORGE_FEEDBACK_FILE" " ]; then :; fi; "
		"test -f {workspace}/.second && echo APPROVED || { touch {workspace}/.second; echo REJECTED: add tests; }'",
		NULL,
	};
	struct fgt_proc p;
	char *text, *reviewmd = fgt_fmt("%s/default/impl/review.md", skills);
	cJSON *o, *cs;

	fgt_write(reviewmd, "---\nmax_retries: 3\n---\nReview the work.\n");
	fgt_write(task, "{\"task_key\":\"DEMO-1\",\"summary\":\"do it\",\"description\":\"d\"}\n");
	cr_assert_eq(mkdir(ws, 0755), 0);
	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 40), 0);
	text = fgt_read(res, NULL);
	cr_assert_not_null(text, "no result; stderr: %s", p.err);
	o = cJSON_Parse(text);
	cr_assert_eq(p.exit_code, 0, "stderr: %s\nresult: %s", p.err, text);
	cs = cJSON_GetObjectItem(o, "review_cycles");
	cr_assert_eq(cJSON_GetArraySize(cs), 2, "%s", text);
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cs, 0), "verdict")->valuestring, "rejected");
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cs, 1), "verdict")->valuestring, "approved");
	cr_assert_str_eq(cJSON_GetObjectItem(o, "review_state")->valuestring, "approved");
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cs, 0), "run_id")->valuestring,
			 cJSON_GetObjectItem(o, "run_id")->valuestring);
	cJSON_Delete(o);
	free(text);
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(dir);
	free(ws);
	free(skills);
	free(res);
	free(task);
	free(reviewmd);
}

/* watch --cycle-dir: each DIR is a workspace, and the template's expansion
 * below it is watched (created after the watch started is fine). */
static const char *cycle_dir_script =
	"R=$1; T=$2\n"
	"\"$R\" watch \"$T/ws\" --cycle-dir '.forge/reviews/{task_key}__{skill}' --step implement_task"
	" --task-key DEMO-1 --log-format json --poll-interval 0.05 > \"$T/out\" 2> \"$T/err\" &\n"
	"pid=$!\n"
	"wl() { i=0; while ! grep -q \"$1\" \"$2\"; do i=$((i+1)); [ $i -gt 2000 ] && exit 9; sleep 0.01; done; }\n"
	"wl watch_start \"$T/err\"\n"
	"d=\"$T/ws/.forge/reviews/DEMO-1__implement-task\"; mkdir -p \"$d\"\n"
	"printf '{\"cycle\":1,\"max_cycles\":3,\"verdict\":\"approved\",\"feedback\":\"\",'"
	"'\"skill\":\"implement-task\",\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\"}' > \"$d/.t\"\n"
	"mv \"$d/.t\" \"$d/review_cycle_1.json\"\n"
	"wl review_cycle_1.json \"$T/out\"\n"
	"kill -TERM $pid; wait $pid; echo rc=$?\n";

Test(runner_tools, watch_cycle_dir_watches_the_template_below_each_workspace)
{
	char *dir = fgt_tmpdir();
	const char *argv[] = { "/bin/sh", "-c", cycle_dir_script, "sh", FG_RUNNER_BIN, dir, NULL };
	struct fgt_proc p;
	char *ws = fgt_fmt("%s/ws", dir), *out, *err;

	cr_assert_eq(mkdir(ws, 0755), 0);
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 40), 0);
	out = fge_read_in(dir, "out");
	err = fge_read_in(dir, "err");
	cr_assert_not_null(strstr(p.out, "rc=0"), "out: %s err: %s", out, err);
	cr_assert_eq(count_lines_with(out, "\"event\":\"review_cycle\""), 1, "%s", out);
	cr_assert_not_null(strstr(err, "ws/.forge/reviews/DEMO-1__implement-task"), "%s", err);
	/* Issue 25: the step is --step, the directory is cycle_dir. */
	cr_assert_not_null(strstr(out, "\"step\":\"implement_task\""), "%s", out);
	cr_assert_not_null(strstr(out, "/ws/.forge/reviews/DEMO-1__implement-task\""), "%s", out);
	free(out);
	free(err);
	free(ws);
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(dir);
}

Test(runner_tools, watch_cycle_dir_needs_a_step_and_a_safe_template)
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
