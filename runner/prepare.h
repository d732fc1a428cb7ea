/*
 * prepare.h - before a run starts: its run id, and the step directory
 * created and cleared of the files a previous run left (prepare.c).
 */
#ifndef RN_PREPARE_H
#define RN_PREPARE_H

#define RN_RUN_ID_LEN 16

/* Fills out with RN_RUN_ID_LEN lowercase hex characters and a NUL (getrandom). */
void rn_run_id_generate(char out[RN_RUN_ID_LEN + 1]);

/*
 * Creates dir (mkdir -p, 0755) and removes stale files directly in it:
 * canonical review_cycle_N.json, review_summary.json,
 * review_cycle_*.reviewer.log and our atomic temp files. Only regular files
 * and symlinks are removed (unlinkat: a symlink is removed as an entry and
 * never followed); directories, FIFOs and devices are left alone (a FIFO
 * named like a cycle is later reported corrupt and skipped). Neither the
 * directory nor its parent (W/.forge) may be a symlink (-ELOOP, nothing
 * created). *cycles_removed counts removed cycle files.
 * 0 or negative errno.
 */
int rn_prepare_step_dir(const char *dir, long *cycles_removed);

#endif
