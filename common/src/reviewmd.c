/*
 * reviewmd.c - the review.md format (see reviewmd.h and
 * docs/reference/review-md-schema.md, which records every decision below).
 *
 * Parsing never fails: each problem becomes a diagnostic and the parser falls
 * back to the documented default, so a broken review.md never silently skips
 * review. The frontmatter is read with libyaml's event API rather than its
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

#define STR_(x) #x
#define STR(x) STR_(x)
#define TREATED_EMPTY "treated as an empty file: the reviewer runs without instructions"
/* First line of the frontmatter text inside the file (line 1 is "---"). */
#define FM_FIRST_LINE 2
/* Longest field name we read (longer ones are unknown anyway). */
#define KEY_MAX FG_EDIT_MAX   /* longest key compared, for "did you mean" too */

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
static int content_refused(struct fg_diags *d, const char *data, size_t len)
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
static char *make_instructions(const char *p, size_t len)
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

/* ---- YAML walk --------------------------------------------------------- */

/* Copies at most SHOW_MAX bytes of s into out for a message, control
 * characters replaced, cut on a UTF-8 boundary. */
void fg__rmd_show(const char *s, size_t n, char *out, size_t outlen)
{
	size_t k = n < SHOW_MAX ? n : SHOW_MAX;

	while (k < n && k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
		k--;
	if (k + 4 > outlen)
		k = outlen - 4;
	for (size_t i = 0; i < k; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	memcpy(out + k, k < n ? "..." : "", k < n ? 4 : 1);
}

int fg__rmd_ev_line(const yaml_event_t *ev)
{
	return (int)ev->start_mark.line + FM_FIRST_LINE;
}

/* Deletes the current event and parses the next; 0 when the YAML is
 * malformed or past a bound (w->limit then says which). The bounds are
 * checked per event, before libyaml is asked for more: its scanner keeps a
 * simple-key entry per open flow collection and walks them all for every
 * token, so 200,000 nested '[' took 88 s; stopped at FG_REVIEWMD_MAX_DEPTH
 * it has read a few kilobytes at most. */
int fg__rmd_next_event(struct walker *w)
{
	if (w->have_ev)
		yaml_event_delete(&w->ev);
	w->have_ev = 0;
	if (w->events >= FG_REVIEWMD_MAX_EVENTS) {
		w->limit = "more than " STR(FG_REVIEWMD_MAX_EVENTS) " YAML events";
		return 0;
	}
	if (!yaml_parser_parse(&w->parser, &w->ev)) {
		w->failed = 1;
		return 0;
	}
	w->have_ev = 1;
	w->events++;
	if (w->ev.type == YAML_MAPPING_START_EVENT || w->ev.type == YAML_SEQUENCE_START_EVENT)
		w->depth++;
	else if (w->ev.type == YAML_MAPPING_END_EVENT || w->ev.type == YAML_SEQUENCE_END_EVENT)
		w->depth--;
	if (w->depth > FG_REVIEWMD_MAX_DEPTH) {
		w->limit = "nested deeper than " STR(FG_REVIEWMD_MAX_DEPTH) " levels";
		return 0;
	}
	return 1;
}

/* Skips the node that starts with the current event (scalars and aliases
 * are one event; collections run to their matching end). */
int fg__rmd_skip_node(struct walker *w)
{
	long depth = 0;

	do {
		yaml_event_type_t t = w->ev.type;

		if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT)
			depth++;
		else if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT)
			depth--;
		if (depth > 0 && !fg__rmd_next_event(w))
			return 0;
	} while (depth > 0);
	return 1;
}

static int str_in(const char *s, const char *const *set)
{
	for (; *set; set++) {
		if (!strcmp(s, *set))
			return 1;
	}
	return 0;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
	}
	return 1;
}

