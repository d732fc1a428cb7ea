/*
 * json.h - the one JSON module of both programs (over cJSON): bounded
 * parsing, one getter family for the members of an object, one printer.
 * Code elsewhere calls these instead of cJSON_GetObjectItem*() plus its own
 * type check, and never prints with cJSON_Print() directly.
 *
 * Getters look a member up by its exact name (case-sensitive) and check
 * its type: a member of another type reads as absent. Every returned
 * pointer is borrowed from the tree.
 *
 * Tier: base (see util.h). Uses alloc, buf and text.
 */
#ifndef FORGE_JSON_H
#define FORGE_JSON_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;

/* Most structural tokens ('{', '[', ',', ':' outside strings) a document
 * may hold: a cJSON node costs about 64 bytes, so 8 MiB of "[]," would
 * otherwise become some 180 MB of tree. Real cycle, summary and result
 * files hold a few thousand at most. */
#define FG_JSON_MAX_TOKENS (256 * 1024)

/*
 * Parses exactly len bytes as one JSON value followed by nothing but
 * whitespace. Refused, with the reason in err (if errlen > 0): a NUL byte
 * anywhere ("contains a NUL byte": cJSON would stop at one and accept a
 * prefix), bytes that are not valid UTF-8 ("not valid UTF-8 at byte N":
 * JSON text is UTF-8, and a string we print must never carry raw bytes
 * a consumer refuses or silently turns into other characters), more than
 * max_tokens structural tokens ("more than N JSON tokens", counted in one
 * linear pass before cJSON allocates), anything else ("not valid JSON").
 * Strings of an accepted document are valid UTF-8 (cJSON refuses a \u
 * escape of a lone surrogate). Returns a new cJSON tree (owned) or NULL.
 */
struct cJSON *fg_json_parse_bounded(const char *data, size_t len, size_t max_tokens, char *err,
				    size_t errlen);
/* fg_json_parse_bounded() with FG_JSON_MAX_TOKENS and no reason. */
struct cJSON *fg_json_parse_exact(const char *data, size_t len);

/*
 * o's required number member key: 0 with *out set to its value, or NAN
 * when it is not a number (the caller's range check then says what it
 * must be); -EINVAL with "missing field 'key'" in err when absent.
 */
int fg_json_req_num(const struct cJSON *o, const char *key, double *out, char *err, size_t errlen);

/*
 * o's optional string member key: 0 with *out set to it, or to NULL when
 * it is absent or null; -EINVAL with "field 'key' must be a string or null"
 * in err (if errlen > 0) and *out untouched when it is of another type.
 */
int fg_json_opt_str(const struct cJSON *o, const char *key, const char **out, char *err,
		    size_t errlen);
/* o pretty-printed with a trailing newline: an owned string, never NULL,
 * always valid UTF-8 (a string byte that is not becomes U+FFFD). */
char *fg_json_print(const struct cJSON *o);

/* o's member key of any type, or NULL (absent, or o NULL): for a member
 * whose type the caller tells apart itself (a number or a string). */
const struct cJSON *fg_json_get(const struct cJSON *o, const char *key);
/* o's array member key, or NULL (absent, not an array, or o NULL). */
const struct cJSON *fg_json_arr(const struct cJSON *o, const char *key);
/* true when o's member key is the JSON value true (absent, false and any
 * other type read as false). */
bool fg_json_true(const struct cJSON *o, const char *key);
/* o's string member key, or NULL (absent, or not a string). */
const char *fg_json_str(const struct cJSON *o, const char *key);
/* o's string member key, or dflt (absent, or not a string). */
const char *fg_json_str_or(const struct cJSON *o, const char *key, const char *dflt);
/* o's number member key when it is finite and in [lo, hi], else dflt. */
double fg_json_num_in(const struct cJSON *o, const char *key, double lo, double hi, double dflt);
/* o's object member key, or NULL (absent, not an object, or o NULL). */
const struct cJSON *fg_json_obj(const struct cJSON *o, const char *key);
/* o's number member key, or NAN (absent, or not a number). */
double fg_json_num(const struct cJSON *o, const char *key);
/*
 * o's required string member key: 0 with *out set, or -EINVAL with err
 * ("missing field 'key'", "field 'key' must be a string"; if errlen > 0)
 * and *out untouched.
 */
int fg_json_req_str(const struct cJSON *o, const char *key, const char **out, char *err,
		    size_t errlen);
/* One required string member and where it goes (fg_json_req_strs()). */
struct fg_json_field {
	const char *key;
	const char **out;
};
/* fg_json_req_str() for each of the n fields in order: 0 with every *out
 * set, or the first failure's -EINVAL and err (the later fields untouched). */
int fg_json_req_strs(const struct cJSON *o, const struct fg_json_field *f, size_t n, char *err,
		     size_t errlen);
/* FG_JSON_FIELDS({ "a", &a }, { "b", &b }): the field list and its count,
 * as fg_json_req_strs() takes them. */
#define FG_JSON_FIELDS(...)                                 \
	(const struct fg_json_field[]){ __VA_ARGS__ },      \
	sizeof((const struct fg_json_field[]){ __VA_ARGS__ }) / sizeof(struct fg_json_field)

/* Adds key: {} to o and returns the new object (borrowed from o);
 * allocation failure aborts, as every fg_x* does. */
struct cJSON *fg_json_add_object(struct cJSON *o, const char *key);
/* Adds key: v to o, or key: null when v is NULL (v is copied). */
void fg_json_add_str_or_null(struct cJSON *o, const char *key, const char *v);
/* Adds key: v to o when v is set, nothing when it is NULL (the files'
 * optional members are absent, not null). */
void fg_json_add_str_if(struct cJSON *o, const char *key, const char *v);
/* Adds key: true to o when b, nothing otherwise (an optional flag is
 * absent when false). */
void fg_json_add_true_if(struct cJSON *o, const char *key, bool b);
/* Appends a new {} to the array arr and returns it (borrowed from arr);
 * allocation failure aborts. */
struct cJSON *fg_json_push_object(struct cJSON *arr);
/* Adds key: [...] to o (an empty array when n is 0): one object per element
 * of the array base (n elements of size bytes), which fill(object, element)
 * fills. Returns the array (borrowed from o). */
struct cJSON *fg_json_add_objects(struct cJSON *o, const char *key, const void *base, size_t n,
				  size_t size, void (*fill)(struct cJSON *item, const void *elem));

#endif
