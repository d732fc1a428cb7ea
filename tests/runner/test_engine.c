/*
 * test_engine.c - the command lines the engines build.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fgtest.h"

TestSuite(engine, .timeout = 10);

static char *const test_env[] = {
	"PATH=/usr/bin", "FORGE_WORKER_CMD=claude -p", "AUTO_REVIEW_MAX_RETRIES=2",
	"FORGE_IMAGE=img:1", "FORGE_RUN_ID=stale", "SECRET_TOKEN=hunter2", "FORGE_ENGINE=docker",
	NULL,
};

/* On by default for docker and podman. */
#define HARDENING "--cap-drop=ALL --security-opt=no-new-privileges --pids-limit 4096 "

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
		    "docker run --rm --name forge-0123456789abcdef " HARDENING "-v /home/u/ws:/workspace "
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
		    "podman run --rm --name forge-0123456789abcdef " HARDENING "-v /home/u/ws:/workspace "
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
	cr_assert_str_eq(s, "docker stop -t 10 forge-0123456789abcdef");
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

Test(engine, env_name_check_refuses_values_without_quoting_them)
{
	static const struct { const char *arg; int ok; } cases[] = {
		{ "API_TOKEN", 1 }, { "_x1", 1 }, { "a", 1 },
		{ "API_TOKEN=s3cr3t-value", 0 }, { "=s3cr3t", 0 }, { "X=", 0 },
		{ "", 0 }, { "1ABC", 0 }, { "BAD-NAME", 0 }, { "s3cr3t value", 0 }, { "A.B", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		int r = rn_engine_env_name_check(cases[i].arg, err, sizeof(err));

		cr_assert_eq(r, cases[i].ok ? 0 : -EINVAL, "'%s'", cases[i].arg);
		if (cases[i].ok)
			continue;
		cr_assert_not_null(strstr(err, "'--env'"), "'%s': %s", cases[i].arg, err);
		cr_assert_null(strstr(err, "s3cr3t"), "'%s' quoted: %s", cases[i].arg, err);
	}
}

Test(engine, env_value_never_reaches_the_command_line_error)
{
	struct rn_engine_params p = base(RN_ENGINE_DOCKER);
	static const char *const extra[] = { "API_TOKEN=s3cr3t-value" };
	struct fg_strvec argv, env;
	char err[256] = "";

	p.extra_env = extra;
	fg_strvec_init(&argv);
	fg_strvec_init(&env);
	cr_assert_eq(rn_engine_build(&p, &argv, &env, err, sizeof(err)), -EINVAL);
	cr_assert_null(strstr(err, "s3cr3t"), "%s", err);
	fg_strvec_release(&argv);
	fg_strvec_release(&env);
}

Test(engine, exit_reason_names_the_engines_own_codes)
{
	static const struct { int code; const char *want; } cases[] = {
		{ 137, "container 'forge-0123456789abcdef' was killed from outside the runner" },
		{ 125, "docker could not run container 'forge-0123456789abcdef'" },
		{ 126, "the entrypoint of image 'img:1' cannot be invoked" },
		{ 127, "the entrypoint of image 'img:1' was not found" },
		{ 0, NULL }, { 1, NULL }, { 3, NULL }, { 143, NULL },
	};
	struct rn_engine_params p = base(RN_ENGINE_DOCKER);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *why = rn_engine_exit_reason(&p, cases[i].code);

		if (!cases[i].want) {
			cr_assert_null(why, "code %d: %s", cases[i].code, why);
			continue;
		}
		cr_assert_not_null(why, "code %d", cases[i].code);
		cr_assert_not_null(strstr(why, cases[i].want), "code %d: %s", cases[i].code, why);
		free(why);
	}
	p.kind = RN_ENGINE_LOCAL;
	cr_assert_null(rn_engine_exit_reason(&p, 137), "local codes are the entrypoint's own");
}

