/*
 * events.c - log events with format-specific shapes (see events.h).
 */
#include "events.h"

#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/fsutil.h"

/* Byte length of the first max_chars UTF-8 characters of s. */
static size_t prefix_bytes(const char *s, size_t max_chars)
{
	size_t i = 0, chars = 0;

	while (s[i] && chars < max_chars) {
		i++;
		/* Continuation bytes belong to the character already counted. */
		while (((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		chars++;
	}
	return i;
}

char *rn_utf8_prefix(const char *s, size_t max_chars)
{
	size_t keep;

	if (!s[prefix_bytes(s, max_chars)])
		return fg_xstrdup(s);
	/* The "..." counts towards max_chars: the spec caps the logged
	 * feedback at max_chars characters, marker included. */
	keep = prefix_bytes(s, max_chars > 3 ? max_chars - 3 : 0);
	return fg_xasprintf("%.*s...", (int)keep, s);
}

void rn_event_cycle(struct rn_log *l, enum rn_log_level level, const struct rn_cycle_report *r,
		    int full_path)
{
	const struct fg_cycle *c = r->cycle;
	char *fb = rn_utf8_prefix(c->feedback ? c->feedback : "", RN_FEEDBACK_LOG_CHARS);
	char *file = full_path ? fg_path_join(r->dir, r->name) : fg_xstrdup(r->name);
	const char *verdict = fg_verdict_kind_name(c->verdict);
	const char *source = rn_source_name(r->source);

	if (l->format == RN_LOG_JSON) {
		rn_log(l, level, "review_cycle", RN_LS("step", r->step), RN_LS("skill", c->skill),
		       RN_LI("cycle", c->cycle), RN_LI("max_cycles", c->max_cycles),
		       RN_LS("verdict", verdict), RN_LN("elapsed_seconds", c->elapsed_seconds),
		       RN_LS("feedback", fb), RN_LS("file", file), RN_LS("source", source),
		       RN_LS_OPT("run_id", c->run_id));
	} else {
		char *cyc = fg_xasprintf("%d/%d", c->cycle, c->max_cycles);
		char *el = fg_xasprintf("%.1fs", c->elapsed_seconds);

		rn_log(l, level, "review_cycle", RN_LS("step", r->step), RN_LS("skill", c->skill),
		       RN_LS("cycle", cyc), RN_LS("verdict", verdict), RN_LS("elapsed", el),
		       RN_LS("source", source), RN_LS("file", file), RN_LS("feedback", fb));
		free(cyc);
		free(el);
	}
	free(fb);
	free(file);
}
