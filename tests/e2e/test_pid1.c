/*
 * test_pid1.c - forge-entrypoint as its agents' parent (PID 1 of a
 * container): stop signals forwarded and exit 143, orphans and setsid
 * escapees reaped, only stdio inherited, a prompt the worker never reads,
 * huge output, timeouts and the kill grace, an inherited ignored SIGCHLD,
 * terminal escapes in the agents' output.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
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

TestSuite(pid1, .timeout = 180);

Test(pid1, sigterm_forwards_and_exits_143_without_strays)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "Check.\n");
	/* The agent starts a grandchild, then has its parent (forge-entrypoint)
	 * receive SIGTERM (from outside its tree), and waits. */
	char *body = fgt_fmt("%s"
			     "sleep 300 &\n"
			     "echo $! > ../gc.pid\n"
			     "echo $$ > ../agent.pid\n"
			     "outside_kill TERM $PPID\n"
			     "wait\n", FGE_OUTSIDE_KILL);
	char *wk = fgw_script(&w, "worker.sh", NULL, body);
	char *rv = fgw_script(&w, "reviewer.sh", NULL, "echo ran > ../reviewer_ran.txt; echo APPROVED");
	free(body);
	fgw_entrypoint_signalled(&w, &p, wk, rv, NULL);
	cr_assert(p.exited, "forge-entrypoint died by signal %d", p.signal);
	fgt_assert_exit(&p, 143);
	long agent = fgw_read_pid(&w, "agent.pid"), gc = fgw_read_pid(&w, "gc.pid");
	cr_assert_eq(fgt_count_group((pid_t)agent), 0, "a process of the agent's group is left");
	cr_assert(kill((pid_t)gc, 0) < 0 && errno == ESRCH, "grandchild %ld still exists", gc);
	cr_assert(!fgw_exists(&w, "reviewer_ran.txt"), "nothing runs after SIGTERM");
	/* The summary says how the step ended: interrupted, not "no review". */
	char *why = fgw_summary_failure(&w, "interrupted");
	cr_assert(strstr(why, "stopped by signal 15"), "%s", why);
	free(why);
	free(wk); free(rv);
	fgw_release_run(&w, &p);
}

/* SIGHUP (a closed terminal, outside a container) and SIGQUIT stop a run
 * like SIGTERM: forwarded to the agent, nothing left behind, exit 128+N. */
Test(pid1, sighup_and_sigquit_stop_the_run_like_sigterm)
{
	static const struct {
		const char *name;
		int code;
	} sigs[] = { { "HUP", 129 }, { "QUIT", 131 } };

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct fgw w;
		struct fgt_proc p;
		char *body = fgt_fmt("%s"
				     "sleep 300 &\n"
				     "echo $$ > ../agent.pid\n"
				     "outside_kill %s $PPID\n"
				     "wait\n", FGE_OUTSIDE_KILL, sigs[i].name);

		fgw_init_step(&w, NULL);
		fgw_review_md(&w, "default", "Check.\n");
		char *wk = fgw_script(&w, "worker.sh", NULL, body);
		char *rv = fgw_script(&w, "reviewer.sh", NULL, "echo ran > ../reviewer_ran.txt; echo APPROVED");
		fgw_entrypoint_signalled(&w, &p, wk, rv, NULL);
		cr_assert(p.exited, "[%s] forge-entrypoint died by signal %d", sigs[i].name, p.signal);
		cr_assert_eq(p.exit_code, sigs[i].code, "[%s] stderr:\n%s", sigs[i].name, p.err);
		long agent = fgw_read_pid(&w, "agent.pid");
		cr_assert_eq(fgt_count_group((pid_t)agent), 0, "[%s] a process of the agent's group is left",
			     sigs[i].name);
		cr_assert(!fgw_exists(&w, "reviewer_ran.txt"), "[%s] nothing runs after the signal",
			  sigs[i].name);
		free(wk);
		free(rv);
		free(body);
		fgt_proc_release(&p);
		fgw_release(&w);
	}
}

