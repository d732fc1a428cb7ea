/*
 * panel.c - a reviewer panel: helpers per role, the cycle decisions, and
 * a panel's cycle of the loop (see panel.h).
 */
#include "panel.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "call.h"
#include "checks.h"
#include "cli.h"
#include "frames.h"
#include "judge.h"
#include "prompt.h"
#include "forge/alloc.h"
#include "forge/json.h"
#include "forge/fsutil.h"
#include "forge/text.h"
#include "forge/timeutil.h"
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
		/* No "error: ": the role counts as failed and the loop goes on. */
		ep_log(FG_MSG_INFO, "cannot set up signal handling for a reviewer: %s", strerror(-rc));
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
		/* Past the bound the rest is dropped and the error stays
		 * set: the result is then refused (take_review) and the role
		 * counts as failed. */
		fg_buf_add(out, buf, (size_t)k);
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

/* One helper as the entrypoint supervises it. */
struct helper {
	pid_t pid;          /* > 0 until reaped */
	int fd;             /* its pipe's read end; -1 once closed */
	bool killed;        /* we SIGKILLed it (end->why says why) */
};

/* Forwards a stop signal to every helper not reaped yet (so the pid is
 * still ours). */
static void forward(const struct ep_pid1 *p, const struct helper *h, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (h[i].pid > 0)
			kill(h[i].pid, p->term_sig);
}

