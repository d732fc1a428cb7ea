/*
 * sweep.c - `forge-runner sweep DIR`: the valid cycles of a step directory
 * as one JSON array on stdout, ordered by cycle number. Invalid files (and,
 * with --run-id, cycles of another run) are reported on stderr and skipped.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "forge/cycle.h"

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
	else if (run_id && c.run_id && strcmp(run_id, c.run_id))
		fprintf(stderr, "forge-runner: skipping '%s/%s': run_id '%s' is not '%s'\n", dir, name,
			c.run_id, run_id);
	else
		cJSON_AddItemToArray(arr, fg_cycle_to_cjson(&c));
	fg_cycle_release(&c);
}

static int sweep_dir(const char *dir, const char *run_id)
{
	struct fg_cycle_entry *e = NULL;
	size_t n = 0;
	cJSON *arr;
	char *text;
	int dfd, r;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = dfd < 0 ? -errno : fg_cycle_list(dir, &e, &n);
	if (r) {
		fprintf(stderr, "forge-runner: cannot read '%s': %s\n", dir, strerror(-r));
		if (dfd >= 0)
			close(dfd);
		return 1;
	}
	arr = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++)
		sweep_one(dfd, dir, e[i].name, run_id, arr);
	text = cJSON_Print(arr);
	if (text)
		printf("%s\n", text);
	cJSON_free(text);
	cJSON_Delete(arr);
	fg_cycle_entries_free(e, n);
	close(dfd);
	return text ? 0 : 1;
}

int rn_cmd_sweep(int argc, char **argv)
{
	struct fg_opts_iter it;
	const char *v, *dir = NULL, *run_id = NULL;
	char err[256];
	int id, r;

	fg_opts_init(&it, rn_sweep_options, argc, argv, 1);
	while ((r = fg_opts_next(&it, &id, &v, err, sizeof(err))) > 0) {
		if (id == S_HELP)
			return rn_cmd_help("forge-runner sweep DIR [--run-id ID]", rn_sweep_options);
		if (id == S_RUN_ID)
			run_id = v;
		else if (dir)
			return rn_usage("sweep takes one directory");
		else
			dir = v;
	}
	if (r < 0)
		return rn_usage("%s", err);
	if (!dir)
		return rn_usage("sweep needs a directory");
	return sweep_dir(dir, run_id);
}
