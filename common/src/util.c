/*
 * util.c - the name-table lookup (see util.h).
 */
#include "forge/util.h"

#include <string.h>
#include <strings.h>

static int same(const char *s, const char *name, unsigned flags)
{
	return name && (flags & FG_NAME_ANYCASE ? !strcasecmp(s, name) : !strcmp(s, name));
}

int fg_name_index(const char *const *names, size_t n, const char *s, unsigned flags)
{
	for (size_t i = 0; s && i < n; i++)
		if (same(s, names[i], flags))
			return (int)i;
	return -1;
}

int fg_name_index_ops(const void *const *table, size_t n, size_t off, const char *s, unsigned flags)
{
	for (size_t i = 0; s && i < n; i++) {
		if (table[i] && same(s, *(const char *const *)((const char *)table[i] + off), flags))
			return (int)i;
	}
	return -1;
}