/* What a helper's wait status says, when it is not a clean exit 0. */
static void helper_status(int st, struct ep_panel_end *end)
{
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	end->failed = true;
	if (WIFSIGNALED(st))
		snprintf(end->why, sizeof(end->why), "its helper process was killed by signal %d (%s)",
			 WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(end->why, sizeof(end->why), "its helper process exited with status %d",
			 WEXITSTATUS(st));
}

/* Ends a helper that stopped or overran: SIGKILL (a stopped process dies
 * of it too); its agent and the agent's leftovers are re-parented to us
 * as it dies and go with the orphans. */
static void kill_helper(struct helper *h, struct ep_panel_end *end)
{
	kill(h->pid, SIGKILL);
	h->killed = true;
	end->failed = true;
}

/*
 * Watches helper h: reaps it once it exited (and records how), kills it
 * when it stopped (SIGSTOP by one of its agent's processes) or passed the
 * deadline. Reaped by pid, never by waitpid(-1), so a pid we signal is
 * still one of them.
 */
static void watch_helper(struct helper *h, struct ep_panel_end *end, uint64_t t0, double deadline_s)
{
	int st;
	pid_t r;

	if (h->pid <= 0)
		return;
	do {
		r = waitpid(h->pid, &st, WNOHANG | WUNTRACED);
	} while (r < 0 && errno == EINTR);
	if (r == h->pid && WIFSTOPPED(st)) {
		if (!h->killed) {
			snprintf(end->why, sizeof(end->why), "its helper process was stopped by signal %d (%s)",
				 WSTOPSIG(st), strsignal(WSTOPSIG(st)));
			kill_helper(h, end);
		}
	} else if (r == h->pid) {
		if (!h->killed)
			helper_status(st, end);
		h->pid = -1;
	} else if (r < 0) {
		h->pid = -1;   /* ECHILD: not ours any more */
	} else if (!h->killed && fg_seconds_since(t0) > deadline_s) {
		snprintf(end->why, sizeof(end->why), "its helper process did not finish within %g s "
			 "(the role's agent timeouts plus their grace)", deadline_s);
		kill_helper(h, end);
	}
}

/* The helpers still to reap, as the orphan sweep must spare them. */
static size_t live_pids(const struct helper *h, size_t n, pid_t *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (h[i].pid > 0)
			out[k++] = h[i].pid;
	return k;
}

/* One tick: the pipes, each helper, the signals, the orphans. The number
 * of helpers not done yet (pipe open or not reaped). */
static size_t tick(struct ep_pid1 *p, struct helper *h, size_t n, struct fg_buf *out,
		   struct ep_panel_end *end, uint64_t t0, double deadline_s, unsigned *seen)
{
	struct pollfd pf[FG_REVIEWERS_MAX + 1];
	pid_t keep[FG_REVIEWERS_MAX];
	size_t live = 0;

	pf[0] = (struct pollfd){ p->fd, POLLIN, 0 };
	for (size_t i = 0; i < n; i++)
		pf[i + 1] = (struct pollfd){ h[i].fd, POLLIN, 0 };
	if (poll(pf, n + 1, TICK_MS) < 0 && errno != EINTR)
		return n;   /* cannot happen with valid fds: the tick goes on */
	for (size_t i = 0; i < n; i++) {
		if (h[i].fd >= 0 && pf[i + 1].revents && drain(h[i].fd, &out[i])) {
			close(h[i].fd);
			h[i].fd = -1;
		}
		watch_helper(&h[i], &end[i], t0, deadline_s);
		live += h[i].fd >= 0 || h[i].pid > 0;
	}
	ep_pid1_signals(p);
	if (p->nterm != *seen) {
		forward(p, h, n);
		*seen = p->nterm;
	}
	/* Any other child is what a dead helper left: its agent, their
	 * leftovers. Nothing of a role outlives its helper. */
	ep_pid1_kill_orphans(p, keep, live_pids(h, n, keep), 0);
	return live;
}

int ep_panel_fork(struct ep_pid1 *p, size_t n, ep_panel_job job, void *ctx, double deadline_s,
		  struct fg_buf *out, struct ep_panel_end *end)
{
	struct helper h[FG_REVIEWERS_MAX];
	unsigned start = p->nterm, seen = p->nterm;
	uint64_t t0 = fg_monotonic_ns();
	size_t live = 0;

	if (n > FG_REVIEWERS_MAX)
		n = FG_REVIEWERS_MAX;
	for (size_t i = 0; i < n; i++) {
		memset(&end[i], 0, sizeof(end[i]));
		h[i] = (struct helper){ -1, -1, false };
		h[i].fd = start_helper(p, job, ctx, i, &h[i].pid);
		live += h[i].fd >= 0 || h[i].pid > 0;
	}
	while (live)
		live = tick(p, h, n, out, end, t0, deadline_s, &seen);
	/* The helpers are gone: whatever of theirs is left goes too. */
	ep_pid1_kill_orphans(p, NULL, 0, EP_PANEL_CLEANUP_S);
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

	return !prev || rr == FG_REREVIEW_ALL || !r || r->j.verdict == FG_VERDICT_REJECTED;
}

static void merge_findings(struct fg_cycle *c, const struct fg_review *r)
{
	for (size_t j = 0; j < r->j.nfindings && c->j.nfindings < FG_FINDINGS_MAX; j++) {
		struct fg_finding *f;

		f = fg_judgement_add_finding(&c->j);
		fg_finding_copy(f, &r->j.findings[j]);
		if (!f->role)
			f->role = fg_xstrdup(r->role);
	}
}

/* Appends role r's part of the merged feedback to fb, whole or not at all:
 * a part that does not fit in the room left is replaced by its heading and
 * where the whole text is; when not even that fits the role gets no part.
 * fb's error is never set here, so every later role still gets its own. */
static void add_role_feedback(struct fg_buf *fb, const struct fg_review *r)
{
	const char *sep = fb->len ? "\n\n" : "";
	struct fg_buf part;

	fg_buf_init(&part, fg_buf_room(fb));
	if (fg_buf_addf(&part, "%s[%s] %s", sep, r->role, r->j.feedback) < 0) {
		fg_buf_reset(&part);
		fg_buf_addf(&part, "%s[%s] (feedback too long: see %s)", sep, r->role,
			    r->reviewer_log ? r->reviewer_log : "its log");
	}
	if (!fg_buf_error(&part))
		fg_buf_add(fb, part.data ? part.data : "", part.len);
	fg_buf_release(&part);
}

void ep_panel_merge(struct fg_cycle *c)
{
	struct fg_buf fb;

	fg_judgement_reset(&c->j);
	c->j.verdict = FG_VERDICT_APPROVED;
	fg_buf_init(&fb, FG_FEEDBACK_MAX);
	for (size_t i = 0; i < c->nreviews; i++) {
		const struct fg_review *r = &c->reviews[i];

		if (r->j.verdict == FG_VERDICT_REJECTED) {
			c->j.verdict = FG_VERDICT_REJECTED;
			add_role_feedback(&fb, r);
		}
		if (r->j.has_findings) {
			c->j.has_findings = true;
			merge_findings(c, r);
		}
	}
	/* The top-level feedback is "" when approved, as for one reviewer. */
	if (c->j.verdict == FG_VERDICT_APPROVED)
		fg_buf_reset(&fb);
	c->j.feedback = fg_buf_detach(&fb, NULL);
}

bool ep_panel_any_failed(const struct fg_cycle *c)
{
	if (!c->has_reviews)
		return c->reviewer_failed;
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

	if (c->j.verdict != FG_VERDICT_REJECTED || c->synthetic)
		return false;
	if (!c->has_reviews)
		return c->j.has_findings && only_questions(c->j.findings, c->j.nfindings, &questions) &&
		       questions > 0;
	for (size_t i = 0; i < c->nreviews; i++) {
		const struct fg_review *r = &c->reviews[i];

		if (r->failed)
			return false;
		if (r->j.verdict == FG_VERDICT_REJECTED && (!r->j.has_findings || !r->j.nfindings))
			return false;
		if (!only_questions(r->j.findings, r->j.nfindings, &questions))
			return false;
	}
	return questions > 0;
}

/* ---- a panel's cycle ----------------------------------------------------- */

struct panel_run {
	const struct ep_stage_in *in;
	const struct fg_cycle *prev;     /* the last cycle; NULL in cycle 1 */
	size_t idx[FG_REVIEWERS_MAX];    /* panel indices of the roles that run */
};

/* A role's prompt: from cycle 2 on with its own previous rejection. */
static char *role_prompt(const struct ep_stage_in *in, const struct fg_cycle *prev,
			 const struct fg_review *last)
{
	if (!prev || !last || last->j.verdict != FG_VERDICT_REJECTED)
		return ep_stage_with_evidence(in, ep_prompt_reviewer(in->t, NULL, 0));
	return ep_stage_with_evidence(in, ep_prompt_reviewer_again(in->t, prev->cycle, prev->max_cycles,
								   &last->j));
}

/* The outcome of a role's answer (a) into rv: the judgement moves, each
 * finding names the role. */
static void take_answer(struct fg_review *rv, struct ep_answer *a)
{
	fg_judgement_move(&rv->j, &a->j);
	rv->failed = a->failed;
	for (size_t i = 0; i < rv->j.nfindings; i++) {
		free(rv->j.findings[i].role);
		rv->j.findings[i].role = fg_xstrdup(rv->role);
	}
	if (!fg_usage_empty(&a->usage))
		rv->usage = fg_usage_to_cjson(&a->usage);
	rv->reask = a->reask;
	rv->runs = a->runs;
	fg_denied_merge(&rv->denied, &a->denied);
}

/* Role i of the panel's reviewer run into rv (initialised), in the role's
 * helper. 0 or EP_STOP_SIGNAL. */
static int review_role(const struct ep_stage_in *in, size_t i, const struct fg_cycle *prev,
		       struct fg_review *rv)
{
	const struct fg_reviewer *role = &in->cfg->reviewers[i];
	uint64_t t0 = fg_monotonic_ns();
	char *prompt = role_prompt(in, prev, ep_panel_review_of(prev, role->role));
	char *pname = fg_xasprintf("reviewer-prompt.%s.md", role->role);
	char *logname = fg_reviewer_log_name(in->k, role->role);
	struct ep_ask ask = { NULL, pname, role->role, in->role_system[i],
			      ep_step_log_open(in->step_dir, logname) };
	struct ep_answer a;
	int rc;

	ep_answer_init(&a);
	if (in->t->reviewer_system_in_prompt && ask.system_text) {
		char *both = ep_prompt_with_system(ask.system_text, prompt);

		free(prompt);
		prompt = both;
	}
	ask.prompt = prompt;
	rc = ep_judge_answer(in, &ask, &a);
	memcpy(rv->role, role->role, sizeof(rv->role));
	if (rc != EP_STOP_SIGNAL) {
		take_answer(rv, &a);
		rv->reviewer_log = ask.log_fd >= 0 ? fg_xstrdup(logname) : NULL;
		rv->elapsed_seconds = fg_seconds_since(t0);
	}
	if (ask.log_fd >= 0)
		close(ask.log_fd);
	ep_answer_release(&a);
	free(logname);
	free(pname);
	free(prompt);
	return rc;
}

/* The helper's job (panel.h): review, then send the review as JSON. */
static int role_job(void *ctx, size_t i, struct ep_pid1 *p, int out_fd)
{
	struct panel_run *pr = ctx;
	struct ep_stage_in in = *pr->in;
	struct fg_review rv;
	cJSON *o;
	char *text;

	in.pid1 = p;   /* this helper's own signals and children */
	fg_review_init(&rv);
	if (review_role(&in, pr->idx[i], pr->prev, &rv) == EP_STOP_SIGNAL) {
		fg_review_release(&rv);
		return 1;
	}
	o = fg_review_to_cjson(&rv);
	text = fg_json_print(o);
	ep_write_all(out_fd, text, strlen(text));
	free(text);
	cJSON_Delete(o);
	fg_review_release(&rv);
	return 0;
}

/* A failed review of role saying why (what the helper's end was). */
static void failed_review(struct fg_review *rv, const char *role, const char *why)
{
	fg_review_release(rv);
	snprintf(rv->role, sizeof(rv->role), "%s", role);
	rv->j.verdict = FG_VERDICT_REJECTED;
	rv->failed = true;
	rv->j.has_format = true;
	rv->j.format = FG_FORMAT_NONE;
	rv->j.feedback = fg_xasprintf("The review could not be completed: %s.", why);
}

/* What a helper sent, as role's review; a helper that did not end by
 * itself with status 0 (end), or nothing valid, is a failed review. */
static void take_review(const struct fg_buf *out, const struct ep_panel_end *end, const char *role,
			struct fg_review *rv)
{
	cJSON *o;

	if (end->failed) {
		/* role_failed: forge-runner logs it as an event of its own, from
		 * the frame (the line is for a person). */
		cJSON *f = cJSON_CreateObject();

		if (!f || !cJSON_AddStringToObject(f, "role", role) ||
		    !cJSON_AddStringToObject(f, "reason", end->why))
			abort();
		ep_log(FG_MSG_WARN, "role_failed: %s: %s", role, end->why);
		ep_frame_event("role_failed", f);
		cJSON_Delete(f);
		failed_review(rv, role, end->why);
		return;
	}
	/* A result cut at the bound is no result, whatever its start says. */
	o = out->len && !fg_buf_error(out) ? fg_json_parse_exact(out->data, out->len) : NULL;
	if (!o || fg_review_from_cjson(rv, o) < 0 || strcmp(rv->role, role) != 0)
		failed_review(rv, role, "the reviewer's helper process ended without a result");
	cJSON_Delete(o);
}

static void announce(const struct ep_stage_in *in, const struct panel_run *pr, size_t n)
{
	char names[FG_REVIEWERS_MAX * (FG_ROLE_MAX + 2) + 1] = "";
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		int m = snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
				 in->cfg->reviewers[pr->idx[i]].role);

		len += m > 0 ? (size_t)m : 0;
	}
	ep_log(FG_MSG_INFO, "running %zu of %zu reviewer(s) in parallel (cycle %d/%d): %s", n,
		 in->cfg->nreviewers, in->k, in->max, names);
}

