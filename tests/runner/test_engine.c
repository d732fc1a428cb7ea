/*
 * test_engine.c - the command lines the engines build.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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
/* What every container command line of base() holds: the engine's run with
 * the two bind mounts, the variables passed by name, and the entrypoint's
 * run up to its task file. */
#define RUN_MOUNTS(engine) \
	engine " run --rm --name forge-0123456789abcdef " HARDENING "-v /home/u/ws:/workspace " \
	       "-v /opt/skills:/skills:ro "
#define PASSED_ENV "-e AUTO_REVIEW_MAX_RETRIES -e FORGE_RUN_ID -e FORGE_WORKER_CMD "
#define EP_RUN \
	"img:1 run --workspace /workspace --skills-dir /skills --step implement_task " \
	"--skill implement-task --task-key DEMO-1 "

static struct rn_engine_params base(const char *k)
{
	static const char *const extra[] = { "SECRET_TOKEN" };
	struct rn_engine_params p = {
		.ops = rn_engine_find(k), .program = !strcmp(k, "podman") ? "podman" : "docker", .image = "img:1",
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
	struct rn_engine_params p = base("docker");

	check_build(&p, RUN_MOUNTS("docker") "--user 1000:1000 " PASSED_ENV "-e SECRET_TOKEN " EP_RUN
		    "--task-file /workspace/task.json");
}

Test(engine, podman_argv_keeps_user_namespace)
{
	struct rn_engine_params p = base("podman");

	p.task_file = "/tmp/task.json";
	p.nextra_env = 0;
	check_build(&p, RUN_MOUNTS("podman") "-v /tmp/task.json:/forge/task.json:ro --userns=keep-id "
		    "--user 1000:1000 " PASSED_ENV EP_RUN "--task-file /forge/task.json");
}

Test(engine, local_argv)
{
	struct rn_engine_params p = base("local");

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
		struct rn_engine_params p = base("docker");
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
	struct rn_engine_params p = base("docker");
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
	p.ops = rn_engine_find("local");
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
	struct rn_engine_params p = base("docker");
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
	struct rn_engine_params p = base("docker");

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
	p.ops = rn_engine_find("local");
	cr_assert_null(rn_engine_exit_reason(&p, 137), "local codes are the entrypoint's own");
}

Test(engine, ops_tables_say_how_each_engine_is_stopped_and_reaped)
{
	const struct rn_engine_ops *local = rn_engine_find("local");
	struct rn_engine_params p = base("local");
	struct fg_strvec a;

	fg_strvec_init(&a);
	cr_assert_str_eq(local->name, "local");
	cr_assert_null(local->cli, "the local engine runs the entrypoint itself");
	cr_assert_eq(local->stop(&p, 0, &a), SIGTERM);
	cr_assert_eq(local->stop(&p, 1, &a), SIGKILL);
	cr_assert_eq(a.n, 0, "a signal, not a command");
	cr_assert(local->kill_group_after_exit);
	cr_assert_null(local->reap_list, "nothing of a local run outlives its process");
	cr_assert_null(rn_engine_find("lxc"), "an engine the list does not name");
	cr_assert_eq(rn_engine_at(0), local, "the first engine is the default");
	for (size_t i = 0; rn_engine_at(i); i++)
		cr_assert_eq(rn_engine_find(rn_engine_at(i)->name), rn_engine_at(i));
	for (const char *const *k = (const char *const[]){ "docker", "podman", NULL }; *k; k++) {
		const struct rn_engine_ops *ops = rn_engine_find(*k);

		cr_assert_not_null(ops, "%s", *k);
		cr_assert_str_eq(ops->name, *k);
		cr_assert_str_eq(ops->cli, ops->name);
		cr_assert_not_null(ops->reap_list);
		cr_assert_not_null(ops->reap_remove);
		cr_assert_not_null(ops->exit_reason);
		cr_assert(ops->env_by_name);
		cr_assert(!ops->kill_group_after_exit, "the CLI is stopped through the engine");
		p = base(*k);
		cr_assert(ops->workspace_local(&p));
	}
}

Test(engine, podman_as_root_has_no_user_namespace_to_keep)
{
	struct rn_engine_params p = base("podman");
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
		struct rn_engine_params p = base(i % 2 ? "podman" : "docker");
		struct rn_container_opts o;
		struct fg_strvec argv, env;
		char err[256] = "", *want;
		char *got;

		rn__container_opts_init(&o);
		o.mount_label = cases[i].label;
		p.data = &o;
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
	struct rn_engine_params p = base("docker");
	struct rn_container_opts o;

	rn__container_opts_init(&o);
	o.memory = "4g";
	o.cpus = "1.5";
	o.pids_limit = "64";
	o.network = "none";
	o.read_only_rootfs = 1;
	fg_strvec_push(&o.engine_args, "--runtime=runsc");
	fg_strvec_push(&o.engine_args, "--device=/dev/fuse");
	p.data = &o;
	p.nextra_env = 0;
	check_build(&p,
		    "docker run --rm --name forge-0123456789abcdef --cap-drop=ALL "
		    "--security-opt=no-new-privileges --pids-limit 64 --memory 4g --cpus 1.5 "
		    "--network none --read-only --tmpfs /tmp -v /home/u/ws:/workspace "
		    "-v /opt/skills:/skills:ro --user 1000:1000 " PASSED_ENV "--runtime=runsc "
		    "--device=/dev/fuse " EP_RUN "--task-file /workspace/task.json");
	rn__container_opts_release(&o);
}

Test(engine, limit_values_are_checked)
{
	/* Each checker, the values it takes and those it refuses (with a message). */
	static const struct {
		const char *name;
		int (*check)(const char *, char *, size_t);
		const char *ok[4], *bad[7];
	} cases[] = {
		{ "memory", rn_engine_memory_check, { "4g", "512m", "1073741824", "64K" },
		  { "", "g", "4gb", "-1", "4 g", "1.5g" } },
		{ "cpus", rn_engine_cpus_check, { "2", "0.5" }, { "0", "-1", "two", "nan" } },
		{ "pids", rn_engine_pids_check, { "4096", "1" }, { "0", "-1", "10x", "99999999" } },
		{ "network", rn_engine_network_check, { "none", "bridge", "slirp4netns:allow_host_loopback=true" },
		  { "", "--privileged", "a b", "x;y" } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (size_t j = 0; j < 4 && cases[i].ok[j]; j++) {
			char err[256] = "";

			cr_assert_eq(cases[i].check(cases[i].ok[j], err, sizeof(err)), 0, "%s '%s': %s",
				     cases[i].name, cases[i].ok[j], err);
		}
		for (size_t j = 0; j < 7 && cases[i].bad[j]; j++) {
			char err[256] = "";

			cr_assert_eq(cases[i].check(cases[i].bad[j], err, sizeof(err)), -EINVAL, "%s '%s'",
				     cases[i].name, cases[i].bad[j]);
			cr_assert(err[0], "%s '%s' has no message", cases[i].name, cases[i].bad[j]);
		}
	}
}

Test(engine, named_volume_replaces_the_bind_mount_and_clears_in_the_container)
{
	struct rn_engine_params p = base("docker");
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
		    "--user 1000:1000 " PASSED_ENV "-e SECRET_TOKEN " EP_RUN
		    "--task-file /forge/task.json --clear-stale");
	cr_assert(!rn_engine_find("docker")->workspace_local(&p));
	cr_assert(!rn_engine_find("podman")->workspace_local(&p));
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
		const char *kind;
		const char *var;
		int remote;
	};
	static const struct host_case cases[] = {
		{ "docker", "DOCKER_HOST=tcp://build-1:2376", 1 },
		{ "docker", "DOCKER_HOST=ssh://ci@build-1", 1 },
		{ "docker", "DOCKER_HOST=unix:///var/run/docker.sock", 0 },
		{ "docker", "DOCKER_HOST=", 0 },
		{ "docker", "CONTAINER_HOST=tcp://x:1", 0 },
		{ "podman", "CONTAINER_HOST=ssh://core@vm:22/run/podman/podman.sock", 1 },
		{ "podman", "CONTAINER_HOST=unix:///run/user/1000/podman/podman.sock", 0 },
		{ "podman", "DOCKER_HOST=tcp://x:1", 0 },
		{ "local", "DOCKER_HOST=tcp://x:1", 0 },
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
		cr_expect_eq(rn_engine_find(cases[i].kind)->workspace_local(&p), !cases[i].remote,
			     "%s", cases[i].var);
		free(host);
	}
}

