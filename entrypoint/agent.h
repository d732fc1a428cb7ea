/*
 * agent.h - one run of an agent (worker or reviewer) as a child process.
 *
 * The agent is fork+exec'ed from an argv (never a shell), in its own process
 * group, with the workspace as working directory. Its standard input is a
 * pipe that receives the prompt and is closed right after it (EOF), written
 * without blocking so an agent that never reads stdin cannot stall us. Its
 * stdout and stderr are pipes read with poll(): each line goes to echo_fd
 * prefixed "[role] " with its control characters escaped (fg_escape_controls:
 * "\r\033[2K" shows as \r\x1b[2K; a line longer than EP_AGENT_LINE_MAX is
 * emitted in chunks), stdout is also fed to an optional bounded capture and an optional
 * raw log capped at log_max bytes. Nothing grows with the agent's output.
 *
 * Ending: the run ends when the agent's pid has been reaped and its pipes
 * are closed. A timeout (total or idle) or a SIGTERM/SIGINT received by us
 * sends SIGTERM (or the received signal) to the whole group, then SIGKILL
 * after kill_grace_s. When the agent has exited, what is left of its group
 * (background children) gets SIGTERM, then SIGKILL after the grace, so no
 * stray process outlives the run. As a subreaper (pid1.h) the same goes for
 * every child of ours that is left then: a descendant that moved to its own
 * process group or session (setsid) and was re-parented to us.
 *
 * The box: between fork and exec the child enters the agent's box
 * (sandbox.h: its uid, then Landlock), built for its working directory,
 * its environment's HOME and TMPDIR and read_dir. A box that cannot be
 * built or entered is an agent that did not start.
 */
#ifndef EP_AGENT_H
#define EP_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "forge/phase.h"
#include "output.h"
#include "pid1.h"

#define EP_AGENT_LINE_MAX 8192

enum ep_agent_end {
	EP_AGENT_EXITED,        /* exited by itself: see exit_code */
	EP_AGENT_SIGNALED,      /* killed by a signal we did not send: see signal */
	EP_AGENT_TIMEOUT,       /* ran past timeout_s; killed */
	EP_AGENT_IDLE,          /* no output for idle_timeout_s; killed */
	EP_AGENT_NOT_STARTED,   /* could not be started: see error */
	EP_AGENT_INTERRUPTED    /* we got SIGTERM/SIGINT (pid1->term_sig); forwarded */
};

struct ep_agent_spec {
	const char *role;            /* "worker" or "reviewer": prefix and messages */
	char *const *argv;           /* argv[0] is looked up in envp's PATH; borrowed */
	char *const *envp;           /* the agent's whole environment; borrowed */
	const char *cwd;             /* working directory; borrowed */
	const char *input;           /* standard input (the prompt); may be NULL */
	size_t input_len;
	double timeout_s;            /* > 0 */
	double idle_timeout_s;       /* 0: no idle watchdog */
	double kill_grace_s;         /* between SIGTERM and SIGKILL */
	/* Every heartbeat_s seconds while the agent runs, one line on echo_fd
	 * (0: never): "forge-entrypoint: agent_running: worker for 30 s, 12
	 * lines, 3456 bytes of output" (the runner logs it as agent_running). */
	double heartbeat_s;
	struct ep_capture *capture;  /* stdout kept for the verdict, or NULL; borrowed */
	struct ep_output *output;    /* stdout fed to an output adapter, or NULL; borrowed */
	int log_fd;                  /* raw stdout copy, or -1; borrowed */
	uint64_t log_max;            /* cap on log_fd bytes (a note is added when cut) */
	int echo_fd;                 /* prefixed lines go here (usually 2), or -1 */
	bool merge_stderr;           /* stderr is also fed to capture and log_fd (a check's
	                              * output is both streams, in the order read) */
	const char *read_dir;        /* the agent's own prompt directory, which its box
	                              * lets it read (sandbox.h), or NULL; borrowed */
	bool unboxed;                /* the entrypoint's own tool (the change set's git,
	                              * which works in the private directory): no box */
	bool atomic_echo;            /* echo_fd is shared with other agents running at the
	                              * same time: each line is written in pieces of at
	                              * most PIPE_BUF bytes, each "[role] ...\n", so
	                              * lines of two agents never mix */
};

struct ep_agent_result {
	enum ep_agent_end end;
	int exit_code;               /* EXITED */
	int signal;                  /* SIGNALED; INTERRUPTED: the signal we received */
	int error;                   /* NOT_STARTED: positive errno */
	uint64_t out_bytes;          /* bytes the agent wrote to stdout */
	uint64_t err_bytes;          /* bytes it wrote to stderr */
	double seconds;              /* wall time of the run */
	struct fg_phase t;           /* when it began and ended (phase.h) */
	char what[1024];             /* "exited with status 3", "timed out after 3 s", ... */
};

/*
 * Runs the agent to its end. p must be initialised (ep_pid1_init). Returns 0
 * with r filled (whatever the agent did, including not starting), or a
 * negative errno when the runner itself failed (pipes, fork).
 */
int ep_agent_run(struct ep_pid1 *p, const struct ep_agent_spec *s, struct ep_agent_result *r);

/* True when the agent exited with status 0. */
bool ep_agent_ok(const struct ep_agent_result *r);

/* fg_write_all() that gives up silently on an error (a closed stderr must
 * not stop a run): for the echo, the agent log and the frames. */
void ep_write_all(int fd, const void *p, size_t n);

/*
 * Builds an environment: a copy of base (may be NULL) with every "NAME=value"
 * of set (NULL-terminated) replacing or adding NAME, and every bare "NAME"
 * of set removing it. out must be initialised.
 */
void ep_env_build(struct fg_strvec *out, char *const *base, char *const *set);

/* The value of name in envp (NULL-terminated "NAME=value" strings; may be
 * NULL), borrowed from it, or NULL. */
const char *ep_env_get(char *const *envp, const char *name);

#endif
