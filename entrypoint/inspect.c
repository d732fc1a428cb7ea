/*
 * inspect.c - resolve, config, verdict, lint (see inspect.h).
 */
#include "inspect.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentenv.h"
#include "capture.h"
#include "cli.h"
#include "forge/alloc.h"
#include "forge/json.h"
#include "forge/evidence.h"
#include "forge/names.h"
#include "forge/fsutil.h"
#include "forge/resolve.h"
#include "forge/reviewmd.h"
#include "forge/verdict.h"
#include "forge/util.h"
#include "preset.h"

#define LINT_MAX_DEPTH 32

enum { OPT_HELP = 1, OPT_SKILLS_DIR, OPT_SKILL, OPT_TICKET };

static const struct fg_opt HELP_ONLY[] = {
	{ OPT_HELP, "help", 'h', NULL, NULL, "show this help" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

static const struct fg_opt RESOLVE_OPTS[] = {
	{ OPT_SKILLS_DIR, "skills-dir", 0, "DIR", "FORGE_SKILLS_DIR", "skills root (default /skills)" },
	{ OPT_SKILL, "skill", 0, "NAME", "FORGE_SKILL_NAME", "skill whose review.md is wanted" },
	{ OPT_TICKET, "ticket", 0, "KEY", "FORGE_TASK_KEY",
	  "ticket key; its project (PROJ-1 -> proj) may override the default" },
	{ OPT_HELP, "help", 'h', NULL, NULL, "show this help" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

static void print_json(cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);

	if (!s) {
		fputs("forge-entrypoint: out of memory\n", stderr);
		abort();
	}
	printf("%s\n", s);
	free(s);
}

/* Collects the positionals of a subcommand with no options but --help.
 * Returns -1 when help was printed, FG_EXIT_USAGE on a usage error, 0. */
static int positionals(int argc, char **argv, const char *usage, const char *about,
		       const char **out, int max, int *n)
{
	struct fg_opts_iter it;

	*n = 0;
	fg_opts_init(&it, HELP_ONLY, argc, argv, 1);
	while (fg_opts_each(&it)) {
		if (it.id == OPT_HELP) {
			ep_help(usage, about, HELP_ONLY);
			return -1;
		}
		if (*n == max)
			return ep_cmd_usage(argv[0], "unexpected argument '%s'", it.value);
		out[(*n)++] = it.value;
	}
	return fg_opts_failed(&it) ? ep_cmd_usage(argv[0], "%s", it.err) : 0;
}

static void print_diags_stderr(const struct fg_diags *d)
{
	for (size_t i = 0; i < d->n; i++)
		ep_log(d->v[i].level == FG_DIAG_ERROR ? FG_MSG_ERROR : FG_MSG_WARN, "%s", d->v[i].msg);
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

int ep_cmd_resolve(int argc, char **argv)
{
	static const char usage[] = "forge-entrypoint resolve --skills-dir DIR --skill NAME [--ticket KEY]";
	const char *dir = env_or("FORGE_SKILLS_DIR", "/skills");
	const char *skill = env_or("FORGE_SKILL_NAME", NULL);
	const char *ticket = env_or("FORGE_TASK_KEY", NULL);
	struct fg_opts_iter it;
	struct fg_diags d;
	char *path = NULL;
	int rc;

	fg_opts_init(&it, RESOLVE_OPTS, argc, argv, 1);
	while (fg_opts_each(&it)) {
		if (it.id == OPT_HELP)
			return ep_help(usage, "Prints the review.md that applies: the ticket's project "
				       "override first, then the default.\nExit 0 found, 1 none, 2 invalid input.",
				       RESOLVE_OPTS);
		if (it.id == FG_OPT_POSITIONAL)
			return ep_cmd_usage("resolve", "unexpected argument '%s'", it.value);
		*(it.id == OPT_SKILLS_DIR ? &dir : it.id == OPT_SKILL ? &skill : &ticket) = it.value;
	}
	if (fg_opts_failed(&it))
		return ep_cmd_usage("resolve", "%s", it.err);
	if (!skill)
		return ep_cmd_usage("resolve", "--skill is required");
	fg_diags_init(&d);
	rc = fg_resolve_review_md(dir, skill, ticket, &path, &d);
	print_diags_stderr(&d);
	fg_diags_release(&d);
	if (rc == 0)
		printf("%s\n", path);
	if (rc == -ENOENT) {
		struct fg_buf why;

		fg_buf_init(&why, 8192);
		fg_resolve_explain_missing(dir, skill, ticket, &why);
		ep_log(FG_MSG_INFO, "%s", fg_buf_str(&why));
		fg_buf_release(&why);
	}
	free(path);
	return rc == 0 ? FG_EXIT_OK : rc == -ENOENT ? FG_EXIT_FAILED : FG_EXIT_USAGE;
}

static void add_warnings(cJSON *o, const struct fg_diags *d)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "warnings");

	for (size_t i = 0; i < d->n; i++) {
		char *m = d->v[i].line > 0 ? fg_xasprintf("line %d: %s", d->v[i].line, d->v[i].msg)
					   : fg_xstrdup(d->v[i].msg);

		cJSON_AddItemToArray(arr, cJSON_CreateString(m));
		free(m);
	}
}

/* The panel: [{"role", "instructions_file", "instructions"}], [] without one. */
static void reviewer_json(cJSON *e, const void *elem)
{
	const struct fg_reviewer *r = elem;

	cJSON_AddStringToObject(e, "role", r->role);
	fg_json_add_str_or_null(e, "instructions_file", r->instructions_file);
	cJSON_AddStringToObject(e, "instructions", r->instructions);
}

/* The checks: [{"name", "run", "timeout_seconds"}] in review.md's order
 * (the valid ones, as run would run them), [] without any. */
static void check_json(cJSON *e, const void *elem)
{
	const struct fg_check *k = elem;

	cJSON_AddStringToObject(e, "name", k->name);
	cJSON_AddStringToObject(e, "run", k->run);
	cJSON_AddNumberToObject(e, "timeout_seconds", k->timeout_s);
}

/* "agents": {"worker": {...}, "reviewer": {...}}: each role's resolved
 * command, output format and preset (preset.h). 0 or FG_EXIT_USAGE. */
static int add_agents(cJSON *o)
{
	static const char *const roles[] = { "worker", "reviewer" };
	cJSON *agents = cJSON_AddObjectToObject(o, "agents");
	struct ep_role_agent a;
	char err[256];

	for (size_t i = 0; i < 2; i++) {
		cJSON *r = cJSON_AddObjectToObject(agents, roles[i]);

		ep_role_agent_init(&a);
		if (ep_role_agent_load(&a, roles[i], err, sizeof(err)) < 0) {
			ep_log(FG_MSG_INFO, "config: %s", err);
			return FG_EXIT_USAGE;
		}
		fg_json_add_str_or_null(r, "command", a.cmd);
		cJSON_AddStringToObject(r, "output", ep_output_format_name(a.format));
		fg_json_add_str_or_null(r, "preset", a.preset);
		cJSON_AddBoolToObject(r, "system_prompt_in_prompt", a.system_in_prompt);
		ep_role_agent_release(&a);
	}
	return 0;
}

/* "audit": null, or what review.md's audit: resolved to. */
static void add_audit(cJSON *o, const struct fg_audit_config *a)
{
	cJSON *v;

	if (!a->on) {
		cJSON_AddNullToObject(o, "audit");
		return;
	}
	v = fg_json_add_object(o, "audit");
	fg_json_add_str_or_null(v, "instructions_file", a->instructions_file);
	cJSON_AddStringToObject(v, "instructions", a->instructions);
	cJSON_AddNumberToObject(v, "sample", a->sample);
	cJSON_AddBoolToObject(v, "blocks", a->blocks);
}

/* "agent_env": review.md's names, [] without any. */
static void add_agent_env(cJSON *o, const struct fg_review_config *c)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "agent_env");

	for (size_t i = 0; i < c->nagent_env; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(c->agent_env[i]));
}

