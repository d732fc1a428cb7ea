/*
 * test_podman.c - forge-runner run --engine podman, as root and rootless
 * (FGD_ROOTLESS_USER): the loop, files owned by the user, the engine's own
 * failures (default ulimits, no slirp4netns) named as such, a named volume
 * reported by the stream. Skips without podman, saying why.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fgdocker.h"
#include "fge2e.h"
#include "fgrbox.h"
#include "fgtest.h"
#include "fgws.h"
#include "forge/audit.h"

TestSuite(podman, .timeout = 1700);

/*
 * podman, as root and rootless: the same loop. Podman keeps its own image
 * store (per user when rootless), so the image docker built is moved over
 * (docker save | podman load). The CONTAINERS_CONF the box writes is test
 * setup for this machine, not product behaviour (fgd_podman_conf()).
 */
static void podman_loop(const struct fgd_user *as)
{
	struct fgrb b;

	fgrb_init_as(&b, "podman", as, "---\nmax_retries: 3\n---\nCheck that work.log has two lines.\n");
	if (!as) {
		/* Rootful: a root runner's sandbox runs as the workspace's owner
		 * (never uid 0 without --as-root): the stand-in user's tree. */
		b.uid = b.gid = FGRB_STAND_IN_ID;
		fgw_share(&b.w, b.uid, b.gid);
	}
	fgd_podman_ensure_image(as, b.conf);
	fgrb_agent(&b, "worker.sh", FGRB_WORKER_APPEND);
	fgrb_agent(&b, "reviewer.sh", FGRB_REVIEWER_REJECT_THEN_APPROVE);
	int code = fgrb_wait(&b, fgrb_spawn(&b, NULL));
	char *errtext = fgt_read_or_empty(b.w.stderr_path);
	cr_assert_eq(code, 0, "runner exited %d; stderr:\n%s\nlog:\n%s", code, errtext,
		     fgt_read_or_empty(b.w.log));
	cJSON *res = fgrb_result(&b);
	cr_assert_str_eq(fgrb_jstr(res, "review_state"), "approved");
	cr_assert_str_eq(fgrb_jstr(res, "engine"), "podman");
	cJSON *ev = fgw_log_events(&b.w);
	fgrb_check_cycle_events(ev, &b);
	/* Rootless: --userns=keep-id maps the container's user to the caller. */
	fgrb_assert_files_owned(&b);
	const cJSON *iso = cJSON_GetObjectItemCaseSensitive(res, "isolation");
	cr_assert_str_eq(fgrb_jstr(iso, "mechanism"), "landlock", "podman's box: %s", cJSON_Print(iso));
	free(errtext);
	fgrb_finish(&b, res, ev);
}

/* Rootful podman's tests run as root with podman installed; else skipped. */
static void need_rootful_podman(void)
{
	char *bin = fgd_which("podman");

	if (!bin)
		cr_skip("podman is not installed: the podman engine is not tested here "
			"(scripts/setup.sh --test installs it)");
	free(bin);
	if (geteuid() != 0)
		cr_skip("not root: rootful podman is tested as root (the rootless test covers users)");
	fgd_ensure_image(FGD_IMAGE);
}

Test(podman, podman_as_root_runs_the_loop)
{
	need_rootful_podman();
	podman_loop(NULL);
}

Test(podman, podman_rootless_runs_the_loop_files_owned_by_the_user)
{
	struct fgd_user u;

	fgd_rootless_user(&u);
	fgd_ensure_image(FGD_IMAGE);
	podman_loop(&u);
}

/*
 * Podman's own failures came back as the image's fault (126 "the
 * entrypoint cannot be invoked", 127 "was not found"). Real podman with the
 * setting this machine needs left out of containers.conf: the run is an
 * engine failure (125) with the engine's message and the fix, no agent ran,
 * no container is left.
 */
static void podman_engine_failure(const struct fgd_user *as, const char *conf_text, const char *fix)
{
	struct fgrb b;

	fgrb_init_as(&b, "podman", as, "Check.\n");
	fgd_podman_ensure_image(as, b.conf);
	fgt_write(b.conf, conf_text);
	fgrb_agent(&b, "worker.sh", "#!/bin/sh\necho ran > ran\n");
	fgrb_agent(&b, "reviewer.sh", "#!/bin/sh\necho APPROVED\n");
	int code = fgrb_wait(&b, fgrb_spawn(&b, NULL));
	cr_assert_eq(code, 125, "runner exited %d; stderr:\n%s\nlog:\n%s", code,
		     fgt_read_or_empty(b.w.stderr_path), fgt_read_or_empty(b.w.log));
	cJSON *res = fgrb_result(&b);
	const char *msg = fgrb_jstr(res, "error_message");
	cr_expect_eq(fgrb_jnum(res, "exit_code"), 125);
	cr_expect(strstr(msg, "hint: podman could not start the container (not the image's entrypoint)"),
		  "%s", msg);
	cr_expect(strstr(msg, fix), "'%s' not in %s", fix, msg);
	cr_expect_null(strstr(msg, "entrypoint of image"), "%s", msg);
	cJSON *ev = fgw_log_events(&b.w);
	const cJSON *e = fge_find_cycle_event(ev, "engine_hint", 0);
	cr_assert_not_null(e, "no engine_hint; log:\n%s", fgt_read_or_empty(b.w.log));
	cr_expect(strstr(fgrb_jstr(e, "hint"), fix), "%s", fgrb_jstr(e, "hint"));
	char *ran = fgt_fmt("%s/ran", b.w.ws);
	cr_expect(!fgt_exists(ran), "the worker ran");
	free(ran);
	fgrb_assert_no_container(&b, fgrb_jstr(res, "run_id"));
	cJSON_Delete(ev);
	cJSON_Delete(res);
	fgrb_release(&b);
}

Test(podman, podman_as_root_without_default_ulimits_is_the_engines_failure)
{
	need_rootful_podman();
	/* This machine's runc may not raise RLIMIT_NOFILE to podman's default. */
	podman_engine_failure(NULL, "[containers]\n", "default_ulimits = []");
}

Test(podman, podman_rootless_without_slirp4netns_is_the_engines_failure)
{
	struct fgd_user u;
	char *slirp = fgd_which("slirp4netns");

	fgd_rootless_user(&u);
	if (slirp) {
		free(slirp);
		cr_skip("slirp4netns is installed: rootless podman has its default network here");
	}
	fgd_ensure_image(FGD_IMAGE);
	podman_engine_failure(&u, "[containers]\ndefault_ulimits = []\n", "--network none");
}

Test(podman, podman_as_root_named_volume_run_is_reported_by_the_stream_alone)
{
	need_rootful_podman();
	fgrb_volume_run("podman");
}
