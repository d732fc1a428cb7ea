/*
 * reviewmd.c - the review.md format (see reviewmd.h and
 * docs/reference/review-md-schema.md, which records every decision below).
 *
 * Parsing never fails: each problem becomes a diagnostic and the parser falls
 * back to the documented default, so a broken review.md never silently skips
 * review. This file holds the whole file's checks (size, NUL bytes, UTF-8),
 * the split into frontmatter and body, the settings the environment can give
 * (max_retries, stop_when_stalled, max_cost_usd) and the public API; the
 * YAML walk and the scalar fields are in reviewmd_yaml.c, the panel in
 * reviewmd_panel.c, checks: in reviewmd_checks.c (reviewmd_internal.h). The frontmatter is read with libyaml's event API rather than its
 * document API because only events tell an untagged plain scalar (3) apart
 * from an explicitly tagged string (!!str 3), and the schema accepts only
 * the former as an integer.
 */
#include "forge/text.h"
#include "forge/reviewmd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/fsutil.h"
#include "forge/num.h"
#include "forge/util.h"
#include "reviewmd_internal.h"

#define TREATED_EMPTY "treated as an empty file: the reviewer runs without instructions"

/* The three parts of a review.md once the delimiters are found. */
struct split {
	int opened;          /* line 1 is "---" */
	int closed;          /* a closing "---" line was found */
	const char *fm;      /* frontmatter text between the delimiters */
	size_t fm_len;
	const char *body;    /* everything after the closing line (or the whole file) */
	size_t body_len;
};

/* ---- content checks ---------------------------------------------------- */

/*
 * Adds an error and returns 1 when data cannot be a review.md (too large, a
 * NUL byte, not UTF-8), so that the caller treats it as empty. One linear
 * pass; the line number points at the first offending byte.
 */
int fg__rmd_content_refused(struct fg_diags *d, const char *data, size_t len)
{
	const char *nul;
	int line = 1;

	if (len > FG_REVIEWMD_MAX_BYTES) {
		fg_diags_add(d, FG_DIAG_ERROR, 0, "file is %zu bytes, over the %d-byte limit: %s",
			     len, FG_REVIEWMD_MAX_BYTES, TREATED_EMPTY);
		return 1;
	}
	/* A NUL byte first: for a binary file it is the clearer reason. */
	nul = memchr(data, '\0', len);
	if (nul) {
		for (const char *p = data; p < nul; p++)
			line += *p == '\n';
		fg_diags_add(d, FG_DIAG_ERROR, line, "file contains a NUL byte (a binary file?): %s",
			     TREATED_EMPTY);
		return 1;
	}
	for (size_t i = 0; i < len;) {
		size_t n = fg_utf8_seq((const unsigned char *)data + i, len - i);

		if (!n) {
			fg_diags_add(d, FG_DIAG_ERROR, line, "file is not valid UTF-8: %s",
				     TREATED_EMPTY);
			return 1;
		}
		line += data[i] == '\n';
		i += n;
	}
	return 0;
}

/* ---- delimiters and body ----------------------------------------------- */

/* Length of the line at p without its LF; *next points past the LF (or at end). */
static size_t line_at(const char *p, const char *end, const char **next)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	*next = nl ? nl + 1 : end;
	return (size_t)((nl ? nl : end) - p);
}

/* "---" followed only by spaces, tabs or the CR of a CRLF line end. */
static int is_delim(const char *p, size_t n)
{
	if (n < 3 || memcmp(p, "---", 3) != 0)
		return 0;
	for (size_t i = 3; i < n; i++) {
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			return 0;
	}
	return 1;
}

static int is_blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\f' && p[i] != '\v')
			return 0;
	}
	return 1;
}

/* Finds the frontmatter. *close_line receives the closing delimiter's line. */
static void split_file(const char *data, size_t len, struct split *s)
{
	const char *end = data + len;
	const char *next;
	size_t n = line_at(data, end, &next);

	memset(s, 0, sizeof(*s));
	s->body = data;
	s->body_len = len;
	if (!is_delim(data, n))
		return;
	s->opened = 1;
	for (const char *p = next; p < end;) {
		const char *after;
		size_t ln = line_at(p, end, &after);

		if (is_delim(p, ln)) {
			s->closed = 1;
			s->fm = next;
			s->fm_len = (size_t)(p - next);
			s->body = after;
			s->body_len = (size_t)(end - after);
			return;
		}
		p = after;
	}
}

