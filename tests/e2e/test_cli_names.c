/*
 * test_cli_names.c - hostile names and environment against both real
 * programs: step, skill and ticket names with '/', '..', NUL, newlines or
 * 10,000 characters (options, environment twins and the task file),
 * numbers that are not numbers, agent commands with unbalanced quotes.
 * Each is a clear message naming what is wrong and exit 2, with nothing run.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(cli_names, .timeout = 120);

/* Marks that an agent ran: a usage error must not get that far. */
static const char MARKER_AGENT[] = "echo ran >> \"$PWD/../agent_ran\"\necho APPROVED\n";

static char *long_name(void)
{
	char *s = malloc(10001);

	memset(s, 'a', 10000);
	s[10000] = '\0';
	return s;
}

static int agent_ran(const struct fgw *f)
{
	char *p = fgt_fmt("%s/agent_ran", f->root);
	int e = fgt_exists(p);

	free(p);
	return e;
}

/* Appends entry to envv unless its name is already there. */
static void push_env(const char **envv, size_t *ne, const char *entry)
{
	size_t n = strcspn(entry, "=");

	for (size_t i = 0; i < *ne; i++)
		if (strcspn(envv[i], "=") == n && !strncmp(envv[i], entry, n))
			return;
	envv[(*ne)++] = entry;
}

