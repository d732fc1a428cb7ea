/*
 * isolation.h - what box the agents of a run ran in: the `isolation` object
 * of the entrypoint's start line, of review_summary.json and of the runner's
 * result file (docs/reference/cycle-files.md, "Isolation").
 *
 *   {"mechanism": "landlock", "abi": 7, "scoped": ["signal",
 *    "abstract_unix_socket"], "agent_uid": 10001, "root_dropped": false}
 *   {"mechanism": "none", "abi": 0, "scoped": [], "agent_uid": 1000,
 *    "root_dropped": false, "reason": "the kernel has no Landlock (...)"}
 *
 * The entrypoint fills it once, at start (entrypoint/sandbox.h); the
 * runner only reads it (from the entrypoint's sealed event frame, then
 * from the sealed summary, which wins).
 */
#ifndef FORGE_ISOLATION_H
#define FORGE_ISOLATION_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;

/* Bits of fg_isolation.scoped (Landlock ABI 6 and later). */
#define FG_SCOPE_SIGNAL (1u << 0)
#define FG_SCOPE_ABSTRACT_UNIX_SOCKET (1u << 1)

#define FG_ISOLATION_REASON_MAX 256

struct fg_isolation {
	bool known;                 /* filled (written as "isolation"); false: absent */
	bool landlock;              /* mechanism "landlock", else "none" */
	int abi;                    /* the kernel's Landlock ABI in use, 0 when none */
	unsigned scoped;            /* FG_SCOPE_* */
	long agent_uid;             /* the uid the agents run as, -1 unknown */
	bool root_dropped;          /* the entrypoint is uid 0 and its agents are not */
	char reason[FG_ISOLATION_REASON_MAX];  /* mechanism none: why; else "" */
};

/* The object above (owned by the caller). */
struct cJSON *fg_isolation_to_cjson(const struct fg_isolation *iso);

/* Reads o (borrowed) into *iso: 0 (known set), or -EINVAL when o is not an
 * isolation object (then *iso is left untouched). Unknown scope names are
 * ignored; a reason longer than FG_ISOLATION_REASON_MAX is cut. */
int fg_isolation_from_cjson(struct fg_isolation *iso, const struct cJSON *o);

/* The same as an event frame's fields (forge/frame.h: strings and numbers
 * only): mechanism, abi, scoped ("signal,abstract_unix_socket"), agent_uid,
 * root_dropped (0 or 1), reason (none only). Owned by the caller. */
struct cJSON *fg_isolation_to_fields(const struct fg_isolation *iso);
/* Reads such fields (borrowed) into *iso: 0, or -EINVAL (untouched). */
int fg_isolation_from_fields(struct fg_isolation *iso, const struct cJSON *o);

/* The scope names of bits, comma-separated ("signal,abstract_unix_socket",
 * "" for none), into buf of n bytes. */
void fg_isolation_scope_names(unsigned bits, char *buf, size_t n);

#endif
