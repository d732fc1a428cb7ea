/*
 * changeset.c - workspace states and their differences (see changeset.h).
 *
 * Git mode runs the git CLI as a supervised child (agent.h: its own
 * process group, a timeout, bounded capture) with an environment built
 * from nothing but PATH and the private directory (no system or global
 * config: GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null; no system
 * attributes), a private directory cleared of any config, attributes,
 * hooks or commondir before every run (reset_private), and these settings
 * on the command line (which win over any file): no fsmonitor, no hooks,
 * no attributes file, no
 * compression of the loose objects it writes (1 GiB of new files is then
 * written at disk speed, not zlib's), no untracked cache, no automatic gc.
 */
#include "changeset.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "capture.h"
#include "manifest.h"
#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/fsutil.h"
#include "forge/util.h"
#include "forge/text.h"

#include <sodium.h>

extern char **environ;

static const char *const GIT_CONFIG[] = {
	"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.untrackedCache=false",
	"-c", "core.looseCompression=0", "-c", "core.compression=0", "-c", "gc.auto=0",
	"-c", "core.autocrlf=false", "-c", "core.safecrlf=false", "-c", "core.quotePath=false",
	"-c", "diff.external=", "-c", "diff.noprefix=false", "-c", "core.symlinks=true",
	"-c", "core.attributesFile=/dev/null",
};

/* The files of the private git directory git reads as configuration or
 * attributes, none of which we write: whatever stands there (written by an
 * agent that reached the directory) goes before every git run, and the
 * alternates file is written again, so git never reads a config, a
 * filter driver, an attributes file or another object store of anyone
 * else's. */
static const char *const NOT_OURS[] = { "config", "config.worktree", "commondir", "info", "hooks" };

static void reset_private(struct ep_changeset *cs)
{
	for (size_t i = 0; i < ARRAY_SIZE(NOT_OURS); i++) {
		char *p = fg_path_join(cs->gitdir, NOT_OURS[i]);

		fg_rm_tree(p);
		free(p);
	}
	if (cs->alternates) {
		char *info = fg_path_join(cs->gitdir, "objects/info");

		fg_write_atomic(info, "alternates", cs->alternates, strlen(cs->alternates));
		free(info);
	}
}

/* Runs git with args (NULL-terminated) in the workspace; stdout into cap
 * (may be NULL) and, when out_fd >= 0, to out_fd (at most out_max).
 * 0 when git exited 0; else -EIO with cs->err saying why. */
static int git(struct ep_changeset *cs, struct ep_pid1 *p, const char *const *args, struct ep_capture *cap,
	       int out_fd, uint64_t out_max)
{
	struct fg_strvec argv;
	struct ep_agent_result r;
	struct ep_agent_spec s;
	int rc;

	reset_private(cs);
	fg_strvec_init(&argv);
	fg_strvec_push(&argv, "git");
	for (size_t i = 0; i < ARRAY_SIZE(GIT_CONFIG); i++)
		fg_strvec_push(&argv, GIT_CONFIG[i]);
	if (cs->repo_exclude)
		fg_strvec_pushf(&argv, "-c");
	if (cs->repo_exclude)
		fg_strvec_pushf(&argv, "core.excludesFile=%s", cs->repo_exclude);
	for (size_t i = 0; args[i]; i++)
		fg_strvec_push(&argv, args[i]);
	s = (struct ep_agent_spec){
		.role = "git", .argv = argv.v, .envp = cs->envp, .cwd = cs->workspace, .input = "",
		.timeout_s = EP_GIT_TIMEOUT_S, .kill_grace_s = 1, .capture = cap, .log_fd = out_fd,
		.log_max = out_max, .echo_fd = -1, .unboxed = true,
	};
	rc = ep_agent_run(p, &s, &r);
	fg_strvec_release(&argv);
	if (rc < 0) {
		snprintf(cs->err, sizeof(cs->err), "cannot run git %s: %s", args[0], strerror(-rc));
		return -EIO;
	}
	if (!ep_agent_ok(&r)) {
		snprintf(cs->err, sizeof(cs->err), "git %s: %.400s", args[0], r.what);
		return -EIO;
	}
	return 0;
}

/* The repository's git directory for workspace/.git: the directory itself,
 * or the one a "gitdir: X" file names (X relative to the workspace).
 * Owned, or NULL. */
