/*
 * test_report.c - `forge-runner report`: merging result files by
 * {task_key}__{step}, the newer-wins rule for a repeated key and its
 * warning, JSON parsed back, the exit codes for unreadable and invalid
 * input, the command line, every review state and the bounds on a large
 * result. The Markdown output: test_report_markdown.c. rn_cmd_report() is
 * called directly with stdout and stderr redirected to files.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgtest.h"
#include "forge/buf.h"
#include "report.h"

#include "report_sample.h"
#include "../common/tmp_fixture.h"

TestSuite(report, .init = tmp_init, .fini = tmp_fini, .timeout = 30);

Test(report, merges_two_exhausted_steps_of_one_task_and_a_third_of_another)
{
	char *dir = fgt_tmpdir(), *p[3];
	struct cap c;
	cJSON *root;
	const cJSON *entries, *e, *cycles;

	write_three(dir, p);
	c = run_report(dir, (char *[]){ "report", p[0], p[1], p[2], NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	cr_assert_str_eq(c.err, "");
	root = cJSON_Parse(c.out);
	cr_assert_not_null(root, "not JSON: %s", c.out);
	entries = get(root, "entries");
	cr_assert_eq(cJSON_GetArraySize(entries), 3);
	/* Sorted by key. */
	cr_assert_str_eq(entries->child->string, "DEMO-1__fix_ci");
	cr_assert_str_eq(entries->child->next->string, "DEMO-1__implement_task");
	cr_assert_str_eq(entries->child->next->next->string, "DEMO-2__implement_task");
	cr_assert_eq(cJSON_GetArraySize(get(root, "warnings")), 0);

	e = get(entries, "DEMO-1__fix_ci");
	cr_assert_str_eq(get(e, "task_key")->valuestring, "DEMO-1");
	cr_assert_str_eq(get(e, "step")->valuestring, "fix_ci");
	cr_assert_str_eq(get(e, "skill")->valuestring, "implement-task");
	cr_assert_str_eq(get(e, "run_id")->valuestring, "run-1");
	cr_assert_str_eq(get(e, "state")->valuestring, "exhausted");
	cr_assert(cJSON_IsTrue(get(e, "exhausted")));
	cr_assert_str_eq(get(e, "open_feedback")->valuestring, "Lint | format still failing\nsecond line");
	cr_assert_str_eq(get(e, "source")->valuestring, p[1]);
	cycles = get(e, "cycles");
	cr_assert_eq(cJSON_GetArraySize(cycles), 2);
	cr_assert_eq(get(cycles->child, "cycle")->valueint, 1);
	cr_assert_eq(get(cycles->child, "max_cycles")->valueint, 2);
	cr_assert_str_eq(get(cycles->child, "verdict")->valuestring, "rejected");
	cr_assert_str_eq(get(cycles->child, "feedback")->valuestring, "CI fails on lint");
	cr_assert_str_eq(get(cycles->child, "timestamp")->valuestring, "2026-01-15T10:00:00Z");

	e = get(entries, "DEMO-1__implement_task");
	cr_assert_str_eq(get(e, "open_feedback")->valuestring, "Still no tests");
	cr_assert_str_eq(get(e, "source")->valuestring, p[0]);
	e = get(entries, "DEMO-2__implement_task");
	cr_assert_str_eq(get(e, "task_key")->valuestring, "DEMO-2");
	cr_assert_str_eq(get(e, "open_feedback")->valuestring, "Docs incomplete");
	cr_assert_str_eq(get(e, "source")->valuestring, p[2]);

	cJSON_Delete(root);
	cap_release(&c);
	free_paths(p, 3);
	fgt_rm_rf(dir);
	free(dir);
}

/* Writes one exhausted DEMO-1__implement_task result whose last cycle ends at ts. */
static char *write_dup(const char *dir, const char *name, const char *fb, const char *ts)
{
	char *cy = exhausted_cycles("first", fb, ts);
	char *p = write_result(dir, name, "DEMO-1", "implement_task", "exhausted", 1, cy);

	free(cy);
	return p;
}

static const cJSON *only_entry(const cJSON *root)
{
	const cJSON *entries = get(root, "entries");

	cr_assert_eq(cJSON_GetArraySize(entries), 1);
	return get(entries, "DEMO-1__implement_task");
}

/* Reports argv, expecting exit 0, the one entry from source and that many
 * warnings. */
static void expect_kept(char **argv, const char *source, int warnings)
{
	struct cap c = run_report(tmp_dir, argv);
	cJSON *root;

	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	root = cJSON_Parse(c.out);
	cr_assert_not_null(root, "%s", c.out);
	cr_assert_str_eq(get(only_entry(root), "source")->valuestring, source);
	cr_assert_eq(cJSON_GetArraySize(get(root, "warnings")), warnings);
	cJSON_Delete(root);
	cap_release(&c);
}

