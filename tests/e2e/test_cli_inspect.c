/*
 * test_cli_inspect.c - resolve, config, verdict, lint, --help and
 * --version of the real forge-entrypoint: outputs and exit codes.
 */
#include <regex.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fge2e.h"
#include "forge/alloc.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(cli_inspect, .timeout = 60);

static void run(struct fgt_proc *p, const char *const *argv, const char *const *env, const char *in)
{
	cr_assert_eq(fgt_run(p, argv, env, NULL, in, 30), 0);
	cr_assert(!p->timed_out);
}

static cJSON *out_json(const struct fgt_proc *p)
{
	cJSON *j = cJSON_Parse(p->out);

	cr_assert(j, "not JSON: %s", p->out);
	return j;
}

Test(cli_inspect, resolve_prints_path_and_exit_codes)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "Default.\n");
	fgw_review_md(&w, "abc", "Project.\n");
	const char *a1[] = { FG_ENTRYPOINT_BIN, "resolve", "--skills-dir", w.skills, "--skill", "impl",
			     "--ticket", "ABC-7", NULL };
	run(&p, a1, NULL, NULL);
	fgt_assert_exit(&p, 0);
	char *want = fgt_fmt("%s/abc/impl/review.md\n", w.skills);
	cr_assert_str_eq(p.out, want);
	fgt_proc_release(&p);
	free(want);

	const char *a2[] = { FG_ENTRYPOINT_BIN, "resolve", "--skills-dir", w.skills, "--skill", "impl", NULL };
	run(&p, a2, NULL, NULL);
	cr_assert_eq(p.exit_code, 0);
	want = fgt_fmt("%s/default/impl/review.md\n", w.skills);
	cr_assert_str_eq(p.out, want);
	fgt_proc_release(&p);
	free(want);

	const char *a3[] = { FG_ENTRYPOINT_BIN, "resolve", "--skills-dir", w.skills, "--skill", "other", NULL };
	run(&p, a3, NULL, NULL);
	cr_assert_eq(p.exit_code, 1);
	cr_assert_str_eq(p.out, "");
	want = fgt_fmt("forge-entrypoint: no review.md for skill 'other' (tried '%s/default/other/review.md')\n",
		       w.skills);
	cr_assert(strstr(p.err, want), "%s", p.err);
	free(want);
	fgt_proc_release(&p);

	const char *a4[] = { FG_ENTRYPOINT_BIN, "resolve", "--skills-dir", w.skills, "--skill", "../impl", NULL };
	run(&p, a4, NULL, NULL);
	cr_assert_eq(p.exit_code, 2);
	cr_assert_str_eq(p.out, "");
	fgt_proc_release(&p);

	const char *a5[] = { FG_ENTRYPOINT_BIN, "resolve", "--skills-dir", w.skills, "--skill", "impl",
			     "--ticket", "../../etc-1", NULL };
	run(&p, a5, NULL, NULL);
	cr_assert_eq(p.exit_code, 2);
	fgt_proc_release(&p);

	const char *a6[] = { FG_ENTRYPOINT_BIN, "resolve", "--skills-dir", w.skills, NULL };
	run(&p, a6, NULL, NULL);
	cr_assert_eq(p.exit_code, 2);
	cr_assert(strstr(p.err, "try 'forge-entrypoint resolve --help'"), "%s", p.err);
	fgw_release_run(&w, &p);
}