static char *repo_dir(const char *workspace)
{
	char *dotgit = fg_path_join(workspace, ".git"), *dir = NULL;
	const char *g;
	struct fg_buf b;
	struct stat st;

	if (lstat(dotgit, &st) == 0 && S_ISDIR(st.st_mode))
		return dotgit;
	fg_buf_init(&b, 4096);
	if (lstat(dotgit, &st) == 0 && S_ISREG(st.st_mode) &&
	    fg_read_file_at(AT_FDCWD, dotgit, 4096, 0, &b, NULL) == 0 && fg_skip_prefix(fg_buf_str(&b), "gitdir: ", &g)) {
		size_t n = strcspn(g, "\r\n");

		dir = g[0] == '/' ? fg_xasprintf("%.*s", (int)n, g) : fg_xasprintf("%s/%.*s", workspace, (int)n, g);
	}
	fg_buf_release(&b);
	free(dotgit);
	return dir;
}

/* Copies the file src to dst (best effort: a failure leaves no dst). */
static void copy_file(const char *src, const char *dst)
{
	struct fg_buf b;

	fg_buf_init(&b, 512u * 1024 * 1024);
	if (fg_read_file_at(AT_FDCWD, src, b.max, 0, &b, NULL) == 0)
		fg_write_atomic_path(dst, b.data ? b.data : "", b.len);
	fg_buf_release(&b);
}

static void build_env(struct ep_changeset *cs, const char *tmpdir)
{
	const char *path = getenv("PATH");
	char *list[] = {
		fg_xasprintf("PATH=%s", path && *path ? path : "/usr/local/bin:/usr/bin:/bin"),
		fg_xasprintf("HOME=%s", tmpdir), fg_xstrdup("LC_ALL=C"), fg_xasprintf("GIT_DIR=%s", cs->gitdir),
		fg_xasprintf("GIT_WORK_TREE=%s", cs->workspace), fg_xasprintf("GIT_INDEX_FILE=%s", cs->index),
		fg_xstrdup("GIT_CONFIG_NOSYSTEM=1"), fg_xstrdup("GIT_CONFIG_GLOBAL=/dev/null"),
		fg_xstrdup("GIT_ATTR_NOSYSTEM=1"), fg_xstrdup("GIT_TERMINAL_PROMPT=0"),
		fg_xstrdup("GIT_OPTIONAL_LOCKS=0"),
	};

	cs->nenv = ARRAY_SIZE(list);
	cs->envp = fg_xcalloc(cs->nenv + 1, sizeof(*cs->envp));
	memcpy(cs->envp, list, sizeof(list));
}

/* Our excludes file: the repository's info/exclude (read, never
 * followed through a link: it is the sandbox's) plus "/TOP/", so that the
 * cycle directory is never added (a pathspec cannot do it: git refuses an
 * exclude pathspec that names an ignored path). 0 or -errno. */
static int write_excludes(struct ep_changeset *cs, const char *tmpdir, const char *repo_exclude)
{
	struct fg_buf b;
	int rc;

	fg_buf_init(&b, 2u * 1024 * 1024);
	if (fg_read_file_at(AT_FDCWD, repo_exclude, 1024 * 1024, 0, &b, NULL) == 0 && b.len &&
	    b.data[b.len - 1] != '\n')
		fg_buf_addc(&b, '\n');
	fg_buf_addf(&b, "/%s/\n", cs->exclude);
	cs->repo_exclude = fg_path_join(tmpdir, "changeset.exclude");
	rc = fg_write_atomic_path(cs->repo_exclude, b.data, b.len);
	fg_buf_release(&b);
	return rc;
}

/* The private git directory: HEAD, objects (with alternates to the
 * repository's objects), refs; the index seeded from the repository's.
 * 0 or -errno. */
static int setup_git(struct ep_changeset *cs, const char *tmpdir, const char *repo)
{
	char *objects = fg_path_join(cs->gitdir, "objects"), *refs = fg_path_join(cs->gitdir, "refs");
	char *info = fg_path_join(objects, "info"), *alt, *src;
	int rc = 0;

	if (mkdir(cs->gitdir, 0700) < 0 || mkdir(objects, 0700) < 0 || mkdir(refs, 0700) < 0 ||
	    mkdir(info, 0700) < 0)
		rc = -errno;
	if (!rc)
		rc = fg_write_atomic(cs->gitdir, "HEAD", "ref: refs/heads/forge-review\n", 29);
	src = fg_path_join(repo, "objects");
	alt = fg_xasprintf("%s\n", src);
	if (!rc && access(src, R_OK) == 0) {
		rc = fg_write_atomic(info, "alternates", alt, strlen(alt));
		cs->alternates = fg_xstrdup(alt);
	}
	free(src);
	src = fg_path_join(repo, "index");
	copy_file(src, cs->index);
	free(src);
	src = fg_path_join(repo, "info/exclude");
	if (!rc)
		rc = write_excludes(cs, tmpdir, src);
	free(src);
	build_env(cs, tmpdir);
	FG_FREE_ALL(alt, info, refs, objects);
	return rc;
}

