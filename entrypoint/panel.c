/*
 * panel.c - a reviewer panel: helpers per role, and the cycle decisions
 * (see panel.h).
 */
#include "panel.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/verdict.h"

#define TICK_MS 100

/* ---- fan-out ------------------------------------------------------------ */

/* In the helper: a signal handling of its own (the parent's signalfd would
 * steal nothing from us, but our agents' SIGCHLD must come to us), then the
 * job. Never returns. */
static void helper(struct ep_pid1 *parent, ep_panel_job job, void *ctx, size_t i, int out_fd)
{
	struct ep_pid1 p;
	int rc;

	close(parent->fd);
	rc = ep_pid1_init(&p);
	if (rc < 0) {
		fprintf(stderr, "forge-entrypoint: cannot set up signal handling for a reviewer: %s\n",
			strerror(-rc));
		_exit(125);
	}
	rc = job(ctx, i, &p, out_fd);
	close(out_fd);
	ep_pid1_poll(&p, 0, NULL);
	_exit(rc & 0xff);
}

/* Reads what is there from fd into out; 1 when the helper closed it. */
static int drain(int fd, struct fg_buf *out)
{
	char buf[65536];
	ssize_t k = read(fd, buf, sizeof(buf));

	if (k > 0) {
		/* Past the bound the rest is dropped: the result is then no
		 * valid JSON and the role counts as failed. */
		if (fg_buf_add(out, buf, (size_t)k) < 0)
			out->len = out->max;
		return 0;
	}
	return k == 0 || (errno != EINTR && errno != EAGAIN);
}

/* Forks helper i; its pipe's read end, or -1 (nothing will come). */
static int start_helper(struct ep_pid1 *p, ep_panel_job job, void *ctx, size_t i, pid_t *pid)
{
	int pp[2];

	if (pipe2(pp, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);   /* no buffered text may be written twice */
	*pid = fork();
	if (*pid == 0) {
		close(pp[0]);
		helper(p, job, ctx, i, pp[1]);
	}
	close(pp[1]);
	if (*pid < 0) {
		close(pp[0]);
		return -1;
	}
	fcntl(pp[0], F_SETFL, O_NONBLOCK);
	return pp[0];
}

/* Forwards a stop signal to every helper not reaped yet (so the pid is
 * still ours). */
static void forward(const struct ep_pid1 *p, const pid_t *pid, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pid[i] > 0)
			kill(pid[i], p->term_sig);
}

/* Reaps helper i if it has exited (pid[i] becomes -1). */
static void reap(pid_t *pid)
{
	pid_t r;

	do {
		r = waitpid(*pid, NULL, WNOHANG);
	} while (r < 0 && errno == EINTR);
	if (r == *pid || (r < 0 && errno == ECHILD))
		*pid = -1;
}

int ep_panel_fork(struct ep_pid1 *p, size_t n, ep_panel_job job, void *ctx, struct fg_buf *out)
{
	pid_t pid[FG_REVIEWERS_MAX];
	int fd[FG_REVIEWERS_MAX];
	unsigned start = p->nterm, seen = p->nterm;
	size_t live = 0;

	if (n > FG_REVIEWERS_MAX)
		n = FG_REVIEWERS_MAX;
	for (size_t i = 0; i < n; i++) {
		pid[i] = -1;
		fd[i] = start_helper(p, job, ctx, i, &pid[i]);
		live += fd[i] >= 0 || pid[i] > 0;
	}
	/* Until every helper has closed its pipe and been reaped. Helpers are
	 * reaped by pid, never by waitpid(-1), so a pid we signal is still
	 * one of them; orphans wait for the final ep_pid1_poll(). */
	while (live) {
		struct pollfd pf[FG_REVIEWERS_MAX + 1];

		pf[0] = (struct pollfd){ p->fd, POLLIN, 0 };
		for (size_t i = 0; i < n; i++)
			pf[i + 1] = (struct pollfd){ fd[i], POLLIN, 0 };
		if (poll(pf, n + 1, TICK_MS) < 0 && errno != EINTR)
			continue;   /* cannot happen with valid fds: the tick goes on */
		live = 0;
		for (size_t i = 0; i < n; i++) {
			if (fd[i] >= 0 && pf[i + 1].revents && drain(fd[i], &out[i])) {
				close(fd[i]);
				fd[i] = -1;
			}
			if (fd[i] < 0 && pid[i] > 0)
				reap(&pid[i]);
			live += fd[i] >= 0 || pid[i] > 0;
		}
		ep_pid1_signals(p);
		if (p->nterm != seen) {
			forward(p, pid, n);
			seen = p->nterm;
		}
	}
	ep_pid1_poll(p, 0, NULL);
	return p->nterm != start || p->term_sig ? 1 : 0;
}

