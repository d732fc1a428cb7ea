/*
 * fgpanel.c - the fixture of the panel tests (see fgpanel.h).
 */
#include "fgpanel.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

/* Saves its feedback file on a retry; changes the workspace every turn (a
 * turn that changes nothing costs no review). */
static const char *FGP_WORKER =
	"#!/bin/sh\n"
	"cat > /dev/null\n"
	"if [ -n \"$FORGE_FEEDBACK_FILE\" ]; then cp \"$FORGE_FEEDBACK_FILE\" \"$SAVE/work_fb_$FORGE_CYCLE.txt\"; fi\n"
	"echo \"pass $FORGE_CYCLE\" >> notes.txt\n"
	"echo worked\n";

/* The head of the reviewer; the test's case statement follows, then the
 * tail. shadow VERDICT SEVERITY TITLE prints a JSON shadow block with one
 * finding (none when SEVERITY is "-"). */
static const char *FGP_REVIEWER_HEAD =
	"#!/bin/sh\n"
	"r=$FORGE_REVIEWER_ROLE n=$FORGE_CYCLE\n"
	"date +%s%N > \"$SAVE/start_${r}_$n\"\n"
	"echo \"$r $n\" >> \"$SAVE/runs\"\n"
	"cat > \"$SAVE/prompt_${r}_$n.txt\"\n"
	"cp \"$FORGE_SYSTEM_PROMPT_FILE\" \"$SAVE/sys_${r}_$n.txt\"\n"
	"F='```'\n"
	"shadow() {\n"
	"if [ \"$2\" = - ]; then fs=''; else\n"
	"fs=\"{\\\"severity\\\": \\\"$2\\\", \\\"filePath\\\": \\\"src/$r.c\\\", \\\"line\\\": 7,"
	" \\\"title\\\": \\\"$3\\\", \\\"description\\\": \\\"pass $n\\\"}\"; fi\n"
	"printf '%s review\\n\\n%sjson\\n{\"verdict\": \"%s\", \"findings\": [%s]}\\n%s\\n' \"$r\" \"$F\" \"$1\" \"$fs\" \"$F\"\n"
	"}\n";

static const char *FGP_REVIEWER_TAIL = "\ndate +%s%N > \"$SAVE/end_${r}_$n\"\n";

void fgp_run(struct fgp *t, const struct fgp_spec *s)
{
	char *rev = fgt_fmt("%s%s%s", FGP_REVIEWER_HEAD, s->reviewer, FGP_REVIEWER_TAIL);
	char *task;

	memset(t, 0, sizeof(*t));
	fgw_init(&t->w);
	t->save = fgw_path(&t->w, "save");
	fge_write_in(t->w.ws, ".keep", "");
	fge_write_in(t->save, ".keep", "");
	fge_write_in(t->w.skills, "default/impl/review.md", s->review_md);
	for (size_t i = 0; i < 4 && s->role_files[i]; i += 2) {
		char *name = fgt_fmt("default/impl/%s", s->role_files[i]);

		fge_write_in(t->w.skills, name, s->role_files[i + 1]);
		free(name);
	}
	fge_write_in(t->w.root, "task.json", "{\"task_key\":\"PAN-1\",\"summary\":\"Add a parser\"}\n");
	fge_write_in(t->w.root, "work.sh", FGP_WORKER);
	fge_write_in(t->w.root, "rev.sh", rev);
	task = fgt_fmt("%s/task.json", t->w.root);
	const char *argv[] = { FG_RUNNER_BIN, "run", "--engine", "local", "--workspace", t->w.ws,
			       "--step", "impl", "--skill", "impl", "--task-key", "PAN-1",
			       "--task-file", task, "--skills-dir", t->w.skills,
			       "--entrypoint", FG_ENTRYPOINT_BIN, "--result", t->w.result,
			       "--log-format", s->log_format ? s->log_format : "json",
			       "--metrics-file", t->w.metrics, NULL };

	fge_run_with_agents(&t->p, argv, t->w.root, " {role}", t->save, s->env);
	t->res = fge_json_file(t->w.result, t->p.err);
	free(task);
	free(rev);
}

void fgp_expect(const struct fgp *t, int code, const char *state, int cycles)
{
	cr_assert_eq(t->p.exit_code, code, "exit %d, not %d; stderr:\n%s", t->p.exit_code, code, t->p.err);
	if (state)
		cr_assert_str_eq(fge_jstr(t->res, "review_state"), state, "stderr:\n%s", t->p.err);
	if (cycles >= 0)
		cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(t->res, "review_cycles")), cycles,
			     "stderr:\n%s", t->p.err);
}

void fgp_release(struct fgp *t)
{
	cJSON_Delete(t->res);
	fgt_proc_release(&t->p);
	fgw_release(&t->w);
	free(t->save);
}
