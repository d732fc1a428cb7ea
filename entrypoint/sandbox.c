/*
 * sandbox.c - Landlock for every agent and check, an unprivileged uid for
 * agents of a root entrypoint (see sandbox.h).
 */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"
#include "cli.h"
#include "forge/alloc.h"
#include "forge/fsutil.h"
#include "forge/num.h"
#include "forge/util.h"

/*
 * Debian's linux-libc-dev 6.1 stops at ABI 2; what later kernels added is
 * defined here with the kernel's UAPI values and layout
 * (include/uapi/linux/landlock.h).
 */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* struct landlock_ruleset_attr as of ABI 6 (handled_access_net from 4,
 * scoped from 6); the kernel takes a larger struct than it knows as long
 * as the fields it does not know are zero. */
struct box_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

#define FS_ABI1 ((1ULL << 13) - 1)   /* EXECUTE .. MAKE_SYM */
#define FS_RX (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
/* The rights a rule on a file (not a directory) may carry. */
#define FS_FILE (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
		 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define FS_DEV (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
		LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* Read grants opened once at setup: directories under "/" and under each
 * directory that holds a hidden path. */
#define GRANTS_MAX 4096

struct grant {
	int fd;                  /* O_PATH */
	uint64_t access;
};

static struct {
	bool setup;
	int abi;                 /* 0: no Landlock */
	uint64_t fs;             /* handled (and masked) file system rights */
	uint64_t scoped;
	char *hidden[EP_SANDBOX_HIDDEN_MAX];
	size_t nhidden;
	struct grant *grants;
	size_t ngrants;
	bool drop;
	uid_t uid;
	gid_t gid;
	char *warned[8];         /* write grants already said to be withheld */
	size_t nwarned;
	struct fg_isolation iso;
} g;

static const char *const DEVICES[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx",
};

static int ll_create(const struct box_ruleset_attr *a, size_t size, uint32_t flags)
{
	return (int)syscall(SYS_landlock_create_ruleset, a, size, flags);
}

static int ll_add_path(int ruleset, int fd, uint64_t access)
{
	struct landlock_path_beneath_attr pb = { .allowed_access = access, .parent_fd = fd };

	return (int)syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
}

/* The rights an ABI handles, as sandboxer.c masks them. */
static uint64_t fs_rights(int abi)
{
	uint64_t fs = FS_ABI1;

	if (abi >= 2)
		fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return fs;
}

/* The kernel's ABI, capped by FORGE_TEST_LANDLOCK_ABI; 0 with why. */
static int probe_abi(char *why, size_t n)
{
	const char *cap = getenv("FORGE_TEST_LANDLOCK_ABI");
	long lim = -1;
	int abi = ll_create(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	if (abi < 0) {
		int e = errno;

		snprintf(why, n, e == ENOSYS ? "the kernel has no Landlock system calls (Linux 5.13 or later "
			 "built with CONFIG_SECURITY_LANDLOCK), or a seccomp profile refuses them" :
			 e == EOPNOTSUPP ? "Landlock is built into the kernel but not enabled (add landlock to "
			 "the lsm= boot parameter)" : "landlock_create_ruleset() is refused: %s (a seccomp "
			 "profile of the container engine?)", strerror(e));
		return 0;
	}
	if (cap && *cap && !fg_parse_long(cap, 0, 1000, &lim) && lim < abi) {
		abi = (int)lim;
		if (!abi)
			snprintf(why, n, "FORGE_TEST_LANDLOCK_ABI=0 (test-only) turns Landlock off");
	}
	return abi;
}

/* 1 when a is b or one of its ancestors, 2 when a is beneath b, 0 else. */
static int relation(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (!strcmp(a, b) || (la == 1 && a[0] == '/'))
		return 1;
	if (la < lb && !strncmp(a, b, la) && b[la] == '/')
		return 1;
	if (lb < la && !strncmp(a, b, lb) && a[lb] == '/')
		return 2;
	return 0;
}

/* How path (resolved) stands to the hidden paths: 1 holds or is one, 2
 * beneath one, 0 apart from all. */
static int hidden_relation(const char *path)
{
	int worst = 0;

	for (size_t i = 0; i < g.nhidden; i++) {
		int r = relation(path, g.hidden[i]);

		if (r && (!worst || r < worst))
			worst = r;
	}
	return worst;
}

/* True when path is the directory a hidden path was made in ($TMPDIR):
 * none of its entries is granted (the agents' own HOME and TMPDIR there
 * are granted one by one). */
static bool holds_hidden_directly(const char *path)
{
	size_t n = strlen(path);

	for (size_t i = 0; i < g.nhidden; i++) {
		const char *h = g.hidden[i], *slash = strrchr(h, '/');

		if (slash && (size_t)(slash - h) == (n == 1 ? 0 : n) && !strncmp(h, path, n == 1 ? 0 : n))
			return true;
	}
	return false;
}

static void add_grant(int fd, uint64_t access)
{
	if (g.ngrants == GRANTS_MAX) {
		close(fd);
		return;
	}
	if (!g.grants)
		g.grants = fg_xcalloc(GRANTS_MAX, sizeof(*g.grants));
	g.grants[g.ngrants++] = (struct grant){ fd, access };
}

/* Opens path (O_PATH; follow: symlinks followed) as a read grant. */
static void grant_read(const char *path, bool follow)
{
	int fd = open(path, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	struct stat st;

	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode)) {
		close(fd);
		return;
	}
	add_grant(fd, S_ISDIR(st.st_mode) ? FS_RX : (FS_RX & FS_FILE));
}

static void grant_dir(const char *dir, int depth);

/* One entry of a directory being granted: skipped when hidden, entered
 * when it holds a hidden path, granted otherwise. A symbolic link is
 * followed only in "/" (/bin -> usr/bin), and only to a target apart from
 * every hidden path. */
static void grant_entry(const char *dir, const char *name, int depth)
{
	char *path = fg_path_join(dir, name);
	struct stat st;
	int rel = hidden_relation(path);

	if (lstat(path, &st) < 0 || rel == 2 || (depth == 0 && !strcmp(path, "/dev"))) {
		free(path);
		return;
	}
	if (rel == 1 && S_ISDIR(st.st_mode) && !holds_hidden_directly(path))
		grant_dir(path, depth + 1);
	else if (!rel && S_ISLNK(st.st_mode) && depth == 0) {
		char *real = realpath(path, NULL);

		if (real && !hidden_relation(real))
			grant_read(real, true);
		free(real);
	} else if (!rel && !S_ISLNK(st.st_mode)) {
		grant_read(path, false);
	}
	free(path);
}

static void grant_dir(const char *dir, int depth)
{
	struct fg_dir it;
	const char *name;

	if (depth >= 32 || fg_dir_open(&it, AT_FDCWD, dir, 0))
		return;
	while ((name = fg_dir_next(&it)) != NULL)
		grant_entry(dir, name, depth);
	fg_dir_close(&it);
}

/* The read grants, opened once: the system, /dev's listing, the devices. */
static void open_grants(void)
{
	int fd;

	grant_dir("/", 0);
	fd = open("/dev", O_PATH | O_CLOEXEC | O_DIRECTORY);
	if (fd >= 0)
		add_grant(fd, LANDLOCK_ACCESS_FS_READ_DIR);
	for (size_t i = 0; i < ARRAY_SIZE(DEVICES); i++) {
		fd = open(DEVICES[i], O_PATH | O_CLOEXEC);
		if (fd >= 0)
			add_grant(fd, FS_DEV);
	}
	fd = open("/dev/pts", O_PATH | O_CLOEXEC | O_DIRECTORY);
	if (fd >= 0)
		add_grant(fd, FS_DEV | LANDLOCK_ACCESS_FS_READ_DIR);
	fd = open("/dev/shm", O_PATH | O_CLOEXEC | O_DIRECTORY);
	if (fd >= 0 && !hidden_relation("/dev/shm"))
		add_grant(fd, ~0ULL);
	else if (fd >= 0)
		close(fd);
}

/* CAP_SETUID and CAP_SETGID in our effective set (/proc/self/status). */
static bool can_switch_uid(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long long eff = 0;
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "CapEff: %llx", &eff) == 1;
	fclose(f);
	return found && (eff & (1ULL << 6)) && (eff & (1ULL << 7));
}

