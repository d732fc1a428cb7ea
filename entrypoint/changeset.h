/*
 * changeset.h - the workspace's state and what changed between two states
 * (what the change set, "no change, no review" and "the reviewer must not
 * change the workspace" rest on).
 *
 * Two ways, chosen once per step by ep_changeset_init():
 *   - git: the workspace holds .git (a directory, or a file naming one). A
 *     state is a git tree id, written by the git CLI into a PRIVATE git
 *     directory in the entrypoint's temporary directory (GIT_DIR, its own
 *     GIT_INDEX_FILE, objects/info/alternates naming the repository's
 *     objects read-only). The repository's index, refs, hooks and config
 *     are never read as configuration nor written: git runs with no system
 *     or global config, no attributes file, no fsmonitor, no hooks, and
 *     before every run the private directory loses any config, info/,
 *     hooks/ or commondir an agent may have put there; so nothing the
 *     workspace or an agent wrote can make it run a program (a filter or
 *     diff driver that an in-tree .gitattributes names needs a config
 *     entry, and the only config git reads is our command line). .gitignore files
 *     and .git/info/exclude are honoured. The private index starts as a
 *     copy of the repository's index, so unchanged tracked files are
 *     matched by their stat data and never read again.
 *   - manifest: anywhere else. A state is the sorted list of (path, type,
 *     size, content hash) of every file below the workspace, at most
 *     EP_MANIFEST_FILES_MAX entries (past that the state is "incomplete":
 *     never equal to another, and the change list says it was cut); a
 *     file whose size, mtime, ctime and inode did not move since the last
 *     state is not read again. No line counts and no diff.
 * The cycle directory's top (".forge", or the first component of
 * FORGE_CYCLE_DIR) is never part of a state.
 *
 * Protocol: ep_changeset_init() before the first worker run; then
 * ep_changeset_snapshot() whenever a state is wanted, ep_changeset_same()
 * to compare two, ep_changeset_compare() to list the differences (and, in
 * git, write the unified diff, at most EP_DIFF_MAX bytes); release states
 * and the change set at the end. Every git run is bounded by
 * EP_GIT_TIMEOUT_S and its captured output by EP_GIT_OUT_MAX.
 */
#ifndef EP_CHANGESET_H
#define EP_CHANGESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pid1.h"
#include "forge/evidence.h"

#define EP_MANIFEST_FILES_MAX 200000
#define EP_DIFF_MAX (1024u * 1024)
#define EP_GIT_TIMEOUT_S 300
#define EP_GIT_OUT_MAX (4u * 1024 * 1024)

struct ep_manifest;

/* What a git repository holds beside its objects that decides what a git
 * run there may run, and no tree lists: .git/config, .git/info/attributes,
 * .git/hooks/ (each a BLAKE2b-256 of its content; hooks/ of each entry's
 * name and content). */
#define EP_GITMETA_N 3
#define EP_GITMETA_HASH 32

/* One state of the workspace. */
struct ep_state {
	bool valid;                    /* a snapshot was taken */
	char tree[65];                 /* git: the tree id */
	struct ep_manifest *m;         /* manifest: owned */
	unsigned char meta[EP_GITMETA_N][EP_GITMETA_HASH];  /* git: the repository's own files */
};

struct ep_changeset {
	char *workspace;               /* owned */
	char *exclude;                 /* owned: the workspace-relative top left out (".forge") */
	bool git;
	char *gitdir;                  /* owned: the private git directory (git mode) */
	char *index;                   /* owned: its index file */
	char *repo_exclude;            /* owned or NULL: our excludes file (the repository's
	                                * info/exclude and the cycle directory's top) */
	char **envp;                   /* owned, NULL-terminated: git's environment */
	char *alternates;              /* owned or NULL: objects/info/alternates as we wrote it */
	char *repo;                    /* owned or NULL: the repository's git directory (git mode) */
	size_t nenv;
	struct ep_manifest *last;      /* manifest: the last state taken (a holder: ep_manifest_ref) */
	char err[512];                 /* the last failure, for messages */
};

/*
 * Sets up cs for the workspace (borrowed strings are copied). tmpdir: a
 * private directory of ours; exclude: the workspace-relative path whose
 * first component is left out. Git mode when workspace/.git exists and git
 * runs; else manifest mode. Returns 0 (never fails: a git that cannot be
 * set up falls back to the manifest, cs->err says why).
 */
int ep_changeset_init(struct ep_changeset *cs, struct ep_pid1 *p, const char *workspace,
		      const char *tmpdir, const char *exclude);
void ep_changeset_release(struct ep_changeset *cs);

/* The workspace's state now into st (released first). 0, or a negative
 * errno with cs->err set (st then invalid: never the same as another). */
int ep_changeset_snapshot(struct ep_changeset *cs, struct ep_pid1 *p, struct ep_state *st);
void ep_state_release(struct ep_state *st);
/* A copy of src into dst (released first; a manifest is shared, not copied). */
void ep_state_copy(struct ep_state *dst, const struct ep_state *src);
/* Moves src into dst (dst released first; src left empty). */
void ep_state_move(struct ep_state *dst, struct ep_state *src);

/* True when a and b are both valid, complete and equal (in git mode, the
 * repository's config, info/attributes and hooks too). */
bool ep_changeset_same(const struct ep_state *a, const struct ep_state *b);

/*
 * Appends the changes from a to b to ev (has_changes set, since_review as
 * given); in git mode a changed .git/config, .git/info/attributes or
 * .git/hooks/ is listed as a modified path of that name. diff_fd >= 0: the
 * unified diff (git mode) is written there, at
 * most EP_DIFF_MAX bytes, and *diffed set when anything was. 0 or a
 * negative errno (cs->err set).
 */
int ep_changeset_compare(struct ep_changeset *cs, struct ep_pid1 *p, const struct ep_state *a,
			 const struct ep_state *b, struct fg_evidence *ev, int diff_fd, bool *diffed);

/* In a git workspace, adds "/TOP/" (TOP: cs->exclude) to the repository's
 * info/exclude unless a line already says so; the path is opened below
 * the workspace without following any symlink. 0, 1 when it was there
 * already, or a negative errno (cs->err set). */
int ep_changeset_exclude_in_repo(struct ep_changeset *cs);

/* True when path (workspace-relative, as listed) is configuration an agent
 * CLI or git loads by itself: .claude/, .gemini/, .codex/, .mcp.json,
 * CLAUDE.md, CLAUDE.local.md, AGENTS.md, AGENTS.override.md, GEMINI.md (at
 * any depth), .gitattributes, .gitmodules, .git/config, .git/info/attributes,
 * .git/hooks/. The reviewer's prompt marks such a change as such. */
bool ep_changeset_is_agent_config(const char *path);

#endif