/* "environment": {"worker", "reviewer", "check"}: the names (and NAME*
 * patterns) each role's environment may hold (agentenv.h), never a value.
 * cfg (may be NULL) adds its agent_env. 0 or FG_EXIT_USAGE. */
static int add_environment(cJSON *o, const struct fg_review_config *cfg)
{
	static const char *const roles[] = { "worker", "reviewer", "check" };
	static const enum ep_agentenv_kind kinds[] = { EP_AGENTENV_WORKER, EP_AGENTENV_REVIEWER, EP_AGENTENV_CHECK };
	cJSON *env = cJSON_AddObjectToObject(o, "environment");
	struct fg_strvec extra, names;
	struct ep_role_agent a;
	char err[256];

	fg_strvec_init(&extra);
	if (ep_agentenv_extra(cfg, &extra, err, sizeof(err)) < 0) {
		ep_log(FG_MSG_INFO, "config: %s", err);
		fg_strvec_release(&extra);
		return FG_EXIT_USAGE;
	}
	for (size_t i = 0; i < ARRAY_SIZE(roles); i++) {
		cJSON *arr = cJSON_AddArrayToObject(env, roles[i]);

		ep_role_agent_init(&a);
		if (i < 2 && ep_role_agent_load(&a, roles[i], err, sizeof(err)) < 0)
			ep_role_agent_init(&a);
		fg_strvec_init(&names);
		ep_agentenv_names(kinds[i], a.preset, &extra, &names);
		for (size_t k = 0; k < names.n; k++)
			cJSON_AddItemToArray(arr, cJSON_CreateString(names.v[k]));
		fg_strvec_release(&names);
		ep_role_agent_release(&a);
	}
	fg_strvec_release(&extra);
	return 0;
}

