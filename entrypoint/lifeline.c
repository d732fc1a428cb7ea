/*
 * lifeline.c - the seal key and the lifeline on stdin (see lifeline.h).
 */
#include "lifeline.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli.h"
#include "forge/exit.h"
#include "forge/timeutil.h"

/* How long the key line may take to arrive: forge-runner writes it as soon
 * as the process exists; through `kubectl attach` (a pod) it may take a
 * while after the container started. */
#define KEY_TIMEOUT_MS 120000

static struct fg_seal_key key;
static bool have_key;
static int life_fd = -1;
static bool lost;

const struct fg_seal_key *ep_seal_key(void)
{
	return have_key ? &key : NULL;
}

static bool env_is(const char *name, const char *want)
{
	const char *v = getenv(name);

	return v && !strcmp(v, want);
}

/* One byte of fd 0 within the deadline: 1, 0 at end of file, -1 on error
 * or timeout. */
static int read_byte(char *c, uint64_t deadline)
{
	for (;;) {
		struct pollfd pf = { 0, POLLIN, 0 };
		uint64_t now = fg_monotonic_ns();
		ssize_t n;

		if (now >= deadline)
			return -1;
		if (poll(&pf, 1, (int)((deadline - now) / 1000000 + 1)) < 0 && errno != EINTR)
			return -1;
		if (!pf.revents)
			continue;
		n = read(0, c, 1);
		if (n == 1 || n == 0)
			return (int)n;
		if (errno != EINTR && errno != EAGAIN)
			return -1;
	}
}

/* The key line, exactly FG_SEAL_KEY_HEX hex digits and "\n": 0 or -1. */
static int read_key(void)
{
	char line[FG_SEAL_KEY_HEX + 1];
	uint64_t deadline = fg_monotonic_ns() + (uint64_t)KEY_TIMEOUT_MS * 1000000;
	size_t n = 0;
	int r = -1;

	while (n < sizeof(line)) {
		if (read_byte(&line[n], deadline) != 1)
			break;
		if (line[n++] == '\n') {
			r = 0;
			break;
		}
	}
	if (!r && fg_seal_key_parse(line, n - 1, &key))
		r = -1;
	memset(line, 0, sizeof(line));
	have_key = r == 0;
	return r;
}

/* Moves the lifeline above fd 2 and puts /dev/null on fd 0. */
static void keep_lifeline(void)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	life_fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
	if (life_fd >= 0)
		fcntl(life_fd, F_SETFL, fcntl(life_fd, F_GETFL) | O_NONBLOCK);
	if (null >= 0) {
		dup2(null, 0);
		close(null);
	}
	/* The local engine: the runner is our parent. As PID 1 of a container
	 * the parent is outside our pid namespace: the pipe says it all. */
	if (getpid() != 1) {
		pid_t parent = getppid();

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			lost = true;
	}
}

int ep_lifeline_setup(void)
{
	bool want_key = env_is("FORGE_SEAL_KEY_STDIN", "1");
	bool want_life = env_is("FORGE_LIFELINE", "stdin");

	if (want_key && read_key() < 0) {
		ep_log(FG_MSG_ERROR, "FORGE_SEAL_KEY_STDIN=1 but standard input gave no seal key "
			 "(a first line of %d lowercase hex digits)", FG_SEAL_KEY_HEX);
		return FG_EXIT_USAGE;
	}
	if (!want_key)
		ep_log(FG_MSG_INFO, "no seal key (FORGE_SEAL_KEY_STDIN is not 1): the records of this "
			 "run are unsealed, and a forge-runner believes none of them");
	if (want_life)
		keep_lifeline();
	/* Nothing of the channel reaches the agents' environment. */
	unsetenv("FORGE_SEAL_KEY_STDIN");
	unsetenv("FORGE_LIFELINE");
	return 0;
}

bool ep_lifeline_lost(void)
{
	char buf[256];
	ssize_t n;

	if (lost || life_fd < 0)
		return lost;
	/* Whatever the runner sends after the key means nothing: drained. */
	do
		n = read(life_fd, buf, sizeof(buf));
	while (n > 0 || (n < 0 && errno == EINTR));
	if (n == 0 || (n < 0 && errno != EAGAIN)) {
		lost = true;
		close(life_fd);
		life_fd = -1;
	}
	return lost;
}
