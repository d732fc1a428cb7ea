/*
 * timeutil.h - wall-clock stamps in the spec's formats and a monotonic clock.
 *
 * Tier: base (util.h). Uses nothing of common/.
 */
#ifndef FORGE_TIMEUTIL_H
#define FORGE_TIMEUTIL_H

#include <stdint.h>
#include <time.h>

#define FG_TIMESTAMP_LEN 32

/* Writes t as UTC "YYYY-MM-DDTHH:MM:SSZ" (the cycle files' timestamp). */
void fg_time_iso_utc(char out[FG_TIMESTAMP_LEN], time_t t);
/* Writes now as RFC 3339 UTC with milliseconds, "YYYY-MM-DDTHH:MM:SS.mmmZ" (log lines). */
void fg_time_rfc3339_ms(char out[FG_TIMESTAMP_LEN]);
/* The wall clock (CLOCK_REALTIME) in milliseconds since the Unix epoch. */
int64_t fg_time_now_ms(void);
/* Writes ms (Unix milliseconds, >= 0) as "YYYY-MM-DDTHH:MM:SS.mmmZ". */
void fg_time_rfc3339_ms_at(char out[FG_TIMESTAMP_LEN], int64_t ms);
/* Reads exactly "YYYY-MM-DDTHH:MM:SS.mmmZ" (plausible ranges, year 1970 to
 * 9999) into *ms: 0, or -EINVAL (*ms untouched). */
int fg_time_rfc3339_ms_parse(const char *s, int64_t *ms);
/* Checks the shape "YYYY-MM-DDTHH:MM:SSZ" with plausible field ranges. 1 if valid, else 0. */
int fg_time_iso_valid(const char *s);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t fg_monotonic_ns(void);
/* Seconds elapsed since a fg_monotonic_ns() reading. */
double fg_seconds_since(uint64_t start_ns);

#endif
