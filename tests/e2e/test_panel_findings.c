/*
 * test_panel_findings.c - findings end to end: logged, reported by role
 * and counted in the metrics; questions that block a panel or a single
 * reviewer, and blocked as a failure when told to.
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

TestSuite(panel_findings, .timeout = 180);

Test(panel_findings, only_questions_left_ends_blocked_after_one_cycle)
{
	static const struct fgp_spec s = {
		FGP_PANEL_MD(""), FGP_ROLE_FILES,
		"case $r in\n"
		"security) shadow request_changes QUESTION 'Should tokens expire?';;\n"
		"*) shadow approve NOTE 'Nice names';;\n"
		"esac\n", NULL, NULL,
	};
	struct fgp t;

	fgp_run(&t, &s);
	/* Blocked exits as exhausted. */
	fgp_expect(&t, 0, "blocked", 1);
	cJSON *sum = fgw_step_json(&t.w, "review_summary.json");

	fge_assert_strs(sum, "state", "blocked");
	/* The summary and the result list the questions, and only them. */
	const cJSON *qs[2] = { cJSON_GetObjectItem(sum, "questions"),
			       cJSON_GetObjectItem(t.res, "questions") };

	for (int i = 0; i < 2; i++) {
		cr_assert_eq(cJSON_GetArraySize(qs[i]), 1, "%s", i ? "result" : "summary");
		const cJSON *q = cJSON_GetArrayItem(qs[i], 0);

		fge_assert_strs(q, "role", "security", "severity", "QUESTION",
				"filePath", "src/security.c", "title", "Should tokens expire?");
		cr_assert_eq(fge_jint(q, "line"), 7);
	}
	cJSON_Delete(sum);
	cr_assert_not(fge_exists_in(t.save, "work_fb_1.txt"), "the worker ran again");
	cr_assert(strstr(t.p.err, "[security] src/security.c:7: Should tokens expire?"), "%s", t.p.err);
	fgp_release(&t);
}

Test(panel_findings, blocked_fails_like_exhausted_when_told_to)
{
	static const char *const env[] = { "AUTO_REVIEW_FAIL_ON_EXHAUSTION=1", NULL };
	static const struct fgp_spec s = {
		FGP_PANEL_MD(""), FGP_ROLE_FILES,
		FGP_ONLY("$r", "security", "shadow request_changes QUESTION 'Which licence?'"), env, NULL,
	};
	struct fgp t;

	fgp_run(&t, &s);
	fgp_expect(&t, 3, "blocked", -1);
	fgp_release(&t);
}

/* forge-runner report on the run's result file; owned stdout. */
static char *report(const struct fgp *t, const char *format)
{
	const char *argv[] = { FG_RUNNER_BIN, "report", "--format", format, t->w.result, NULL };
	struct fgt_proc p;
	char *out;

	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 30), 0);
	cr_assert_eq(p.exit_code, 0, "report: %s", p.err);
	out = strdup(p.out);
	fgt_proc_release(&p);
	return out;
}

/* The JSON report's entry of the run (borrowed from *doc, which the
 * caller deletes). */
static const cJSON *report_entry(const struct fgp *t, cJSON **doc)
{
	char *js = report(t, "json");
	const cJSON *entry;

	*doc = cJSON_Parse(js);
	entry = cJSON_GetObjectItem(cJSON_GetObjectItem(*doc, "entries"), "PAN-1__impl");
	cr_assert_not_null(entry, "%s", js);
	free(js);
	return entry;
}

#define EXHAUSTING_MD \
	"---\nmax_retries: 1\nreviewers:\n  - role: correctness\n  - role: security\n---\nShared.\n"
#define EXHAUSTING_REVIEWER \
	"case $r in\n" \
	"correctness) shadow request_changes BLOCKING 'Off by one';;\n" \
	"*) shadow approve NOTE 'Consider a limit';;\n" \
	"esac\n"

