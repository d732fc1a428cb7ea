/*
 * fgrbox.c - the fixture of forge-runner run in a container (see fgrbox.h).
 */
#include "fgrbox.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fgdocker.h"
#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"
#include "forge/audit.h"

/* As root with a group-accessible engine socket: the stand-in user. */
static void fgrb_choose_user(struct fgrb *b)
{
	struct stat st;

	b->uid = getuid();
	b->gid = getgid();
	if (b->as) {
		b->uid = b->as->uid;
		b->gid = b->as->gid;
		b->sock_gid = b->as->gid;
		b->drop = 1;
		return;
	}
	if (getuid() != 0 || !strcmp(b->cli, "podman") || getenv("DOCKER_HOST") ||
	    stat(FGRB_ENGINE_SOCKET, &st) != 0 || !(st.st_mode & S_IRGRP) || !(st.st_mode & S_IWGRP))
		return;
	b->uid = FGRB_STAND_IN_ID;
	b->gid = FGRB_STAND_IN_ID;
	b->sock_gid = st.st_gid;
	b->drop = 1;
}

/* as: rootless podman's user, or NULL. */
void fgrb_init_as(struct fgrb *b, const char *cli, const struct fgd_user *as,
			const char *review_md)
{
	memset(b, 0, sizeof(*b));
	b->cli = cli;
	b->as = as;
	fgrb_choose_user(b);
	/* The stand-in user and the container get through to the tree. */
	fgd_workspace(&b->w, b->uid, b->gid, "ws/task.json", review_md);
	if (!strcmp(cli, "podman"))
		b->conf = fgd_podman_conf(b->w.root, as != NULL);
	b->token = fgt_fmt("tok-%ld-%lx-secret", (long)getpid(), (unsigned long)time(NULL));
}

void fgrb_init(struct fgrb *b, const char *cli, const char *review_md)
{
	fgrb_init_as(b, cli, NULL, review_md);
}

/* Runs the box's engine CLI (podman with the box's user and configuration). */
static void fgrb_cli(const struct fgrb *b, struct fgt_proc *p, const char *const args[], double t)
{
	if (!strcmp(b->cli, "podman"))
		fgd_podman(p, b->as, b->conf, args, t);
	else
		fgd_cli(p, b->cli, args, t);
}

void fgrb_release(struct fgrb *b)
{
	if (b->volume) {
		struct fgt_proc p;

		fgrb_cli(b, &p, (const char *const[]){ "volume", "rm", "-f", b->volume, NULL }, 120);
		fgt_proc_release(&p);
		free(b->volume);
	}
	free(b->conf);
	fgw_release(&b->w);
	free(b->token);
}

void fgrb_agent(struct fgrb *b, const char *file, const char *script)
{
	char *dir = fgt_fmt("%s/agents", b->w.ws);

	free(fge_script(dir, file, "", script));
	free(dir);
}

/* box_agent() with an owned script, freed here. */
void fgrb_agent_take(struct fgrb *b, const char *file, char *script)
{
	fgrb_agent(b, file, script);
	free(script);
}

/*
 * Starts forge-runner run for the box in its own process group (fgw_spawn),
 * as the box's user (setpriv), with a clean environment: PATH, HOME, the
 * agent commands, API_TOKEN, and extra options (NULL-terminated).
 */