int ep_changeset_init(struct ep_changeset *cs, struct ep_pid1 *p, const char *workspace,
		      const char *tmpdir, const char *exclude)
{
	char *repo = repo_dir(workspace);
	size_t top = strcspn(exclude, "/");

	memset(cs, 0, sizeof(*cs));
	cs->workspace = fg_xstrdup(workspace);
	cs->exclude = fg_xasprintf("%.*s", (int)top, exclude);
	if (!repo)
		return 0;
	cs->gitdir = fg_path_join(tmpdir, "changeset.git");
	cs->index = fg_path_join(tmpdir, "changeset.index");
	cs->git = setup_git(cs, tmpdir, repo) == 0;
	if (cs->git) {
		const char *version[] = { "--version", NULL };

		/* No git in the sandbox: the manifest, said once. */
		cs->git = git(cs, p, version, NULL, -1, 0) == 0;
		if (!cs->git)
			snprintf(cs->err, sizeof(cs->err), "a git workspace, but git cannot run here");
	}
	if (cs->git) {
		/* Files under TOP the repository tracks leave our index once;
		 * being ignored, they never come back. */
		const char *rm[] = { "rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", cs->exclude, NULL };

		if (git(cs, p, rm, NULL, -1, 0) < 0)
			unlink(cs->index);
	}
	if (!cs->git && !*cs->err)
		snprintf(cs->err, sizeof(cs->err), "cannot set up a private git directory in '%s'", tmpdir);
	if (cs->git)
		cs->repo = repo;
	else
		free(repo);
	return 0;
}

void ep_changeset_release(struct ep_changeset *cs)
{
	if (cs->gitdir) {
		/* The private directory and the objects written into it. */
		fg_rm_tree(cs->gitdir);
		unlink(cs->index);
	}
	/* Our copy of the repository's excludes: left behind, it kept the
	 * entrypoint's private directory from being removed at the end. */
	if (cs->repo_exclude)
		unlink(cs->repo_exclude);
	ep_manifest_free(cs->last);
	for (size_t i = 0; cs->envp && i < cs->nenv; i++)
		free(cs->envp[i]);
	FG_FREE_ALL(cs->envp, cs->workspace, cs->exclude, cs->gitdir, cs->index, cs->repo_exclude,
		    cs->alternates, cs->repo);
	memset(cs, 0, sizeof(*cs));
}

void ep_state_release(struct ep_state *st)
{
	ep_manifest_free(st->m);
	memset(st, 0, sizeof(*st));
}

void ep_state_copy(struct ep_state *dst, const struct ep_state *src)
{
	ep_state_release(dst);
	*dst = *src;
	dst->m = src->m ? ep_manifest_ref(src->m) : NULL;
}

void ep_state_move(struct ep_state *dst, struct ep_state *src)
{
	ep_state_release(dst);
	*dst = *src;
	memset(src, 0, sizeof(*src));
}

/* What one of the repository's own files holds at most, hashed. */
#define GITMETA_FILE_MAX (1024u * 1024)
/* hooks/ entries hashed; past them the directory counts as "more": a
 * directory of a million entries costs one listing, never a million names
 * in memory. */
#define GITMETA_ENTRIES_MAX 256

static const char *const GITMETA[EP_GITMETA_N] = { "config", "info/attributes", "hooks" };

static void hash_path(crypto_generichash_state *h, const char *path, int depth);

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The directory's entries (name and content, in name order, at most
 * GITMETA_ENTRIES_MAX; past them their count) into h. */
static void hash_dir(crypto_generichash_state *h, const char *path)
{
	char *names[GITMETA_ENTRIES_MAX];
	size_t n = 0, total = 0;
	struct fg_dir it;
	const char *name;

	fg_dir_open(&it, AT_FDCWD, path, 0);
	while ((name = fg_dir_next(&it)) != NULL) {
		if (n < GITMETA_ENTRIES_MAX)
			names[n++] = fg_xstrdup(name);
		total++;
	}
	fg_dir_close(&it);
	qsort(names, n, sizeof(names[0]), cmp_name);
	for (size_t i = 0; i < n; i++) {
		char *sub = fg_path_join(path, names[i]);

		crypto_generichash_update(h, (const unsigned char *)names[i], strlen(names[i]) + 1);
		hash_path(h, sub, 1);
		free(sub);
		free(names[i]);
	}
	if (total > n)
		crypto_generichash_update(h, (const unsigned char *)&total, sizeof(total));
}

