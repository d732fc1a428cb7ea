/*
 * test_docker_image.c - the sandbox image in a real Docker Engine.
 *
 * Builds the offline base images (docker/build-base.sh) and the image from
 * docker/Dockerfile (tag forge-review:test), then runs forge-entrypoint in
 * real containers with "docker run --rm": scripted sh agents mounted at
 * /agents, a skills directory at /skills, the workspace at /workspace, and
 * --user of the caller. Checks the review loop's files and their owner, that
 * the entrypoint as PID 1 (no --init) reaps orphaned grandchildren, and that
 * "docker stop" ends the run with 143 before the grace period runs out.
 *
 * Skipped, saying why, when no engine answers "docker info". Layer caching
 * keeps reruns quick: only the first test of a cold machine builds anything.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fgdocker.h"
#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

#define STEP FGD_STEP
#define SKILL FGD_SKILL
/* Used as the caller when the suite runs as root, so that "files belong to
 * the caller, not root" is a real check rather than root == root. */
#define STAND_IN_UID 4242
#define MAX_ARGS 64

TestSuite(docker_image, .timeout = 1700);

/* A per-test sandbox: the workspace fixture (fgws.h) and the container's
 * own. Mounted into the container: ws at /workspace (owned by uid), agents
 * (R/agents: the scripts and task.json) at /agents and skills at /skills,
 * both read-only. */
struct box {
	struct fgw w;
	char *agents;  /* R/agents, owned */
	char *name;    /* container name */
	uid_t uid;
	gid_t gid;
};

static void box_init(struct box *b, const char *tag, const char *review_md)
{
	b->uid = getuid() == 0 ? STAND_IN_UID : getuid();
	b->gid = getuid() == 0 ? STAND_IN_UID : getgid();
	fgd_workspace(&b->w, b->uid, b->gid, "agents/task.json", review_md);
	b->agents = fgw_path(&b->w, "agents");
	b->name = fgt_fmt("forge-test-%ld-%s", (long)getpid(), tag);
}

static void box_release(struct box *b)
{
	struct fgt_proc p;

	/* Normally gone already (--rm); this only cleans up after a failure. */
	fgd_cli(&p, "docker", (const char *const[]){"rm", "-f", b->name, NULL}, 120);
	fgt_proc_release(&p);
	fgw_release(&b->w);
	free(b->agents);
	free(b->name);
}

static void box_agent(struct box *b, const char *file, const char *script)
{
	free(fge_script(b->agents, file, "", script));
}

/* Owned strings that make up one "docker run" command line. */
struct cmd {
	const char *argv[MAX_ARGS];
	char *owned[MAX_ARGS];
	int n, n_owned;
};

static void cmd_add(struct cmd *c, const char *arg)
{
	cr_assert_lt(c->n, MAX_ARGS - 1);
	c->argv[c->n++] = arg;
	c->argv[c->n] = NULL;
}

static void cmd_own(struct cmd *c, char *arg)
{
	c->owned[c->n_owned++] = arg;
	cmd_add(c, arg);
}

static void cmd_release(struct cmd *c)
{
	for (int i = 0; i < c->n_owned; i++)
		free(c->owned[i]);
}

/* docker run --rm for the box, without --init, with the given extra env. */
static void cmd_run(struct cmd *c, struct box *b, const char *const env[])
{
	memset(c, 0, sizeof(*c));
	cmd_own(c, fgd_which("docker"));
	cr_assert_not_null(c->argv[0]);
	cmd_add(c, "run");
	cmd_add(c, "--rm");
	cmd_add(c, "--name");
	cmd_add(c, b->name);
	cmd_add(c, "--user");
	cmd_own(c, fgt_fmt("%ld:%ld", (long)b->uid, (long)b->gid));
	cmd_add(c, "-v");
	cmd_own(c, fgt_fmt("%s:/workspace", b->w.ws));
	cmd_add(c, "-v");
	cmd_own(c, fgt_fmt("%s:/agents:ro", b->agents));
	cmd_add(c, "-v");
	cmd_own(c, fgt_fmt("%s:/skills:ro", b->w.skills));
	static const char *const common[] = {
		"FORGE_TASK_FILE=/agents/task.json", "FORGE_STEP_NAME=" STEP,
		"FORGE_SKILL_NAME=" SKILL, "FORGE_TASK_KEY=DEMO-1", "FORGE_RUN_ID=docker-test",
		"FORGE_WORKER_CMD=/agents/worker.sh", "FORGE_REVIEWER_CMD=/agents/reviewer.sh", NULL};
	for (int i = 0; common[i]; i++) {
		cmd_add(c, "-e");
		cmd_add(c, common[i]);
	}
	for (int i = 0; env && env[i]; i++) {
		cmd_add(c, "-e");
		cmd_add(c, env[i]);
	}
	cmd_add(c, FGD_IMAGE);
	cmd_add(c, "run");
}

