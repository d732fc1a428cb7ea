/*
 * cmd_sweep.c - `forge-runner sweep DIR`: the valid cycles of a step directory
 * as one JSON array on stdout, ordered by cycle number. Invalid files (and,
 * with --run-id, cycles of another run) are reported on stderr and skipped.
 * Each cycle says what its seal is ("seal": "sealed", or "unverified"
 * without --seal-key-file); with the key a forged one is skipped with a
 * record_forged line on stderr (forge/seal.h).
 *
 * DIR's parent is taken as the operator named it; DIR itself is opened from
 * it with O_NOFOLLOW (a symlink is refused), and the listing and every read
 * go through that one descriptor, like the watch does.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "forge/json.h"
#include "forge/alloc.h"
#include "forge/cycle.h"
#include "forge/fsutil.h"
#include "forge/seal.h"
#include "forge/text.h"
#include "watch.h"

enum { S_RUN_ID = 1, S_SEAL_KEY, S_STEP, S_HELP };

const struct fg_opt rn_sweep_options[] = {
	{ S_RUN_ID, "run-id", 0, "ID", NULL, "skip cycles carrying another run_id" },
	{ S_SEAL_KEY, "seal-key-file", 0, "FILE", NULL,
	  "the run's seal key (64 hex digits): skip forged records (record_forged on stderr); "
	  "without it every cycle says \"seal\": \"unverified\"" },
	{ S_STEP, "step", 0, "NAME", NULL, "the step the seals are bound to (default: DIR's last component)" },
	{ S_HELP, "help", 'h', NULL, NULL, "show help" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

/* What a sweep checks the seals with: the key (NULL: none) and the step. */
struct sweep_seal {
	const struct fg_seal_key *key;
	const char *step;
};

/* Adds the cycle in dfd/name to arr, or says on stderr why it is skipped. */
static void sweep_one(int dfd, const char *dir, const char *name, int n, const char *run_id,
		      const struct sweep_seal *ss, cJSON *arr)
{
	struct fg_cycle c;
	struct fg_buf raw;
	enum fg_seal_status seal = FG_SEAL_UNVERIFIED;
	char err[256] = "";
	int r;

	fg_cycle_init(&c);
	fg_buf_init(&raw, FG_CYCLE_MAX_BYTES);
	r = fg_cycle_read_at(dfd, name, &c, &raw, err, sizeof(err));
	if (!r)
		seal = fg_cycle_seal_check(ss->key, ss->step, name, n, &c,
								fg_buf_str(&raw), raw.len);
	if (r) {
		rn_msg(FG_MSG_WARN, "skipping '%s/%s': %s", dir, name,
			err[0] ? err : strerror(-r));
	} else if (!fg_run_id_accepts(run_id, c.run_id)) {
		rn_msg(FG_MSG_WARN, "skipping '%s/%s': run_id '%s' is not '%s'", dir, name,
			c.run_id, run_id);
	} else if (fg_seal_forged(seal)) {
		rn_msg(FG_MSG_WARN, "record_forged '%s/%s': %s", dir, name,
			fg_seal_status_name(seal));
	} else {
		cJSON *o = fg_cycle_to_cjson(&c);

		cJSON_AddStringToObject(o, FG_SEAL_MEMBER, fg_seal_status_name(seal));
		cJSON_AddItemToArray(arr, o);
	}
	fg_buf_release(&raw);
	fg_cycle_release(&c);
}

/* Opens dir: its parent by path, its last component without following it.
 * A descriptor or a negative errno (err says why a component was refused). */
static int open_step_dir(const char *dir, char *err, size_t errlen)
{
	char *d = fg_xstrdup(dir), *parent = NULL, *base = NULL;
	size_t n = strlen(d);
	int pfd, fd;

	while (n > 1 && d[n - 1] == '/')
		d[--n] = '\0';
	fd = fg_path_split(d, &parent, &base);
	if (!fd && (!strcmp(base, ".") || !strcmp(base, ".."))) {
		/* "sweep ." names the directory by its parent: resolve it as named. */
		char *real = realpath(d, NULL);

		free(parent);
		free(base);
		fd = real ? fg_path_split(real, &parent, &base) : -errno;
		free(real);
	}
	if (!fd) {
		pfd = fg_open_dir(AT_FDCWD, parent, 0);
		fd = pfd < 0 ? pfd : fg_open_beneath(pfd, base, 0, err, errlen);
		if (pfd >= 0)
			close(pfd);
	}
	free(parent);
	free(base);
	free(d);
	return fd;
}

static int sweep_dir(const char *dir, const char *run_id, struct sweep_seal *ss)
{
	struct fg_cycle_entry *e = NULL;
	size_t n = 0;
	char err[320] = "";
	cJSON *arr;
	char *text;
	int dfd, r;

	dfd = open_step_dir(dir, err, sizeof(err));
	r = dfd < 0 ? dfd : fg_cycle_list_at(dfd, &e, &n);
	if (r) {
		rn_msg(FG_MSG_ERROR, "cannot read '%s': %s", dir, err[0] ? err : strerror(-r));
		if (dfd >= 0)
			close(dfd);
		return FG_EXIT_FAILED;
	}
	arr = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++)
		sweep_one(dfd, dir, e[i].name, e[i].n, run_id, ss, arr);
	text = fg_json_print(arr);
	fputs(text, stdout);
	free(text);
	cJSON_Delete(arr);
	fg_cycle_entries_free(e, n);
	close(dfd);
	return FG_EXIT_OK;
}

/* The step of DIR's seals: --step, else DIR's last component (owned). */
static char *dir_step(const char *dir, const char *step)
{
	char *d = fg_xstrdup(dir), *parent = NULL, *base = NULL;
	size_t n = strlen(d);

	if (step) {
		free(d);
		return fg_xstrdup(step);
	}
	while (n > 1 && d[n - 1] == '/')
		d[--n] = '\0';
	if (fg_path_split(d, &parent, &base))
		base = fg_xstrdup(d);
	free(parent);
	free(d);
	return base;
}

static int sweep_main(const char *dir, const char *run_id, const char *key_file,
		      const char *step)
{
	struct fg_seal_key key;
	struct sweep_seal ss = { NULL, NULL };
	char *st;
	int r;

	if (key_file && rn_seal_key_option(key_file, &key))
		return FG_EXIT_USAGE;
	ss.key = key_file ? &key : NULL;
	ss.step = st = dir_step(dir, step);
	r = sweep_dir(dir, run_id, &ss);
	free(st);
	fg_seal_key_wipe(&key);
	return r;
}

int rn_cmd_sweep(int argc, char **argv)
{
	struct fg_opts_iter it;
	const char *dir = NULL, *run_id = NULL, *key_file = NULL, *step = NULL;

	fg_opts_init(&it, rn_sweep_options, argc, argv, 1);
	while (fg_opts_each(&it)) {
		if (it.id == S_HELP)
			return rn_cmd_help("forge-runner sweep DIR [--run-id ID] [--seal-key-file FILE]",
					   rn_sweep_options);
		if (it.id == S_RUN_ID)
			run_id = it.value;
		else if (it.id == S_SEAL_KEY)
			key_file = it.value;
		else if (it.id == S_STEP)
			step = it.value;
		else if (dir)
			return rn_cmd_usage("sweep", "sweep takes one directory");
		else
			dir = it.value;
	}
	if (fg_opts_failed(&it))
		return rn_cmd_usage("sweep", "%s", it.err);
	if (!dir)
		return rn_cmd_usage("sweep", "sweep needs a directory");
	return sweep_main(dir, run_id, key_file, step);
}
