/*
 * test_record.c - forge-runner run --record: the cycle_recorded log line,
 * byte-for-byte copies of every cycle file and rewrite, the environment's
 * twins, and their errors.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgobs.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(record, .timeout = 120);

/* ---- recording ---- */

static char *rec_path(const char *rec, const char *run_id, int n)
{
	return fgt_fmt("%s/impl/%s/review_cycle_%d.json", rec, run_id, n);
}

static void assert_same_file(const char *a, const char *b)
{
	size_t la, lb;
	char *ca = fgt_read(a, &la), *cb = fgt_read(b, &lb);

	cr_assert_not_null(ca, "missing '%s'", a);
	cr_assert_not_null(cb, "missing '%s'", b);
	cr_assert(la == lb && !memcmp(ca, cb, la), "'%s' differs from '%s'", a, b);
	free(ca);
	free(cb);
}

Test(record, record_log_adds_cycle_recorded_with_the_file_content)
{
	const char *extra[] = { "--record", "log", NULL };
	const char *env[] = { "AUTO_REVIEW_RECORD_POLLED_FILES=log", NULL };

	for (int twin = 0; twin < 2; twin++) {
		struct fgo o = { 0 };

		fgo_init(&o, "cyc 1 rejected 'a \\\"b\\\"'\ncyc 2 approved\nexit 0\n");
		fgo_exec(&o, 1, twin ? NULL : extra, twin ? env : NULL);
		cr_assert_eq(o.p.exit_code, 0, "stderr: %s", o.p.err);
		cr_assert_eq(fgo_count_ev(&o, "cycle_recorded", NULL, NULL), 2);
		cr_assert_eq(fgo_count_ev(&o, "review_cycle", NULL, NULL), 2, "review_cycle stays at info");
		cr_assert(fgo_count_ev(&o, "run_start", "record", "log"));
		for (int n = 1; n <= 2; n++) {
			char *name = fgt_fmt("review_cycle_%d.json", n), *path = fgo_ws_cycle(&o, n);
			char *content = fgt_read(path, NULL);
			const struct fgo_ev *e = fgo_find_ev(&o, "cycle_recorded", "file", name);
			char *logged = e ? fgo_ev_val(e, "content") : NULL;

			cr_assert_not_null(logged, "no cycle_recorded for %s", name);
			cr_assert_str_eq(logged, content);
			free(logged);
			free(content);
			free(path);
			free(name);
		}
		fgo_release(&o);
	}
}

Test(record, record_copy_keeps_each_file_byte_for_byte_and_the_newest_rewrite)
{
	struct fgo o = { 0 };
	char *rec, *id, *copy;

	fgo_init(&o, "cyc 1 rejected first\nwait_log '\"feedback\":\"first\"'\n"
		     "cyc 1 rejected second 2\nwait_log '\"feedback\":\"second\"'\n"
		     "cyc 2 approved 'caf\\u00e9 \\\"q\\\"'\nexit 0\n");
	rec = fgt_fmt("%s/rec", o.w.root);
	{
		const char *args[] = { "--record", "copy", "--recording-dir", rec, NULL };

		fgo_exec(&o, 1, args, NULL);
	}
	cr_assert_eq(o.p.exit_code, 0, "stderr: %s", o.p.err);
	id = fgo_run_id_of(&o);
	for (int n = 1; n <= 2; n++) {
		char *ws = fgo_ws_cycle(&o, n);

		copy = rec_path(rec, id, n);
		assert_same_file(copy, ws);
		free(copy);
		free(ws);
	}
	copy = rec_path(rec, id, 1);
	{
		char *c = fgt_read(copy, NULL);

		cr_assert_not_null(strstr(c, "\"second\""), "the rewrite was not kept: %s", c);
		free(c);
	}
	free(copy);
	cr_assert_eq(fgo_count_ev(&o, "cycle_recorded", NULL, NULL), 0);
	cr_assert_eq(fgo_count_ev(&o, "record_error", NULL, NULL), 0);
	free(id);
	free(rec);
	fgo_release(&o);
}

Test(record, record_copy_from_the_environment_twins)
{
	struct fgo o = { 0 };
	char *rec, *id, *copy, *ws, *e1, *e2;

	fgo_init(&o, "cyc 1 approved\nexit 0\n");
	rec = fgt_fmt("%s/rec-env", o.w.root);
	e1 = fgt_fmt("AUTO_REVIEW_RECORD_POLLED_FILES=copy");
	e2 = fgt_fmt("FORGE_REVIEW_RECORDING_DIR=%s", rec);
	{
		const char *env[] = { e1, e2, NULL };

		fgo_exec(&o, 1, NULL, env);
	}
	cr_assert_eq(o.p.exit_code, 0, "stderr: %s", o.p.err);
	id = fgo_run_id_of(&o);
	copy = rec_path(rec, id, 1);
	ws = fgo_ws_cycle(&o, 1);
	assert_same_file(copy, ws);
	cr_assert(fgo_count_ev(&o, "run_start", "record", "copy"));
	free(ws);
	free(copy);
	free(id);
	free(e1);
	free(e2);
	free(rec);
	fgo_release(&o);
}

Test(record, record_copy_without_a_directory_is_a_configuration_error)
{
	const char *args[] = { "--record", "copy", NULL };
	const char *env[] = { "AUTO_REVIEW_RECORD_POLLED_FILES=copy", NULL };

	for (int twin = 0; twin < 2; twin++) {
		struct fgo o = { 0 };
		char *forge, *marker;

		fgo_init(&o, "touch \"$W/ran\"\ncyc 1 approved\nexit 0\n");
		fgo_exec(&o, 0, twin ? NULL : args, twin ? env : NULL);
		cr_assert_eq(o.p.exit_code, 2, "exit %d; stderr: %s", o.p.exit_code, o.p.err);
		fgt_assert_has(o.p.err, "recording", "copy");
		marker = fgt_fmt("%s/ran", o.w.ws);
		forge = fgt_fmt("%s/.forge", o.w.ws);
		cr_assert(!fgt_exists(marker), "the entrypoint ran");
		cr_assert(!fgt_exists(forge), "the step directory was prepared");
		cr_assert_eq(o.nev, 0, "a run was logged");
		free(marker);
		free(forge);
		fgo_release(&o);
	}
}

Test(record, record_none_records_nothing)
{
	for (int mode = 0; mode < 2; mode++) {
		struct fgo o = { 0 };
		char *rec, *e;
		const char *args[] = { "--record", "none", NULL };

		fgo_init(&o, "cyc 1 rejected\ncyc 2 approved\nexit 0\n");
		rec = fgt_fmt("%s/rec", o.w.root);
		e = fgt_fmt("FORGE_REVIEW_RECORDING_DIR=%s", rec);
		{
			const char *env[] = { e, NULL };

			/* mode 0: nothing said; mode 1: --record none. A recording dir is set both times. */
			fgo_exec(&o, 1, mode ? args : NULL, env);
		}
		cr_assert_eq(o.p.exit_code, 0, "stderr: %s", o.p.err);
		cr_assert(fgo_count_ev(&o, "run_start", "record", "none"));
		cr_assert_eq(fgo_count_ev(&o, "review_cycle", NULL, NULL), 2);
		cr_assert_eq(fgo_count_ev(&o, "cycle_recorded", NULL, NULL), 0);
		cr_assert(!fgt_exists(rec) || fgt_count_entries(rec) == 0, "something was recorded in '%s'", rec);
		free(e);
		free(rec);
		fgo_release(&o);
	}
}