pid_t fgrb_spawn(struct fgrb *b, const char *const *extra)
{
	const char *argv[FGRB_MAX_ARGS];
	char *owned[3] = { NULL };
	char *env[20];
	size_t n = 0, ne = 0;
	pid_t pid;

	if (b->drop) {
		owned[0] = fgt_fmt("--reuid=%ld", (long)b->uid);
		owned[1] = fgt_fmt("--regid=%ld", (long)b->gid);
		owned[2] = fgt_fmt("--groups=%ld", (long)b->sock_gid);
		argv[n++] = "setpriv";
		for (int i = 0; i < 3; i++)
			argv[n++] = owned[i];
		argv[n++] = "--";
	}
	const char *const fixed[] = {
		FG_RUNNER_BIN, "run", "--engine", b->cli, "--image", FGD_IMAGE,
		b->volume ? "--workspace-volume" : "--workspace", b->volume ? b->volume : b->w.ws,
		"--step", FGRB_STEP, "--skill", FGRB_SKILL, "--task-key", "DEMO-1", "--skills-dir", b->w.skills,
		"--result", b->w.result, "--log-format", "json", "--log-file", b->w.log,
		"--poll-interval", "30", "--agent-env", "API_TOKEN", NULL,
	};
	fgt_strs_add(argv, &n, FGRB_MAX_ARGS, fixed);
	fgt_strs_add(argv, &n, FGRB_MAX_ARGS, extra);
	env[ne++] = fgt_fmt("-");
	env[ne++] = fgt_fmt("PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	/* Rootless podman keeps its images and containers under the user's HOME. */
	env[ne++] = fgt_fmt("HOME=%s", b->as ? b->as->home : b->w.out);
	env[ne++] = fgt_fmt("FORGE_WORKER_CMD=/workspace/agents/worker.sh");
	env[ne++] = fgt_fmt("FORGE_REVIEWER_CMD=/workspace/agents/reviewer.sh");
	env[ne++] = fgt_fmt("FORGE_TASK_FILE=/workspace/task.json");
	env[ne++] = fgt_fmt("FORGE_AGENT_TIMEOUT=600");
	env[ne++] = fgt_fmt("API_TOKEN=%s", b->token);
	if (b->conf)
		env[ne++] = fgt_fmt("CONTAINERS_CONF=%s", b->conf);
	if (b->worker_output)
		env[ne++] = fgt_fmt("FORGE_WORKER_OUTPUT=%s", b->worker_output);
	if (b->reviewer_output)
		env[ne++] = fgt_fmt("FORGE_REVIEWER_OUTPUT=%s", b->reviewer_output);
	for (size_t i = 0; b->env && b->env[i] && ne < 19; i++)
		env[ne++] = fgt_fmt("%s", b->env[i]);
	env[ne] = NULL;
	pid = fgw_spawn(&b->w, argv, (const char *const *)env);
	for (size_t i = 0; i < ne; i++)
		free(env[i]);
	for (int i = 0; i < 3; i++)
		free(owned[i]);
	return pid;
}

/* Waits for the runner; its exit code, or 128+N when killed by signal N.
 * Past RUN_LIMIT_S its group is killed and the test fails. */
int fgrb_wait(struct fgrb *b, pid_t pid)
{
	fgw_wait(&b->w, pid, FGRB_RUN_LIMIT_S);
	return fgw_code(&b->w);
}

const char *fgrb_jstr(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

double fgrb_jnum(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);

	cr_assert(cJSON_IsNumber(v), "no number '%s'", key);
	return v->valuedouble;
}

cJSON *fgrb_result(const struct fgrb *b)
{
	return fgw_result_json(&b->w);
}

void fgrb_assert_no_container(const struct fgrb *b, const char *run_id)
{
	char *name = fgt_fmt("forge-%s", run_id);

	/* Checked at once: the runner promises the container is gone when it exits. */
	if (!strcmp(b->cli, "podman"))
		cr_assert(!fgd_podman_listed(b->as, b->conf, name), "container %s left behind", name);
	else
		cr_assert(!fgd_container_listed(b->cli, name), "container %s left behind", name);
	free(name);
}

void fgrb_finish(struct fgrb *b, cJSON *res, cJSON *ev)
{
	fgrb_assert_no_container(b, fgrb_jstr(res, "run_id"));
	fgw_assert_secret_absent(&b->w, b->token);
	cJSON_Delete(ev);
	cJSON_Delete(res);
	fgrb_release(b);
}

static void fgrb_assert_owned(const struct fgrb *b, const char *path)
{
	struct stat st;

	cr_assert_eq(lstat(path, &st), 0, "%s: %s", path, strerror(errno));
	cr_assert(st.st_uid == b->uid && st.st_gid == b->gid, "%s belongs to %ld:%ld, not the caller %ld:%ld",
		  path, (long)st.st_uid, (long)st.st_gid, (long)b->uid, (long)b->gid);
}

/* Every entry of .forge/STEP and the workspace files the agents wrote. */
void fgrb_assert_files_owned(const struct fgrb *b)
{
	char *forge = fgt_fmt("%s/.forge", b->w.ws);
	char *step = fgt_fmt("%s/" FGRB_STEP, forge);
	char *work = fgt_fmt("%s/work.log", b->w.ws);
	DIR *d = opendir(step);
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d, "%s: %s", step, strerror(errno));
	fgrb_assert_owned(b, forge);
	fgrb_assert_owned(b, step);
	fgrb_assert_owned(b, work);
	for (de = readdir(d); de; de = readdir(d)) {
		char *p;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		p = fgt_fmt("%s/%s", step, de->d_name);
		fgrb_assert_owned(b, p);
		free(p);
		n++;
	}
	closedir(d);
	cr_assert_geq(n, 3, "expected two cycles and a summary in %s", step);
	free(forge);
	free(step);
	free(work);
}

