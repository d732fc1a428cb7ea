/*
 * output.h - what an agent's standard output says: its final answer,
 * whether the run succeeded, and what it consumed.
 *
 * One adapter per output format (FORGE_WORKER_OUTPUT, FORGE_REVIEWER_OUTPUT):
 *   text    the whole output is the answer, the exit status the outcome
 *           (output_text.c; the default, today's behaviour);
 *   claude  Claude Code -p --output-format json|stream-json (output_claude.c);
 *   codex   Codex CLI exec --json (output_codex.c);
 *   gemini  Gemini CLI --output-format json|stream-json (output_gemini.c).
 * A new format is one new file: a struct ep_output_ops and a line in the
 * table of output.c.
 *
 * The JSON formats share one streaming reader (output.c). Bytes are split
 * into lines (at most EP_OUTPUT_LINE_MAX bytes each; the rest of a longer
 * line is dropped). A line whose first non-blank character opens a JSON
 * object ('{' then '"' or '}') or array ('[' then '{', '[', ']', '"') starts
 * a JSON document, which may span lines (pretty-printed output); every
 * other line is noise and is skipped (CLI warnings, banners, a shell
 * transcript around the output). A document that is an object is one
 * message; a document that is an array (Claude's verbose json) gives each
 * of its elements as a message, read one at a time. No message may exceed
 * EP_OUTPUT_DOC_MAX bytes (a longer one is skipped). A document that does
 * not parse is noise. While a document is open, a line that starts in
 * column 0 and is by itself a whole JSON object or array closes it (the
 * open one is dropped), so one stray '{' cannot swallow a JSON-lines stream.
 * Memory is bounded by those two limits plus, for the text format, the
 * capture of capture.h.
 *
 * The adapter sees each message (ops->message) and records the outcome,
 * the answer, the usage and the session id in the struct; ep_output_finish()
 * then settles the result. Output that names no outcome (empty, only noise,
 * cut off inside a document, or JSON without a final result) is a failure
 * whose error says which. Nothing is invented: usage fields the CLI did not
 * report stay absent (usage.h). The text, error and session id are valid
 * UTF-8 (an invalid byte becomes U+FFFD): they end up in JSON files.
 *
 * Tools the CLI refused to run (Claude's permission_denials and
 * system/permission_denied) are kept in `denied` (denied.h) with a count;
 * retries the CLI reports (Claude's system/api_retry, Codex's
 * "Reconnecting... n/5") are counted in `retries`: progress, never the
 * outcome. ep_output_all_denied() says whether every tool call was refused.
 *
 * Protocol: ep_output_init() -> ep_output_feed()... -> ep_output_finish()
 * -> read ok, error, text, usage, session_id, denied -> ep_output_release().
 */
#ifndef EP_OUTPUT_H
#define EP_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "forge/buf.h"
#include "forge/denied.h"
#include "forge/usage.h"

struct cJSON;

#define EP_OUTPUT_LINE_MAX (8u * 1024 * 1024)
#define EP_OUTPUT_DOC_MAX (8u * 1024 * 1024)
/* The fallback answer (the last assistant text) keeps at most this many
 * bytes; an answer the CLI names is bounded by EP_OUTPUT_DOC_MAX, the text
 * format's by the capture. */
#define EP_OUTPUT_TEXT_MAX (EP_CAPTURE_HEAD_MAX + EP_CAPTURE_TAIL_MAX)

enum ep_output_format {
	EP_OUTPUT_TEXT,
	EP_OUTPUT_CLAUDE,
	EP_OUTPUT_CODEX,
	EP_OUTPUT_GEMINI
};

/* What the adapter concluded from the messages so far. */
enum ep_outcome {
	EP_OUTCOME_NONE,     /* nothing yet: at the end, a failure */
	EP_OUTCOME_OK,
	EP_OUTCOME_FAILED
};

struct ep_output;

struct ep_output_ops {
	const char *name;
	/* One message (each JSON document, or element of a top-level array).
	 * NULL: not a JSON format; the bytes go to o->capture instead. */
	void (*message)(struct ep_output *o, const struct cJSON *m);
	/* After the last message: fill answer from what the adapter kept when
	 * the CLI's result named none. May be NULL. */
	void (*finish)(struct ep_output *o);
	/* What a non-zero exit status means for this CLI, or NULL. May be NULL. */
	const char *(*exit_meaning)(int status);
};

