/*
 * fge2e.c - helpers for the end-to-end tests (see fge2e.h).
 */
#include "fge2e.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fgtest.h"

const char FGE_FAKE_EP_HEAD[] =
	"#!/bin/sh\n"
	FGE_SEAL_LINES
	"while [ $# -gt 0 ]; do case $1 in --step) S=$2; shift;; --workspace) W=$2; shift;;"
	" --skill) K=$2; shift;; esac; shift; done\n"
	"D=$W/.forge/$S\n"
	"cyc() {\n"
	"  r=${3:-$FORGE_RUN_ID}; f=${4:-fb$1}; dd=${DIR:-$D}\n"
	"  printf '{\"cycle\":%s,\"max_cycles\":%s,\"verdict\":\"%s\",\"feedback\":\"%s\",\"skill\":\"%s\","
	"\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\",\"run_id\":\"%s\"}\\n' "
	"\"$1\" \"${MAX:-3}\" \"$2\" \"$f\" \"$K\" \"$r\" | fgseal \"$S\" \"review_cycle_$1.json\" > \"$dd/.c$1.tmp\"\n"
	"  mv \"$dd/.c$1.tmp\" \"$dd/review_cycle_$1.json\"\n"
	"}\n"
	"cycs() {\n"
	"  n=$1; while [ $n -le $2 ]; do\n"
	"    printf '%s {\"cycle\":%s,\"max_cycles\":%s,\"verdict\":\"%s\",\"feedback\":\"fb%s\",\"skill\":\"%s\","
	"\"elapsed_seconds\":1,\"timestamp\":\"2026-01-01T00:00:00Z\",\"run_id\":\"%s\"}\\n' "
	"\"$n\" \"$n\" \"${MAX:-3}\" \"$3\" \"$n\" \"$K\" \"$FORGE_RUN_ID\"; n=$((n+1)); done | fgseal \"$S\" --cycles \"${DIR:-$D}\"\n"
	"}\n"
	"wait_log() { i=0; while ! grep -q \"$1\" \"$LOG\"; do i=$((i+1)); [ $i -gt 3000 ] && exit 99; sleep 0.01; done; }\n";

char *fge_script(const char *dir, const char *name, const char *head, const char *body)
{
	char *path = fgt_fmt("%s/%s", dir, name);
	char *text = fgt_fmt("%s%s\n", head, body);

	fgt_write(path, text);
	fgt_chmod_x(path);
	free(text);
	return path;
}

void fge_write_in(const char *dir, const char *name, const char *content)
{
	char *path = fgt_fmt("%s/%s", dir, name);

	fgt_write(path, content);
	free(path);
}

char *fge_read_in(const char *dir, const char *name)
{
	char *path = fgt_fmt("%s/%s", dir, name);
	char *text = fgt_read(path, NULL);

	free(path);
	return text;
}

void fge_git_commit_all(const char *dir)
{
	struct fgt_proc g;
	char *conf = fgt_fmt("%s.gitconfig", dir);
	char *genv = fgt_fmt("GIT_CONFIG_GLOBAL=%s", conf);
	const char *argv[] = { "/bin/sh", "-c", "git init -q . && git add -A && "
			       "git -c user.name=t -c user.email=t@t commit -qm start", NULL };
	const char *env[] = { genv, NULL };

	fgt_write(conf, "[safe]\n\tdirectory = *\n");
	cr_assert_eq(fgt_run(&g, argv, env, dir, NULL, 120), 0, "cannot start /bin/sh");
	cr_assert(g.exited && g.exit_code == 0, "git in '%s' failed (%d): %s", dir, g.exit_code, g.err);
	fgt_proc_release(&g);
	free(genv);
	free(conf);
}

int fge_exists_in(const char *dir, const char *name)
{
	char *path = fgt_fmt("%s/%s", dir, name);
	int ok = fgt_exists(path);

	free(path);
	return ok;
}

cJSON *fge_json_file(const char *path, const char *context)
{
	char *text = fgt_read(path, NULL);
	cJSON *j;

	cr_assert_not_null(text, "no %s%s%s", path, context ? "; " : "", context ? context : "");
	j = cJSON_Parse(text);
	cr_assert_not_null(j, "%s is not JSON: %s", path, text);
	free(text);
	return j;
}

cJSON *fge_json_lines(const char *text)
{
	cJSON *all = cJSON_CreateArray();
	const char *line = text;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char *copy = fgt_fmt("%.*s", (int)len, line);
		cJSON *j = cJSON_Parse(copy);

		cr_assert_not_null(j, "log line is not JSON: '%s'", copy);
		cJSON_AddItemToArray(all, j);
		free(copy);
		line += len + (nl ? 1 : 0);
	}
	return all;
}

/* 1 if e is an event named event with key == val (key NULL: any). */
static int event_is(const cJSON *e, const char *event, const char *key, const char *val)
{
	const char *name = fge_jstr_or_null(e, "event");
	const char *v = key ? fge_jstr_or_null(e, key) : NULL;

	if (!name || strcmp(name, event))
		return 0;
	return !key || (v && !strcmp(v, val));
}

int fge_count_events(const cJSON *events, const char *event, const char *key, const char *val)
{
	const cJSON *e;
	int n = 0;

	cJSON_ArrayForEach(e, events)
		n += event_is(e, event, key, val);
	return n;
}

