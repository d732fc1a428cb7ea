/*
 * manifest.c - the change set outside git: a bounded manifest of the
 * workspace (see changeset.h and manifest.h).
 *
 * The walk lists each directory with fg_dir_open() from its parent's
 * descriptor (O_NOFOLLOW, so a directory swapped for a link is refused) and
 * never follows a symlink (a link is recorded as a link, by its target's
 * text). Contents are hashed with BLAKE2b-256 (libsodium's
 * crypto_generichash) over 64 KiB reads: a worker must not be able to make
 * two contents of one hash (FNV-1a, before, was collided in a CPU-minute,
 * and a swapped file vanished from the change set); a file
 * whose size, mtime, ctime and inode equal those of the previous manifest
 * keeps its previous hash, so a second snapshot of an unchanged tree costs
 * one fstatat() per file. Entries are sorted by path (strcmp), which makes
 * the comparison one merge pass.
 */
#include "manifest.h"

#include <sodium.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/fsutil.h"

#define READ_CHUNK (64 * 1024)
/* Deeper trees are cut (and the manifest marked incomplete). */
#define DEPTH_MAX 64

struct walk {
	struct ep_manifest *m;
	const struct ep_manifest *prev;
	const char *exclude;            /* top-level name left out */
	char *buf;                      /* READ_CHUNK bytes */
};

struct ep_manifest *ep_manifest_ref(struct ep_manifest *m)
{
	m->refs++;
	return m;
}

void ep_manifest_free(struct ep_manifest *m)
{
	if (!m || --m->refs > 0)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->e[i].path);
	free(m->e);
	free(m);
}

