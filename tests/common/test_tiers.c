/*
 * test_tiers.c - the tiers of common/, as util.h states them (the lists are
 * read from util.h itself, so the header and this check cannot drift):
 * every module of common/ is in exactly one tier; a base module, header or
 * source, includes only base headers listed before its own and no domain
 * module's internal header; a domain module includes only headers of the
 * two tiers; internal.h, which both tiers include, includes no forge/
 * header; a header that names its tier ("Tier: ...") names the right one.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "forge/fsutil.h"
#include "forge/text.h"

TestSuite(tiers, .timeout = 30);

#define MODULES_MAX 64
#define NAME_MAX_LEN 32

enum tier { BASE, DOMAIN, NONE };

struct tiers {
	char name[MODULES_MAX][NAME_MAX_LEN];
	enum tier tier[MODULES_MAX];
	size_t n;
};

/* Adds the module names that follow word in util.h's comment, up to the
 * ':' that ends the list. */
static void read_list(struct tiers *t, const char *util_h, const char *word, enum tier tier)
{
	const char *p = strstr(util_h, word);

	cr_assert_not_null(p, "util.h does not list the %s tier", word);
	p += strlen(word);
	while (*p && *p != ':') {
		size_t n = 0;

		while (*p && *p != ':' && !islower((unsigned char)*p))
			p++;
		while (islower((unsigned char)p[n]) || p[n] == '_')
			n++;
		if (!n)
			continue;
		cr_assert_lt(t->n, MODULES_MAX);
		cr_assert_lt(n, NAME_MAX_LEN);
		memcpy(t->name[t->n], p, n);
		t->name[t->n][n] = '\0';
		t->tier[t->n++] = tier;
		p += n;
	}
}

static void read_tiers(struct tiers *t)
{
	char *path = fgt_fmt("%s/common/include/forge/util.h", FG_SOURCE_DIR);
	char *text = fgt_read(path, NULL);

	cr_assert_not_null(text, "cannot read %s", path);
	memset(t, 0, sizeof(*t));
	read_list(t, text, " *   base ", BASE);
	read_list(t, text, " *   domain ", DOMAIN);
	cr_assert_gt(t->n, 20, "only %zu modules read from util.h", t->n);
	free(text);
	free(path);
}

/* The place of module name (n bytes) in the tiers, or -1. */
static int index_of(const struct tiers *t, const char *name, size_t n)
{
	for (size_t i = 0; i < t->n; i++)
		if (strlen(t->name[i]) == n && !strncmp(t->name[i], name, n))
			return (int)i;
	return -1;
}

/* The module a source file of common/src belongs to: its own name, else
 * the longest module its name starts with followed by '_'
 * (reviewmd_yaml.c), else the header it includes first (review.c,
 * cycle.h). -1 when none is in a tier. */
static int module_of_source(const struct tiers *t, const char *file, const char *text)
{
	size_t n = strlen(file) - 2;
	int best = index_of(t, file, n), best_len = 0;
	const char *inc;

	for (size_t i = 0; best < 0 && i < t->n; i++) {
		size_t k = strlen(t->name[i]);

		if (k < n && !strncmp(file, t->name[i], k) && file[k] == '_' && (int)k > best_len) {
			best = (int)i;
			best_len = (int)k;
		}
	}
	inc = strstr(text, "#include \"forge/");
	if (best < 0 && inc) {
		inc += strlen("#include \"forge/");
		best = index_of(t, inc, strcspn(inc, ".\""));
	}
	return best;
}