Test(cli_inspect, config_prints_resolved_json)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, NULL);
	fgw_write(&w, "review.md", "---\nmax_retries: 5\n---\nBe strict.\n");
	char *f = fgw_path(&w, "review.md");
	const char *argv[] = { FG_ENTRYPOINT_BIN, "config", f, NULL };
	const char *unset[] = { "AUTO_REVIEW_MAX_RETRIES", NULL };
	run(&p, argv, unset, NULL);
	fgt_assert_exit(&p, 0);
	cJSON *j = out_json(&p);
	cr_assert_eq(fge_jint(j, "max_retries"), 5);
	cr_assert_str_eq(fge_jstr(j, "instructions"), "Be strict.");
	cr_assert(cJSON_IsArray(cJSON_GetObjectItem(j, "warnings")));
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "warnings")), 0);
	cJSON_Delete(j);
	fgt_proc_release(&p);

	/* The global switch wins; an invalid field warns and falls back. */
	const char *off[] = { "AUTO_REVIEW_MAX_RETRIES=0", NULL };
	run(&p, argv, off, NULL);
	j = out_json(&p);
	cr_assert_eq(fge_jint(j, "max_retries"), 0);
	cJSON_Delete(j);
	fgt_proc_release(&p);

	fgt_write(f, "---\nmax_retries: \"7\"\n---\nBody\n");
	run(&p, argv, unset, NULL);
	cr_assert_eq(p.exit_code, 0);
	j = out_json(&p);
	cr_assert_eq(fge_jint(j, "max_retries"), 3);
	cr_assert_gt(cJSON_GetArraySize(cJSON_GetObjectItem(j, "warnings")), 0);
	cJSON_Delete(j);
	fgt_proc_release(&p);

	/* A typo of a known field warns in config, with "did you mean". */
	fgt_write(f, "---\nmax_retires: 1\n---\nBody\n");
	run(&p, argv, unset, NULL);
	cr_assert_eq(p.exit_code, 0);
	j = out_json(&p);
	cr_assert_eq(fge_jint(j, "max_retries"), 3);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "warnings")), 1);
	char *wtext = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "warnings"));
	cr_assert(strstr(wtext, "unknown field 'max_retires' is ignored (did you mean 'max_retries'?)"), "%s", wtext);
	cJSON_free(wtext);
	cJSON_Delete(j);
	fgt_proc_release(&p);

	/* The checks as run would run them (the invalid one skipped
	 * with a warning), stop_when_stalled and require_evidence resolved. */
	fgt_write(f, "---\nstop_when_stalled: true\nrequire_evidence: true\nchecks:\n"
		     "  - name: tests\n    run: sh -c 'make test'\n    timeout_seconds: 90\n"
		     "  - name: lint\n    run: ./lint.sh {workspace}\n  - name: Bad Name\n    run: true\n---\nBody\n");
	run(&p, argv, unset, NULL);
	fgt_assert_exit(&p, 0);
	j = out_json(&p);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "stop_when_stalled")));
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "require_evidence")));
	char *ctext = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "checks"));
	cr_assert_str_eq(ctext, "[{\"name\":\"tests\",\"run\":\"sh -c 'make test'\",\"timeout_seconds\":90},"
				"{\"name\":\"lint\",\"run\":\"./lint.sh {workspace}\",\"timeout_seconds\":600}]");
	cJSON_free(ctext);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "warnings")), 1);
	cJSON_Delete(j);
	fgt_proc_release(&p);
	const char *stall_env[] = { "AUTO_REVIEW_MAX_RETRIES", "AUTO_REVIEW_STOP_WHEN_STALLED=1", NULL };
	fgt_write(f, "---\nmax_retries: 2\n---\nBody\n");
	run(&p, argv, stall_env, NULL);
	j = out_json(&p);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "stop_when_stalled")), "the environment's value when review.md is silent");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "checks")), 0);
	cJSON_Delete(j);
	fgt_proc_release(&p);

	const char *missing[] = { FG_ENTRYPOINT_BIN, "config", "/nonexistent/review.md", NULL };
	run(&p, missing, NULL, NULL);
	cr_assert_eq(p.exit_code, 2);
	fgt_proc_release(&p);
	/* Without FILE: only the agents, as run would resolve them. */
	const char *none[] = { FG_ENTRYPOINT_BIN, "config", NULL };
	const char *agents[] = { "FORGE_WORKER_AGENT=codex", "FORGE_REVIEWER_AGENT=claude",
				 "FORGE_REVIEWER_OUTPUT=text", "FORGE_WORKER_CMD=my-worker --x",
				 "FORGE_REVIEWER_CMD", "FORGE_WORKER_OUTPUT", NULL };
	run(&p, none, agents, NULL);
	fgt_assert_exit(&p, 0);
	j = out_json(&p);
	cr_assert_null(cJSON_GetObjectItem(j, "max_retries"));
	const cJSON *wk = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "agents"), "worker");
	const cJSON *rv = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "agents"), "reviewer");
	/* An explicit command wins over the preset; the preset's format stays. */
	fge_assert_strs(wk, "command", "my-worker --x", "output", "codex");
	cr_assert_str_eq(fge_jstr(rv, "command"),
			 "claude -p --output-format stream-json --verbose --append-system-prompt "
			 "{system_prompt} --setting-sources user --strict-mcp-config "
			 "--allowedTools Bash,Read,Glob,Grep --disallowedTools Edit,Write,NotebookEdit");
	fge_assert_strs(rv, "output", "text", "preset", "claude");
	cJSON_Delete(j);
	fgt_proc_release(&p);
	const char *bad[] = { "FORGE_REVIEWER_AGENT=claude-code", NULL };
	run(&p, none, bad, NULL);
	cr_assert_eq(p.exit_code, 2);
	cr_assert(strstr(p.err, "invalid FORGE_REVIEWER_AGENT 'claude-code'"), "%s", p.err);
	fgt_proc_release(&p);
	free(f);
	fgw_release(&w);
}

