/*
 * test_entrypoint_evidence.c - the real forge-entrypoint and issue 23:
 * advice-only findings approve (listed, not looped on), Verified lines are
 * kept in the cycle, require_evidence asks once more and then rejects.
 */
#include "entrypoint_e2e.h"

TestSuite(entrypoint_evidence, .timeout = 180);

static const cJSON *member(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

Test(entrypoint_evidence, nitpick_only_table_approves_in_cycle_one_with_the_findings_listed)
{
	struct ep_ws w;
	struct fgt_proc p;

	ws_setup(&w);
	ws_review_md(&w, "default", "---\nmax_retries: 3\n---\nCheck.\n");
	char *wk = ws_script(&w, "worker.sh", "echo hi > greeting.txt\n");
	char *rv = ws_script(&w, "reviewer.sh",
			     "cat <<'EOF'\nLooks right.\n\n| # | Severity | Finding | Location | Evidence |\n"
			     "|---|---|---|---|---|\n| 1 | NITPICK | no trailing newline | greeting.txt:1 | cat -A |\n\n"
			     "**Verified:** cat greeting.txt -> hi\n\n<!-- review-result: findings=1 -->\nEOF\n");
	ws_run(&w, &p, wk, rv, NULL);
	cr_assert_eq(p.exit_code, 0, "stderr:\n%s", p.err);
	cJSON *c = ws_json(&w, "review_cycle_1.json");
	cr_assert_str_eq(member(c, "verdict")->valuestring, "approved");
	cr_assert(jtrue(c, "advice_only"));
	cr_assert_eq(cJSON_GetArraySize(member(c, "findings")), 1);
	cr_assert_str_eq(cJSON_GetArrayItem(member(c, "verified"), 0)->valuestring, "cat greeting.txt -> hi");
	cr_assert_not(ws_step_exists(&w, "review_cycle_2.json"), "advice is not looped on");
	cr_assert(strstr(p.err, "Review cycle 1/3: APPROVED - 1 advice finding(s), not looped on"), "%s", p.err);
	cJSON *s = ws_json(&w, "review_summary.json");
	cr_assert_str_eq(member(s, "state")->valuestring, "approved");
	cJSON_Delete(s);
	cJSON_Delete(c);
	free(wk);
	free(rv);
	fgt_proc_release(&p);
	ws_teardown(&w);
}

Test(entrypoint_evidence, require_evidence_asks_once_more_then_accepts_a_verified_approval)
{
	struct ep_ws w;
	struct fgt_proc p;

	ws_setup(&w);
	ws_review_md(&w, "default", "---\nmax_retries: 2\nrequire_evidence: true\n---\nCheck.\n");
	char *wk = ws_script(&w, "worker.sh", "echo hi > greeting.txt\n");
	/* First answer: a bare approval; asked again (the prompt says why), it
	 * says what it ran. */
	char *rv = ws_script(&w, "reviewer.sh",
			     "if grep -q 'needs executed evidence' \"$FORGE_PROMPT_FILE\"; then\n"
			     "  echo '**Verified:** cat greeting.txt -> hi'\nfi\necho APPROVED\n");
	ws_run(&w, &p, wk, rv, NULL);
	cr_assert_eq(p.exit_code, 0, "stderr:\n%s", p.err);
	cr_assert(strstr(p.err, "approved without executed evidence: asking once more"), "%s", p.err);
	cJSON *c = ws_json(&w, "review_cycle_1.json");
	cr_assert_str_eq(member(c, "verdict")->valuestring, "approved");
	cr_assert(jtrue(c, "reask"));
	cr_assert_eq(cJSON_GetArraySize(member(c, "verified")), 1);
	cJSON_Delete(c);
	free(wk);
	free(rv);
	fgt_proc_release(&p);
	ws_teardown(&w);
}

Test(entrypoint_evidence, require_evidence_rejects_an_approval_without_evidence_twice)
{
	struct ep_ws w;
	struct fgt_proc p;

	ws_setup(&w);
	ws_review_md(&w, "default", "---\nmax_retries: 1\nrequire_evidence: true\n---\nCheck.\n");
	char *wk = ws_script(&w, "worker.sh", "echo hi > greeting.txt\n");
	char *rv = ws_script(&w, "reviewer.sh",
			     "echo '**Verified:** nothing executable - no tests here'\necho APPROVED\n");
	ws_run(&w, &p, wk, rv, NULL);
	cr_assert_eq(p.exit_code, 0, "stderr:\n%s", p.err);
	cJSON *c = ws_json(&w, "review_cycle_1.json");
	cr_assert_str_eq(member(c, "verdict")->valuestring, "rejected");
	cr_assert(strstr(member(c, "feedback")->valuestring, "approval without executed evidence"));
	cJSON *s = ws_json(&w, "review_summary.json");
	cr_assert_str_eq(member(s, "state")->valuestring, "exhausted");
	cJSON_Delete(s);
	cJSON_Delete(c);
	free(wk);
	free(rv);
	fgt_proc_release(&p);
	ws_teardown(&w);
}
