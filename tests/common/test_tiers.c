/*
 * test_tiers.c - the tiers of common/ (util.h): a base module, header or
 * source, never includes a domain header.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"

TestSuite(tiers, .timeout = 30);

static const char *const BASE[] = {
	"util", "alloc", "buf", "num", "timeutil", "sys", "diag", "text", "json", "fsutil", "opts",
	"cmdline",
};

/* 1 when "forge/<name>.h" is a base header. */
static int is_base(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof(BASE) / sizeof(BASE[0]); i++)
		if (strlen(BASE[i]) == n && !strncmp(BASE[i], name, n))
			return 1;
	return 0;
}

static void check_file(const char *path)
{
	char *text = fgt_read(path, NULL);
	const char *p;

	cr_assert_not_null(text, "cannot read %s", path);
	for (p = strstr(text, "#include \"forge/"); p; p = strstr(p + 1, "#include \"forge/")) {
		const char *name = p + strlen("#include \"forge/");
		size_t n = strcspn(name, ".\"");

		cr_expect(is_base(name, n), "%s includes the domain header forge/%.*s.h", path, (int)n, name);
	}
	free(text);
}

Test(tiers, base_modules_include_only_base_headers)
{
	for (size_t i = 0; i < sizeof(BASE) / sizeof(BASE[0]); i++) {
		char *h = fgt_fmt("%s/common/include/forge/%s.h", FG_SOURCE_DIR, BASE[i]);
		char *c = fgt_fmt("%s/common/src/%s.c", FG_SOURCE_DIR, BASE[i]);

		check_file(h);
		if (fgt_exists(c))
			check_file(c);
		free(h);
		free(c);
	}
}