/* Builds p; its argv and environment, each joined by spaces (owned). */
static void build_joined(const struct rn_engine_params *p, char **a, char **e)
{
	struct fg_strvec argv, env;
	char err[256] = "";

	fg_strvec_init(&argv);
	fg_strvec_init(&env);
	cr_assert_eq(rn_engine_build(p, &argv, &env, err, sizeof(err)), 0, "%s", err);
	*a = joined(&argv);
	*e = joined(&env);
	fg_strvec_release(&argv);
	fg_strvec_release(&env);
}

Test(engine, cycle_dir_reaches_the_entrypoint_by_name)
{
	static char *const env_with_old[] = { "PATH=/usr/bin", "FORGE_CYCLE_DIR=old/{step}", NULL };
	struct rn_engine_params p = base("docker");
	char *a, *e;

	p.environ = env_with_old;
	p.nextra_env = 0;
	p.cycle_dir = ".forge/reviews/DEMO-1__implement-task";
	build_joined(&p, &a, &e);
	cr_assert_not_null(strstr(a, "-e FORGE_CYCLE_DIR -e FORGE_RUN_ID img:1"), "%s", a);
	cr_assert_null(strstr(a, "reviews"), "the value is in argv: %s", a);
	cr_assert_not_null(strstr(e, "FORGE_CYCLE_DIR=.forge/reviews/DEMO-1__implement-task"), "%s", e);
	cr_assert_null(strstr(e, "old/{step}"), "the old value stayed: %s", e);
	free(a);
	free(e);
}