/* Parses a cycle file of the box's step; NULL when absent or not JSON. */
static cJSON *read_cycle(struct box *b, int n, struct stat *st)
{
	char *path = fgt_fmt("%s/.forge/" STEP "/review_cycle_%d.json", b->w.ws, n);
	char *text = fgt_read(path, NULL);
	cJSON *j = text ? cJSON_Parse(text) : NULL;

	if (st)
		cr_assert_eq(text ? stat(path, st) : 0, 0);
	free(text);
	free(path);
	return j;
}

static const char *jstr(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

Test(docker_image, image_is_built_with_labels_user_and_no_compiler)
{
	struct fgt_proc p;

	fgd_ensure_image(FGD_IMAGE);
	fgd_cli(&p, "docker", (const char *const[]){"image", "inspect", "-f",
		"{{.Config.User}}|{{json .Config.Entrypoint}}|{{json .Config.Cmd}}|{{.Config.WorkingDir}}|"
		"{{index .Config.Labels \"org.opencontainers.image.version\"}}|"
		"{{index .Config.Labels \"org.opencontainers.image.title\"}}", FGD_IMAGE, NULL}, 60);
	cr_assert_eq(p.exit_code, 0, "%s", p.err);
	cr_assert_str_eq(p.out, "10001:10001|[\"forge-entrypoint\"]|[\"run\"]|/workspace|test|forge-review\n");
	fgt_proc_release(&p);

	/* The runtime holds the program, the default skills, the demo agents and
	 * git (the change set), but no compiler and no development headers. */
	fgd_cli(&p, "docker", (const char *const[]){"run", "--rm", "--entrypoint", "/bin/sh",
		FGD_IMAGE, "-c",
		"forge-entrypoint --version && test -f /skills/default/" SKILL "/review.md"
		" && test -d /usr/local/share/forge-review/examples"
		" && ! command -v cc && ! command -v cmake && ! test -e /usr/include/uv.h"
		" && command -v git"
		" && echo runtime-ok", NULL}, 300);
	cr_assert(p.exited && p.exit_code == 0, "runtime check failed:\n%s%s", p.out, p.err);
	cr_assert_not_null(strstr(p.out, "runtime-ok"));
	fgt_proc_release(&p);
}

static const char WORKER_APPEND[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"echo \"worker cycle $FORGE_CYCLE\" >> work.log\n";

static const char REVIEWER_REJECT_THEN_APPROVE[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"if [ \"$FORGE_CYCLE\" = 1 ]; then echo 'REJECTED: work.log needs a second line'; "
	"else echo APPROVED; fi\n";

static void assert_owned(const struct stat *st, const struct box *b, const char *what)
{
	cr_assert_eq(st->st_uid, b->uid, "%s belongs to uid %ld, not the caller %ld", what,
		     (long)st->st_uid, (long)b->uid);
	cr_assert_eq(st->st_gid, b->gid, "%s belongs to gid %ld, not the caller %ld", what,
		     (long)st->st_gid, (long)b->gid);
}

Test(docker_image, reject_then_approve_writes_cycles_owned_by_the_caller)
{
	struct box b;
	struct cmd c;
	struct fgt_proc p;
	struct stat st;

	fgd_ensure_image(FGD_IMAGE);
	box_init(&b, "loop", "---\nmax_retries: 3\n---\nCheck that work.log has two lines.\n");
	box_agent(&b, "worker.sh", WORKER_APPEND);
	box_agent(&b, "reviewer.sh", REVIEWER_REJECT_THEN_APPROVE);
	cmd_run(&c, &b, NULL);
	cr_assert_eq(fgt_run(&p, c.argv, NULL, NULL, NULL, 600), 0);
	cr_assert(p.exited && p.exit_code == 0, "container exited %d (signal %d):\n%s\n%s",
		  p.exit_code, p.signal, p.out, p.err);

	cJSON *c1 = read_cycle(&b, 1, &st);
	cr_assert_not_null(c1, "no review_cycle_1.json:\n%s", p.err);
	assert_owned(&st, &b, "review_cycle_1.json");
	cr_assert_str_eq(jstr(c1, "verdict"), "rejected");
	cr_assert_not_null(strstr(jstr(c1, "feedback"), "second line"));
	cr_assert_str_eq(jstr(c1, "run_id"), "docker-test");
	cJSON *c2 = read_cycle(&b, 2, &st);
	cr_assert_not_null(c2, "no review_cycle_2.json:\n%s", p.err);
	assert_owned(&st, &b, "review_cycle_2.json");
	cr_assert_str_eq(jstr(c2, "verdict"), "approved");
	cr_assert_null(read_cycle(&b, 3, NULL), "a third cycle after the approval");

	/* The worker ran twice (first run and one retry), as the caller. */
	char *log_path = fgt_fmt("%s/work.log", b.w.ws);
	char *log = fgt_read(log_path, NULL);
	cr_assert_not_null(log);
	cr_assert_not_null(strchr(log, '\n'));
	cr_assert_not_null(strchr(strchr(log, '\n') + 1, '\n'), "worker ran once only:\n%s", log);
	cr_assert_eq(stat(log_path, &st), 0);
	assert_owned(&st, &b, "work.log");
	free(log);
	free(log_path);
	cJSON_Delete(c1);
	cJSON_Delete(c2);
	fgt_proc_release(&p);
	cmd_release(&c);
	box_release(&b);
}

/*
 * The worker double-forks: a subshell starts a short sleep and exits at
 * once, so the sleep is orphaned and re-parented to PID 1. The worker writes
 * down the orphan's pid and parent. The reviewer then waits for the orphan to
 * disappear from /proc, scans /proc for any zombie, and approves only when
 * there is none: a PID 1 that does not reap leaves the sleep as a zombie.
 */
static const char WORKER_ORPHAN[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"( sleep 1 & echo $! > orphan.pid )\n"
	"pid=$(cat orphan.pid)\n"
	"sed 's/.*) //' /proc/$pid/stat | cut -d' ' -f2 > orphan.ppid\n"
	"tr '\\0' ' ' < /proc/1/cmdline > pid1.cmdline\n";

static const char REVIEWER_ZOMBIES[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"pid=$(cat orphan.pid)\n"
	"i=0\n"
	"while [ -e /proc/$pid ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done\n"
	"z=\n"
	"for f in /proc/[0-9]*/stat; do\n"
	"  s=$(sed 's/.*) //' \"$f\" 2>/dev/null | cut -d' ' -f1)\n"
	"  [ \"$s\" = Z ] && z=\"$z $(basename $(dirname $f))\"\n"
	"done\n"
	"if [ -e /proc/$pid ] || [ -n \"$z\" ]; then\n"
	"  echo \"REJECTED: orphan $pid still in /proc, zombies:$z\"\n"
	"else echo APPROVED; fi\n";

Test(docker_image, entrypoint_as_pid1_reaps_orphaned_grandchildren)
{
	struct box b;
	struct cmd c;
	struct fgt_proc p;

	fgd_ensure_image(FGD_IMAGE);
	box_init(&b, "reap", "---\nmax_retries: 1\n---\nNo zombies allowed.\n");
	box_agent(&b, "worker.sh", WORKER_ORPHAN);
	box_agent(&b, "reviewer.sh", REVIEWER_ZOMBIES);
	cmd_run(&c, &b, NULL);
	cr_assert_eq(fgt_run(&p, c.argv, NULL, NULL, NULL, 600), 0);
	cr_assert(p.exited && p.exit_code == 0, "container exited %d:\n%s\n%s", p.exit_code,
		  p.out, p.err);

	/* PID 1 is the entrypoint itself (no --init), and it adopted the orphan. */
	char *pid1_path = fgt_fmt("%s/pid1.cmdline", b.w.ws);
	char *pid1 = fgt_read(pid1_path, NULL);
	cr_assert_not_null(pid1);
	cr_assert_not_null(strstr(pid1, "forge-entrypoint"), "PID 1 is '%s'", pid1);
	char *ppid_path = fgt_fmt("%s/orphan.ppid", b.w.ws);
	char *ppid = fgt_read(ppid_path, NULL);
	cr_assert_not_null(ppid);
	cr_assert_str_eq(ppid, "1\n", "the orphan's parent was %s", ppid);

	cJSON *c1 = read_cycle(&b, 1, NULL);
	cr_assert_not_null(c1, "no review_cycle_1.json:\n%s", p.err);
	cr_assert_str_eq(jstr(c1, "verdict"), "approved", "reviewer saw: %s", jstr(c1, "feedback"));
	cJSON_Delete(c1);
	free(pid1);
	free(pid1_path);
	free(ppid);
	free(ppid_path);
	fgt_proc_release(&p);
	cmd_release(&c);
	box_release(&b);
}

static const char WORKER_HANGS[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"echo started > started\n"
	"exec sleep 600\n";

Test(docker_image, docker_stop_ends_the_run_with_143_within_the_grace_period)
{
	struct box b;
	struct cmd c;
	struct fgt_proc p;

	fgd_ensure_image(FGD_IMAGE);
	box_init(&b, "stop", "Review.\n");
	box_agent(&b, "worker.sh", WORKER_HANGS);
	box_agent(&b, "reviewer.sh", REVIEWER_REJECT_THEN_APPROVE);
	cmd_run(&c, &b, NULL);
	pid_t client = fgw_spawn(&b.w, c.argv, NULL);

	fgw_wait_file(&b.w, "ws/started", 120);

	/* A 60 s grace period: had the entrypoint ignored SIGTERM, docker would
	 * SIGKILL it and the run would end with 137, not 143. */
	fgd_cli(&p, "docker", (const char *const[]){"stop", "-t", "60", b.name, NULL}, 180);
	cr_assert_eq(p.exit_code, 0, "docker stop: %s", p.err);
	fgt_proc_release(&p);
	fgw_wait(&b.w, client, 120);
	cr_assert(WIFEXITED(b.w.status) && WEXITSTATUS(b.w.status) == 143,
		  "docker run ended with status %#x, want exit 143:\n%s", b.w.status, b.w.err);
	for (int i = 0; i < 100 && fgd_container_listed("docker", b.name); i++)
		fgt_sleep_ms(100);
	cr_assert(!fgd_container_listed("docker", b.name), "container %s left behind", b.name);
	cmd_release(&c);
	box_release(&b);
}

/*
 * The preflight in the real image: presets whose CLIs the image
 * does not have, no credentials, and a root-owned workspace for a container
 * running as another uid: exit 2 with every message, before any agent ran
 * and before the cycle directory exists. Only meaningful as root (the
 * workspace must belong to someone else than the container's user).
 */
Test(docker_image, preflight_names_missing_clis_keys_and_an_unwritable_workspace_before_anything)
{
	static const char *const env[] = { "FORGE_WORKER_CMD=", "FORGE_REVIEWER_CMD=", "FORGE_WORKER_AGENT=claude",
					   "FORGE_REVIEWER_AGENT=codex", NULL };
	struct box b;
	struct cmd c;
	struct fgt_proc p;
	char *forge;

	if (getuid() != 0)
		cr_skip_test("needs root: the workspace must belong to another uid than the container's user");
	fgd_ensure_image(FGD_IMAGE);
	box_init(&b, "preflight", "---\nmax_retries: 2\n---\nCheck.\n");
	cr_assert_eq(chown(b.w.ws, 0, 0), 0);
	cmd_run(&c, &b, env);
	cr_assert_eq(fgt_run(&p, c.argv, NULL, NULL, NULL, 600), 0);
	cr_assert(p.exited && p.exit_code == 2, "container exited %d:\n%s", p.exit_code, p.err);
	cr_assert(strstr(p.err, "error: cannot run worker 'claude': not found in PATH (the image needs Claude Code: "
			 "see docs/guide/container-image.md)"), "%s", p.err);
	cr_assert(strstr(p.err, "error: cannot run reviewer 'codex': not found in PATH (the image needs Codex CLI: "),
		  "%s", p.err);
	cr_assert(strstr(p.err, "error: the worker's Claude Code (FORGE_WORKER_AGENT=claude) has no credentials: set "
			 "ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN or ANTHROPIC_AUTH_TOKEN"), "%s", p.err);
	cr_assert(strstr(p.err, "forge-runner run --env CODEX_API_KEY"), "%s", p.err);
	char *want = fgt_fmt("error: cannot write the cycle directory '/workspace/.forge/" STEP "': '/workspace' is "
			     "owned by 0:0 (mode 0755) and forge-entrypoint runs as uid:gid %d:%d", STAND_IN_UID,
			     STAND_IN_UID);
	cr_assert(strstr(p.err, want), "want %s in:\n%s", want, p.err);
	cr_assert(strstr(p.err, "--engine-arg --user=0:0"), "%s", p.err);
	forge = fgt_fmt("%s/.forge", b.w.ws);
	cr_assert_not(fgt_exists(forge), "the preflight left a .forge behind");
	free(forge);
	free(want);
	fgt_proc_release(&p);
	cmd_release(&c);
	box_release(&b);
}

/* Stand-in CLIs that record which credentials they were given. */
static const char STANDIN_ENV[] =
	"#!/bin/sh\ncat > /dev/null\n"
	"echo \"${ANTHROPIC_API_KEY-unset} ${CODEX_API_KEY-unset} ${CLAUDECODE-unset}\" > /workspace/env.$FORGE_ROLE\n";

/* Credential filtering in the real image: both keys reach the container,
 * the Codex worker gets only its own, the Claude reviewer only its own. */
Test(docker_image, each_agent_gets_only_its_vendors_key_in_the_image)
{
	static const char *const env[] = { "FORGE_WORKER_CMD=", "FORGE_REVIEWER_CMD=", "FORGE_WORKER_AGENT=codex",
					   "FORGE_REVIEWER_AGENT=claude", "ANTHROPIC_API_KEY=key-a", "CODEX_API_KEY=key-c",
					   "CLAUDECODE=1", "PATH=/agents:/usr/local/bin:/usr/bin:/bin", NULL };
	struct box b;
	struct cmd c;
	struct fgt_proc p;
	char *w, *r;
	char *codex = fgt_fmt("%s%s", STANDIN_ENV,
			      "echo '{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"done\"}}'\n"
			      "echo '{\"type\":\"turn.completed\",\"usage\":{}}'\n");
	char *claude = fgt_fmt("%s%s", STANDIN_ENV,
			       "echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
			       "\"result\":\"Fine. APPROVED\"}'\n");

	fgd_ensure_image(FGD_IMAGE);
	box_init(&b, "creds", "---\nmax_retries: 1\n---\nCheck.\n");
	box_agent(&b, "codex", codex);
	box_agent(&b, "claude", claude);
	free(codex);
	free(claude);
	cmd_run(&c, &b, env);
	cr_assert_eq(fgt_run(&p, c.argv, NULL, NULL, NULL, 600), 0);
	cr_assert(p.exited && p.exit_code == 0, "container exited %d:\n%s", p.exit_code, p.err);
	w = fge_read_in(b.w.ws, "env.worker");
	r = fge_read_in(b.w.ws, "env.reviewer");
	cr_assert_str_eq(w, "unset key-c unset\n");
	cr_assert_str_eq(r, "key-a unset unset\n");
	free(w);
	free(r);
	fgt_proc_release(&p);
	cmd_release(&c);
	box_release(&b);
}
