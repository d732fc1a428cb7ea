/*
 * test_docs_reference.c - the documentation against the code: the
 * shipped skills lint clean, every runner log event is in the operations
 * guide, every exit code named is one exit.h defines, the kubernetes
 * guide's examples hold.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fgdocs.h"
#include "fgtest.h"

TestSuite(docs_reference, .timeout = 60);

static void expect_no_error_lines(const char *what, const char *text)
{
	cr_expect_null(strstr(text, ": error:"), "%s printed an error: %s", what, text);
}

Test(docs_reference, shipped_skills_pass_lint)
{
	char *skills = fgt_fmt("%s/skills", FG_SOURCE_DIR);
	const char *argv[] = { FG_ENTRYPOINT_BIN, "lint", skills, NULL };
	struct fgt_proc p;

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 30), 0);
	cr_expect(p.exited && p.exit_code == 0, "lint skills/: exit %d\n%s%s", p.exit_code, p.out, p.err);
	expect_no_error_lines("lint skills/ (stdout)", p.out);
	expect_no_error_lines("lint skills/ (stderr)", p.err);
	fgt_proc_release(&p);
	free(skills);
}

Test(docs_reference, lint_fails_on_a_broken_review_md)
{
	char *dir = fgt_tmpdir();
	char *file = fgt_fmt("%s/broken/review.md", dir);
	const char *argv[] = { FG_ENTRYPOINT_BIN, "lint", dir, NULL };
	struct fgt_proc p;

	fgt_write(file, "---\nmax_retries: three\n---\nReview the change.\n");
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 30), 0);
	cr_expect(p.exited && p.exit_code == 1, "lint on a broken review.md: exit %d", p.exit_code);
	cr_expect_not_null(strstr(p.out, "review.md:2: error:"), "no error line for line 2: %s", p.out);
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(file);
	free(dir);
}

/* ---- log events named in the sources vs. the operations guide ---- */

#define MAX_EVENTS 128

struct event_set {
	char name[MAX_EVENTS][64];
	size_t n;
};

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Past the string or character literal starting at p (its closing quote). */
static const char *skip_literal(const char *p)
{
	char q = *p++;

	while (*p && *p != q)
		p += p[0] == '\\' && p[1] ? 2 : 1;
	return *p ? p : p - 1;
}

/* Copy of src with its comments blanked, owned; literals are kept. */
static char *strip_comments(const char *src)
{
	char *out = strdup(src);

	cr_assert_not_null(out);
	for (char *p = out; *p; p++) {
		if (*p == '"' || *p == '\'') {
			p = out + (skip_literal(p) - out);
		} else if (p[0] == '/' && p[1] == '*') {
			char *end = strstr(p + 2, "*/");

			end = end ? end + 2 : p + strlen(p);
			memset(p, ' ', (size_t)(end - p));
			p = end - 1;
		}
	}
	return out;
}

/*
 * Splits the argument list opening at open (a '(') at its top-level commas:
 * starts[i]/ends[i] delimit argument i. Returns the count (at most max), or
 * -1 if the list does not close.
 */
static int split_args(const char *open, const char **starts, const char **ends, int max)
{
	int depth = 0, n = 0;

	starts[0] = open + 1;
	for (const char *p = open + 1; *p; p++) {
		if (*p == '"' || *p == '\'') {
			p = skip_literal(p);
		} else if (*p == '(' || *p == '[' || *p == '{') {
			depth++;
		} else if ((*p == ')' || *p == ']' || *p == '}') && depth > 0) {
			depth--;
		} else if (*p == ')' || (*p == ',' && depth == 0)) {
			if (n < max)
				ends[n] = p;
			n++;
			if (*p == ')')
				return n < max ? n : max;
			if (n < max)
				starts[n] = p + 1;
		}
	}
	return -1;
}

static void add_event(struct event_set *s, const char *name, size_t len)
{
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->name[i]) == len && !strncmp(s->name[i], name, len))
			return;
	cr_assert(s->n < MAX_EVENTS && len < 64, "too many or too long event names");
	memcpy(s->name[s->n], name, len);
	s->name[s->n++][len] = '\0';
}

/* Every string literal in [a, b): `r ? "x_error" : "x"` names two events. */
static void add_literals(struct event_set *s, const char *a, const char *b)
{
	for (const char *p = a; p < b; p++) {
		if (*p == '"') {
			const char *end = skip_literal(p);

			add_event(s, p + 1, (size_t)(end - p - 1));
			p = end;
		}
	}
}

