/*
 * test_record.c - recording mode names and the byte-exact, atomic copy of
 * detected cycle files into {recording_dir}/{step}/{run_id}/.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fgtest.h"
#include "record.h"
#include "../common/tmp_fixture.h"

TestSuite(record, .init = tmp_init, .fini = tmp_fini, .timeout = 30);

Test(record, mode_parse_table)
{
	static const struct { const char *in; int ret; enum rn_record_mode mode; } cases[] = {
		{ "none", 0, RN_RECORD_NONE },
		{ "log", 0, RN_RECORD_LOG },
		{ "copy", 0, RN_RECORD_COPY },
		{ "", 0, RN_RECORD_NONE },
		{ "COPY", -EINVAL, RN_RECORD_LOG },
		{ "logs", -EINVAL, RN_RECORD_LOG },
		{ " log", -EINVAL, RN_RECORD_LOG },
		{ "copy ", -EINVAL, RN_RECORD_LOG },
		{ "1", -EINVAL, RN_RECORD_LOG },
		{ "true", -EINVAL, RN_RECORD_LOG },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* A sentinel shows that a refused value leaves the output alone. */
		enum rn_record_mode got = RN_RECORD_LOG;

		cr_assert_eq(rn_record_mode_parse(cases[i].in, &got), cases[i].ret, "case '%s'", cases[i].in);
		cr_assert_eq(got, cases[i].mode, "case '%s'", cases[i].in);
	}
}

Test(record, mode_names_round_trip)
{
	static const enum rn_record_mode modes[] = { RN_RECORD_NONE, RN_RECORD_LOG, RN_RECORD_COPY };
	static const char *const names[] = { "none", "log", "copy" };

	for (size_t i = 0; i < 3; i++) {
		enum rn_record_mode back;

		cr_assert_str_eq(rn_record_mode_name(modes[i]), names[i]);
		cr_assert_eq(rn_record_mode_parse(rn_record_mode_name(modes[i]), &back), 0);
		cr_assert_eq(back, modes[i]);
	}
}

/* Every entry of dir must be want: no temp file may be left behind. */
static void assert_sole_entry(const char *dir, const char *want)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int seen = 0;

	cr_assert_not_null(d, "cannot open %s", dir);
	for (e = readdir(d); e; e = readdir(d)) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		cr_assert_str_eq(e->d_name, want);
		seen++;
	}
	closedir(d);
	cr_assert_eq(seen, 1);
}

Test(record, copy_creates_layout_with_identical_bytes)
{
	static const char data[] = "{\"cycle\": 1,\n \"feedback\": \"caf\xc3\xa9 \\u0000\"}\0tail\r\n";
	char *rec = tmp_path("rec/nested");
	char *run_dir = fgt_fmt("%s/implement_task/run-20260115-abc", rec);
	char *file = fgt_fmt("%s/review_cycle_1.json", run_dir);
	struct stat st;
	size_t len;
	char *got;

	cr_assert_eq(rn_record_copy(rec, "implement_task", "run-20260115-abc", "review_cycle_1.json",
				    data, sizeof(data)), 0);
	got = fgt_read(file, &len);
	cr_assert_not_null(got);
	cr_assert_eq(len, sizeof(data));
	cr_assert(!memcmp(got, data, sizeof(data)));
	cr_assert_eq(stat(run_dir, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	assert_sole_entry(run_dir, "review_cycle_1.json");
	free(got);
	free(run_dir);
	free(file);
}

Test(record, second_copy_replaces_the_first)
{
	char *run_dir = tmp_path("plan/r1");
	char *file = fgt_fmt("%s/review_cycle_2.json", run_dir);
	const char *first = "{\"cycle\": 2, \"verdict\": \"rejected\", \"feedback\": \"a long first version\"}\n";
	const char *second = "{\"cycle\": 2, \"verdict\": \"approved\"}\n";
	char *got;

	cr_assert_eq(rn_record_copy(tmp_dir, "plan", "r1", "review_cycle_2.json", first, strlen(first)), 0);
	cr_assert_eq(rn_record_copy(tmp_dir, "plan", "r1", "review_cycle_2.json", second, strlen(second)), 0);
	got = fgt_read(file, NULL);
	cr_assert_str_eq(got, second);
	assert_sole_entry(run_dir, "review_cycle_2.json");
	free(got);
	free(file);
}

Test(record, copies_of_several_cycles_and_runs_stay_apart)
{
	char *a = tmp_path("s/r1/review_cycle_1.json");
	char *b = tmp_path("s/r1/review_cycle_10.json");
	char *c = tmp_path("s/r2/review_cycle_1.json");

	cr_assert_eq(rn_record_copy(tmp_dir, "s", "r1", "review_cycle_1.json", "A", 1), 0);
	cr_assert_eq(rn_record_copy(tmp_dir, "s", "r1", "review_cycle_10.json", "B", 1), 0);
	cr_assert_eq(rn_record_copy(tmp_dir, "s", "r2", "review_cycle_1.json", "C", 1), 0);
	expect_content(a, "A");
	expect_content(b, "B");
	expect_content(c, "C");
}

Test(record, copy_refuses_bad_components_and_creates_nothing)
{
	static const struct { const char *step, *run_id, *name; } cases[] = {
		{ "..", "r", "review_cycle_1.json" },
		{ "s", "a/b", "review_cycle_1.json" },
		{ "s", "r", "" },
		{ "s", ".", "review_cycle_1.json" },
		{ "", "r", "review_cycle_1.json" },
	};
	DIR *d;
	struct dirent *e;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_assert_eq(rn_record_copy(tmp_dir, cases[i].step, cases[i].run_id, cases[i].name, "x", 1),
			     -EINVAL, "case %zu", i);
	cr_assert_eq(rn_record_copy("", "s", "r", "review_cycle_1.json", "x", 1), -EINVAL);
	d = opendir(tmp_dir);
	cr_assert_not_null(d);
	for (e = readdir(d); e; e = readdir(d))
		cr_assert(!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."), "created %s", e->d_name);
	closedir(d);
}

Test(record, copy_into_a_file_fails_with_enotdir)
{
	char *blocker = tmp_path("rec");

	fgt_write(blocker, "not a directory");
	cr_assert_eq(rn_record_copy(blocker, "s", "r", "review_cycle_1.json", "x", 1), -ENOTDIR);
}
