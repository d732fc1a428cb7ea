/*
 * manifest.h - a bounded manifest of a directory tree: the change set's
 * state outside git (changeset.h).
 *
 * Every regular file and symlink below the workspace (directories are
 * walked, never followed through a link; FIFOs, sockets and devices are
 * left out), at most EP_MANIFEST_FILES_MAX entries, at most 64 levels
 * deep; past either bound, or when a directory cannot be read, the
 * manifest is incomplete. Each entry: path, whether it is a link, size,
 * a 256-bit content hash (BLAKE2b, libsodium's crypto_generichash; of the
 * target text for a link) and the
 * stat data (inode, mtime, ctime) that lets the next manifest reuse the
 * hash of a file that did not move.
 */
#ifndef EP_MANIFEST_H
#define EP_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "changeset.h"
#include "forge/evidence.h"

/* Bytes of an entry's content hash (BLAKE2b-256). */
#define EP_MANIFEST_HASH_BYTES 32

struct ep_manifest_entry {
	char *path;            /* owned, workspace-relative */
	bool link;
	uint64_t size, ino;
	unsigned char hash[EP_MANIFEST_HASH_BYTES];
	int64_t mtime_ns, ctime_ns;
};

struct ep_manifest {
	struct ep_manifest_entry *e;   /* owned, sorted by path */
	size_t n, cap;
	uint64_t bytes;                /* sum of the sizes */
	bool incomplete;               /* a bound was hit or a directory could not be read */
	int refs;                      /* holders: a state, and the change set's last */
};

/*
 * Takes the manifest of workspace into *out (one holder: the caller; drop
 * it with ep_manifest_free), leaving out the top-level entry named exclude (may be
 * NULL). prev (may be NULL, borrowed) is an earlier manifest whose hashes
 * are reused for files whose stat data did not change. 0 or -errno (the
 * workspace cannot be opened; *out untouched).
 */
int ep_manifest_take(const char *workspace, const char *exclude, const struct ep_manifest *prev,
		     struct ep_manifest **out);
/* Drops one holder of m (NULL: nothing); the last frees it. */
void ep_manifest_free(struct ep_manifest *m);
/* Adds a holder to m and returns it. */
struct ep_manifest *ep_manifest_ref(struct ep_manifest *m);

/* True when both are complete and list the same paths with the same
 * kind, size and hash. */
bool ep_manifest_same(const struct ep_manifest *a, const struct ep_manifest *b);

/* Appends a's differences to b to ev: added, deleted, modified (no line
 * counts); changes_truncated when either is incomplete. */
void ep_manifest_compare(const struct ep_manifest *a, const struct ep_manifest *b, struct fg_evidence *ev);

#endif
