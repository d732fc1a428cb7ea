/*
 * fgrun.c - the scripted-entrypoint fixture of the runner tests (see fgrun.h).
 */
#include "fgrun.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"
#include "forge/util.h"

/* Creates the temp tree and the script. */
void fgr_init(struct fgr *r, const char *body)
{
	fgw_init(&r->w);
	free(fgw_fake_entrypoint(&r->w, body));
	fgw_write(&r->w, "ws/README", "workspace\n");
}

/* Runs forge-runner on the prepared tree with extra args (NULL-terminated). */
void fgr_exec(struct fgr *r, const char *const *extra, const char *const *env)
{
	char *script = fgt_fmt("%s/ep.sh", r->w.root), *log;
	const char *argv[40];
	const char *envv[8];
	size_t n = 0, ne = 0;
	char *logenv = fgt_fmt("LOG=%s", r->w.log);

	argv[n++] = FG_RUNNER_BIN;
	argv[n++] = "run";
	argv[n++] = "--workspace"; argv[n++] = r->w.ws;
	argv[n++] = "--step"; argv[n++] = "impl";
	argv[n++] = "--skill"; argv[n++] = "sk";
	argv[n++] = "--entrypoint"; argv[n++] = script;
	argv[n++] = "--result"; argv[n++] = r->w.result;
	argv[n++] = "--log-format"; argv[n++] = "json";
	argv[n++] = "--log-file"; argv[n++] = r->w.log;
	for (size_t i = 0; extra && extra[i]; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	envv[ne++] = logenv;
	envv[ne++] = "FORGE_LOG_LEVEL";
	for (size_t i = 0; env && env[i]; i++)
		envv[ne++] = env[i];
	envv[ne] = NULL;
	cr_assert_eq(fgt_run(&r->p, argv, envv, NULL, NULL, 40), 0);
	cr_assert_eq(r->p.timed_out, 0, "runner hung; stderr: %s", r->p.err);
	log = fgt_read(r->w.log, NULL);
	cr_assert_not_null(log, "no log file");
	r->events = fge_json_lines(log);
	free(log);
	r->res = fge_json_file(r->w.result, r->p.err);
	free(script);
	free(logenv);
}

void fgr_run_script(struct fgr *r, const char *body, const char *const *extra, const char *const *env)
{
	fgr_init(r, body);
	fgr_exec(r, extra, env);
}

const cJSON *fgr_cycles(const struct fgr *r)
{
	const cJSON *v = cJSON_GetObjectItem(r->res, "review_cycles");

	cr_assert(cJSON_IsArray(v));
	return v;
}

void fgr_release(struct fgr *r)
{
	cJSON_Delete(r->events);
	cJSON_Delete(r->res);
	fgt_proc_release(&r->p);
	fgw_release(&r->w);
}