Test(pid1, orphans_are_reaped)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nmax_retries: 1\n---\nCheck.\n");
	/* A double fork: the short sleep is re-parented to forge-entrypoint
	 * (subreaper) and exits while the worker still runs. */
	/* The reviewer counts zombie children of its parent. */
	fgw_run_step(&w, &p, "(sleep 0.2 &)\nsleep 1\n",
		     "z=$(cat /proc/[0-9]*/stat 2>/dev/null | awk -v pp=$PPID '$4 == pp && $3 == \"Z\"' | wc -l)\n"
		     "if [ \"$z\" -eq 0 ]; then echo APPROVED; else echo \"REJECTED: $z zombies\"; fi\n",
		     NULL);
	fgt_assert_exit(&p, 0);
	cJSON *c = fgw_step_json(&w, "review_cycle_1.json");
	cr_assert_str_eq(fge_jstr(c, "verdict"), "approved", "%s", fge_jstr(c, "feedback"));
	cJSON_Delete(c);
	fgw_release_run(&w, &p);
}

Test(pid1, hundred_megabytes_of_output_do_not_block)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nmax_retries: 1\n---\nCheck.\n");
	/* 100 MB through a sanitizer build on a loaded machine can take longer
	 * than the suite's usual 30 s agent timeout: this test is about not
	 * blocking, not about the timeout. */
	fgw_run_step(&w, &p, "head -c 1000000 /dev/zero | tr '\\0' 'w'; echo",
		     "head -c 100000000 /dev/zero | tr '\\0' 'y'\necho\necho 'All fine. APPROVED'\n",
		     (const char *const[]){ "FORGE_AGENT_TIMEOUT=110", "FORGE_AGENT_IDLE_TIMEOUT=110", NULL });
	cr_assert_eq(p.exit_code, 0, "stderr tail:\n%s", p.err_len > 2000 ? p.err + p.err_len - 2000 : p.err);
	fgw_assert_step_strs(&w, "review_cycle_1.json", "verdict", "approved");
	/* Streamed live (in chunks, prefixed) and the raw log capped at 32 MiB. */
	cr_assert_gt(p.err_len, 100000000u);
	char *path = fgt_fmt("%s/review_cycle_1.reviewer.log", w.step_dir);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_lt(st.st_size, 32 * 1024 * 1024 + 1024);
	cr_assert_gt(st.st_size, 32 * 1024 * 1024 - 1);
	free(path);

	fgw_release_run(&w, &p);
}

/* The preflight: a worker that cannot be found is a
 * configuration error, exit 2, before anything is created. */
Test(pid1, missing_worker_binary_fails_the_task_clearly)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, NULL);
	fgw_entrypoint(&w, &p, "xyz-no-such-agent --go", NULL, NULL);
	fgt_assert_exit(&p, 2);
	cr_assert(strstr(p.err, "error: cannot run worker 'xyz-no-such-agent': not found in PATH (PATH="), "%s", p.err);
	cr_assert(!strstr(p.err, "relative path"), "a PATH lookup is not a relative path: %s", p.err);
	cr_assert(!strstr(p.err, "running the worker"), "%s", p.err);
	fgt_proc_release(&p);

	/* A relative path is taken from the workspace; the error says so. */
	fgw_entrypoint(&w, &p, "agents/worker.sh --go", NULL, NULL);
	fgt_assert_exit(&p, 2);
	char *want = fgt_fmt("error: cannot run worker 'agents/worker.sh': no executable file '%s/agents/worker.sh' "
			     "(a relative path is resolved from the workspace)", w.ws);
	cr_assert(strstr(p.err, want), "%s", p.err);
	free(want);
	fgw_release_run(&w, &p);
}