Test(report, same_key_twice_keeps_the_newer_and_says_so)
{
	char *old = write_dup(tmp_dir, "old.json", "old feedback", "2026-01-15T10:05:00Z");
	char *new = write_dup(tmp_dir, "new.json", "new feedback", "2026-01-15T11:05:00Z");
	char *other = write_dup(tmp_dir, "other.json", "x", "2026-01-15T09:00:00Z");
	char *want;
	struct cap c;
	cJSON *root;
	const cJSON *w;

	/* The newer one named first: it must survive the older one named later. */
	c = run_report(tmp_dir, (char *[]){ "report", new, old, NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	root = cJSON_Parse(c.out);
	cr_assert_not_null(root);
	cr_assert_str_eq(get(only_entry(root), "open_feedback")->valuestring, "new feedback");
	cr_assert_str_eq(get(only_entry(root), "source")->valuestring, new);
	want = fgt_fmt("duplicate key 'DEMO-1__implement_task': kept '%s' (its last cycle is newer: "
		       "2026-01-15T11:05:00Z after 2026-01-15T10:05:00Z), dropped '%s'", new, old);
	w = get(root, "warnings");
	cr_assert_eq(cJSON_GetArraySize(w), 1);
	cr_assert_str_eq(w->child->valuestring, want);
	cr_assert_not_null(strstr(c.err, want), "stderr: %s", c.err);
	cr_assert_eq(strncmp(c.err, "forge-runner: warning: ", 23), 0);
	cJSON_Delete(root);
	cap_release(&c);
	free(want);

	/* Same order the other way round: the newer named later replaces. */
	expect_kept((char *[]){ "report", old, new, NULL }, new, 1);
	/* A third, oldest copy: still one entry, one warning per duplicate. */
	expect_kept((char *[]){ "report", old, new, other, NULL }, new, 2);
	free(old);
	free(new);
	free(other);
}

Test(report, same_key_same_time_keeps_the_one_named_later)
{
	char *a = write_dup(tmp_dir, "a.json", "from a", "2026-01-15T10:05:00Z");
	char *b = write_dup(tmp_dir, "b.json", "from b", "2026-01-15T10:05:00Z");
	char *want;
	struct cap c;
	cJSON *root;

	c = run_report(tmp_dir, (char *[]){ "report", b, a, NULL });
	cr_assert_eq(c.code, 0);
	root = cJSON_Parse(c.out);
	cr_assert_str_eq(get(only_entry(root), "open_feedback")->valuestring, "from a");
	want = fgt_fmt("duplicate key 'DEMO-1__implement_task': kept '%s' (last cycles equally recent, "
		       "named later), dropped '%s'", a, b);
	cr_assert_str_eq(get(root, "warnings")->child->valuestring, want);
	cr_assert_not_null(strstr(c.err, want));
	cJSON_Delete(root);
	cap_release(&c);
	free(want);
	free(a);
	free(b);
}

Test(report, bad_inputs_are_skipped_named_and_exit_1)
{
	static const struct { const char *name; const char *content; const char *why; } cases[] = {
		{ "missing.json", NULL, "No such file or directory" },
		{ "garbage.json", "{\"step\": ", "not valid JSON" },
		{ "trailing.json", "{} x", "not valid JSON" },
		{ "empty.json", "", "not valid JSON" },
		{ "array.json", "[1, 2]", "not a result file: not a JSON object" },
		{ "nostep.json", "{\"review_state\": \"none\", \"review_cycles\": []}",
		  "not a result file: missing field 'step'" },
		{ "badstep.json", "{\"step\": \"../x\", \"review_state\": \"none\", \"review_cycles\": []}",
		  "not a result file: invalid step name" },
		{ "nostate.json", "{\"step\": \"s\", \"review_cycles\": []}",
		  "not a result file: missing field 'review_state'" },
		{ "badstate.json", "{\"step\": \"s\", \"review_state\": \"great\", \"review_cycles\": []}",
		  "not a result file: field 'review_state' must be one of" },
		{ "nocycles.json", "{\"step\": \"s\", \"review_state\": \"none\"}",
		  "not a result file: missing field 'review_cycles'" },
		{ "badcycle.json", "{\"step\": \"s\", \"review_state\": \"none\", \"review_cycles\": [{\"cycle\": 1}]}",
		  "not a result file: review_cycles[0]: missing field" },
		/* A directory: what report wants instead (a step directory is the usual slip). */
		{ "dir.d", NULL, "a directory: report reads result files, the --result FILE of 'forge-runner run'" },
	};
	char *good = write_dup(tmp_dir, "good.json", "open", "2026-01-15T10:05:00Z");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *path = tmp_path("%s", cases[i].name);
		char *want = fgt_fmt("forge-runner: warning: cannot read '%s': %s", path, cases[i].why);
		struct cap c;
		cJSON *root;

		if (cases[i].content)
			fgt_write(path, cases[i].content);
		if (!strcmp(cases[i].name, "dir.d"))
			cr_assert_eq(mkdir(path, 0700), 0);
		c = run_report(tmp_dir, (char *[]){ "report", path, good, NULL });
		cr_assert_eq(c.code, 1, "case %s: code %d", cases[i].name, c.code);
		cr_assert_not_null(strstr(c.err, want), "case %s: stderr: %s", cases[i].name, c.err);
		/* The good input is still reported, and the skip is in the warnings. */
		root = cJSON_Parse(c.out);
		cr_assert_not_null(root, "case %s: stdout: %s", cases[i].name, c.out);
		cr_assert_str_eq(get(only_entry(root), "source")->valuestring, good);
		cr_assert_not_null(strstr(get(root, "warnings")->child->valuestring, cases[i].why));
		cJSON_Delete(root);
		cap_release(&c);
		free(want);
	}
	free(good);
}

Test(report, only_bad_inputs_still_print_an_empty_report_and_exit_1)
{
	char *missing = tmp_path("nope.json");
	struct cap c = run_report(tmp_dir, (char *[]){ "report", "--format", "markdown", missing, NULL });

	cr_assert_eq(c.code, 1);
	cr_assert_str_eq(c.out, "## Auto-Review Notes\n\nNo auto-review results.\n");
	cap_release(&c);
}

Test(report, usage_errors_exit_2_and_write_nothing)
{
	static char *cases[][5] = {
		{ "report", NULL },
		{ "report", "--format", "pdf", "x.json", NULL },
		{ "report", "--bogus", "x.json", NULL },
		{ "report", "x.json", "--output", NULL },
		{ "report", "--only-open=yes", "x.json", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cap c = run_report(tmp_dir, cases[i]);

		cr_assert_eq(c.code, 2, "case %zu", i);
		cr_assert_str_eq(c.out, "", "case %zu", i);
		cr_assert_eq(strncmp(c.err, "forge-runner: error: report: ", 29), 0, "case %zu: %s", i, c.err);
		cr_assert_not_null(strstr(c.err, "try 'forge-runner report --help'"), "case %zu", i);
		cap_release(&c);
	}
}

Test(report, help_lists_every_option)
{
	struct cap c = run_report(tmp_dir, (char *[]){ "report", "--help", NULL });

	cr_assert_eq(c.code, 0);
	for (const struct fg_opt *o = rn_report_options; o->name; o++) {
		char *want = fgt_fmt("--%s", o->name);

		cr_assert_not_null(strstr(c.out, want), "--help lacks %s", want);
		free(want);
	}
	cap_release(&c);
}

Test(report, output_file_is_written_instead_of_stdout)
{
	char *dir = fgt_tmpdir(), *p[3];
	char *out = fgt_fmt("%s/notes.md", dir), *bad = fgt_fmt("%s/no/such/dir/x.md", dir);
	char *text;
	struct cap c;

	write_three(dir, p);
	c = run_report(dir, (char *[]){ "report", "--format", "markdown", "-o", out, p[0], p[1], p[2], NULL });
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	cr_assert_str_eq(c.out, "");
	text = fgt_read(out, NULL);
	cr_assert_not_null(text);
	cr_assert_eq(strncmp(text, "## Auto-Review Notes\n\n### DEMO-1 — fix_ci\n", 42), 0, "%s", text);
	cap_release(&c);
	free(text);

	c = run_report(dir, (char *[]){ "report", "--output", bad, p[0], NULL });
	cr_assert_eq(c.code, 125);
	cr_assert_not_null(strstr(c.err, "forge-runner: error: cannot write '"), "%s", c.err);
	cr_assert_eq(fgt_exists(bad), 0);
	cap_release(&c);
	free_paths(p, 3);
	free(out);
	free(bad);
	fgt_rm_rf(dir);
	free(dir);
}

/* Every review state a result can carry is read, written back by its one
 * name (the old result word "none" reads as no_review), and open unless
 * approved or without a review. */
Test(report, every_review_state_is_read_and_open_unless_settled)
{
	static const struct { const char *in, *out; bool open; } cases[] = {
		{ "approved", "approved", false },   { "exhausted", "exhausted", true },
		{ "stalled", "stalled", true },      { "blocked", "blocked", true },
		{ "over_budget", "over_budget", true }, { "failed", "failed", true },
		{ "disabled", "disabled", false },   { "no_review", "no_review", false },
		{ "none", "no_review", false },     /* a result of an older runner */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *step = fgt_fmt("step_%zu", i);
		char *p = write_result(tmp_dir, "r.json", NULL, step, cases[i].in, 0, "");
		struct cap c = run_report(tmp_dir, (char *[]){ "report", "--only-open", p, NULL });
		cJSON *o = cJSON_Parse(c.out), *e;
		char *key = fgt_fmt("__%s", step);

		cr_assert_eq(c.code, 0, "%s: %s", cases[i].in, c.err);
		cr_assert_not_null(o, "%s", c.out);
		e = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "entries"), key);
		cr_expect_eq(e != NULL, cases[i].open, "%s: %s", cases[i].in, c.out);
		cap_release(&c);
		cJSON_Delete(o);
		c = run_report(tmp_dir, (char *[]){ "report", p, NULL });
		o = cJSON_Parse(c.out);
		e = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "entries"), key);
		cr_assert_not_null(e, "%s", c.out);
		cr_expect_str_eq(cJSON_GetObjectItem(e, "state")->valuestring, cases[i].out);
		cJSON_Delete(o);
		cap_release(&c);
		free(key);
		free(p);
		free(step);
	}
}

