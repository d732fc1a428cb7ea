/*
 * entrypoint_e2e.h - helpers for the tests that run the real forge-entrypoint
 * (FG_ENTRYPOINT_BIN) in a temporary workspace with scripted sh agents.
 *
 * Layout under a fresh temp dir R: R/ws (the workspace), R/skills, R/task.json,
 * agents written as R/NAME (executable sh scripts). Step "impl", skill "impl".
 * Included by one test file each (static functions).
 */
#ifndef ENTRYPOINT_E2E_H
#define ENTRYPOINT_E2E_H

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"

struct ep_ws {
	char *root;
	char *ws;
	char *skills;
	char *step_dir;
};

static inline void ws_setup(struct ep_ws *w)
{
	w->root = fgt_tmpdir();
	w->ws = fgt_fmt("%s/ws", w->root);
	w->skills = fgt_fmt("%s/skills", w->root);
	w->step_dir = fgt_fmt("%s/.forge/impl", w->ws);
	char *keep1 = fgt_fmt("%s/.keep", w->ws);
	char *keep2 = fgt_fmt("%s/.keep", w->skills);
	char *task = fgt_fmt("%s/task.json", w->root);

	fgt_write(keep1, "");
	fgt_write(keep2, "");
	fgt_write(task,
		  "{\"task_key\": \"ABC-12\", \"summary\": \"Add a greeting\", "
		  "\"description\": \"Write hello to greeting.txt\", \"skill_name\": \"impl\", "
		  "\"step_name\": \"impl\", \"previous_task_keys\": [\"ABC-11\"]}");
	free(keep1);
	free(keep2);
	free(task);
}

static inline void ws_teardown(struct ep_ws *w)
{
	fgt_rm_rf(w->root);
	free(w->root);
	free(w->ws);
	free(w->skills);
	free(w->step_dir);
}

/* skills/{project}/impl/review.md */
static inline void ws_review_md(struct ep_ws *w, const char *project, const char *content)
{
	char *p = fgt_fmt("%s/%s/impl/review.md", w->skills, project);

	fgt_write(p, content);
	free(p);
}

/* R/name: "#!/bin/sh" + body, executable. Returns the owned path. */
static inline char *ws_script(struct ep_ws *w, const char *name, const char *body)
{
	return fge_script(w->root, name, "#!/bin/sh\n", body);
}

static inline int overridden(const char *entry, const char *const *extra)
{
	size_t n = strcspn(entry, "=");

	for (size_t i = 0; extra && extra[i]; i++)
		if (strcspn(extra[i], "=") == n && !strncmp(entry, extra[i], n))
			return 1;
	return 0;
}

/*
 * Runs forge-entrypoint run on the workspace. worker/reviewer are command
 * strings (NULL: unset); extra is a NULL-terminated env list (may be NULL).
 */
static inline void ws_run(struct ep_ws *w, struct fgt_proc *p, const char *worker, const char *reviewer,
		   const char *const *extra)
{
	const char *env[48];
	size_t n = 0;
	char *wenv = worker ? fgt_fmt("FORGE_WORKER_CMD=%s", worker) : fgt_fmt("FORGE_WORKER_CMD");
	char *renv = reviewer ? fgt_fmt("FORGE_REVIEWER_CMD=%s", reviewer) : fgt_fmt("FORGE_REVIEWER_CMD");
	char *task = fgt_fmt("%s/task.json", w->root);
	const char *argv[] = { FG_ENTRYPOINT_BIN, "run", "--workspace", w->ws, "--skills-dir", w->skills,
			       "--step", "impl", "--task-file", task, NULL };
	static const char *const base[] = {
		"FORGE_AGENT_TIMEOUT=30", "FORGE_AGENT_IDLE_TIMEOUT=30", "FORGE_AGENT_KILL_GRACE=1",
		"FORGE_RUN_ID=test-run", "AUTO_REVIEW_MAX_RETRIES", "AUTO_REVIEW_FAIL_ON_EXHAUSTION",
		"AUTO_REVIEW_STOP_WHEN_STALLED", "FORGE_TASK_FILE", "FORGE_WORKSPACE", "FORGE_SKILLS_DIR",
		"FORGE_STEP_NAME", "FORGE_SKILL_NAME", "FORGE_TASK_KEY", NULL,
	};

	/* fgt_run keeps duplicates and getenv() takes the first: extra goes first
	 * and replaces the base entries of the same name. */
	for (size_t i = 0; extra && extra[i] && n < 40; i++)
		env[n++] = extra[i];
	for (size_t i = 0; base[i]; i++)
		if (!overridden(base[i], extra))
			env[n++] = base[i];
	if (!overridden("FORGE_WORKER_CMD", extra))
		env[n++] = wenv;
	if (!overridden("FORGE_REVIEWER_CMD", extra))
		env[n++] = renv;
	env[n] = NULL;
	cr_assert_eq(fgt_run(p, argv, env, w->root, NULL, 120), 0, "cannot start forge-entrypoint");
	cr_assert(!p->timed_out, "forge-entrypoint hung; stderr:\n%s", p->err);
	free(wenv);
	free(renv);
	free(task);
}

