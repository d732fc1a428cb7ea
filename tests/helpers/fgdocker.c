/*
 * fgdocker.c - helpers for the tests that need a real container engine
 * (see fgdocker.h).
 */
#include "fgdocker.h"

#include <criterion/criterion.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FGD_MAX_ARGS 64

const char FGD_TASK[] =
	"{\"task_key\": \"DEMO-1\", \"summary\": \"Write work.log\","
	" \"description\": \"Append a line to work.log.\", \"skill_name\": \"" FGD_SKILL "\","
	" \"step_name\": \"" FGD_STEP "\", \"previous_task_keys\": []}\n";

void fgd_workspace(struct fgw *w, uid_t uid, gid_t gid, const char *task, const char *review_md)
{
	fgw_init(w);
	fgw_share(w, uid, gid);
	fgw_write(w, "skills/default/" FGD_SKILL "/review.md", review_md);
	fgw_write(w, task, FGD_TASK);
}

char *fgd_which(const char *name)
{
	const char *path = getenv("PATH");
	const char *d = path && *path ? path : "/usr/bin:/bin";

	for (;;) {
		const char *end = strchr(d, ':');
		int len = end ? (int)(end - d) : (int)strlen(d);
		char *p = fgt_fmt("%.*s/%s", len, d, name);

		if (len > 0 && access(p, X_OK) == 0)
			return p;
		free(p);
		if (!end)
			return NULL;
		d = end + 1;
	}
}

void fgd_cli(struct fgt_proc *p, const char *cli, const char *const args[], double timeout_s)
{
	const char *argv[FGD_MAX_ARGS];
	char *bin = fgd_which(cli);
	size_t n = 1;

	cr_assert_not_null(bin, "%s CLI not found in PATH", cli);
	argv[0] = bin;
	for (size_t i = 0; args[i]; i++) {
		cr_assert_lt(n, (size_t)FGD_MAX_ARGS - 1, "too many arguments");
		argv[n++] = args[i];
	}
	argv[n] = NULL;
	cr_assert_eq(fgt_run(p, argv, NULL, NULL, NULL, timeout_s), 0, "cannot start %s", bin);
	free(bin);
}

/* Trailing blanks off a captured stream, for one-line messages. */
static void chomp(struct fgt_proc *p)
{
	while (p->err_len > 0 && (p->err[p->err_len - 1] == '\n' || p->err[p->err_len - 1] == ' '))
		p->err[--p->err_len] = '\0';
}

void fgd_skip_without_engine(const char *cli)
{
	struct fgt_proc p;
	char *bin = fgd_which(cli);
	char *why;

	if (!bin)
		cr_skip("no %s CLI in PATH: container tests not run", cli);
	free(bin);
	fgd_cli(&p, cli, (const char *const[]){ "info", NULL }, 60);
	if (p.exited && p.exit_code == 0) {
		fgt_proc_release(&p);
		return;
	}
	chomp(&p);
	why = fgt_fmt("no engine answers '%s info' (%s): container tests not run", cli,
		      p.err_len ? p.err : "no message");
	fgt_proc_release(&p);
	cr_skip("%s", why);
}

static int image_exists(const char *tag)
{
	struct fgt_proc p;
	int ok;

	fgd_cli(&p, "docker", (const char *const[]){ "image", "inspect", "-f", "{{.Id}}", tag, NULL }, 60);
	ok = p.exited && p.exit_code == 0;
	fgt_proc_release(&p);
	return ok;
}

static const char *tail(const char *s, size_t len)
{
	return len > 3000 ? s + len - 3000 : s;
}

static void build_bases(void)
{
	struct fgt_proc p;
	const char *argv[] = { "/bin/sh", FG_SOURCE_DIR "/docker/build-base.sh", NULL };

	if (geteuid() != 0) {
		if (image_exists("debian:bookworm") && image_exists("debian:bookworm-slim"))
			return;
		cr_skip("docker/build-base.sh needs root (debootstrap) and the base images are missing");
	}
	cr_assert_eq(fgt_run(&p, argv, NULL, FG_SOURCE_DIR, NULL, 1500), 0);
	cr_assert(p.exited && p.exit_code == 0, "build-base.sh failed (%d):\n%s", p.exit_code,
		  tail(p.err, p.err_len));
	fgt_proc_release(&p);
}

