/*
 * test_sys.c - fg_sanitize_stdio() in a forked child whose descriptors 0-2
 * are closed for real (the parent's must stay untouched).
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forge/sys.h"

TestSuite(sys, .timeout = 30);

/* In the child: 0 when fd is open on /dev/null with the access mode want. */
static int on_dev_null(int fd, int want)
{
	struct stat a, b;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || (fl & O_ACCMODE) != want)
		return 1;
	if (fstat(fd, &a) < 0 || stat("/dev/null", &b) < 0)
		return 1;
	return a.st_rdev == b.st_rdev && S_ISCHR(a.st_mode) ? 0 : 1;
}

/* Forks; the child closes the descriptors in mask (bit n: fd n), calls
 * fg_sanitize_stdio() and exits with a code naming the first failed check. */
static int child_status(unsigned mask)
{
	int status;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int fd;

		for (int i = 0; i < 3; i++)
			if (mask & (1u << i))
				close(i);
		if (fg_sanitize_stdio() != 0)
			_exit(10);
		for (int i = 0; i < 3; i++)
			if ((mask & (1u << i)) && on_dev_null(i, i ? O_WRONLY : O_RDONLY))
				_exit(11 + i);
		/* A new file no longer lands on 0-2. */
		fd = open("/dev/null", O_RDONLY);
		_exit(fd > 2 ? 0 : 20);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "child killed by signal %d", WTERMSIG(status));
	return WEXITSTATUS(status);
}

Test(sys, closed_stdio_descriptors_are_reopened_on_dev_null)
{
	static const unsigned masks[] = { 1, 2, 4, 3, 5, 6, 7 };

	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++)
		cr_assert_eq(child_status(masks[i]), 0, "closed mask %u: check %d failed", masks[i],
			     child_status(masks[i]));
}

Test(sys, open_descriptors_are_left_alone)
{
	int before = fcntl(1, F_GETFL);

	cr_assert_eq(fg_sanitize_stdio(), 0);
	cr_assert_eq(fcntl(1, F_GETFL), before);
	cr_assert_eq(child_status(0), 0);
}
