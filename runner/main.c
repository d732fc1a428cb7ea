/*
 * main.c - forge-runner: make sure fds 0-2 are open, ignore SIGPIPE,
 * hand over to rn_main().
 */
#include "app.h"
#include "forge/exit.h"
#include "forge/sys.h"

int main(int argc, char **argv)
{
	if (fg_main_start() < 0)
		return FG_EXIT_RUNTIME;
	return rn_main(argc, argv);
}