/* What a plain scalar would be under YAML's core schema, for messages. */
static const char *plain_kind(const char *v)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
	static const char *const bools[] = { "true", "True", "TRUE", "false", "False", "FALSE",
					     "yes", "Yes", "YES", "no", "No", "NO", "on", "On",
					     "ON", "off", "Off", "OFF", NULL };
	char *end;

	if (str_in(v, nulls))
		return "null";
	if (str_in(v, bools))
		return "a boolean";
	if ((v[0] == '-' || v[0] == '+') && all_digits(v + 1))
		return v[0] == '-' ? "a negative number" : "a signed number";
	if (v[0] == '0' && (v[1] == 'x' || v[1] == 'o' || v[1] == 'X' || v[1] == 'O'))
		return "a hexadecimal or octal number";
	if (v[0] == '0' && all_digits(v + 1))
		return "a number with a leading zero";
	if (!strcmp(v, ".inf") || !strcmp(v, "-.inf") || !strcmp(v, ".nan") || !strcmp(v, ".NaN") ||
	    !strcmp(v, ".Inf") || !strcmp(v, ".NAN") || !strcmp(v, ".INF"))
		return "a float";
	strtod(v, &end);
	if (end != v && *end == '\0')
		return "a float";
	return "a string";
}

/* Kind of the current event's node for a message ("a quoted string", ...). */
const char *fg__rmd_node_kind(const yaml_event_t *ev, const char *ok_tag)
{
	const char *tag;

	switch (ev->type) {
	case YAML_MAPPING_START_EVENT:
		return "a mapping";
	case YAML_SEQUENCE_START_EVENT:
		return "a sequence";
	case YAML_ALIAS_EVENT:
		return "an alias";
	case YAML_SCALAR_EVENT:
		break;
	default:
		return "not a value";
	}
	tag = (const char *)ev->data.scalar.tag;
	if (tag && strcmp(tag, ok_tag) != 0)
		return "an explicitly tagged value";
	if (ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
	    ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
		return "a quoted string";
	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return "a block string";
	return plain_kind((const char *)ev->data.scalar.value);
}

/* Error for an invalid known field; the value is ignored. */
void fg__rmd_bad_value(struct walker *w, const char *field, const char *kind, const char *expect)
{
	char shown[SHOW_MAX + 8] = "";

	if (w->ev.type == YAML_SCALAR_EVENT)
		fg__rmd_show((const char *)w->ev.data.scalar.value, w->ev.data.scalar.length, shown,
		     sizeof(shown));
	if (w->ev.type == YAML_SCALAR_EVENT)
		fg_diags_add(&w->diags, FG_DIAG_ERROR, fg__rmd_ev_line(&w->ev),
			     "invalid '%s' value '%s' (%s): expected %s; ignored", field, shown,
			     kind, expect);
	else
		fg_diags_add(&w->diags, FG_DIAG_ERROR, fg__rmd_ev_line(&w->ev),
			     "invalid '%s' value (%s): expected %s; ignored", field, kind, expect);
}

/* max_retries: an untagged (or !!int) plain scalar of decimal digits without
 * sign or leading zero; a leading zero is refused because YAML 1.1 readers
 * (PyYAML, the seed's) take 010 as octal 8. */
static int is_plain_decimal(const yaml_event_t *ev)
{
	const char *tag, *v;

	if (ev->type != YAML_SCALAR_EVENT || ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	tag = (const char *)ev->data.scalar.tag;
	if (tag && strcmp(tag, YAML_INT_TAG) != 0)
		return 0;
	v = (const char *)ev->data.scalar.value;
	return all_digits(v) && !(v[0] == '0' && v[1]);
}

static void take_retries(struct walker *w)
{
	static const char expect[] = "a plain decimal integer from 0 to " STR(FG_MAX_RETRIES_LIMIT);
	long n;

	w->f.has_retries = 0;   /* a later duplicate replaces an earlier value */
	if (!is_plain_decimal(&w->ev)) {
		fg__rmd_bad_value(w, "max_retries", fg__rmd_node_kind(&w->ev, YAML_INT_TAG), expect);
		return;
	}
	if (fg_parse_long((const char *)w->ev.data.scalar.value, 0, FG_MAX_RETRIES_LIMIT, &n) < 0) {
		fg__rmd_bad_value(w, "max_retries", "above the limit", expect);
		return;
	}
	w->f.has_retries = 1;
	w->f.retries = n;
}

/* An untagged (or !!bool) plain YAML 1.2 boolean into *has and *val. */
static void take_bool(struct walker *w, const char *field, int *has, int *val)
{
	static const char *const yes[] = { "true", "True", "TRUE", NULL };
	static const char *const no[] = { "false", "False", "FALSE", NULL };
	const yaml_event_t *ev = &w->ev;
	const char *v;

	*has = 0;
	if (ev->type == YAML_SCALAR_EVENT && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (!ev->data.scalar.tag || !strcmp((const char *)ev->data.scalar.tag, YAML_BOOL_TAG))) {
		v = (const char *)ev->data.scalar.value;
		if (str_in(v, yes) || str_in(v, no)) {
			*has = 1;
			*val = str_in(v, yes);
			return;
		}
	}
	fg__rmd_bad_value(w, field, fg__rmd_node_kind(ev, YAML_BOOL_TAG), "true or false");
}

long fg__rmd_str_value(const yaml_event_t *ev, char *out, size_t outlen)
{
	const char *tag;
	size_t n;

	if (ev->type != YAML_SCALAR_EVENT)
		return -1;
	tag = (const char *)ev->data.scalar.tag;
	if (tag && strcmp(tag, YAML_STR_TAG) != 0)
		return -1;
	n = ev->data.scalar.length;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, ev->data.scalar.value, n);
	out[n] = '\0';
	return (long)ev->data.scalar.length;
}

int fg_role_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > FG_ROLE_MAX || *s == '-')
		return 0;
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return 0;
	}
	return 1;
}

