/*
 * diag.c - collected diagnostics (see diag.h) and small shared internals.
 */
#include "forge/diag.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "internal.h"

void fg_diags_init(struct fg_diags *d)
{
	*d = (struct fg_diags){ 0 };
}

void fg_diags_release(struct fg_diags *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].msg);
	free(d->v);
	fg_diags_init(d);
}

void fg_diags_add(struct fg_diags *d, enum fg_diag_level level, int line, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = fg_xvasprintf(fmt, ap);
	va_end(ap);
	FG_ALLOC_GROW(d->v, d->n + 1, d->cap);
	d->v[d->n].level = level;
	d->v[d->n].line = line;
	d->v[d->n].msg = msg;
	d->n++;
}

size_t fg_diags_count(const struct fg_diags *d, enum fg_diag_level level)
{
	size_t c = 0;

	for (size_t i = 0; i < d->n; i++)
		c += d->v[i].level == level;
	return c;
}

void fg__strlcpy(char *dst, const char *src, size_t n)
{
	size_t len;

	if (!n)
		return;
	len = strnlen(src, n - 1);
	memcpy(dst, src, len);
	dst[len] = '\0';
}

void fg__seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int fg__read_failed(int r, const char *name, int max, char *err, size_t errlen)
{
	if (r == -EISDIR)
		r = -EINVAL;
	if (r == -ELOOP)
		fg__seterr(err, errlen, "'%s' is a symbolic link", name);
	else if (r == -EINVAL)
		fg__seterr(err, errlen, "'%s' is not a regular file", name);
	else if (r == -EFBIG)
		fg__seterr(err, errlen, "'%s' is larger than %d bytes", name, max);
	else
		fg__seterr(err, errlen, "cannot read '%s': %s", name, strerror(-r));
	return r;
}