/* Writes a review.md of len bytes: frontmatter with a value nested depth
 * brackets deep, then a body padded with 'b' up to len. */
static void write_bomb(const char *path, size_t depth, size_t len)
{
	static const char head[] = "---\nmax_retries: 1\nx: ";
	static const char tail[] = "\n---\nBody.\n";
	size_t k = 0;
	char *s = malloc(len);

	cr_assert(s && len >= sizeof(head) + 2 * depth + sizeof(tail));
	memcpy(s, head, sizeof(head) - 1);
	k += sizeof(head) - 1;
	memset(s + k, '[', depth);
	k += depth;
	memset(s + k, ']', depth);
	k += depth;
	memcpy(s + k, tail, sizeof(tail) - 1);
	k += sizeof(tail) - 1;
	memset(s + k, 'b', len - k);
	fgt_write_bytes(path, s, len);
	free(s);
}

/* A nesting bomb in the frontmatter is malformed YAML:
 * config warns and uses the defaults, lint reports it; both return (the
 * suite's timeout guards against the former minutes-long parse). */
Test(cli_inspect, nesting_bomb_config_and_lint_return)
{
	static const size_t sizes[][2] = { { 200000, 400100 }, { 500000, 1024 * 1024 } };
	const char *unset[] = { "AUTO_REVIEW_MAX_RETRIES", NULL };
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, NULL);
	char *f = fgt_fmt("%s/review.md", w.root);
	for (size_t i = 0; i < 2; i++) {
		write_bomb(f, sizes[i][0], sizes[i][1]);
		const char *cfg[] = { FG_ENTRYPOINT_BIN, "config", f, NULL };
		run(&p, cfg, unset, NULL);
		fgt_assert_exit(&p, 0);
		cJSON *j = out_json(&p);
		cJSON *warn = cJSON_GetObjectItem(j, "warnings");
		cr_assert_eq(fge_jint(j, "max_retries"), 3, "defaults are used");
		cr_assert_eq(strncmp(fge_jstr(j, "instructions"), "Body.\nbbb", 9), 0);
		cr_assert_eq(cJSON_GetArraySize(warn), 1);
		char *text = cJSON_PrintUnformatted(warn);
		cr_assert(strstr(text, "nested deeper than 64 levels"), "%s", p.out);
		cJSON_free(text);
		cJSON_Delete(j);
		fgt_proc_release(&p);

		const char *lint[] = { FG_ENTRYPOINT_BIN, "lint", f, NULL };
		run(&p, lint, NULL, NULL);
		cr_assert_eq(p.exit_code, 1, "%s", p.out);
		cr_assert(strstr(p.out, "error: malformed YAML in the frontmatter (nested deeper than 64 levels)"),
			  "%s", p.out);
		fgt_proc_release(&p);
	}
	free(f);
	fgw_release(&w);
}

