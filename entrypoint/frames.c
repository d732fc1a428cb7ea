/*
 * frames.c - frames on standard error (see frames.h).
 */
#include "frames.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent.h"
#include "cli.h"
#include "lifeline.h"
#include "forge/frame.h"

static void send_line(char *line, size_t len, const char *what)
{
	if (!line) {
		/* Only names of absurd length get here; the file is the record. */
		ep_log(FG_MSG_WARN, "the %s frame exceeds %d bytes even in its smallest form; not sent",
			 what, FG_FRAME_MAX);
		return;
	}
	fflush(stderr);
	ep_write_all(2, line, len);
	free(line);
}

void ep_frame_cycle(const struct fg_cycle *c, const char *step)
{
	size_t len = 0;
	char *line = fg_frame_cycle_line(c, step, ep_seal_key(), &len);

	send_line(line, len, "review_cycle");
}

void ep_frame_summary(const struct fg_summary *s)
{
	size_t len = 0;
	char *line = fg_frame_summary_line(s, ep_seal_key(), &len);

	send_line(line, len, "review_summary");
}

static const char *frame_run_id, *frame_step;
static int frame_seq;

void ep_frames_set_task(const char *run_id, const char *step)
{
	frame_run_id = run_id;
	frame_step = step;
}

void ep_frame_event(const char *name, const struct cJSON *fields)
{
	const char *run_id = frame_run_id ? frame_run_id : getenv("FORGE_RUN_ID");
	size_t len = 0;
	char *line;

	if (!ep_seal_key())
		return;
	line = fg_frame_event_line(run_id, frame_step, name, ++frame_seq, fields, ep_seal_key(), &len);
	if (line) {
		fflush(stderr);
		ep_write_all(2, line, len);
		free(line);
	}
}