Test(pid1, worker_idle_timeout_fails_the_task)
{
	struct fgw w;
	struct fgt_proc p;
	const char *extra[] = { "FORGE_AGENT_IDLE_TIMEOUT=0.3", NULL };

	fgw_init_step(&w, NULL);
	fgw_run_step(&w, &p, "echo working; exec sleep 60", NULL, extra);
	fgt_assert_exit(&p, 1);
	cr_assert(strstr(p.err, "FORGE_AGENT_IDLE_TIMEOUT"), "%s", p.err);
	fgw_release_run(&w, &p);
}

Test(pid1, agent_ignoring_sigterm_is_killed_after_grace)
{
	struct fgw w;
	struct fgt_proc p;
	const char *extra[] = { "FORGE_AGENT_TIMEOUT=0.3", "FORGE_AGENT_KILL_GRACE=0.2", NULL };

	fgw_init_step(&w, NULL);
	fgw_run_step(&w, &p, "trap '' TERM\nwhile :; do sleep 1; done", NULL, extra);
	fgt_assert_exit(&p, 1);
	cr_assert(strstr(p.err, "worker timed out after 0.3 s"), "%s", p.err);
	fgw_release_run(&w, &p);
}

/* Descriptors the test process itself holds (Criterion's, the harness's)
 * are not the entrypoint's doing: mark them close-on-exec so that whatever
 * an agent inherits came from forge-entrypoint. */
static void cloexec_own_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	cr_assert(d);
	for (;;) {
		e = readdir(d);
		if (!e)
			break;
		int fd = (int)strtol(e->d_name, NULL, 10);
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && fd > 2 && fd != dirfd(d))
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	closedir(d);
}

/* Lines "[role] ... N -> TARGET" of `ls -l /proc/self/fd` in the echoed
 * output: every N above 2 must be ls's own directory handle. */
static int leaked_fds(const char *err, const char *role, int *listed)
{
	char *prefix = fgt_fmt("[%s] ", role);
	int leaks = 0;

	*listed = 0;
	for (const char *s = err; s && *s;) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		char *line = fgt_fmt("%.*s", (int)len, s);
		char *arrow = strstr(line, " -> ");

		if (!strncmp(line, prefix, strlen(prefix)) && arrow) {
			char *num = arrow;

			while (num > line && num[-1] != ' ')
				num--;
			(*listed)++;
			if (strtol(num, NULL, 10) > 2 &&
			    !(strstr(arrow, " -> /proc/") && strstr(arrow, "/fd"))) {
				fprintf(stderr, "leaked into the %s: %s\n", role, line);
				leaks++;
			}
		}
		free(line);
		s = nl ? nl + 1 : NULL;
	}
	free(prefix);
	return leaks;
}

Test(pid1, agents_inherit_only_stdio)
{
	struct fgw w;
	struct fgt_proc p;
	int listed;

	fgw_init_step(&w, "---\nmax_retries: 1\n---\nCheck.\n");
	cloexec_own_fds();
	/* The reviewer runs with its raw log open, the worker with none. */
	fgw_entrypoint(&w, &p, "/bin/ls -l /proc/self/fd", "/bin/ls -l /proc/self/fd", NULL);
	fgt_assert_exit(&p, 0);
	cr_assert_eq(leaked_fds(p.err, "worker", &listed), 0, "stderr:\n%s", p.err);
	cr_assert_geq(listed, 3, "no fd listing from the worker:\n%s", p.err);
	cr_assert_eq(leaked_fds(p.err, "reviewer", &listed), 0, "stderr:\n%s", p.err);
	cr_assert_geq(listed, 3, "no fd listing from the reviewer:\n%s", p.err);
	fgw_release_run(&w, &p);
}