const char FGRB_WORKER_APPEND[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"echo \"worker cycle $FORGE_CYCLE\" >> work.log\n"
	"printf '%s' \"$API_TOKEN\" | tr 'a-z' 'n-za-m' > token.rot13\n";

const char FGRB_REVIEWER_REJECT_THEN_APPROVE[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"if [ \"$FORGE_CYCLE\" = 1 ]; then echo 'REJECTED: work.log needs a second line'; "
	"else echo APPROVED; fi\n";

void fgrb_check_cycle_events(const cJSON *ev, const struct fgrb *b)
{
	for (int c = 1; c <= 2; c++) {
		const cJSON *e = fge_find_cycle_event(ev, "review_cycle", c);

		cr_assert_not_null(e, "cycle %d never reported; log:\n%s", c, fgt_read_or_empty(b->w.log));
		/* Live through the bind mount, not caught afterwards by the sweep. */
		cr_assert_str_eq(fgrb_jstr(e, "source"), "watch", "cycle %d came from '%s'", c, fgrb_jstr(e, "source"));
		cr_assert_str_eq(fgrb_jstr(e, "verdict"), c == 1 ? "rejected" : "approved");
	}
}

void fgrb_check_result_approved(const cJSON *res)
{
	const cJSON *cycles = cJSON_GetObjectItemCaseSensitive(res, "review_cycles");

	cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "success")));
	cr_assert_eq(fgrb_jnum(res, "exit_code"), 0);
	cr_assert_str_eq(fgrb_jstr(res, "review_state"), "approved");
	cr_assert_str_eq(fgrb_jstr(res, "engine"), "docker");
	cr_assert_eq(fgrb_jnum(res, "sweep_caught"), 0);
	cr_assert_eq(cJSON_GetArraySize(cycles), 2);
	cr_assert_eq(fgrb_jnum(cJSON_GetArrayItem(cycles, 0), "cycle"), 1);
	cr_assert_str_eq(fgrb_jstr(cJSON_GetArrayItem(cycles, 0), "verdict"), "rejected");
	cr_assert_eq(fgrb_jnum(cJSON_GetArrayItem(cycles, 1), "cycle"), 2);
	cr_assert_str_eq(fgrb_jstr(cJSON_GetArrayItem(cycles, 1), "verdict"), "approved");
}

/* ---- limits, hardening, arbitrary uids ---- */

/* What the container's processes are held to, as the kernel says it (cgroup
 * v2 first, then v1), written to limits.txt in the workspace. */
const char FGRB_PROBE[] =
	"probe() {\n"
	"  echo \"mem=$(cat /sys/fs/cgroup/memory.max 2>/dev/null ||"
	" cat /sys/fs/cgroup/memory/memory.limit_in_bytes)\"\n"
	"  echo \"pids=$(cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max)\"\n"
	"  echo \"cpu=$(cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo"
	" \"$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)\")\"\n"
	"  echo \"net=$(ls /sys/class/net | tr '\\n' ' ')\"\n"
	"  grep -E '^(CapEff|NoNewPrivs):' /proc/self/status | tr -d '\\t '\n"
	"  echo \"rootfs=$(awk '$2 == \"/\" { split($4, o, \",\"); m = o[1] } END { print m }'"
	" /proc/self/mounts)\"\n"
	/* /tmp's mount, not a write: the agents' box lets them write only the
	 * workspace and their HOME and TMPDIR (entrypoint/sandbox.h). */
	"  echo \"tmp=$(awk '$2 == \"/tmp\" { split($4, o, \",\"); m = o[1] } END { print m }' /proc/self/mounts)\"\n"
	"  echo \"id=$(id -u):$(id -g)\"\n"
	"  if touch \"$HOME/.forge-probe\" 2>/dev/null; then echo home=rw; else echo home=ro; fi\n"
	"}\n"
	"[ -e limits.txt ] || probe > limits.txt\n";