/* Adds what path is to h: a file's content (cut at GITMETA_FILE_MAX), a
 * link's target, a directory's entries (one level, hash_dir), or nothing
 * when it is absent. */
static void hash_path(crypto_generichash_state *h, const char *path, int depth)
{
	struct stat st;
	struct fg_buf b;

	if (lstat(path, &st) < 0)
		return;
	fg_buf_init(&b, GITMETA_FILE_MAX);
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t k = readlink(path, target, sizeof(target));

		crypto_generichash_update(h, (const unsigned char *)"L", 1);
		if (k > 0)
			crypto_generichash_update(h, (const unsigned char *)target, (size_t)k);
	} else if (S_ISREG(st.st_mode)) {
		fg_read_file_at(AT_FDCWD, path, GITMETA_FILE_MAX, 0, &b, NULL);
		crypto_generichash_update(h, (const unsigned char *)"F", 1);
		crypto_generichash_update(h, (const unsigned char *)(b.data ? b.data : ""), b.len);
		crypto_generichash_update(h, (const unsigned char *)&st.st_size, sizeof(st.st_size));
	} else if (S_ISDIR(st.st_mode) && depth == 0) {
		crypto_generichash_update(h, (const unsigned char *)"D", 1);
		hash_dir(h, path);
	}
	fg_buf_release(&b);
}

static void snap_meta(const struct ep_changeset *cs, struct ep_state *st)
{
	for (size_t i = 0; cs->repo && i < EP_GITMETA_N; i++) {
		crypto_generichash_state h;
		char *p = fg_path_join(cs->repo, GITMETA[i]);

		crypto_generichash_init(&h, NULL, 0, EP_GITMETA_HASH);
		hash_path(&h, p, 0);
		crypto_generichash_final(&h, st->meta[i], EP_GITMETA_HASH);
		free(p);
	}
}

bool ep_changeset_is_agent_config(const char *path)
{
	static const char *const TOP[] = { ".git/config", ".git/info/attributes", ".git/hooks" };
	static const char *const DIRS[] = { ".claude", ".gemini", ".codex" };
	static const char *const FILES[] = {
		".mcp.json", "CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENTS.override.md", "GEMINI.md",
		".gitattributes", ".gitmodules",
	};
	const char *base = strrchr(path, '/'), *rest;

	for (size_t i = 0; i < ARRAY_SIZE(TOP); i++)
		if (fg_skip_prefix(path, TOP[i], &rest) && (!*rest || *rest == '/'))
			return true;
	if (FG_NAME_INDEX(FILES, base ? base + 1 : path, 0) >= 0)
		return true;
	for (const char *c = path; *c; c += strcspn(c, "/") + (c[strcspn(c, "/")] == '/'))
		for (size_t i = 0; i < ARRAY_SIZE(DIRS); i++)
			if (strcspn(c, "/") == strlen(DIRS[i]) && !strncmp(c, DIRS[i], strlen(DIRS[i])))
				return true;
	return false;
}

/* git add -A into the private index, then write-tree: the tree id. */
static int git_snapshot(struct ep_changeset *cs, struct ep_pid1 *p, struct ep_state *st)
{
	const char *add[] = { "add", "-A", "--ignore-errors", "--", ".", NULL };
	const char *write[] = { "write-tree", NULL };
	struct ep_capture cap;
	struct fg_buf b;
	int rc = git(cs, p, add, NULL, -1, 0);

	if (rc < 0) {
		/* A repository index we cannot use (split index, another
		 * version): start from an empty one, every file hashed once. */
		unlink(cs->index);
		rc = git(cs, p, add, NULL, -1, 0);
	}
	ep_capture_init(&cap, 128, 0);
	if (!rc)
		rc = git(cs, p, write, &cap, -1, 0);
	fg_buf_init(&b, 256);
	ep_capture_text(&cap, &b);
	if (!rc && b.len >= 40 && b.len <= sizeof(st->tree)) {
		size_t n = strcspn(fg_buf_str(&b), "\n");

		memcpy(st->tree, b.data, n < sizeof(st->tree) - 1 ? n : sizeof(st->tree) - 1);
		snap_meta(cs, st);
		st->valid = true;
	} else if (!rc) {
		snprintf(cs->err, sizeof(cs->err), "git write-tree printed no tree id");
		rc = -EIO;
	}
	fg_buf_release(&b);
	ep_capture_release(&cap);
	return rc;
}