/* A result as `run` writes it: n cycles, each with nf findings. */
static void write_big_result(const char *path, int n, int nf)
{
	struct rn_cycles cs;
	struct rn_result res = {
		.exit_code = 0, .step = "impl", .skill = "implement-task", .run_id = "0123456789abcdef",
		.engine = "local", .review_state = FG_STATE_EXHAUSTED, .review_exhausted = true,
	};

	rn_cycles_init(&cs);
	for (int k = 1; k <= n; k++) {
		struct fg_cycle c;

		fg_cycle_init(&c);
		c.cycle = k;
		c.max_cycles = n;
		c.j.verdict = FG_VERDICT_REJECTED;
		c.j.feedback = fgt_fmt("cycle %d: fix the findings", k);
		c.skill = strdup("implement-task");
		fg_time_iso_utc(c.timestamp, 1767225600 + k);
		c.j.has_findings = true;
		c.j.nfindings = (size_t)nf;
		c.j.findings = calloc((size_t)nf, sizeof(*c.j.findings));
		for (int i = 0; i < nf; i++) {
			struct fg_finding *f = &c.j.findings[i];

			f->severity = strdup(i % 2 ? "NOTE" : "BLOCKING");
			f->ordinal = i + 1;
			f->file_path = fgt_fmt("src/module_%d.c", i);
			f->line = i + 1;
			f->title = fgt_fmt("Finding %d of cycle %d", i, k);
			f->description = strdup("The function does not check its input.");
			f->evidence = strdup("if (p->len > max)");
			f->fix = strdup("Check the length first.");
		}
		cr_assert_eq(rn_cycles_put(&cs, &c, false, 0), 0, "cycle %d was dropped", k);
		fg_cycle_release(&c);
	}
	res.cycles = &cs;
	cr_assert_eq(rn_result_write(path, &res), 0);
	rn_cycles_release(&cs);
}