Test(cli_inspect, verdict_reads_stdin_and_files)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, NULL);
	const char *in[] = { FG_ENTRYPOINT_BIN, "verdict", NULL };
	run(&p, in, NULL, "Nice work.\nAPPROVED\n");
	cr_assert_eq(p.exit_code, 0);
	cJSON *j = out_json(&p);
	fge_assert_strs(j, "verdict", "approved", "feedback", "", "format", "marker");
	cr_assert_null(cJSON_GetObjectItem(j, "findings"));
	cJSON_Delete(j);
	fgt_proc_release(&p);

	char *f = fgt_fmt("%s/out.txt", w.root);
	fgt_write(f, "Summary\n```json\n{\"verdict\": \"request_changes\", \"findings\": [{\"severity\": \"BLOCKING\", "
		     "\"ordinal\": 1, \"filePath\": \"a.c\", \"line\": 3, \"title\": \"Leak\", \"description\": \"d\", "
		     "\"evidence\": \"e\", \"fix\": \"f\"}]}\n```\n");
	const char *file[] = { FG_ENTRYPOINT_BIN, "verdict", f, NULL };
	run(&p, file, NULL, NULL);
	cr_assert_eq(p.exit_code, 0);
	j = out_json(&p);
	fge_assert_strs(j, "verdict", "rejected", "format", "json_shadow");
	cJSON *fs = cJSON_GetObjectItem(j, "findings");
	cr_assert(cJSON_IsArray(fs) && cJSON_GetArraySize(fs) == 1);
	cr_assert_str_eq(fge_jstr(cJSON_GetArrayItem(fs, 0), "filePath"), "a.c");
	cJSON_Delete(j);
	fgt_proc_release(&p);

	const char *missing[] = { FG_ENTRYPOINT_BIN, "verdict", "/nonexistent/out.txt", NULL };
	run(&p, missing, NULL, NULL);
	cr_assert_eq(p.exit_code, 2);
	fgt_proc_release(&p);
	free(f);
	fgw_release(&w);
}

Test(cli_inspect, verdict_of_fifty_megabytes)
{
	struct fgw w;
	struct fgt_proc p;
	size_t n = 50u * 1024 * 1024;
	char *big = malloc(n + 64);

	fgw_init_step(&w, NULL);
	memset(big, 'x', n);
	for (size_t i = 80; i < n; i += 81)
		big[i] = '\n';
	memcpy(big + n, "\nREJECTED: too big\n", 20);
	char *f = fgt_fmt("%s/big.txt", w.root);
	fgt_write(f, big);
	const char *argv[] = { FG_ENTRYPOINT_BIN, "verdict", f, NULL };
	run(&p, argv, NULL, NULL);
	fgt_assert_exit(&p, 0);
	cJSON *j = out_json(&p);
	fge_assert_strs(j, "verdict", "rejected", "feedback", "too big");
	cJSON_Delete(j);
	fgt_proc_release(&p);
	free(f);
	free(big);
	fgw_release(&w);
}

