/*
 * closing.c - the closing line of a run (see closing.h).
 */
#include "closing.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/buf.h"
#include "forge/text.h"

#define REASON_MAX 200
#define LINE_MAX_BYTES 4096

/* The reason's first REASON_MAX bytes, escaped (a sandbox wrote it). */
static void add_reason(struct fg_buf *b, const char *reason)
{
	size_t n = strlen(reason);

	fg_escape_controls(b, reason, n > REASON_MAX ? REASON_MAX : n, 0);
	if (n > REASON_MAX)
		fg_buf_adds(b, "...");
}

char *rn_closing_line(const struct rn_closing *c)
{
	struct fg_buf b;

	fg_buf_init(&b, LINE_MAX_BYTES);
	fg_escape_controls(&b, c->step, strlen(c->step), 0);
	fg_buf_addf(&b, ": %s", c->outcome);
	if (c->cycles && c->max_cycles > 0)
		fg_buf_addf(&b, " in %zu/%d cycle%s", c->cycles, c->max_cycles, c->max_cycles == 1 ? "" : "s");
	else if (c->cycles)
		fg_buf_addf(&b, " in %zu cycle%s", c->cycles, c->cycles == 1 ? "" : "s");
	if (c->advice)
		fg_buf_addf(&b, " (%zu advice finding%s, not looped on)", c->advice, c->advice == 1 ? "" : "s");
	if (c->audit)
		fg_buf_addf(&b, " (the audit %s)", strcmp(c->audit, "skipped") ? c->audit : "was skipped");
	if (c->have_cost)
		fg_buf_addf(&b, c->cost_usd > 0 && c->cost_usd < 0.01 ? ", $%.4f" : ", $%.2f", c->cost_usd);
	fg_buf_addf(&b, c->seconds < 10 ? ", %.1f s" : ", %.0f s", c->seconds);
	if (c->exit_code) {
		fg_buf_addf(&b, "; exit %d", c->exit_code);
		if (c->reason && *c->reason) {
			fg_buf_adds(&b, ": ");
			add_reason(&b, c->reason);
		}
	}
	if (c->result_path) {
		fg_buf_adds(&b, "; result: ");
		fg_escape_controls(&b, c->result_path, strlen(c->result_path), 0);
	}
	return fg_buf_detach(&b, NULL);
}

void rn_closing_print(struct rn_log *l, const struct rn_closing *c)
{
	char *line = rn_closing_line(c);

	if (l && l->fp == stderr && l->format == RN_LOG_JSON) {
		enum rn_log_level saved = l->level;

		/* Every level: the closing line is not filtered. */
		l->level = RN_LOG_DEBUG;
		rn_log(l, RN_LOG_INFO, "run_summary", RN_LS("summary", line));
		l->level = saved;
	} else {
		rn_msg(FG_MSG_PLAIN, "%s", line);
	}
	free(line);
}
