/*
 * test_panel.c - a review panel end to end (forge-runner, the real
 * entrypoint, one stand-in reviewer playing each role): roles run in
 * parallel, only a rejecting role runs again (or all with rereview), scope,
 * a crashing role, stalls, role files, a stop during a panel.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgpanel.h"
#include "fgtest.h"
#include "fgws.h"

TestSuite(panel, .timeout = 180);

static cJSON *cycle_json(const struct fgp *t, int n)
{
	char *path = fgt_fmt("%s/review_cycle_%d.json", t->w.step_dir, n);
	cJSON *o = fge_json_file(path, t->p.err);

	free(path);
	return o;
}

/* The entry of role in cycle c's reviews (fails the test when absent). */
static const cJSON *review_of(const cJSON *c, const char *role)
{
	const cJSON *r = fge_find_by(cJSON_GetObjectItemCaseSensitive(c, "reviews"), "role", role);

	cr_assert_not_null(r, "no review of role '%s'", role);
	return r;
}

static int nreviews(const cJSON *c)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(c, "reviews");

	cr_assert(cJSON_IsArray(r), "the cycle has no reviews array");
	return cJSON_GetArraySize(r);
}

/* The reviewers' runs ("ROLE CYCLE" lines) hold every one of has and none
 * of lacks (NULL-terminated lists, either may be NULL). */
static void expect_runs(const struct fgp *t, const char *const *has, const char *const *lacks)
{
	char *s = fge_read_in(t->save, "runs");

	cr_assert_not_null(s, "no reviewer ran");
	fgt_assert_has_at(s, has ? has : (const char *const[]){ NULL }, __FILE__, __LINE__);
	fgt_assert_lacks_at(s, lacks ? lacks : (const char *const[]){ NULL }, __FILE__, __LINE__);
	free(s);
}

static long long saved_ns(const struct fgp *t, const char *what, const char *role, int n)
{
	char *name = fgt_fmt("%s_%s_%d", what, role, n);
	char *s = fge_read_in(t->save, name);
	long long v;

	cr_assert_not_null(s, "the reviewer did not save %s", name);
	v = strtoll(s, NULL, 10);
	free(s);
	free(name);
	return v;
}

Test(panel, two_roles_both_approve_in_one_cycle_that_ran_them_in_parallel)
{
	static const struct fgp_spec s = {
		FGP_PANEL_MD(""), FGP_ROLE_FILES,
		"sleep 1\nshadow approve - -\n", NULL, NULL,
	};
	struct fgp t;

	fgp_run(&t, &s);
	fgp_expect(&t, 0, "approved", 1);
	cJSON *c1 = cycle_json(&t, 1);

	fge_assert_strs(c1, "verdict", "approved", "feedback", "");
	cr_assert_eq(nreviews(c1), 2);
	cr_assert_str_eq(fge_jstr(review_of(c1, "correctness"), "verdict"), "approved");
	cr_assert_str_eq(fge_jstr(review_of(c1, "security"), "verdict"), "approved");
	cr_assert_str_eq(fge_jstr(review_of(c1, "security"), "reviewer_log"),
			 "review_cycle_1.security.reviewer.log");
	cr_assert(fge_exists_in(t.w.step_dir, "review_cycle_1.correctness.reviewer.log"));
	cr_assert(fge_exists_in(t.w.step_dir, "review_cycle_1.security.reviewer.log"));
	cr_assert_not(fge_exists_in(t.w.step_dir, "review_cycle_1.reviewer.log"));
	/* Each role's system prompt: protocol, shared body, its own file only. */
	char *sys = fge_read_in(t.save, "sys_security_1.txt");

	fgt_assert_has(sys, "Verdict protocol", "Shared instructions.", "## Your role: security",
		       "Check the input handling.");
	cr_assert_null(strstr(sys, "Check the logic."), "%s", sys);
	cr_assert_lt(strstr(sys, "Shared instructions.") - sys, strstr(sys, "Check the input") - sys);
	free(sys);
	/* Lines on the entrypoint's stderr carry the role. */
	fgt_assert_has(t.p.err, "[reviewer:security] security review",
		       "[reviewer:correctness] correctness review");
	/* Concurrency from the agents' own clocks: each started before the
	 * other ended, so their runs overlapped. */
	long long cs = saved_ns(&t, "start", "correctness", 1), ce = saved_ns(&t, "end", "correctness", 1);
	long long ss = saved_ns(&t, "start", "security", 1), se = saved_ns(&t, "end", "security", 1);

	cr_assert_lt(cs, se, "correctness started after security ended: not in parallel");
	cr_assert_lt(ss, ce, "security started after correctness ended: not in parallel");
	cJSON_Delete(c1);
	fgp_release(&t);
}

