/*
 * task.c - task file, options and environment (see task.h).
 */
#include "task.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/json.h"
#include "forge/cmdline.h"
#include "forge/cycle.h"
#include "forge/fsutil.h"
#include "forge/names.h"
#include "forge/num.h"
#include "forge/util.h"
#include "preset.h"

void ep_task_init(struct ep_task *t)
{
	memset(t, 0, sizeof(*t));
	fg_strvec_init(&t->previous);
}

void ep_task_release(struct ep_task *t)
{
	char **owned[] = { &t->workspace, &t->skills_dir, &t->step, &t->skill, &t->task_key,
			   &t->summary, &t->description, &t->worker_cmd, &t->reviewer_cmd,
			   &t->run_id, &t->cycle_dir };

	for (size_t i = 0; i < ARRAY_SIZE(owned); i++) {
		free(*owned[i]);
		*owned[i] = NULL;
	}
	fg_strvec_release(&t->previous);
}

/* getenv, with an empty value counting as unset. */
static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* Sets *dst to a copy of the first non-NULL of opt, env(name), unless *dst
 * is already set and neither is given. */
static void pick(char **dst, const char *opt, const char *name)
{
	const char *v = opt ? opt : env(name);

	if (!v)
		return;
	free(*dst);
	*dst = fg_xstrdup(v);
}

/* An optional string of the task file into *dst, unless already set. */
static int json_str(const cJSON *root, const char *field, char **dst, char *err, size_t errlen)
{
	const char *v;
	char why[128];

	if (fg_json_opt_str(root, field, &v, why, sizeof(why))) {
		snprintf(err, errlen, "task file: %s", why);
		return -EINVAL;
	}
	if (v && !*dst)
		*dst = fg_xstrdup(v);
	return 0;
}

static int json_keys(const cJSON *root, struct fg_strvec *out, char *err, size_t errlen)
{
	const cJSON *arr = fg_json_get(root, "previous_task_keys");
	const cJSON *k;

	if (!arr || cJSON_IsNull(arr))
		return 0;
	if (!cJSON_IsArray(arr)) {
		snprintf(err, errlen, "task file: field 'previous_task_keys' must be an array of strings");
		return -EINVAL;
	}
	cJSON_ArrayForEach(k, arr) {
		if (!cJSON_IsString(k)) {
			snprintf(err, errlen, "task file: 'previous_task_keys' must hold only strings");
			return -EINVAL;
		}
	}
	if (out->n)
		return 0;
	cJSON_ArrayForEach(k, arr)
		fg_strvec_push(out, k->valuestring);
	return 0;
}

/* True when a JSON string holds the escape \u0000 (a backslash preceded by
 * an even number of backslashes, then u0000). cJSON decodes it into a NUL
 * that silently truncates the C string, so "a\u0000/../x" would read as the
 * valid name "a": such a task file is refused as a whole instead. */
static int has_nul_escape(const char *data, size_t len)
{
	size_t run = 0;

	for (size_t i = 0; i < len; i++) {
		if (data[i] != '\\') {
			run = 0;
			continue;
		}
		run++;
		if (run % 2 == 1 && len - i >= 6 && (data[i + 1] == 'u' || data[i + 1] == 'U') &&
		    !memcmp(data + i + 2, "0000", 4))
			return 1;
	}
	return 0;
}

int ep_task_parse_json(struct ep_task *t, const char *data, size_t len, char *err, size_t errlen)
{
	cJSON *root;
	int rc = 0;

	if (memchr(data, '\0', len) || has_nul_escape(data, len)) {
		snprintf(err, errlen, "task file holds a NUL character (\\u0000)");
		return -EINVAL;
	}
	root = cJSON_ParseWithLength(data, len);
	if (!root || !cJSON_IsObject(root)) {
		snprintf(err, errlen, "task file is not a JSON object");
		cJSON_Delete(root);
		return -EINVAL;
	}
	if (!rc)
		rc = json_str(root, "task_key", &t->task_key, err, errlen);
	if (!rc)
		rc = json_str(root, "summary", &t->summary, err, errlen);
	if (!rc)
		rc = json_str(root, "description", &t->description, err, errlen);
	if (!rc)
		rc = json_str(root, "skill_name", &t->skill, err, errlen);
	if (!rc)
		rc = json_str(root, "step_name", &t->step, err, errlen);
	if (!rc)
		rc = json_keys(root, &t->previous, err, errlen);
	cJSON_Delete(root);
	return rc;
}