/* 40 cycles of 500 findings (3.6 MB, some 400,000 JSON tokens), a result
 * `run` may write, are read as JSON, not refused as "not valid JSON". */
Test(report, reads_a_result_of_40_cycles_of_500_findings)
{
	char *path = tmp_path("r.json");
	char *argv[] = { "report", path, NULL };
	struct cap c;
	cJSON *root;
	const cJSON *e;

	write_big_result(path, 40, 500);
	c = run_report(tmp_dir, argv);
	cr_assert_eq(c.code, 0, "stderr: %s", c.err);
	root = cJSON_Parse(c.out);
	cr_assert_not_null(root);
	e = get(get(root, "entries"), "__impl");
	cr_assert_eq(cJSON_GetArraySize(get(e, "cycles")), 40);
	cr_assert_str_eq(get(e, "state")->valuestring, "exhausted");
	cJSON_Delete(root);
	cap_release(&c);
}

/* A bound hit says which bound, never "not valid JSON". */
Test(report, a_bound_hit_says_so)
{
	char *path = tmp_path("deep.json");
	char *argv[] = { "report", path, NULL };
	size_t n = RN_RESULT_MAX_TOKENS + 10;
	char *doc = malloc(3 * n + 8), *p = doc;
	struct cap c;

	*p++ = '[';
	for (size_t i = 0; i < n; i++) {
		memcpy(p, "[],", 3);
		p += 3;
	}
	memcpy(p, "[]]", 4);
	fgt_write(path, doc);
	c = run_report(tmp_dir, argv);
	cr_assert_eq(c.code, 1, "stderr: %s", c.err);
	cr_assert_not_null(strstr(c.err, "more than 2162688 JSON tokens"), "stderr: %s", c.err);
	cr_assert_null(strstr(c.err, "not valid JSON"), "stderr: %s", c.err);
	cap_release(&c);
	free(doc);
}