/* Fills c's reviews: the roles that ran, and the others' standing reviews. */
static void assemble(const struct panel_run *pr, size_t n, struct fg_buf *out,
		     const struct ep_panel_end *end, struct fg_cycle *c)
{
	const struct fg_review_config *cfg = pr->in->cfg;
	size_t j = 0;

	c->has_reviews = true;
	c->nreviews = cfg->nreviewers;
	c->reviews = fg_xcalloc(c->nreviews, sizeof(*c->reviews));
	for (size_t i = 0; i < c->nreviews; i++) {
		const char *role = cfg->reviewers[i].role;
		struct fg_review *rv = &c->reviews[i];

		fg_review_init(rv);
		if (j < n && pr->idx[j] == i) {
			take_review(&out[j], &end[j], role, rv);
			j++;
			continue;
		}
		fg_review_copy(rv, ep_panel_review_of(pr->prev, role));
		if (!rv->from_cycle)
			rv->from_cycle = pr->prev->cycle;
	}
	ep_panel_merge(c);
}

/* The roles that ran this cycle did so in helper processes: their usage,
 * denied tools and "**Verified:**" lines come back in their reviews and are
 * counted here, in the cycle and in what the stage spent (a standing
 * review's lines stay in its review: they were run against an earlier
 * state). */
