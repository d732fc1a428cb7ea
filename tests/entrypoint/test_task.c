/*
 * test_task.c - task file parsing, option > environment > file, config errors.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "task.h"
#include "../common/tmp_fixture.h"

TestSuite(task, .init = tmp_init, .fini = tmp_fini, .timeout = 10);

static const char *const VARS[] = {
	"FORGE_TASK_FILE", "FORGE_WORKSPACE", "FORGE_SKILLS_DIR", "FORGE_STEP_NAME", "FORGE_SKILL_NAME",
	"FORGE_TASK_KEY", "FORGE_WORKER_CMD", "FORGE_REVIEWER_CMD", "FORGE_AGENT_TIMEOUT",
	"FORGE_AGENT_IDLE_TIMEOUT", "FORGE_AGENT_KILL_GRACE", "FORGE_RUN_ID", "AUTO_REVIEW_FAIL_ON_EXHAUSTION", NULL,
};

static void clean_env(void)
{
	for (size_t i = 0; VARS[i]; i++)
		unsetenv(VARS[i]);
}

Test(task, parse_json_table)
{
	static const struct { const char *json; int rc; const char *err; } cases[] = {
		{ "{\"task_key\":\"A-1\",\"summary\":\"s\",\"description\":\"d\",\"skill_name\":\"k\","
		  "\"step_name\":\"st\",\"previous_task_keys\":[\"A-0\"],\"extra\":1}", 0, NULL },
		{ "{\"summary\": null}", 0, NULL },
		{ "[]", -22, "not a JSON object" },
		{ "{", -22, "not a JSON object" },
		{ "{\"summary\": 1}", -22, "'summary' must be a string" },
		{ "{\"previous_task_keys\": \"A\"}", -22, "'previous_task_keys' must be an array" },
		{ "{\"previous_task_keys\": [1]}", -22, "only strings" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ep_task t;
		char err[256] = "";

		ep_task_init(&t);
		cr_assert_eq(ep_task_parse_json(&t, cases[i].json, strlen(cases[i].json), err, sizeof(err)),
			     cases[i].rc, "case %zu: %s", i, err);
		if (cases[i].err)
			cr_assert(strstr(err, cases[i].err), "case %zu: %s", i, err);
		if (i == 0) {
			cr_assert_str_eq(t.task_key, "A-1");
			cr_assert_str_eq(t.step, "st");
			cr_assert_str_eq(t.skill, "k");
			cr_assert_eq(t.previous.n, 1);
		}
		ep_task_release(&t);
	}
}

Test(task, option_beats_env_beats_file)
{
	char *file = tmp_path("task.json");
	struct ep_task t;
	char err[256] = "";

	clean_env();
	fgt_write(file, "{\"step_name\":\"from_file\",\"skill_name\":\"file-skill\",\"task_key\":\"F-1\","
			"\"summary\":\"S\"}");
	setenv("FORGE_STEP_NAME", "from_env", 1);
	setenv("FORGE_TASK_KEY", "E-1", 1);
	setenv("FORGE_WORKER_CMD", "agent --go", 1);
	struct ep_run_args a = { .task_file = file, .workspace = tmp_dir, .task_key = "O-1" };
	ep_task_init(&t);
	cr_assert_eq(ep_task_load(&t, &a, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(t.step, "from_env");
	cr_assert_str_eq(t.skill, "file-skill");
	cr_assert_str_eq(t.task_key, "O-1");
	cr_assert_str_eq(t.summary, "S");
	cr_assert_str_eq(t.skills_dir, "/skills");
	cr_assert_eq(t.timeout_s, EP_DEFAULT_TIMEOUT);
	cr_assert_eq(t.idle_timeout_s, EP_DEFAULT_IDLE_TIMEOUT);
	cr_assert_eq(t.kill_grace_s, EP_DEFAULT_KILL_GRACE);
	cr_assert_null(t.reviewer_cmd);
	ep_task_release(&t);
	clean_env();
}

Test(task, skill_defaults_to_step_with_dashes)
{
	struct ep_task t;
	char err[256] = "";
	struct ep_run_args a = { .workspace = tmp_dir, .step = "implement_task" };

	clean_env();
	setenv("FORGE_WORKER_CMD", "w", 1);
	ep_task_init(&t);
	cr_assert_eq(ep_task_load(&t, &a, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(t.skill, "implement-task");
	cr_assert(t.skill_from_step);
	ep_task_release(&t);
	clean_env();
}

Test(task, config_errors_table)
{
	static const struct { const char *var, *value, *step, *err; } cases[] = {
		{ "FORGE_AGENT_TIMEOUT", "abc", "s", "invalid FORGE_AGENT_TIMEOUT 'abc'" },
		{ "FORGE_AGENT_TIMEOUT", "0", "s", "FORGE_AGENT_TIMEOUT" },
		{ "FORGE_AGENT_IDLE_TIMEOUT", "1x", "s", "FORGE_AGENT_IDLE_TIMEOUT" },
		{ "FORGE_AGENT_KILL_GRACE", "999", "s", "FORGE_AGENT_KILL_GRACE" },
		{ "AUTO_REVIEW_FAIL_ON_EXHAUSTION", "2", "s", "AUTO_REVIEW_FAIL_ON_EXHAUSTION" },
		{ "FORGE_REVIEWER_CMD", "a \"b", "s", "unterminated double quote" },
		{ "FORGE_TASK_KEY", "a/b", "s", "task key" },
		{ "FORGE_SKILL_NAME", "..", "s", "skill" },
		{ "FORGE_RUN_ID", "x", "a/b", "step" },
		{ "FORGE_RUN_ID", "x", NULL, "no step name" },
		{ "FORGE_WORKSPACE", "/nonexistent/ws", "s", "not a directory" },
		{ "FORGE_TASK_FILE", "/nonexistent/task.json", "s", "cannot read task file" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ep_task t;
		char err[256] = "";
		struct ep_run_args a = { .step = cases[i].step };

		clean_env();
		setenv("FORGE_WORKSPACE", tmp_dir, 1);
		setenv("FORGE_WORKER_CMD", "w", 1);
		setenv(cases[i].var, cases[i].value, 1);
		ep_task_init(&t);
		cr_assert_eq(ep_task_load(&t, &a, err, sizeof(err)), -22, "case %zu accepted", i);
		cr_assert(strstr(err, cases[i].err), "case %zu: %s", i, err);
		ep_task_release(&t);
	}
	clean_env();
}
