/*
 * main.c - forge-entrypoint: make sure fds 0-2 are open, ignore SIGPIPE,
 * hand over to ep_main().
 */
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "app.h"

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = SIG_IGN };

	/* A closed 0, 1 or 2 would let a later open() land on it. */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
			return 125;
	sigaction(SIGPIPE, &sa, NULL);
	return ep_main(argc, argv);
}