static int load_file(struct ep_task *t, const char *path, char *err, size_t errlen)
{
	struct fg_buf b;
	int rc;

	fg_buf_init(&b, EP_TASK_FILE_MAX);
	/* Symlinks followed: the task file comes from the orchestrator, often
	 * through a mounted volume. */
	rc = fg_read_file_at(AT_FDCWD, path, EP_TASK_FILE_MAX, FG_READ_FOLLOW, &b, NULL);
	if (rc < 0)
		snprintf(err, errlen, "cannot read task file '%s': %s", path,
			 rc == -EINVAL || rc == -EISDIR ? "not a regular file" :
			 rc == -EFBIG ? "larger than 1 MiB" : strerror(-rc));
	else
		rc = ep_task_parse_json(t, fg_buf_str(&b), b.len, err, errlen);
	fg_buf_release(&b);
	return rc;
}

int ep_env_seconds(const char *name, double def, double min, double max, double *out,
		   char *err, size_t errlen)
{
	const char *v = env(name);

	if (!v) {
		*out = def;
		return 0;
	}
	if (fg_parse_double(v, min, max, out) < 0) {
		snprintf(err, errlen, "invalid %s '%.40s': expected a number of seconds from %g to %g",
			 name, v, min, max);
		return -EINVAL;
	}
	return 0;
}

static void defaults(struct ep_task *t)
{
	char **slot[] = { &t->workspace, &t->skills_dir, &t->task_key, &t->summary,
			  &t->description, &t->run_id };
	const char *def[] = { "/workspace", "/skills", "", "", "", "" };

	for (size_t i = 0; i < ARRAY_SIZE(slot); i++)
		if (!*slot[i])
			*slot[i] = fg_xstrdup(def[i]);
	if (t->step && !t->skill) {
		/* implement_task -> implement-task: the peer's naming convention. */
		t->skill = fg_xstrdup(t->step);
		for (char *c = t->skill; *c; c++)
			if (*c == '_')
				*c = '-';
		t->skill_from_step = true;
	}
}

static int check_names(const struct ep_task *t, char *err, size_t errlen)
{
	if (!t->step) {
		snprintf(err, errlen, "no step name: give --step, FORGE_STEP_NAME or step_name in the task file");
		return -EINVAL;
	}
	if (fg_name_check(FG_NAME_STEP, t->step, strlen(t->step), err, errlen) < 0 ||
	    fg_name_check(FG_NAME_SKILL, t->skill, strlen(t->skill), err, errlen) < 0)
		return -EINVAL;
	if (*t->task_key &&
	    fg_name_check(FG_NAME_TASK_KEY, t->task_key, strlen(t->task_key), err, errlen) < 0)
		return -EINVAL;
	return 0;
}

static int check_cmd(const char *var, const char *cmd, char *err, size_t errlen)
{
	struct fg_strvec v;
	char why[128];
	int rc;

	fg_strvec_init(&v);
	rc = fg_cmdline_split(cmd, &v, why, sizeof(why));
	fg_strvec_release(&v);
	if (rc < 0)
		snprintf(err, errlen, "invalid %s: %s", var, why);
	return rc;
}

