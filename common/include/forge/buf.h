/*
 * buf.h - growable byte buffers with a hard size limit (curl's dynbuf).
 *
 * Invariants: data is NULL or NUL-terminated at data[len]; len <= max;
 * cap > len whenever data != NULL. Every append that would make len exceed
 * max fails with -E2BIG and leaves the buffer unchanged, so a hostile
 * producer (a reviewer printing gigabytes, a huge cycle file) can never make
 * us allocate more than max + 1 bytes.
 *
 * Protocol: fg_buf_init() -> fg_buf_add*() ... -> fg_buf_release() or
 * fg_buf_detach() (which hands the string to the caller and re-inits).
 */
#ifndef FORGE_BUF_H
#define FORGE_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct fg_buf {
	char *data;   /* owned; NULL until the first append */
	size_t len;   /* bytes used, excluding the terminating NUL */
	size_t cap;   /* bytes allocated */
	size_t max;   /* hard limit on len */
};

/* Empty buffer that may grow to max bytes. Allocates nothing. */
void fg_buf_init(struct fg_buf *b, size_t max);
/* Frees the data and re-inits with the same max. */
void fg_buf_release(struct fg_buf *b);
/* Empties the buffer, keeping its allocation. */
void fg_buf_reset(struct fg_buf *b);
/* Appends n bytes. 0, or -E2BIG when len + n > max (buffer unchanged). */
int fg_buf_add(struct fg_buf *b, const void *p, size_t n);
/* Appends a NUL-terminated string. Same returns as fg_buf_add(). */
int fg_buf_adds(struct fg_buf *b, const char *s);
/* Appends one byte. Same returns as fg_buf_add(). */
int fg_buf_addc(struct fg_buf *b, char c);
/* Appends formatted text. Same returns as fg_buf_add() (nothing appended on -E2BIG). */
int fg_buf_addf(struct fg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int fg_buf_vaddf(struct fg_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
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

#endif
