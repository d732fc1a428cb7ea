/*
 * stream.c - the stream source: frames on the sandbox's stderr (see stream.h).
 */
#include "stream.h"

#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/frame.h"

void rn_stream_init(struct rn_stream *s, const struct rn_stream_opts *opts)
{
	memset(s, 0, sizeof(*s));
	s->opts = *opts;
	/* The newline is not kept: a frame line holds at most FG_FRAME_MAX - 1. */
	fg_buf_init(&s->line, FG_FRAME_MAX - 1);
	s->at_start = 1;
}

void rn_stream_release(struct rn_stream *s)
{
	fg_buf_release(&s->line);
	FG_FREE_AND_NULL(s->seen);
}

size_t rn_stream_dropped(const struct rn_stream *s)
{
	return s->ndropped;
}

static void invalid(struct rn_stream *s, const char *why)
{
	/* The first says what is wrong; a sandbox sending thousands must not
	 * flood the log. */
	if (s->invalid++ == 0)
		rn_log(s->opts.log, RN_LOG_WARN, "frame_invalid", RN_LS("step", s->opts.step),
		       RN_LS("error", why));
}

/* 1 when the frame belongs to this run and step; else logged once, counted. */
static int ours(struct rn_stream *s, const struct fg_frame *fr)
{
	const char *want = s->opts.run_id;
	int run_ok = fg_run_id_accepts(want, *fr->run_id ? fr->run_id : NULL);

	if (run_ok && !strcmp(fr->step, s->opts.step))
		return 1;
	if (s->ignored++ == 0)
		rn_log(s->opts.log, RN_LOG_WARN, "frame_ignored", RN_LS("step", s->opts.step),
		       RN_LS("frame_step", fr->step), RN_LS("run_id", fr->run_id),
		       RN_LS("expected_run_id", want), RN_LS("reason", run_ok ? "step" : "run_id"));
	return 0;
}

/* 1 when cycle n may be reported: it was seen before, or fewer than
 * RN_WATCH_MAX_CYCLE_FILES numbers were. */
static int track(struct rn_stream *s, int n)
{
	unsigned char bit = (unsigned char)(1u << (n % 8));

	if (!s->seen)
		s->seen = fg_xcalloc(FG_CYCLE_NUMBER_MAX / 8 + 1, 1);
	if (s->seen[n / 8] & bit)
		return 1;
	if (s->nseen >= RN_WATCH_MAX_CYCLE_FILES) {
		if (s->ndropped++ == 0)
			rn_log(s->opts.log, RN_LOG_WARN, "cycle_limit", RN_LS("dir", s->opts.dir),
			       RN_LS("step", s->opts.step), RN_LS("limit", "cycle_files"),
			       RN_LI("max", RN_WATCH_MAX_CYCLE_FILES), RN_LS("source", "stream"));
		/* Counted once per number: mark it, without counting it as seen. */
		s->seen[n / 8] |= bit;
		return 0;
	}
	s->seen[n / 8] |= bit;
	s->nseen++;
	return 1;
}

static void deliver_cycle(struct rn_stream *s, const struct fg_frame *fr, enum fg_seal_status seal)
{
	char *name = fg_cycle_file_name(fr->cycle.cycle);
	char *raw = fg_cycle_to_json(&fr->cycle);
	struct rn_cycle_report r = {
		.dir = s->opts.dir, .step = s->opts.step, .name = name, .n = fr->cycle.cycle,
		.cycle = &fr->cycle, .raw = raw, .raw_len = strlen(raw),
		.source = RN_SOURCE_STREAM, .first = 1, .truncated = fr->truncated, .seal = seal,
	};

	if (s->opts.cycle_cb)
		s->opts.cycle_cb(s->opts.data, &r);
	free(name);
	free(raw);
}

/* The seal of the frame in s->line, parsed as fr (of this run and step). */
static enum fg_seal_status seal_of(const struct rn_stream *s, const struct fg_frame *fr)
{
	bool cycle = fr->type == FG_FRAME_CYCLE, event = fr->type == FG_FRAME_EVENT;
	char *file = cycle ? fg_cycle_file_name(fr->cycle.cycle)
			   : fg_xstrdup(event ? FG_FRAME_EVENT_FILE : FG_SUMMARY_FILE);
	struct fg_seal_bind where = { fr->run_id, fr->step, file,
				      cycle ? fr->cycle.cycle : event ? fr->seq : 0 };
	enum fg_seal_status st = fg_seal_check(s->opts.key, FG_SEAL_FRAME, &where, NULL,
					       s->line.data + FG_FRAME_PREFIX_LEN,
					       s->line.len - FG_FRAME_PREFIX_LEN);

	free(file);
	return st;
}

/* One complete line that started with the prefix. */
static void on_frame_line(struct rn_stream *s)
{
	struct fg_frame fr;
	char err[256] = "";

	if (s->overlong) {
		invalid(s, "frame line longer than 65536 bytes");
		return;
	}
	fg_frame_init(&fr);
	if (fg_frame_parse(&fr, s->line.data, s->line.len, err, sizeof(err))) {
		invalid(s, err);
	} else if (fr.type == FG_FRAME_EVENT) {
		/* Only a seal of this run's key makes an event: the seal binds
		 * the run id and step the entrypoint wrote. */
		if (seal_of(s, &fr) == FG_SEAL_OK && s->opts.event_cb)
			s->opts.event_cb(s->opts.data, &fr);
	} else if (ours(s, &fr)) {
		enum fg_seal_status seal = seal_of(s, &fr);

		s->frames++;
		if (fr.type == FG_FRAME_SUMMARY) {
			if (s->opts.summary_cb)
				s->opts.summary_cb(s->opts.data, &fr.summary, seal);
		} else if (fg_seal_forged(seal) || track(s, fr.cycle.cycle)) {
			deliver_cycle(s, &fr, seal);
		}
	}
	fg_frame_release(&fr);
}

static void end_line(struct rn_stream *s)
{
	if (s->collecting && s->line.len >= FG_FRAME_PREFIX_LEN)
		on_frame_line(s);
	fg_buf_reset(&s->line);
	s->at_start = 1;
	s->collecting = 0;
	s->overlong = 0;
}

void rn_stream_feed(struct rn_stream *s, const char *p, size_t n)
{
	const char *end = p + n;

	while (p < end) {
		const char *nl;

		if (s->at_start) {
			s->at_start = 0;
			s->collecting = 1;
		}
		if (!s->collecting) {
			/* Not a frame: skip to the next line without keeping a byte. */
			nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl)
				return;
			p = nl;
		}
		if (*p == '\n') {
			end_line(s);
			p++;
			continue;
		}
		if (s->line.len < FG_FRAME_PREFIX_LEN && *p != FG_FRAME_PREFIX[s->line.len])
			s->collecting = 0;
		else if (!s->overlong && fg_buf_addc(&s->line, *p) < 0)
			s->overlong = 1;
		if (s->collecting)
			p++;
	}
}

void rn_stream_end(struct rn_stream *s)
{
	if (s->collecting && s->line.len >= FG_FRAME_PREFIX_LEN)
		invalid(s, "the stream ended inside a frame line");
	fg_buf_reset(&s->line);
	s->at_start = 1;
	s->collecting = 0;
	s->overlong = 0;
}
