/*
 * fge2e.h - helpers shared by the end-to-end tests that run the real
 * forge-runner and forge-entrypoint on a temporary tree: scripted sh agents
 * and a scripted entrypoint, files inside a directory, JSON files and the
 * runner's JSON log.
 *
 * Every helper that reads something a test depends on fails the test (with
 * the path and what it found) instead of returning an error; the "or_null"
 * variants are for tests that assert absence themselves.
 */
#ifndef FGE2E_H
#define FGE2E_H

#include <cjson/cJSON.h>
#include <sys/types.h>

#include "fgtest.h"

/*
 * The head of a scripted entrypoint (forge-runner run --entrypoint SCRIPT):
 * it takes --workspace, --step and --skill from the runner's arguments, sets
 * D to the step's directory and defines two shell functions:
 *   cyc N VERDICT [RUN_ID [FEEDBACK]]  writes review_cycle_N.json into D (or
 *       into $DIR when set) atomically (a temp file, then mv); max_cycles is
 *       $MAX (default 3), the run id defaults to $FORGE_RUN_ID, the feedback
 *       to "fbN", the skill is the one the runner passed.
 *   cycs FIRST LAST VERDICT  what cyc N VERDICT does for N = FIRST..LAST,
 *       one file after the other, but with one fg-seal for all of them
 *       (fg-seal --cycles) instead of a process or two a cycle: thousands of
 *       cycle files in seconds, under AddressSanitizer too.
 *   wait_log TEXT  waits until the file $LOG contains TEXT (exit 99 after
 *       about 30 s), so a script acts only after the runner logged something.
 *   fgseal [STEP NAME]  seals the record on its stdin with the run's key
 *       (tests/tools/fg-seal.c): the head reads the key line the runner
 *       sends on stdin (FORGE_SEAL_KEY_STDIN=1) into $SEALKEY, as the real
 *       entrypoint does; cyc seals every file it writes, frames are sealed
 *       by piping them through `fgseal`.
 */
extern const char FGE_FAKE_EP_HEAD[];

/* The lines of FGE_FAKE_EP_HEAD that read the key and define fgseal, for a
 * test's own script head (after its #! line). In a container, where the
 * build tree is not, fgseal runs the fg-seal next to the script. */
#define FGE_SEAL_LINES \
	"SEALKEY=\n" \
	"[ \"$FORGE_SEAL_KEY_STDIN\" = 1 ] && IFS= read -r SEALKEY\n" \
	"fgseal() { s='" FG_SEAL_BIN "'; [ -x \"$s\" ] || s=${0%/*}/fg-seal; \"$s\" \"$SEALKEY\" \"$@\"; }\n"

/* Writes dir/name = head + body + "\n" and makes it executable. Returns the
 * owned path. head and body are borrowed; head may be "#!/bin/sh\n" or
 * FGE_FAKE_EP_HEAD (which starts with the #! line). */
char *fge_script(const char *dir, const char *name, const char *head, const char *body);

/* dir/name helpers (paths built and freed here): write (creating parents),
 * read (owned, NULL if unreadable), exists (lstat, 1 or 0). */
void fge_write_in(const char *dir, const char *name, const char *content);
char *fge_read_in(const char *dir, const char *name);
int fge_exists_in(const char *dir, const char *name);

/* Makes dir a git repository holding everything in it in one commit, by
 * the host's git CLI; git trusts dir whoever owns it (a global config of
 * the call's own says safe.directory = *; the user's is not read). Fails
 * the test when git fails. */
void fge_git_commit_all(const char *dir);

/* The file at path parsed as JSON (owned). Fails the test when it is missing
 * or not JSON; context (borrowed, may be NULL) is added to the message, e.g.
 * the program's stderr. */
cJSON *fge_json_file(const char *path, const char *context);

/* Every line of text (a JSON-lines log) parsed, in order, as an owned cJSON
 * array. Fails the test on a line that is not JSON (an empty line included);
 * text may be empty. */
cJSON *fge_json_lines(const char *text);

/* Number of objects in events whose "event" is event and, when key is not
 * NULL, whose string key equals val. */
int fge_count_events(const cJSON *events, const char *event, const char *key, const char *val);

/* The first such object (borrowed from events), or NULL. */
const cJSON *fge_find_event(const cJSON *events, const char *event, const char *key, const char *val);

/* The first object of arr (an array, or NULL for none) whose string member
 * key equals val (borrowed from arr), or NULL: a cycle's review of a role,
 * a span's attribute of a key. */
const cJSON *fge_find_by(const cJSON *arr, const char *key, const char *val);

/* The first object whose "event" is event and, for cycle >= 1, whose
 * number "cycle" is cycle (borrowed from events), or NULL. */
const cJSON *fge_find_cycle_event(const cJSON *events, const char *event, int cycle);

/* Skips the test with the message why (Criterion's skip) unless it runs
 * as root: for a test of what only uid 0 could do. */
void fge_skip_unless_root(const char *why);

/* Rotates the lower-case letters of s by 13 in place: a secret an agent
 * writes this way proves it had the value without the value on disk. */
void fge_rot13(char *s);

/* o's string member k (borrowed); fails the test when it is not a string. */
const char *fge_jstr(const cJSON *o, const char *k);
/* o's string member k (borrowed), or NULL when absent or not a string. */
const char *fge_jstr_or_null(const cJSON *o, const char *k);
/* o's number member k as int; fails the test when it is not a number. */
int fge_jint(const cJSON *o, const char *k);
/* Fails the test (naming the caller's file and line) unless each string
 * member of o named in the NULL-terminated list of name, value pairs has
 * that value. */
#define fge_assert_strs(o, ...) \
	fge_assert_strs_at((o), (const char *const[]){ __VA_ARGS__, NULL }, __FILE__, __LINE__)
void fge_assert_strs_at(const cJSON *o, const char *const *kv, const char *file, int line);
/* 1 when o's member k is true. */
int fge_jtrue(const cJSON *o, const char *k);

/*
 * A signaller: a process of the test's own, outside forge-entrypoint's
 * tree, that sends the signals a stand-in agent asks for. The entrypoint ignores stop signals from its own descendants, so an
 * agent that must have the entrypoint "receive SIGTERM" at a given moment
 * asks this process: FGE_OUTSIDE_KILL defines the shell function
 * `outside_kill SIG PID` (e.g. `outside_kill TERM $PPID`), which appends
 * the request to $SIGDIR/req and returns once it was sent. Start it before
 * the entrypoint with SIGDIR=dir in the agents' environment; stop it after.
 */
extern const char FGE_OUTSIDE_KILL[];
/* Forks the signaller watching dir/req (dir exists); returns its pid. */
pid_t fge_signaller_start(const char *dir);
/* Kills and reaps it. */
void fge_signaller_stop(pid_t pid);

/*
 * Runs argv (forge-runner run ... with the real entrypoint, NULL-terminated)
 * with the two stand-in agents of root: the worker `sh root/work.sh`, the
 * reviewer `sh root/rev.sh` followed by rev_args ("" or " {role}"); SAVE=save
 * reaches them by name (FORGE_AGENT_ENV), the AUTO_REVIEW_* settings and
 * FORGE_LOG_LEVEL are cleared, and env's changes (NULL-terminated, may be
 * NULL) come last. At most 60 s; fails the test when the runner cannot start
 * or hangs.
 */
void fge_run_with_agents(struct fgt_proc *p, const char *const *argv, const char *root,
			 const char *rev_args, const char *save, const char *const *env);

#endif