/* Builds p and fails the test unless set ("NAME=value") is in its
 * environment, passed by name (-e NAME, when flag) and never in argv (nor
 * any part of it: value_part), and the host's old ("NAME=value") is gone. */
static void expect_by_name(const struct rn_engine_params *p, bool flag, const char *set,
			   const char *value_part, const char *old)
{
	char *by_name = fgt_fmt("-e %.*s -e FORGE_RUN_ID img:1", (int)strcspn(set, "="), set);
	char *a, *e;

	build_joined(p, &a, &e);
	if (flag)
		cr_assert_not_null(strstr(a, by_name), "%s", a);
	cr_assert_null(strstr(a, value_part), "the value is in argv: %s", a);
	cr_assert_not_null(strstr(e, set), "%s", e);
	cr_assert_null(strstr(e, old), "the host's value stayed: %s", e);
	free(by_name);
	free(a);
	free(e);
}

/* The run's deadline reaches the entrypoint by name on every engine, and a
 * FORGE_DEADLINE of the runner's own environment never does. */
Test(engine, the_deadline_reaches_the_entrypoint_by_name_and_replaces_the_hosts)
{
	static char *const env_with_old[] = { "PATH=/usr/bin", "FORGE_DEADLINE=1000000000", NULL };
	static const char *const kinds[] = { "docker", "podman", "local" };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct rn_engine_params p = base(kinds[i]);

		p.environ = env_with_old;
		p.nextra_env = 0;
		if (!strcmp(kinds[i], "local"))
			p.program = "/usr/bin/forge-entrypoint";
		p.deadline = "1767225600.250";
		expect_by_name(&p, strcmp(kinds[i], "local") != 0, "FORGE_DEADLINE=1767225600.250", "1767225600",
			       "FORGE_DEADLINE=1000000000");
	}
	cr_assert(rn_engine_env_is_runner_only("FORGE_DEADLINE"));
}

/* engine.c's list is the one place naming the engines: the names in prose
 * (--engine's help, the errors) and the options of run come from it. */
Test(engine, the_list_names_the_engines_and_run_takes_each_engines_options_once)
{
	char names[128];
	const struct fg_opt *table = rn_run_options();

	cr_assert_str_eq(rn_engine_names(names, sizeof(names), "or", NULL, NULL),
			 "local, docker, podman or kubernetes");
	cr_assert_str_eq(rn_engine_names(names, 12, "or", NULL, NULL), "local, dock", "cut to the buffer");
	cr_assert_str_eq(fg_opts_find(table, "engine")->help, "local (default), docker, podman or kubernetes");
	cr_assert(!rn_engine_takes(rn_engine_find("local"), &rn__container_opt_set));
	for (size_t i = 0; rn_engine_at(i); i++)
		for (const struct rn_engine_opts *const *s = rn_engine_at(i)->opts; s && *s; s++)
			for (const struct fg_opt *o = (*s)->table; o->name; o++) {
				size_t n = 0;

				for (const struct fg_opt *t = table; t->name; t++)
					n += !strcmp(t->name, o->name);
				cr_expect_eq(n, 1, "--%s of %s: %zu times in run's table", o->name,
					     rn_engine_at(i)->name, n);
			}
}

/* The container options go into the engine's data, checked there. */
Test(engine, container_options_are_taken_and_checked_by_the_engine)
{
	const struct rn_engine_ops *ops = rn_engine_find("podman");
	struct rn_container_opts *c = ops->data_new();
	char err[256] = "";

	int memory = fg_opts_find(rn__container_opt_set.table, "memory")->id;

	cr_assert_eq(rn__container_opt_set.take(c, memory, "4g", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rn__container_opt_set.take(c, 99, "x", err, sizeof(err)), -EINVAL);
	cr_assert_eq(ops->data_check(c, "podman", err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(c->memory, "4g");
	c->pids_limit = "lots";
	cr_assert_eq(ops->data_check(c, "podman", err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "invalid process limit 'lots'"), "%s", err);
	ops->data_free(c);
}

/* The runner's own settings stay out of the sandbox, the twins of every
 * engine's options among them (read from the engines' tables). */
Test(engine, the_engines_option_twins_are_the_runners_own)
{
	static const char *const own[] = { "FORGE_ENGINE", "FORGE_IMAGE", "FORGE_MEMORY", "FORGE_MOUNT_LABEL",
					    "FORGE_READ_ONLY_ROOTFS", "FORGE_KUBE_NAMESPACE", "FORGE_KUBE_CONTEXT" };

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		cr_expect(rn_engine_env_is_runner_only(own[i]), "%s", own[i]);
	cr_expect(!rn_engine_env_is_runner_only("FORGE_WORKER_CMD"));
	cr_expect(!rn_engine_env_is_runner_only("AUTO_REVIEW_MAX_RETRIES"));
}
