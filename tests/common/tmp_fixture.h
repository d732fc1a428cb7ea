/*
 * tmp_fixture.h - a fresh temporary directory for each test, as a Criterion
 * fixture, for the unit tests of common/, entrypoint/ and runner/:
 *
 *   TestSuite(name, .init = tmp_init, .fini = tmp_fini);
 *
 * tmp_init() makes the directory (tmp_dir); tmp_path() names a path in it;
 * tmp_fini() removes the directory and frees those paths after the test,
 * whether it passed or an assertion ended it. Criterion runs each test in a
 * process of its own, so the state below is one test's. expect_content()
 * checks a file's whole content (any file, in tmp_dir or not).
 */
#ifndef TMP_FIXTURE_H
#define TMP_FIXTURE_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "fgtest.h"

#define TMP_PATHS_MAX 64

static char *tmp_dir;
static char *tmp_paths[TMP_PATHS_MAX];
static size_t tmp_npaths;

static inline void tmp_init(void)
{
	tmp_dir = fgt_tmpdir();
	tmp_npaths = 0;
}

static inline void tmp_fini(void)
{
	fgt_rm_rf(tmp_dir);
	for (size_t i = 0; i < tmp_npaths; i++)
		free(tmp_paths[i]);
	tmp_npaths = 0;
	free(tmp_dir);
	tmp_dir = NULL;
}

/* tmp_dir "/" and the printf-style rest; borrowed: freed by tmp_fini(). */
__attribute__((format(printf, 1, 2))) static inline char *tmp_path(const char *fmt, ...)
{
	va_list ap;
	char *rel, *path;
	int n;

	cr_assert_not_null(tmp_dir, "tmp_path() outside the tmp_init() fixture");
	cr_assert_lt(tmp_npaths, TMP_PATHS_MAX, "more than %d paths in one test", TMP_PATHS_MAX);
	va_start(ap, fmt);
	n = vasprintf(&rel, fmt, ap);
	va_end(ap);
	cr_assert_geq(n, 0);
	path = fgt_fmt("%s/%s", tmp_dir, rel);
	free(rel);
	tmp_paths[tmp_npaths++] = path;
	return path;
}

/* Fails the test unless the file at path reads exactly want. */
static inline void expect_content(const char *path, const char *want)
{
	char *got = fgt_read(path, NULL);

	cr_assert_not_null(got, "cannot read %s", path);
	cr_assert_str_eq(got, want, "%s", path);
	free(got);
}

#endif