struct ep_output {
	enum ep_output_format format;
	const struct ep_output_ops *ops;
	struct ep_capture capture;          /* text format: the output */
	/* the reader (output.c) */
	struct fg_buf line;
	bool line_cut;                      /* the current line outgrew EP_OUTPUT_LINE_MAX */
	struct fg_buf doc;                  /* the message being read */
	bool in_doc, in_array, collecting, doc_cut;
	int depth;
	bool in_string, escape;
	uint64_t bytes, messages, noise_lines, skipped;
	/* set by the adapters */
	enum ep_outcome outcome;
	char *answer;                       /* owned or NULL: the final answer the CLI named */
	struct fg_buf last;                 /* the last assistant text seen (a fallback) */
	bool last_stale;                    /* the next assistant text replaces last */
	char *reason;                       /* owned or NULL: why it failed */
	char *retry_note;                   /* owned or NULL: last non-fatal error seen */
	struct fg_usage usage;
	char *session_id;                   /* owned or NULL */
	struct fg_strvec denied;            /* distinct tools refused (fg_denied_add) */
	uint64_t tool_calls;                /* tool calls the output shows */
	uint64_t denied_calls;              /* refusals the output shows */
	uint64_t retries;                   /* retries the CLI reported */
	/* settled by ep_output_finish() */
	bool ok;
	char *error;                        /* owned; NULL when ok */
	char *text;                         /* owned, never NULL after finish */
};

/* "text", "claude", "codex", "gemini": 0, or -EINVAL for another name. */
int ep_output_format_parse(const char *s, enum ep_output_format *out);
const char *ep_output_format_name(enum ep_output_format f);

void ep_output_init(struct ep_output *o, enum ep_output_format f);
void ep_output_release(struct ep_output *o);
/* Feeds n bytes of the agent's standard output (never fails). */
void ep_output_feed(struct ep_output *o, const void *p, size_t n);
/* Ends the input and settles ok, error, text (see above). Call once. */
void ep_output_finish(struct ep_output *o);
/* What exit status means for format f's CLI (Gemini documents 41, 42, 44,
 * 52, 53, 54, 55 and 130; Codex's argument parser exits 2), or NULL. Static. */
const char *ep_output_exit_meaning(enum ep_output_format f, int status);
/* True when the CLI refused at least one tool call and ran none: the agent
 * could not do anything it needed a tool for. */
bool ep_output_all_denied(const struct ep_output *o);
/* When the CLI's reported cost was refused (usage.h: above 1e6 USD for one
 * agent run, negative or not finite), says so once as a warning naming who
 * (the role, "agent-output"): the cost is then null everywhere. */
void ep_output_say_refused_cost(const struct ep_output *o, const char *who);
/* {"ok", "error", "text", "usage", "session_id", "denied_tools": [names]}
 * (owned by the caller). */
struct cJSON *ep_output_to_cjson(const struct ep_output *o);

/* For the adapters: sets o->answer (a copy of s, or NULL). */
void ep_output_set_answer(struct ep_output *o, const char *s);
/* For the adapters: the CLI's session (or thread) id: a copy of id
 * replaces the one kept; NULL or "" keeps it. */
void ep_output_set_session(struct ep_output *o, const char *id);
/* For the adapters: the handler of one kind of message, by its "type". */
struct ep_output_on {
	const char *type;                   /* NULL ends a table */
	void (*fn)(struct ep_output *o, const struct cJSON *m);
};
/* For the adapters: runs the handler of table whose type is m's "type".
 * Returns 1 when one ran, 0 when m has no "type" or table none for it. */
int ep_output_on_type(struct ep_output *o, const struct cJSON *m, const struct ep_output_on *table);
/* For the adapters: a failure with reason (copied). */
void ep_output_fail(struct ep_output *o, const char *reason);
/* The adapters read members with fg_json_str() and fg_json_num() (json.h). */
/* For the adapters: one refused call of tool name (borrowed; an invalid
 * name is counted but not kept). */
void ep_output_deny(struct ep_output *o, const char *name);

extern const struct ep_output_ops ep_output_text;
extern const struct ep_output_ops ep_output_claude;
extern const struct ep_output_ops ep_output_codex;
extern const struct ep_output_ops ep_output_gemini;

#endif