Test(panel, a_rejecting_role_runs_again_with_its_findings_the_approving_one_does_not)
{
	static const struct fgp_spec s = {
		FGP_PANEL_MD(""), FGP_ROLE_FILES,
		FGP_ONLY("$r$n", "correctness1", "shadow request_changes BLOCKING 'Off by one'"), NULL, NULL,
	};
	struct fgp t;

	fgp_run(&t, &s);
	fgp_expect(&t, 0, "approved", -1);
	/* Cycle 1 ran both (in either order), cycle 2 only correctness: security
	 * approved in cycle 1 and does not run again. */
	expect_runs(&t, (const char *const[]){ "correctness 1\n", "security 1\n", "correctness 2\n", NULL },
		    (const char *const[]){ "security 2", NULL });
	cJSON *c1 = cycle_json(&t, 1), *c2 = cycle_json(&t, 2);

	cr_assert_str_eq(fge_jstr(c1, "verdict"), "rejected");
	cr_assert(strstr(fge_jstr(c1, "feedback"), "[correctness]"), "%s", fge_jstr(c1, "feedback"));
	const cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(c1, "findings"), 0);

	cr_assert_str_eq(fge_jstr(f, "role"), "correctness");
	cr_assert_str_eq(fge_jstr(c2, "verdict"), "approved");
	cr_assert_eq(nreviews(c2), 2);
	cr_assert_eq(fge_jint(review_of(c2, "security"), "from_cycle"), 1);
	cr_assert_null(cJSON_GetObjectItem(review_of(c2, "correctness"), "from_cycle"));
	/* The worker got one list, by role, with file:line. */
	char *fb = fge_read_in(t.save, "work_fb_1.txt");

	fgt_assert_has(fb, "#### correctness", "src/correctness.c:7: Off by one");
	cr_assert_null(strstr(fb, "#### security"), "%s", fb);
	free(fb);
	/* The re-review asks correctness about its own finding. */
	char *p = fge_read_in(t.save, "prompt_correctness_2.txt");

	fgt_assert_has(p, "src/correctness.c:7: Off by one", "confirm whether it is fixed");
	free(p);
	cJSON_Delete(c1);
	cJSON_Delete(c2);
	fgp_release(&t);
}

Test(panel, rereview_all_runs_every_role_again)
{
	static const struct fgp_spec s = {
		FGP_PANEL_MD("rereview: all\n"), FGP_ROLE_FILES,
		FGP_ONLY("$r$n", "correctness1", "shadow request_changes BLOCKING 'Off by one'"), NULL, NULL,
	};
	struct fgp t;

	fgp_run(&t, &s);
	fgp_expect(&t, 0, NULL, -1);
	expect_runs(&t, (const char *const[]){ "security 2\n", NULL }, NULL);
	fgp_release(&t);
}

Test(panel, an_out_of_scope_role_never_blocks)
{
	static const struct fgp_spec s = {
		FGP_PANEL_MD(""), FGP_ROLE_FILES,
		FGP_ONLY("$r", "security", "printf 'Docs only.\\n\\nVerdict: OUT OF SCOPE\\n'"), NULL, NULL,
	};
	struct fgp t;

	fgp_run(&t, &s);
	fgp_expect(&t, 0, "approved", -1);
	cJSON *c1 = cycle_json(&t, 1);

	cr_assert_str_eq(fge_jstr(c1, "verdict"), "approved");
	cr_assert_str_eq(fge_jstr(review_of(c1, "security"), "verdict"), "out_of_scope");
	cr_assert_str_eq(fge_jstr(review_of(c1, "security"), "format"), "verdict_line");
	cJSON_Delete(c1);
	fgp_release(&t);
}