const char FGRB_REVIEWER_APPROVES[] = "#!/bin/sh\ncat >/dev/null\necho APPROVED\n";

void fgrb_assert_probe(const struct fgrb *b, const char *const want[])
{
	char *path = fgt_fmt("%s/limits.txt", b->w.ws);
	char *got = fgt_read(path, NULL);

	cr_assert_not_null(got, "the worker wrote no limits.txt; log:\n%s", fgt_read_or_empty(b->w.log));
	for (size_t i = 0; want[i]; i++) {
		char *line = fgt_fmt("%s\n", want[i]);

		cr_assert_not_null(strstr(got, line), "limits.txt lacks '%s':\n%s", want[i], got);
		free(line);
	}
	free(got);
	free(path);
}

cJSON *fgrb_run_approved(struct fgrb *b, const char *const *extra, int cycles)
{
	int code = fgrb_wait(b, fgrb_spawn(b, extra));
	cr_assert_eq(code, 0, "runner exited %d; stderr:\n%s\nlog:\n%s", code,
		     fgt_read_or_empty(b->w.stderr_path), fgt_read_or_empty(b->w.log));
	cJSON *res = fgrb_result(b);
	cr_assert_str_eq(fgrb_jstr(res, "review_state"), "approved");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(res, "review_cycles")), cycles);
	fgrb_assert_no_container(b, fgrb_jstr(res, "run_id"));
	return res;
}

/* ---- the stream: frames on the container's stderr ---- */

/* Number of events named name whose string key equals val. */
int fgrb_count_events(const cJSON *events, const char *name, const char *key, const char *val)
{
	const cJSON *e;
	int n = 0;

	cJSON_ArrayForEach(e, events)
		n += !strcmp(fgrb_jstr(e, "event"), name) && (!key || !strcmp(fgrb_jstr(e, key), val));
	return n;
}

int fgrb_by_source(const cJSON *res, const char *source)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(res, "cycles_by_source");

	cr_assert(cJSON_IsObject(o), "no cycles_by_source in the result");
	return (int)fgrb_jnum(o, source);
}

/* Copies the box's workspace into the volume (owned by the box's user)
 * and plants a stale cycle file of an earlier run there. */
void fgrb_fill_volume(struct fgrb *b)
{
	struct fgt_proc p;
	char *src = fgt_fmt("%s:/src:ro", b->w.ws);
	char *vol = fgt_fmt("%s:/workspace", b->volume);
	char *script = fgt_fmt(
		"cp -R /src/. /workspace/ && mkdir -p /workspace/.forge/" FGRB_STEP " && "
		"echo '{\"cycle\":7}' > /workspace/.forge/" FGRB_STEP "/review_cycle_7.json && "
		"chown -R %u:%u /workspace", (unsigned)b->uid, (unsigned)b->gid);

	fgrb_cli(b, &p, (const char *const[]){ "volume", "create", b->volume, NULL }, 120);
	cr_assert_eq(p.exit_code, 0, "volume create: %s", p.err);
	fgt_proc_release(&p);
	fgrb_cli(b, &p, (const char *const[]){ "run", "--rm", "--user", "0:0", "--entrypoint",
		"sh", "-v", src, "-v", vol, FGD_IMAGE, "-c", script, NULL }, 300);
	cr_assert_eq(p.exit_code, 0, "filling the volume: %s", p.err);
	fgt_proc_release(&p);
	free(src);
	free(vol);
	free(script);
}

