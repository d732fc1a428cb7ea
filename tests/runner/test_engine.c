/*
 * test_engine.c - the command lines the engines build.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "engine.h"

TestSuite(engine, .timeout = 10);

static char *const test_env[] = {
	"PATH=/usr/bin", "FORGE_WORKER_CMD=claude -p", "AUTO_REVIEW_MAX_RETRIES=2",
	"FORGE_IMAGE=img:1", "FORGE_RUN_ID=stale", "SECRET_TOKEN=hunter2", "FORGE_ENGINE=docker",
	NULL,
};

static struct rn_engine_params base(enum rn_engine_kind k)
{
	static const char *const extra[] = { "SECRET_TOKEN" };
	struct rn_engine_params p = {
		.kind = k, .program = k == RN_ENGINE_PODMAN ? "podman" : "docker", .image = "img:1",
		.workspace = "/home/u/ws", .skills_dir = "/opt/skills", .step = "implement_task",
		.skill = "implement-task", .task_key = "DEMO-1", .task_file = "/home/u/ws/task.json",
		.run_id = "0123456789abcdef", .extra_env = extra, .nextra_env = 1, .uid = 1000,
		.gid = 1000, .environ = test_env,
	};

	return p;
}

static char *joined(const struct fg_strvec *v)
{
	struct fg_buf b;

	fg_buf_init(&b, 1 << 20);
	for (size_t i = 0; i < v->n; i++)
		fg_buf_addf(&b, "%s%s", i ? " " : "", v->v[i]);
	return fg_buf_detach(&b, NULL);
}

static void check_build(const struct rn_engine_params *p, const char *want)
{
	struct fg_strvec argv, env;
	char err[256] = "";
	char *got;

	fg_strvec_init(&argv);
	fg_strvec_init(&env);
	cr_assert_eq(rn_engine_build(p, &argv, &env, err, sizeof(err)), 0, "%s", err);
	got = joined(&argv);
	cr_assert_str_eq(got, want);
	/* Values never appear in argv. */
	cr_assert_null(strstr(got, "hunter2"));
	cr_assert_null(strstr(got, "claude"));
	free(got);
	got = joined(&env);
	cr_assert_not_null(strstr(got, "FORGE_RUN_ID=0123456789abcdef"));
	cr_assert_null(strstr(got, "FORGE_RUN_ID=stale"));
	free(got);
	fg_strvec_release(&argv);
	fg_strvec_release(&env);
}

Test(engine, docker_argv)
{
	struct rn_engine_params p = base(RN_ENGINE_DOCKER);

	check_build(&p,
		    "docker run --rm --name forge-0123456789abcdef -v /home/u/ws:/workspace "
		    "-v /opt/skills:/skills:ro --user 1000:1000 -e AUTO_REVIEW_MAX_RETRIES "
		    "-e FORGE_RUN_ID -e FORGE_WORKER_CMD -e SECRET_TOKEN img:1 run --workspace /workspace "
		    "--skills-dir /skills --step implement_task --skill implement-task --task-key DEMO-1 "
		    "--task-file /workspace/task.json");
}

Test(engine, podman_argv_keeps_user_namespace)
{
	struct rn_engine_params p = base(RN_ENGINE_PODMAN);

	p.task_file = "/tmp/task.json";
	p.nextra_env = 0;
	check_build(&p,
		    "podman run --rm --name forge-0123456789abcdef -v /home/u/ws:/workspace "
		    "-v /opt/skills:/skills:ro -v /tmp/task.json:/forge/task.json:ro --userns=keep-id "
		    "--user 1000:1000 -e AUTO_REVIEW_MAX_RETRIES -e FORGE_RUN_ID -e FORGE_WORKER_CMD "
		    "img:1 run --workspace /workspace --skills-dir /skills --step implement_task "
		    "--skill implement-task --task-key DEMO-1 --task-file /forge/task.json");
}

Test(engine, local_argv)
{
	struct rn_engine_params p = base(RN_ENGINE_LOCAL);

	p.program = "/usr/bin/forge-entrypoint";
	p.skill = NULL;
	check_build(&p,
		    "/usr/bin/forge-entrypoint run --workspace /home/u/ws --skills-dir /opt/skills "
		    "--step implement_task --task-key DEMO-1 --task-file /home/u/ws/task.json");
}

Test(engine, container_errors)
{
	struct { const char *field; const char *value; } cases[] = {
		{ "image", NULL }, { "workspace", "/a:b" }, { "workspace", "rel/ws" }, { "env", "BAD-NAME" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rn_engine_params p = base(RN_ENGINE_DOCKER);
		const char *extra[] = { cases[i].value };
		struct fg_strvec argv, env;
		char err[256] = "";

		if (!strcmp(cases[i].field, "image"))
			p.image = NULL;
		else if (!strcmp(cases[i].field, "workspace"))
			p.workspace = cases[i].value;
		else
			p.extra_env = extra;
		fg_strvec_init(&argv);
		fg_strvec_init(&env);
		cr_assert_eq(rn_engine_build(&p, &argv, &env, err, sizeof(err)), -EINVAL, "case %zu", i);
		cr_assert(err[0], "case %zu has a message", i);
		fg_strvec_release(&argv);
		fg_strvec_release(&env);
	}
}

Test(engine, stop_and_kill_argv)
{
	struct rn_engine_params p = base(RN_ENGINE_DOCKER);
	struct fg_strvec a;
	char *s;

	fg_strvec_init(&a);
	cr_assert_eq(rn_engine_stop_argv(&p, 0, &a), 0);
	s = joined(&a);
	cr_assert_str_eq(s, "docker stop -t 5 forge-0123456789abcdef");
	free(s);
	fg_strvec_release(&a);
	cr_assert_eq(rn_engine_stop_argv(&p, 1, &a), 0);
	s = joined(&a);
	cr_assert_str_eq(s, "docker kill forge-0123456789abcdef");
	free(s);
	fg_strvec_release(&a);
	p.kind = RN_ENGINE_LOCAL;
	cr_assert_eq(rn_engine_stop_argv(&p, 0, &a), -EINVAL);
}
