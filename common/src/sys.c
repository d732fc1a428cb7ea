/*
 * sys.c - process start-up shared by the two programs (see sys.h).
 */
#include "forge/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <sodium.h>

int fg_sanitize_stdio(void)
{
	for (int fd = 0; fd < 3; fd++) {
		int got;

		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		/* The lowest free descriptor is fd, as 0..fd-1 are open by now. */
		got = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
		if (got < 0)
			return -errno;
		if (got != fd) {
			close(got);
			return -EBADF;
		}
	}
	return 0;
}

int fg_main_start(void)
{
	struct sigaction sa = { .sa_handler = SIG_IGN };
	int r = fg_sanitize_stdio();

	if (r < 0)
		return r;
	sigaction(SIGPIPE, &sa, NULL);
	return 0;
}

int fg_random_bytes(void *buf, size_t n)
{
	if (sodium_init() < 0)
		return -EIO;
	randombytes_buf(buf, n);
	return 0;
}
