/*
 * app.c - subcommand dispatch (placeholder until the entrypoint lands).
 */
#include "app.h"

#include <stdio.h>

int ep_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("forge-entrypoint: not built yet\n", stderr);
	return 2;
}