/* ws_run() with a signaller (fge2e.h) for the agents: SIGDIR=root/sig,
 * their scripts hold FGE_OUTSIDE_KILL and call `outside_kill SIG PID`.
 * extra (may be NULL) must leave room for one more entry. */
static inline void ws_run_signalled(struct ep_ws *w, struct fgt_proc *p, const char *worker,
				    const char *reviewer, const char *const *extra)
{
	char *dir = fgt_fmt("%s/sig", w->root), *keep = fgt_fmt("%s/.keep", dir);
	char *env0 = fgt_fmt("SIGDIR=%s", dir);
	const char *env[40];
	size_t n = 0;
	pid_t sig;

	fgt_write(keep, "");
	env[n++] = env0;
	for (size_t i = 0; extra && extra[i] && n < 39; i++)
		env[n++] = extra[i];
	env[n] = NULL;
	sig = fge_signaller_start(dir);
	ws_run(w, p, worker, reviewer, env);
	fge_signaller_stop(sig);
	free(env0);
	free(keep);
	free(dir);
}

/* Content of step_dir/name (owned) or NULL. */
static inline char *ws_step_file(struct ep_ws *w, const char *name)
{
	return fge_read_in(w->step_dir, name);
}

/* root/name content (owned) or NULL. */
static inline char *ws_root_file(struct ep_ws *w, const char *name)
{
	return fge_read_in(w->root, name);
}

/* step_dir/name parsed as JSON; fails the test if missing or invalid. */
static inline cJSON *ws_json(struct ep_ws *w, const char *name)
{
	char *p = fgt_fmt("%s/%s", w->step_dir, name);
	cJSON *j = fge_json_file(p, NULL);

	free(p);
	return j;
}

static inline int jtrue(const cJSON *o, const char *k)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static inline int ws_step_exists(struct ep_ws *w, const char *name)
{
	return fge_exists_in(w->step_dir, name);
}

/* 1 if R/name (in_ws: R/ws/name) exists. */
static inline int ws_has(struct ep_ws *w, int in_ws, const char *name)
{
	return fge_exists_in(in_ws ? w->ws : w->root, name);
}

/* Number of live or zombie processes whose process group is pgid. */
static inline int count_group(pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	cr_assert(d);
	for (;;) {
		char *path, *s, *rp;
		int pgrp = 0;

		e = readdir(d);
		if (!e)
			break;
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		path = fgt_fmt("/proc/%s/stat", e->d_name);
		s = fgt_read(path, NULL);
		rp = s ? strrchr(s, ')') : NULL;
		/* after ") ": state ppid pgrp */
		if (rp && sscanf(rp + 2, "%*c %*d %d", &pgrp) == 1 && pgrp == pgid)
			n++;
		free(s);
		free(path);
	}
	closedir(d);
	return n;
}

#endif