/* A role path stays inside review.md's directory: relative, no "." or ".."
 * component, no empty component, printable. 0 or the reason. */
static const char *role_path_problem(const char *p)
{
	if (!*p)
		return "it is empty";
	if (*p == '/')
		return "it is an absolute path: it escapes the directory of review.md";
	for (const char *c = p; *c;) {
		size_t n = strcspn(c, "/");

		if (n == 0)
			return "it has an empty path component";
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return "it has a '.' or '..' component: it escapes the directory of review.md";
		for (size_t i = 0; i < n; i++) {
			if ((unsigned char)c[i] < 0x20 || c[i] == 0x7f || c[i] == '\\')
				return "it holds a control character or a backslash";
		}
		c += n;
		c += *c == '/';
	}
	return NULL;
}

static void bad_entry(struct walker *w, int line, const char *why)
{
	fg_diags_add(&w->diags, FG_DIAG_ERROR, line, "invalid 'reviewers' entry: %s; skipped", why);
}

/* Why a parsed entry cannot join the panel (written to why), or 0. */
static int entry_problem(const struct walker *w, const struct fm_reviewer *r, int has_role,
			 long role_len, char *why, size_t whylen)
{
	char shown[SHOW_MAX + 8];

	if (!has_role || role_len < 0) {
		snprintf(why, whylen, "'role' is missing or not a string");
		return 1;
	}
	fg__rmd_show(r->role, strlen(r->role), shown, sizeof(shown));
	if (role_len > FG_ROLE_MAX || !fg_role_valid(r->role)) {
		snprintf(why, whylen, "role '%s' is not a slug ([a-z0-9][a-z0-9-]*, at most %d "
			 "characters)", shown, FG_ROLE_MAX);
		return 1;
	}
	for (size_t i = 0; i < w->f.nrev; i++) {
		if (!strcmp(w->f.rev[i].role, r->role)) {
			snprintf(why, whylen, "role '%s' is repeated (first on line %d)", shown,
				 w->f.rev[i].line);
			return 1;
		}
	}
	if (w->f.nrev == FG_REVIEWERS_MAX) {
		snprintf(why, whylen, "role '%s' is one more than the %d a panel may have", shown,
			 FG_REVIEWERS_MAX);
		return 1;
	}
	return 0;
}

/* Checks a parsed entry and adds it to the panel. */
static void add_entry(struct walker *w, const struct fm_reviewer *r, int has_role, long role_len,
		      long file_len)
{
	char shown[SHOW_MAX + 8], why[200];
	const char *problem;

	if (entry_problem(w, r, has_role, role_len, why, sizeof(why))) {
		fg_diags_add(&w->diags, FG_DIAG_ERROR, r->line,
			     "invalid 'reviewers' entry: %s; skipped", why);
		return;
	}
	problem = file_len == -2 ? "'instructions' is not a string"
		  : file_len > ROLE_FILE_MAX ? "'instructions' is longer than 255 bytes"
		  : file_len >= 0 ? role_path_problem(r->file) : NULL;
	if (problem) {
		fg__rmd_show(r->file, strlen(r->file), shown, sizeof(shown));
		fg_diags_add(&w->diags, FG_DIAG_ERROR, r->line,
			     "role file '%s' of role '%s' refused: %s; role skipped", shown, r->role,
			     problem);
		return;
	}
	w->f.rev[w->f.nrev++] = *r;
}

