/*
 * main.c - forge-entrypoint: make sure fds 0-2 are open, ignore SIGPIPE,
 * hand over to ep_main().
 */
#include <signal.h>

#include "app.h"
#include "forge/exit.h"
#include "forge/sys.h"

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = SIG_IGN };

	if (fg_sanitize_stdio() < 0)
		return FG_EXIT_RUNTIME;
	sigaction(SIGPIPE, &sa, NULL);
	return ep_main(argc, argv);
}
