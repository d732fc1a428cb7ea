/*
 * test_agent.c - ep_agent_run with /bin/sh agents, and the bounded capture.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "capture.h"
#include "fgtest.h"
#include "pid1.h"

extern char **environ;

struct fixture {
	struct ep_pid1 pid1;
	struct ep_capture cap;
	struct ep_agent_result r;
	char *dir;
};

static void run_sh(struct fixture *f, const char *script, const char *input, double timeout, double idle)
{
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	struct ep_agent_spec s = {
		.role = "worker", .argv = argv, .envp = environ, .cwd = f->dir,
		.input = input, .input_len = input ? strlen(input) : 0,
		.timeout_s = timeout, .idle_timeout_s = idle, .kill_grace_s = 0.5,
		.capture = &f->cap, .log_fd = -1, .echo_fd = -1,
	};

	cr_assert_eq(ep_agent_run(&f->pid1, &s, &f->r), 0);
}

static void setup_fixture(struct fixture *f)
{
	cr_assert_eq(ep_pid1_init(&f->pid1), 0);
	ep_capture_init(&f->cap, 1024, 1024);
	f->dir = fgt_tmpdir();
}

static void teardown_fixture(struct fixture *f)
{
	ep_capture_release(&f->cap);
	ep_pid1_release(&f->pid1);
	fgt_rm_rf(f->dir);
	free(f->dir);
}

/* The fixture of every agent test: set up before it, torn down after it
 * (pass or fail). */
static struct fixture fx;

static void fx_setup(void)
{
	setup_fixture(&fx);
}

static void fx_teardown(void)
{
	teardown_fixture(&fx);
}

TestSuite(agent, .init = fx_setup, .fini = fx_teardown, .timeout = 60);

static char *captured(struct fixture *f)
{
	struct fg_buf b;

	fg_buf_init(&b, 1 << 20);
	ep_capture_text(&f->cap, &b);
	return fg_buf_detach(&b, NULL);
}

Test(agent, exit_status_output_and_stdin_eof)
{
	run_sh(&fx, "cat; echo \" in $(pwd)\"; exit 3", "prompt text", 10, 0);
	cr_assert_eq(fx.r.end, EP_AGENT_EXITED);
	cr_assert_eq(fx.r.exit_code, 3);
	cr_assert(!ep_agent_ok(&fx.r));
	char *out = captured(&fx), *want = fgt_fmt("prompt text in %s\n", fx.dir);
	cr_assert_str_eq(out, want);
	cr_assert_str_eq(fx.r.what, "worker exited with status 3");
	free(out); free(want);
}

Test(agent, success_is_ok)
{
	run_sh(&fx, "echo fine", NULL, 10, 0);
	cr_assert(ep_agent_ok(&fx.r));
}

Test(agent, large_prompt_to_agent_that_never_reads_stdin)
{
	size_t n = 1 << 20;
	char *big = malloc(n + 1);

	memset(big, 'p', n);
	big[n] = '\0';
	run_sh(&fx, "echo done", big, 10, 0);
	cr_assert(ep_agent_ok(&fx.r), "%s", fx.r.what);
	free(big);
}

Test(agent, timeout_kills_the_group)
{
	run_sh(&fx, "sleep 60 & wait", NULL, 0.3, 0);
	cr_assert_eq(fx.r.end, EP_AGENT_TIMEOUT);
	cr_assert(strstr(fx.r.what, "timed out"), "%s", fx.r.what);
}

Test(agent, idle_watchdog)
{
	run_sh(&fx, "echo hi; sleep 60", NULL, 30, 0.3);
	cr_assert_eq(fx.r.end, EP_AGENT_IDLE);
}

Test(agent, signal_death_is_reported)
{
	run_sh(&fx, "kill -KILL $$", NULL, 10, 0);
	cr_assert_eq(fx.r.end, EP_AGENT_SIGNALED);
	cr_assert_eq(fx.r.signal, 9);
}