static const char CONFIG_ABOUT[] =
	"Prints the resolved configuration as JSON: for a review.md FILE its {\"max_retries\",\n"
	"\"max_cost_usd\" (null: no budget), \"stop_when_stalled\", \"instructions\",\n"
	"\"require_evidence\", \"checks\" ([{\"name\", \"run\", \"timeout_seconds\"}]),\n"
	"\"reviewers\", \"rereview\", \"audit\" (null: none; {\"instructions_file\", \"instructions\",\n"
	"\"sample\", \"blocks\"}), \"warnings\"}; always \"agents\":\n"
	"{\"worker\", \"reviewer\"} with each role's \"command\", \"output\" format, \"preset\" and\n"
	"\"system_prompt_in_prompt\"; always \"environment\": {\"worker\", \"reviewer\", \"check\"}\n"
	"with the names (NAME* a pattern) of the variables each role's environment may hold,\n"
	"never a value (FILE's \"agent_env\" and FORGE_AGENT_ENV add names). Honours\n"
	"AUTO_REVIEW_MAX_RETRIES, AUTO_REVIEW_MAX_COST_USD, AUTO_REVIEW_STOP_WHEN_STALLED,\n"
	"FORGE_WORKER_CMD, FORGE_REVIEWER_CMD, FORGE_WORKER_OUTPUT, FORGE_REVIEWER_OUTPUT,\n"
	"FORGE_WORKER_AGENT, FORGE_REVIEWER_AGENT and FORGE_AGENT_ENV. Exit 2 on an\n"
	"unreadable FILE or an invalid agent setting.";