/* Adds the event argument (index idx) of every call of fn in src;
 * declarations (a "const char" among the arguments) are not calls. */
static void scan_calls(struct event_set *s, const char *src, const char *fn, int idx)
{
	size_t len = strlen(fn);

	for (const char *p = strstr(src, fn); p; p = strstr(p + 1, fn)) {
		const char *starts[16], *ends[16];
		int n;

		if ((p > src && ident_char(p[-1])) || p[len] != '(')
			continue;
		n = split_args(p + len, starts, ends, 16);
		if (n <= idx)
			continue;
		if (strstr(starts[0], "const char") && strstr(starts[0], "const char") < ends[n - 1])
			continue;
		add_literals(s, starts[idx], ends[idx]);
	}
}

/*
 * The event names src can log: rn_log_event() and the rn_log() macro of log.h
 * take the event as their third argument, and any function with a
 * `const char *event` parameter (a wrapper such as log_file_event) passes
 * it on, so its calls name events too.
 */
static void scan_events(struct event_set *s, const char *const *srcs, size_t nsrc)
{
	for (size_t g = 0; g < nsrc; g++)
		scan_calls(s, srcs[g], "rn_log", 2);
	for (size_t f = 0; f < nsrc; f++) {
		for (const char *p = strstr(srcs[f], "const char *event"); p;
		     p = strstr(p + 1, "const char *event")) {
			const char *open = p, *name;
			int idx = 0, depth = 0;
			char fn[64];

			for (; open > srcs[f] && (*open != '(' || depth); open--) {
				depth += *open == ')';
				depth -= *open == '(' && depth;
				idx += *open == ',' && !depth;
			}
			for (name = open; name > srcs[f] && ident_char(name[-1]); name--)
				;
			cr_assert(open > name && open - name < 64, "cannot read a wrapper's name");
			memcpy(fn, name, (size_t)(open - name));
			fn[open - name] = '\0';
			for (size_t g = 0; g < nsrc; g++)
				scan_calls(s, srcs[g], fn, idx);
		}
	}
}

static bool has_event(const struct event_set *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return true;
	return false;
}

Test(docs_reference, event_scanner_follows_wrappers_and_ternaries)
{
	const char *src[] = {
		"/* rn_log_event(l, RN_LOG_INFO, \"in_a_comment\", f, 1); */\n"
		"void rn_log_event(struct rn_log *l, enum rn_log_level level, const char *event,\n"
		"\t\t  const struct rn_log_field *fields, size_t nfields);\n"
		"static void wrap(struct s *s, int lvl, const char *event, const char *k)\n"
		"{ rn_log_event(s->log, lvl, event, (struct rn_log_field[]){ RN_LS(k, \"v\") }, 1); }\n"
		"static void g(void) { rn_log_event(l, f(a, b), \"direct\", x, 0);\n"
		"  wrap(s, RN_LOG_WARN, r ? \"bad_one\" : \"good_one\", \"key\");\n"
		"  rn_log(l, RN_LOG_INFO, \"counted\", RN_LS(\"k\", f(a, \"v\")), RN_LI(\"n\", 1)); }\n",
	};
	struct event_set s = { .n = 0 };
	char *stripped = strip_comments(src[0]);

	scan_events(&s, (const char *const *)&stripped, 1);
	free(stripped);
	cr_assert_eq(s.n, 4, "found %zu events", s.n);
	cr_assert(has_event(&s, "direct") && has_event(&s, "bad_one") && has_event(&s, "good_one") &&
		  has_event(&s, "counted"));
}

/* The runner/ C sources, comments blanked; owned. */
static size_t read_runner_sources(char **srcs, size_t max)
{
	char *dir = fgt_fmt("%s/runner", FG_SOURCE_DIR);
	DIR *d = opendir(dir);
	size_t n = 0;

	cr_assert_not_null(d, "cannot open '%s'", dir);
	for (struct dirent *de = readdir(d); de; de = readdir(d)) {
		size_t len = strlen(de->d_name);
		char *path, *text;

		if (len < 3 || strcmp(de->d_name + len - 2, ".c"))
			continue;
		cr_assert_lt(n, max, "too many runner sources");
		path = fgt_fmt("%s/%s", dir, de->d_name);
		text = fgt_read(path, NULL);
		cr_assert_not_null(text, "cannot read '%s'", path);
		srcs[n++] = strip_comments(text);
		free(text);
		free(path);
	}
	closedir(d);
	free(dir);
	return n;
}