/* Instructions: blank lines at the start and whitespace at the end dropped,
 * CRLF turned into LF so the prompt we assemble has one line-end style. */
char *fg__rmd_make_instructions(const char *p, size_t len)
{
	const char *end = p + len;
	struct fg_buf b;

	for (;;) {
		const char *next;
		size_t n = line_at(p, end, &next);

		if (p == end || !is_blank(p, n) || next == end)
			break;
		p = next;
	}
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' ||
			   end[-1] == '\n' || end[-1] == '\f' || end[-1] == '\v'))
		end--;
	fg_buf_init(&b, (size_t)(end - p) + 1);
	for (const char *q = p; q < end; q++) {
		if (q[0] == '\r' && q + 1 < end && q[1] == '\n')
			continue;
		fg_buf_addc(&b, *q);
	}
	return fg_buf_detach(&b, NULL);
}

/* Warns about a "---" that was meant as frontmatter but does not start the
 * file (a leading blank line or indentation): it is silently instructions
 * otherwise, which is the most common authoring mistake. */
static void check_late_delim(struct fg_diags *d, const char *data, size_t len)
{
	const char *end = data + len;
	int line = 1;

	for (const char *p = data; p < end; line++) {
		const char *next;
		size_t n = line_at(p, end, &next);

		if (!is_blank(p, n)) {
			while (n && (*p == ' ' || *p == '\t')) {
				p++;
				n--;
			}
			if (is_delim(p, n))
				fg_diags_add(d, FG_DIAG_WARNING, line,
					     "'---' is not on the first line of the file, so it does not open frontmatter: "
					     "the whole file is instructions");
			return;
		}
		p = next;
	}
}

/* ---- settings ---------------------------------------------------------- */

/* The settings the environment can give: the variable and what its value
 * must be, indexed by enum env_setting. */
enum env_setting { ENV_RETRIES, ENV_STALLED, ENV_COST };
static const struct {
	const char *name, *why;
} env_settings[] = {
	[ENV_RETRIES] = { "AUTO_REVIEW_MAX_RETRIES",
			  "not an integer from 0 to " FG_XSTR(FG_MAX_RETRIES_LIMIT) },
	[ENV_STALLED] = { "AUTO_REVIEW_STOP_WHEN_STALLED",
			  "not a boolean (true/false, 1/0, yes/no, on/off)" },
	[ENV_COST] = { "AUTO_REVIEW_MAX_COST_USD",
		       "not a number of US dollars from 0 to " FG_XSTR(FG_MAX_COST_USD_LIMIT) },
};

/* An environment value, or NULL when unset or empty (both mean "not set"). */
static const char *env_value(const struct fg_review_env *env, enum env_setting which)
{
	const char *s;

	if (!env)
		return NULL;
	s = which == ENV_COST ? env->max_cost_usd : which == ENV_STALLED ? env->stop_when_stalled
									  : env->max_retries;
	return s && *s ? s : NULL;
}

/* Whether the value s of setting which, whose parse returned rc, is used:
 * 0 when there is none, or after a warning that it is ignored and why when
 * rc < 0 (the value shown escaped and cut at SHOW_MAX bytes). */
static int env_used(struct fg_review_config *c, enum env_setting which, const char *s, int rc)
{
	char shown[SHOW_MAX + 8];

	if (!s)
		return 0;
	if (rc >= 0)
		return 1;
	fg__rmd_show(s, strlen(s), shown, sizeof(shown));
	fg_diags_add(&c->diags, FG_DIAG_WARNING, 0, "ignoring %s='%s': %s", env_settings[which].name,
		     shown, env_settings[which].why);
	return 0;
}

