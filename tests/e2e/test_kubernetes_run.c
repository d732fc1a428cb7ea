/*
 * test_kubernetes_run.c - forge-runner run --engine kubernetes against a
 * real single-node cluster (tests/kubernetes/cluster.sh): the demo approved
 * by the stream alone, the secret only in the agent, an arbitrary uid, the
 * pod's agents boxed, a 60 KiB frame, a cut log stream, the host unchanged,
 * and the figures beside docker. Skips without a cluster, saying why; the
 * fixture is tests/helpers/fgkbox.h.
 */
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
#include "fgkbox.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(kubernetes_run, .timeout = 900);

static const char REVIEWER_REJECT_THEN_APPROVE[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"if [ \"$FORGE_CYCLE\" = 1 ]; then echo 'REJECTED: work.log needs a second line'; "
	"else echo APPROVED; fi\n";

static void check_approved(const struct fgkb *b, const cJSON *res, const cJSON *ev)
{
	const cJSON *cycles = cJSON_GetObjectItemCaseSensitive(res, "review_cycles");

	cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "success")), "log:\n%s",
		  fgt_read_or_empty(b->w.log));
	cr_assert_str_eq(fge_jstr(res, "review_state"), "approved");
	cr_assert_str_eq(fge_jstr(res, "engine"), "kubernetes");
	cr_assert_eq(cJSON_GetArraySize(cycles), 2);
	for (int c = 1; c <= 2; c++) {
		const cJSON *e = fge_find_cycle_event(ev, "review_cycle", c);

		cr_assert_not_null(e, "cycle %d never reported; log:\n%s", c, fgt_read_or_empty(b->w.log));
		/* The pod's workspace is not watched: the stream alone. */
		cr_assert_str_eq(fge_jstr(e, "source"), "stream");
		cr_assert_str_eq(fge_jstr(e, "verdict"), c == 1 ? "rejected" : "approved");
		cr_assert_eq(fge_count_events(ev, "review_cycle", NULL, NULL), 2, "a cycle reported twice");
	}
}

/* "2026-12-01T22:28:31.792Z" (the log's ts) as seconds since the epoch. */
static double log_time(const char *ts)
{
	struct tm tm = { 0 };
	int ms = 0;

	if (sscanf(ts, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
		   &tm.tm_min, &tm.tm_sec, &ms) < 6)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (double)timegm(&tm) + ms / 1000.0;
}

/* The seconds from the spawn to the first output line holding what. */
static double first_output_s(const struct fgkb *b, const cJSON *ev, const char *what)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, ev) {
		if (!strcmp(fge_jstr(e, "event"), "output") && strstr(fge_jstr(e, "line"), what))
			return log_time(fge_jstr(e, "ts")) - b->t_spawn;
	}
	return -1;
}

/* The shipped demo (examples/demo-workspace, the image's demo agents and
 * default skill), as examples/run-demo-docker.sh runs it in docker. */
static void demo_workspace(struct fgkb *b)
{
	struct fgt_proc p;
	char *src = fgt_fmt("%s/examples/demo-workspace/.", FG_SOURCE_DIR);

	cr_assert_eq(fgt_run(&p, (const char *const[]){ "/bin/cp", "-R", src, b->w.ws, NULL }, NULL, NULL, NULL, 60), 0);
	cr_assert_eq(p.exit_code, 0, "cp: %s", p.err);
	fgt_proc_release(&p);
	cr_assert_eq(fgt_run(&p, (const char *const[]){ "/bin/chmod", "-R", "a+rwX", b->w.ws, NULL }, NULL, NULL, NULL, 60), 0);
	fgt_proc_release(&p);
	fgt_write(b->w.task, "{\"task_key\": \"CALC-1\", \"summary\": \"Make the calculator's tests pass\","
			   " \"description\": \"sh test.sh fails. Fix calc.sh so that add, sub and mul work.\","
			   " \"skill_name\": \"" SKILL "\", \"step_name\": \"" STEP "\", \"previous_task_keys\": []}\n");
	b->demo = 1;
	free(src);
}