Test(agent, missing_binary_is_not_started)
{
	char *argv[] = { "no-such-agent-binary", NULL };

	struct ep_agent_spec s = { .role = "reviewer", .argv = argv, .envp = environ, .cwd = fx.dir,
				   .timeout_s = 5, .kill_grace_s = 0.5, .log_fd = -1, .echo_fd = -1 };
	cr_assert_eq(ep_agent_run(&fx.pid1, &s, &fx.r), 0);
	cr_assert_eq(fx.r.end, EP_AGENT_NOT_STARTED);
	cr_assert_str_eq(fx.r.what, "cannot run reviewer 'no-such-agent-binary': No such file or directory");
}

Test(agent, leftover_background_process_is_cleaned_up)
{
	/* The agent exits at once but leaves a child holding its stdout. */
	run_sh(&fx, "sleep 60 & echo $!", NULL, 10, 0);
	cr_assert(ep_agent_ok(&fx.r), "%s", fx.r.what);
	char *out = captured(&fx);
	pid_t bg = (pid_t)strtol(out, NULL, 10);
	cr_assert_gt(bg, 0);
	cr_assert(kill(bg, 0) < 0, "background child %d survived", (int)bg);
	free(out);
}

Test(agent, log_is_capped_and_echo_is_prefixed)
{
	char *argv[] = { "/bin/sh", "-c", "printf 'one\\ntwo'; head -c 5000 /dev/zero | tr '\\0' x", NULL };

	char *logp = fgt_fmt("%s/log", fx.dir), *echop = fgt_fmt("%s/echo", fx.dir);
	int lfd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0644), efd = open(echop, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct ep_agent_spec s = { .role = "reviewer", .argv = argv, .envp = environ, .cwd = fx.dir,
				   .timeout_s = 10, .kill_grace_s = 0.5, .capture = &fx.cap,
				   .log_fd = lfd, .log_max = 100, .echo_fd = efd };
	cr_assert_eq(ep_agent_run(&fx.pid1, &s, &fx.r), 0);
	close(lfd);
	close(efd);
	cr_assert_eq(fx.r.out_bytes, 5007);
	size_t llen;
	char *log = fgt_read(logp, &llen), *echo = fgt_read(echop, NULL);
	cr_assert(!strncmp(log, "one\ntwo", 7));
	cr_assert(strstr(log, "output truncated"), "%s", log);
	cr_assert_lt(llen, 300);
	cr_assert(!strncmp(echo, "[reviewer] one\n[reviewer] twoxxx", 32), "%s", echo);
	/* "two" + 5000 x: one line, flushed at EOF with its newline. */
	cr_assert_eq(strlen(echo), strlen("[reviewer] one\n[reviewer] ") + 5003 + 1);
	/* Capture: 1024 head + 1024 tail of 5007, the middle counted. */
	cr_assert_eq(ep_capture_omitted(&fx.cap), 5007 - 2048);
	free(log); free(echo); free(logp); free(echop);
}

Test(agent, env_build_overrides_and_unsets)
{
	char *base[] = { "A=1", "B=2", "C=3", NULL };
	char *set[] = { "B=20", "C", "D=4", NULL };
	struct fg_strvec v;

	fg_strvec_init(&v);
	ep_env_build(&v, base, set);
	cr_assert_eq(v.n, 3);
	cr_assert_str_eq(v.v[0], "A=1");
	cr_assert_str_eq(v.v[1], "B=20");
	cr_assert_str_eq(v.v[2], "D=4");
	fg_strvec_release(&v);
}

/* Fails the test unless c's text is want. */
static void expect_captured(struct ep_capture *c, const char *want)
{
	struct fg_buf b;

	fg_buf_init(&b, 1024);
	cr_assert_eq(ep_capture_text(c, &b), 0);
	cr_assert_str_eq(fg_buf_str(&b), want);
	fg_buf_release(&b);
}

