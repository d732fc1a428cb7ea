/*
 * frame.h - cycle events on the sandbox's standard error ("frames"), the
 * transport that works wherever the runner cannot see the workspace
 * (docs/reference/cycle-files.md, "Frames on standard error").
 *
 * A frame is one line the entrypoint itself writes on its stderr:
 *   @@forge-review {"v":1,"type":"review_cycle","run_id":R,"step":S,
 *                   "file":"review_cycle_N.json","cycle":{...}}
 *   @@forge-review {"v":1,"type":"review_summary","run_id":R,"step":S,
 *                   "file":"review_summary.json","summary":{...}}
 * The JSON is compact (no newline inside: cJSON escapes control characters
 * in strings). A line is a frame only when it starts with FG_FRAME_PREFIX;
 * agent output never does, since the entrypoint prefixes each agent line
 * with "[worker] " or "[reviewer] ". The entrypoint's own message lines and
 * their levels are defined beside this, in forge/msg.h.
 *
 * Bounds: a frame line, prefix and newline included, is at most
 * FG_FRAME_MAX bytes. A cycle whose frame would be longer is sent with its
 * feedback emptied and "truncated": true at the top level of the frame; if
 * that is still too long, with its required fields, run_id, synthetic and
 * stalled only. The cycle file keeps the whole cycle either way.
 */
#ifndef FORGE_FRAME_H
#define FORGE_FRAME_H

#include <stdbool.h>
#include <stddef.h>

#include "forge/cycle.h"
#include "forge/summary.h"

#define FG_FRAME_PREFIX "@@forge-review "
#define FG_FRAME_PREFIX_LEN (sizeof(FG_FRAME_PREFIX) - 1)
#define FG_FRAME_MAX (64 * 1024)
#define FG_FRAME_VERSION 1

enum fg_frame_type { FG_FRAME_CYCLE, FG_FRAME_SUMMARY, FG_FRAME_EVENT };

/* The file member of an event frame, and what its seal binds to. */
#define FG_FRAME_EVENT_FILE "event"
/* Longest event name. */
#define FG_FRAME_EVENT_NAME_MAX 64

struct cJSON;

struct fg_frame {
	enum fg_frame_type type;
	char *run_id;                /* owned, "" when the writer had none */
	char *step;                  /* owned */
	bool truncated;              /* cycle frames: the feedback (and maybe more) was left out */
	struct fg_cycle cycle;       /* FG_FRAME_CYCLE: validated like a cycle file */
	struct fg_summary summary;   /* FG_FRAME_SUMMARY: validated like review_summary.json */
	/* FG_FRAME_EVENT: the event's name, its sequence number (1, 2, ... per
	 * run of the entrypoint; the seal binds it as the cycle number) and its
	 * fields (an object of strings and numbers, owned). */
	char *event;
	int seq;
	struct cJSON *fields;
};

void fg_frame_init(struct fg_frame *f);
void fg_frame_release(struct fg_frame *f);

/*
 * The frame line of cycle c of step (run_id: c->run_id, else ""), newline
 * included, sealed with k when k is set (forge/seal.h: the frame object's
 * last member "seal", kind "frame", bound to the header's run_id, step,
 * file and the cycle number, 0 for a summary), at most FG_FRAME_MAX bytes: owned, *len set. NULL when even the
 * smallest form does not fit (names of absurd length); nothing to send.
 */
struct fg_seal_key;
char *fg_frame_cycle_line(const struct fg_cycle *c, const char *step, const struct fg_seal_key *k,
			  size_t *len);
/* The same for the summary (step and run_id from s). NULL when over FG_FRAME_MAX. */
char *fg_frame_summary_line(const struct fg_summary *s, const struct fg_seal_key *k, size_t *len);

/* The cycle as its smallest frame carries it (feedback "", only the
 * required fields, run_id, synthetic and stalled): a new cJSON object
 * (owned). Two forms of one cycle, whole and shortened, agree on it. */
struct cJSON *fg_frame_cycle_min(const struct fg_cycle *c);

/*
 * An event frame: what the entrypoint tells the runner besides cycles
 * (agent_running, signal_ignored, role_failed, error), so that no line of
 * output has to be read for it:
 *   @@forge-review {"v":1,"type":"event","run_id":R,"step":S,"file":"event",
 *                   "event":{"name":N,"seq":Q,"fields":{...}},"seal":...}
 * fields (borrowed, may be NULL: {}) holds strings and numbers only; seq is
 * the frame's number in the run (from 1). Owned line, *len set; NULL when
 * over FG_FRAME_MAX.
 */
char *fg_frame_event_line(const char *run_id, const char *step, const char *name, int seq,
			  const struct cJSON *fields, const struct fg_seal_key *k, size_t *len);

/* 1 when the len bytes of line start with FG_FRAME_PREFIX. */
int fg_frame_is(const char *line, size_t len);

/*
 * Parses one frame line (newline not included; at most FG_FRAME_MAX bytes).
 * Checks: the prefix, valid JSON object, v == FG_FRAME_VERSION, a known
 * type, run_id and step strings, file naming the cycle's canonical file (or
 * review_summary.json, or "event" with an event object: name 1 to
 * FG_FRAME_EVENT_NAME_MAX bytes of [a-z_], seq 1..INT_MAX, fields an object
 * of strings and numbers), the cycle (fg_cycle_parse()) or summary
 * (fg_summary_parse()) valid, and a run_id inside them equal to the frame's.
 * On 0 f is filled (earlier contents released); on -EINVAL err says why
 * and f is left initialised-empty.
 */
int fg_frame_parse(struct fg_frame *f, const char *line, size_t len, char *err, size_t errlen);

#endif