Test(cli_inspect, lint_reports_path_line_and_walks_directories)
{
	struct fgw w;
	struct fgt_proc p;
	regex_t re;

	fgw_init_step(&w, "---\nmax_retries: 2\n---\nGood.\n");
	fgw_review_md(&w, "abc", "---\nmax_retries: -1\n---\nBad.\n");
	const char *argv[] = { FG_ENTRYPOINT_BIN, "lint", w.skills, NULL };
	run(&p, argv, NULL, NULL);
	cr_assert_eq(p.exit_code, 1, "out:\n%s", p.out);
	char *want = fgt_fmt("%s/abc/impl/review.md:2: error: ", w.skills);
	cr_assert(strstr(p.out, want), "out:\n%s", p.out);
	cr_assert_eq(regcomp(&re, "^[^\n]+:[0-9]+: (error|warning): [^\n]+$", REG_EXTENDED | REG_NEWLINE), 0);
	for (char *s = p.out, *nl; *s; s = nl + 1) {
		nl = strchr(s, '\n');
		cr_assert(nl);
		*nl = '\0';
		cr_assert_eq(regexec(&re, s, 0, NULL, 0), 0, "bad lint line: %s", s);
		cr_assert(!strstr(s, "default/impl"), "the good file has no problem: %s", s);
	}
	regfree(&re);
	free(want);
	fgt_proc_release(&p);

	char *good = fgt_fmt("%s/default/impl/review.md", w.skills);
	const char *one[] = { FG_ENTRYPOINT_BIN, "lint", good, NULL };
	run(&p, one, NULL, NULL);
	cr_assert_eq(p.exit_code, 0, "out:\n%s", p.out);
	cr_assert_str_eq(p.out, "");
	fgt_proc_release(&p);
	free(good);

	const char *none[] = { FG_ENTRYPOINT_BIN, "lint", NULL };
	run(&p, none, NULL, NULL);
	cr_assert_eq(p.exit_code, 2);
	fgt_proc_release(&p);
	const char *missing[] = { FG_ENTRYPOINT_BIN, "lint", "/nonexistent/review.md", NULL };
	run(&p, missing, NULL, NULL);
	cr_assert_eq(p.exit_code, 1);
	cr_assert(strstr(p.out, "/nonexistent/review.md:1: error: "), "%s", p.out);
	fgw_release_run(&w, &p);
}

/* Lint on a directory ignored a Review.md or reviews.md beside a
 * skill, which the resolver never reads: the skill was silently unreviewed. */
Test(cli_inspect, lint_directory_reports_misnamed_review_files)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "Good.\n");
	char *upper = fgt_fmt("%s/default/add-license/Review.md", w.skills);
	char *plural = fgt_fmt("%s/default/fix-bugs/reviews.md", w.skills);
	char *other = fgt_fmt("%s/default/fix-bugs/README.md", w.skills);
	fgt_write(upper, "Check.\n");
	fgt_write(plural, "Check.\n");
	fgt_write(other, "Not a review file.\n");
	const char *argv[] = { FG_ENTRYPOINT_BIN, "lint", w.skills, NULL };
	run(&p, argv, NULL, NULL);
	cr_assert_eq(p.exit_code, 1, "out:\n%s", p.out);
	char *want1 = fgt_fmt("%s:1: error: a review file must be named exactly 'review.md'", upper);
	char *want2 = fgt_fmt("%s:1: error: a review file must be named exactly 'review.md'", plural);
	fgt_assert_has(p.out, want1, want2);
	cr_assert(!strstr(p.out, "README.md"), "out:\n%s", p.out);
	cr_assert(!strstr(p.out, "impl/review.md"), "the good file has no problem:\n%s", p.out);
	free(want1);
	free(want2);
	free(upper);
	free(plural);
	free(other);
	fgw_release_run(&w, &p);
}

/* Lint said nothing about skills/fix-tests/review.md, which the
 * lookup never reads (no default/ or project directory). Each unreachable
 * review.md is an error with the path it should have; reachable ones
 * (default/, a project directory) are not. */