static void apply_retries(struct fg_review_config *c, const struct fm_fields *f,
			  const struct fg_review_env *env)
{
	const char *s = env_value(env, ENV_RETRIES);
	long n = -1;

	if (!env_used(c, ENV_RETRIES, s, s ? fg_parse_long(s, 0, FG_MAX_RETRIES_LIMIT, &n) : 0))
		n = -1;
	if (n == 0) {
		c->max_retries = 0;
		c->source = FG_RETRIES_ENV_DISABLED;
	} else if (f->has_retries) {
		c->max_retries = (int)f->retries;
		c->source = FG_RETRIES_FRONTMATTER;
	} else if (n > 0) {
		c->max_retries = (int)n;
		c->source = FG_RETRIES_ENV;
	} else {
		c->max_retries = FG_DEFAULT_MAX_RETRIES;
		c->source = FG_RETRIES_DEFAULT;
	}
}

static void apply_stalled(struct fg_review_config *c, const struct fm_fields *f,
			  const struct fg_review_env *env)
{
	const char *s = env_value(env, ENV_STALLED);
	int b = 0;

	if (!env_used(c, ENV_STALLED, s, s ? fg_parse_bool(s, &b) : 0))
		b = 0;
	c->stop_when_stalled = f->has_stalled ? f->stalled != 0 : b != 0;
}

static void apply_cost(struct fg_review_config *c, const struct fm_fields *f,
		       const struct fg_review_env *env)
{
	const char *s = env_value(env, ENV_COST);
	double d = -1;

	if (!env_used(c, ENV_COST, s, s ? fg_parse_double(s, 0, FG_MAX_COST_USD_LIMIT, &d) : 0))
		d = -1;
	c->max_cost_usd = f->has_cost ? f->cost : d;
}

/* ---- public API -------------------------------------------------------- */

void fg_review_env_from_environ(struct fg_review_env *env)
{
	env->max_retries = getenv("AUTO_REVIEW_MAX_RETRIES");
	env->stop_when_stalled = getenv("AUTO_REVIEW_STOP_WHEN_STALLED");
	env->max_cost_usd = getenv("AUTO_REVIEW_MAX_COST_USD");
}

void fg_review_config_init(struct fg_review_config *c)
{
	c->max_retries = FG_DEFAULT_MAX_RETRIES;
	c->source = FG_RETRIES_DEFAULT;
	c->stop_when_stalled = false;
	c->max_cost_usd = -1;
	c->has_frontmatter = false;
	c->instructions = NULL;
	c->nreviewers = 0;
	c->rereview = FG_REREVIEW_REJECTED;
	c->panel_given = false;
	c->require_evidence = false;
	c->nchecks = 0;
	c->nagent_env = 0;
	fg_diags_init(&c->diags);
}

void fg_review_config_release(struct fg_review_config *c)
{
	for (size_t i = 0; i < c->nreviewers; i++) {
		free(c->reviewers[i].instructions_file);
		free(c->reviewers[i].instructions);
	}
	c->nreviewers = 0;
	for (size_t i = 0; i < c->nchecks; i++)
		free(c->checks[i].run);
	c->nchecks = 0;
	free(c->instructions);
	fg_diags_release(&c->diags);
	fg_review_config_init(c);
}

/* The parser proper; c is freshly initialised. Returns 1 when the content
 * was refused (treated as empty). */
static int parse_content(struct fg_review_config *c, const char *data, size_t len,
			 const struct fg_review_env *env, int lint)
{
	struct fm_fields f;
	struct split s;
	int refused = fg__rmd_content_refused(&c->diags, data, len);

	memset(&f, 0, sizeof(f));
	if (refused)
		len = 0;
	/* A UTF-8 byte order mark is not content: editors on Windows add it. */
	if (len >= 3 && !memcmp(data, "\xef\xbb\xbf", 3)) {
		data += 3;
		len -= 3;
	}
	split_file(data, len, &s);
	if (s.opened && !s.closed)
		fg_diags_add(&c->diags, FG_DIAG_ERROR, 1,
			     "frontmatter opened on line 1 is never closed by a '---' line: no field is read "
			     "and the whole file is instructions");
	if (s.closed) {
		c->has_frontmatter = true;
		fg__rmd_parse_frontmatter(&c->diags, s.fm, s.fm_len, lint, &f);
	}
	if (!s.opened)
		check_late_delim(&c->diags, data, len);
	c->instructions = fg__rmd_make_instructions(s.body, s.body_len);
	apply_retries(c, &f, env);
	apply_stalled(c, &f, env);
	fg__rmd_apply_panel(c, &f);
	c->panel_given = f.has_reviewers;
	apply_cost(c, &f, env);
	c->require_evidence = f.has_evidence && f.evidence;
	fg__rmd_apply_checks(c, &f);
	memcpy(c->agent_env, f.agent_env, sizeof(c->agent_env));
	c->nagent_env = f.nagent_env;
	return refused;
}