/* One pair of an entry's mapping; the current event is the value. */
static int take_entry_pair(struct walker *w, const char *key, int line, struct fm_reviewer *r,
			   int *has_role, long *role_len, long *file_len)
{
	if (!strcmp(key, "role")) {
		*has_role = 1;
		*role_len = fg__rmd_str_value(&w->ev, r->role, sizeof(r->role));
	} else if (!strcmp(key, "instructions")) {
		*file_len = fg__rmd_str_value(&w->ev, r->file, sizeof(r->file));
		if (*file_len < 0)
			*file_len = -2;
	} else if (w->lint) {
		fg_diags_add(&w->diags, FG_DIAG_WARNING, line,
			     "unknown field '%.40s' in a 'reviewers' entry is ignored", key);
	}
	return fg__rmd_skip_node(w);
}

int fg__rmd_each_pair(struct walker *w, int (*pair)(struct walker *, const char *, int, void *), void *ctx)
{
	for (;;) {
		char key[KEY_MAX + 1] = "";
		int line;

		if (!fg__rmd_next_event(w))
			return 0;
		if (w->ev.type == YAML_MAPPING_END_EVENT)
			return 1;
		line = fg__rmd_ev_line(&w->ev);
		if (fg__rmd_str_value(&w->ev, key, sizeof(key)) < 0 && !fg__rmd_skip_node(w))
			return 0;
		if (!fg__rmd_next_event(w) || !pair(w, key, line, ctx))
			return 0;
	}
}

/* What take_entry_pair() fills, for fg__rmd_each_pair(). */
struct entry_ctx {
	struct fm_reviewer *r;
	int *has_role;
	long *role_len, *file_len;
};

static int entry_pair(struct walker *w, const char *key, int line, void *ctx)
{
	struct entry_ctx *x = ctx;

	return take_entry_pair(w, key, line, x->r, x->has_role, x->role_len, x->file_len);
}

/* One entry of reviewers:; the current event is its first. */
static int take_entry(struct walker *w)
{
	struct fm_reviewer r;
	int has_role = 0;
	long role_len = -1, file_len = -1;

	memset(&r, 0, sizeof(r));
	r.line = fg__rmd_ev_line(&w->ev);
	if (w->ev.type != YAML_MAPPING_START_EVENT) {
		bad_entry(w, r.line, "expected a mapping with 'role' and optionally 'instructions'");
		return fg__rmd_skip_node(w);
	}
	struct entry_ctx x = { &r, &has_role, &role_len, &file_len };

	if (!fg__rmd_each_pair(w, entry_pair, &x))
		return 0;
	add_entry(w, &r, has_role, role_len, file_len);
	return 1;
}

/* reviewers: a sequence of entries. A later duplicate field replaces it. */
static void take_reviewers(struct walker *w)
{
	w->f.nrev = 0;
	w->f.has_reviewers = 0;
	if (w->ev.type != YAML_SEQUENCE_START_EVENT) {
		fg__rmd_bad_value(w, "reviewers", fg__rmd_node_kind(&w->ev, YAML_SEQ_TAG),
			  "a list of {role, instructions}");
		return;
	}
	w->f.has_reviewers = 1;
	for (;;) {
		if (!fg__rmd_next_event(w))
			return;
		if (w->ev.type == YAML_SEQUENCE_END_EVENT)
			return;
		if (!take_entry(w))
			return;
	}
}

/* rereview: "rejected" or "all" (a plain or quoted string). */
static void take_rereview(struct walker *w)
{
	char v[16];
	long n = fg__rmd_str_value(&w->ev, v, sizeof(v));

	w->f.has_rereview = 0;
	if (n >= 0 && (size_t)n < sizeof(v) && (!strcmp(v, "rejected") || !strcmp(v, "all"))) {
		w->f.has_rereview = 1;
		w->f.rereview = !strcmp(v, "all") ? FG_REREVIEW_ALL : FG_REREVIEW_REJECTED;
		return;
	}
	fg__rmd_bad_value(w, "rereview", n >= 0 ? "an unknown word" : fg__rmd_node_kind(&w->ev, YAML_STR_TAG),
		  "'rejected' or 'all'");
}