int ep_cmd_config(int argc, char **argv)
{
	const char *file[1] = { NULL };
	struct fg_review_config c;
	struct fg_review_env env;
	cJSON *o;
	int n, rc = positionals(argc, argv, "forge-entrypoint config [FILE]", CONFIG_ABOUT, file, 1, &n);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (n == 0) {
		o = cJSON_CreateObject();
		rc = add_agents(o);
		if (!rc)
			rc = add_environment(o, NULL);
		if (!rc)
			print_json(o);
		cJSON_Delete(o);
		return rc;
	}
	fg_review_env_from_environ(&env);
	fg_review_config_init(&c);
	if (fg_review_config_load(&c, file[0], &env) == -ENOENT) {
		ep_log(FG_MSG_INFO, "config: cannot read '%s': %s", file[0], strerror(ENOENT));
		fg_review_config_release(&c);
		return FG_EXIT_USAGE;
	}
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "max_retries", c.max_retries);
	if (c.max_cost_usd >= 0)
		cJSON_AddNumberToObject(o, "max_cost_usd", c.max_cost_usd);
	else
		cJSON_AddNullToObject(o, "max_cost_usd");
	cJSON_AddBoolToObject(o, "stop_when_stalled", c.stop_when_stalled);
	cJSON_AddStringToObject(o, "instructions", c.instructions);
	cJSON_AddBoolToObject(o, "require_evidence", c.require_evidence);
	fg_json_add_objects(o, "checks", c.checks, c.nchecks, sizeof(c.checks[0]), check_json);
	fg_json_add_objects(o, "reviewers", c.reviewers, c.nreviewers, sizeof(c.reviewers[0]),
			    reviewer_json);
	cJSON_AddStringToObject(o, "rereview", fg_rereview_name(c.rereview));
	add_audit(o, &c.audit);
	add_warnings(o, &c.diags);
	add_agent_env(o, &c);
	rc = add_agents(o);
	if (!rc)
		rc = add_environment(o, &c);
	if (!rc)
		print_json(o);
	cJSON_Delete(o);
	fg_review_config_release(&c);
	return rc;
}

/* Reads path ("-" or NULL: stdin) into the bounded capture. 0 or -errno. */
int ep_read_input(const char *path, void (*feed)(void *ctx, const void *p, size_t n), void *ctx)
{
	bool is_stdin = !path || !strcmp(path, "-");
	int fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	char buf[65536];
	struct stat st;
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		rc = -EISDIR;
	while (!rc) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : 0;
			break;
		}
		feed(ctx, buf, (size_t)n);
	}
	if (!is_stdin)
		close(fd);
	return rc;
}

static void feed_capture(void *ctx, const void *p, size_t n)
{
	ep_capture_add(ctx, p, n);
}

static void print_verdict(const struct fg_judgement *v)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "verdict", fg_verdict_kind_name(v->verdict));
	cJSON_AddStringToObject(o, "feedback", v->feedback);
	cJSON_AddStringToObject(o, "format", fg_verdict_format_name(v->format));
	if (v->has_findings)
		cJSON_AddItemToObject(o, "findings", fg_findings_to_json(v->findings, v->nfindings));
	fg_json_add_true_if(o, "advice_only", v->advice_only);
	fg_evidence_add_verified(o, &v->verified);
	print_json(o);
	cJSON_Delete(o);
}

int ep_cmd_verdict(int argc, char **argv)
{
	const char *file[1] = { NULL };
	struct ep_capture cap;
	struct fg_judgement v;
	struct fg_buf text;
	int n, rc = positionals(argc, argv, "forge-entrypoint verdict [FILE|-]",
				"Reads a reviewer's output (a file, or standard input) and prints its "
				"verdict as JSON:\n{\"verdict\", \"feedback\", \"format\"} plus "
				"\"findings\" when structured findings were given.", file, 1, &n);

	if (rc)
		return rc < 0 ? 0 : rc;
	ep_capture_init(&cap, EP_CAPTURE_HEAD_MAX, EP_CAPTURE_TAIL_MAX);
	rc = ep_read_input(file[0], feed_capture, &cap);
	if (rc < 0) {
		ep_log(FG_MSG_INFO, "verdict: cannot read '%s': %s", file[0] ? file[0] : "-", strerror(-rc));
		ep_capture_release(&cap);
		return FG_EXIT_USAGE;
	}
	fg_buf_init(&text, EP_CAPTURE_HEAD_MAX + EP_CAPTURE_TAIL_MAX + 256);
	ep_capture_text(&cap, &text);
	ep_capture_release(&cap);
	fg_judgement_init(&v);
	fg_verdict_parse(&v, fg_buf_str(&text), text.len);
	print_verdict(&v);
	fg_judgement_reset(&v);
	fg_buf_release(&text);
	return 0;
}

