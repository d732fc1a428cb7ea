/*
 * record.h - recording of detected cycle files (--record,
 * AUTO_REVIEW_RECORD_POLLED_FILES): none records nothing; log logs each
 * cycle at info (the caller does that); copy keeps each detected file byte
 * for byte at {recording_dir}/{step}/{run_id}/review_cycle_N.json, written
 * atomically, a rewritten cycle replacing the older copy.
 */
#ifndef RN_RECORD_H
#define RN_RECORD_H

#include <stddef.h>

enum rn_record_mode { RN_RECORD_NONE, RN_RECORD_LOG, RN_RECORD_COPY };

/* "none", "log", "copy". */
const char *rn_record_mode_name(enum rn_record_mode m);
/* Parses "none", "log", "copy" (and "" as none). 0 or -EINVAL. */
int rn_record_mode_parse(const char *s, enum rn_record_mode *out);

/*
 * Copies one detected cycle file's exact bytes into
 * {recording_dir}/{step}/{run_id}/{name} (directories created 0755), atomically.
 * All strings borrowed; step, run_id and name must already be validated names.
 * Returns 0 or a negative errno.
 */
int rn_record_copy(const char *recording_dir, const char *step, const char *run_id,
		   const char *name, const void *data, size_t len);

#endif
