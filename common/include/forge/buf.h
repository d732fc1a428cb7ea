/*
 * buf.h - growable byte buffers with a hard size limit (curl's dynbuf).
 *
 * Invariants: data is NULL or NUL-terminated at data[len]; len <= max;
 * cap > len whenever data != NULL; err is 0, -E2BIG or -EINVAL. Every append that
 * would make len exceed max fails with -E2BIG and leaves the text
 * unchanged, so a hostile producer (a reviewer printing gigabytes, a huge
 * cycle file) can never make us allocate more than max + 1 bytes.
 *
 * A failure is sticky (curl's dynbuf): the first failed append sets err,
 * and every later append fails with it too, so a text never loses a piece
 * from its middle while later pieces land. A buffer holds all it was given
 * or says so: whoever takes the text out (fg_buf_str(), fg_buf_detach(),
 * data) checks fg_buf_error() when a partial text would be wrong, once,
 * instead of checking every append. fg_buf_reset() and fg_buf_release()
 * clear err. Where a cut is what is meant (a log line, an excerpt), the
 * caller says so: it checks the room left (fg_buf_room()) or the error and
 * marks the cut itself.
 *
 * Every failure of an append is sticky, a formatting error of
 * fg_buf_addf() (-EINVAL) as much as a text that does not fit (-E2BIG).
 * Nobody sets len or err by hand: fg_buf_rewind() puts a buffer back to a
 * state it had (it cuts the end), fg_buf_drop_front() cuts the beginning
 * (a tail kept of a stream); they are the only ways to shorten a text.
 *
 * Running out of memory is not one of these errors: it is git's choice, not
 * curl's. The buffer grows through alloc.h, which prints "fatal: out of
 * memory" and aborts, so an error here always means "too long" or "cannot
 * be formatted", never "no memory".
 *
 * A text that must land whole or not at all beside others (one role's part
 * of a merged feedback) is built in a buffer of its own whose max is the
 * room the target has left (fg_buf_room()), and appended once it is whole:
 * the target's error is then never set by a piece that did not fit.
 *
 * Protocol: fg_buf_init() -> fg_buf_add*() ... -> [fg_buf_error()] ->
 * fg_buf_release() or fg_buf_detach() (which hands the string to the
 * caller and re-inits).
 *
 * Tier: base (util.h). Uses alloc.
 */
#ifndef FORGE_BUF_H
#define FORGE_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct fg_buf {
	char *data;   /* owned; NULL until the first append */
	size_t len;   /* bytes used, excluding the terminating NUL */
	size_t cap;   /* bytes allocated */
	size_t max;   /* hard limit on len */
	int err;      /* sticky: 0, or -E2BIG once an append did not fit */
};

/* Empty buffer that may grow to max bytes. Allocates nothing. */
void fg_buf_init(struct fg_buf *b, size_t max);
/* Frees the data and re-inits with the same max (err cleared). */
void fg_buf_release(struct fg_buf *b);
/* Empties the buffer, keeping its allocation; clears err. */
void fg_buf_reset(struct fg_buf *b);
/* 0 when every append so far fit, else the sticky error (-E2BIG). */
int fg_buf_error(const struct fg_buf *b);
/* Bytes that can still be appended (max - len; 0 once err is set). */
size_t fg_buf_room(const struct fg_buf *b);
/* For a text whose cut is meant (a log line at its cap): returns 1 when an
 * append was refused (the text ends where that append would have begun),
 * else 0, and clears err so appends work again, still bounded by max. */
int fg_buf_accept_cut(struct fg_buf *b);
/* Appends n bytes. 0, or -E2BIG when len + n > max or an earlier append
 * failed (text unchanged, err set). */
int fg_buf_add(struct fg_buf *b, const void *p, size_t n);
/* Appends a NUL-terminated string. Same returns as fg_buf_add(). */
int fg_buf_adds(struct fg_buf *b, const char *s);
/* Appends one byte. Same returns as fg_buf_add(). */
int fg_buf_addc(struct fg_buf *b, char c);
/* Appends formatted text. Same returns as fg_buf_add(), and -EINVAL (sticky
 * too) when the format cannot be rendered; nothing is appended on failure. */
int fg_buf_addf(struct fg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int fg_buf_vaddf(struct fg_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Puts b back to an earlier state of its own: the text cut to its first len
 * bytes (len <= b->len; a larger len is taken as b->len) and the sticky
 * error set to err, the value fg_buf_error() returned then. When len is 0
 * and b held no allocation at that state, call fg_buf_release() instead. */
void fg_buf_rewind(struct fg_buf *b, size_t len, int err);
/* Removes the first n bytes (n > b->len is taken as b->len), keeping the
 * rest and the sticky error: a bounded tail of a stream keeps its newest
 * part this way. */
void fg_buf_drop_front(struct fg_buf *b, size_t n);
/* Returns a NUL-terminated string (never NULL, "" when empty): borrowed. */
const char *fg_buf_str(const struct fg_buf *b);
/* Transfers the string to the caller (owned, never NULL) and re-inits b. */
char *fg_buf_detach(struct fg_buf *b, size_t *len);

/* A growable vector of owned strings, NULL-terminated (usable as argv/envp). */
struct fg_strvec {
	char **v;     /* v[n] == NULL when v != NULL */
	size_t n;
	size_t cap;
};
void fg_strvec_init(struct fg_strvec *s);
void fg_strvec_release(struct fg_strvec *s);
/* Appends a copy of str. */
void fg_strvec_push(struct fg_strvec *s, const char *str);
/* Appends str, taking ownership. */
void fg_strvec_push_take(struct fg_strvec *s, char *str);
void fg_strvec_pushf(struct fg_strvec *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends a copy of each string up to the NULL that ends the list. */
void fg_strvec_pushl(struct fg_strvec *s, ...) __attribute__((sentinel));
/* An option and its value, as two strings ("--memory", "1g"); nothing when
 * value is NULL (an option that was not given). */
void fg_strvec_push_opt(struct fg_strvec *s, const char *option, const char *value);
/* Sorts the strings in strcmp() order (a directory's names, listed in the
 * filesystem's order, made deterministic). */
void fg_strvec_sort(struct fg_strvec *s);
/* True when s holds a string equal to str (linear: for short lists). */
bool fg_strvec_has(const struct fg_strvec *s, const char *str);

#endif