int ep_changeset_snapshot(struct ep_changeset *cs, struct ep_pid1 *p, struct ep_state *st)
{
	struct ep_manifest *m = NULL;
	int rc;

	if (cs->git) {
		ep_state_release(st);
		return git_snapshot(cs, p, st);
	}
	/* The last manifest (which st may hold) lends its hashes first. */
	rc = ep_manifest_take(cs->workspace, cs->exclude, cs->last, &m);
	ep_state_release(st);
	if (rc < 0) {
		snprintf(cs->err, sizeof(cs->err), "cannot list '%s': %s", cs->workspace, strerror(-rc));
		return rc;
	}
	st->m = m;
	st->valid = true;
	ep_manifest_free(cs->last);
	cs->last = ep_manifest_ref(m);
	return 0;
}

bool ep_changeset_same(const struct ep_state *a, const struct ep_state *b)
{
	if (!a->valid || !b->valid)
		return false;
	if (a->m || b->m)
		return ep_manifest_same(a->m, b->m);
	return !strcmp(a->tree, b->tree) && !memcmp(a->meta, b->meta, sizeof(a->meta));
}

/* One record of "diff-tree -z --numstat": "A\tD\tpath\0" or, for a rename,
 * "A\tD\t\0old\0new\0". Moves *p past it; 0 at the end. */
static int numstat_record(const char **p, const char *end, long *add, long *del, const char **old,
			  const char **path)
{
	const char *s = *p, *t1, *t2;

	if (s >= end)
		return 0;
	t1 = memchr(s, '\t', (size_t)(end - s));
	t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(end - t1 - 1)) : NULL;
	if (!t2)
		return 0;
	*add = *s == '-' ? -1 : strtol(s, NULL, 10);
	*del = t1[1] == '-' ? -1 : strtol(t1 + 1, NULL, 10);
	*old = NULL;
	*path = t2 + 1;
	if (!*path[0] && *path + 1 < end) {
		*old = *path + 1;
		*path = *old + strnlen(*old, (size_t)(end - *old)) + 1;
	}
	if (*path >= end)
		return 0;
	*p = *path + strnlen(*path, (size_t)(end - *path)) + 1;
	return 1;
}

/* The next record of "diff-tree -z --name-status": its status letter
 * (A, M, D, R, ...), or 0 at the end. The records come in the order of
 * --numstat's (the same diff), so the two are read in step. */
static char next_status(const char **p, const char *end)
{
	const char *s = *p, *a;
	char st;

	if (s >= end)
		return 0;
	st = *s;
	a = s + strnlen(s, (size_t)(end - s)) + 1;
	if (a < end && (st == 'R' || st == 'C'))
		a += strnlen(a, (size_t)(end - a)) + 1;
	if (a >= end)
		return 0;
	*p = a + strnlen(a, (size_t)(end - a)) + 1;
	return st;
}

static enum fg_change_status status_kind(char c)
{
	return c == 'A' ? FG_CHANGE_ADDED : c == 'D' ? FG_CHANGE_DELETED : c == 'R' ? FG_CHANGE_RENAMED
		: FG_CHANGE_MODIFIED;
}

/* The two listings into ev, at most FG_CHANGES_MAX changes. */
static void take_listing(const struct ep_capture *nc, const struct ep_capture *sc, struct fg_evidence *ev)
{
	const char *q = nc->head.data ? nc->head.data : "", *end = q + nc->head.len;
	const char *r = sc->head.data ? sc->head.data : "", *rend = r + sc->head.len;
	const char *path, *old;
	long add, del;

	ev->has_changes = true;
	ev->changes_truncated |= ep_capture_omitted(nc) > 0 || ep_capture_omitted(sc) > 0;
	while (numstat_record(&q, end, &add, &del, &old, &path)) {
		if (ev->nchanges >= FG_CHANGES_MAX) {
			ev->changes_truncated = true;
			break;
		}
		fg_evidence_add_change(ev, status_kind(next_status(&r, rend)), path, old, add, del);
	}
}