/* A name meant as review.md that the resolver never reads: another case or
 * a near spelling ("Review.md", "reviews.md", "review.markdown"). */
static int misnamed_review(const char *name)
{
	static const char *const near[] = { "review.md", "reviews.md", "review.markdown", "review.txt" };

	return strcmp(name, "review.md") && FG_NAME_INDEX(near, name, FG_NAME_ANYCASE) >= 0;
}

/* Appends every file named review.md under dir (not following symlinks) to
 * found, and every misnamed one to misnamed. */
static void walk(const char *dir, int depth, struct fg_strvec *found, struct fg_strvec *misnamed)
{
	struct fg_dir it;
	const char *name;

	if (fg_dir_open(&it, AT_FDCWD, dir, 0))
		return;
	while ((name = fg_dir_next(&it)) != NULL) {
		struct stat st;
		char *p = fg_path_join(dir, name);

		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && depth < LINT_MAX_DEPTH)
			walk(p, depth + 1, found, misnamed);
		else if (!strcmp(name, "review.md"))
			fg_strvec_push(found, p);
		else if (misnamed_review(name))
			fg_strvec_push(misnamed, p);
		free(p);
	}
	fg_dir_close(&it);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t lint_file(const char *path)
{
	struct fg_diags d;
	size_t errors;

	fg_diags_init(&d);
	errors = fg_review_lint_file(path, &d);
	for (size_t i = 0; i < d.n; i++)
		printf("%s:%d: %s: %s\n", path, d.v[i].line > 0 ? d.v[i].line : 1,
		       d.v[i].level == FG_DIAG_ERROR ? "error" : "warning", d.v[i].msg);
	fg_diags_release(&d);
	return errors;
}

/* 1 when name is a directory the lookup reads: default, or a project key
 * as fg_ticket_project() makes one ("proj" for PROJ-1). */
static int lookup_dir(const char *name)
{
	char key[256], project[256];

	if (!strcmp(name, "default"))
		return 1;
	if ((size_t)snprintf(key, sizeof(key), "%s-1", name) >= sizeof(key))
		return 0;
	return fg_ticket_project(key, project, sizeof(project)) == 0 && !strcmp(project, name);
}

/*
 * In a skills root (a directory holding default/), the lookup reads only
 * ROOT/default/SKILL/review.md and ROOT/PROJECT/SKILL/review.md (resolve.h):
 * a review.md anywhere else (ROOT/SKILL/review.md, no project directory; a
 * directory level too many; "Proj/") is never found, so its skill is not
 * reviewed. An error naming the path it should have. Returns 1 for an error.
 */
static size_t check_reachable(const char *root, const char *file)
{
	const char *rel = file + strlen(root), *slash, *parent, *dir = "default";
	char first[256];
	size_t n;

	while (*rel == '/')
		rel++;
	slash = strchr(rel, '/');
	n = slash ? (size_t)(slash - rel) : 0;
	if (slash && n < sizeof(first)) {
		memcpy(first, rel, n);
		first[n] = '\0';
		/* ROOT/DIR/SKILL/review.md with a directory the lookup reads. */
		if (lookup_dir(first) && strchr(slash + 1, '/') && !strchr(strchr(slash + 1, '/') + 1, '/'))
			return 0;
		/* "Proj/": the project directory is lower case. */
		for (size_t i = 0; i < n; i++)
			first[i] = (char)(first[i] >= 'A' && first[i] <= 'Z' ? first[i] - 'A' + 'a' : first[i]);
		if (lookup_dir(first) && strchr(slash + 1, '/') && !strchr(strchr(slash + 1, '/') + 1, '/'))
			dir = first;
	}
	parent = file + strlen(file) - strlen("/review.md");
	while (parent > file && parent[-1] != '/')
		parent--;
	printf("%s:1: error: the lookup never finds this review.md (it reads DIR/default/SKILL/review.md "
	       "and DIR/PROJECT/SKILL/review.md): it should be '%s/%s/%.*s/review.md'\n", file, root, dir,
	       (int)(file + strlen(file) - strlen("/review.md") - parent), parent);
	return 1;
}