/* The includes of file (text) against the rules of module self. */
static void check_includes(const struct tiers *t, const char *file, const char *text, int self)
{
	const char *p = text, *rest;

	while ((p = strstr(p, "#include \"")) != NULL) {
		p += strlen("#include \"");
		if (fg_skip_prefix(p, "forge/", &rest)) {
			size_t n = strcspn(rest, ".\"");
			int at = index_of(t, rest, n);

			cr_expect(at >= 0, "%s includes forge/%.*s.h, a module in no tier of util.h", file,
				  (int)n, rest);
			if (at >= 0 && t->tier[self] == BASE) {
				cr_expect(t->tier[at] == BASE, "%s (base) includes the domain header forge/%.*s.h",
					  file, (int)n, rest);
				cr_expect(t->tier[at] != BASE || at <= self,
					  "%s includes forge/%.*s.h, a base module listed after %s in util.h", file,
					  (int)n, rest, t->name[self]);
			}
		} else if (t->tier[self] == BASE) {
			size_t n = strcspn(p, "\"");

			cr_expect(n == strlen("internal.h") && !strncmp(p, "internal.h", n),
				  "%s (base) includes \"%.*s\", a domain module's internal header", file, (int)n,
				  p);
		}
	}
}

/* A header's own "Tier: X" (when it states one) is the tier util.h gives. */
static void check_stated_tier(const struct tiers *t, const char *file, const char *text, int self)
{
	const char *p = strstr(text, "Tier: ");
	const char *want = t->tier[self] == BASE ? "base" : "domain";

	if (p)
		cr_expect(fg_skip_prefix(p + strlen("Tier: "), want, NULL),
			  "%s states '%.*s' but util.h lists %s as %s", file, 12, p, t->name[self], want);
}

static size_t check_dir(const struct tiers *t, const char *rel, bool headers)
{
	char *dir = fgt_fmt("%s/%s", FG_SOURCE_DIR, rel);
	struct fg_dir it;
	const char *name;
	size_t checked = 0;

	cr_assert_eq(fg_dir_open(&it, AT_FDCWD, dir, 0), 0, "cannot list %s", dir);
	while ((name = fg_dir_next(&it)) != NULL) {
		size_t n = strlen(name);
		char *path, *text;
		int self;

		if (n < 3 || strcmp(name + n - 2, headers ? ".h" : ".c"))
			continue;
		path = fgt_fmt("%s/%s", dir, name);
		text = fgt_read(path, NULL);
		cr_assert_not_null(text, "cannot read %s", path);
		self = headers ? index_of(t, name, n - 2) : module_of_source(t, name, text);
		cr_expect(self >= 0, "%s/%s belongs to no module in a tier of util.h", rel, name);
		if (self >= 0) {
			check_includes(t, name, text, self);
			if (headers)
				check_stated_tier(t, name, text, self);
		}
		checked++;
		free(text);
		free(path);
	}
	fg_dir_close(&it);
	free(dir);
	return checked;
}

Test(tiers, every_module_is_in_a_tier_and_includes_only_what_its_tier_may)
{
	struct tiers t;
	size_t headers, sources;

	read_tiers(&t);
	headers = check_dir(&t, "common/include/forge", true);
	sources = check_dir(&t, "common/src", false);
	cr_expect_gt(headers, 20);
	cr_expect_gt(sources, 20);
}

Test(tiers, internal_h_includes_no_forge_header)
{
	char *path = fgt_fmt("%s/common/src/internal.h", FG_SOURCE_DIR);
	char *text = fgt_read(path, NULL);

	cr_assert_not_null(text, "cannot read %s", path);
	cr_expect_null(strstr(text, "#include \"forge/"), "internal.h, included by both tiers, includes a "
							  "forge/ header");
	free(text);
	free(path);
}

Test(tiers, the_lists_are_read_from_util_h)
{
	struct tiers t;

	read_tiers(&t);
	cr_expect_str_eq(t.name[0], "util");
	cr_expect_eq(t.tier[index_of(&t, "json", 4)], BASE);
	cr_expect_eq(t.tier[index_of(&t, "verdict", 7)], DOMAIN);
	cr_expect_lt(index_of(&t, "text", 4), index_of(&t, "json", 4), "json.c uses text.h");
}
