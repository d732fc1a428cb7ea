/*
 * test_entrypoint_demo.c - the README's demo (examples/run-demo.sh) works:
 * reject, retry with the feedback, approve, exit 0.
 */
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

TestSuite(entrypoint_demo, .timeout = 120);

/* Removes the demo's kept copy: its path is on the first line of out. */
static void rm_kept_copy(char *out)
{
	const char *tag = "== demo workspace: ";
	char *line = strstr(out, tag), *end;

	cr_assert(line);
	line += strlen(tag);
	end = strstr(line, "/workspace\n");
	cr_assert(end);
	*end = '\0';
	cr_assert(strstr(line, "forge-demo."));
	fgt_rm_rf(line);
}

Test(entrypoint_demo, demo_loop_rejects_then_approves)
{
	struct fgt_proc p;
	const char *argv[] = { "/bin/sh", FG_SOURCE_DIR "/examples/run-demo.sh", FG_BUILD_DIR, NULL };

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 100), 0);
	cr_assert_eq(p.exit_code, 0, "stdout:\n%s\nstderr:\n%s", p.out, p.err);
	cr_assert(strstr(p.err, "Review cycle 1/3: REJECTED - The tests fail"), "%s", p.err);
	cr_assert(strstr(p.err, "Review cycle 2/3: APPROVED"), "%s", p.err);
	cr_assert(strstr(p.out, "\"state\":\t\"approved\"") || strstr(p.out, "\"state\": \"approved\""), "%s", p.out);
	cr_assert(strstr(p.out, "== tests after:\nall tests pass"), "%s", p.out);
	rm_kept_copy(p.out);
	fgt_proc_release(&p);
}

/* The demo from a checkout under $TMPDIR (a clone in /tmp): the box grants
 * nothing of the directory the entrypoint's private directories are made
 * in, but the agent commands' own directories and the skills directory it
 * does (sandbox.h, step 1b); before, the worker could not even start
 * ("cannot run worker '/tmp/.../demo-worker.sh': Permission denied"). */
Test(entrypoint_demo, the_demo_runs_from_a_checkout_under_tmpdir)
{
	struct fgt_proc p;
	char *dir = fgt_tmpdir(), *script = fgt_fmt("%s/examples/run-demo.sh", dir);
	const char *cp[] = { "/bin/cp", "-r", FG_SOURCE_DIR "/examples", FG_SOURCE_DIR "/skills", dir, NULL };
	const char *argv[] = { "/bin/sh", script, FG_BUILD_DIR, NULL };

	cr_assert_eq(fgt_run(&p, cp, NULL, NULL, NULL, 30), 0);
	cr_assert_eq(p.exit_code, 0, "cp: %s", p.err);
	fgt_proc_release(&p);
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 100), 0);
	cr_assert_eq(p.exit_code, 0, "stdout:\n%s\nstderr:\n%s", p.out, p.err);
	cr_assert(strstr(p.err, "Review cycle 2/3: APPROVED"), "%s", p.err);
	cr_assert(strstr(p.out, "== tests after:\nall tests pass"), "%s", p.out);
	rm_kept_copy(p.out);
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(script);
	free(dir);
}
