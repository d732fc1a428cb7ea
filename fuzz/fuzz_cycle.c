/*
 * fuzz_cycle.c - the cycle-file reader must refuse or accept any bytes
 * without crashing; an accepted cycle must serialise and parse back to the
 * same required fields.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forge/cycle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(const struct fg_cycle *c)
{
	struct fg_cycle back;
	char err[256];
	char *json = fg_cycle_to_json(c);

	fg_cycle_init(&back);
	if (fg_cycle_parse(&back, json, strlen(json), err, sizeof(err)) != 0)
		abort();
	if (back.cycle != c->cycle || back.max_cycles != c->max_cycles || back.j.verdict != c->j.verdict ||
	    strcmp(back.j.feedback, c->j.feedback) || strcmp(back.skill, c->skill) ||
	    strcmp(back.timestamp, c->timestamp))
		abort();
	fg_cycle_release(&back);
	free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_cycle c;
	char err[256];

	fg_cycle_init(&c);
	if (fg_cycle_parse(&c, (const char *)data, size, err, sizeof(err)) == 0)
		check_round_trip(&c);
	else if (!err[0])
		abort();
	fg_cycle_release(&c);
	return 0;
}
