/*
 * denied.h - the tools an agent's CLI refused to run (Claude Code's
 * permission_denials and system/permission_denied): kept per role in the
 * cycle file, so a reviewer that could not run the tests is visible.
 *
 * A tool name is kept when it is 1 to FG_DENIED_NAME_MAX bytes of
 * [A-Za-z0-9_.:*()-] (Claude's names: "Bash", "mcp__srv__tool"); others are
 * dropped, never escaped, so a name is safe in a log line and in JSON. Each
 * role keeps at most FG_DENIED_MAX distinct names, in the order first seen.
 *
 * JSON shape: "denied_tools": {"worker": ["Bash"], "reviewer": ["Bash",
 * "Edit"]}; a role without denials is left out and the member is omitted
 * when both are empty. A reader keeps the valid names of each role's array
 * and ignores everything else; it never fails.
 */
#ifndef FORGE_DENIED_H
#define FORGE_DENIED_H

#include <stdbool.h>

#include "forge/buf.h"

struct cJSON;

#define FG_DENIED_MAX 32
#define FG_DENIED_NAME_MAX 128

struct fg_denied {
	struct fg_strvec worker;
	struct fg_strvec reviewer;
};

void fg_denied_init(struct fg_denied *d);
void fg_denied_release(struct fg_denied *d);
bool fg_denied_empty(const struct fg_denied *d);

/* True when name is a tool name we keep (above). */
bool fg_denied_name_ok(const char *name);
/* Adds name (borrowed) to v unless it is invalid, already there, or v
 * holds FG_DENIED_MAX names. True when v now holds it. */
bool fg_denied_add(struct fg_strvec *v, const char *name);
/* Adds every name of src to dst (fg_denied_add). */
void fg_denied_merge(struct fg_strvec *dst, const struct fg_strvec *src);
/* "A, B, C" of v into b (nothing for an empty v). */
void fg_denied_join(const struct fg_strvec *v, struct fg_buf *b);

/* The names of v as a new JSON array (owned; never NULL). */
struct cJSON *fg_denied_array(const struct fg_strvec *v);
/* Adds the valid names of the JSON array a (borrowed; anything else is
 * ignored) to v. */
void fg_denied_read_array(struct fg_strvec *v, const struct cJSON *a);
/* Adds "denied_tools" to o when d is not empty. */
void fg_denied_add_to(struct cJSON *o, const struct fg_denied *d);
/* Fills d (released first) from o's "denied_tools", lenient as above. */
void fg_denied_from(struct fg_denied *d, const struct cJSON *o);

#endif