void fgd_ensure_image(const char *tag)
{
	struct fgt_proc p;

	fgd_skip_without_engine("docker");
	build_bases();
	/* The CLI's "legacy builder is deprecated" notice on stderr is not a failure. */
	fgd_cli(&p, "docker", (const char *const[]){ "build", "-f", FG_SOURCE_DIR "/docker/Dockerfile",
		"-t", tag, "--build-arg", "VERSION=test", FG_SOURCE_DIR, NULL }, 1500);
	cr_assert(p.exited && p.exit_code == 0, "docker build failed (%d):\n%s\n%s", p.exit_code,
		  tail(p.out, p.out_len), tail(p.err, p.err_len));
	fgt_proc_release(&p);
}

int fgd_container_listed(const char *cli, const char *name)
{
	struct fgt_proc p;
	char *filter = fgt_fmt("name=^%s$", name);
	int listed;

	fgd_cli(&p, cli, (const char *const[]){ "ps", "-a", "-q", "--filter", filter, NULL }, 60);
	cr_assert_eq(p.exit_code, 0, "%s ps: %s", cli, p.err);
	listed = p.out_len > 0;
	fgt_proc_release(&p);
	free(filter);
	return listed;
}

/* ---- podman ---- */

/* Subordinate ids for the rootless user when useradd did not allot any. */
#define FGD_SUBID_RANGE "400000-465535"

char *fgd_podman_conf(const char *dir, int rootless)
{
	char *path = fgt_fmt("%s/containers.conf", dir);

	/* Test setup for this machine, not product behaviour (see fgdocker.h). */
	fgt_write(path, rootless ? "[containers]\ndefault_ulimits = []\nnetns = \"none\"\n"
				 : "[containers]\ndefault_ulimits = []\n");
	cr_assert_eq(chmod(path, 0644), 0);
	return path;
}

static int env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && !strcmp(v, value);
}

static int lookup_user(struct fgd_user *u)
{
	struct passwd *pw = getpwnam(FGD_ROOTLESS_USER);

	if (!pw)
		return 0;
	snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
	snprintf(u->home, sizeof(u->home), "%s", pw->pw_dir);
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	return 1;
}

/* 1 if file (/etc/subuid, /etc/subgid) has a line for name. */
static int has_subids(const char *file, const char *name)
{
	char *text = fgt_read(file, NULL);
	char *key = fgt_fmt("%s:", name);
	int found = 0;

	for (const char *l = text; l && *l && !found; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "")
		found = !strncmp(l, key, strlen(key));
	free(text);
	free(key);
	return found;
}

static void run_ok(const char *const argv[], const char *what)
{
	struct fgt_proc p;

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 120), 0, "cannot start %s", argv[0]);
	cr_assert(p.exited && p.exit_code == 0, "%s failed (%d): %s", what, p.exit_code, p.err);
	fgt_proc_release(&p);
}

static void create_user(void)
{
	run_ok((const char *const[]){ "/usr/sbin/useradd", "--create-home", "--shell",
		"/usr/sbin/nologin", FGD_ROOTLESS_USER, NULL }, "useradd " FGD_ROOTLESS_USER);
	if (!has_subids("/etc/subuid", FGD_ROOTLESS_USER) ||
	    !has_subids("/etc/subgid", FGD_ROOTLESS_USER))
		run_ok((const char *const[]){ "/usr/sbin/usermod", "--add-subuids", FGD_SUBID_RANGE,
			"--add-subgids", FGD_SUBID_RANGE, FGD_ROOTLESS_USER, NULL }, "usermod --add-subuids");
}

void fgd_rootless_user(struct fgd_user *u)
{
	int must = env_is("CI", "true") || env_is("FORGE_TEST_ROOTLESS", "1");
	char *bin = fgd_which("podman");

	memset(u, 0, sizeof(*u));
	if (!bin && must)
		cr_assert_fail("podman is not installed (scripts/setup.sh --test installs it)");
	if (!bin)
		cr_skip("podman is not installed: rootless podman is not tested here");
	free(bin);
	if (geteuid() != 0 && must)
		cr_assert_fail("the rootless podman test needs root to switch to user " FGD_ROOTLESS_USER);
	if (geteuid() != 0)
		cr_skip("the rootless podman test needs root to switch to user " FGD_ROOTLESS_USER);
	if (lookup_user(u))
		return;
	if (!must)
		cr_skip("no user " FGD_ROOTLESS_USER ": the rootless podman test creates a system user "
			"and subuid ranges only under CI=true or FORGE_TEST_ROOTLESS=1");
	create_user();
	cr_assert(lookup_user(u), "useradd made no user " FGD_ROOTLESS_USER);
}