const char *fg_rereview_name(enum fg_rereview r)
{
	return r == FG_REREVIEW_ALL ? "all" : "rejected";
}

/* max_cost_usd: an untagged (or !!int/!!float) plain scalar that is a
 * finite decimal number from 0 to FG_MAX_COST_USD_LIMIT. */
static void take_cost(struct walker *w)
{
	static const char expect[] = "a plain decimal number of US dollars from 0 to " STR(FG_MAX_COST_USD_LIMIT);
	const yaml_event_t *ev = &w->ev;
	const char *tag;
	double d;

	w->f.has_cost = 0;
	tag = ev->type == YAML_SCALAR_EVENT ? (const char *)ev->data.scalar.tag : NULL;
	if (ev->type != YAML_SCALAR_EVENT || ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
	    (tag && strcmp(tag, YAML_INT_TAG) && strcmp(tag, YAML_FLOAT_TAG)) ||
	    fg_parse_double((const char *)ev->data.scalar.value, 0, FG_MAX_COST_USD_LIMIT, &d) < 0) {
		fg__rmd_bad_value(w, "max_cost_usd", fg__rmd_node_kind(ev, YAML_FLOAT_TAG), expect);
		return;
	}
	w->f.has_cost = 1;
	w->f.cost = d;
}

/* ---- the root mapping -------------------------------------------------- */

static const char *const known_fields[] = { "max_retries", "stop_when_stalled", "reviewers",
					    "rereview", "max_cost_usd", "require_evidence", "checks", NULL };

/* The known field an unknown key is most likely a typo of, or NULL. A key
 * within FG_REVIEWMD_TYPO_DISTANCE edits is a typo even outside lint: a
 * "max_retires: 1" otherwise runs with 3 cycles and no word. */
static const char *typo_of(const char *key, size_t *dist)
{
	const char *hint = NULL;

	*dist = (size_t)-1;
	for (size_t i = 0; known_fields[i]; i++) {
		size_t d = fg_edit_distance(key, known_fields[i]);

		if (d < *dist) {
			*dist = d;
			hint = known_fields[i];
		}
	}
	return hint;
}

static void unknown_field(struct walker *w, const char *key, int line)
{
	char shown[SHOW_MAX + 8];
	size_t d;
	const char *hint = typo_of(key, &d);

	if (d > FG_REVIEWMD_TYPO_DISTANCE && !w->lint)
		return;
	fg__rmd_show(key, strlen(key), shown, sizeof(shown));
	if (d <= FG_REVIEWMD_TYPO_DISTANCE)
		fg_diags_add(&w->diags, FG_DIAG_WARNING, line,
			     "unknown field '%s' is ignored (did you mean '%s'?)", shown, hint);
	else
		fg_diags_add(&w->diags, FG_DIAG_WARNING, line, "unknown field '%s' is ignored", shown);
}

/* Notes where a field first appeared; a repeat is advice (the last one counts,
 * as with the seed's YAML reader). */
static void seen_field(struct walker *w, const char *key, int *first, int line)
{
	if (*first && w->lint)
		fg_diags_add(&w->diags, FG_DIAG_WARNING, line,
			     "field '%s' is repeated (first on line %d): the last one counts", key, *first);
	if (!*first)
		*first = line;
}

/* Handles the value event of one pair, then skips it if it is a collection. */
static int take_value(struct walker *w, const char *key, int key_line)
{
	if (!strcmp(key, "max_retries")) {
		seen_field(w, key, &w->f.retries_line, key_line);
		take_retries(w);
	} else if (!strcmp(key, "stop_when_stalled")) {
		seen_field(w, key, &w->f.stalled_line, key_line);
		take_bool(w, key, &w->f.has_stalled, &w->f.stalled);
	} else if (!strcmp(key, "checks")) {
		seen_field(w, key, &w->f.checks_line, key_line);
		fg__rmd_take_checks(w);
	} else if (!strcmp(key, "require_evidence")) {
		seen_field(w, key, &w->f.evidence_line, key_line);
		take_bool(w, key, &w->f.has_evidence, &w->f.evidence);
	} else if (!strcmp(key, "reviewers")) {
		seen_field(w, key, &w->f.reviewers_line, key_line);
		take_reviewers(w);
	} else if (!strcmp(key, "rereview")) {
		seen_field(w, key, &w->f.rereview_line, key_line);
		take_rereview(w);
	} else if (!strcmp(key, "max_cost_usd")) {
		seen_field(w, key, &w->f.cost_line, key_line);
		take_cost(w);
	} else if (*key) {
		unknown_field(w, key, key_line);
	}
	return !w->failed && !w->limit && fg__rmd_skip_node(w);
}

