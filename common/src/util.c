/*
 * util.c - the name-table lookup (see util.h).
 */
#include "forge/util.h"

#include <string.h>
#include <strings.h>

int fg_name_index(const char *const *names, size_t n, const char *s, unsigned flags)
{
	for (size_t i = 0; s && i < n; i++) {
		if (!names[i])
			continue;
		if (flags & FG_NAME_ANYCASE ? !strcasecmp(s, names[i]) : !strcmp(s, names[i]))
			return (int)i;
	}
	return -1;
}