/* Commands and output formats of both roles (preset.h). */
static int load_agents(struct ep_task *t, char *err, size_t errlen)
{
	struct ep_role_agent w, r;
	int rc;

	ep_role_agent_init(&w);
	ep_role_agent_init(&r);
	rc = ep_role_agent_load(&w, "worker", err, errlen);
	if (!rc)
		rc = ep_role_agent_load(&r, "reviewer", err, errlen);
	if (!rc) {
		free(t->worker_cmd);
		free(t->reviewer_cmd);
		t->worker_cmd = w.cmd;
		t->reviewer_cmd = r.cmd;
		w.cmd = r.cmd = NULL;
		t->worker_output = w.format;
		t->reviewer_output = r.format;
		t->worker_preset = w.preset;
		t->reviewer_preset = r.preset;
		t->worker_cmd_from_preset = w.cmd_from_preset;
		t->reviewer_cmd_from_preset = r.cmd_from_preset;
		t->reviewer_system_in_prompt = r.system_in_prompt;
	}
	ep_role_agent_release(&w);
	ep_role_agent_release(&r);
	return rc;
}

/* FORGE_CLEAR_STALE, the twin of --clear-stale (the option wins). */
static int clear_stale_env(struct ep_task *t, char *err, size_t errlen)
{
	const char *v = env("FORGE_CLEAR_STALE");
	int b = 0;

	if (t->clear_stale || !v)
		return 0;
	if (fg_parse_bool(v, &b) < 0) {
		snprintf(err, errlen, "invalid FORGE_CLEAR_STALE '%.40s': expected 0 or 1", v);
		return -EINVAL;
	}
	t->clear_stale = b;
	return 0;
}

/* A boolean variable that defaults to on: 0, or -EINVAL with err set. */
static int env_bool(const char *name, bool *out, char *err, size_t errlen)
{
	const char *v = env(name);
	int b = 1;

	if (v && fg_parse_bool(v, &b) < 0) {
		snprintf(err, errlen, "invalid %s '%.40s': expected 0 or 1", name, v);
		return -EINVAL;
	}
	*out = b;
	return 0;
}

/* FORGE_TRACEPARENT: the runner's trace context; unset or empty: none. */
static int trace_env(struct ep_task *t, char *err, size_t errlen)
{
	const char *v = env("FORGE_TRACEPARENT");

	if (!v)
		return 0;
	if (fg_traceparent_parse(v, &t->trace) < 0) {
		snprintf(err, errlen, "invalid FORGE_TRACEPARENT '%.60s': expected a W3C traceparent "
			 "(00-TRACE_ID-SPAN_ID-FLAGS)", v);
		return -EINVAL;
	}
	t->traced = true;
	return 0;
}

/* FORGE_DEADLINE: UTC seconds since the epoch (fractions allowed), after
 * 2001 and before 5138 so that a remaining-seconds value given by mistake
 * is refused, not taken for a deadline long past; unset or empty: none. */
static int deadline_env(struct ep_task *t, char *err, size_t errlen)
{
	const char *v = env("FORGE_DEADLINE");

	if (v && fg_parse_double(v, 1e9, 1e11, &t->deadline_s) < 0) {
		snprintf(err, errlen, "invalid FORGE_DEADLINE '%.40s': expected the run's deadline "
			 "in UTC seconds since the epoch (forge-runner sets it from --timeout)", v);
		return -EINVAL;
	}
	return 0;
}

