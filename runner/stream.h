/*
 * stream.h - the stream source: cycle events read from frames on the
 * sandbox's standard error (forge/frame.h, docs/reference/cycle-files.md).
 *
 * The session feeds every byte of the engine's stderr to rn_stream_feed()
 * (any engine: the local entrypoint's own stderr, `docker run`'s attached
 * one). A line is looked at only from its first byte: one starting with
 * FG_FRAME_PREFIX is collected up to FG_FRAME_MAX bytes and parsed with
 * fg_frame_parse() (the cycle and summary validation of the files); every
 * other line is skipped without being kept. A valid review_cycle frame of
 * the expected run id and step becomes an rn_cycle_report with source
 * `stream` (dir: opts.dir, name: review_cycle_N.json, raw: the cycle as
 * fg_cycle_to_json() prints it, truncated set for a shortened frame) and
 * goes to opts.cycle_cb, the same report the watch delivers, so the
 * session merges both; a review_summary frame goes to opts.summary_cb.
 *
 * Refusals, logged as warnings: a frame longer than FG_FRAME_MAX or invalid
 * (`frame_invalid`, the first one logged, all counted); a frame of another
 * run id or step (`frame_ignored`, logged once per run, counted). A run id
 * "" in a frame (FORGE_RUN_ID unset in the sandbox) is accepted like a cycle
 * file without run_id. At most RN_WATCH_MAX_CYCLE_FILES distinct cycle
 * numbers are reported; frames of further numbers are counted once per
 * number (rn_stream_dropped()) and the first is logged as `cycle_limit`.
 *
 * Memory: one line buffer of at most FG_FRAME_MAX bytes, and a bitmap of
 * FG_CYCLE_NUMBER_MAX bits once the first cycle frame arrives. No handles:
 * the session owns the pipe; this is a parser with callbacks.
 */
#ifndef RN_STREAM_H
#define RN_STREAM_H

#include <stddef.h>

#include "forge/buf.h"
#include "forge/frame.h"
#include "forge/summary.h"
#include "log.h"
#include "cycle_report.h"

struct rn_stream_opts {
	const char *run_id;     /* expected run id (borrowed), NULL: accept any */
	const char *step;       /* expected step (borrowed) */
	const char *dir;        /* the step directory as reports name it (borrowed) */
	/* The run's seal key (borrowed), or NULL: every frame is reported as
	 * FG_SEAL_UNVERIFIED. A frame of this run and step whose seal does not
	 * verify is reported with its status (never tracked as a cycle number). */
	const struct fg_seal_key *key;
	struct rn_log *log;     /* warnings (borrowed) */
	void (*cycle_cb)(void *data, const struct rn_cycle_report *r);
	void (*summary_cb)(void *data, const struct fg_summary *s, enum fg_seal_status seal);
	/* An event frame (forge/frame.h) whose seal verified with key; frames
	 * without a key, unsealed or badly sealed are dropped unseen. */
	void (*event_cb)(void *data, const struct fg_frame *fr);
	void *data;
};

struct rn_stream {
	struct rn_stream_opts opts;
	struct fg_buf line;     /* the frame line being collected */
	int at_start;           /* the next byte starts a line */
	int collecting;         /* the current line matches the prefix so far */
	int overlong;           /* the current frame line passed FG_FRAME_MAX */
	unsigned char *seen;    /* owned bitmap over cycle numbers, or NULL */
	size_t nseen, ndropped;
	size_t frames;          /* valid frames of this run */
	size_t invalid, ignored;
};

/* Fills s; opts is copied (its pointers stay borrowed). */
void rn_stream_init(struct rn_stream *s, const struct rn_stream_opts *opts);
/* Feeds n bytes of the sandbox's stderr; callbacks run from here. */
void rn_stream_feed(struct rn_stream *s, const char *p, size_t n);
/* The stream ended: a last line without its newline is dropped (a frame
 * always ends with one), counted as invalid when it was a frame. */
void rn_stream_end(struct rn_stream *s);
/* Distinct cycle numbers left unreported past RN_WATCH_MAX_CYCLE_FILES. */
size_t rn_stream_dropped(const struct rn_stream *s);
void rn_stream_release(struct rn_stream *s);

#endif
