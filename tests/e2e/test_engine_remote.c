/*
 * test_engine_remote.c - a docker context or a podman connection
 * that points at another host makes the engine remote, as DOCKER_HOST and
 * CONTAINER_HOST do (the runner then neither clears, watches nor sweeps the
 * host path, which names a directory on the engine's host, and hears the
 * run on the stream alone: detection_sources says remote_engine).
 *
 * The contexts and connections are made by the real CLIs (`docker context
 * create` / `use`, `podman system connection add` / `default`) in a
 * temporary DOCKER_CONFIG and CONTAINERS_CONF, so the machine's own
 * configuration is never touched; HOME and XDG_CONFIG_HOME point into the
 * test's tree too. The run itself goes to a stand-in CLI first on PATH
 * (records its arguments, exits 0): no engine is needed.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(engine_remote, .timeout = 120);

#define DOCKER "/usr/bin/docker"
#define PODMAN "/usr/bin/podman"
#define FAR "tcp://build-host.invalid:2376"

struct rt {
	struct fgw w;  /* the tree: ws, bin (the stand-in CLIs), runner.log, result.json */
	char *dcfg, *conf, *home, *xdg;  /* DOCKER_CONFIG, CONTAINERS_CONF, HOME, XDG_CONFIG_HOME */
};

static void rt_init(struct rt *t)
{
	fgw_init(&t->w);
	t->dcfg = fgw_path(&t->w, "docker-config");
	t->conf = fgw_path(&t->w, "containers.conf");
	t->home = fgw_path(&t->w, "home");
	t->xdg = fgw_path(&t->w, "xdg");
	fgw_write(&t->w, "home/.keep", "");
	fgw_write(&t->w, "containers.conf", "");
	for (int i = 0; i < 2; i++)
		free(fgw_script(&t->w, i ? "bin/podman" : "bin/docker", NULL,
				"case $1 in run) echo \"$*\" > \"$(dirname \"$0\")/../cli.args\";; esac\nexit 0\n"));
}

static void rt_release(struct rt *t)
{
	fgw_release(&t->w);
	free(t->dcfg);
	free(t->conf);
	free(t->home);
	free(t->xdg);
}

/* Runs a real CLI (absolute path) with the test's configuration; fails the
 * test unless it exits 0. Returns its stdout (owned). */
static char *cli(const struct rt *t, const char *const *argv)
{
	char *e[4] = { fgt_fmt("DOCKER_CONFIG=%s", t->dcfg), fgt_fmt("CONTAINERS_CONF=%s", t->conf),
		       fgt_fmt("HOME=%s", t->home), NULL };
	const char *env[] = { e[0], e[1], e[2], "DOCKER_HOST", "DOCKER_CONTEXT", "CONTAINER_HOST",
			      "CONTAINER_CONNECTION", "XDG_CONFIG_HOME", NULL };
	struct fgt_proc p;
	char *out;

	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 60), 0);
	cr_assert(p.exited && p.exit_code == 0, "%s %s: exit %d\n%s%s", argv[0], argv[1], p.exit_code,
		  p.out, p.err);
	out = strdup(p.out);
	fgt_proc_release(&p);
	for (int i = 0; i < 3; i++)
		free(e[i]);
	return out;
}

/* The detection_sources event of `forge-runner run --engine ENGINE` with
 * the test's configuration and the extra variables (NAME=value sets, NAME
 * alone unsets). *host gets its engine_host (owned, NULL when null);
 * returns its reason (owned). */
static char *rt_run(const struct rt *t, const char *engine, const char *const *extra, char **host)
{
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", t->w.ws, "--step", "impl", "--skill", "sk",
			       "--engine", engine, "--image", "img:1", "--result", t->w.result,
			       "--log-format", "json", "--log-file", t->w.log, NULL };
	char *e[5] = { fgt_fmt("PATH=%s:/usr/bin:/bin", t->w.bin), fgt_fmt("DOCKER_CONFIG=%s", t->dcfg),
		       fgt_fmt("CONTAINERS_CONF=%s", t->conf), fgt_fmt("HOME=%s", t->home),
		       fgt_fmt("XDG_CONFIG_HOME=%s", t->xdg) };
	const char *env[20] = { e[0], e[1], e[2], e[3], e[4], "DOCKER_HOST", "DOCKER_CONTEXT",
				"CONTAINER_HOST", "CONTAINER_CONNECTION", "FORGE_LOG_LEVEL" };
	size_t n = 10;
	struct fgt_proc p;
	char *text, *reason;
	cJSON *evs;
	const cJSON *ev;

	for (size_t i = 0; extra && extra[i] && n < 19; i++)
		env[n++] = extra[i];
	env[n] = NULL;
	unlink(t->w.log);
	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 60), 0);
	text = fgt_read(t->w.log, NULL);
	cr_assert_not_null(text, "no log; stderr: %s", p.err);
	evs = fge_json_lines(text);
	ev = fge_find_event(evs, "detection_sources", NULL, NULL);
	cr_assert_not_null(ev, "no detection_sources; stderr: %s\nlog:\n%s", p.err, text);
	reason = strdup(fge_jstr(ev, "reason"));
	*host = fge_jstr_or_null(ev, "engine_host") ? strdup(fge_jstr(ev, "engine_host")) : NULL;
	cJSON_Delete(evs);
	free(text);
	fgt_proc_release(&p);
	for (int i = 0; i < 5; i++)
		free(e[i]);
	return reason;
}

