/*
 * text.h - small text helpers shared by both programs, so the rules they
 * encode live in one place: prefixes, UTF-8, escaping, edit distance,
 * hashing. JSON is json.h.
 *
 * Tier: base (see util.h). Uses alloc and buf only.
 */
#ifndef FORGE_TEXT_H
#define FORGE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_buf;

/*
 * git's skip_prefix(): true when the string s starts with prefix (both
 * NUL-terminated, borrowed), with *rest (rest may be NULL) set to what
 * follows the prefix in s; false with *rest untouched otherwise. The one
 * prefix test: no strncmp() with a length counted by hand.
 */
bool fg_skip_prefix(const char *s, const char *prefix, const char **rest);

/*
 * Length (1-4) of the valid UTF-8 sequence at s, with n > 0 bytes available,
 * or 0 when the bytes there are not valid UTF-8: truncated sequences,
 * overlong forms, UTF-16 surrogates and code points above U+10FFFF refused.
 */
size_t fg_utf8_seq(const void *s, size_t n);

/*
 * 1 when the valid UTF-8 sequence s (len bytes, from fg_utf8_seq) is a code
 * point that must not reach a terminal raw: a C1 control (U+0080..U+009F,
 * e.g. the 8-bit CSI) or a Unicode line/paragraph separator.
 */
int fg_utf8_is_control(const void *s, size_t len);

/*
 * The escapes every escaper shares: '"' as \", '\\' as \\\\, newline,
 * return and tab as \n, \r, \t. Appends the escape and returns 1 when c is
 * one of them, else appends nothing and returns 0.
 */
int fg_escape_common(struct fg_buf *b, unsigned char c);

/* fg_escape_controls() flag: also escape '"' and '\\' (for a value that is
 * then double-quoted, as the runner's text log does). */
#define FG_ESC_QUOTES 1u

/*
 * Appends n bytes of s to b so that no byte reaches a terminal as a control:
 * newline, return and tab as \n \r \t; other C0 controls, DEL and bytes
 * that are not valid UTF-8 as \xNN; C1 controls and U+2028/U+2029 as \xNN
 * per byte; everything else (printable ASCII, valid UTF-8) as is. With
 * FG_ESC_QUOTES, '"' and '\\' are escaped too. Used by the runner's text log
 * and the entrypoint's stderr lines, so an agent's "\r\033[2K" can never
 * erase a line and forge another.
 */
void fg_escape_controls(struct fg_buf *b, const void *s, size_t n, unsigned flags);

/* Longest strings fg_edit_distance() compares. */
#define FG_EDIT_MAX 64

/*
 * Levenshtein distance between a and b (insertions, deletions and
 * substitutions of bytes), for "did you mean" hints; (size_t)-1 when either
 * is longer than FG_EDIT_MAX bytes. No allocation.
 */
size_t fg_edit_distance(const char *a, const char *b);

/*
 * 0 when the n bytes at s are valid UTF-8 (fg_utf8_seq() throughout), else
 * -EILSEQ with *bad (may be NULL) set to the offset of the first byte that
 * is not.
 */
int fg_utf8_check(const void *s, size_t n, size_t *bad);

/*
 * An owned copy of the n bytes at s in which every byte that is not part of
 * valid UTF-8 is replaced by U+FFFD, so it can go into JSON we print (JSON
 * is UTF-8; a raw FF FE would make a consumer's parser refuse the whole
 * document). NUL bytes end the copy.
 */
char *fg_utf8_scrub(const char *s, size_t n);

/* An owned copy of s cut to at most max bytes, never inside a UTF-8
 * sequence; NULL for NULL. */
char *fg_utf8_cut(const char *s, size_t max);

/* 64-bit FNV-1a of n bytes: a content fingerprint for deduplication (not a
 * defence against a chosen collision). */
uint64_t fg_hash64(const void *p, size_t n);

#endif