static void panel_usage(struct ep_stage_out *out)
{
	struct fg_cycle *c = &out->c;

	for (size_t i = 0; i < c->nreviews; i++) {
		struct fg_usage u;

		if (c->reviews[i].from_cycle)
			continue;
		fg_usage_from_cjson(&u, c->reviews[i].usage);
		fg_usage_add(&c->usage.reviewer, &u);
		fg_usage_add(&out->spent, &u);
		c->reask = c->reask || c->reviews[i].reask;
		fg_denied_merge(&c->denied.reviewer, &c->reviews[i].denied);
		fg_evidence_merge_verified(&c->ev.verified, &c->reviews[i].j.verified);
	}
}

double ep_panel_deadline(const struct ep_stage_in *in)
{
	/* The first answer, a re-ask without a verdict, one without evidence. */
	int runs = 1 + (in->t->reask ? 1 : 0) + (in->cfg->require_evidence ? 1 : 0);

	return runs * (in->t->timeout_s + 2 * in->t->kill_grace_s + EP_PANEL_RUN_SLACK_S);
}

int ep_panel_review(const struct ep_stage_in *in, struct ep_stage_out *out)
{
	struct panel_run pr = { in, in->nhist ? &in->hist[in->nhist - 1] : NULL, { 0 } };
	struct fg_buf res[FG_REVIEWERS_MAX];
	struct ep_panel_end end[FG_REVIEWERS_MAX];
	uint64_t t0 = fg_monotonic_ns();
	size_t n = 0;
	int rc;

	for (size_t i = 0; i < in->cfg->nreviewers; i++)
		if (ep_panel_runs(pr.prev, in->cfg->reviewers[i].role, in->cfg->rereview))
			pr.idx[n++] = i;
	for (size_t i = 0; i < n; i++)
		fg_buf_init(&res[i], EP_PANEL_OUT_MAX);
	announce(in, &pr, n);
	/* A signal that came between two agents: start no new one. */
	ep_pid1_poll(in->pid1, 0, NULL);
	rc = in->pid1->term_sig ? 1 : ep_panel_fork(in->pid1, n, role_job, &pr, ep_panel_deadline(in), res, end);
	if (!rc) {
		assemble(&pr, n, res, end, &out->c);
		panel_usage(out);
		out->elapsed = fg_seconds_since(t0);
	}
	for (size_t i = 0; i < n; i++)
		fg_buf_release(&res[i]);
	return rc ? EP_STOP_SIGNAL : 0;
}

void ep_panel_system_prompts(const struct fg_review_config *cfg, char **role_system)
{
	/* Each becomes {system_prompt}, its file, or the prompt's opening. */
	for (size_t i = 0; i < cfg->nreviewers; i++)
		role_system[i] = ep_prompt_reviewer_role_system(cfg->instructions, cfg->reviewers[i].role,
								cfg->reviewers[i].instructions);
}

