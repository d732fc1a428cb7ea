/*
 * seal.h - sealed records: a MAC that only the holder of the
 * run's key can make, over a cycle file, the summary or a frame, bound to
 * where the record belongs (docs/reference/cycle-files.md, "Seals";
 * docs/security.md).
 *
 * The key: 32 random bytes from the kernel (libsodium randombytes_buf),
 * fresh for every run, made by forge-runner and handed to the entrypoint as
 * the first line of its standard input (64 lowercase hex digits and "\n",
 * FORGE_SEAL_KEY_STDIN=1). It is never in argv, the environment or a file
 * of the workspace.
 *
 * The seal: HMAC-SHA-256 (libsodium crypto_auth_hmacsha256, checked with
 * crypto_auth_hmacsha256_verify, constant time) over
 *     "forge-review seal 1" NUL KIND NUL RUN_ID NUL STEP NUL FILE NUL CYCLE NUL BODY
 * KIND "file" or "frame" (a sealed file never passes for a frame), RUN_ID
 * the record's run id ("" when none), STEP the step, FILE the record's file
 * name (review_cycle_N.json, review_summary.json), CYCLE N in decimal (0 for
 * the summary), BODY the record's JSON text exactly as written without its
 * seal. None of the names holds a NUL (names.h), so the fields cannot be
 * shifted into one another.
 *
 * Where it sits: one more member, "seal": 64 lowercase hex digits, the last
 * member of the object, so any JSON reader (Forge's own poller too) reads
 * the record as before and ignores it. Pretty-printed files (what
 * fg_json_print() writes: the object ends "\n}\n") end
 *     ,\n\t"seal":\t"HEX"\n}\n
 * and BODY is the file with those bytes replaced by "\n}\n"; compact JSON
 * (a frame's object, which ends "}") ends ,"seal":"HEX"} and BODY ends "}".
 * A record is "unsealed" without a "seal": member, "bad_seal" when it has
 * one that is not exactly that last member or does not verify, "replayed"
 * when the seal is good for another place (the same run's record of
 * another cycle or file name).
 *
 * Tier: domain (see util.h). Uses alloc, buf, fsutil, sys (the key's random bytes) and libsodium.
 */
#ifndef FORGE_SEAL_H
#define FORGE_SEAL_H

#include <stdbool.h>
#include <stddef.h>

#define FG_SEAL_KEY_BYTES 32
#define FG_SEAL_KEY_HEX 64      /* the key's line on stdin, without "\n" */
#define FG_SEAL_HEX 64          /* the seal member's value */
#define FG_SEAL_MEMBER "seal"

struct fg_seal_key {
	unsigned char b[FG_SEAL_KEY_BYTES];
};

/* What a seal binds its record to besides the content; borrowed strings. */
struct fg_seal_bind {
	const char *run_id;   /* NULL or "": none */
	const char *step;
	const char *file;     /* review_cycle_N.json or review_summary.json */
	int cycle;            /* N, 0 for the summary */
};

enum fg_seal_kind { FG_SEAL_FILE, FG_SEAL_FRAME };

/* What a reader found; the last three are forgeries (record_forged). */
enum fg_seal_status {
	FG_SEAL_OK,           /* "sealed": the seal verified */
	FG_SEAL_UNVERIFIED,   /* "unverified": no key to check with */
	FG_SEAL_UNSEALED,     /* "unsealed": no seal member */
	FG_SEAL_BAD,          /* "bad_seal" */
	FG_SEAL_REPLAYED,     /* "replayed" */
};

/* "sealed", "unverified", "unsealed", "bad_seal", "replayed" (static). */
const char *fg_seal_status_name(enum fg_seal_status s);
/* The status is one of the three forgeries. */
bool fg_seal_forged(enum fg_seal_status s);

/* A fresh key from the kernel's random source: 0, or -EIO when libsodium
 * cannot be initialised. */
int fg_seal_key_new(struct fg_seal_key *k);
/* k as 64 lowercase hex digits and a NUL. */
void fg_seal_key_hex(const struct fg_seal_key *k, char out[FG_SEAL_KEY_HEX + 1]);
/* Exactly 64 lowercase hex digits (len bytes of s) into *k: 0 or -EINVAL. */
int fg_seal_key_parse(const char *s, size_t len, struct fg_seal_key *k);
/* The key file of `watch`/`sweep --seal-key-file`: 64 lowercase hex digits,
 * one optional "\n", nothing else. 0, or -errno / -EINVAL with err filled. */
int fg_seal_key_load(const char *path, struct fg_seal_key *k, char *err, size_t errlen);
/* Overwrites k, or the n bytes at p (sodium_memzero: not optimised away). */
void fg_seal_key_wipe(struct fg_seal_key *k);
void fg_seal_wipe(void *p, size_t n);

/*
 * text (len bytes: a JSON object as fg_json_print() or
 * cJSON_PrintUnformatted() prints it) with the seal member added as its
 * last member, sealed with k for b: owned, NUL-terminated, *outlen set.
 * NULL when text does not end as either form does (no object).
 */
char *fg_seal_append(const struct fg_seal_key *k, enum fg_seal_kind kind,
		     const struct fg_seal_bind *b, const char *text, size_t len, size_t *outlen);

/* The same for an owned text of strlen(text) bytes: returns it sealed (text
 * is freed) or, when k is NULL or text no object, text itself; *len (may be
 * NULL) gets the length. */
char *fg_seal_take(const struct fg_seal_key *k, enum fg_seal_kind kind,
		   const struct fg_seal_bind *b, char *text, size_t *len);

/*
 * Checks the seal of text (len bytes) for the place where (where it was
 * found). k NULL: FG_SEAL_UNVERIFIED. When it does not verify there but
 * claimed (may be NULL: the place the record's own content names) differs
 * and it verifies for claimed: FG_SEAL_REPLAYED.
 */
enum fg_seal_status fg_seal_check(const struct fg_seal_key *k, enum fg_seal_kind kind,
				  const struct fg_seal_bind *where,
				  const struct fg_seal_bind *claimed, const char *text, size_t len);

#endif