Test(panel_findings, findings_are_logged_reported_by_role_and_counted)
{
	static const struct fgp_spec s = { EXHAUSTING_MD, { NULL }, EXHAUSTING_REVIEWER, NULL, NULL };
	struct fgp t;

	fgp_run(&t, &s);
	fgp_expect(&t, 0, "exhausted", -1);
	/* One review_findings event for the cycle, blocking first. */
	cJSON *events = fge_json_lines(t.p.err);
	const cJSON *ev = fge_find_event(events, "review_findings", "step", "impl");

	cr_assert_eq(fge_count_events(events, "review_findings", NULL, NULL), 1);
	cr_assert_not_null(ev, "%s", t.p.err);
	cr_assert_eq(fge_jint(ev, "cycle"), 1);
	cr_assert_eq(fge_jint(ev, "count"), 2);
	cr_assert_eq(fge_jint(ev, "shown"), 2);
	const cJSON *f0 = cJSON_GetArrayItem(cJSON_GetObjectItem(ev, "findings"), 0);
	const cJSON *f1 = cJSON_GetArrayItem(cJSON_GetObjectItem(ev, "findings"), 1);

	fge_assert_strs(f0, "role", "correctness", "severity", "BLOCKING",
			"location", "src/correctness.c:7", "title", "Off by one");
	fge_assert_strs(f1, "role", "security", "severity", "NOTE");
	cJSON_Delete(events);
	/* The report: per-role verdicts and the open findings as a table. */
	char *md = report(&t, "markdown");

	cr_assert(strstr(md, "**Reviewers:** correctness rejected · security approved\n"), "%s", md);
	cr_assert(strstr(md, "| role | severity | location | finding |\n|---|---|---|---|\n"
			     "| correctness | BLOCKING | src\\/correctness\\.c\\:7 | Off by one |\n"
			     "| security | NOTE | src\\/security\\.c\\:7 | Consider a limit |\n"), "%s", md);
	free(md);
	cJSON *rj;
	const cJSON *entry = report_entry(&t, &rj);
	const cJSON *of = cJSON_GetObjectItem(entry, "open_findings");

	cr_assert_eq(cJSON_GetArraySize(of), 2);
	cr_assert_str_eq(fge_jstr(cJSON_GetArrayItem(of, 0), "location"), "src/correctness.c:7");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(entry, "reviews")), 2);
	cJSON_Delete(rj);
	/* The metric, one series per role and verdict, valid for promtool. */
	char *prom = fgt_read(t.w.metrics, NULL);

	cr_assert_not_null(prom);
	cr_assert(strstr(prom, "forge_review_role_verdicts_total{skill=\"impl\",step=\"impl\","
			       "role=\"correctness\",verdict=\"rejected\"} 1\n"), "%s", prom);
	cr_assert(strstr(prom, "forge_review_role_verdicts_total{skill=\"impl\",step=\"impl\","
			       "role=\"security\",verdict=\"approved\"} 1\n"), "%s", prom);
	free(prom);
	if (fgt_exists("/usr/bin/promtool")) {
		const char *argv[] = { "/usr/bin/promtool", "check", "metrics", NULL };
		char *text = fgt_read(t.w.metrics, NULL);
		struct fgt_proc p;

		cr_assert_eq(fgt_run(&p, argv, NULL, NULL, text, 30), 0);
		cr_assert_eq(p.exit_code, 0, "promtool: %s%s", p.out, p.err);
		fgt_proc_release(&p);
		free(text);
	} else {
		cr_log_warn("promtool check skipped: /usr/bin/promtool is missing");
	}
	fgp_release(&t);
}

