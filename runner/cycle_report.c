/*
 * cycle_report.c - the names of the cycle sources and the rewrite limit
 * (see cycle_report.h).
 */
#include "cycle_report.h"

#include "log.h"

const char *rn_source_name(enum rn_source s)
{
	static const char *const names[RN_SOURCE_COUNT] = { "watch", "poll", "sweep", "stream" };

	return s > RN_SOURCE_NONE && s < RN_SOURCE_COUNT ? names[s] : "none";
}

int rn_cycle_report_admit(struct rn_log *log, unsigned *reports, const struct rn_cycle_report *r)
{
	if (*reports < RN_CYCLE_MAX_REPORTS) {
		++*reports;
		return 1;
	}
	if (*reports == RN_CYCLE_MAX_REPORTS) {
		++*reports;
		rn_log(log, RN_LOG_WARN, "cycle_rewrite_limit", RN_LS("step", r->step),
		       RN_LS("file", r->name), RN_LS("source", rn_source_name(r->source)),
		       RN_LI("max", RN_CYCLE_MAX_REPORTS));
	}
	return 0;
}
