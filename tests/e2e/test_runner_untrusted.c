/*
 * test_runner_untrusted.c - what the sandbox writes into cycle files never
 * reaches the host's JSON or metrics unchecked (issue 17 point 4, issue 18
 * defect 2).
 *
 * A corpus of cycle files, each with bytes that are not UTF-8 in another
 * string field (and one valid file), goes through every output: `sweep`,
 * `watch --log-format json`, `run` (its result and its JSON log) and
 * `report` on that result. Every output must be valid UTF-8 and parse as
 * JSON; every corpus file must be skipped with the reason. Then cycle
 * files whose skill is not a valid name (bytes that are not UTF-8, 1.4 MB,
 * a control character, a space): the shared metrics textfile must still
 * pass `promtool check metrics` and `report` must still read the result.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"
#include "forge/text.h"

TestSuite(runner_untrusted, .timeout = 120);

#define HEAD "{\"cycle\":%d,\"max_cycles\":9,\"verdict\":\"rejected\","
#define TAIL "\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\""

/* Each entry: the cycle's fields after HEAD, one string per case holding
 * bytes that are not UTF-8 (FF FE, a truncated sequence, an overlong '/',
 * an encoded surrogate, a lone continuation byte). Cycle 1 is valid. */
static const char *const corpus[] = {
	"\"feedback\":\"all good \xc3\xa9\",\"skill\":\"impl\"," TAIL "}",
	"\"feedback\":\"ok \xff\xfe\",\"skill\":\"impl\"," TAIL "}",
	"\"feedback\":\"f\",\"skill\":\"imp\xc3\"," TAIL "}",
	"\"feedback\":\"f\",\"skill\":\"impl\"," TAIL ",\"run_id\":\"\xc0\xaf\"}",
	"\"feedback\":\"f\",\"skill\":\"impl\"," TAIL ",\"findings\":[{\"severity\":\"BLOCKING\","
	"\"title\":\"\xed\xa0\x80\"}]}",
	"\"feedback\":\"f\",\"skill\":\"impl\"," TAIL ",\"reviewer_log\":\"\x80.log\"}",
	"\"feedback\":\"f\",\"skill\":\"impl\"," TAIL ",\"unknown\":{\"k\xfe\":1}}",
};
#define NCORPUS (sizeof(corpus) / sizeof(corpus[0]))

static void write_corpus(const char *dir)
{
	for (size_t i = 0; i < NCORPUS; i++) {
		char *body = fgt_fmt(HEAD "%s\n", (int)i + 1, corpus[i]);
		char *path = fgt_fmt("%s/review_cycle_%zu.json", dir, i + 1);

		fgt_write(path, body);
		free(path);
		free(body);
	}
}

/* Fails unless the len bytes at s are valid UTF-8. */
static void assert_utf8(const char *what, const char *s, size_t len)
{
	cr_assert_not_null(s, "%s: no output", what);
	for (size_t i = 0, k; i < len; i += k) {
		k = fg_utf8_seq(s + i, len - i);
		cr_assert_neq(k, 0, "%s: not UTF-8 at byte %zu:\n%s", what, i, s);
	}
}

/* Fails unless every line of text is a JSON object. Returns how many
 * contain needle. */
static int json_lines_with(const char *what, const char *text, const char *needle)
{
	char *copy = strdup(text), *save = NULL;
	int n = 0;

	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		cJSON *o = cJSON_Parse(l);

		cr_assert(cJSON_IsObject(o), "%s: not a JSON line: %s", what, l);
		n += strstr(l, needle) != NULL;
		cJSON_Delete(o);
	}
	free(copy);
	return n;
}

Test(runner_untrusted, sweep_skips_every_file_that_is_not_utf8_and_prints_utf8)
{
	char *dir = fgt_tmpdir();
	char *step = fgt_fmt("%s/impl", dir);
	const char *argv[] = { FG_RUNNER_BIN, "sweep", step, NULL };
	struct fgt_proc p;
	cJSON *arr;

	write_corpus(step);
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 30), 0);
	fgt_assert_exit(&p, 0);
	/* Before the fix FF FE went raw into this array (a consumer's
	 * json.loads failed on the whole output). */
	assert_utf8("sweep stdout", p.out, p.out_len);
	arr = cJSON_Parse(p.out);
	cr_assert(cJSON_IsArray(arr), "stdout:\n%s", p.out);
	cr_assert_eq(cJSON_GetArraySize(arr), 1, "stdout:\n%s", p.out);
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 0), "feedback")->valuestring,
			 "all good \xc3\xa9");
	for (size_t i = 2; i <= NCORPUS; i++) {
		char *want = fgt_fmt("review_cycle_%zu.json': not valid UTF-8 at byte", i);

		cr_assert_not_null(strstr(p.err, want), "no reason for cycle %zu; stderr:\n%s", i, p.err);
		free(want);
	}
	cJSON_Delete(arr);
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(step);
	free(dir);
}

