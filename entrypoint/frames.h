/*
 * frames.h - the entrypoint's side of the stream transport: each cycle file
 * and the summary it writes is also sent as one frame line on its standard
 * error (forge/frame.h, docs/reference/cycle-files.md).
 *
 * Stdio's stderr buffer is flushed first, and every line the entrypoint
 * writes ends with a newline (its own messages and the agents' prefixed
 * lines alike), so a frame always starts a line. The entrypoint is single
 * threaded and the only writer of its stderr (agents write into pipes it
 * reads), so no other output lands inside a frame.
 */
#ifndef EP_FRAMES_H
#define EP_FRAMES_H

#include "forge/cycle.h"
#include "forge/summary.h"

/* Sends the review_cycle frame of c (written for step) on fd 2. */
void ep_frame_cycle(const struct fg_cycle *c, const char *step);
/* Sends the review_summary frame of s on fd 2. */
void ep_frame_summary(const struct fg_summary *s);

struct cJSON;
/* The run id and step event frames name (borrowed; kept until the next
 * call): the task's, once it is loaded. Before, FORGE_RUN_ID and "". */
void ep_frames_set_task(const char *run_id, const char *step);
/* Sends an event frame (forge/frame.h: agent_running, signal_ignored,
 * role_failed, error) with fields (borrowed, may be NULL) on fd 2, sealed;
 * nothing without a seal key (no runner to read it). The runner takes
 * these events from the frames only, never from a line of output, so the
 * human-readable line is written as well, by the caller. */
void ep_frame_event(const char *name, const struct cJSON *fields);

#endif
