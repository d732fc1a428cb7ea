/*
 * changeset_cost.c - what the change set costs a worker turn (the target:
 * "a workspace of 100,000 files or 1 GiB costs the change set at most a few
 * seconds per turn"). Builds a tree of FILES files of BYTES bytes in all
 * (default 100,000 files, 1 GiB, spread over 1,000 directories), then times,
 * in both modes (manifest outside git; git after one commit of the tree):
 *   first    the step's first state (the manifest hashes every byte; git
 *            matches the copied index by stat data),
 *   again    a second state with nothing changed,
 *   changed  a state after one file changed, plus the comparison (and, in
 *            git, the diff),
 * and prints one JSON object. Usage: forge-bench-changeset [DIR] [FILES] [BYTES]
 * (DIR is made and removed; default a fresh directory in $TMPDIR or /tmp).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "changeset.h"
#include "pid1.h"
#include "forge/alloc.h"
#include "forge/timeutil.h"

static void die(const char *what)
{
	fprintf(stderr, "forge-bench-changeset: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void make_tree(const char *ws, long files, long long bytes)
{
	size_t each = (size_t)(bytes / files);
	char *buf = fg_xmalloc(each + 1);

	for (size_t i = 0; i < each; i++)
		buf[i] = (char)('a' + (i * 7 + i / 61) % 26);
	for (long i = 0; i < files; i++) {
		char dir[4096], path[4200];
		int fd;

		snprintf(dir, sizeof(dir), "%s/d%03ld", ws, i % 1000);
		if (i < 1000 && mkdir(dir, 0755) < 0 && errno != EEXIST)
			die(dir);
		snprintf(path, sizeof(path), "%s/f%06ld.txt", dir, i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			die(path);
		memcpy(buf, path + strlen(path) - 11, 7);   /* every file differs */
		if (write(fd, buf, each) != (ssize_t)each)
			die(path);
		close(fd);
	}
	free(buf);
}

/* Runs sh -c script in dir; exits on failure. */
static void sh(const char *dir, const char *script)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (chdir(dir) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		die(script);
}

struct times {
	double first, again, changed;
	size_t nchanges;
};

static struct times measure(const char *ws, const char *tmp, struct ep_pid1 *p, bool *git)
{
	struct ep_changeset cs;
	struct ep_state a = { 0 }, b = { 0 }, c = { 0 };
	struct fg_evidence ev;
	struct times t;
	uint64_t t0;
	bool diffed;
	char path[4200];
	int fd;

	ep_changeset_init(&cs, p, ws, tmp, ".forge/step");
	*git = cs.git;
	t0 = fg_monotonic_ns();
	if (ep_changeset_snapshot(&cs, p, &a) < 0)
		fprintf(stderr, "first: %s\n", cs.err);
	t.first = fg_seconds_since(t0);
	t0 = fg_monotonic_ns();
	ep_changeset_snapshot(&cs, p, &b);
	t.again = fg_seconds_since(t0);
	snprintf(path, sizeof(path), "%s/d007/f000007.txt", ws);
	fd = open(path, O_WRONLY | O_APPEND);
	if (fd < 0 || write(fd, "changed\n", 8) != 8)
		die(path);
	close(fd);
	fg_evidence_init(&ev);
	t0 = fg_monotonic_ns();
	ep_changeset_snapshot(&cs, p, &c);
	ep_changeset_compare(&cs, p, &b, &c, &ev, -1, &diffed);
	t.changed = fg_seconds_since(t0);
	t.nchanges = ev.nchanges;
	if (!ep_changeset_same(&a, &b))
		fprintf(stderr, "warning: two states of an unchanged tree differ\n");
	fg_evidence_release(&ev);
	ep_state_release(&a);
	ep_state_release(&b);
	ep_state_release(&c);
	ep_changeset_release(&cs);
	/* Put the file back for the next mode. */
	sh(ws, "git checkout -q -- d007/f000007.txt 2>/dev/null || true");
	return t;
}

int main(int argc, char **argv)
{
	const char *base = getenv("TMPDIR");
	char *root = argc > 1 ? fg_xstrdup(argv[1]) : fg_xasprintf("%s/forge-cscost.XXXXXX", base ? base : "/tmp");
	long files = argc > 2 ? strtol(argv[2], NULL, 10) : 100000;
	long long bytes = argc > 3 ? strtoll(argv[3], NULL, 10) : 1024LL * 1024 * 1024;
	char *ws, *tmp1, *tmp2, *rm;
	struct ep_pid1 p;
	struct times m, g;
	bool git1, git2;
	uint64_t t0;
	double made, committed;

	if (argc <= 1 && !mkdtemp(root))
		die(root);
	if (argc > 1 && mkdir(root, 0700) < 0)
		die(root);
	ws = fg_xasprintf("%s/ws", root);
	tmp1 = fg_xasprintf("%s/tmp1", root);
	tmp2 = fg_xasprintf("%s/tmp2", root);
	if (mkdir(ws, 0755) < 0 || mkdir(tmp1, 0700) < 0 || mkdir(tmp2, 0700) < 0 || ep_pid1_init(&p) < 0)
		die("setup");
	t0 = fg_monotonic_ns();
	make_tree(ws, files, bytes);
	made = fg_seconds_since(t0);
	m = measure(ws, tmp1, &p, &git1);
	t0 = fg_monotonic_ns();
	sh(ws, "git init -q . && git add -A && git -c user.name=b -c user.email=b@b commit -qm tree");
	committed = fg_seconds_since(t0);
	g = measure(ws, tmp2, &p, &git2);
	printf("{\"files\": %ld, \"bytes\": %lld, \"make_seconds\": %.2f, \"git_commit_seconds\": %.2f,\n"
	       " \"manifest\": {\"first\": %.3f, \"again\": %.3f, \"changed\": %.3f, \"changes\": %zu},\n"
	       " \"git\": {\"used\": %s, \"first\": %.3f, \"again\": %.3f, \"changed\": %.3f, \"changes\": %zu}}\n",
	       files, bytes, made, committed, m.first, m.again, m.changed, m.nchanges, git2 ? "true" : "false",
	       g.first, g.again, g.changed, g.nchanges);
	(void)git1;
	rm = fg_xasprintf("rm -rf '%s'", root);
	sh("/", rm);
	ep_pid1_release(&p);
	free(rm);
	free(ws);
	free(tmp1);
	free(tmp2);
	free(root);
	return 0;
}
