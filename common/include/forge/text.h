/*
 * text.h - small text and JSON helpers shared by both programs, so the
 * rules they encode live in one place.
 */
#ifndef FORGE_TEXT_H
#define FORGE_TEXT_H

#include <stddef.h>

struct cJSON;

/*
 * Length (1-4) of the valid UTF-8 sequence at s, with n > 0 bytes available,
 * or 0 when the bytes there are not valid UTF-8: truncated sequences,
 * overlong forms, UTF-16 surrogates and code points above U+10FFFF refused.
 */
size_t fg_utf8_seq(const void *s, size_t n);

/* Most structural tokens ('{', '[', ',', ':' outside strings) a document
 * may hold: a cJSON node costs about 64 bytes, so 8 MiB of "[]," would
 * otherwise become some 180 MB of tree. Real cycle, summary and result
 * files hold a few thousand at most. */
#define FG_JSON_MAX_TOKENS (256 * 1024)

/*
 * Parses exactly len bytes as one JSON value followed by nothing but
 * whitespace. NUL bytes anywhere are refused (cJSON would stop at one and
 * accept a prefix), and so is a document with more than FG_JSON_MAX_TOKENS
 * structural tokens (checked in one linear pass before cJSON allocates).
 * Returns a new cJSON tree (owned) or NULL when invalid.
 */
struct cJSON *fg_json_parse_exact(const char *data, size_t len);

/* o pretty-printed with a trailing newline: an owned string, never NULL. */
char *fg_json_print(const struct cJSON *o);

#endif