/* Uid 0: the agents get the workspace's owner, where we may switch uids
 * and the workspace is not root's own (agents of another uid could not
 * write it). */
static void decide_uid(const char *workspace)
{
	struct stat st;

	g.iso.agent_uid = (long)geteuid();
	if (geteuid() != 0)
		return;
	if (stat(workspace, &st) < 0 || st.st_uid == 0) {
		ep_log(FG_MSG_WARN, "running as uid 0 on a workspace of uid 0: the agents run as uid 0 too "
		       "(give the workspace to another user, or start the sandbox as one: "
		       "docs/security.md#the-box)");
		return;
	}
	if (!can_switch_uid()) {
		ep_log(FG_MSG_WARN, "running as uid 0 without CAP_SETUID/CAP_SETGID: the agents run as uid 0 "
		       "too (start the sandbox as a non-root user: docs/security.md#the-box)");
		return;
	}
	g.drop = true;
	g.uid = st.st_uid;
	g.gid = st.st_gid;
	g.iso.agent_uid = (long)g.uid;
	g.iso.root_dropped = true;
	ep_log(FG_MSG_INFO, "running as uid 0: the agents run as uid %ld, gid %ld (the workspace's owner)",
	       (long)g.uid, (long)g.gid);
}

static void fill_isolation(const char *why)
{
	g.iso.known = true;
	g.iso.landlock = g.abi > 0;
	g.iso.abi = g.abi;
	g.iso.scoped = 0;
	if (g.scoped & LANDLOCK_SCOPE_SIGNAL)
		g.iso.scoped |= FG_SCOPE_SIGNAL;
	if (g.scoped & LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET)
		g.iso.scoped |= FG_SCOPE_ABSTRACT_UNIX_SOCKET;
	snprintf(g.iso.reason, sizeof(g.iso.reason), "%s", g.abi > 0 ? "" : why);
}