Test(docs_reference, every_runner_log_event_is_in_the_operations_guide)
{
	char *srcs[64];
	size_t nsrc = read_runner_sources(srcs, 64);
	char *guide = fgdoc_read_source("docs/guide/operations.md");
	struct event_set s = { .n = 0 };

	scan_events(&s, (const char *const *)srcs, nsrc);
	/* The scanner works on the real tree: a direct call, one through a
	 * wrapper, one behind a ternary. */
	cr_assert(has_event(&s, "run_start") && has_event(&s, "cycle_corrupt") &&
		  has_event(&s, "log_reopen_error"), "the scan found only %zu events", s.n);
	for (size_t i = 0; i < s.n; i++) {
		char *quoted = fgt_fmt("`%s`", s.name[i]);

		cr_expect_not_null(strstr(guide, quoted),
				   "event %s is logged by runner/ but not in docs/guide/operations.md", quoted);
		free(quoted);
	}
	for (size_t i = 0; i < nsrc; i++)
		free(srcs[i]);
	free(guide);
}

/* ---- exit codes: the docs name only codes exit.h defines ---- */

#define MAX_CODES 16

/* The values of exit.h's FG_EXIT_* (FG_EXIT_SIGNAL_BASE included). */
static size_t exit_h_codes(int *codes)
{
	char *h = fgdoc_read_source("common/include/forge/exit.h");
	size_t n = 0;

	for (const char *p = strstr(h, "#define FG_EXIT_"); p; p = strstr(p + 1, "#define FG_EXIT_")) {
		const char *v = p + 8;
		char *end;
		long code;

		while (*v && *v != ' ')
			v++;
		code = strtol(v, &end, 10);
		if (end != v && n < MAX_CODES)
			codes[n++] = (int)code;
	}
	free(h);
	cr_assert_geq(n, 7, "exit.h: only %zu codes read", n);
	return n;
}

/*
 * A code the docs may name: one of exit.h's, 128+N (a signal), or one of
 * the engine CLI's own codes the runner passes through, which
 * exit-codes.md describes: 126, 127 (the command in the container cannot
 * be run) and 137 (the container was killed).
 */
static bool known_code(long code, const int *codes, size_t n)
{
	if (code == 126 || code == 127 || code == 137 || (code > 128 && code < 128 + 65))
		return true;
	for (size_t i = 0; i < n; i++)
		if (codes[i] == code)
			return true;
	return false;
}

/* Checks every "exit N", "exits N", "exit code N", "exit status N" and
 * "`N` |" table cell of text; returns how many were checked. */
static size_t check_codes_in(const char *what, const char *text, const int *codes, size_t n)
{
	static const char *const lead[] = { "exit ", "exits ", "exit code ", "exit status ", "\n| `" };
	size_t checked = 0;

	for (size_t l = 0; l < sizeof(lead) / sizeof(lead[0]); l++) {
		for (const char *p = strstr(text, lead[l]); p; p = strstr(p + 1, lead[l])) {
			const char *v = p + strlen(lead[l]);
			char *end;
			long code;

			if (l < 4 && p > text && ident_char(p[-1]))
				continue;
			v += *v == '`';
			code = strtol(v, &end, 10);
			if (end == v || !isdigit((unsigned char)*v) || isalnum((unsigned char)*end) || *end == '.')
				continue;
			if (l == 4 && strncmp(end, "` |", 3))
				continue;
			checked++;
			cr_expect(known_code(code, codes, n), "%s names exit code %ld, which exit.h does not define",
				  what, code);
		}
	}
	return checked;
}