const cJSON *fge_find_event(const cJSON *events, const char *event, const char *key, const char *val)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, events)
		if (event_is(e, event, key, val))
			return e;
	return NULL;
}

const cJSON *fge_find_by(const cJSON *arr, const char *key, const char *val)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, arr) {
		const char *v = fge_jstr_or_null(e, key);

		if (v && !strcmp(v, val))
			return e;
	}
	return NULL;
}

const cJSON *fge_find_cycle_event(const cJSON *events, const char *event, int cycle)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, events) {
		if (!event_is(e, event, NULL, NULL))
			continue;
		if (cycle < 1 || fge_jint(e, "cycle") == cycle)
			return e;
	}
	return NULL;
}

void fge_skip_unless_root(const char *why)
{
	if (geteuid() != 0)
		cr_skip_test("%s", why);
}

void fge_rot13(char *s)
{
	for (; *s; s++)
		if (*s >= 'a' && *s <= 'z')
			*s = (char)('a' + (*s - 'a' + 13) % 26);
}

const char *fge_jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	cr_assert(cJSON_IsString(v), "field '%s' is not a string", k);
	return v->valuestring;
}

const char *fge_jstr_or_null(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

void fge_assert_strs_at(const cJSON *o, const char *const *kv, const char *file, int line)
{
	for (size_t i = 0; kv[i] && kv[i + 1]; i += 2) {
		const char *got = fge_jstr_or_null(o, kv[i]);

		if (!got || strcmp(got, kv[i + 1]))
			cr_assert_fail("%s:%d: field '%s' is '%s', not '%s'", file, line, kv[i], got ? got : "(none)",
				       kv[i + 1]);
	}
}

int fge_jint(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	cr_assert(cJSON_IsNumber(v), "field '%s' is not a number", k);
	return v->valueint;
}

int fge_jtrue(const cJSON *o, const char *k)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, k));
}

const char FGE_OUTSIDE_KILL[] =
	"outside_kill() {\n"
	"  n=$(( $(cat \"$SIGDIR/req\" 2>/dev/null | wc -l) + 1 ))\n"
	"  echo \"$1 $2\" >> \"$SIGDIR/req\"\n"
	"  while [ \"$(cat \"$SIGDIR/done\" 2>/dev/null | wc -l)\" -lt $n ]; do sleep 0.02; done\n"
	"}\n";

/* Sends what line k of req asks ("TERM 1234"); 0, or -1 for a bad line. */
static int send_request(const char *line)
{
	static const struct { const char *name; int sig; } sigs[] = {
		{ "TERM", SIGTERM }, { "INT", SIGINT }, { "HUP", SIGHUP }, { "QUIT", SIGQUIT },
		{ "KILL", SIGKILL }, { "STOP", SIGSTOP },
	};
	char name[16];
	long pid;

	if (sscanf(line, "%15s %ld", name, &pid) != 2 || pid <= 1)
		return -1;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcmp(sigs[i].name, name))
			return kill((pid_t)pid, sigs[i].sig);
	return -1;
}

static void signaller(const char *dir)
{
	char *req = fgt_fmt("%s/req", dir), *done = fgt_fmt("%s/done", dir);
	int handled = 0;

	for (;;) {
		char *text = fgt_read(req, NULL), *save = NULL;
		int k = 0;

		for (char *l = text ? strtok_r(text, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
			if (++k <= handled)
				continue;
			send_request(l);
			handled = k;
			FILE *f = fopen(done, "a");

			if (f) {
				fprintf(f, "%d\n", k);
				fclose(f);
			}
		}
		free(text);
		usleep(10000);
	}
}

pid_t fge_signaller_start(const char *dir)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0, "fork");
	if (pid == 0) {
		signaller(dir);
		_exit(0);
	}
	return pid;
}

void fge_signaller_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

void fge_run_with_agents(struct fgt_proc *p, const char *const *argv, const char *root,
			 const char *rev_args, const char *save, const char *const *env)
{
	char *wcmd = fgt_fmt("FORGE_WORKER_CMD=sh %s/work.sh", root);
	char *rcmd = fgt_fmt("FORGE_REVIEWER_CMD=sh %s/rev.sh%s", root, rev_args);
	char *saveenv = fgt_fmt("SAVE=%s", save);
	const char *all[24] = { wcmd, rcmd, saveenv, "FORGE_AGENT_ENV=SAVE", "AUTO_REVIEW_STOP_WHEN_STALLED",
				"AUTO_REVIEW_FAIL_ON_EXHAUSTION", "AUTO_REVIEW_MAX_RETRIES", "FORGE_LOG_LEVEL" };
	size_t n = 8;

	for (size_t i = 0; env && env[i]; i++) {
		cr_assert_lt(n, sizeof(all) / sizeof(all[0]) - 1, "too many variables");
		all[n++] = env[i];
	}
	all[n] = NULL;
	cr_assert_eq(fgt_run(p, argv, all, NULL, NULL, 60), 0, "cannot start %s", argv[0]);
	cr_assert_eq(p->timed_out, 0, "runner hung; stderr: %s", p->err);
	free(wcmd);
	free(rcmd);
	free(saveenv);
}
