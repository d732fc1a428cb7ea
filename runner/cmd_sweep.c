/*
 * cmd_sweep.c - `forge-runner sweep DIR`: the valid cycles of a step directory
 * as one JSON array on stdout, ordered by cycle number. Invalid files (and,
 * with --run-id, cycles of another run) are reported on stderr and skipped.
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
#include "forge/text.h"
#include "watch.h"

enum { S_RUN_ID = 1, S_HELP };

const struct fg_opt rn_sweep_options[] = {
	{ S_RUN_ID, "run-id", 0, "ID", NULL, "skip cycles carrying another run_id" },
	{ S_HELP, "help", 'h', NULL, NULL, "show help" },
	{ 0, NULL, 0, NULL, NULL, NULL },
};

/* Adds the cycle in dfd/name to arr, or says on stderr why it is skipped. */
static void sweep_one(int dfd, const char *dir, const char *name, const char *run_id, cJSON *arr)
{
	struct fg_cycle c;
	char err[256] = "";
	int r;

	fg_cycle_init(&c);
	r = fg_cycle_read_at(dfd, name, &c, NULL, err, sizeof(err));
	if (r)
		fprintf(stderr, "forge-runner: skipping '%s/%s': %s\n", dir, name,
			err[0] ? err : strerror(-r));
	else if (!fg_run_id_accepts(run_id, c.run_id))
		fprintf(stderr, "forge-runner: skipping '%s/%s': run_id '%s' is not '%s'\n", dir, name,
			c.run_id, run_id);
	else
		cJSON_AddItemToArray(arr, fg_cycle_to_cjson(&c));
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

static int sweep_dir(const char *dir, const char *run_id)
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
		fprintf(stderr, "forge-runner: cannot read '%s': %s\n", dir, err[0] ? err : strerror(-r));
		if (dfd >= 0)
			close(dfd);
		return FG_EXIT_FAILED;
	}
	arr = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++)
		sweep_one(dfd, dir, e[i].name, run_id, arr);
	text = fg_json_print(arr);
	fputs(text, stdout);
	free(text);
	cJSON_Delete(arr);
	fg_cycle_entries_free(e, n);
	close(dfd);
	return FG_EXIT_OK;
}

int rn_cmd_sweep(int argc, char **argv)
{
	struct fg_opts_iter it;
	const char *v, *dir = NULL, *run_id = NULL;
	char err[256];
	int id;

	fg_opts_init(&it, rn_sweep_options, argc, argv, 1);
	while (fg_opts_each(&it, &id, &v, err, sizeof(err))) {
		if (id == S_HELP)
			return rn_cmd_help("forge-runner sweep DIR [--run-id ID]", rn_sweep_options);
		if (id == S_RUN_ID)
			run_id = v;
		else if (dir)
			return rn_usage("sweep takes one directory");
		else
			dir = v;
	}
	if (fg_opts_failed(&it))
		return rn_usage("%s", err);
	if (!dir)
		return rn_usage("sweep needs a directory");
	return sweep_dir(dir, run_id);
}
