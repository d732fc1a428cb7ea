/*
 * cycle_report.c - the names of the cycle sources (see cycle_report.h).
 */
#include "cycle_report.h"

const char *rn_source_name(enum rn_source s)
{
	static const char *const names[RN_SOURCE_COUNT] = { "watch", "poll", "sweep", "stream" };

	return s > RN_SOURCE_NONE && s < RN_SOURCE_COUNT ? names[s] : "none";
}