void fgd_podman(struct fgt_proc *p, const struct fgd_user *u, const char *conf,
		const char *const args[], double timeout_s)
{
	const char *argv[FGD_MAX_ARGS];
	char *home = u ? fgt_fmt("HOME=%s", u->home) : NULL;
	char *cc = fgt_fmt("CONTAINERS_CONF=%s", conf);
	const char *env[] = { cc, NULL };
	size_t n = 0;

	if (u) {
		/* runuser: a fresh session as the user, podman's storage in its home. */
		const char *pre[] = { "/usr/sbin/runuser", "-u", u->name, "--", "/usr/bin/env", home, cc };

		for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
			argv[n++] = pre[i];
	} else {
		argv[n++] = "/usr/bin/env";
	}
	argv[n++] = "podman";
	for (size_t i = 0; args[i]; i++) {
		cr_assert_lt(n, (size_t)FGD_MAX_ARGS - 1, "too many arguments");
		argv[n++] = args[i];
	}
	argv[n] = NULL;
	cr_assert_eq(fgt_run(p, argv, u ? NULL : env, NULL, NULL, timeout_s), 0, "cannot start podman");
	free(home);
	free(cc);
}

/* The image id, "sha256:" stripped (docker prints it, podman does not). */
static char *image_id(struct fgt_proc *p)
{
	const char *id = p->exited && p->exit_code == 0 ? p->out : "";

	if (!strncmp(id, "sha256:", 7))
		id += 7;
	return fgt_fmt("%.*s", (int)strcspn(id, "\n"), id);
}

void fgd_podman_ensure_image(const struct fgd_user *u, const char *conf)
{
	struct fgt_proc p;
	char *want, *have;

	fgd_cli(&p, "docker", (const char *const[]){ "image", "inspect", "-f", "{{.Id}}", FGD_IMAGE, NULL }, 60);
	want = image_id(&p);
	fgt_proc_release(&p);
	cr_assert(*want, "docker has no image %s", FGD_IMAGE);
	fgd_podman(&p, u, conf, (const char *const[]){ "image", "inspect", "-f", "{{.Id}}", FGD_IMAGE, NULL }, 60);
	have = image_id(&p);
	fgt_proc_release(&p);
	if (strcmp(want, have)) {
		/* The image docker built, moved over as an archive: no registry. */
		const char *argv[] = {
			"/bin/sh", "-c",
			"docker save \"$1\" | if [ -n \"$2\" ]; then runuser -u \"$2\" -- env HOME=\"$3\" "
			"CONTAINERS_CONF=\"$4\" podman load; else CONTAINERS_CONF=\"$4\" podman load; fi",
			"sh", FGD_IMAGE, u ? u->name : "", u ? u->home : "", conf, NULL,
		};

		cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 600), 0);
		cr_assert(p.exited && p.exit_code == 0, "docker save | podman load failed (%d): %s",
			  p.exit_code, tail(p.err, p.err_len));
		fgt_proc_release(&p);
	}
	free(want);
	free(have);
}

int fgd_podman_listed(const struct fgd_user *u, const char *conf, const char *name)
{
	struct fgt_proc p;
	char *filter = fgt_fmt("name=^%s$", name);
	int listed;

	fgd_podman(&p, u, conf, (const char *const[]){ "ps", "-a", "-q", "--filter", filter, NULL }, 60);
	cr_assert_eq(p.exit_code, 0, "podman ps: %s", p.err);
	listed = p.out_len > 0;
	fgt_proc_release(&p);
	free(filter);
	return listed;
}

const char *fgd_image(void)
{
	const char *v = getenv("FGD_IMAGE");

	return v && *v ? v : FGD_IMAGE_DEFAULT;
}
