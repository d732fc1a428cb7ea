/*
 * fgdocker.c - helpers for the tests that need a real container engine
 * (see fgdocker.h).
 */
#include "fgdocker.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FGD_MAX_ARGS 64

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