/* Expects the run to be remote with engine_host want, or local (want NULL). */
static void expect_engine(const struct rt *t, const char *engine, const char *const *extra,
			  const char *want, const char *what)
{
	char *host, *reason;

	/* A file of an earlier run: a local run clears it, a remote one leaves it. */
	fgw_write(&t->w, "ws/.forge/impl/review_cycle_5.json", "{\"stale\":true}\n");
	reason = rt_run(t, engine, extra, &host);

	if (want) {
		cr_expect_str_eq(reason, "remote_engine", "%s", what);
		cr_expect(host && !strcmp(host, want), "%s: engine_host %s", what, host ? host : "null");
		cr_expect(fgw_step_exists(&t->w, "review_cycle_5.json"),
			  "%s: the runner cleared a path of the remote host", what);
	} else {
		cr_expect_str_eq(reason, "local_workspace", "%s", what);
		cr_expect_null(host, "%s: engine_host %s", what, host);
		cr_expect_not(fgw_step_exists(&t->w, "review_cycle_5.json"),
			      "%s: a local run left an earlier run's file", what);
	}
	free(reason);
	free(host);
}

Test(engine_remote, docker_contexts_count_as_remote_engines)
{
	struct rt t;
	char *inspect;

	if (access(DOCKER, X_OK))
		cr_skip("the docker CLI is not installed (%s)", DOCKER);
	rt_init(&t);
	free(cli(&t, (const char *const[]){ DOCKER, "context", "create", "ci", "--docker",
					   "host=" FAR, NULL }));
	free(cli(&t, (const char *const[]){ DOCKER, "context", "create", "near", "--docker",
					   "host=unix:///var/run/docker.sock", NULL }));
	inspect = cli(&t, (const char *const[]){ DOCKER, "context", "inspect", "ci", "--format",
						 "{{.Endpoints.docker.Host}}", NULL });
	cr_assert_str_eq(inspect, FAR "\n", "docker itself says the endpoint is %s", inspect);
	expect_engine(&t, "docker", NULL, NULL, "no context");
	expect_engine(&t, "docker", (const char *const[]){ "DOCKER_CONTEXT=ci", NULL }, FAR,
		      "DOCKER_CONTEXT=ci");
	expect_engine(&t, "docker", (const char *const[]){ "DOCKER_CONTEXT=near", NULL }, NULL,
		      "DOCKER_CONTEXT=near (a local socket)");
	free(cli(&t, (const char *const[]){ DOCKER, "context", "use", "ci", NULL }));
	expect_engine(&t, "docker", NULL, FAR, "docker context use ci");
	expect_engine(&t, "docker", (const char *const[]){ "DOCKER_CONTEXT=default", NULL }, NULL,
		      "DOCKER_CONTEXT=default over the current context");
	expect_engine(&t, "docker", (const char *const[]){ "DOCKER_HOST=unix:///var/run/docker.sock", NULL },
		      NULL, "DOCKER_HOST over the current context");
	expect_engine(&t, "docker", (const char *const[]){ "DOCKER_HOST=tcp://other.invalid:2375", NULL },
		      "tcp://other.invalid:2375", "DOCKER_HOST, as before");
	/* podman reads none of docker's configuration. */
	expect_engine(&t, "podman", NULL, NULL, "podman beside a docker context");
	free(inspect);
	rt_release(&t);
}

/* Appends "remote = true" to the [engine] table podman wrote. */
static void set_remote_mode(const struct rt *t)
{
	char *text = fgt_read(t->conf, NULL), *at, *out;

	cr_assert_not_null(text);
	at = strstr(text, "[engine]\n");
	cr_assert_not_null(at, "no [engine] table in:\n%s", text);
	at += strlen("[engine]\n");
	out = fgt_fmt("%.*s  remote = true\n%s", (int)(at - text), text, at);
	fgt_write(t->conf, out);
	free(out);
	free(text);
}

Test(engine_remote, podman_connections_count_as_remote_engines)
{
	struct rt t;
	char *list;

	if (access(PODMAN, X_OK))
		cr_skip("the podman CLI is not installed (%s)", PODMAN);
	rt_init(&t);
	free(cli(&t, (const char *const[]){ PODMAN, "system", "connection", "add", "far", FAR, NULL }));
	free(cli(&t, (const char *const[]){ PODMAN, "system", "connection", "add", "near",
					   "unix:///run/podman/podman.sock", NULL }));
	free(cli(&t, (const char *const[]){ PODMAN, "system", "connection", "default", "far", NULL }));
	list = cli(&t, (const char *const[]){ PODMAN, "system", "connection", "list", NULL });
	cr_assert(strstr(list, FAR), "podman lists: %s", list);
	expect_engine(&t, "podman", (const char *const[]){ "CONTAINER_CONNECTION=far", NULL }, FAR,
		      "CONTAINER_CONNECTION=far");
	expect_engine(&t, "podman", (const char *const[]){ "CONTAINER_CONNECTION=near", NULL }, NULL,
		      "CONTAINER_CONNECTION=near (a local socket)");
	/* Plain podman on Linux runs locally whatever the default connection says. */
	expect_engine(&t, "podman", NULL, NULL, "a default connection, not in remote mode");
	set_remote_mode(&t);
	expect_engine(&t, "podman", NULL, FAR, "remote = true: the default connection");
	expect_engine(&t, "podman",
		      (const char *const[]){ "CONTAINER_HOST=unix:///run/podman/podman.sock", NULL }, NULL,
		      "CONTAINER_HOST over the connection");
	expect_engine(&t, "docker", NULL, NULL, "docker beside a podman connection");
	free(list);
	rt_release(&t);
}
