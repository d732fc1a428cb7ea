/*
 * num.c - strict number parsing (see num.h).
 */
#include "forge/num.h"
#include "forge/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>

/* The one rule of where a number may start: a value that is missing,
 * empty or starts with a blank (which strtol and strtod would skip) is no
 * number. It also clears errno, for the strto*() call that follows. */
static int number_start(const char *s)
{
	errno = 0;
	return s && *s && *s != ' ' && *s != '\t';
}

int fg_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!number_start(s))
		return -EINVAL;
	v = strtol(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int fg_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!number_start(s))
		return -EINVAL;
	v = strtod(s, &end);
	if (*end != '\0' || isnan(v))
		return -EINVAL;
	if (errno == ERANGE || isinf(v) || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int fg_parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };

	if (FG_NAME_INDEX(yes, s, FG_NAME_ANYCASE) >= 0) {
		*out = 1;
		return 0;
	}
	if (FG_NAME_INDEX(no, s, FG_NAME_ANYCASE) >= 0) {
		*out = 0;
		return 0;
	}
	return -EINVAL;
}