Test(panel, a_crashing_role_rejects_the_cycle_and_runs_again)
{
	static const struct fgp_spec s = {
		FGP_PANEL_MD(""), FGP_ROLE_FILES,
		FGP_ONLY("$r$n", "security1", "echo 'segfault' >&2; exit 139"), NULL, NULL,
	};
	struct fgp t;

	fgp_run(&t, &s);
	fgp_expect(&t, 0, "approved", -1);
	cJSON *c1 = cycle_json(&t, 1);
	const cJSON *sec = review_of(c1, "security");

	cr_assert_str_eq(fge_jstr(c1, "verdict"), "rejected");
	cr_assert_str_eq(fge_jstr(sec, "verdict"), "rejected");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(sec, "failed")));
	cr_assert(strstr(fge_jstr(sec, "feedback"), "exited with status 139"), "%s",
		  fge_jstr(sec, "feedback"));
	cr_assert(strstr(t.p.err, "[reviewer:security] segfault"), "%s", t.p.err);
	expect_runs(&t, (const char *const[]){ "security 2\n", NULL },
		    (const char *const[]){ "correctness 2", NULL });
	cJSON_Delete(c1);
	fgp_release(&t);
}

Test(panel, the_same_findings_twice_end_stalled)
{
	static const struct fgp_spec s = {
		FGP_PANEL_MD("stop_when_stalled: true\n"), FGP_ROLE_FILES,
		FGP_ONLY("$r", "correctness", "shadow request_changes BLOCKING 'Off by one'"), NULL, NULL,
	};
	struct fgp t;

	fgp_run(&t, &s);
	fgp_expect(&t, 0, "stalled", 2);
	cJSON *c2 = cycle_json(&t, 2);

	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c2, "stalled")));
	cJSON_Delete(c2);
	fgp_release(&t);
}

Test(panel, a_role_file_escaping_its_directory_is_refused_with_a_warning)
{
	static const struct fgp_spec s = {
		"---\nreviewers:\n  - role: correctness\n  - role: evil\n    instructions: ../../secret.md\n"
		"---\nShared.\n",
		{ NULL }, "shadow approve - -\n", NULL, NULL,
	};
	struct fgp t;

	fgp_run(&t, &s);
	fgp_expect(&t, 0, NULL, -1);
	cr_assert(strstr(t.p.err, "role file '../../secret.md' of role 'evil' refused"), "%s", t.p.err);
	cJSON *c1 = cycle_json(&t, 1);

	cr_assert_eq(nreviews(c1), 1);
	cr_assert_str_eq(fge_jstr(review_of(c1, "correctness"), "verdict"), "approved");
	cJSON_Delete(c1);
	expect_runs(&t, NULL, (const char *const[]){ "evil", NULL });
	fgp_release(&t);
}

Test(panel, a_panel_without_a_valid_entry_is_one_reviewer)
{
	static const struct fgp_spec s = {
		"---\nreviewers:\n  - role: Not_A_Slug\n---\nShared.\n", { NULL },
		"echo \"role=$r\"; echo APPROVED\n", NULL, NULL,
	};
	struct fgp t;

	fgp_run(&t, &s);
	fgp_expect(&t, 0, NULL, -1);
	fgt_assert_has(t.p.err, "'reviewers' has no valid entry", "[reviewer] role=default");
	cJSON *c1 = cycle_json(&t, 1);

	cr_assert_null(cJSON_GetObjectItem(c1, "reviews"));
	cr_assert_str_eq(fge_jstr(c1, "reviewer_log"), "review_cycle_1.reviewer.log");
	cJSON_Delete(c1);
	fgp_release(&t);
}


/* A stop signal reaches the entrypoint while two roles review: it is
 * forwarded to each role's helper and on to its agent's group, the run
 * ends with 128+15 at once, and no cycle or summary claims an end. */
/* A process of the test's own (not in the entrypoint's tree): once
 * save/ep_pid names the entrypoint, it sends it SIGTERM (20 s at most). */
static pid_t sigterm_when_named(const char *save)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char *path = fgt_fmt("%s/ep_pid", save);

		for (int i = 0; i < 2000; i++) {
			char *text = fgt_read(path, NULL);

			if (text && strtol(text, NULL, 10) > 0) {
				kill((pid_t)strtol(text, NULL, 10), SIGTERM);
				_exit(0);
			}
			free(text);
			usleep(10000);
		}
		_exit(1);
	}
	return pid;
}