static const char *watch_script =
	"R=$1; T=$2\n"
	"\"$R\" watch \"$T/impl\" --log-format json --poll-interval 0.05 > \"$T/out\" 2> \"$T/err\" &\n"
	"pid=$!\n"
	"i=0; while ! grep -q review_cycle_1.json \"$T/out\"; do i=$((i+1)); [ $i -gt 2000 ] && exit 9;"
	" sleep 0.01; done\n"
	"i=0; while ! grep -q cycle_corrupt \"$T/err\"; do i=$((i+1)); [ $i -gt 2000 ] && exit 9;"
	" sleep 0.01; done\n"
	"kill -TERM $pid; wait $pid; echo rc=$?\n";

Test(runner_untrusted, watch_json_log_is_utf8_and_names_each_corrupt_file)
{
	char *dir = fgt_tmpdir();
	char *step = fgt_fmt("%s/impl", dir);
	char *outp = fgt_fmt("%s/out", dir), *errp = fgt_fmt("%s/err", dir);
	const char *argv[] = { "/bin/sh", "-c", watch_script, "sh", FG_RUNNER_BIN, dir, NULL };
	struct fgt_proc p;
	char *out, *err;
	size_t olen, elen;

	write_corpus(step);
	cr_assert_eq(fgt_run(&p, argv, NULL, NULL, NULL, 60), 0);
	cr_assert_not_null(strstr(p.out, "rc=0"), "stdout: %s stderr: %s", p.out, p.err);
	out = fgt_read(outp, &olen);
	err = fgt_read(errp, &elen);
	assert_utf8("watch stdout", out, olen);
	assert_utf8("watch stderr", err, elen);
	cr_assert_eq(json_lines_with("watch stdout", out, "\"review_cycle\""), 1, "%s", out);
	cr_assert_eq(json_lines_with("watch stderr", err, "not valid UTF-8"), (int)NCORPUS - 1, "%s", err);
	free(out);
	free(err);
	fgt_proc_release(&p);
	fgt_rm_rf(dir);
	free(step);
	free(outp);
	free(errp);
	free(dir);
}

/* run on a workspace whose entrypoint copies the corpus in (and ends with
 * a last output line that is not UTF-8 either), then report on the result. */
Test(runner_untrusted, run_result_log_and_report_are_utf8)
{
	struct fgw w;

	fgw_init(&w);
	char *dir = w.root;
	char *ws = w.ws, *corp = fgt_fmt("%s/corpus", dir);
	char *result = fgt_fmt("%s/r.json", dir), *log = fgt_fmt("%s/run.log", dir);
	char *ep = fge_script(dir, "ep.sh", FGE_FAKE_EP_HEAD,
			      "for f in \"$CORPUS\"/review_cycle_*.json; do n=${f##*/};"
			      " fgseal \"$S\" \"$n\" < \"$f\" > \"$D/$n\"; done\n"
			      "printf 'the task failed: \\377\\376\\n' >&2\nexit 1\n");
	char *corpenv = fgt_fmt("CORPUS=%s", corp);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", ws, "--step", "impl",
			       "--entrypoint", ep, "--result", result, "--log-format", "json",
			       "--log-file", log, "--poll-interval", "0.05", NULL };
	const char *env[] = { corpenv, "FORGE_LOG_LEVEL", NULL };
	const char *rargv[] = { FG_RUNNER_BIN, "report", result, NULL };
	struct fgt_proc p;
	char *text;
	size_t len;
	cJSON *res;

	fge_write_in(ws, "README", "workspace\n");
	write_corpus(corp);
	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 60), 0);
	fgt_assert_exit(&p, 1);
	fgt_proc_release(&p);
	text = fgt_read(result, &len);
	assert_utf8("result", text, len);
	res = cJSON_Parse(text);
	cr_assert_not_null(res, "%s", text);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(res, "review_cycles")), 1, "%s", text);
	cJSON_Delete(res);
	free(text);
	text = fgt_read(log, &len);
	assert_utf8("run log", text, len);
	cr_assert_eq(json_lines_with("run log", text, "not valid UTF-8"), (int)NCORPUS - 1, "%s", text);
	free(text);
	cr_assert_eq(fgt_run(&p, rargv, NULL, NULL, NULL, 30), 0);
	fgt_assert_exit(&p, 0);
	assert_utf8("report", p.out, p.out_len);
	cr_assert_not_null(strstr(p.out, "\"__impl\""), "%s", p.out);
	fgw_release_run(&w, &p);
	free(corp);
	free(result);
	free(log);
	free(ep);
	free(corpenv);
}