Test(cli_inspect, lint_reports_a_review_md_the_lookup_never_finds)
{
	static const struct {
		const char *rel, *should;   /* should: NULL when reachable */
	} cases[] = {
		{ "default/impl/review.md", NULL },
		{ "demo/impl/review.md", NULL },
		{ "fix-tests/review.md", "default/fix-tests/review.md" },
		{ "Proj/x/review.md", "proj/x/review.md" },
		{ "default/a/b/review.md", "default/b/review.md" },
	};
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *f = fgt_fmt("%s/%s", w.skills, cases[i].rel);

		fgt_write(f, "Check.\n");
		free(f);
	}
	const char *argv[] = { FG_ENTRYPOINT_BIN, "lint", w.skills, NULL };
	run(&p, argv, NULL, NULL);
	cr_assert_eq(p.exit_code, 1, "out:\n%s", p.out);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *line = fgt_fmt("%s/%s:1: error: the lookup never finds this review.md", w.skills, cases[i].rel);

		if (cases[i].should) {
			char *should = fgt_fmt("it should be '%s/%s'", w.skills, cases[i].should);

			cr_expect_not_null(strstr(p.out, line), "case %zu:\n%s", i, p.out);
			cr_expect_not_null(strstr(p.out, should), "case %zu:\n%s", i, p.out);
			free(should);
		} else {
			cr_expect_null(strstr(p.out, line), "case %zu is reachable:\n%s", i, p.out);
		}
		free(line);
	}
	fgw_release_run(&w, &p);
}

/* A new skills directory with no default/ yet: SKILLS/SKILL/review.md is
 * never read either, and lint says so (it said nothing: only a directory
 * holding default/ was checked as a skills root). Linting default/ itself,
 * or a project's directory, is not that mistake. */
Test(cli_inspect, lint_a_skills_dir_without_default_names_the_path_it_wants)
{
	struct fgw w;
	struct fgt_proc p;
	char *f, *line, *should, *dflt;

	fgw_init_step(&w, NULL);
	f = fgt_fmt("%s/implement-task/review.md", w.skills);
	fgt_write(f, "Check.\n");
	const char *argv[] = { FG_ENTRYPOINT_BIN, "lint", w.skills, NULL };
	run(&p, argv, NULL, NULL);
	cr_assert_eq(p.exit_code, 1, "out:\n%s", p.out);
	line = fgt_fmt("%s:1: error: the lookup never finds this review.md", f);
	should = fgt_fmt("it should be '%s/default/implement-task/review.md'", w.skills);
	fgt_assert_has(p.out, line, should);
	fgt_proc_release(&p);

	dflt = fgt_fmt("%s/default/plan/review.md", w.skills);
	fgt_write(dflt, "Check.\n");
	free(dflt);
	dflt = fgt_fmt("%s/default", w.skills);
	const char *own[] = { FG_ENTRYPOINT_BIN, "lint", dflt, NULL };
	run(&p, own, NULL, NULL);
	cr_assert_eq(p.exit_code, 0, "linting default/ itself:\n%s", p.out);
	cr_assert_str_eq(p.out, "");
	fgt_proc_release(&p);
	free(dflt);
	free(line);
	free(should);
	free(f);
	fgw_release(&w);
}

