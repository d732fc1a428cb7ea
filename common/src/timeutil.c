/*
 * timeutil.c - timestamps and the monotonic clock (see timeutil.h).
 */
#include "forge/timeutil.h"

#include <stdio.h>
#include <string.h>

void fg_time_iso_utc(char out[FG_TIMESTAMP_LEN], time_t t)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, FG_TIMESTAMP_LEN, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void fg_time_rfc3339_ms(char out[FG_TIMESTAMP_LEN])
{
	struct timespec ts;
	struct tm tm;
	char base[24];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, FG_TIMESTAMP_LEN, "%.19s.%03dZ", base, (int)(ts.tv_nsec / 1000000L) % 1000);
}

static int digits(const char *s, int n, int lo, int hi)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (s[i] - '0');
	}
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
