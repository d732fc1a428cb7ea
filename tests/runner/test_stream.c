/*
 * test_stream.c - the stream source: frames recognised at the start of a
 * line of the sandbox's stderr only, validated, filtered by run id and
 * step, bounded; whatever way the bytes are chunked.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/frame.h"
#include "stream.h"

TestSuite(stream, .timeout = 60);

struct got {
	int cycles[16];
	int truncated[16];
	int ncycles;
	int summaries;
	int last_summary_cycles;
};

static void on_cycle(void *data, const struct rn_cycle_report *r)
{
	struct got *g = data;

	cr_assert_eq(r->source, RN_SOURCE_STREAM);
	cr_assert_str_eq(r->step, "impl");
	cr_assert_eq(r->n, r->cycle->cycle);
	cr_assert_not_null(strstr(r->raw, "\"cycle\":"));
	if (g->ncycles < 16) {
		g->truncated[g->ncycles] = r->truncated;
		g->cycles[g->ncycles++] = r->n;
	}
}

static void on_summary(void *data, const struct fg_summary *s, enum fg_seal_status seal)
{
	struct got *g = data;

	cr_expect_eq(seal, FG_SEAL_UNVERIFIED, "a stream without a key verified a frame");
	g->summaries++;
	g->last_summary_cycles = s->cycles;
}

struct fixture {
	struct rn_stream s;
	struct rn_log log;
	FILE *fp;
	char *buf;
	size_t len;
	struct got got;
};

static void setup(struct fixture *f)
{
	struct rn_stream_opts o = {
		.run_id = "run1", .step = "impl", .dir = "/w/.forge/impl", .log = &f->log,
		.cycle_cb = on_cycle, .summary_cb = on_summary, .data = &f->got,
	};

	memset(f, 0, sizeof(*f));
	f->fp = open_memstream(&f->buf, &f->len);
	rn_log_init(&f->log, RN_LOG_TEXT, RN_LOG_DEBUG, f->fp);
	o.data = &f->got;
	rn_stream_init(&f->s, &o);
}

static void teardown(struct fixture *f)
{
	rn_stream_release(&f->s);
	fclose(f->fp);
	free(f->buf);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

static char *cycle_line(int n, const char *run_id, const char *step, const char *feedback)
{
	struct fg_cycle c;
	size_t len;
	char *line;

	fg_cycle_init(&c);
	c.cycle = n;
	c.max_cycles = 3;
	c.j.verdict = FG_VERDICT_REJECTED;
	c.j.feedback = fg_xstrdup(feedback);
	c.skill = fg_xstrdup("impl");
	snprintf(c.timestamp, sizeof(c.timestamp), "%s", "2026-01-15T10:30:00Z");
	c.run_id = run_id ? fg_xstrdup(run_id) : NULL;
	line = fg_frame_cycle_line(&c, step, NULL, &len);
	fg_cycle_release(&c);
	cr_assert_not_null(line);
	return line;
}

static char *summary_line(int cycles)
{
	struct fg_summary s;
	size_t len;
	char *line;

	fg_summary_init(&s);
	s.state = FG_STATE_APPROVED;
	s.cycles = cycles;
	s.max_cycles = 3;
	s.step = fg_xstrdup("impl");
	s.skill = fg_xstrdup("impl");
	s.task_key = fg_xstrdup("");
	s.run_id = fg_xstrdup("run1");
	line = fg_frame_summary_line(&s, NULL, &len);
	fg_summary_release(&s);
	return line;
}

/* Feeds text in chunks of chunk bytes. */
static void feed(struct fixture *f, const char *text, size_t chunk)
{
	size_t n = strlen(text);

	for (size_t i = 0; i < n; i += chunk)
		rn_stream_feed(&f->s, text + i, n - i < chunk ? n - i : chunk);
}

Test(stream, frames_between_other_lines_in_any_chunking)
{
	static const size_t chunks[] = { 1, 2, 7, 15, 16, 100, 1 << 20 };
	char *c1 = cycle_line(1, "run1", "impl", "Fix it\nnow"), *c2 = cycle_line(2, "run1", "impl", "");
	char *sum = summary_line(2);
	char *text = fg_xasprintf("forge-entrypoint: starting\n[worker] hello\n%s[reviewer] x\n"
				  "Review cycle 1/3: REJECTED - Fix it now\n%s%s", c1, c2, sum);

	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		struct fixture f;

		setup(&f);
		feed(&f, text, chunks[i]);
		rn_stream_end(&f.s);
		cr_assert_eq(f.got.ncycles, 2, "chunk %zu", chunks[i]);
		cr_assert_eq(f.got.cycles[0], 1);
		cr_assert_eq(f.got.cycles[1], 2);
		cr_assert_eq(f.got.summaries, 1);
		cr_assert_eq(f.got.last_summary_cycles, 2);
		cr_assert_eq(f.s.frames, 3);
		fflush(f.fp);
		cr_assert_eq(count(f.buf, "frame_"), 0, "chunk %zu: %s", chunks[i], f.buf);
		teardown(&f);
	}
	free(text);
	free(c1);
	free(c2);
	free(sum);
}

