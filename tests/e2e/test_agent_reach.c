/*
 * test_agent_reach.c - issue 22 items 3-6: what an agent in the sandbox
 * can no longer do to the entrypoint, with the real binaries and stand-in
 * sh agents (same uid as the entrypoint, as in a container):
 *   - block a write: a directory planted at the temp name an agent could
 *     predict (".review_summary.json.tmp.<its $PPID>") or under the
 *     summary's own name (reproduction 4); a summary that cannot be written
 *     at all is an error with exit 1, never a warning with exit 0.
 * Each test failed on the main of before issue 22.
 */
#include "test_faults_helpers.h"

#include "forge/fsutil.h"

TestSuite(agent_reach, .timeout = 120);

/* The summary an agent would plant: approved, with the run id it is given. */
#define PLANT_SUMMARY                                                                              \
	"printf '{\"state\":\"approved\",\"cycles\":0,\"max_cycles\":1,\"step\":\"impl\","          \
	"\"skill\":\"impl\",\"task_key\":\"ABC-12\",\"run_id\":\"%s\"}\\n' \"$FORGE_RUN_ID\" "       \
	"> .forge/impl/review_summary.json\n"

static const char REVIEWER_REJECTS[] = "cat > /dev/null\necho 'REJECTED: the greeting must be louder'\n";

/* The state in the step directory's review_summary.json (owned), or NULL. */
static char *summary_state(const struct fx *f)
{
	char *path = fgt_fmt("%s/review_summary.json", f->step_dir);
	char *text = fgt_read(path, NULL);
	cJSON *o = text ? cJSON_Parse(text) : NULL;
	const cJSON *st = cJSON_GetObjectItem(o, "state");
	char *out = cJSON_IsString(st) ? strdup(st->valuestring) : NULL;

	cJSON_Delete(o);
	free(text);
	free(path);
	return out;
}

/* Reproduction 4: the worker plants an approved summary and a directory at
 * the entrypoint's old, predictable temp name; every cycle is rejected. */
Test(agent_reach, a_directory_at_the_predictable_temp_name_cannot_block_the_summary)
{
	struct fx f;
	char *wk, *rv, *state;

	fx_setup(&f);
	wk = fx_script(&f, "worker.sh",
		       "echo hello >> greeting.txt\n"
		       "mkdir -p \".forge/impl/.review_summary.json.tmp.$PPID/x\"\n" PLANT_SUMMARY);
	rv = fx_script(&f, "reviewer.sh", REVIEWER_REJECTS);
	fx_runner(&f, NULL, NULL, "json", NULL, wk, rv, NULL);
	cr_assert_not_null(f.res, "no result; stderr:\n%s\nlog:\n%s", f.err, f.logtext);
	state = summary_state(&f);
	cr_assert_not_null(state, "no summary in the step directory; log:\n%s", f.logtext);
	/* The file is the entrypoint's own: the review was never approved. */
	cr_assert_str_neq(state, "approved", "log:\n%s", f.logtext);
	cr_assert_str_eq(fge_jstr(f.res, "review_state"), state, "log:\n%s", f.logtext);
	cr_assert_null(strstr(f.logtext, "cannot write"), "log:\n%s", f.logtext);
	free(state);
	free(wk);
	free(rv);
	fx_teardown(&f);
}

/* A directory under review_summary.json itself (holding a symlink to a
 * file outside the workspace) is cleared away without following the link. */
Test(agent_reach, a_directory_under_the_summary_name_is_cleared_without_following_links)
{
	struct fx f;
	struct fgt_proc p;
	char *wk, *rv, *state, *victim, *body, *got;

	fx_setup(&f);
	victim = fgt_fmt("%s/precious", f.out);
	fgt_write(victim, "keep me");
	wk = fx_script(&f, "worker.sh", "echo hello >> greeting.txt\n");
	body = fgt_fmt("cat > /dev/null\n"
		       "mkdir -p .forge/impl/review_summary.json/a/b\n"
		       "ln -s '%s' .forge/impl/review_summary.json/a/link\n"
		       "ln -s '%s' .forge/impl/review_summary.json/a/b/dirlink\n"
		       "echo APPROVED\n", victim, f.out);
	rv = fx_script(&f, "reviewer.sh", body);
	fx_entrypoint(&f, &p, wk, rv, "reach-run", NULL);
	cr_assert_eq(p.exit_code, 0, "exit %d; stderr:\n%s", p.exit_code, p.err);
	state = summary_state(&f);
	cr_assert_not_null(state, "no summary written; stderr:\n%s", p.err);
	cr_assert_str_eq(state, "approved");
	got = fgt_read(victim, NULL);
	cr_assert_str_eq(got, "keep me");
	free(got);
	free(state);
	free(body);
	free(victim);
	free(wk);
	free(rv);
	fgt_proc_release(&p);
	fx_teardown(&f);
}

/* The step directory runs out of inodes after the last cycle file: the
 * summary cannot be written. Documented: an error, exit 1, state failed in
 * the summary frame; the approval is not reported as one. */
Test(agent_reach, a_summary_that_cannot_be_written_is_an_error_with_exit_1)
{
	struct fx f;
	struct fgt_proc p;
	char *wk, *rv;

	fx_setup(&f);
	fx_private_mounts();
	cr_assert_eq(fg_mkdir_p(f.step_dir, 0755), 0);
	if (mount("tmpfs", f.step_dir, "tmpfs", 0, "size=1m,nr_inodes=64") < 0)
		cr_skip("cannot mount a tmpfs on '%s': %s", f.step_dir, strerror(errno));
	wk = fx_script(&f, "worker.sh", "echo hello >> greeting.txt\n");
	/* Every inode but one taken: the cycle file gets it, the summary none. */
	rv = fx_script(&f, "reviewer.sh",
		       "cat > /dev/null\n"
		       "i=0; while true > .forge/impl/fill$i 2>/dev/null; do i=$((i+1)); done\n"
		       "rm -f .forge/impl/fill0\n"
		       "echo APPROVED\n");
	fx_entrypoint(&f, &p, wk, rv, "reach-run", NULL);
	cr_assert_eq(p.exit_code, 1, "exit %d; stderr:\n%s", p.exit_code, p.err);
	cr_assert(strstr(p.err, "error: cannot write") && strstr(p.err, "review_summary.json") &&
		  strstr(p.err, strerror(ENOSPC)), "no clear error; stderr:\n%s", p.err);
	cr_assert_not_null(strstr(p.err, "\"type\":\"review_summary\""), "stderr:\n%s", p.err);
	cr_assert_not_null(strstr(p.err, "\"state\":\"failed\""), "stderr:\n%s", p.err);
	cr_assert_not_null(strstr(p.err, "review failed after 1 cycle(s): exit 1"), "stderr:\n%s", p.err);
	cr_assert_eq(umount2(f.step_dir, MNT_DETACH), 0);
	free(wk);
	free(rv);
	fgt_proc_release(&p);
	fx_teardown(&f);
}