/* Runs prog (argv after the binary) with env; returns through p. */
static void run_prog(struct fgw *f, struct fgt_proc *p, const char *bin, const char *const *args,
		     const char *const *env)
{
	const char *argv[32];
	const char *envv[48];
	char *agent = fgw_script(f, "agent.sh", NULL, MARKER_AGENT);
	char *wenv = fgt_fmt("FORGE_WORKER_CMD=%s", agent);
	char *renv = fgt_fmt("FORGE_REVIEWER_CMD=%s", agent);
	size_t n = 0, ne = 0;

	argv[n++] = bin;
	for (size_t i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	/* fgtest keeps the first of duplicate names: the case's own values first. */
	for (size_t i = 0; env && env[i]; i++)
		push_env(envv, &ne, env[i]);
	for (size_t i = 0; FGW_BASE_ENV[i]; i++)
		push_env(envv, &ne, FGW_BASE_ENV[i]);
	push_env(envv, &ne, wenv);
	push_env(envv, &ne, renv);
	push_env(envv, &ne, "FORGE_ENTRYPOINT_BIN=" FG_ENTRYPOINT_BIN);
	envv[ne] = NULL;
	cr_assert_eq(fgt_run(p, argv, envv, f->root, NULL, 60), 0);
	cr_assert(!p->timed_out, "%s hung; stderr:\n%s", bin, p->err);
	free(agent);
	free(wenv);
	free(renv);
}

/* Exit 2, the message, and no agent run. */
static void expect_usage(const struct fgw *f, const struct fgt_proc *p, const char *label, const char *want)
{
	cr_expect_eq(p->exit_code, 2, "[%s] exit %d, want 2; stderr:\n%.2000s", label, p->exit_code, p->err);
	cr_expect_not_null(strstr(p->err, want), "[%s] stderr lacks '%s':\n%.2000s", label, want, p->err);
	cr_expect(!agent_ran(f), "[%s] an agent ran", label);
	/* One message, not a 10,000-byte echo of the input. */
	cr_expect_lt(p->err_len, 2048, "[%s] stderr is %zu bytes", label, p->err_len);
}

/* The three names, each with its option, its task file field and the
 * words of its error. */
enum name_kind { N_STEP, N_SKILL, N_KEY };
static const struct {
	const char *opt, *field, *want;
} NAMES[] = {
	[N_STEP] = { "--step", "step_name", "invalid step name" },
	[N_SKILL] = { "--skill", "skill_name", "invalid skill name" },
	[N_KEY] = { "--task-key", "task_key", "invalid task key" },
};

struct cli_case {
	enum name_kind kind;
	const char *value;   /* NULL: 10,000 characters */
};

static const struct cli_case CLI_CASES[] = {
	{ N_STEP, "a/b" },
	{ N_STEP, ".." },
	{ N_STEP, "../../etc" },
	{ N_STEP, "a\nb" },
	{ N_STEP, ".hidden" },
	{ N_STEP, NULL },
	{ N_SKILL, "x/../../y" },
	{ N_SKILL, ".." },
	{ N_SKILL, "a\nb" },
	{ N_SKILL, NULL },
	{ N_KEY, "ABC/12" },
	{ N_KEY, ".." },
	{ N_KEY, "ABC-12\nINFO fake" },
	{ N_KEY, NULL },
};

static void cli_case_run(const char *bin, int runner, const struct cli_case *c)
{
	struct fgw f;
	struct fgt_proc p;
	char *longv = long_name();
	const char *value = c->value ? c->value : longv;
	const char *args[24];
	size_t n = 0;

	fgw_init_runner(&f);
	args[n++] = "run";
	args[n++] = "--workspace"; args[n++] = f.ws;
	args[n++] = "--skills-dir"; args[n++] = f.skills;
	if (c->kind != N_STEP) {
		args[n++] = "--step"; args[n++] = "impl";
	}
	if (c->kind != N_KEY) {
		args[n++] = "--task-key"; args[n++] = "ABC-12";
	}
	args[n++] = NAMES[c->kind].opt;
	args[n++] = value;
	args[n] = NULL;
	run_prog(&f, &p, bin, args, NULL);
	expect_usage(&f, &p, NAMES[c->kind].opt, NAMES[c->kind].want);
	if (runner)
		cr_expect_not_null(strstr(p.err, "try 'forge-runner run --help'"), "stderr:\n%s", p.err);
	fgt_proc_release(&p);
	free(longv);
	fgw_release(&f);
}

Test(cli_names, entrypoint_names_on_the_command_line)
{
	for (size_t i = 0; i < sizeof(CLI_CASES) / sizeof(CLI_CASES[0]); i++)
		cli_case_run(FG_ENTRYPOINT_BIN, 0, &CLI_CASES[i]);
}

Test(cli_names, runner_names_on_the_command_line)
{
	for (size_t i = 0; i < sizeof(CLI_CASES) / sizeof(CLI_CASES[0]); i++)
		cli_case_run(FG_RUNNER_BIN, 1, &CLI_CASES[i]);
}

Test(cli_names, entrypoint_names_in_the_environment)
{
	static const struct { const char *env; const char *want; } cases[] = {
		{ "FORGE_STEP_NAME=../x", "invalid step name" },
		{ "FORGE_SKILL_NAME=a/b", "invalid skill name" },
		{ "FORGE_TASK_KEY=ABC-1\n2", "invalid task key" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fgw f;
		struct fgt_proc p;
		const char *args[] = { "run", "--workspace", NULL, "--skills-dir", NULL, "--task-file", NULL, NULL };
		const char *env[] = { cases[i].env, NULL };

		fgw_init_runner(&f);
		args[2] = f.ws;
		args[4] = f.skills;
		args[6] = f.task;
		run_prog(&f, &p, FG_ENTRYPOINT_BIN, args, env);
		expect_usage(&f, &p, cases[i].env, cases[i].want);
		fgt_proc_release(&p);
		fgw_release(&f);
	}
}

/* Task files: each field as raw JSON (already escaped). A NUL is refused for
 * the whole file (cJSON would truncate "impl\u0000/../x" to a valid name). */
struct json_case {
	enum name_kind kind;
	const char *json;    /* NULL: "aaaa..." of 10,000 characters */
	const char *want;    /* NULL: the name's own error */
};

static const struct json_case JSON_CASES[] = {
	{ N_STEP, "\"a/b\"", NULL },
	{ N_STEP, "\"..\"", NULL },
	{ N_STEP, "\"a\\u0000b\"", "NUL" },
	{ N_STEP, "\"impl\\u0000/../../etc\"", "NUL" },
	{ N_STEP, "\"a\\nb\"", NULL },
	{ N_STEP, NULL, NULL },
	{ N_SKILL, "\"../../x\"", NULL },
	{ N_SKILL, "\"impl\\u0000x\"", "NUL" },
	{ N_SKILL, "\"a\\rb\"", NULL },
	{ N_SKILL, NULL, NULL },
	{ N_KEY, "\"ABC/12\"", NULL },
	{ N_KEY, "\"ABC-12\\u0000\"", "NUL" },
	{ N_KEY, "\"ABC-12\\n\"", NULL },
	{ N_KEY, NULL, NULL },
};

static char *task_json(const struct json_case *c)
{
	char *longv = long_name();
	char *v = c->json ? strdup(c->json) : fgt_fmt("\"%s\"", longv);
	const char *step = c->kind != N_STEP ? "\"impl\"" : v;
	const char *skill = c->kind != N_SKILL ? "\"impl\"" : v;
	const char *key = c->kind != N_KEY ? "\"ABC-12\"" : v;
	char *s = fgt_fmt("{\"task_key\": %s, \"summary\": \"s\", \"description\": \"d\", "
			  "\"skill_name\": %s, \"step_name\": %s}", key, skill, step);

	free(v);
	free(longv);
	return s;
}

Test(cli_names, entrypoint_names_in_the_task_file)
{
	for (size_t i = 0; i < sizeof(JSON_CASES) / sizeof(JSON_CASES[0]); i++) {
		const struct json_case *c = &JSON_CASES[i];
		struct fgw f;
		struct fgt_proc p;
		const char *args[] = { "run", "--workspace", NULL, "--skills-dir", NULL, "--task-file", NULL, NULL };
		char *json = task_json(c);
		char *label = fgt_fmt("%s=%.40s", NAMES[c->kind].field, c->json ? c->json : "(10000 chars)");

		fgw_init_runner(&f);
		fgt_write(f.task, json);
		args[2] = f.ws;
		args[4] = f.skills;
		args[6] = f.task;
		run_prog(&f, &p, FG_ENTRYPOINT_BIN, args, NULL);
		expect_usage(&f, &p, label, c->want ? c->want : NAMES[c->kind].want);
		fgt_proc_release(&p);
		fgw_release(&f);
		free(label);
		free(json);
	}
}

Test(cli_names, resolve_refuses_hostile_names)
{
	static const char *const skills[] = { "../../etc", "a/b", "..", "a\nb" };

	for (size_t i = 0; i < sizeof(skills) / sizeof(skills[0]); i++) {
		struct fgw f;
		struct fgt_proc p;
		const char *args[] = { "resolve", "--skills-dir", NULL, "--skill", skills[i], "--ticket", "ABC-12", NULL };

		fgw_init_runner(&f);
		args[2] = f.skills;
		run_prog(&f, &p, FG_ENTRYPOINT_BIN, args, NULL);
		expect_usage(&f, &p, skills[i], "invalid skill name");
		cr_expect_eq(p.out_len, 0, "resolve printed a path: %s", p.out);
		fgt_proc_release(&p);
		fgw_release(&f);
	}
}

/* Numbers that are not numbers, and commands that cannot be split. */
struct env_case {
	int runner;          /* 0 entrypoint run, 1 runner run, 2 runner watch */
	const char *env;     /* NAME=value, or NULL */
	const char *opt;     /* extra option, or NULL */
	const char *optval;
	const char *want;
};

static const struct env_case ENV_CASES[] = {
	{ 0, "FORGE_AGENT_TIMEOUT=abc", NULL, NULL, "FORGE_AGENT_TIMEOUT" },
	{ 0, "FORGE_AGENT_TIMEOUT=-1", NULL, NULL, "FORGE_AGENT_TIMEOUT" },
	{ 0, "FORGE_AGENT_TIMEOUT=1e999", NULL, NULL, "FORGE_AGENT_TIMEOUT" },
	{ 0, "FORGE_AGENT_TIMEOUT=nan", NULL, NULL, "FORGE_AGENT_TIMEOUT" },
	{ 0, "FORGE_AGENT_TIMEOUT=10s", NULL, NULL, "FORGE_AGENT_TIMEOUT" },
	{ 0, "FORGE_AGENT_IDLE_TIMEOUT=x", NULL, NULL, "FORGE_AGENT_IDLE_TIMEOUT" },
	{ 0, "FORGE_AGENT_KILL_GRACE=-3", NULL, NULL, "FORGE_AGENT_KILL_GRACE" },
	{ 0, "AUTO_REVIEW_FAIL_ON_EXHAUSTION=maybe", NULL, NULL, "AUTO_REVIEW_FAIL_ON_EXHAUSTION" },
	{ 0, "FORGE_WORKER_CMD=sh -c 'echo hi", NULL, NULL, "FORGE_WORKER_CMD" },
	{ 0, "FORGE_WORKER_CMD=sh -c \"echo hi", NULL, NULL, "FORGE_WORKER_CMD" },
	{ 0, "FORGE_WORKER_CMD=echo \\", NULL, NULL, "FORGE_WORKER_CMD" },
	{ 0, "FORGE_REVIEWER_CMD=sh -c \"echo 'hi", NULL, NULL, "FORGE_REVIEWER_CMD" },
	{ 1, "AUTO_REVIEW_POLL_INTERVAL=-1", NULL, NULL, "poll interval" },
	{ 1, "AUTO_REVIEW_POLL_INTERVAL=abc", NULL, NULL, "poll interval" },
	{ 1, NULL, "--poll-interval", "0", "poll interval" },
	{ 1, NULL, "--poll-interval", "nan", "poll interval" },
	{ 1, NULL, "--timeout", "x", "--timeout" },
	{ 1, NULL, "--timeout", "-5", "--timeout" },
	{ 1, NULL, "--timeout", "inf", "--timeout" },
	{ 1, NULL, "--timeout", "", "--timeout" },
	{ 1, NULL, "--engine", "../bin/sh", "engine" },
	{ 1, NULL, "--record", "everything", "record mode" },
	{ 2, "AUTO_REVIEW_POLL_INTERVAL=abc", NULL, NULL, "AUTO_REVIEW_POLL_INTERVAL" },
	{ 2, NULL, "--poll-interval", "-1", "--poll-interval" },
};

static void env_case_run(const struct env_case *c)
{
	struct fgw f;
	struct fgt_proc p;
	const char *args[24];
	const char *env[] = { c->env, NULL };
	const char *bin = c->runner ? FG_RUNNER_BIN : FG_ENTRYPOINT_BIN;
	size_t n = 0;

	fgw_init_runner(&f);
	if (c->runner == 2) {
		args[n++] = "watch";
		args[n++] = f.step_dir;
	} else {
		args[n++] = "run";
		args[n++] = "--workspace"; args[n++] = f.ws;
		args[n++] = "--skills-dir"; args[n++] = f.skills;
		args[n++] = "--task-file"; args[n++] = f.task;
		args[n++] = "--step"; args[n++] = "impl";
	}
	if (c->opt) {
		args[n++] = c->opt;
		args[n++] = c->optval;
	}
	args[n] = NULL;
	run_prog(&f, &p, bin, args, env);
	expect_usage(&f, &p, c->env ? c->env : c->opt, c->want);
	fgw_release_run(&f, &p);
}

Test(cli_names, numbers_that_are_not_numbers_and_unbalanced_quotes)
{
	for (size_t i = 0; i < sizeof(ENV_CASES) / sizeof(ENV_CASES[0]); i++)
		env_case_run(&ENV_CASES[i]);
}

/* Through the runner: the entrypoint's configuration error is the run's exit 2. */
Test(cli_names, runner_passes_the_entrypoint_configuration_error_through)
{
	struct fgw f;
	const char *env[] = { "FORGE_AGENT_TIMEOUT=abc", NULL };
	char *agent;

	fgw_init_runner(&f);
	agent = fgw_script(&f, "agent.sh", NULL, MARKER_AGENT);
	fgw_runner(&f, FGW_RUN(.worker = agent, .reviewer = "sh -c 'unbalanced", .env = env));
	fgw_assert_run(&f, 2, -1);
	cr_assert_eq(fge_jint(f.res, "exit_code"), 2);
	cr_assert_not_null(strstr(f.logtext, "FORGE_AGENT_TIMEOUT"), "log:\n%s", f.logtext);
	cr_assert(!agent_ran(&f));
	free(agent);
	fgw_release(&f);
}

/*
 * --env takes a NAME: the value is read from the runner's environment and
 * passed as `-e NAME`, so it never appears in argv or a log. NAME=value is
 * a usage error (2), and the value must not be echoed anywhere.
 */
Test(cli_names, runner_env_option_refuses_name_with_value_without_echoing_it)
{
	static const char *const engines[] = { "local", "docker" };

	for (size_t i = 0; i < 2; i++) {
		struct fgw f;
		struct fgt_proc p;
		const char *args[] = { "run", "--workspace", NULL, "--step", "impl", "--engine", engines[i],
				       "--image", "forge:test", "--env", "API_TOKEN=s3cr3t-value",
				       "--result", NULL, "--skills-dir", NULL, "--task-file", NULL, NULL };
		char *res;

		fgw_init_runner(&f);
		args[2] = f.ws;
		args[12] = f.result;
		args[14] = f.skills;
		args[16] = f.task;
		run_prog(&f, &p, FG_RUNNER_BIN, args, NULL);
		res = fgt_read(f.result, NULL);
		cr_expect_eq(p.exit_code, 2, "[%s] exit %d; stderr:\n%s", engines[i], p.exit_code, p.err);
		cr_expect_null(strstr(p.err, "s3cr3t-value"), "[%s] the value was logged:\n%s", engines[i], p.err);
		cr_expect(!res || !strstr(res, "s3cr3t-value"), "[%s] the value is in the result:\n%s",
			  engines[i], res);
		cr_expect(!agent_ran(&f), "[%s] an agent ran", engines[i]);
		free(res);
		fgt_proc_release(&p);
		fgw_release(&f);
	}
}

/* Documented exception: AUTO_REVIEW_MAX_RETRIES that is not a number is
 * ignored with a warning naming it (docs/reference/review-md-schema.md). */
Test(cli_names, invalid_max_retries_is_ignored_with_a_warning)
{
	struct fgw f;
	struct fgt_proc p;
	const char *args[] = { "config", NULL, NULL };
	const char *env[] = { "AUTO_REVIEW_MAX_RETRIES=abc", NULL };
	char *md;
	cJSON *j;

	fgw_init_runner(&f);
	md = fgt_fmt("%s/plain.md", f.root);
	fgt_write(md, "Check the work.\n");
	args[1] = md;
	run_prog(&f, &p, FG_ENTRYPOINT_BIN, args, env);
	fgt_assert_exit(&p, 0);
	j = cJSON_Parse(p.out);
	cr_assert_not_null(j, "stdout:\n%s", p.out);
	cr_assert_eq(fge_jint(j, "max_retries"), 3);
	cr_assert_not_null(strstr(p.out, "AUTO_REVIEW_MAX_RETRIES"), "no warning: %s", p.out);
	cJSON_Delete(j);
	free(md);
	fgw_release_run(&f, &p);
}
