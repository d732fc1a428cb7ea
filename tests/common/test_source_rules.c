/*
 * test_source_rules.c - rules the headers of common/ state for the whole
 * source tree, checked by reading the sources of common/, entrypoint/ and
 * runner/: members of a JSON object are read only through json.h's getters
 * (json.c alone calls cJSON_GetObjectItem*()), and a directory is listed
 * only through fsutil.h's fg_dir_*() (fsutil.c alone calls readdir()).
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "forge/fsutil.h"

TestSuite(source_rules, .timeout = 30);

/* The folders whose .c and .h files the rules cover (relative to the source
 * tree; none has subfolders with sources). */
static const char *const DIRS[] = { "common/src", "common/include/forge", "entrypoint", "runner" };

static bool is_source(const char *name)
{
	size_t n = strlen(name);

	return n > 2 && name[n - 2] == '.' && (name[n - 1] == 'c' || name[n - 1] == 'h');
}

/* The line number of the first of the words in text, or 0. */
static int first_line_of(const char *text, const char *const *words, size_t nwords)
{
	const char *first = NULL;
	int line = 1;

	for (size_t i = 0; i < nwords; i++) {
		const char *p = strstr(text, words[i]);

		if (p && (!first || p < first))
			first = p;
	}
	if (!first)
		return 0;
	for (const char *q = text; q < first; q++)
		line += *q == '\n';
	return line;
}

/* Each source file of DIRS but those named in owners: none
 * holds any of the words. Returns how many files were read. */
static size_t expect_none_of(const char *const *words, size_t nwords, const char *const *owners,
			     size_t nowners, const char *rule)
{
	size_t checked = 0;

	for (size_t i = 0; i < sizeof(DIRS) / sizeof(DIRS[0]); i++) {
		char *dir = fgt_fmt("%s/%s", FG_SOURCE_DIR, DIRS[i]);
		struct fg_dir it;
		const char *name;

		cr_assert_eq(fg_dir_open(&it, AT_FDCWD, dir, 0), 0, "cannot list %s", dir);
		while ((name = fg_dir_next(&it)) != NULL) {
			char *rel = fgt_fmt("%s/%s", DIRS[i], name);
			bool skip = !is_source(name);
			char *text;
			int line;

			for (size_t k = 0; k < nowners; k++)
				skip |= !strcmp(rel, owners[k]);
			if (!skip) {
				char *path = fgt_fmt("%s/%s", FG_SOURCE_DIR, rel);

				text = fgt_read(path, NULL);
				cr_assert_not_null(text, "cannot read %s", path);
				line = first_line_of(text, words, nwords);
				cr_expect(!line, "%s:%d: %s", rel, line, rule);
				free(text);
				free(path);
				checked++;
			}
			free(rel);
		}
		cr_assert_eq(it.err, 0, "cannot list %s", dir);
		fg_dir_close(&it);
		free(dir);
	}
	return checked;
}

Test(source_rules, json_members_are_read_only_through_json_h)
{
	static const char *const words[] = { "cJSON_GetObjectItem" };
	/* json.h names the call in the comment that states the rule. */
	static const char *const owners[] = { "common/src/json.c", "common/include/forge/json.h" };
	size_t checked = expect_none_of(words, 1, owners, 2,
					"calls cJSON_GetObjectItem*(): use json.h's getters");

	cr_expect(checked > 50, "only %zu source files found under %s", checked, FG_SOURCE_DIR);
}

Test(source_rules, directories_are_listed_only_through_fg_dir)
{
	static const char *const words[] = { "readdir(", "scandir(", "opendir(" };
	static const char *const owners[] = { "common/src/fsutil.c" };
	size_t checked = expect_none_of(words, 3, owners, 1,
					"lists a directory by hand: use fsutil.h's fg_dir_open()");

	cr_expect(checked > 50, "only %zu source files found under %s", checked, FG_SOURCE_DIR);
}

