/*
 * msg.c - the message lines of both programs and their levels (see msg.h).
 */
#include "forge/msg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/text.h"
#include "forge/util.h"

static const char *const PREFIXES[] = {
	[FG_MSG_PLAIN] = "",
	[FG_MSG_INFO] = "",
	[FG_MSG_WARN] = "warning: ",
	[FG_MSG_ERROR] = "error: ",
	[FG_MSG_FAILED] = "the task failed: ",
};

const char *fg_msg_level_prefix(enum fg_msg_level level)
{
	return (size_t)level < ARRAY_SIZE(PREFIXES) ? PREFIXES[level] : "";
}

enum fg_msg_level fg_msg_level_of(const char *line, const char **text)
{
	const char *rest = line;

	if (!fg_skip_prefix(line, FG_MSG_PREFIX, &rest)) {
		if (text)
			*text = line;
		return FG_MSG_PLAIN;
	}
	if (text)
		*text = rest;
	for (size_t i = FG_MSG_WARN; i < ARRAY_SIZE(PREFIXES); i++)
		if (fg_skip_prefix(rest, PREFIXES[i], NULL))
			return (enum fg_msg_level)i;
	return FG_MSG_INFO;
}

char *fg_msg_vline(const char *prefix, enum fg_msg_level level, size_t max, const char *fmt,
		   va_list ap, size_t *text_len)
{
	const char *lp = fg_msg_level_prefix(level);
	size_t plen = strlen(lp) < max ? strlen(lp) : max;
	char *msg = fg_xmalloc(max + 1);
	struct fg_buf b;
	size_t len;
	int n;

	/* The level prefix counts in the message's bound. */
	memcpy(msg, lp, plen);
	n = vsnprintf(msg + plen, max + 1 - plen, fmt, ap);
	n = n < 0 ? n : n + (int)plen;
	len = n < 0 ? plen : (size_t)n > max ? max : (size_t)n;
	/* \xNN is the widest escape: four bytes per byte. */
	fg_buf_init(&b, strlen(prefix) + 4 * max + 8);
	if (level != FG_MSG_PLAIN)
		fg_buf_adds(&b, prefix);
	fg_escape_controls(&b, msg, len, 0);
	free(msg);
	if (text_len)
		*text_len = b.len;
	fg_buf_adds(&b, n >= 0 && (size_t)n > max ? "...\n" : "\n");
	return fg_buf_detach(&b, NULL);
}