Test(docs_reference, exit_codes_in_the_docs_are_the_ones_exit_h_defines)
{
	static const char *const files[] = {
		"README.md", "examples/README.md", "docs/architecture.md", "docs/security.md",
		/* Not agents.md: it names the agent CLIs' own codes (Gemini's 55). */
		"docs/guide/auto-review.md", "docs/guide/operations.md",
		"docs/guide/container-image.md", "docs/reference/config.md", "docs/reference/exit-codes.md",
		"docs/reference/cycle-files.md", "docs/reference/report.md", "man/forge-entrypoint.1",
		"man/forge-runner.1",
	};
	int codes[MAX_CODES];
	size_t n = exit_h_codes(codes), checked = 0;
	char *table = fgdoc_read_source("docs/reference/exit-codes.md");

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *text = strstr(files[i], "man/") ? fgdoc_man_plain(files[i]) : fgdoc_read_source(files[i]);

		checked += check_codes_in(files[i], text, codes, n);
		free(text);
	}
	cr_expect_gt(checked, 50, "only %zu exit codes found in the docs", checked);
	/* And each code of exit.h is described in exit-codes.md. */
	for (size_t i = 0; i < n; i++) {
		char *cell = fgt_fmt(codes[i] == 128 ? "`128+N`" : "`%d`", codes[i]);

		cr_expect_not_null(strstr(table, cell), "exit code %d (exit.h) is not in exit-codes.md", codes[i]);
		free(cell);
	}
	free(table);
}

Test(docs_reference, exit_code_scanner_reads_prose_and_tables)
{
	static const int codes[] = { 0, 1, 2, 3, 124, 125, 128 };

	cr_expect_eq(check_codes_in("t", "it exits 2; exit `125`\n| `3` | x |\nexit 1.5 texit 9", codes, 7), 3);
}

/* Each fenced block of lang in text (```lang ... ```), in order: *at the
 * start of the next one's body, its length, 0 when none is left. */
static size_t next_block(const char **at, const char *lang)
{
	char *fence = fgt_fmt("```%s\n", lang);
	const char *open = strstr(*at, fence), *body, *close;
	size_t len = 0;

	if (open) {
		body = open + strlen(fence);
		close = strstr(body, "\n```");
		len = close ? (size_t)(close - body) + 1 : 0;
		*at = body;
	}
	free(fence);
	return len;
}

/* 1 when obj is a claim with access modes and a size (failing the test
 * when it lacks them), 0 for another kind. */
static size_t manifest_claim_ok(const cJSON *obj)
{
	const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(obj, "kind"));
	const cJSON *spec = cJSON_GetObjectItem(obj, "spec");

	cr_assert_not_null(kind, "a manifest without kind");
	if (strcmp(kind, "PersistentVolumeClaim"))
		return 0;
	cr_expect(cJSON_GetArraySize(cJSON_GetObjectItem(spec, "accessModes")) > 0, "no accessModes");
	cr_expect_not_null(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(spec, "resources"), "requests"),
					       "storage"), "no size");
	return 1;
}

/*
 * The Kubernetes workspace guide's examples: every manifest is valid JSON
 * whose claims have what a claim needs (access modes, a size), and every
 * option its forge-runner command lines use is one `run --help` prints.
 */
Test(docs_reference, the_kubernetes_workspace_guides_examples_hold)
{
	char *guide = fgdoc_read_source("docs/guide/kubernetes-workspace.md");
	static char names[512][64];
	size_t n = fgdoc_help_tokens_of(FG_RUNNER_BIN, names, 512), len, claims = 0, options = 0;
	const char *at = guide;

	for (len = next_block(&at, "json"); len; at += len, len = next_block(&at, "json")) {
		cJSON *o = cJSON_ParseWithLength(at, len);
		const cJSON *items = cJSON_GetObjectItem(o, "items"), *it;

		cr_assert_not_null(o, "not JSON: %.*s", (int)len, at);
		if (items) {
			cJSON_ArrayForEach(it, items)
				claims += manifest_claim_ok(it);
		} else {
			claims += manifest_claim_ok(o);
		}
		cJSON_Delete(o);
	}
	cr_expect_eq(claims, 2, "a claim for the test cluster and one for a real cluster");
	at = guide;
	for (len = next_block(&at, "sh"); len; at += len, len = next_block(&at, "sh")) {
		const char *run = strstr(at, "forge-runner run");

		for (const char *p = run; p && p < at + len; p++) {
			size_t tl = p[0] == '-' && p[1] == '-' && (p == run || !isalnum((unsigned char)p[-1]))
					    ? 2 + strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-") : 0;

			if (tl <= 2)
				continue;
			options++;
			cr_expect(fgdoc_in_names(names, n, p, tl), "the guide uses '%.*s', which run --help does not print",
				  (int)tl, p);
			p += tl;
		}
	}
	cr_expect_gt(options, 10, "only %zu options found in the guide's command lines", options);
	free(guide);
}
