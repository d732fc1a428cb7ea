/*
 * test_tiers.c - the tiers of common/ (util.h): a base module, header or
 * source, never includes a domain header, nor a base header listed after
 * its own (each may call only the base modules listed before it).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"

TestSuite(tiers, .timeout = 30);

static const char *const BASE[] = {
	"util", "alloc", "buf", "num", "timeutil", "sys", "diag", "text", "json", "fsutil", "opts",
	"cmdline", "cmd",
};

/* The place of "forge/<name>.h" in BASE, or -1 for a domain header. */
static int base_index(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof(BASE) / sizeof(BASE[0]); i++)
		if (strlen(BASE[i]) == n && !strncmp(BASE[i], name, n))
			return (int)i;
	return -1;
}

/* The forge/ headers path includes: none of a domain module, none of a base
 * module listed after self (BASE[self]). */
static void check_file(const char *path, int self)
{
	char *text = fgt_read(path, NULL);
	const char *p;

	cr_assert_not_null(text, "cannot read %s", path);
	for (p = strstr(text, "#include \"forge/"); p; p = strstr(p + 1, "#include \"forge/")) {
		const char *name = p + strlen("#include \"forge/");
		size_t n = strcspn(name, ".\"");

		int at = base_index(name, n);

		cr_expect(at >= 0, "%s includes the domain header forge/%.*s.h", path, (int)n, name);
		cr_expect(at <= self, "%s includes forge/%.*s.h, a base module listed after %s in util.h",
			  path, (int)n, name, BASE[self]);
	}
	free(text);
}

Test(tiers, base_modules_include_only_earlier_base_headers)
{
	for (size_t i = 0; i < sizeof(BASE) / sizeof(BASE[0]); i++) {
		char *h = fgt_fmt("%s/common/include/forge/%s.h", FG_SOURCE_DIR, BASE[i]);
		char *c = fgt_fmt("%s/common/src/%s.c", FG_SOURCE_DIR, BASE[i]);

		check_file(h, (int)i);
		if (fgt_exists(c))
			check_file(c, (int)i);
		free(h);
		free(c);
	}
}