/* Lists a..b with numstat and name-status into ev; the patch into diff_fd. */
static int git_compare(struct ep_changeset *cs, struct ep_pid1 *p, const char *a, const char *b,
		       struct fg_evidence *ev, int diff_fd, bool *diffed)
{
	const char *num[] = { "diff-tree", "-r", "-z", "-M", "--numstat", a, b, NULL };
	const char *names[] = { "diff-tree", "-r", "-z", "-M", "--name-status", a, b, NULL };
	const char *patch[] = { "diff-tree", "-r", "-M", "-p", "--no-color", "--no-ext-diff", a, b, NULL };
	struct ep_capture nc, sc;
	int rc;

	ep_capture_init(&nc, EP_GIT_OUT_MAX, 0);
	ep_capture_init(&sc, EP_GIT_OUT_MAX, 0);
	rc = git(cs, p, num, &nc, -1, 0);
	if (!rc)
		rc = git(cs, p, names, &sc, -1, 0);
	if (!rc)
		take_listing(&nc, &sc, ev);
	if (!rc && diff_fd >= 0 && ev->nchanges)
		rc = git(cs, p, patch, NULL, diff_fd, EP_DIFF_MAX);
	*diffed = !rc && diff_fd >= 0 && ev->nchanges;
	ep_capture_release(&nc);
	ep_capture_release(&sc);
	return rc;
}

int ep_changeset_compare(struct ep_changeset *cs, struct ep_pid1 *p, const struct ep_state *a,
			 const struct ep_state *b, struct fg_evidence *ev, int diff_fd, bool *diffed)
{
	int rc;

	*diffed = false;
	if (!a->valid || !b->valid) {
		snprintf(cs->err, sizeof(cs->err), "no state to compare with");
		return -EINVAL;
	}
	if (a->m && b->m) {
		ep_manifest_compare(a->m, b->m, ev);
		return 0;
	}
	rc = strcmp(a->tree, b->tree) ? git_compare(cs, p, a->tree, b->tree, ev, diff_fd, diffed) : 0;
	ev->has_changes = true;
	for (size_t i = 0; !rc && i < EP_GITMETA_N; i++) {
		char name[32];

		if (!memcmp(a->meta[i], b->meta[i], EP_GITMETA_HASH) || ev->nchanges >= FG_CHANGES_MAX)
			continue;
		snprintf(name, sizeof(name), ".git/%s%s", GITMETA[i], !strcmp(GITMETA[i], "hooks") ? "/" : "");
		fg_evidence_add_change(ev, FG_CHANGE_MODIFIED, name, NULL, -1, -1);
	}
	return rc;
}

int ep_changeset_exclude_in_repo(struct ep_changeset *cs)
{
	char line[NAME_MAX + 8], err[256] = "";
	int wsfd, dfd, fd, rc = 0;
	struct fg_buf b;

	if (!cs->git)
		return 0;
	snprintf(line, sizeof(line), "/%s/", cs->exclude);
	wsfd = fg_open_dir(AT_FDCWD, cs->workspace, 0);
	dfd = wsfd < 0 ? wsfd : fg_open_beneath(wsfd, ".git/info", FG_BENEATH_CREATE, err, sizeof(err));
	if (wsfd >= 0)
		close(wsfd);
	if (dfd < 0) {
		snprintf(cs->err, sizeof(cs->err), "cannot open '.git/info': %s", *err ? err : strerror(-dfd));
		return dfd;
	}
	fg_buf_init(&b, 1024 * 1024);
	if (fg_read_file_at(dfd, "exclude", b.max, 0, &b, NULL) == 0) {
		const char *s = fg_buf_str(&b);

		for (const char *q = s; *q; q += strcspn(q, "\n") + (q[strcspn(q, "\n")] == '\n'))
			if (strcspn(q, "\r\n") == strlen(line) && !strncmp(q, line, strlen(line)))
				rc = 1;
	}
	fd = rc ? -1 : openat(dfd, "exclude", O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (!rc && fd < 0) {
		rc = -errno;
		snprintf(cs->err, sizeof(cs->err), "cannot append to '.git/info/exclude': %s", strerror(errno));
	} else if (!rc) {
		char *add = fg_xasprintf("%s# forge-review: its cycle files (FORGE_GIT_EXCLUDE=0 to stop this)\n%s\n",
					 b.len && b.data[b.len - 1] != '\n' ? "\n" : "", line);

		if (fg_write_all(fd, add, strlen(add)) < 0)
			snprintf(cs->err, sizeof(cs->err), "cannot append to '.git/info/exclude'");
		free(add);
		close(fd);
	}
	fg_buf_release(&b);
	close(dfd);
	return rc;
}