/* ---- decisions ---------------------------------------------------------- */

const struct fg_review *ep_panel_review_of(const struct fg_cycle *c, const char *role)
{
	for (size_t i = 0; c && i < c->nreviews; i++)
		if (!strcmp(c->reviews[i].role, role))
			return &c->reviews[i];
	return NULL;
}

bool ep_panel_runs(const struct fg_cycle *prev, const char *role, enum fg_rereview rr)
{
	const struct fg_review *r = ep_panel_review_of(prev, role);

	return !prev || rr == FG_REREVIEW_ALL || !r || r->verdict == FG_ROLE_REJECTED;
}

static void merge_findings(struct fg_cycle *c, const struct fg_review *r)
{
	for (size_t j = 0; j < r->nfindings && c->nfindings < FG_FINDINGS_MAX; j++) {
		struct fg_finding *f;

		c->findings = fg_xreallocarray(c->findings, c->nfindings + 1, sizeof(*c->findings));
		f = &c->findings[c->nfindings++];
		fg_finding_copy(f, &r->findings[j]);
		if (!f->role)
			f->role = fg_xstrdup(r->role);
	}
}

void ep_panel_merge(struct fg_cycle *c)
{
	struct fg_buf fb;

	free(c->feedback);
	fg_findings_free(c->findings, c->nfindings);
	c->findings = NULL;
	c->nfindings = 0;
	c->has_findings = false;
	c->verdict = FG_VERDICT_APPROVED;
	fg_buf_init(&fb, FG_FEEDBACK_MAX);
	for (size_t i = 0; i < c->nreviews; i++) {
		const struct fg_review *r = &c->reviews[i];

		if (r->verdict == FG_ROLE_REJECTED) {
			c->verdict = FG_VERDICT_REJECTED;
			/* Bounded: a role's feedback that does not fit is cut to
			 * its heading; the worker still gets the findings. */
			if (fg_buf_addf(&fb, "%s[%s] %s", fb.len ? "\n\n" : "", r->role, r->feedback) < 0)
				fg_buf_addf(&fb, "%s[%s] (feedback too long: see %s)", fb.len ? "\n\n" : "",
					    r->role, r->reviewer_log ? r->reviewer_log : "its log");
		}
		if (r->has_findings) {
			c->has_findings = true;
			merge_findings(c, r);
		}
	}
	/* The top-level feedback is "" when approved, as for one reviewer. */
	if (c->verdict == FG_VERDICT_APPROVED)
		fg_buf_reset(&fb);
	c->feedback = fg_buf_detach(&fb, NULL);
}

bool ep_panel_any_failed(const struct fg_cycle *c)
{
	for (size_t i = 0; i < c->nreviews; i++)
		if (c->reviews[i].failed)
			return true;
	return false;
}

/* Every finding of f[0..n) that is not advice is a QUESTION; *questions
 * counts them. */
static bool only_questions(const struct fg_finding *f, size_t n, size_t *questions)
{
	for (size_t i = 0; i < n; i++) {
		int rank = fg_finding_rank(&f[i]);

		if (rank == FG_RANK_BLOCKING || rank == FG_RANK_SUGGESTION)
			return false;
		*questions += rank == FG_RANK_QUESTION;
	}
	return true;
}

bool ep_panel_blocked(const struct fg_cycle *c)
{
	size_t questions = 0;

	if (c->verdict != FG_VERDICT_REJECTED || c->synthetic)
		return false;
	if (!c->has_reviews)
		return c->has_findings && only_questions(c->findings, c->nfindings, &questions) &&
		       questions > 0;
	for (size_t i = 0; i < c->nreviews; i++) {
		const struct fg_review *r = &c->reviews[i];

		if (r->failed)
			return false;
		if (r->verdict == FG_ROLE_REJECTED && (!r->has_findings || !r->nfindings))
			return false;
		if (!only_questions(r->findings, r->nfindings, &questions))
			return false;
	}
	return questions > 0;
}
