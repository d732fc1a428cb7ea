/*
 * fgdocs.c - the documentation tests' readers (see fgdocs.h).
 */
#include "fgdocs.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"

/* A command line of each program, its --help then checked against its man page. */
#define EP_HELP(...) { FG_ENTRYPOINT_BIN, "man/forge-entrypoint.1", { __VA_ARGS__ } }
#define RN_HELP(...) { FG_RUNNER_BIN, "man/forge-runner.1", { __VA_ARGS__ } }

const struct fgdoc_help_case FGDOC_HELP_CASES[] = {
	EP_HELP(NULL), EP_HELP("run", NULL), EP_HELP("resolve", NULL), EP_HELP("config", NULL),
	EP_HELP("verdict", NULL), EP_HELP("lint", NULL), EP_HELP("agent-output", NULL),
	RN_HELP(NULL), RN_HELP("run", NULL), RN_HELP("watch", NULL), RN_HELP("sweep", NULL),
	RN_HELP("report", NULL), RN_HELP("reap", NULL),
};
const size_t FGDOC_NHELP = sizeof(FGDOC_HELP_CASES) / sizeof(FGDOC_HELP_CASES[0]);

char *fgdoc_read_source(const char *rel)
{
	char *path = fgt_fmt("%s/%s", FG_SOURCE_DIR, rel);
	char *s = fgt_read(path, NULL);

	cr_assert_not_null(s, "cannot read '%s'", path);
	free(path);
	return s;
}

/* Man page source as a reader sees it: font escapes (\fB, \fR, \f(CW),
 * zero-width \& and the roff minus \- reduced to plain text. */
char *fgdoc_man_plain(const char *rel)
{
	char *src = fgdoc_read_source(rel);
	char *out = malloc(strlen(src) + 1);
	size_t o = 0;

	cr_assert_not_null(out);
	for (const char *p = src; *p;) {
		if (p[0] == '\\' && p[1] == 'f' && p[2] == '(' && p[3] && p[4]) {
			p += 5;
		} else if (p[0] == '\\' && p[1] == 'f' && p[2]) {
			p += 3;
		} else if (p[0] == '\\' && (p[1] == '&' || p[1] == '%')) {
			p += 2;
		} else if (p[0] == '\\' && p[1] == '-') {
			out[o++] = '-';
			p += 2;
		} else {
			out[o++] = *p++;
		}
	}
	out[o] = '\0';
	free(src);
	return out;
}

bool fgdoc_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

static bool fgdoc_opt_char(char c)
{
	return islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-';
}

static bool fgdoc_env_char(char c)
{
	return isupper((unsigned char)c) || isdigit((unsigned char)c) || c == '_';
}

/* Length of the option or variable name starting at p (0: none). "FORGE_*"
 * is a wildcard, not a name. */
size_t fgdoc_token_len(const char *text, const char *p)
{
	size_t prefix, len;
	bool opt;

	if (p > text && fgdoc_word_char(p[-1]))
		return 0;
	opt = p[0] == '-' && p[1] == '-' && islower((unsigned char)p[2]);
	if (opt)
		prefix = 2;
	else if (!strncmp(p, "FORGE_", 6))
		prefix = 6;
	else if (!strncmp(p, "AUTO_REVIEW_", 12))
		prefix = 12;
	else
		return 0;
	len = prefix;
	while (p[len] && (opt ? fgdoc_opt_char(p[len]) : fgdoc_env_char(p[len])))
		len++;
	while (len > prefix && (p[len - 1] == '-' || p[len - 1] == '_'))
		len--;
	return len > prefix ? len : 0;
}

/* Appends to names every distinct long option (--name) and environment
 * variable (FORGE_*, AUTO_REVIEW_*) of text. Returns the new count. */
size_t fgdoc_collect_tokens(const char *text, char names[][64], size_t n, size_t max)
{
	for (const char *p = text; *p; p++) {
		size_t len = fgdoc_token_len(text, p);
		bool seen = false;

		if (!len)
			continue;
		cr_assert_lt(len, 64, "name too long in --help output");
		for (size_t i = 0; i < n && !seen; i++)
			seen = strlen(names[i]) == len && !strncmp(names[i], p, len);
		if (!seen) {
			cr_assert_lt(n, max, "too many names in --help output");
			memcpy(names[n], p, len);
			names[n++][len] = '\0';
		}
		p += len - 1;
	}
	return n;
}

char *fgdoc_help_of(const struct fgdoc_help_case *c)
{
	const char *argv[6] = { c->bin };
	struct fgt_proc p;
	size_t k = 1;
	char *out;

	for (size_t i = 0; i < 3 && c->args[i]; i++)
		argv[k++] = c->args[i];
	argv[k++] = "--help";
	argv[k] = NULL;
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 30), 0);
	cr_assert(p.exited && p.exit_code == 0, "%s %s --help: exit %d, stderr: %s", c->bin,
		  c->args[0] ? c->args[0] : "", p.exit_code, p.err);
	out = p.out;
	p.out = NULL;
	fgt_proc_release(&p);
	return out;
}

/* ---- the other direction: what the docs define exists in --help ---- */

/* Every long option of every --help of bin, collected once (names, n). */
size_t fgdoc_help_tokens_of(const char *bin, char names[][64], size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < FGDOC_NHELP; i++) {
		char *help;

		if (strcmp(FGDOC_HELP_CASES[i].bin, bin))
			continue;
		help = fgdoc_help_of(&FGDOC_HELP_CASES[i]);
		n = fgdoc_collect_tokens(help, names, n, max);
		free(help);
	}
	return n;
}

bool fgdoc_in_names(char names[][64], size_t n, const char *p, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(names[i]) == len && !strncmp(names[i], p, len))
			return true;
	return false;
}
