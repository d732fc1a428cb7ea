/*
 * test_evidence.c - the evidence members of a cycle file (evidence.h):
 * checks, changes, diff, no_change, advice_only and verified round-trip,
 * wrong types count as absent, bounds hold.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/cycle.h"
#include "forge/evidence.h"

TestSuite(evidence, .timeout = 60);

static void base(struct fg_cycle *c)
{
	fg_cycle_init(c);
	c->cycle = 1;
	c->max_cycles = 3;
	c->j.verdict = FG_VERDICT_REJECTED;
	c->j.feedback = strdup("x");
	c->skill = strdup("implement-task");
	snprintf(c->timestamp, sizeof c->timestamp, "%s", "2026-12-01T19:00:00Z");
}

Test(evidence, every_member_round_trips)
{
	struct fg_cycle c, back;
	struct fg_check_result *r;
	char err[256];
	char *json;

	base(&c);
	r = fg_evidence_add_check(&c.ev, "tests");
	r->exit_code = 1;
	r->duration_seconds = 1.23456;
	free(r->output_tail);
	r->output_tail = strdup("FAIL: add");
	r->log = strdup("review_cycle_1.check.tests.log");
	r = fg_evidence_add_check(&c.ev, "lint");
	r->timed_out = true;
	fg_evidence_add_change(&c.ev, FG_CHANGE_MODIFIED, "calc.sh", NULL, 3, 1);
	fg_evidence_add_change(&c.ev, FG_CHANGE_RENAMED, "b.txt", "a.txt", -1, -1);
	c.ev.since_review = true;
	c.ev.diff = strdup("review_cycle_1.diff");
	c.ev.no_change = true;
	c.ev.advice_only = true;
	fg_strvec_push(&c.ev.verified, "make test -> ok");
	json = fg_cycle_to_json(&c);
	fg_cycle_init(&back);
	cr_assert_eq(fg_cycle_parse(&back, json, strlen(json), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(back.ev.nchecks, 2);
	cr_assert_str_eq(back.ev.checks[0].name, "tests");
	cr_assert_eq(back.ev.checks[0].exit_code, 1);
	cr_assert_float_eq(back.ev.checks[0].duration_seconds, 1.235, 1e-9);
	cr_assert_str_eq(back.ev.checks[0].output_tail, "FAIL: add");
	cr_assert_str_eq(back.ev.checks[0].log, "review_cycle_1.check.tests.log");
	cr_assert_eq(back.ev.checks[1].exit_code, -1);
	cr_assert(back.ev.checks[1].timed_out);
	cr_assert_null(back.ev.checks[1].log);
	cr_assert_eq(back.ev.nchanges, 2);
	cr_assert_eq(back.ev.changes[0].added, 3);
	cr_assert_eq(back.ev.changes[0].deleted, 1);
	cr_assert_eq(back.ev.changes[1].status, FG_CHANGE_RENAMED);
	cr_assert_str_eq(back.ev.changes[1].old_path, "a.txt");
	cr_assert_eq(back.ev.changes[1].added, -1);
	cr_assert(back.ev.since_review);
	cr_assert_str_eq(back.ev.diff, "review_cycle_1.diff");
	cr_assert(back.ev.no_change && back.ev.advice_only);
	cr_assert_eq(back.ev.verified.n, 1);
	cr_assert_str_eq(back.ev.verified.v[0], "make test -> ok");
	cr_assert_eq(fg_evidence_failed_check(&back.ev), &back.ev.checks[0]);
	free(json);
	fg_cycle_release(&back);
	fg_cycle_release(&c);
}

Test(evidence, absent_when_unset_and_wrong_types_ignored)
{
	static const char doc[] =
		"{\"cycle\":1,\"max_cycles\":1,\"verdict\":\"approved\",\"feedback\":\"\",\"skill\":\"s\","
		"\"elapsed_seconds\":1,\"timestamp\":\"2026-12-01T19:00:00Z\",\"checks\":{\"a\":1},"
		"\"changes\":[{\"path\":\"x\",\"status\":\"exploded\"},{\"status\":\"added\"},7],"
		"\"diff\":\"../../etc/passwd\",\"no_change\":1,\"verified\":[1,\"ok\"]}";
	struct fg_cycle c;
	char err[256], *json;

	base(&c);
	json = fg_cycle_to_json(&c);
	cr_assert_null(strstr(json, "checks"));
	cr_assert_null(strstr(json, "changes"));
	cr_assert_null(strstr(json, "no_change"));
	cr_assert_null(strstr(json, "verified"));
	free(json);
	cr_assert_eq(fg_cycle_parse(&c, doc, strlen(doc), err, sizeof(err)), 0, "%s", err);
	cr_assert_not(c.ev.has_checks);
	cr_assert(c.ev.has_changes);
	cr_assert_eq(c.ev.nchanges, 0);
	cr_assert_null(c.ev.diff, "a diff name with a '/' is dropped");
	cr_assert_not(c.ev.no_change);
	cr_assert_eq(c.ev.verified.n, 1);
	fg_cycle_release(&c);
}

Test(evidence, bounds)
{
	struct fg_evidence e;

	fg_evidence_init(&e);
	for (int i = 0; i < FG_CHECKS_MAX; i++)
		cr_assert_not_null(fg_evidence_add_check(&e, "a-check-name-that-is-longer-than-forty-bytes-in-all"));
	cr_assert_null(fg_evidence_add_check(&e, "one-more"));
	cr_assert_eq(strlen(e.checks[0].name), FG_CHECK_NAME_MAX);
	for (int i = 0; i < FG_CHANGES_MAX + 5; i++)
		fg_evidence_add_change(&e, FG_CHANGE_ADDED, "f", NULL, 1, 0);
	cr_assert_eq(e.nchanges, FG_CHANGES_MAX);
	cr_assert(e.changes_truncated);
	fg_evidence_release(&e);
}

/* A panel role's verified lines: in its review's JSON and back, merged
 * into a cycle's without repeats and at most FG_VERIFIED_MAX. */
Test(evidence, a_reviews_verified_lines_round_trip_and_merge)
{
	struct fg_review r, back;
	struct fg_strvec all;
	cJSON *o;

	fg_review_init(&r);
	fg_review_init(&back);
	snprintf(r.role, sizeof r.role, "%s", "alpha");
	r.j.feedback = strdup("");
	fg_strvec_push(&r.j.verified, "make test -> 3 passed");
	fg_strvec_push(&r.j.verified, "ls -> a");
	o = fg_review_to_cjson(&r);
	cr_assert_eq(fg_review_from_cjson(&back, o), 0);
	cr_assert_eq(back.j.verified.n, 2);
	cr_assert_str_eq(back.j.verified.v[1], "ls -> a");
	cJSON_Delete(o);
	fg_strvec_init(&all);
	fg_strvec_push(&all, "ls -> a");
	fg_evidence_merge_verified(&all, &back.j.verified);
	cr_assert_eq(all.n, 2);
	cr_assert_str_eq(all.v[1], "make test -> 3 passed");
	for (int i = 0; i < FG_VERIFIED_MAX + 3; i++) {
		fg_strvec_release(&back.j.verified);
		fg_strvec_pushf(&back.j.verified, "line %d", i);
		fg_evidence_merge_verified(&all, &back.j.verified);
	}
	cr_assert_eq(all.n, FG_VERIFIED_MAX);
	fg_strvec_release(&all);
	fg_review_release(&r);
	fg_review_release(&back);
}
