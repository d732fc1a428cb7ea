/*
 * timeutil.c - timestamps and the monotonic clock (see timeutil.h).
 */
#include "forge/timeutil.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void fg_time_iso_utc(char out[FG_TIMESTAMP_LEN], time_t t)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, FG_TIMESTAMP_LEN, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int64_t fg_time_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000L;
}

void fg_time_rfc3339_ms_at(char out[FG_TIMESTAMP_LEN], int64_t ms)
{
	time_t sec = (time_t)((ms < 0 ? 0 : ms) / 1000);
	struct tm tm;
	char base[24];

	gmtime_r(&sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, FG_TIMESTAMP_LEN, "%.19s.%03dZ", base, (int)((ms < 0 ? 0 : ms) % 1000));
}

void fg_time_rfc3339_ms(char out[FG_TIMESTAMP_LEN])
{
	fg_time_rfc3339_ms_at(out, fg_time_now_ms());
}

/* The value of n digits at s, or -1 when one is not a digit. */
static int value(const char *s, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static int digits(const char *s, int n, int lo, int hi)
{
	int v = value(s, n);

	return v >= lo && v <= hi;
}

int fg_time_iso_valid(const char *s)
{
	/* YYYY-MM-DDTHH:MM:SSZ is exactly 20 characters. */
	if (strlen(s) != 20)
		return 0;
	if (s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z')
		return 0;
	return digits(s, 4, 0, 9999) && digits(s + 5, 2, 1, 12) && digits(s + 8, 2, 1, 31) &&
	       digits(s + 11, 2, 0, 23) && digits(s + 14, 2, 0, 59) && digits(s + 17, 2, 0, 60);
}

int fg_time_rfc3339_ms_parse(const char *s, int64_t *ms)
{
	char whole[21];
	struct tm tm;
	time_t t;

	/* YYYY-MM-DDTHH:MM:SS.mmmZ is exactly 24 characters. */
	if (!s || strlen(s) != 24 || s[19] != '.' || s[23] != 'Z' || value(s + 20, 3) < 0)
		return -EINVAL;
	memcpy(whole, s, 19);
	whole[19] = 'Z';
	whole[20] = '\0';
	if (!fg_time_iso_valid(whole) || value(s, 4) < 1970)
		return -EINVAL;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = value(s, 4) - 1900;
	tm.tm_mon = value(s + 5, 2) - 1;
	tm.tm_mday = value(s + 8, 2);
	tm.tm_hour = value(s + 11, 2);
	tm.tm_min = value(s + 14, 2);
	tm.tm_sec = value(s + 17, 2);
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*ms = (int64_t)t * 1000 + value(s + 20, 3);
	return 0;
}

uint64_t fg_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double fg_seconds_since(uint64_t start_ns)
{
	return (double)(fg_monotonic_ns() - start_ns) / 1e9;
}
