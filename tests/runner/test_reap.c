/*
 * test_reap.c - the container reap on an event loop, against a stand-in
 * engine CLI: a shell script that answers `ps` and `rm` from marker files in
 * its directory and records every call, so each path of the reap (gone at
 * once, removal lagging, left behind, stuck, failing, not answering, not
 * found) is checked by what was run and what was concluded.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "fgtest.h"
#include "reap.h"

TestSuite(reap, .timeout = 60);

#define RUN_ID "0123456789abcdef"

/*
 * ps: lists "c0ffee" while the file 'exists' is there; after N listings when
 * 'vanish_after' holds N, 'exists' goes away by itself (a lagging --rm);
 * exits with the code in 'ps_code'; 'ps_hangs' makes it hang.
 * rm: removes 'exists' when 'rm_works' is there.
 */
static const char FAKE_CLI[] =
	"#!/bin/sh\n"
	"d=$(dirname \"$0\")\n"
	"echo \"$*\" >> \"$d/calls\"\n"
	"case \"$1\" in\n"
	"ps)\n"
	"  [ -e \"$d/ps_hangs\" ] && exec sleep 30\n"
	"  n=$(grep -c '^ps' \"$d/calls\")\n"
	"  if [ -e \"$d/vanish_after\" ] && [ \"$n\" -ge \"$(cat \"$d/vanish_after\")\" ]; then\n"
	"    rm -f \"$d/exists\"\n"
	"  fi\n"
	"  [ -e \"$d/exists\" ] && echo c0ffee\n"
	"  exit \"$(cat \"$d/ps_code\" 2>/dev/null || echo 0)\";;\n"
	"rm) [ -e \"$d/rm_works\" ] && rm -f \"$d/exists\"; exit 0;;\n"
	"esac\n"
	"exit 2\n";

struct fixture {
	char *dir;
	char *cli;
	struct rn_engine_params p;
	struct rn_reap reap;
	int done;
};

static void setup(struct fixture *f, const char *kind)
{
	memset(f, 0, sizeof(*f));
	f->dir = fgt_tmpdir();
	f->cli = fgt_fmt("%s/engine-cli", f->dir);
	fgt_write(f->cli, FAKE_CLI);
	fgt_chmod_x(f->cli);
	f->p.ops = rn_engine_find(kind);
	f->p.program = f->cli;
	f->p.run_id = RUN_ID;
}

static void mark(const struct fixture *f, const char *name, const char *content)
{
	char *path = fgt_fmt("%s/%s", f->dir, name);

	fgt_write(path, content);
	free(path);
}

static void on_done(struct rn_reap *r)
{
	struct fixture *f = r->data;

	f->done++;
}

/* Runs the reap to its end on a fresh loop; every handle must be closed. */
static int reap(struct fixture *f, int timeout_ms)
{
	uv_loop_t loop;

	cr_assert_eq(uv_loop_init(&loop), 0);
	rn_reap_start(&f->reap, &loop, &f->p, timeout_ms, on_done, f);
	uv_run(&loop, UV_RUN_DEFAULT);
	cr_assert_eq(f->done, 1, "done called %d times", f->done);
	cr_assert_eq(uv_loop_close(&loop), 0, "the reap left a handle open");
	return f->reap.result;
}

static char *calls(const struct fixture *f)
{
	char *path = fgt_fmt("%s/calls", f->dir);
	char *text = fgt_read(path, NULL);

	free(path);
	return text ? text : fgt_fmt("%s", "");
}

static void teardown(struct fixture *f)
{
	fgt_rm_rf(f->dir);
	free(f->dir);
	free(f->cli);
}

/*
 * One reap and what it must come to: the engine (NULL: docker), the marker
 * files for the stand-in ("name" empty, "name=content"), another program
 * for the CLI, the deadline, the result, the message (err: the whole of it,
 * err_has: a part) and the calls the stand-in recorded (calls: all of
 * them, calls_has: a part, calls_lack: absent).
 */
struct reap_case {
	const char *kind, *marks[2], *program;
	int timeout_ms, want;
	const char *err, *err_has, *calls, *calls_has, *calls_lack;
};

static void expect_reap(struct reap_case c)
{
	struct fixture f;

	setup(&f, c.kind ? c.kind : "docker");
	for (size_t i = 0; i < 2 && c.marks[i]; i++) {
		const char *eq = strchr(c.marks[i], '=');
		int len = eq ? (int)(eq - c.marks[i]) : (int)strlen(c.marks[i]);
		char *name = fgt_fmt("%.*s", len, c.marks[i]);

		mark(&f, name, eq ? eq + 1 : "");
		free(name);
	}
	if (c.program)
		f.p.program = c.program;
	cr_assert_eq(reap(&f, c.timeout_ms), c.want, "%s", f.reap.err);
	if (c.err)
		cr_assert_str_eq(f.reap.err, c.err);
	if (c.err_has)
		cr_assert_not_null(strstr(f.reap.err, c.err_has), "%s", f.reap.err);
	char *got = calls(&f);
	if (c.calls)
		cr_assert_str_eq(got, c.calls, "calls:\n%s", got);
	if (c.calls_has)
		cr_assert_not_null(strstr(got, c.calls_has), "calls:\n%s", got);
	if (c.calls_lack)
		cr_assert_null(strstr(got, c.calls_lack), "calls:\n%s", got);
	free(got);
	teardown(&f);
}

Test(reap, container_already_gone_is_one_anchored_listing)
{
	expect_reap((struct reap_case){ .timeout_ms = 15000,
					.calls = "ps -a -q --filter name=^forge-" RUN_ID "$\n" });
}

/* Removed by force although it went by itself: calls_lack. */
Test(reap, lagging_removal_is_waited_for_without_force)
{
	expect_reap((struct reap_case){
		.kind = "podman", .marks = { "exists", "vanish_after=2" }, .timeout_ms = 15000, .want = 0,
		.calls_lack = "rm -f" });
}

Test(reap, container_left_behind_is_removed_by_force)
{
	expect_reap((struct reap_case){ .marks = { "exists", "rm_works" }, .timeout_ms = 15000, .want = 1,
					.calls_has = "\nrm -f forge-" RUN_ID "\nps -a -q" });
}

/* Whether the deadline falls in a wait or in a listing, the last listing
 * showed the container: still there either way; rm -f was tried. */
Test(reap, container_that_stays_is_reported_at_the_deadline)
{
	expect_reap((struct reap_case){ .marks = { "exists" }, .timeout_ms = 2500, .want = -EBUSY,
					.err = "container 'forge-" RUN_ID "' still exists",
					.calls_has = "rm -f forge-" RUN_ID });
}

Test(reap, failing_listing_is_an_error)
{
	expect_reap((struct reap_case){ .marks = { "ps_code=1" }, .timeout_ms = 15000, .want = -EIO,
					.err_has = "ps' exited with code 1" });
}

Test(reap, listing_that_does_not_answer_is_killed_at_the_deadline)
{
	expect_reap((struct reap_case){ .marks = { "ps_hangs" }, .timeout_ms = 500, .want = -ETIMEDOUT,
					.err_has = "cannot run" });
}

Test(reap, missing_cli_is_an_error)
{
	expect_reap((struct reap_case){ .program = "/nonexistent/engine-cli", .timeout_ms = 15000,
					.want = -ENOENT, .err_has = "cannot run '/nonexistent/engine-cli ps'" });
}

/* The local engine runs no command at all. */
Test(reap, local_engine_has_nothing_to_reap)
{
	expect_reap((struct reap_case){ .kind = "local", .timeout_ms = 15000, .calls = "" });
}