/* Issue 18 defect 2: skills a sandbox can put in a cycle file. */
Test(runner_untrusted, a_cycle_skill_never_reaches_metrics_or_the_result)
{
	struct fgw w;

	fgw_init(&w);
	char *dir = w.root;
	char *ws = w.ws;
	char *result = fgt_fmt("%s/r.json", dir), *log = fgt_fmt("%s/run.log", dir);
	char *prom = fgt_fmt("%s/forge.prom", dir);
	char *ep = fge_script(dir, "ep.sh", FGE_FAKE_EP_HEAD,
			      "put() { printf '{\"cycle\":%s,\"max_cycles\":9,\"verdict\":\"rejected\","
			      "\"feedback\":\"f\",\"skill\":\"%s\",\"elapsed_seconds\":1,"
			      "\"timestamp\":\"2026-01-01T00:00:00Z\"}' \"$1\" \"$2\" | fgseal \"$S\" \"review_cycle_$1.json\" > \"$D/.t\";"
			      " mv \"$D/.t\" \"$D/review_cycle_$1.json\"; }\n"
			      "put 1 \"$(printf 'bad\\377\\376')\"\n"
			      "put 2 \"$(head -c 1400000 /dev/zero | tr '\\000' s)\"\n"
			      "put 3 'a\\u0007b'\n"
			      "put 4 'two words'\n"
			      "put 5 another-skill\n"
			      "exit 0\n");
	const char *argv[] = { FG_RUNNER_BIN, "run", "--workspace", ws, "--step", "impl",
			       "--entrypoint", ep, "--result", result, "--log-format", "json",
			       "--log-file", log, "--poll-interval", "0.05", "--metrics-file", prom, NULL };
	const char *env[] = { "FORGE_LOG_LEVEL", "FORGE_SKILL_NAME", NULL };
	const char *rargv[] = { FG_RUNNER_BIN, "report", result, NULL };
	const char *pargv[] = { "/usr/bin/promtool", "check", "metrics", NULL };
	struct fgt_proc p;
	struct stat st;
	char *text;
	cJSON *res;

	if (access(pargv[0], X_OK))
		cr_skip("promtool is not installed (%s)", pargv[0]);
	fge_write_in(ws, "README", "workspace\n");
	cr_assert_eq(fgt_run(&p, argv, env, NULL, NULL, 60), 0);
	fgt_assert_exit(&p, 0);
	fgt_proc_release(&p);
	/* The metrics textfile node_exporter reads stays valid and small. */
	text = fgt_read(prom, NULL);
	cr_assert_not_null(text);
	cr_assert_eq(stat(prom, &st), 0);
	cr_assert_lt(st.st_size, 64 * 1024, "metrics file of %lld bytes", (long long)st.st_size);
	cr_assert_eq(fgt_run(&p, pargv, NULL, NULL, text, 30), 0);
	cr_assert_eq(p.exit_code, 0, "promtool refused the metrics:\n%s%s\n%s", p.out, p.err, text);
	fgt_proc_release(&p);
	/* One skill per run, the run's own (the step's, as the entrypoint
	 * derives it): never one a cycle file chose, valid or not. */
	cr_assert_null(strstr(text, "another-skill"), "%s", text);
	cr_assert_not_null(strstr(text, "skill=\"impl\""), "%s", text);
	free(text);
	text = fgt_read(result, NULL);
	res = cJSON_Parse(text);
	cr_assert_not_null(res);
	cr_assert_str_eq(cJSON_GetObjectItem(res, "skill")->valuestring, "impl");
	/* The four invalid skills made their files corrupt; cycle 5 is valid. */
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(res, "review_cycles")), 1, "%s", text);
	cJSON_Delete(res);
	free(text);
	text = fgt_read(log, NULL);
	cr_assert_not_null(strstr(text, "invalid skill name"), "%s", text);
	free(text);
	cr_assert_eq(fgt_run(&p, rargv, NULL, NULL, NULL, 30), 0);
	cr_assert_eq(p.exit_code, 0, "report refused the result:\n%s", p.err);
	fgw_release_run(&w, &p);
	free(result);
	free(log);
	free(prom);
	free(ep);
}