int ep_sandbox_setup(const char *const *hidden, size_t n, const char *workspace, struct fg_isolation *iso)
{
	char why[FG_ISOLATION_REASON_MAX] = "";
	char *ws = realpath(workspace, NULL);

	ep_sandbox_release();
	for (size_t i = 0; i < n && i < EP_SANDBOX_HIDDEN_MAX; i++) {
		char *h = realpath(hidden[i], NULL);

		g.hidden[g.nhidden++] = h ? h : fg_xstrdup(hidden[i]);
	}
	if (ws && hidden_relation(ws)) {
		ep_log(FG_MSG_ERROR, "the workspace '%s' holds or is inside the entrypoint's private directory "
		       "'%s': set TMPDIR to a directory outside the workspace", ws, g.hidden[0]);
		free(ws);
		return -EINVAL;
	}
	g.setup = true;
	g.abi = probe_abi(why, sizeof(why));
	g.fs = fs_rights(g.abi);
	g.scoped = g.abi >= 6 ? LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET : 0;
	if (g.abi > 0)
		open_grants();
	decide_uid(ws ? ws : workspace);
	fill_isolation(why);
	free(ws);
	*iso = g.iso;
	return 0;
}

void ep_sandbox_grant_read(const char *path)
{
	char *real = g.setup && g.abi > 0 && path && *path ? realpath(path, NULL) : NULL;

	if (real && !hidden_relation(real))
		grant_read(real, true);
	free(real);
}

const struct fg_isolation *ep_sandbox_isolation(void)
{
	return &g.iso;
}

void ep_sandbox_release(void)
{
	for (size_t i = 0; i < g.ngrants; i++)
		close(g.grants[i].fd);
	free(g.grants);
	for (size_t i = 0; i < g.nhidden; i++)
		free(g.hidden[i]);
	for (size_t i = 0; i < g.nwarned; i++)
		free(g.warned[i]);
	memset(&g, 0, sizeof(g));
}