/* ls of the step directory inside the volume. */
static char *fgrb_volume_listing(const struct fgrb *b)
{
	struct fgt_proc p;
	char *vol = fgt_fmt("%s:/workspace:ro", b->volume);
	char *out;

	fgrb_cli(b, &p, (const char *const[]){ "run", "--rm", "--entrypoint", "ls", "-v", vol,
		FGD_IMAGE, "/workspace/.forge/" FGRB_STEP, NULL }, 300);
	cr_assert_eq(p.exit_code, 0, "ls in the volume: %s", p.err);
	out = fgt_fmt("%s", p.out);
	fgt_proc_release(&p);
	free(vol);
	return out;
}

void fgrb_volume_run(const char *cli)
{
	struct fgrb b;

	fgrb_init(&b, cli, "---\nmax_retries: 3\n---\nCheck that work.log has two lines.\n");
	if (b.conf)
		fgd_podman_ensure_image(NULL, b.conf);
	fgrb_agent(&b, "worker.sh", FGRB_WORKER_APPEND);
	fgrb_agent(&b, "reviewer.sh", FGRB_REVIEWER_REJECT_THEN_APPROVE);
	b.volume = fgt_fmt("forge-test-ws-%ld-%lx", (long)getpid(), (unsigned long)time(NULL));
	/* A root runner's sandbox on a volume runs as 10001:10001 (never uid 0
	 * without --as-root): the volume is that user's. */
	if (b.uid == 0)
		b.uid = b.gid = 10001;
	fgrb_fill_volume(&b);
	int code = fgrb_wait(&b, fgrb_spawn(&b, NULL));
	cr_assert_eq(code, 0, "runner exited %d; stderr:\n%s\nlog:\n%s", code,
		     fgt_read_or_empty(b.w.stderr_path), fgt_read_or_empty(b.w.log));
	cJSON *res = fgrb_result(&b);
	cJSON *ev = fgw_log_events(&b.w);
	const cJSON *src = fge_find_cycle_event(ev, "detection_sources", 0);

	cr_assert_not_null(src, "no detection_sources; log:\n%s", fgt_read_or_empty(b.w.log));
	cr_assert_str_eq(fgrb_jstr(src, "sources"), "stream");
	cr_assert_str_eq(fgrb_jstr(src, "reason"), "workspace_volume");
	cr_assert_str_eq(fgrb_jstr(src, "workspace_volume"), b.volume);
	cr_assert_str_eq(fgrb_jstr(res, "review_state"), "approved", "from the summary frame");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(res, "review_cycles")), 2);
	for (int c = 1; c <= 2; c++) {
		const cJSON *e = fge_find_cycle_event(ev, "review_cycle", c);

		cr_assert_not_null(e, "cycle %d never reported; log:\n%s", c, fgt_read_or_empty(b.w.log));
		cr_assert_str_eq(fgrb_jstr(e, "source"), "stream");
		cr_assert_str_eq(fgrb_jstr(e, "verdict"), c == 1 ? "rejected" : "approved");
	}
	cr_assert_eq(fgrb_count_events(ev, "review_cycle", NULL, NULL), 2, "each cycle once");
	cr_assert_eq(fgrb_by_source(res, "stream"), 2);
	cr_assert_eq(fgrb_by_source(res, "watch") + fgrb_by_source(res, "poll") + fgrb_by_source(res, "sweep"), 0);
	cr_assert_null(fge_find_cycle_event(ev, "stale_cleared", 0), "the runner cannot clear a volume");
	/* The host workspace was never touched: no .forge there. */
	char *forge = fgt_fmt("%s/.forge", b.w.ws);
	cr_assert(!fgt_exists(forge), "the runner wrote to the host path");
	free(forge);
	/* The entrypoint cleared the stale file itself (--clear-stale). */
	char *ls = fgrb_volume_listing(&b);
	cr_assert_not_null(strstr(ls, "review_cycle_2.json"), "%s", ls);
	cr_assert_not_null(strstr(ls, "review_summary.json"), "%s", ls);
	cr_assert_null(strstr(ls, "review_cycle_7.json"), "the stale file is still there:\n%s", ls);
	free(ls);
	fgrb_finish(&b, res, ev);
}