Test(capture, keeps_head_and_tail)
{
	struct ep_capture c;

	ep_capture_init(&c, 4, 6);
	ep_capture_add(&c, "abcdefgh", 8);
	ep_capture_add(&c, "ijklmnop", 8);
	ep_capture_add(&c, "qr", 2);
	expect_captured(&c, "abcd\n[... 8 bytes omitted ...]\nmnopqr");
	ep_capture_release(&c);
}

Test(capture, small_input_is_kept_whole)
{
	struct ep_capture c;

	ep_capture_init(&c, 4, 6);
	ep_capture_add(&c, "abcdef", 6);
	expect_captured(&c, "abcdef");
	cr_assert_eq(ep_capture_omitted(&c), 0);
	ep_capture_release(&c);
}

Test(agent, endless_line_is_echoed_in_prefixed_chunks)
{
	char *argv[] = { "/bin/sh", "-c", "head -c 20000 /dev/zero | tr '\\0' y", NULL };

	char *echop = fgt_fmt("%s/echo", fx.dir);
	int efd = open(echop, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct ep_agent_spec s = { .role = "worker", .argv = argv, .envp = environ, .cwd = fx.dir,
				   .timeout_s = 10, .kill_grace_s = 0.5, .log_fd = -1, .echo_fd = efd };
	cr_assert_eq(ep_agent_run(&fx.pid1, &s, &fx.r), 0);
	close(efd);
	char *echo = fgt_read(echop, NULL);
	size_t lines = 0;
	for (char *c = echo; *c; c++)
		lines += *c == '\n';
	/* 20000 bytes with no newline: ceil(20000 / EP_AGENT_LINE_MAX) prefixed lines. */
	cr_assert_eq(lines, (20000 + EP_AGENT_LINE_MAX - 1) / EP_AGENT_LINE_MAX);
	cr_assert_eq(strlen(echo), 20000 + lines * (strlen("[worker] ") + 1));
	free(echo); free(echop);
}

/* Agents that share the echo descriptor (a reviewer panel) write each line
 * in pieces of at most PIPE_BUF bytes, each with the prefix, so two agents'
 * lines never mix (a longer write to a pipe may). Nothing is lost. */
Test(agent, shared_echo_lines_are_written_in_pieces_of_at_most_pipe_buf)
{
	char *argv[] = { "/bin/sh", "-c",
			 "head -c 10000 /dev/zero | tr '\\0' y; echo; printf '\\033short\\n'", NULL };

	char *echop = fgt_fmt("%s/echo", fx.dir);
	int efd = open(echop, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct ep_agent_spec s = { .role = "reviewer:security", .argv = argv, .envp = environ,
				   .cwd = fx.dir, .timeout_s = 10, .kill_grace_s = 0.5, .log_fd = -1,
				   .echo_fd = efd, .atomic_echo = true };
	cr_assert_eq(ep_agent_run(&fx.pid1, &s, &fx.r), 0);
	close(efd);
	char *echo = fgt_read(echop, NULL);
	size_t ys = 0, lines = 0;

	for (char *c = echo, *nl; *c; c = nl + 1) {
		nl = strchr(c, '\n');
		cr_assert_not_null(nl, "an unterminated line: %s", c);
		cr_assert_leq((size_t)(nl - c + 1), (size_t)PIPE_BUF);
		cr_assert(!strncmp(c, "[reviewer:security] ", 20), "line without the prefix: %.40s", c);
		for (char *p = c + 20; p < nl; p++)
			ys += *p == 'y';
		lines++;
	}
	cr_assert_eq(ys, 10000, "every byte echoed once");
	cr_assert_geq(lines, 4, "10000 bytes need at least 3 pieces, then the short line");
	cr_assert(strstr(echo, "[reviewer:security] \\x1bshort\n"), "%s", echo);
	free(echo);
	free(echop);
}
