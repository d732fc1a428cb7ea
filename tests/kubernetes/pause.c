/*
 * pause.c - the pod sandbox's process for the test cluster
 * (tests/kubernetes/cluster.sh): holds the pod's namespaces until it is
 * told to stop, reaps the zombies it inherits. Built static, it is the
 * whole image (no registry here to pull registry.k8s.io/pause from).
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig)
{
	(void)sig;
	_exit(0);
}

static void on_child(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int main(void)
{
	struct sigaction stop = { .sa_handler = on_stop }, child = { .sa_handler = on_child };

	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGTERM, &stop, NULL);
	child.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &child, NULL);
	for (;;)
		pause();
}
