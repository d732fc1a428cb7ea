/*
 * app.c - subcommand dispatch (placeholder until the entrypoint lands).
 */
#include "app.h"

#include <stdio.h>

int rn_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("forge-runner: not built yet\n", stderr);
	return 2;
}