Test(panel, sigterm_during_a_panel_stops_every_role)
{
	struct fgp t;
	static const char rev[] =
		"#!/bin/sh\n"
		"r=$FORGE_REVIEWER_ROLE\n"
		"sleep 30 &\n"
		"echo $! > \"$SAVE/sleep_$r\"\n"
		"if [ \"$r\" = b ]; then\n"
		"  until [ -s \"$SAVE/sleep_a\" ]; do sleep 0.05; done\n"
		/* our parent is the role's helper, its parent the entrypoint;
		 * an agent's own SIGTERM is ignored: the test's
		 * killer, from outside the entrypoint's tree, sends it */
		"  ep=$(cut -d' ' -f4 /proc/$PPID/stat)\n"
		"  echo \"$ep\" > \"$SAVE/ep_pid.tmp\"; mv \"$SAVE/ep_pid.tmp\" \"$SAVE/ep_pid\"\n"
		"fi\n"
		"wait\n"
		"echo APPROVED\n";

	memset(&t, 0, sizeof(t));
	fgw_init(&t.w);
	t.save = fgw_path(&t.w, "save");
	fge_write_in(t.w.ws, ".keep", "");
	fge_write_in(t.save, ".keep", "");
	fge_write_in(t.w.skills, "default/impl/review.md",
		     "---\nreviewers:\n  - role: a\n  - role: b\n---\nShared.\n");
	fge_write_in(t.w.root, "work.sh", "#!/bin/sh\necho worked\n");
	fge_write_in(t.w.root, "rev.sh", rev);
	char *wcmd = fgt_fmt("FORGE_WORKER_CMD=sh %s/work.sh", t.w.root);
	char *rcmd = fgt_fmt("FORGE_REVIEWER_CMD=sh %s/rev.sh", t.w.root);
	char *save = fgt_fmt("SAVE=%s", t.save);
	const char *env[] = { wcmd, rcmd, save, "FORGE_AGENT_ENV=SAVE", "FORGE_AGENT_KILL_GRACE=1",
			      "AUTO_REVIEW_MAX_RETRIES", NULL };
	const char *argv[] = { FG_ENTRYPOINT_BIN, "run", "--workspace", t.w.ws, "--skills-dir",
			       t.w.skills, "--step", "impl", "--skill", "impl", NULL };

	pid_t killer = sigterm_when_named(t.save);

	cr_assert_eq(fgt_run(&t.p, argv, env, NULL, NULL, 25), 0);
	waitpid(killer, NULL, 0);
	cr_assert_eq(t.p.timed_out, 0, "the entrypoint did not stop: %s", t.p.err);
	fgp_expect(&t, 143, NULL, -1);
	cr_assert(strstr(t.p.err, "stopped by signal 15"), "%s", t.p.err);
	cr_assert_not(fge_exists_in(t.w.step_dir, "review_cycle_1.json"));
	free(fgw_summary_failure(&t.w, "interrupted"));
	for (int i = 0; i < 2; i++) {
		char *name = fgt_fmt("sleep_%s", i ? "b" : "a");
		char *pid = fge_read_in(t.save, name);

		cr_assert_not_null(pid, "role %s never started", i ? "b" : "a");
		cr_assert_not(fgt_alive(strtol(pid, NULL, 10)), "role %s's agent outlived the run",
			      i ? "b" : "a");
		free(pid);
		free(name);
	}
	free(wcmd);
	free(rcmd);
	free(save);
	fgp_release(&t);
}

/* A panel role that gives no verdict (after its re-ask) in two
 * cycles in a row ends the loop failed, naming the role, instead of
 * sending the worker back until the cycles run out. */
Test(panel, a_role_without_a_verdict_twice_ends_the_loop_failed)
{
	static const struct fgp_spec s = {
		"---\nmax_retries: 4\nreviewers:\n  - role: correctness\n  - role: security\n---\nShared.\n",
		{ NULL },
		"case $r in\n"
		"correctness) echo LGTM;;\n"
		"*) shadow request_changes BLOCKING 'Validate input';;\n"
		"esac\n",
		NULL, NULL,
	};
	struct fgp t;
	char *runs;

	fgp_run(&t, &s);
	fgp_expect(&t, 1, "failed", 2);
	cr_assert_not_null(strstr(t.p.err, "the review failed: the reviewer correctness failed or gave no "
				  "verdict in cycles 1 and 2"), "%s", t.p.err);
	runs = fge_read_in(t.save, "runs");
	cr_assert_null(strstr(runs, " 3\n"), "a third cycle ran:\n%s", runs);
	free(runs);
	fgp_release(&t);
}