static int check_env(struct ep_task *t, char *err, size_t errlen)
{
	const char *v = env("AUTO_REVIEW_FAIL_ON_EXHAUSTION");
	int b = 0;

	if (ep_env_seconds("FORGE_AGENT_TIMEOUT", EP_DEFAULT_TIMEOUT, 0.01, 1e7, &t->timeout_s, err, errlen) ||
	    ep_env_seconds("FORGE_AGENT_IDLE_TIMEOUT", EP_DEFAULT_IDLE_TIMEOUT, 0, 1e7,
			   &t->idle_timeout_s, err, errlen) ||
	    ep_env_seconds("FORGE_AGENT_KILL_GRACE", EP_DEFAULT_KILL_GRACE, 0, 60,
			   &t->kill_grace_s, err, errlen) ||
	    ep_env_seconds("FORGE_AGENT_HEARTBEAT", EP_DEFAULT_HEARTBEAT, 0, 1e7, &t->heartbeat_s, err, errlen))
		return -EINVAL;
	if (v && fg_parse_bool(v, &b) < 0) {
		snprintf(err, errlen, "invalid AUTO_REVIEW_FAIL_ON_EXHAUSTION '%.40s': expected 0 or 1", v);
		return -EINVAL;
	}
	t->fail_on_exhaustion = b;
	if (env_bool("AUTO_REVIEW_REASK", &t->reask, err, errlen) ||
	    env_bool("AUTO_REVIEW_ADVICE_APPROVES", &t->advice_approves, err, errlen) ||
	    env_bool("FORGE_CHANGESET", &t->changeset, err, errlen) ||
	    env_bool("FORGE_GIT_EXCLUDE", &t->git_exclude, err, errlen))
		return -EINVAL;
	if (load_agents(t, err, errlen) < 0)
		return -EINVAL;
	if (clear_stale_env(t, err, errlen) < 0)
		return -EINVAL;
	pick(&t->run_id, NULL, "FORGE_RUN_ID");
	if (trace_env(t, err, errlen) < 0 || deadline_env(t, err, errlen) < 0)
		return -EINVAL;
	if (!t->worker_cmd) {
		snprintf(err, errlen, "FORGE_WORKER_CMD is not set (nor FORGE_WORKER_AGENT): no worker agent to run");
		return -EINVAL;
	}
	if (check_cmd("FORGE_WORKER_CMD", t->worker_cmd, err, errlen) ||
	    (t->reviewer_cmd && check_cmd("FORGE_REVIEWER_CMD", t->reviewer_cmd, err, errlen)))
		return -EINVAL;
	return 0;
}

/* Where the cycle files go: FORGE_CYCLE_DIR (default .forge/{step}) with
 * the step, task key and skill just settled. */
static int cycle_dir(struct ep_task *t, char *err, size_t errlen)
{
	const struct fg_cycle_dir_vars v = { t->step, t->task_key, t->skill };

	return fg_cycle_dir(env("FORGE_CYCLE_DIR"), &v, &t->cycle_dir, err, errlen);
}

/* Replaces a relative *path by its absolute form (a missing path is left
 * as it is: the caller reports it with its own words). */
static int absolutise(char **path, char *err, size_t errlen)
{
	char *abs;

	if (!*path || (*path)[0] == '/')
		return 0;
	abs = realpath(*path, NULL);
	if (!abs) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "cannot resolve '%s': %s", *path, strerror(errno));
		return -EINVAL;
	}
	free(*path);
	*path = fg_xstrdup(abs);
	free(abs);
	return 0;
}

int ep_task_load(struct ep_task *t, const struct ep_run_args *a, char *err, size_t errlen)
{
	const char *file = a->task_file ? a->task_file : env("FORGE_TASK_FILE");
	struct stat st;

	pick(&t->workspace, a->workspace, "FORGE_WORKSPACE");
	pick(&t->skills_dir, a->skills_dir, "FORGE_SKILLS_DIR");
	pick(&t->step, a->step, "FORGE_STEP_NAME");
	pick(&t->skill, a->skill, "FORGE_SKILL_NAME");
	pick(&t->task_key, a->task_key, "FORGE_TASK_KEY");
	t->clear_stale = a->clear_stale;
	if (file && load_file(t, file, err, errlen) < 0)
		return -EINVAL;
	defaults(t);
	if (check_names(t, err, errlen) < 0 || cycle_dir(t, err, errlen) < 0)
		return -EINVAL;
	if (stat(t->workspace, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "workspace '%s' is not a directory", t->workspace);
		return -EINVAL;
	}
	/* Agents run inside the workspace, so a relative path handed to them
	 * as FORGE_WORKSPACE or {workspace} would point elsewhere. */
	if (absolutise(&t->workspace, err, errlen) < 0 || absolutise(&t->skills_dir, err, errlen) < 0)
		return -EINVAL;
	return check_env(t, err, errlen);
}