Test(panel_findings, findings_in_the_text_log)
{
	static const struct fgp_spec s = { EXHAUSTING_MD, { NULL }, EXHAUSTING_REVIEWER, NULL, "text" };
	struct fgp t;

	fgp_run(&t, &s);
	fgp_expect(&t, 0, NULL, -1);
	cr_assert(strstr(t.p.err, " INFO review_findings step=impl skill=impl cycle=1 count=2 shown=2 "
				  "findings=\"[correctness] BLOCKING src/correctness.c:7 Off by one | "
				  "[security] NOTE src/security.c:7 Consider a limit\" run_id="), "%s", t.p.err);
	/* Every event names its run and task (after its own fields). */
	cr_assert(strstr(t.p.err, "Consider a limit\" run_id=") &&
		  strstr(strstr(t.p.err, "Consider a limit\" run_id="), " task_key=PAN-1\n"), "%s", t.p.err);
	fgp_release(&t);
}

/* A single reviewer (no panel) with the review-result marker's findings
 * table: only a QUESTION row left ends the loop blocked, at once. */
Test(panel_findings, a_findings_table_of_questions_blocks_a_single_reviewer)
{
	static const struct fgp_spec s = {
		"---\nmax_retries: 3\n---\nReview it.\n", { NULL },
		"printf '## Review\\n\\n| # | Severity | Finding | Location | Evidence |\\n"
		"|---|---|---|---|---|\\n| 1 | QUESTION | Which licence? | LICENSE:1 | none chosen |\\n"
		"\\n<!-- review-result: findings=1 -->\\n'\n", NULL, NULL,
	};
	struct fgp t;

	fgp_run(&t, &s);
	fgp_expect(&t, 0, "blocked", 1);
	const cJSON *q = cJSON_GetArrayItem(cJSON_GetObjectItem(t.res, "questions"), 0);

	cr_assert_not_null(q, "%s", t.p.err);
	fge_assert_strs(q, "title", "Which licence?", "filePath", "LICENSE");
	cr_assert(strstr(t.p.err, "[default] LICENSE:1: Which licence?"), "%s", t.p.err);
	fgp_release(&t);
}

/* The approving cycle's advice includes that of a role whose approval
 * stands from an earlier cycle: security approved in cycle 1 with a
 * NITPICK and ran nothing in cycle 2, where correctness approved. The
 * report lists it, by role, beside every role's Verified lines. */
Test(panel_findings, the_report_shows_the_advice_of_a_standing_approval)
{
	static const struct fgp_spec s = {
		FGP_PANEL_MD(""), FGP_ROLE_FILES,
		"case $r$n in\n"
		"correctness1) shadow request_changes BLOCKING 'Off by one'\n"
		"  printf '**Verified:** sh tests.sh -> 1 failed\\n';;\n"
		"correctness2) shadow approve - -\n"
		"  printf '**Verified:** sh tests.sh -> 5 passed\\n';;\n"
		"security1) shadow approve NITPICK 'Name the constant'\n"
		"  printf '**Verified:** sh audit.sh -> clean\\n';;\n"
		"*) exit 9;;\n"
		"esac\n", NULL, NULL,
	};
	struct fgp t;

	fgp_run(&t, &s);
	fgp_expect(&t, 0, "approved", -1);
	char *md = report(&t, "markdown");

	cr_assert(strstr(md, "**Advice (listed, not looped on):**\n\n| role | severity | location | finding |\n"
			     "|---|---|---|---|\n| security | NITPICK | src\\/security\\.c\\:7 | Name the constant |\n"),
		  "%s", md);
	cr_assert(strstr(md, "**Verified:**\n\n- correctness\\: sh tests\\.sh \\-\\> 1 failed\n"
			     "- security\\: sh audit\\.sh \\-\\> clean\n"
			     "- correctness\\: sh tests\\.sh \\-\\> 5 passed\n"), "%s", md);
	free(md);
	cJSON *rj;
	const cJSON *entry = report_entry(&t, &rj);
	const cJSON *v = cJSON_GetObjectItem(entry, "verified");

	cr_assert_eq(cJSON_GetArraySize(v), 3);
	cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetArrayItem(v, 1)), "security: sh audit.sh -> clean");
	cr_assert_str_eq(fge_jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(entry, "advice_findings"), 0), "role"),
			 "security");
	cJSON_Delete(rj);
	fgp_release(&t);
}