/* A write grant withheld: said once per path. */
static void say_withheld(const char *what, const char *path)
{
	for (size_t i = 0; i < g.nwarned; i++)
		if (!strcmp(g.warned[i], path))
			return;
	if (g.nwarned < ARRAY_SIZE(g.warned))
		g.warned[g.nwarned++] = fg_xstrdup(path);
	ep_log(FG_MSG_WARN, "the agents' %s '%s' is, or holds, a directory no agent may open: they may "
	       "not write there", what, path);
}

/* Adds a rule for path with access (masked to what the ABI handles and to
 * a file's rights for a file); a missing path is no error. The agents'
 * dirs made by the entrypoint as root (forge-agents.*) become theirs. */
static int add_path(int ruleset, const char *what, const char *path, uint64_t access)
{
	char *real = path && *path ? realpath(path, NULL) : NULL;
	struct stat st;
	int fd, rc = 0;

	if (!real)
		return 0;
	if (what && hidden_relation(real)) {
		say_withheld(what, real);
		free(real);
		return 0;
	}
	fd = open(real, O_PATH | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0) {
		access &= g.fs & (S_ISDIR(st.st_mode) ? ~0ULL : FS_FILE);
		if (g.drop && S_ISDIR(st.st_mode) && st.st_uid == 0 && strstr(real, "/forge-agents."))
			(void)chown(real, g.uid, g.gid);
		if (ll_add_path(ruleset, fd, access) < 0)
			rc = -errno;
	}
	if (fd >= 0)
		close(fd);
	free(real);
	return rc;
}

static int build_ruleset(const char *cwd, char *const *envp, const char *read_dir)
{
	struct box_ruleset_attr a = { .handled_access_fs = g.fs, .scoped = g.scoped };
	int fd = ll_create(&a, sizeof(a), 0), rc = 0;

	if (fd < 0)
		return -errno;
	for (size_t i = 0; !rc && i < g.ngrants; i++)
		if (ll_add_path(fd, g.grants[i].fd, g.grants[i].access & g.fs) < 0 && errno != EINVAL)
			rc = -errno;
	if (!rc)
		rc = add_path(fd, "working directory", cwd, ~0ULL);
	if (!rc)
		rc = add_path(fd, "HOME", ep_env_get(envp, "HOME"), ~0ULL);
	if (!rc)
		rc = add_path(fd, "TMPDIR", ep_env_get(envp, "TMPDIR"), ~0ULL);
	/* Test-only: the tests' scratch directory, where their stand-in
	 * agents note what they saw (docs/reference/config.md). */
	if (!rc)
		rc = add_path(fd, "FORGE_TEST_AGENT_WRITE_DIR", getenv("FORGE_TEST_AGENT_WRITE_DIR"), ~0ULL);
	if (!rc && read_dir)
		rc = add_path(fd, NULL, read_dir, FS_RX);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

int ep_box_prepare(struct ep_box *b, const char *cwd, char *const *envp, const char *read_dir)
{
	int fd;

	b->ruleset_fd = -1;
	b->drop = g.setup && g.drop;
	b->uid = g.uid;
	b->gid = g.gid;
	if (!g.setup || g.abi <= 0)
		return 0;
	fd = build_ruleset(cwd, envp, read_dir);
	if (fd < 0)
		return fd;
	b->ruleset_fd = fd;
	return 0;
}

int ep_box_none(struct ep_box *b)
{
	*b = (struct ep_box){ .ruleset_fd = -1 };
	return 0;
}

int ep_box_enter(const struct ep_box *b)
{
	if (b->drop && (setgroups(0, NULL) < 0 || setresgid(b->gid, b->gid, b->gid) < 0 ||
			setresuid(b->uid, b->uid, b->uid) < 0))
		return -errno;
	if (b->ruleset_fd < 0)
		return 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (syscall(SYS_landlock_restrict_self, b->ruleset_fd, 0) < 0)
		return -errno;
	close(b->ruleset_fd);
	return 0;
}

void ep_box_release(struct ep_box *b)
{
	if (b->ruleset_fd >= 0)
		close(b->ruleset_fd);
	b->ruleset_fd = -1;
}
