/*
 * reviewmd_yaml.c - review.md's frontmatter read as YAML events (see
 * reviewmd_internal.h): the walker and its bounds, the value helpers every
 * field uses, the one loop over a mapping's pairs and the one over a
 * sequence's items, the scalar fields (max_retries, stop_when_stalled,
 * require_evidence, rereview, max_cost_usd) and the root mapping with its
 * table of fields. reviewers: is read in reviewmd_panel.c, checks: in
 * reviewmd_checks.c, audit: in reviewmd_audit.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "forge/num.h"
#include "forge/text.h"
#include "forge/util.h"
#include "reviewmd_internal.h"

/* ---- the walker ---------------------------------------------------------- */

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
		w->limit = "more than " FG_XSTR(FG_REVIEWMD_MAX_EVENTS) " YAML events";
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
		w->limit = "nested deeper than " FG_XSTR(FG_REVIEWMD_MAX_DEPTH) " levels";
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
	static const char expect[] = "a plain decimal integer from 0 to " FG_XSTR(FG_MAX_RETRIES_LIMIT);
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

void fg__rmd_take_bool(struct walker *w, const char *field, int *has, int *val)
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

static const char *const REREVIEW[] = { [FG_REREVIEW_REJECTED] = "rejected", [FG_REREVIEW_ALL] = "all" };

/* rereview: "rejected" or "all" (a plain or quoted string). */
static void take_rereview(struct walker *w)
{
	char v[16];
	long n = fg__rmd_str_value(&w->ev, v, sizeof(v));

	w->f.has_rereview = 0;
	if (n >= 0 && (size_t)n < sizeof(v) && !FG_NAME_PARSE(REREVIEW, v, 0, &w->f.rereview)) {
		w->f.has_rereview = 1;
		return;
	}
	fg__rmd_bad_value(w, "rereview", n >= 0 ? "an unknown word" : fg__rmd_node_kind(&w->ev, YAML_STR_TAG),
		  "'rejected' or 'all'");
}

const char *fg_rereview_name(enum fg_rereview r)
{
	return FG_NAME_OF(REREVIEW, r, "rejected");
}

/* max_cost_usd: an untagged (or !!int/!!float) plain scalar that is a
 * finite decimal number from 0 to FG_MAX_COST_USD_LIMIT. */