Test(pid1, megabyte_prompt_to_worker_that_never_reads_stdin)
{
	struct fgw w;
	struct fgt_proc p;
	size_t n = 1000 * 1000;
	char *desc = malloc(n + 1);

	fgw_init_step(&w, NULL);
	memset(desc, 'd', n);
	desc[n] = '\0';
	/* Just under the 1 MiB task file limit: sixteen pipe buffers. */
	char *task = fgt_fmt("{\"task_key\": \"ABC-12\", \"summary\": \"big\", \"description\": \"%s\", "
			     "\"step_name\": \"impl\"}", desc);
	fge_write_in(w.root, "task.json", task);
	/* Stays alive without reading stdin, then exits by itself: the
	 * entrypoint must neither block on the prompt nor lose the agent. */
	char *wk = fgw_script(&w, "worker.sh", NULL,
			     "wc -c < \"$FORGE_PROMPT_FILE\" > ../prompt_len.txt\n"
			     "sleep 1\n"
			     "echo worker done\n");
	fgw_entrypoint(&w, &p, wk, NULL, NULL);
	cr_assert_eq(p.exit_code, 0, "stderr tail:\n%s", p.err);
	cr_assert(strstr(p.err, "[worker] worker done"), "%s", p.err);
	char *len = fgw_read(&w, "prompt_len.txt");
	cr_assert(len);
	cr_assert_geq(strtol(len, NULL, 10), (long)n, "prompt file holds %s bytes", len);
	free(len); free(wk); free(task); free(desc);
	fgw_release_run(&w, &p);
}

Test(pid1, sigterm_during_the_reviewer_exits_143_and_cleans_up)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, "---\nmax_retries: 2\n---\nCheck.\n");
	fge_write_in(w.root, "tmp/.keep", "");
	char *tmp = fgt_fmt("%s/tmp", w.root), *tmpenv = fgt_fmt("TMPDIR=%s", tmp);
	/* The private directory is made below w.root/tmp: the agents' box
	 * may not write w.root (it holds it), only the signaller's directory. */
	char *sigw = fgt_fmt("FORGE_TEST_AGENT_WRITE_DIR=%s/sig", w.root);
	const char *extra[] = { tmpenv, sigw, NULL };
	char *wk = fgw_script(&w, "worker.sh", NULL, "echo worked");
	/* Ignores the forwarded SIGTERM, so the second one must end it. */
	char *body = fgt_fmt("%s"
			     "trap 'echo term' TERM\n"
			     "outside_kill TERM $PPID\n"
			     "sleep 0.5\n"
			     "outside_kill TERM $PPID\n"
			     "while :; do sleep 0.1; done\n", FGE_OUTSIDE_KILL);
	char *rv = fgw_script(&w, "reviewer.sh", NULL, body);
	free(body);
	fgw_entrypoint_signalled(&w, &p, wk, rv, extra);
	cr_assert(p.exited, "died by signal %d", p.signal);
	fgt_assert_exit(&p, 143);
	cr_assert(!fgw_step_exists(&w, "review_cycle_1.json"), "a cycle nobody finished was written");
	free(fgw_summary_failure(&w, "interrupted"));
	char *keep = fgt_fmt("%s/.keep", tmp);
	unlink(keep);
	free(keep);
	cr_assert_eq(fgt_count_entries(tmp), 0, "the temporary directory is left in %s", tmp);
	free(wk); free(rv); free(tmp); free(tmpenv); free(sigw);
	fgw_release_run(&w, &p);
}

/* A process that called setsid() is outside the agent's process group, so
 * killpg() misses it; as a subreaper the entrypoint is its parent once the
 * agent is gone and must stop it too. */
static void escapee_case(const char *worker_body, int want_code)
{
	struct fgw w;
	struct fgt_proc p;

	fgw_init_step(&w, NULL);
	char *body = fgt_fmt("setsid sleep 300 </dev/null >/dev/null 2>&1 &\n"
			     "echo $! > ../escapee.pid\n"
			     /* until it really runs in its own session */
			     "while [ \"$(cut -d' ' -f6 /proc/$!/stat)\" != \"$!\" ]; do sleep 0.05; done\n"
			     "%s%s", FGE_OUTSIDE_KILL, worker_body);
	char *wk = fgw_script(&w, "worker.sh", NULL, body);
	fgw_entrypoint_signalled(&w, &p, wk, NULL, NULL);
	cr_assert_eq(p.exit_code, want_code, "stderr:\n%s", p.err);
	long pid = fgw_read_pid(&w, "escapee.pid");
	int left = fgt_alive(pid);
	if (left)
		kill((pid_t)pid, SIGKILL);
	cr_assert(!left, "process %ld that left the agent's group outlived forge-entrypoint", pid);
	free(wk); free(body);
	fgw_release_run(&w, &p);
}