Test(engine, ops_tables_say_how_each_engine_is_stopped_and_reaped)
{
	const struct rn_engine_ops *local = rn_engine_ops_of(RN_ENGINE_LOCAL);
	struct rn_engine_params p = base(RN_ENGINE_LOCAL);
	struct fg_strvec a;

	fg_strvec_init(&a);
	cr_assert_str_eq(local->name, "local");
	cr_assert_null(local->cli, "the local engine runs the entrypoint itself");
	cr_assert_eq(local->stop(&p, 0, &a), SIGTERM);
	cr_assert_eq(local->stop(&p, 1, &a), SIGKILL);
	cr_assert_eq(a.n, 0, "a signal, not a command");
	cr_assert(local->kill_group_after_exit);
	cr_assert_null(local->reap_list, "nothing of a local run outlives its process");
	for (enum rn_engine_kind k = RN_ENGINE_DOCKER; k <= RN_ENGINE_PODMAN; k++) {
		const struct rn_engine_ops *ops = rn_engine_ops_of(k);
		enum rn_engine_kind parsed;

		cr_assert_eq(rn_engine_parse(ops->name, &parsed), 0);
		cr_assert_eq(parsed, k);
		cr_assert_str_eq(ops->cli, ops->name);
		cr_assert_not_null(ops->reap_list);
		cr_assert_not_null(ops->reap_remove);
		cr_assert_not_null(ops->exit_reason);
		cr_assert(ops->env_by_name);
		cr_assert(!ops->kill_group_after_exit, "the CLI is stopped through the engine");
		p = base(k);
		cr_assert(ops->workspace_local(&p));
	}
}

Test(engine, podman_as_root_has_no_user_namespace_to_keep)
{
	struct rn_engine_params p = base(RN_ENGINE_PODMAN);
	struct fg_strvec argv, env;
	char err[256] = "";
	char *got;

	p.uid = 0;
	p.gid = 0;
	/* Rootful is the runner's uid now (the sandbox's may be another). */
	p.runner_root = true;
	fg_strvec_init(&argv);
	fg_strvec_init(&env);
	cr_assert_eq(rn_engine_build(&p, &argv, &env, err, sizeof(err)), 0, "%s", err);
	got = joined(&argv);
	cr_assert_null(strstr(got, "--userns"), "%s", got);
	cr_assert_not_null(strstr(got, "--user 0:0"), "%s", got);
	free(got);
	fg_strvec_release(&argv);
	fg_strvec_release(&env);
}