Test(kubernetes_run, demo_approved_in_cycle_2_by_the_stream_alone)
{
	struct fgkb b;

	fgkb_init(&b, FGKB_REVIEW_MD);
	demo_workspace(&b);
	fgkb_spawn(&b, (const char *const[]){ "--timeout", "300", NULL });
	int code = fgkb_wait(&b);
	cr_assert_eq(code, 0, "runner exited %d; stderr:\n%s\nlog:\n%s", code,
		     fgt_read_or_empty(b.w.stderr_path), fgt_read_or_empty(b.w.log));
	cJSON *res = fgkb_result(&b), *ev = fgw_log_events(&b.w);
	check_approved(&b, res, ev);
	fgkb_assert_nothing_left(fge_jstr(res, "run_id"));
	/* The demo's tests pass on the claim now: the worker fixed calc.sh there. */
	struct fgt_proc p;
	char *test_sh = fgt_fmt("%s/test.sh", b.w.ws);
	cr_assert_eq(fgt_run(&p, (const char *const[]){ "/bin/sh", test_sh, NULL }, NULL, b.w.ws, NULL, 60), 0);
	cr_assert_eq(p.exit_code, 0, "the demo's tests still fail on the claim:\n%s%s", p.out, p.err);
	fgt_proc_release(&p);
	free(test_sh);
	cJSON_Delete(ev);
	cJSON_Delete(res);
	fgkb_release(&b);
}

/* The credential reaches the agent, from the Secret, and nothing else. */
Test(kubernetes_run, secret_reaches_the_agent_only)
{
	struct fgkb b;

	fgkb_init(&b, FGKB_REVIEW_MD);
	fgkb_agent(&b, "worker.sh", FGKB_WORKER_APPEND);
	fgkb_agent(&b, "reviewer.sh", REVIEWER_REJECT_THEN_APPROVE);
	fgkb_spawn(&b, NULL);
	int code = fgkb_wait(&b);
	cr_assert_eq(code, 0, "runner exited %d; stderr:\n%s\nlog:\n%s", code,
		     fgt_read_or_empty(b.w.stderr_path), fgt_read_or_empty(b.w.log));
	cJSON *res = fgkb_result(&b), *ev = fgw_log_events(&b.w);
	check_approved(&b, res, ev);
	char *rot_path = fgt_fmt("%s/token.rot13", b.w.ws), *rot = fgt_read(rot_path, NULL);
	cr_assert_not_null(rot, "the worker wrote no token.rot13");
	fge_rot13(rot);
	cr_assert_str_eq(rot, b.token, "the agent saw another API_TOKEN");
	fgw_assert_secret_absent(&b.w, b.token);
	fgkb_assert_nothing_left(fge_jstr(res, "run_id"));
	free(rot);
	free(rot_path);
	cJSON_Delete(ev);
	cJSON_Delete(res);
	fgkb_release(&b);
}

