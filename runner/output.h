/*
 * output.h - what the runner makes of the sandbox's output lines before they
 * become `output` log events: the level of each line, the failure reason a
 * line carries, hints for the engine CLI's own errors, and a per-run cap on
 * how much is logged.
 *
 * Levels, read with the entrypoint's own definition (forge/msg.h,
 * fg_msg_level_of()): its lines "forge-entrypoint: error: ..." and
 * "forge-entrypoint: the task failed: ..." are ERROR, "forge-entrypoint:
 * warning: ..." is WARN (a review that does not happen, a frontmatter typo,
 * a refused review.md), every other line INFO. Agent lines cannot be raised:
 * the entrypoint prefixes each with "[worker] " / "[reviewer] ". The last
 * ERROR line, without "forge-entrypoint: ", is the run's failure reason
 * (run_exit's `reason`); without one, the entrypoint's last line other than
 * a warning (rn_output_reason()).
 *
 * Cap: at most RN_OUTPUT_LOG_MAX bytes of `output` events are written to
 * the log per run (350 MB of agent output made a 386 MB log), counted as the
 * log gets them: the whole event line, timestamp, escapes and JSON included
 * (counting the text once let 1 MB of empty agent lines make a 103 MB
 * JSON log, the cap being reached near 750 MB). A line that does not fit in
 * what is left is counted, not logged, and rn_output_finish() logs one
 * `output_dropped` event saying how many lines and bytes of their text were
 * dropped. Lines below the log level cost nothing. The failure reason is
 * still taken from dropped lines.
 *
 * Frames, not lines: the sandbox's agents may write anything, so once the
 * entrypoint has started (the first sealed event frame, rn_output_event())
 * no line is read at all: each is logged as `output` at INFO, whatever its
 * prefix. Events (agent_running, signal_ignored, role_failed) and the
 * failure reason then come from sealed event frames only; an error frame's
 * text is logged as the entrypoint's `output` line at ERROR (and the same
 * line, written after the frame, is not logged again). Before it, only
 * the engine's CLI and the entrypoint's start-up (no agent yet) write, and
 * their lines are read as below. A continuation piece of a line longer
 * than the session's line buffer (rn_output_piece()) is never read.
 *
 * The `isolation` event frame (the agents' box, forge/isolation.h: its
 * fields are the isolation object) is kept in isolation, the first one
 * only, and logged as the `isolation` event (mechanism, abi, scoped,
 * agent_uid, root_dropped, reason).
 *
 * Protocol: rn_output_init() -> rn_output_line() / rn_output_piece() /
 * rn_output_event() as output and frames come ->
 * rn_output_finish() once -> rn_output_release(). Loop thread only.
 */
#ifndef RN_OUTPUT_H
#define RN_OUTPUT_H

#include <stdint.h>

#include "engine.h"
#include "forge/frame.h"
#include "forge/isolation.h"
#include "log.h"

#define RN_OUTPUT_LOG_MAX (64ull * 1024 * 1024)
/* Longest failure reason kept (bytes, cut on a UTF-8 boundary). */
#define RN_OUTPUT_REASON_MAX 1024

struct rn_output {
	struct rn_log *log;
	const struct rn_engine_ops *ops;     /* for engine hints; may be NULL */
	const struct rn_engine_params *ep;
	uint64_t max;            /* the cap: RN_OUTPUT_LOG_MAX; FORGE_TEST_OUTPUT_LOG_MAX (a byte
				  * count, test-only) lowers it for a run, never raises it */
	uint64_t logged;         /* bytes of output events written to the log */
	uint64_t dropped_bytes;  /* text of the dropped lines */
	uint64_t dropped_lines;
	char *reason;            /* owned: the last ERROR line's text, or NULL */
	char *last_said;         /* owned: the entrypoint's last other line (not a warning), or NULL */
	char *hint;              /* owned: the first engine hint (the first runtime failure's
				  * when a line shows one), or NULL */
	int engine_down;         /* a line said the engine's daemon is unreachable */
	int engine_runtime;      /* a line said the engine or its runtime could not start the container */
	int started;             /* a sealed event frame came: no line is read any more */
	char *said;              /* owned: the error line an error frame logged, or NULL */
	struct fg_isolation isolation;  /* the entrypoint's isolation event frame, the first one */
};

void rn_output_init(struct rn_output *o, struct rn_log *log, const struct rn_engine_ops *ops,
		    const struct rn_engine_params *ep);

/* The level a line is logged at, and in *reason (may be NULL) the text that
 * names a failure (a pointer into line) or NULL. Pure. */
enum rn_log_level rn_output_level(const char *line, const char **reason);

/* Logs one line of stream ("stdout"/"stderr") within the cap, keeps its
 * failure reason, and logs an `engine_hint` warning the first time the
 * engine's ops->hint recognises a line (and again when a later line is the
 * first to show a runtime failure after a hint of another kind). */
void rn_output_line(struct rn_output *o, const char *stream, const char *line);

/* Logs a continuation piece of a long line as output, unread. */
void rn_output_piece(struct rn_output *o, const char *stream, const char *line);

/* One sealed event frame (stream.h event_cb): agent_running, signal_ignored
 * and role_failed are logged as events of their own, error's reason is kept
 * as the failure reason; every event frame marks the entrypoint started. */
void rn_output_event(struct rn_output *o, const struct fg_frame *fr);

/* The failure reason: the last ERROR line's text, else the entrypoint's
 * last line that is not a warning, else NULL. Borrowed. */
const char *rn_output_reason(const struct rn_output *o);

/* Logs `output_dropped` when lines were dropped. */
void rn_output_finish(struct rn_output *o);

void rn_output_release(struct rn_output *o);

#endif