Test(stream, a_frame_not_at_the_start_of_a_line_is_not_one)
{
	struct fixture f;
	char *c1 = cycle_line(1, "run1", "impl", "");
	char *text = fg_xasprintf("[worker] %s [reviewer]  %s x%s", c1, c1, c1);

	setup(&f);
	feed(&f, text, 5);
	rn_stream_end(&f.s);
	cr_assert_eq(f.got.ncycles, 0);
	teardown(&f);
	free(text);
	free(c1);
}

Test(stream, a_frame_after_a_line_longer_than_the_frame_limit_is_read)
{
	struct fixture f;
	char *c1 = cycle_line(1, "run1", "impl", "");
	size_t big = 3 * FG_FRAME_MAX;
	char *text = fg_xmalloc(big + strlen(c1) + 2);

	memset(text, 'y', big);
	text[big] = '\n';
	memcpy(text + big + 1, c1, strlen(c1) + 1);
	setup(&f);
	feed(&f, text, 4096);
	cr_assert_eq(f.got.ncycles, 1);
	teardown(&f);
	free(text);
	free(c1);
}

Test(stream, another_run_or_step_is_ignored_and_logged_once)
{
	struct fixture f;
	char *a = cycle_line(1, "other", "impl", ""), *b = cycle_line(2, "other", "impl", "");
	char *c = cycle_line(3, "run1", "plan", ""), *d = cycle_line(4, NULL, "impl", "");
	char *text = fg_xasprintf("%s%s%s%s", a, b, c, d);

	setup(&f);
	feed(&f, text, 64);
	cr_assert_eq(f.got.ncycles, 1, "only the frame without run id is ours");
	cr_assert_eq(f.got.cycles[0], 4);
	cr_assert_eq(f.s.ignored, 3);
	fflush(f.fp);
	cr_assert_eq(count(f.buf, "frame_ignored"), 1, "%s", f.buf);
	cr_assert_not_null(strstr(f.buf, "run_id=other"), "%s", f.buf);
	teardown(&f);
	free(text);
	free(a);
	free(b);
	free(c);
	free(d);
}

Test(stream, invalid_and_overlong_frames_are_counted_and_logged_once)
{
	struct fixture f;
	char *big = fg_xmalloc(FG_FRAME_MAX + 64);
	char *ok = cycle_line(1, "run1", "impl", "");

	memset(big, 'z', FG_FRAME_MAX + 62);
	memcpy(big, FG_FRAME_PREFIX, FG_FRAME_PREFIX_LEN);
	big[FG_FRAME_MAX + 62] = '\n';
	big[FG_FRAME_MAX + 63] = '\0';
	setup(&f);
	feed(&f, "@@forge-review {\"v\":1}\n@@forge-review not json\n", 3);
	feed(&f, big, 1000);
	feed(&f, ok, 1000);
	feed(&f, "@@forge-review {\"v\":1,", 1000);
	rn_stream_end(&f.s);
	cr_assert_eq(f.got.ncycles, 1);
	cr_assert_eq(f.s.invalid, 4);
	fflush(f.fp);
	cr_assert_eq(count(f.buf, "frame_invalid"), 1, "%s", f.buf);
	teardown(&f);
	free(big);
	free(ok);
}

Test(stream, truncated_frames_say_so)
{
	struct fixture f;
	char *fb = fg_xmalloc(FG_FRAME_MAX + 1);
	char *line;

	memset(fb, 'q', FG_FRAME_MAX);
	fb[FG_FRAME_MAX] = '\0';
	line = cycle_line(1, "run1", "impl", fb);
	setup(&f);
	feed(&f, line, 999);
	cr_assert_eq(f.got.ncycles, 1);
	cr_assert(f.got.truncated[0]);
	teardown(&f);
	free(line);
	free(fb);
}

Test(stream, at_most_the_cycle_file_limit_of_numbers)
{
	struct fixture f;

	setup(&f);
	for (int n = 1; n <= RN_WATCH_MAX_CYCLE_FILES + 5; n++) {
		char *line = cycle_line(n, "run1", "impl", "");

		feed(&f, line, 1 << 20);
		if (n == RN_WATCH_MAX_CYCLE_FILES + 5)
			feed(&f, line, 1 << 20);  /* the same dropped number again */
		free(line);
	}
	cr_assert_eq(f.s.nseen, RN_WATCH_MAX_CYCLE_FILES);
	cr_assert_eq(rn_stream_dropped(&f.s), 5);
	fflush(f.fp);
	cr_assert_eq(count(f.buf, "cycle_limit"), 1);
	teardown(&f);
}