Test(kubernetes_run, arbitrary_uid_in_group_0_writes_the_claim)
{
	struct fgkb b;

	fgkb_init(&b, FGKB_REVIEW_MD);
	fgkb_agent(&b, "worker.sh", FGKB_WORKER_APPEND);
	fgkb_agent(&b, "reviewer.sh", REVIEWER_REJECT_THEN_APPROVE);
	/* As OpenShift's restricted SCC does: a uid from the namespace's range, group 0. */
	cr_assert_eq(chmod(b.w.ws, 0775), 0);
	fgkb_spawn(&b, (const char *const[]){ "--run-as", "1000650000:0", NULL });
	int code = fgkb_wait(&b);
	cr_assert_eq(code, 0, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	char *uid_path = fgt_fmt("%s/worker.uid", b.w.ws), *uid = fgt_read(uid_path, NULL);
	cr_assert_not_null(uid);
	cr_assert_str_eq(uid, "1000650000\n");
	struct stat st;
	char *cycle = fgt_fmt("%s/.forge/" STEP "/review_cycle_2.json", b.w.ws);
	cr_assert_eq(stat(cycle, &st), 0, "no %s on the claim", cycle);
	cr_assert_eq(st.st_uid, 1000650000u);
	free(cycle);
	free(uid);
	free(uid_path);
	fgkb_release(&b);
}

/* Every file and directory below dir (dir included) to root and group gid,
 * group writable, the directories setgid (what is made in them stays the
 * group's); 0 or -1. No shell: the paths are arguments. */
static int give_tree(const char *dir, unsigned gid)
{
	char *owner = fgt_fmt("0:%u", gid);
	const char *const steps[][10] = {
		{ "/bin/chown", "-R", owner, dir, NULL },
		{ "/bin/chmod", "-R", "g+w", dir, NULL },
		{ "/usr/bin/find", dir, "-type", "d", "-exec", "/bin/chmod", "g+s", "{}", "+", NULL },
	};
	int rc = 0;

	for (size_t i = 0; !rc && i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct fgt_proc p;

		rc = fgt_run(&p, steps[i], NULL, NULL, NULL, 60) || !p.exited || p.exit_code ? -1 : 0;
		fgt_proc_release(&p);
	}
	free(owner);
	return rc;
}

/* A claim the pod's user cannot write stops the step before any agent
 * with the fix this engine takes (--fs-group, never --engine-arg or
 * --run-as 0); and that fix works: with --fs-group the pod's user writes a
 * claim that only the group may write. */
Test(kubernetes_run, a_claim_of_another_owner_names_fs_group_and_fs_group_writes_it)
{
	struct fgkb b;

	fgkb_init(&b, FGKB_REVIEW_MD);
	fgkb_agent(&b, "worker.sh", FGKB_WORKER_APPEND);
	fgkb_agent(&b, "reviewer.sh", FGKB_REVIEWER_APPROVE);
	cr_assert_eq(chmod(b.w.ws, 0755), 0);
	fgkb_spawn(&b, (const char *const[]){ "--run-as", "1000650000:1000650000", NULL });
	int code = fgkb_wait(&b);
	cr_assert_eq(code, 2, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	char *log = fgt_read_or_empty(b.w.log);
	cr_assert(strstr(log, "--fs-group 1000650000") && !strstr(log, "--engine-arg"), "%s", log);
	char *uid_path = fgt_fmt("%s/worker.uid", b.w.ws);
	cr_assert(!fgt_exists(uid_path), "an agent ran");
	free(uid_path);
	free(log);
	fgkb_release(&b);

	fgkb_init(&b, FGKB_REVIEW_MD);
	fgkb_agent(&b, "worker.sh", FGKB_WORKER_APPEND);
	fgkb_agent(&b, "reviewer.sh", FGKB_REVIEWER_APPROVE);
	cr_assert_eq(give_tree(b.w.ws, 4242), 0);
	fgkb_spawn(&b, (const char *const[]){ "--run-as", "1000650000:1000650000", "--fs-group", "4242", NULL });
	code = fgkb_wait(&b);
	cr_assert_eq(code, 0, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	struct stat st;
	char *cycle = fgt_fmt("%s/.forge/" STEP "/review_cycle_1.json", b.w.ws);
	cr_assert_eq(stat(cycle, &st), 0, "no %s on the claim", cycle);
	cr_assert_eq(st.st_uid, 1000650000u);
	free(cycle);
	fgkb_release(&b);
}

/* The pod's agents in their box (Pod Security "restricted" allows
 * Landlock: no capability, no privilege escalation): the result says which
 * box the node gave, and where it is Landlock the worker cannot write the
 * image's /usr/local/share nor (ABI 6+) signal PID 1. */
Test(kubernetes_run, the_pods_agents_are_boxed_and_the_result_says_so)
{
	struct fgkb b;

	fgkb_init(&b, FGKB_REVIEW_MD);
	fgkb_agent(&b, "worker.sh", "#!/bin/sh\ncat >/dev/null\n"
		  "t() { if (eval \"$2\") >/dev/null 2>&1; then echo \"$1=done\"; else echo \"$1=refused\"; fi; }\n"
		  "{ t usr ': > /usr/local/share/forge-probe'; t sig 'kill -0 1'; } > notes.txt\n");
	fgkb_agent(&b, "reviewer.sh", FGKB_REVIEWER_APPROVE);
	fgkb_spawn(&b, NULL);
	int code = fgkb_wait(&b);
	cr_assert_eq(code, 0, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	cJSON *res = fgkb_result(&b);
	const cJSON *iso = cJSON_GetObjectItemCaseSensitive(res, "isolation");
	char *notes = fge_read_in(b.w.ws, "notes.txt");
	cr_assert(cJSON_IsObject(iso), "no isolation in the result; log:\n%s", fgt_read_or_empty(b.w.log));
	cr_assert_not_null(notes, "the worker noted nothing");
	if (!strcmp(fge_jstr(iso, "mechanism"), "landlock")) {
		cr_assert_not_null(strstr(notes, "usr=refused"), "%s", notes);
		if (fge_jint(iso, "abi") >= 6)
			cr_assert_not_null(strstr(notes, "sig=refused"), "%s", notes);
	} else {
		cr_assert_str_eq(fge_jstr(iso, "mechanism"), "none");
		cr_assert_str_neq(fge_jstr(iso, "reason"), "", "mechanism none without a reason");
	}
	free(notes);
	cJSON_Delete(res);
	fgkb_release(&b);
}

Test(kubernetes_run, frame_of_60_kib_arrives_whole)
{
	struct fgkb b;

	fgkb_init(&b, FGKB_REVIEW_MD);
	fgkb_agent(&b, "worker.sh", FGKB_WORKER_APPEND);
	/* About 58 KiB of feedback in cycle 1: its frame is near 60 KiB. */
	fgkb_agent(&b, "reviewer.sh", "#!/bin/sh\ncat >/dev/null\n"
		  "if [ \"$FORGE_CYCLE\" != 1 ]; then echo APPROVED; exit 0; fi\n"
		  "echo 'REJECTED: the findings below'\n"
		  "i=0; while [ $i -lt 580 ]; do printf 'finding %04d: %086d\\n' $i 0; i=$((i+1)); done\n");
	/* --record copy keeps each cycle as the runner received it: from the stream. */
	char *rec_dir = fgt_fmt("%s/rec", b.w.out);
	fgkb_spawn(&b, (const char *const[]){ "--record", "copy", "--recording-dir", rec_dir, NULL });
	int code = fgkb_wait(&b);
	cr_assert_eq(code, 0, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	cJSON *ev = fgw_log_events(&b.w), *res = fgkb_result(&b);
	const cJSON *e = fge_find_cycle_event(ev, "review_cycle", 1);
	cr_assert_not_null(e, "cycle 1 never reported; log:\n%s", fgt_read_or_empty(b.w.log));
	cr_assert_str_eq(fge_jstr(e, "source"), "stream");
	cr_assert_eq(fge_count_events(ev, "frame_invalid", NULL, NULL), 0, "a frame arrived broken");
	char *copy = fgt_fmt("%s/" STEP "/%s/review_cycle_1.json", rec_dir, fge_jstr(res, "run_id"));
	size_t len = 0;
	char *content = fgt_read(copy, &len);
	cr_assert_not_null(content, "no recorded copy %s", copy);
	cr_assert_gt(len, 58000, "the recorded cycle is %zu bytes", len);
	cr_assert_not_null(strstr(content, "finding 0579"), "the end of the feedback is missing");
	free(content);
	free(copy);
	free(rec_dir);
	cJSON_Delete(res);
	cJSON_Delete(ev);
	fgkb_release(&b);
}

Test(kubernetes_run, log_stream_cut_reconnects_every_cycle_once)
{
	struct fgkb b;

	fgkb_init(&b, FGKB_REVIEW_MD);
	fgkb_agent(&b, "worker.sh", "#!/bin/sh\ncat >/dev/null\necho started > started\n"
		  "[ \"$FORGE_CYCLE\" = 1 ] && sleep 8\necho \"worker cycle $FORGE_CYCLE\" >> work.log\n");
	fgkb_agent(&b, "reviewer.sh", REVIEWER_REJECT_THEN_APPROVE);
	fgkb_spawn(&b, NULL);
	char *id = fgw_wait_run_id(&b.w, 60), *pod = fgt_fmt("pod/forge-%s", id);
	fgw_wait_file(&b.w, "ws/started", 300);
	pid_t logs = -1;
	for (int i = 0; i < 50 && logs < 0; i++, fgt_sleep_ms(100))
		logs = fgkb_find_process((const char *const[]){ "logs", "--follow", pod, NULL });
	cr_assert_gt(logs, 0, "no kubectl logs --follow process for %s", pod);
	/* As the API server dropping the connection does. */
	kill(logs, SIGKILL);
	int code = fgkb_wait(&b);
	cr_assert_eq(code, 0, "runner exited %d; log:\n%s", code, fgt_read_or_empty(b.w.log));
	cJSON *res = fgkb_result(&b), *ev = fgw_log_events(&b.w);
	check_approved(&b, res, ev);
	char *text = fgt_read_or_empty(b.w.log);
	cr_assert_not_null(strstr(text, "reconnecting"), "no reconnect logged:\n%s", text);
	fgkb_assert_nothing_left(id);
	free(text);
	cJSON_Delete(ev);
	cJSON_Delete(res);
	free(pod);
	free(id);
	fgkb_release(&b);
}

/* While the kubelet runs: the host's sysctls are as before `up` (the
 * kubelet wrote the harness's files instead) and no KUBE chain is in the
 * host's iptables. After `down`, cluster.sh check proves the rest. */
Test(kubernetes_run, the_kubelet_does_not_change_the_host)
{
	fgkb_skip_without_cluster();
	const char *before = getenv("FORGE_K8S_BEFORE"), *state = getenv("FORGE_K8S_STATE");
	if (!before || !state)
		cr_skip_test("FORGE_K8S_BEFORE and FORGE_K8S_STATE are unset (set by scripts/test.sh)");
	char *text = fgt_read(before, NULL);
	cr_assert_not_null(text, "cannot read %s", before);
	int n = 0;
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[128], val[64];

		if (sscanf(line, "sysctl %127[^=]=%63s", key, val) != 2)
			continue;
		char *path = fgt_fmt("/proc/sys/%s", key), *now = fgt_read(path, NULL);
		cr_assert_not_null(now);
		now[strcspn(now, "\n")] = '\0';
		cr_assert_str_eq(now, val, "%s is %s, was %s before the cluster", path, now, val);
		n++;
		free(path);
		free(now);
	}
	cr_assert_geq(n, 4, "no sysctl in %s", before);
	char *shadow_path = fgt_fmt("%s/sysctl/kernel.panic", state), *shadow = fgt_read(shadow_path, NULL);
	cr_assert_not_null(shadow);
	shadow[strcspn(shadow, "\n")] = '\0';
	cr_assert_str_eq(shadow, "10", "the kubelet did not set kernel.panic (in the harness's file)");
	struct fgt_proc p;
	char *ipt = fgkb_which("iptables-save");
	cr_assert_eq(fgt_run(&p, (const char *const[]){ ipt, NULL }, NULL, NULL, NULL, 60), 0);
	free(ipt);
	cr_assert_null(strstr(p.out ? p.out : "", "KUBE-"), "KUBE chains in the host's iptables:\n%s", p.out);
	fgt_proc_release(&p);
	free(shadow);
	free(shadow_path);
	free(text);
}

/* The reviewer says when it ended, last in its review (the cycle is written
 * right after): in its output, since a reviewer that writes the workspace
 * fails its review. The raw output is the cycle's reviewer log. */
static const char REVIEWER_TIMED[] =
	"#!/bin/sh\n"
	"cat >/dev/null\n"
	"if [ \"$FORGE_CYCLE\" = 1 ]; then echo 'REJECTED: work.log needs a second line'; "
	"else echo APPROVED; fi\n"
	"echo \"ended at $(date +%s.%N)\"\n";

struct figures {
	double first_output_s, frame_latency_s, wall_s;
	long fgkb_rss_kb, child_rss_kb;
};

static void measure(const char *engine, struct figures *f)
{
	struct fgkb b;

	fgkb_init(&b, FGKB_REVIEW_MD);
	b.engine = engine;
	fgkb_agent(&b, "worker.sh", FGKB_WORKER_APPEND);
	fgkb_agent(&b, "reviewer.sh", REVIEWER_TIMED);
	fgkb_spawn(&b, NULL);
	int code = fgkb_wait(&b);
	f->wall_s = fgkb_now_s() - b.t_spawn;
	cr_assert_eq(code, 0, "%s run exited %d; log:\n%s", engine, code, fgt_read_or_empty(b.w.log));
	cJSON *ev = fgw_log_events(&b.w);
	const cJSON *e = fge_find_cycle_event(ev, "review_cycle", 1);
	char *end_path = fgt_fmt("%s/.forge/" STEP "/review_cycle_1.reviewer.log", b.w.ws);
	char *end = fgt_read(end_path, NULL);
	const char *at = end ? strstr(end, "ended at ") : NULL;
	cr_assert(e && at, "no cycle 1 or no end time in %s", end_path);
	f->first_output_s = first_output_s(&b, ev, "[worker]");
	f->frame_latency_s = log_time(fge_jstr(e, "ts")) - strtod(at + strlen("ended at "), NULL);
	f->fgkb_rss_kb = b.rss_max_kb;
	f->child_rss_kb = b.child_rss_max_kb;
	free(end);
	free(end_path);
	cJSON_Delete(ev);
	fgkb_release(&b);
}

/* The figures of kubernetes beside docker on this machine, the same
 * demo (two cycles): printed, for docs/performance.md. */
Test(kubernetes_run, figures_beside_docker)
{
	struct figures k, d;
	struct fgt_proc p;

	fgkb_skip_without_cluster();
	char *docker = fgd_which("docker");
	int have_docker = docker && fgt_run(&p, (const char *const[]){ docker, "image", "inspect",
					   getenv("FORGE_K8S_IMAGE"), NULL }, NULL, NULL, NULL, 60) == 0 &&
			  p.exited && p.exit_code == 0;
	if (docker)
		fgt_proc_release(&p);
	free(docker);
	if (!have_docker)
		cr_skip_test("no docker image %s for the docker side of the figures", getenv("FORGE_K8S_IMAGE"));
	measure("kubernetes", &k);
	measure("docker", &d);
	char *table = fgt_fmt(
		"| engine | first worker output after `run` | frame latency (reviewer end -> reported) "
		"| wall (2 cycles) | runner RSS | engine child RSS |\n|---|---|---|---|---|---|\n"
		"| kubernetes | %.2f s | %.3f s | %.1f s | %ld KiB | %ld KiB (kubernetes-job) |\n"
		"| docker | %.2f s | %.3f s | %.1f s | %ld KiB | %ld KiB (docker run) |\n",
		k.first_output_s, k.frame_latency_s, k.wall_s, k.fgkb_rss_kb, k.child_rss_kb,
		d.first_output_s, d.frame_latency_s, d.wall_s, d.fgkb_rss_kb, d.child_rss_kb);
	/* CTest shows a passing test's output to nobody: scripts/test.sh prints this file. */
	fputs(table, stdout);
	if (getenv("FORGE_K8S_FIGURES") && *getenv("FORGE_K8S_FIGURES"))
		fgt_write(getenv("FORGE_K8S_FIGURES"), table);
	free(table);
	cr_assert_gt(k.first_output_s, 0);
	cr_assert_gt(d.first_output_s, 0);
}
