/*
 * main.c - forge-entrypoint: make sure fds 0-2 are open, ignore SIGPIPE,
 * hand over to ep_main().
 */
#include "app.h"
#include "forge/exit.h"
#include "forge/sys.h"

int main(int argc, char **argv)
{
	if (fg_main_start() < 0)
		return FG_EXIT_RUNTIME;
	return ep_main(argc, argv);
}
