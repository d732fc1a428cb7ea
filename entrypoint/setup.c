/*
 * setup.c - the cycle directory, stale files and the agents' box before
 * the worker starts (see setup.h).
 */
#include "setup.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "frames.h"
#include "sandbox.h"
#include "forge/cmdline.h"
#include "forge/exit.h"
#include "forge/fsutil.h"
#include "forge/num.h"
#include "forge/stepdir.h"
#include "forge/util.h"

/* Creates the cycle directory rel below the workspace one component at a
 * time, never following a symlink: a FORGE_CYCLE_DIR (or a .forge) that
 * leads out of the workspace through a link is refused. 0 or -errno. */
static int create_step_dir(const char *workspace, const char *rel, char *err, size_t errlen)
{
	int wsfd, fd;

	wsfd = fg_open_dir(AT_FDCWD, workspace, 0);
	if (wsfd < 0)
		return wsfd;
	fd = fg_open_beneath(wsfd, rel, FG_BENEATH_CREATE, err, errlen);
	close(wsfd);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* A directory, FIFO or device planted under a name a run writes. */
static void say_special(const struct fg_stale_special *sp, void *data)
{
	(void)data;
	if (sp->error)
		ep_log(FG_MSG_WARN, "cannot clear the %s '%s': %s", sp->type, sp->name, strerror(-sp->error));
	else
		ep_log(FG_MSG_WARN, "%s '%s' under a name a run writes: %s%s%s", sp->type, sp->name,
			 sp->action, sp->to ? " to " : "", sp->to ? sp->to : "");
}

/* --clear-stale: what the runner does on the host when it can see the
 * workspace. A failure is a warning: the run id still tells this run's
 * cycles from an earlier one's. */
static void clear_stale(const char *step_dir)
{
	long removed = 0;
	int dfd = fg_open_dir(AT_FDCWD, step_dir, FG_DIR_NOFOLLOW);
	int rc = dfd < 0 ? dfd : fg_step_clear_stale(dfd, &removed, say_special, NULL);

	if (dfd >= 0)
		close(dfd);
	if (rc < 0)
		ep_log(FG_MSG_WARN, "cannot clear stale files in '%s': %s", step_dir, strerror(-rc));
	else if (removed > 0)
		ep_log(FG_MSG_INFO, "cleared %ld stale cycle file(s) in '%s'", removed, step_dir);
}

/* FORGE_REQUIRE_ISOLATION: 1 on, 0 off, -1 invalid (said). */
static int isolation_required(void)
{
	const char *v = getenv("FORGE_REQUIRE_ISOLATION");
	int on = 0;

	if (v && *v && fg_parse_bool(v, &on)) {
		ep_log(FG_MSG_ERROR, "invalid FORGE_REQUIRE_ISOLATION '%s' (1 or 0)", v);
		return -1;
	}
	return on;
}

/* What the operator named may be read and run by the agents wherever it
 * is (sandbox.h, step 1b): the skills directory (checks run its scripts),
 * and the directory of every absolute path an agent command names (its
 * program, or the script an interpreter is given, with its siblings). */
static void grant_named(const struct ep_task *t)
{
	const char *cmds[] = { t->worker_cmd, t->reviewer_cmd };
	char err[128];

	ep_sandbox_grant_read(t->skills_dir);
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++) {
		struct fg_strvec argv;

		fg_strvec_init(&argv);
		if (cmds[i] && fg_cmdline_split(cmds[i], &argv, err, sizeof(err)) == 0) {
			for (size_t k = 0; k < argv.n; k++) {
				char *slash = argv.v[k][0] == '/' ? strrchr(argv.v[k], '/') : NULL;

				if (slash && slash > argv.v[k]) {
					*slash = '\0';
					ep_sandbox_grant_read(argv.v[k]);
				}
			}
		}
		fg_strvec_release(&argv);
	}
}

int ep_setup_step_dir(const struct ep_task *t, char **step_dir)
{
	char err[512] = "";
	int rc;

	*step_dir = fg_path_join(t->workspace, t->cycle_dir);
	rc = create_step_dir(t->workspace, t->cycle_dir, err, sizeof(err));
	if (rc < 0) {
		ep_log(FG_MSG_ERROR, "cannot create '%s': %s", *step_dir, err[0] ? err : strerror(-rc));
		return FG_EXIT_USAGE;
	}
	if (t->clear_stale)
		clear_stale(*step_dir);
	return 0;
}

/* The box is said on one line, and as the event the runner logs as
 * `isolation`. FG_EXIT_USAGE when it is required and there is none. */
int ep_setup_box(const struct ep_task *t, const char *const *hidden, size_t n, struct fg_isolation *iso)
{
	int req = isolation_required();
	cJSON *o, *f;
	char *json;

	if (req < 0 || ep_sandbox_setup(hidden, n, t->workspace, iso) < 0)
		return FG_EXIT_USAGE;
	grant_named(t);
	o = fg_isolation_to_cjson(iso);
	json = cJSON_PrintUnformatted(o);
	ep_log(FG_MSG_INFO, "isolation: %s", json ? json : "{}");
	/* The runner learns it from the sealed event frame, never a line. */
	f = fg_isolation_to_fields(iso);
	ep_frame_event("isolation", f);
	cJSON_Delete(f);
	cJSON_free(json);
	cJSON_Delete(o);
	if (iso->landlock)
		return 0;
	if (req) {
		ep_log(FG_MSG_ERROR, "FORGE_REQUIRE_ISOLATION=1, but the agents would run without a kernel "
		       "sandbox: %s (docs/security.md#the-box)", iso->reason);
		return FG_EXIT_USAGE;
	}
	ep_log(FG_MSG_WARN, "the agents run without a kernel sandbox: %s (docs/security.md#the-box)",
	       iso->reason);
	return 0;
}