Test(cli_inspect, help_lists_every_option_and_version)
{
	struct fgt_proc p;
	const char *help[] = { FG_ENTRYPOINT_BIN, "--help", NULL };
	const char *opts[] = { "--task-file", "--workspace", "--skills-dir", "--step", "--skill", "--task-key",
			       "FORGE_WORKER_CMD", "FORGE_REVIEWER_CMD", "FORGE_AGENT_TIMEOUT",
			       "FORGE_AGENT_IDLE_TIMEOUT", "FORGE_AGENT_KILL_GRACE", "FORGE_RUN_ID",
			       "AUTO_REVIEW_MAX_RETRIES", "AUTO_REVIEW_FAIL_ON_EXHAUSTION", "resolve", "config",
			       "verdict", "lint", "--version", NULL };

	run(&p, help, NULL, NULL);
	cr_assert_eq(p.exit_code, 0);
	for (size_t i = 0; opts[i]; i++)
		cr_assert(strstr(p.out, opts[i]), "--help lacks %s", opts[i]);
	/* The global options came as a stray second "usage:" block. */
	cr_assert(!strstr(p.out, "usage: forge-entrypoint --help"), "%s", p.out);
	cr_assert(!strstr(p.out, "Global options."), "%s", p.out);
	fgt_assert_has(p.out, "\n\nglobal options:\n  -h, --help ", "\n  -V, --version ");
	fgt_proc_release(&p);

	const char *ver[] = { FG_ENTRYPOINT_BIN, "--version", NULL };
	run(&p, ver, NULL, NULL);
	cr_assert_eq(p.exit_code, 0);
	cr_assert(!strncmp(p.out, "forge-entrypoint ", 17), "%s", p.out);
	fgt_proc_release(&p);

	const char *sub[] = { FG_ENTRYPOINT_BIN, "resolve", "--help", NULL };
	run(&p, sub, NULL, NULL);
	cr_assert_eq(p.exit_code, 0);
	cr_assert(strstr(p.out, "--ticket"));
	fgt_proc_release(&p);

	const char *bad[] = { FG_ENTRYPOINT_BIN, "frobnicate", NULL };
	run(&p, bad, NULL, NULL);
	cr_assert_eq(p.exit_code, 2);
	cr_assert(strstr(p.err, "forge-entrypoint: unknown command 'frobnicate'"), "%s", p.err);
	cr_assert(strstr(p.err, "try 'forge-entrypoint --help'"));
	fgt_proc_release(&p);
}

/* review.md audit: in config (null without it, else what it resolved to,
 * the file's text read beside review.md) and in lint (a bad member, the
 * reserved role name). */
Test(cli_inspect, config_and_lint_know_the_audit)
{
	struct fgw w;
	struct fgt_proc p;
	cJSON *j;
	const cJSON *a;

	fgw_init(&w);
	char *dir = fgt_fmt("%s/sk", w.root);
	char *f = fgt_fmt("%s/review.md", dir), *af = fgt_fmt("%s/hunt.md", dir);
	const char *argv[] = { FG_ENTRYPOINT_BIN, "config", f, NULL };
	const char *lint[] = { FG_ENTRYPOINT_BIN, "lint", f, NULL };

	fgt_write(f, "---\nmax_retries: 2\n---\nBe strict.\n");
	run(&p, argv, NULL, NULL);
	j = out_json(&p);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "audit")), "%s", p.out);
	cJSON_Delete(j);
	fgt_proc_release(&p);
	fgt_write(af, "Hunt for off-by-one errors.\n");
	fgt_write(f, "---\naudit:\n  instructions: hunt.md\n  sample: 0.25\n  blocks: true\n---\nBe strict.\n");
	run(&p, argv, NULL, NULL);
	fgt_assert_exit(&p, 0);
	j = out_json(&p);
	a = cJSON_GetObjectItem(j, "audit");
	cr_assert(cJSON_IsObject(a), "%s", p.out);
	fge_assert_strs(a, "instructions_file", "hunt.md", "instructions", "Hunt for off-by-one errors.");
	cr_assert_float_eq(cJSON_GetObjectItem(a, "sample")->valuedouble, 0.25, 1e-12);
	cr_assert(fge_jtrue(a, "blocks"));
	cJSON_Delete(j);
	fgt_proc_release(&p);
	run(&p, lint, NULL, NULL);
	cr_assert_eq(p.exit_code, 0, "%s%s", p.out, p.err);
	fgt_proc_release(&p);
	fgt_write(f, "---\naudit:\n  sample: 2\nreviewers:\n  - role: audit\n---\nBe strict.\n");
	run(&p, lint, NULL, NULL);
	cr_assert_eq(p.exit_code, 1, "%s%s", p.out, p.err);
	fgt_assert_has(p.out, ":3: error: invalid 'audit.sample' value '2'",
		       ":5: error: invalid 'reviewers' entry: role 'audit' is reserved");
	fgt_proc_release(&p);
	FG_FREE_ALL(dir, f, af);
	fgw_release(&w);
}