/* Walks the pairs of the root mapping; the current event is its start. */
static int walk_mapping(struct walker *w)
{
	for (;;) {
		char key[KEY_MAX + 1] = "";
		int line;

		if (!fg__rmd_next_event(w))
			return 0;
		if (w->ev.type == YAML_MAPPING_END_EVENT)
			return 1;
		line = fg__rmd_ev_line(&w->ev);
		if (w->ev.type == YAML_SCALAR_EVENT && w->ev.data.scalar.length <= KEY_MAX) {
			memcpy(key, w->ev.data.scalar.value, w->ev.data.scalar.length);
			key[w->ev.data.scalar.length] = '\0';
		} else if (w->ev.type == YAML_SCALAR_EVENT) {
			/* Longer than any field: unknown, shown cut. */
			fg__rmd_show((const char *)w->ev.data.scalar.value, w->ev.data.scalar.length, key,
			     sizeof(key));
		} else {
			if (w->lint)
				fg_diags_add(&w->diags, FG_DIAG_WARNING, line,
					     "a key that is not a plain name is ignored");
			if (!fg__rmd_skip_node(w))
				return 0;
		}
		if (!fg__rmd_next_event(w) || !take_value(w, key, line))
			return 0;
	}
}

/* Walks the whole stream: at most one document whose root is a mapping. */
static int walk_stream(struct walker *w)
{
	if (!fg__rmd_next_event(w) || !fg__rmd_next_event(w))
		return 0;
	if (w->ev.type == YAML_STREAM_END_EVENT)
		return 1;   /* nothing but blank lines and comments */
	if (!fg__rmd_next_event(w))
		return 0;
	if (w->ev.type == YAML_MAPPING_START_EVENT) {
		if (!walk_mapping(w))
			return 0;
	} else if (!(w->ev.type == YAML_SCALAR_EVENT && w->ev.data.scalar.length == 0 &&
		     w->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE)) {
		fg_diags_add(&w->diags, FG_DIAG_ERROR, fg__rmd_ev_line(&w->ev),
			     "frontmatter is not a mapping of fields: ignored, defaults used");
		if (!fg__rmd_skip_node(w))
			return 0;
	}
	if (!fg__rmd_next_event(w) || !fg__rmd_next_event(w))
		return 0;
	if (w->ev.type != YAML_STREAM_END_EVENT) {
		memset(&w->f, 0, sizeof(w->f));
		fg_diags_add(&w->diags, FG_DIAG_ERROR, fg__rmd_ev_line(&w->ev),
			     "frontmatter holds more than one YAML document: ignored, defaults used");
	}
	return 1;
}

static void move_diags(struct fg_diags *to, const struct fg_diags *from)
{
	for (size_t i = 0; i < from->n; i++)
		fg_diags_add(to, from->v[i].level, from->v[i].line, "%s", from->v[i].msg);
}

/* Reads the fields of fm into *f; on malformed YAML, *f stays empty and the
 * only diagnostic is the YAML error (field errors before it would mislead). */
static void parse_frontmatter(struct fg_diags *out, const char *fm, size_t len, int lint,
			      struct fm_fields *f)
{
	struct walker w;

	memset(&w, 0, sizeof(w));
	w.lint = lint;
	fg_diags_init(&w.diags);
	if (!yaml_parser_initialize(&w.parser)) {
		fg_diags_add(out, FG_DIAG_ERROR, 0, "cannot start the YAML parser: out of memory");
		return;
	}
	yaml_parser_set_input_string(&w.parser, (const unsigned char *)fm, len);
	if (walk_stream(&w)) {
		move_diags(out, &w.diags);
		*f = w.f;
	} else if (w.limit) {
		fg_diags_add(out, FG_DIAG_ERROR, w.have_ev ? fg__rmd_ev_line(&w.ev) : FM_FIRST_LINE,
			     "malformed YAML in the frontmatter (%s): fields ignored, defaults used",
			     w.limit);
	} else {
		const char *problem = w.parser.problem ? w.parser.problem : "syntax error";
		const char *ctx = w.parser.context;

		fg_diags_add(out, FG_DIAG_ERROR, (int)w.parser.problem_mark.line + FM_FIRST_LINE,
			     "malformed YAML in the frontmatter (%s%s%s): fields ignored, defaults used",
			     ctx ? ctx : "", ctx ? ": " : "", problem);
	}
	if (w.have_ev)
		yaml_event_delete(&w.ev);
	yaml_parser_delete(&w.parser);
	fg_diags_release(&w.diags);
}