int fg_review_config_parse(struct fg_review_config *c, const char *data, size_t len,
			   const struct fg_review_env *env)
{
	fg_review_config_release(c);
	parse_content(c, data ? data : "", data ? len : 0, env, 0);
	fg__rmd_finish_panel(c);
	return 0;
}

/* Turns a read failure into the diagnostic that says why the file counts as
 * empty. */
static void read_failed(struct fg_diags *d, int err)
{
	char why[128];

	switch (err) {
	case -ENOENT:
		fg_diags_add(d, FG_DIAG_ERROR, 0, "file does not exist");
		return;
	case -EISDIR:
		fg_diags_add(d, FG_DIAG_ERROR, 0, "is a directory, not a file: %s", TREATED_EMPTY);
		return;
	case -EINVAL:
		fg_diags_add(d, FG_DIAG_ERROR, 0, "is not a regular file: %s", TREATED_EMPTY);
		return;
	case -EFBIG:
		fg_diags_add(d, FG_DIAG_ERROR, 0, "file is larger than %d bytes (1 MiB): %s",
			     FG_REVIEWMD_MAX_BYTES, TREATED_EMPTY);
		return;
	}
	/* Messages are lower case (house style); strerror's are capitalised. */
	snprintf(why, sizeof(why), "%s", strerror(-err));
	if (why[0] >= 'A' && why[0] <= 'Z')
		why[0] = (char)(why[0] - 'A' + 'a');
	fg_diags_add(d, FG_DIAG_ERROR, 0, "cannot read the file: %s: %s", why, TREATED_EMPTY);
}

/* Loads path into c (released first). *refused is set when the content is
 * treated as empty. Returns 0, or -ENOENT when the file does not exist (c is
 * then parsed as an empty file too, so its fields are usable). */
static int load(struct fg_review_config *c, const char *path, const struct fg_review_env *env,
		int lint, int *refused)
{
	struct fg_buf b;
	int r;

	fg_review_config_release(c);
	/* The buffer's own limit also catches a file that grew after fstat(). */
	fg_buf_init(&b, FG_REVIEWMD_MAX_BYTES);
	/* Symlinks are followed: the resolver has already checked where they lead. */
	r = fg_read_file_at(AT_FDCWD, path, FG_REVIEWMD_MAX_BYTES, FG_READ_FOLLOW, &b, NULL);
	if (r < 0) {
		read_failed(&c->diags, r);
		*refused = 1;
		parse_content(c, "", 0, env, lint);
	} else {
		*refused = parse_content(c, fg_buf_str(&b), b.len, env, lint);
	}
	fg_buf_release(&b);
	fg__rmd_load_role_files(c, path);
	fg__rmd_finish_panel(c);
	return r == -ENOENT ? -ENOENT : 0;
}

int fg_review_config_load(struct fg_review_config *c, const char *path,
			  const struct fg_review_env *env)
{
	int refused;

	return load(c, path, env, 0, &refused);
}

size_t fg_review_lint_file(const char *path, struct fg_diags *out)
{
	struct fg_review_config c;
	const char *base = strrchr(path, '/');
	size_t before = fg_diags_count(out, FG_DIAG_ERROR);
	char shown[SHOW_MAX + 8];
	int refused = 0;

	base = base ? base + 1 : path;
	if (strcmp(base, "review.md") != 0) {
		fg__rmd_show(base, strlen(base), shown, sizeof(shown));
		fg_diags_add(out, FG_DIAG_ERROR, 0,
			     "file is named '%s': a review file must be named exactly 'review.md'", shown);
	}
	fg_review_config_init(&c);
	load(&c, path, NULL, 1, &refused);
	fg__rmd_move_diags(out, &c.diags);
	if (!refused && !*c.instructions)
		fg_diags_add(out, FG_DIAG_WARNING, 0,
			     "no review instructions: the reviewer gets only the verdict protocol");
	fg_review_config_release(&c);
	return fg_diags_count(out, FG_DIAG_ERROR) - before;
}