static void take_cost(struct walker *w)
{
	static const char expect[] = "a plain decimal number of US dollars from 0 to " FG_XSTR(FG_MAX_COST_USD_LIMIT);
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


/* The key of a pair (the current event) into key: a scalar as written, a
 * longer one than any field shown cut; a key that is no scalar is skipped
 * (said in lint) and reads as "". 0 when the YAML is malformed. */
static int read_key(struct walker *w, char key[FG__RMD_KEY_MAX + 1], int line)
{
	*key = '\0';
	if (w->ev.type == YAML_SCALAR_EVENT && w->ev.data.scalar.length <= FG__RMD_KEY_MAX) {
		memcpy(key, w->ev.data.scalar.value, w->ev.data.scalar.length);
		key[w->ev.data.scalar.length] = '\0';
	} else if (w->ev.type == YAML_SCALAR_EVENT) {
		/* Longer than any field: unknown, shown cut. */
		fg__rmd_show((const char *)w->ev.data.scalar.value, w->ev.data.scalar.length, key,
			     FG__RMD_KEY_MAX + 1);
	} else {
		if (w->lint)
			fg_diags_add(&w->diags, FG_DIAG_WARNING, line,
				     "a key that is not a plain name is ignored");
		return fg__rmd_skip_node(w);
	}
	return 1;
}

int fg__rmd_each_pair(struct walker *w, int (*pair)(struct walker *, const char *, int, void *), void *ctx)
{
	for (;;) {
		char key[FG__RMD_KEY_MAX + 1];
		int line;

		if (!fg__rmd_next_event(w))
			return 0;
		if (w->ev.type == YAML_MAPPING_END_EVENT)
			return 1;
		line = fg__rmd_ev_line(&w->ev);
		if (!read_key(w, key, line) || !fg__rmd_next_event(w) || !pair(w, key, line, ctx))
			return 0;
	}
}

int fg__rmd_each_item(struct walker *w, const char *field, const char *expect, int (*item)(struct walker *))
{
	if (w->ev.type != YAML_SEQUENCE_START_EVENT) {
		fg__rmd_bad_value(w, field, fg__rmd_node_kind(&w->ev, YAML_SEQ_TAG), expect);
		return 0;
	}
	while (fg__rmd_next_event(w) && w->ev.type != YAML_SEQUENCE_END_EVENT && item(w))
		continue;
	return 1;
}

/* ---- the root mapping -------------------------------------------------- */

static void take_stalled(struct walker *w)
{
	fg__rmd_take_bool(w, "stop_when_stalled", &w->f.has_stalled, &w->f.stalled);
}

static void take_evidence(struct walker *w)
{
	fg__rmd_take_bool(w, "require_evidence", &w->f.has_evidence, &w->f.evidence);
}

int fg_env_name_valid(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > FG_AGENT_ENV_NAME_MAX || (*s >= '0' && *s <= '9'))
		return 0;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

/* One agent_env item: a variable name (a plain or quoted string). */
static int take_env_name(struct walker *w)
{
	static const char expect[] = "an environment variable name ([A-Za-z_][A-Za-z0-9_]*, at most "
				     FG_XSTR(FG_AGENT_ENV_NAME_MAX) " bytes)";
	char v[FG_AGENT_ENV_NAME_MAX + 2];
	long n = fg__rmd_str_value(&w->ev, v, sizeof(v));

	if (n < 0 || (size_t)n >= sizeof(v) - 1 || !fg_env_name_valid(v)) {
		fg__rmd_bad_value(w, "agent_env", n >= 0 ? "an invalid name" : fg__rmd_node_kind(&w->ev, YAML_STR_TAG),
				  expect);
		return w->ev.type == YAML_SCALAR_EVENT ? 1 : fg__rmd_skip_node(w);
	}
	if (w->f.nagent_env >= FG_AGENT_ENV_MAX) {
		fg_diags_add(&w->diags, FG_DIAG_ERROR, fg__rmd_ev_line(&w->ev),
			     "agent_env: more than " FG_XSTR(FG_AGENT_ENV_MAX) " names; '%s' is ignored", v);
		return 1;
	}
	memcpy(w->f.agent_env[w->f.nagent_env++], v, (size_t)n + 1);
	return 1;
}

static void take_agent_env(struct walker *w)
{
	w->f.nagent_env = 0;
	fg__rmd_each_item(w, "agent_env", "a list of environment variable names", take_env_name);
}

/* The fields of the root mapping: the name, where the line of its first
 * appearance is kept (for a repeat's advice), and its reader, called with
 * the value as the current event. In this order for "did you mean". */
static const struct field {
	const char *name;
	size_t line_at;
	void (*take)(struct walker *w);
} fields[] = {
	{ "max_retries", offsetof(struct fm_fields, retries_line), take_retries },
	{ "stop_when_stalled", offsetof(struct fm_fields, stalled_line), take_stalled },
	{ "reviewers", offsetof(struct fm_fields, reviewers_line), fg__rmd_take_reviewers },
	{ "rereview", offsetof(struct fm_fields, rereview_line), take_rereview },
	{ "max_cost_usd", offsetof(struct fm_fields, cost_line), take_cost },
	{ "require_evidence", offsetof(struct fm_fields, evidence_line), take_evidence },
	{ "checks", offsetof(struct fm_fields, checks_line), fg__rmd_take_checks },
	{ "audit", offsetof(struct fm_fields, audit_line), fg__rmd_take_audit },
	{ "agent_env", offsetof(struct fm_fields, agent_env_line), take_agent_env },
};

/* The known field an unknown key is most likely a typo of, or NULL. A key
 * within FG_REVIEWMD_TYPO_DISTANCE edits is a typo even outside lint: a
 * "max_retires: 1" otherwise runs with 3 cycles and no word. */
static const char *typo_of(const char *key, size_t *dist)
{
	const char *hint = NULL;

	*dist = (size_t)-1;
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		size_t d = fg_edit_distance(key, fields[i].name);

		if (d < *dist) {
			*dist = d;
			hint = fields[i].name;
		}
	}
	return hint;
}

void fg__rmd_unknown_key(struct walker *w, const char *key, int line, const char *where,
			 const char *const (*alias)[2], size_t nalias, const char *const *known, size_t nknown)
{
	const char *meant = NULL;
	char shown[SHOW_MAX + 8];

	for (size_t i = 0; !meant && i < nalias; i++)
		if (!strcmp(key, alias[i][0]))
			meant = alias[i][1];
	for (size_t i = 0; !meant && i < nknown; i++)
		if (fg_edit_distance(key, known[i]) <= 2)
			meant = known[i];
	if (!meant && !w->lint)
		return;
	fg__rmd_show(key, strlen(key), shown, sizeof(shown));
	fg_diags_add(&w->diags, FG_DIAG_WARNING, line, "unknown field '%s' in a '%s' entry is ignored%s%s%s",
		     shown, where, meant ? " (did you mean '" : "", meant ? meant : "", meant ? "'?)" : "");
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

/* One pair of the root mapping (for fg__rmd_each_pair): the field's reader
 * takes the value, which is then skipped if it is a collection. */
static int take_value(struct walker *w, const char *key, int key_line, void *ctx)
{
	size_t i = 0;

	(void)ctx;
	while (i < ARRAY_SIZE(fields) && strcmp(key, fields[i].name))
		i++;
	if (i < ARRAY_SIZE(fields)) {
		seen_field(w, key, (int *)((char *)&w->f + fields[i].line_at), key_line);
		fields[i].take(w);
	} else if (*key) {
		unknown_field(w, key, key_line);
	}
	return !w->failed && !w->limit && fg__rmd_skip_node(w);
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
		if (!fg__rmd_each_pair(w, take_value, NULL))
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

void fg__rmd_move_diags(struct fg_diags *to, const struct fg_diags *from)
{
	for (size_t i = 0; i < from->n; i++)
		fg_diags_add(to, from->v[i].level, from->v[i].line, "%s", from->v[i].msg);
}

void fg__rmd_parse_frontmatter(struct fg_diags *out, const char *fm, size_t len, int lint,
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
		fg__rmd_move_diags(out, &w.diags);
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