/* The previous entry of path (binary search), or NULL. */
static const struct ep_manifest_entry *previous(const struct ep_manifest *m, const char *path)
{
	size_t lo = 0, hi = m ? m->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(m->e[mid].path, path);

		if (!c)
			return &m->e[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static bool same_stat(const struct ep_manifest_entry *e, const struct stat *st)
{
	return e && e->size == (uint64_t)st->st_size && e->ino == (uint64_t)st->st_ino &&
	       e->mtime_ns == (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec &&
	       e->ctime_ns == (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

/* The content hash of name in dfd (a regular file or a symlink) into h. */
static int hash_of(struct walk *w, int dfd, const char *name, const struct stat *st,
		   unsigned char *h)
{
	crypto_generichash_state g;
	ssize_t n;
	int fd;

	crypto_generichash_init(&g, NULL, 0, EP_MANIFEST_HASH_BYTES);
	if (S_ISLNK(st->st_mode)) {
		n = readlinkat(dfd, name, w->buf, READ_CHUNK);
		if (n < 0)
			return -errno;
		crypto_generichash_update(&g, (const unsigned char *)w->buf, (size_t)n);
		return crypto_generichash_final(&g, h, EP_MANIFEST_HASH_BYTES);
	}
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	for (;;) {
		n = read(fd, w->buf, READ_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		crypto_generichash_update(&g, (const unsigned char *)w->buf, (size_t)n);
	}
	close(fd);
	if (n < 0)
		return -errno;
	return crypto_generichash_final(&g, h, EP_MANIFEST_HASH_BYTES);
}

static void add(struct walk *w, int dfd, const char *name, const char *path, const struct stat *st)
{
	const struct ep_manifest_entry *old = previous(w->prev, path);
	struct ep_manifest_entry *e;
	struct ep_manifest *m = w->m;

	if (m->n >= EP_MANIFEST_FILES_MAX) {
		m->incomplete = true;
		return;
	}
	FG_ALLOC_GROW(m->e, m->n + 1, m->cap);
	e = &m->e[m->n++];
	memset(e, 0, sizeof(*e));
	e->path = fg_xstrdup(path);
	e->link = S_ISLNK(st->st_mode);
	e->size = (uint64_t)st->st_size;
	e->ino = (uint64_t)st->st_ino;
	e->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	e->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
	if (old && old->link == e->link && same_stat(old, st))
		memcpy(e->hash, old->hash, sizeof(e->hash));
	else if (hash_of(w, dfd, name, st, e->hash) < 0)
		memset(e->hash, 0, sizeof(e->hash));   /* unreadable: its size may still tell */
	m->bytes += e->size;
}

static void walk_dir(struct walk *w, struct fg_dir *it, const char *prefix, int depth);

static void entry(struct walk *w, int dfd, const char *name, const char *prefix, int depth)
{
	char *path = *prefix ? fg_xasprintf("%s/%s", prefix, name) : fg_xstrdup(name);
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		free(path);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		struct fg_dir sub = { 0 };

		if (depth < DEPTH_MAX && !fg_dir_open(&sub, dfd, name, FG_DIR_NOFOLLOW))
			walk_dir(w, &sub, path, depth + 1);
		else
			w->m->incomplete = true;
		fg_dir_close(&sub);
	} else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
		add(w, dfd, name, path, &st);
	}
	free(path);
}

/* Walks the directory it lists (the caller's: it closes it). */
static void walk_dir(struct walk *w, struct fg_dir *it, const char *prefix, int depth)
{
	const char *name;

	while ((name = fg_dir_next(it)) != NULL) {
		if (!*prefix && w->exclude && !strcmp(name, w->exclude))
			continue;
		entry(w, fg_dir_fd(it), name, prefix, depth);
		if (w->m->incomplete && w->m->n >= EP_MANIFEST_FILES_MAX)
			break;
	}
	if (it->err)
		w->m->incomplete = true;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct ep_manifest_entry *)a)->path, ((const struct ep_manifest_entry *)b)->path);
}

int ep_manifest_take(const char *workspace, const char *exclude, const struct ep_manifest *prev,
		     struct ep_manifest **out)
{
	struct walk w = { fg_xcalloc(1, sizeof(struct ep_manifest)), prev, exclude, NULL };
	struct fg_dir root;
	int r = fg_dir_open(&root, AT_FDCWD, workspace, 0);

	if (r || sodium_init() < 0) {
		fg_dir_close(&root);
		free(w.m);
		return r ? r : -EIO;
	}
	w.buf = fg_xmalloc(READ_CHUNK);
	walk_dir(&w, &root, "", 0);
	fg_dir_close(&root);
	free(w.buf);
	/* An empty workspace has no array to sort (qsort of NULL is undefined). */
	if (w.m->n > 1)
		qsort(w.m->e, w.m->n, sizeof(*w.m->e), by_path);
	w.m->refs = 1;
	*out = w.m;
	return 0;
}

static bool same_entry(const struct ep_manifest_entry *a, const struct ep_manifest_entry *b)
{
	return a->link == b->link && a->size == b->size && !memcmp(a->hash, b->hash, sizeof(a->hash));
}

bool ep_manifest_same(const struct ep_manifest *a, const struct ep_manifest *b)
{
	if (!a || !b || a->incomplete || b->incomplete || a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->e[i].path, b->e[i].path) || !same_entry(&a->e[i], &b->e[i]))
			return false;
	return true;
}

void ep_manifest_compare(const struct ep_manifest *a, const struct ep_manifest *b, struct fg_evidence *ev)
{
	size_t i = 0, j = 0;

	ev->has_changes = true;
	ev->changes_truncated |= a->incomplete || b->incomplete;
	while (i < a->n || j < b->n) {
		int c = i == a->n ? 1 : j == b->n ? -1 : strcmp(a->e[i].path, b->e[j].path);

		if (c < 0) {
			fg_evidence_add_change(ev, FG_CHANGE_DELETED, a->e[i++].path, NULL, -1, -1);
		} else if (c > 0) {
			fg_evidence_add_change(ev, FG_CHANGE_ADDED, b->e[j++].path, NULL, -1, -1);
		} else {
			if (!same_entry(&a->e[i], &b->e[j]))
				fg_evidence_add_change(ev, FG_CHANGE_MODIFIED, b->e[j].path, NULL, -1, -1);
			i++;
			j++;
		}
	}
}