/* ---- settings ---------------------------------------------------------- */

/* An environment value, or NULL when unset or empty (both mean "not set"). */
static const char *env_value(const struct fg_review_env *env, int which)
{
	const char *s;

	if (!env)
		return NULL;
	s = which == 2 ? env->max_cost_usd : which ? env->stop_when_stalled : env->max_retries;
	return s && *s ? s : NULL;
}

/* Warns that the environment variable NAME holding VALUE is ignored, and why;
 * the value is shown escaped and cut at SHOW_MAX bytes. */
static void warn_env_ignored(struct fg_review_config *c, const char *name,
			     const char *value, const char *why)
{
	char shown[SHOW_MAX + 8];

	fg__rmd_show(value, strlen(value), shown, sizeof(shown));
	fg_diags_add(&c->diags, FG_DIAG_WARNING, 0, "ignoring %s='%s': %s", name, shown, why);
}

static void apply_retries(struct fg_review_config *c, const struct fm_fields *f,
			  const struct fg_review_env *env)
{
	const char *s = env_value(env, 0);
	long n = -1;

	if (s && fg_parse_long(s, 0, FG_MAX_RETRIES_LIMIT, &n) < 0) {
		warn_env_ignored(c, "AUTO_REVIEW_MAX_RETRIES", s,
				 "not an integer from 0 to " FG_XSTR(FG_MAX_RETRIES_LIMIT));
		n = -1;
	}
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
	const char *s = env_value(env, 1);
	int b = 0;

	if (s && fg_parse_bool(s, &b) < 0) {
		warn_env_ignored(c, "AUTO_REVIEW_STOP_WHEN_STALLED", s,
				 "not a boolean (true/false, 1/0, yes/no, on/off)");
		b = 0;
	}
	c->stop_when_stalled = f->has_stalled ? f->stalled != 0 : b != 0;
}

static void apply_panel(struct fg_review_config *c, const struct fm_fields *f)
{
	c->rereview = f->has_rereview ? (enum fg_rereview)f->rereview : FG_REREVIEW_REJECTED;
	for (size_t i = 0; i < f->nrev; i++) {
		struct fg_reviewer *r = &c->reviewers[c->nreviewers++];

		memcpy(r->role, f->rev[i].role, sizeof(r->role));
		r->instructions_file = *f->rev[i].file ? fg_xstrdup(f->rev[i].file) : NULL;
		r->instructions = fg_xstrdup("");
		r->line = f->rev[i].line;
	}
}

/* Drops role i of the panel (its file could not be used). */
static void drop_role(struct fg_review_config *c, size_t i)
{
	free(c->reviewers[i].instructions_file);
	free(c->reviewers[i].instructions);
	memmove(&c->reviewers[i], &c->reviewers[i + 1],
		(c->nreviewers - i - 1) * sizeof(c->reviewers[0]));
	c->nreviewers--;
}

/* A panel whose entries were all skipped is no panel: say so once. */
static void finish_panel(struct fg_review_config *c)
{
	if (c->panel_given && c->nreviewers == 0)
		fg_diags_add(&c->diags, FG_DIAG_WARNING, 0,
			     "'reviewers' has no valid entry: one reviewer reviews, as without the field");
}

/* Reads role r's file beside review.md (dirfd). 0, or adds an error and
 * returns -1. */