Test(pid1, setsid_escapee_is_stopped_after_the_agent_exits)
{
	escapee_case("echo done\n", 0);
}

Test(pid1, setsid_escapee_is_stopped_on_sigterm)
{
	escapee_case("outside_kill TERM $PPID\nwait\n", 143);
}

/*
 * An ignored SIGCHLD survives exec, and with it the kernel reaps children
 * by itself: waitpid() never reports the agent, so forge-entrypoint must
 * put the default disposition back (a caller like a Python orchestrator
 * with signal(SIGCHLD, SIG_IGN) would otherwise leave it waiting forever).
 */
Test(pid1, ignored_sigchld_inherited_from_the_parent)
{
	struct fgw w;
	int status = 0;
	pid_t pid, got = 0;

	fgw_init_step(&w, NULL);
	char *wk = fgw_script(&w, "worker.sh", NULL, "echo worked > ../worked.txt");
	char *wenv = fgt_fmt("FORGE_WORKER_CMD=%s", wk);
	char *task = fgt_fmt("%s/task.json", w.root), *errf = fgt_fmt("%s/ep.err", w.root);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct sigaction ign = { .sa_handler = SIG_IGN };
		char *argv[] = { FG_ENTRYPOINT_BIN, "run", "--workspace", w.ws, "--skills-dir", w.skills,
				 "--step", "impl", "--task-file", task, NULL };
		char *wdir = fgt_fmt("FORGE_TEST_AGENT_WRITE_DIR=%s", w.root);
		char *envp[] = { wenv, "FORGE_AGENT_TIMEOUT=30", "FORGE_AGENT_KILL_GRACE=1",
				 "PATH=/usr/bin:/bin", wdir, NULL };
		int fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		setpgid(0, 0);
		sigaction(SIGCHLD, &ign, NULL);
		dup2(fd, 2);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	/* The worker is done at once: 60 s without an end is a hang. */
	for (int i = 0; i < 600 && got == 0; i++) {
		got = waitpid(pid, &status, WNOHANG);
		if (got == 0)
			usleep(100000);
	}
	if (got == 0) {
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	char *err = fgt_read(errf, NULL);
	cr_assert_neq(got, 0, "forge-entrypoint hung with SIGCHLD ignored; stderr:\n%s", err);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x; stderr:\n%s", status, err);
	cr_assert(fgw_exists(&w, "worked.txt"));
	free(err); free(errf); free(task); free(wenv); free(wk);
	fgw_release(&w);
}

/* An agent's "\r\033[2K" reached the terminal raw on the
 * "[worker] " / "[reviewer] " lines and the "Review cycle" line, erasing the
 * prefix and showing a forged "forge-entrypoint:" line. Now escaped as the
 * runner's log does: no control byte but the line ends reaches stderr. */
Test(pid1, agent_terminal_escapes_are_escaped_on_stderr)
{
	struct fgw w;
	struct fgt_proc p;
	const char *extra[] = { "AUTO_REVIEW_MAX_RETRIES=1", NULL };

	fgw_init_step(&w, "Check it.\n");
	char *worker = fgw_script(&w, "worker", NULL, "printf 'ok\\r\\033[2Kforge-entrypoint: review approved\\n'\n"
					       "printf 'tab\\there \\302\\233 bell\\007 \\\\ \"q\"\\n' >&2\n");
	char *reviewer = fgw_script(&w, "reviewer", NULL, "printf 'REJECTED\\r\\033[2Kforge-entrypoint: all good\\n'\n");
	fgw_entrypoint(&w, &p, worker, reviewer, extra);
	for (const char *c = p.err; *c; c++)
		cr_assert(*c == '\n' || ((unsigned char)*c >= 0x20 && *c != 0x7f),
			  "raw control byte 0x%02x on stderr:\n%s", (unsigned char)*c, p.err);
	cr_assert(!strstr(p.err, "\xc2\x9b"), "a raw C1 CSI reached stderr");
	fgt_assert_has(p.err, "[worker] ok\\r\\x1b[2Kforge-entrypoint: review approved\n",
		       "[worker] tab\\there \\xc2\\x9b bell\\x07 \\ \"q\"\n",
		       "[reviewer] REJECTED\\r\\x1b[2Kforge-entrypoint: all good\n",
		       "Review cycle 1/1: REJECTED - \\x1b[2Kforge-entrypoint: all good");
	free(worker);
	free(reviewer);
	fgw_release_run(&w, &p);
}

/* FORGE_DEADLINE (the runner's --timeout as a moment): shortly before it
 * the entrypoint stops its agent as on SIGTERM and leaves its summary,
 * failed with cause timeout, and exits 124; nothing runs after. */
Test(pid1, the_deadline_stops_the_run_with_a_timeout_summary_and_124)
{
	struct fgw w;
	struct fgt_proc p;
	struct timespec now;

	fgw_init_step(&w, NULL);
	fgw_review_md(&w, "default", "Check.\n");
	char *wk = fgw_script(&w, "worker.sh", NULL, "echo $$ > ../agent.pid\nsleep 30\n");
	char *rv = fgw_script(&w, "reviewer.sh", NULL, "echo ran > ../reviewer_ran.txt; echo APPROVED");
	clock_gettime(CLOCK_REALTIME, &now);
	char *deadline = fgt_fmt("FORGE_DEADLINE=%lld.%03ld", (long long)now.tv_sec + 3, now.tv_nsec / 1000000);
	const char *extra[] = { deadline, NULL };

	fgw_entrypoint(&w, &p, wk, rv, extra);
	cr_assert_eq(p.exit_code, 124, "stderr:\n%s", p.err);
	cr_assert_eq(fgt_count_group((pid_t)fgw_read_pid(&w, "agent.pid")), 0, "a process of the agent's group is left");
	cr_assert(!fgw_exists(&w, "reviewer_ran.txt"), "nothing runs after the deadline's stop");
	char *why = fgw_summary_failure(&w, "timeout");
	cr_assert(strstr(why, "the run's time ran out") && strstr(why, "(FORGE_DEADLINE"), "%s", why);
	free(why); free(deadline);
	free(wk); free(rv);
	fgt_proc_release(&p);
	fgw_release(&w);
}

/* A remaining-seconds value, or no number, is refused before any agent
 * runs: FORGE_DEADLINE is a moment in UTC seconds since the epoch. */
Test(pid1, an_invalid_deadline_is_a_config_error)
{
	const char *bad[] = { "FORGE_DEADLINE=3600", "FORGE_DEADLINE=soon" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fgw w;
		struct fgt_proc p;
		const char *extra[] = { bad[i], NULL };

		fgw_init_step(&w, NULL);
		char *wk = fgw_script(&w, "worker.sh", NULL, "echo ran > ../worker_ran.txt");
		fgw_entrypoint(&w, &p, wk, NULL, extra);
		cr_assert_eq(p.exit_code, 2, "%s: stderr:\n%s", bad[i], p.err);
		cr_assert(strstr(p.err, "invalid FORGE_DEADLINE") && strstr(p.err, "UTC seconds since the epoch"),
			  "%s", p.err);
		cr_assert(!fgw_exists(&w, "worker_ran.txt"));
		free(wk);
		fgt_proc_release(&p);
		fgw_release(&w);
	}
}
