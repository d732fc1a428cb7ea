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
	/* Remove the kept copy: its path is printed on the first line. */
	const char *tag = "== demo workspace: ";
	char *line = strstr(p.out, tag);
	cr_assert(line);
	line += strlen(tag);
	char *end = strstr(line, "/workspace\n");
	cr_assert(end);
	*end = '\0';
	cr_assert(strstr(line, "forge-demo."));
	fgt_rm_rf(line);
	fgt_proc_release(&p);
}