/* 1 when dir holds a default/ directory: it is a skills root. */
static int skills_root(const char *dir)
{
	char *p = fg_path_join(dir, "default");
	struct stat st;
	int yes = lstat(p, &st) == 0 && S_ISDIR(st.st_mode);

	free(p);
	return yes;
}

/* 1 when file is DIR/SKILL/review.md directly below dir. */
static int skill_below(const char *dir, const char *file)
{
	const char *rel = file + strlen(dir), *slash;

	while (*rel == '/')
		rel++;
	slash = strchr(rel, '/');
	return slash && slash > rel && !strcmp(slash, "/review.md");
}

/*
 * 1 when dir is to be linted as a skills root: it holds default/, or it
 * holds a DIR/SKILL/review.md and is no directory the lookup reads itself
 * (default/, or a project's directory beside one): the first mistake of a
 * new skills directory, whose SKILL/review.md the lookup never reads.
 */
static int linted_as_root(const char *dir, const struct fg_strvec *found)
{
	char *parent = fg_path_join(dir, "..");
	const char *end = dir + strlen(dir), *base;
	int inside;

	if (skills_root(dir)) {
		free(parent);
		return 1;
	}
	while (end > dir && end[-1] == '/')
		end--;
	for (base = end; base > dir && base[-1] != '/'; base--)
		;
	inside = ((size_t)(end - base) == strlen("default") && !memcmp(base, "default", strlen("default"))) ||
		 skills_root(parent);
	free(parent);
	for (size_t i = 0; !inside && i < found->n; i++)
		if (skill_below(dir, found->v[i]))
			return 1;
	return 0;
}

static size_t lint_path(const char *path)
{
	int root;

	struct fg_strvec found, misnamed;
	struct stat st;
	size_t errors = 0;

	if (stat(path, &st) < 0) {
		printf("%s:1: error: cannot access: %s\n", path, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode))
		return lint_file(path);
	fg_strvec_init(&found);
	fg_strvec_init(&misnamed);
	walk(path, 0, &found, &misnamed);
	if (!found.n)
		printf("%s:1: warning: no review.md found in this directory\n", path);
	if (found.n)
		qsort(found.v, found.n, sizeof(*found.v), cmp_str);
	if (misnamed.n)
		qsort(misnamed.v, misnamed.n, sizeof(*misnamed.v), cmp_str);
	root = linted_as_root(path, &found);
	for (size_t i = 0; i < found.n; i++) {
		errors += lint_file(found.v[i]);
		if (root)
			errors += check_reachable(path, found.v[i]);
	}
	/* An error: the skill it sits beside is silently never reviewed. */
	for (size_t i = 0; i < misnamed.n; i++, errors++)
		printf("%s:1: error: a review file must be named exactly 'review.md': this one is never "
		       "read, so its skill is not reviewed\n", misnamed.v[i]);
	fg_strvec_release(&misnamed);
	fg_strvec_release(&found);
	return errors;
}

int ep_cmd_lint(int argc, char **argv)
{
	const char **paths = fg_xcalloc((size_t)argc + 1, sizeof(*paths));
	size_t errors = 0;
	int n, rc = positionals(argc, argv, "forge-entrypoint lint PATH...",
				"Checks review.md files, and directories of skills (searched recursively "
				"for review.md),\nagainst the schema. One line per problem: "
				"PATH:LINE: error|warning: message.\nExit 1 if any error, else 0.",
				paths, argc, &n);

	if (!rc && n == 0)
		rc = ep_cmd_usage("lint", "expected at least one PATH");
	for (int i = 0; !rc && i < n; i++)
		errors += lint_path(paths[i]);
	free(paths);
	fflush(stdout);
	if (rc)
		return rc < 0 ? 0 : rc;
	return errors ? FG_EXIT_FAILED : FG_EXIT_OK;
}