static int read_role_file(struct fg_review_config *c, int dirfd, struct fg_reviewer *r)
{
	const char *why = NULL;
	char *sub = NULL, *last = NULL;
	struct fg_buf b;
	struct fg_diags d;
	int fd = -1, rc;

	fg_buf_init(&b, FG_REVIEWMD_MAX_BYTES);
	/* Below the directory of review.md, never following a symlink on the
	 * way (fg_open_beneath) nor at the end (fg_read_file_at). */
	rc = fg_path_split(r->instructions_file, &sub, &last);
	if (!rc && strchr(r->instructions_file, '/'))
		rc = fd = fg_open_beneath(dirfd, sub, 0, NULL, 0);
	if (rc >= 0)
		rc = fg_read_file_at(fd >= 0 ? fd : dirfd, last, FG_REVIEWMD_MAX_BYTES, 0, &b, NULL);
	if (fd >= 0)
		close(fd);
	free(sub);
	free(last);
	fg_diags_init(&d);
	if (rc == -ELOOP || rc == -ENOTDIR)
		why = "a symlink on the way could lead out of the directory of review.md";
	else if (rc < 0)
		why = strerror(-rc);
	else if (content_refused(&d, fg_buf_str(&b), b.len))
		why = d.v[0].msg;
	if (why) {
		fg_diags_add(&c->diags, FG_DIAG_ERROR, r->line,
			     "role file '%.60s' of role '%s' refused: %s; role skipped",
			     r->instructions_file, r->role, why);
	} else {
		free(r->instructions);
		r->instructions = make_instructions(fg_buf_str(&b), b.len);
	}
	fg_diags_release(&d);
	fg_buf_release(&b);
	return why ? -1 : 0;
}

/* Reads every role file, relative to the directory of review.md (path). */
static void load_role_files(struct fg_review_config *c, const char *path)
{
	char *dir = NULL;
	int dfd = -1;

	if (fg_path_split(path, &dir, NULL))
		dir = fg_xstrdup(".");

	for (size_t i = 0; i < c->nreviewers;) {
		if (!c->reviewers[i].instructions_file) {
			i++;
			continue;
		}
		if (dfd < 0)
			dfd = fg_open_dir(AT_FDCWD, dir, 0);
		if (dfd < 0) {
			fg_diags_add(&c->diags, FG_DIAG_ERROR, c->reviewers[i].line,
				     "role file '%.60s' of role '%s' cannot be read: %s; role skipped",
				     c->reviewers[i].instructions_file, c->reviewers[i].role,
				     strerror(-dfd));
			drop_role(c, i);
		} else if (read_role_file(c, dfd, &c->reviewers[i]) < 0) {
			drop_role(c, i);
		} else {
			i++;
		}
	}
	if (dfd >= 0)
		close(dfd);
	free(dir);
}

/* max_cost_usd: the frontmatter, else a valid AUTO_REVIEW_MAX_COST_USD
 * (an invalid one is ignored with a warning), else no budget. */
static void apply_cost(struct fg_review_config *c, const struct fm_fields *f,
		       const struct fg_review_env *env)
{
	const char *s = env_value(env, 2);
	double d = -1;

	if (s && fg_parse_double(s, 0, FG_MAX_COST_USD_LIMIT, &d) < 0) {
		warn_env_ignored(c, "AUTO_REVIEW_MAX_COST_USD", s,
				 "not a number of US dollars from 0 to " FG_XSTR(FG_MAX_COST_USD_LIMIT));
		d = -1;
	}
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
	int refused = content_refused(&c->diags, data, len);

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
		parse_frontmatter(&c->diags, s.fm, s.fm_len, lint, &f);
	}
	if (!s.opened)
		check_late_delim(&c->diags, data, len);
	c->instructions = make_instructions(s.body, s.body_len);
	apply_retries(c, &f, env);
	apply_stalled(c, &f, env);
	apply_panel(c, &f);
	c->panel_given = f.has_reviewers;
	apply_cost(c, &f, env);
	c->require_evidence = f.has_evidence && f.evidence;
	fg__rmd_apply_checks(c, &f);
	return refused;
}

int fg_review_config_parse(struct fg_review_config *c, const char *data, size_t len,
			   const struct fg_review_env *env)
{
	fg_review_config_release(c);
	parse_content(c, data ? data : "", data ? len : 0, env, 0);
	finish_panel(c);
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
	load_role_files(c, path);
	finish_panel(c);
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
	move_diags(out, &c.diags);
	if (!refused && !*c.instructions)
		fg_diags_add(out, FG_DIAG_WARNING, 0,
			     "no review instructions: the reviewer gets only the verdict protocol");
	fg_review_config_release(&c);
	return fg_diags_count(out, FG_DIAG_ERROR) - before;
}
