/*
 * record.c - recording modes and the copy of detected cycle files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/fsutil.h"
#include "forge/util.h"
#include "record.h"

static const char *const mode_names[] = {
	[RN_RECORD_NONE] = "none",
	[RN_RECORD_LOG] = "log",
	[RN_RECORD_COPY] = "copy",
};

const char *rn_record_mode_name(enum rn_record_mode m)
{
	return FG_NAME_OF(mode_names, m, "none");
}

int rn_record_mode_parse(const char *s, enum rn_record_mode *out)
{
	/* An empty value is how an unset-but-exported variable looks: none. */
	if (!s || !*s) {
		*out = RN_RECORD_NONE;
		return 0;
	}
	return FG_NAME_PARSE(mode_names, s, 0, out);
}

/* The caller validates names; this is a last guard against leaving the recording dir. */
static int is_component(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

int rn_record_copy(const char *recording_dir, const char *step, const char *run_id,
		   const char *name, const void *data, size_t len)
{
	char *step_dir, *dir;
	int r;

	if (!*recording_dir || !is_component(step) || !is_component(run_id) || !is_component(name))
		return -EINVAL;
	step_dir = fg_path_join(recording_dir, step);
	dir = fg_path_join(step_dir, run_id);
	free(step_dir);
	r = fg_mkdir_p(dir, 0755);
	if (!r)
		r = fg_write_atomic(dir, name, data, len);
	free(dir);
	return r;
}
