/*
 * msg.c - the entrypoint's message levels (see msg.h).
 */
#include "forge/msg.h"

#include <string.h>

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

	if (strncmp(line, FG_MSG_PREFIX, FG_MSG_PREFIX_LEN) != 0) {
		if (text)
			*text = line;
		return FG_MSG_PLAIN;
	}
	rest += FG_MSG_PREFIX_LEN;
	if (text)
		*text = rest;
	for (size_t i = FG_MSG_WARN; i < ARRAY_SIZE(PREFIXES); i++)
		if (!strncmp(rest, PREFIXES[i], strlen(PREFIXES[i])))
			return (enum fg_msg_level)i;
	return FG_MSG_INFO;
}
