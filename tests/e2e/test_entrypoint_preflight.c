/*
 * test_entrypoint_preflight.c - the checks of preflight.h through the real
 * forge-entrypoint: a cycle directory this uid cannot write (run as nobody
 * on a root-owned workspace, as a container with --user 10001:10001 on a
 * root-owned bind mount) is exit 2 naming the uid:gid, the owner and the
 * fix, before any agent ran; every problem is reported in one go. The other
 * checks (PATH, credentials) are in test_agent_loop.c, test_entrypoint_agents.c
 * and test_entrypoint_loop.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(entrypoint_preflight, .timeout = 60);

struct nobody_run {
	const char *const *argv;
	const char *const *envp;
	const char *err_file;
};

/* In the child, as nobody: the entrypoint with stderr to err_file. */
static int exec_entrypoint(void *arg)
{
	const struct nobody_run *r = arg;
	int fd = open(r->err_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

	if (fd < 0 || dup2(fd, 2) < 0)
		return 126;
	execve(r->argv[0], (char *const *)r->argv, (char *const *)r->envp);
	return 127;
}

Test(entrypoint_preflight, an_unwritable_cycle_dir_stops_the_run_before_any_agent_and_names_the_fix)
{
	struct fgw w;
	char *task, *wk, *marker, *errf, *err, *out_dir, *wcmd, *rcmd, *skills;
	int code;

	if (geteuid() != 0)
		cr_skip_test("needs root to run the entrypoint as another uid (nobody) on a root-owned workspace");
	fgw_init(&w);	fgw_task(&w, NULL);
	fgw_review_md(&w, "default", "---\nmax_retries: 1\n---\nCheck.\n");
	marker = fgt_fmt("%s/ran", w.root);
	wk = fgw_script(&w, "worker.sh", NULL, "echo ran > \"$FORGE_WORKSPACE/../ran\"\n");
	out_dir = fgt_fmt("%s/out", w.root);
	cr_assert_eq(mkdir(out_dir, 0777), 0);
	cr_assert_eq(chmod(out_dir, 0777), 0);
	/* Everything readable by nobody, the workspace not writable by it. */
	cr_assert_eq(chmod(w.root, 0755), 0);
	cr_assert_eq(chmod(w.ws, 0755), 0);
	errf = fgt_fmt("%s/stderr", out_dir);
	task = fgt_fmt("%s/task.json", w.root);
	wcmd = fgt_fmt("FORGE_WORKER_CMD=%s", wk);
	rcmd = fgt_fmt("FORGE_REVIEWER_CMD=no-such-reviewer-xyz");
	skills = fgt_fmt("FORGE_SKILLS_DIR=%s", w.skills);
	const char *argv[] = { FG_ENTRYPOINT_BIN, "run", "--workspace", w.ws, "--step", "impl", "--task-file", task,
			       NULL };
	const char *envp[] = { "PATH=/usr/bin:/bin", wcmd, rcmd, skills, "FORGE_RUN_ID=test-run", NULL };
	struct nobody_run r = { argv, envp, errf };

	code = fgt_as_nobody(exec_entrypoint, &r);
	err = fgt_read(errf, NULL);
	cr_assert_not_null(err);
	cr_assert_eq(code, 2, "exit %d; stderr:\n%s", code, err);
	char *want = fgt_fmt("error: cannot write the cycle directory '%s/.forge/impl': '%s' is owned by 0:0 (mode "
			     "0755) and forge-entrypoint runs as uid:gid 65534:65534 (%s); run the container as its "
			     "owner (forge-runner run --engine-arg --user=0:0) or give the workspace to 65534:65534 "
			     "(chown -R 65534:65534 on the host)", w.ws, w.ws, strerror(EACCES));
	cr_assert(strstr(err, want), "want:\n%s\nstderr:\n%s", want, err);
	/* Every problem at once: the reviewer is missing too. */
	cr_assert(strstr(err, "cannot run reviewer 'no-such-reviewer-xyz': not found in PATH (PATH=/usr/bin:/bin;"),
		  "%s", err);
	cr_assert_not(fgt_exists(marker), "the worker ran");
	cr_assert_not(fgt_exists(w.step_dir), "the cycle directory was created");
	free(want);
	free(err);

	/* In a pod (the kubelet sets KUBERNETES_SERVICE_HOST) the fix is the
	 * kubernetes engine's: its --engine-arg and --run-as 0 are refused. */
	const char *kenvp[] = { "PATH=/usr/bin:/bin", wcmd, rcmd, skills, "FORGE_RUN_ID=test-run",
				"KUBERNETES_SERVICE_HOST=in-cluster", NULL };
	struct nobody_run kr = { argv, kenvp, errf };

	code = fgt_as_nobody(exec_entrypoint, &kr);
	err = fgt_read(errf, NULL);
	cr_assert_eq(code, 2, "exit %d; stderr:\n%s", code, err);
	cr_assert(strstr(err, "on Kubernetes give the claim to the pod's group (forge-runner run --fs-group 65534"),
		  "%s", err);
	cr_assert_null(strstr(err, "--engine-arg"), "%s", err);
	free(err);
	free(errf);
	free(task);
	free(wcmd);
	free(rcmd);
	free(skills);
	free(out_dir);
	free(marker);
	free(wk);
	fgw_release(&w);
}