Test(engine, mount_label_goes_on_every_bind_mount)
{
	static const struct { const char *label; const char *ws, *skills, *task; } cases[] = {
		{ "Z", "/home/u/ws:/workspace:Z", "/opt/skills:/skills:ro,Z", "/tmp/t.json:/forge/task.json:ro,Z" },
		{ "z", "/home/u/ws:/workspace:z", "/opt/skills:/skills:ro,z", "/tmp/t.json:/forge/task.json:ro,z" },
		{ "", "/home/u/ws:/workspace", "/opt/skills:/skills:ro", "/tmp/t.json:/forge/task.json:ro" },
		{ NULL, "/home/u/ws:/workspace", "/opt/skills:/skills:ro", "/tmp/t.json:/forge/task.json:ro" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rn_engine_params p = base(i % 2 ? RN_ENGINE_PODMAN : RN_ENGINE_DOCKER);
		struct fg_strvec argv, env;
		char err[256] = "", *want;
		char *got;

		p.mount_label = cases[i].label;
		p.task_file = "/tmp/t.json";
		fg_strvec_init(&argv);
		fg_strvec_init(&env);
		cr_assert_eq(rn_engine_build(&p, &argv, &env, err, sizeof(err)), 0, "%s", err);
		got = joined(&argv);
		want = fgt_fmt("-v %s -v %s -v %s ", cases[i].ws, cases[i].skills, cases[i].task);
		cr_assert_not_null(strstr(got, want), "label '%s': %s", cases[i].label, got);
		free(want);
		free(got);
		fg_strvec_release(&argv);
		fg_strvec_release(&env);
	}
}

Test(engine, mount_label_modes_resolve)
{
	enum rn_mount_label m;

	cr_assert_eq(rn_mount_label_parse("auto", &m), 0);
	cr_assert_str_eq(rn_mount_label_option(m, 1), "Z", "auto relabels private under SELinux");
	cr_assert_str_eq(rn_mount_label_option(m, 0), "", "auto adds nothing without SELinux");
	cr_assert_eq(rn_mount_label_parse("z", &m), 0);
	cr_assert_str_eq(rn_mount_label_option(m, 0), "z");
	cr_assert_eq(rn_mount_label_parse("Z", &m), 0);
	cr_assert_str_eq(rn_mount_label_option(m, 0), "Z");
	cr_assert_eq(rn_mount_label_parse("none", &m), 0);
	cr_assert_str_eq(rn_mount_label_option(m, 1), "", "none even under SELinux");
	cr_assert_eq(rn_mount_label_parse("ZZ", &m), -EINVAL);
	cr_assert_eq(rn_mount_label_parse("", &m), -EINVAL);
}

Test(engine, limits_and_engine_args_in_order_before_the_image)
{
	static const char *const extra[] = { "--runtime=runsc", "--device=/dev/fuse" };
	struct rn_engine_params p = base(RN_ENGINE_DOCKER);

	p.memory = "4g";
	p.cpus = "1.5";
	p.pids_limit = "64";
	p.network = "none";
	p.read_only_rootfs = 1;
	p.engine_args = extra;
	p.nengine_args = 2;
	p.nextra_env = 0;
	check_build(&p,
		    "docker run --rm --name forge-0123456789abcdef --cap-drop=ALL "
		    "--security-opt=no-new-privileges --pids-limit 64 --memory 4g --cpus 1.5 "
		    "--network none --read-only --tmpfs /tmp -v /home/u/ws:/workspace "
		    "-v /opt/skills:/skills:ro --user 1000:1000 -e AUTO_REVIEW_MAX_RETRIES "
		    "-e FORGE_RUN_ID -e FORGE_WORKER_CMD --runtime=runsc --device=/dev/fuse img:1 run "
		    "--workspace /workspace --skills-dir /skills --step implement_task "
		    "--skill implement-task --task-key DEMO-1 --task-file /workspace/task.json");
}

Test(engine, limit_values_are_checked)
{
	static const struct {
		int (*check)(const char *, char *, size_t);
		const char *v;
		int ok;
	} cases[] = {
		{ rn_engine_memory_check, "4g", 1 }, { rn_engine_memory_check, "512m", 1 },
		{ rn_engine_memory_check, "1073741824", 1 }, { rn_engine_memory_check, "64K", 1 },
		{ rn_engine_memory_check, "", 0 }, { rn_engine_memory_check, "g", 0 },
		{ rn_engine_memory_check, "4gb", 0 }, { rn_engine_memory_check, "-1", 0 },
		{ rn_engine_memory_check, "4 g", 0 }, { rn_engine_memory_check, "1.5g", 0 },
		{ rn_engine_cpus_check, "2", 1 }, { rn_engine_cpus_check, "0.5", 1 },
		{ rn_engine_cpus_check, "0", 0 }, { rn_engine_cpus_check, "-1", 0 },
		{ rn_engine_cpus_check, "two", 0 }, { rn_engine_cpus_check, "nan", 0 },
		{ rn_engine_pids_check, "4096", 1 }, { rn_engine_pids_check, "1", 1 },
		{ rn_engine_pids_check, "0", 0 }, { rn_engine_pids_check, "-1", 0 },
		{ rn_engine_pids_check, "10x", 0 }, { rn_engine_pids_check, "99999999", 0 },
		{ rn_engine_network_check, "none", 1 }, { rn_engine_network_check, "bridge", 1 },
		{ rn_engine_network_check, "slirp4netns:allow_host_loopback=true", 1 },
		{ rn_engine_network_check, "", 0 }, { rn_engine_network_check, "--privileged", 0 },
		{ rn_engine_network_check, "a b", 0 }, { rn_engine_network_check, "x;y", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		int r = cases[i].check(cases[i].v, err, sizeof(err));

		cr_assert_eq(r, cases[i].ok ? 0 : -EINVAL, "case %zu '%s'", i, cases[i].v);
		if (!cases[i].ok)
			cr_assert(err[0], "case %zu '%s' has no message", i, cases[i].v);
	}
}

Test(engine, named_volume_replaces_the_bind_mount_and_clears_in_the_container)
{
	struct rn_engine_params p = base(RN_ENGINE_DOCKER);
	struct fg_strvec argv, env;
	char err[256] = "";

	p.workspace = NULL;
	p.workspace_volume = "forge-ws_1.a";
	p.clear_stale = 1;
	/* With no host workspace the task file gets its own mount. */
	check_build(&p,
		    "docker run --rm --name forge-0123456789abcdef --cap-drop=ALL "
		    "--security-opt=no-new-privileges --pids-limit 4096 -v forge-ws_1.a:/workspace "
		    "-v /opt/skills:/skills:ro -v /home/u/ws/task.json:/forge/task.json:ro "
		    "--user 1000:1000 -e AUTO_REVIEW_MAX_RETRIES "
		    "-e FORGE_RUN_ID -e FORGE_WORKER_CMD -e SECRET_TOKEN img:1 run --workspace /workspace "
		    "--skills-dir /skills --step implement_task --skill implement-task --task-key DEMO-1 "
		    "--task-file /forge/task.json --clear-stale");
	cr_assert(!rn_engine_ops_of(RN_ENGINE_DOCKER)->workspace_local(&p));
	cr_assert(!rn_engine_ops_of(RN_ENGINE_PODMAN)->workspace_local(&p));
	static const char *const bad[] = { "", "/abs", "a/b", "-x", "v:ro", "v,x", "vol ume", ".v" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p.workspace_volume = bad[i];
		fg_strvec_init(&argv);
		fg_strvec_init(&env);
		cr_expect_eq(rn_engine_build(&p, &argv, &env, err, sizeof(err)), -EINVAL, "%s", bad[i]);
		cr_expect_not_null(strstr(err, "invalid volume name"), "%s", err);
		fg_strvec_release(&argv);
		fg_strvec_release(&env);
	}
}

Test(engine, a_remote_engine_host_makes_the_workspace_invisible)
{
	struct host_case {
		enum rn_engine_kind kind;
		const char *var;
		int remote;
	};
	static const struct host_case cases[] = {
		{ RN_ENGINE_DOCKER, "DOCKER_HOST=tcp://build-1:2376", 1 },
		{ RN_ENGINE_DOCKER, "DOCKER_HOST=ssh://ci@build-1", 1 },
		{ RN_ENGINE_DOCKER, "DOCKER_HOST=unix:///var/run/docker.sock", 0 },
		{ RN_ENGINE_DOCKER, "DOCKER_HOST=", 0 },
		{ RN_ENGINE_DOCKER, "CONTAINER_HOST=tcp://x:1", 0 },
		{ RN_ENGINE_PODMAN, "CONTAINER_HOST=ssh://core@vm:22/run/podman/podman.sock", 1 },
		{ RN_ENGINE_PODMAN, "CONTAINER_HOST=unix:///run/user/1000/podman/podman.sock", 0 },
		{ RN_ENGINE_PODMAN, "DOCKER_HOST=tcp://x:1", 0 },
		{ RN_ENGINE_LOCAL, "DOCKER_HOST=tcp://x:1", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *env[] = { "PATH=/usr/bin", (char *)cases[i].var, NULL };
		struct rn_engine_params p = base(cases[i].kind);
		char *host;

		p.environ = env;
		host = rn_engine_remote_host(&p);
		cr_expect_eq(host != NULL, cases[i].remote, "%s", cases[i].var);
		if (host)
			cr_expect_str_eq(host, strchr(cases[i].var, '=') + 1);
		cr_expect_eq(rn_engine_ops_of(cases[i].kind)->workspace_local(&p), !cases[i].remote,
			     "%s", cases[i].var);
		free(host);
	}
}

Test(engine, cycle_dir_reaches_the_entrypoint_by_name)
{
	static char *const env_with_old[] = { "PATH=/usr/bin", "FORGE_CYCLE_DIR=old/{step}", NULL };
	struct rn_engine_params p = base(RN_ENGINE_DOCKER);
	struct fg_strvec argv, env;
	char err[256] = "", *a, *e;

	p.environ = env_with_old;
	p.nextra_env = 0;
	p.cycle_dir = ".forge/reviews/DEMO-1__implement-task";
	fg_strvec_init(&argv);
	fg_strvec_init(&env);
	cr_assert_eq(rn_engine_build(&p, &argv, &env, err, sizeof(err)), 0, "%s", err);
	a = joined(&argv);
	e = joined(&env);
	cr_assert_not_null(strstr(a, "-e FORGE_CYCLE_DIR -e FORGE_RUN_ID img:1"), "%s", a);
	cr_assert_null(strstr(a, "reviews"), "the value is in argv: %s", a);
	cr_assert_not_null(strstr(e, "FORGE_CYCLE_DIR=.forge/reviews/DEMO-1__implement-task"), "%s", e);
	cr_assert_null(strstr(e, "old/{step}"), "the old value stayed: %s", e);
	free(a);
	free(e);
	fg_strvec_release(&argv);
	fg_strvec_release(&env);
}
