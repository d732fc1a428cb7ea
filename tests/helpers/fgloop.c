/*
 * fgloop.c - the fixture of the loop-memory and report tests (see fgloop.h).
 */
#include "fgloop.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fge2e.h"
#include "fgtest.h"
#include "fgws.h"

/* Saves the worker's prompt and, on a retry, its feedback file; changes
 * the workspace every turn (a turn that changes nothing costs no review). */
static const char *FGL_WORKER =
	"#!/bin/sh\n"
	"cat > \"$SAVE/work_prompt_$FORGE_CYCLE.txt\"\n"
	"if [ -n \"$FORGE_FEEDBACK_FILE\" ]; then cp \"$FORGE_FEEDBACK_FILE\" \"$SAVE/work_fb_$FORGE_CYCLE.txt\"; fi\n"
	"echo \"pass $FORGE_CYCLE\" >> notes.txt\n"
	"echo worked\n";

/* Saves the reviewer's prompt and system prompt; the test's body follows.
 * shadow T2 prints a report with a JSON shadow block of two findings: a NOTE
 * listed first (to see blocking ones put first) and a BLOCKING one titled
 * T2; both descriptions are reworded every cycle. */
static const char *FGL_REVIEWER_HEAD =
	"#!/bin/sh\n"
	"n=$FORGE_CYCLE\n"
	"cat > \"$SAVE/rev_prompt_$n.txt\"\n"
	"cp \"$FORGE_SYSTEM_PROMPT_FILE\" \"$SAVE/rev_sys_$n.txt\"\n"
	"F='```'\n"
	"shadow() {\n"
	"cat <<EOT\n"
	"## Review $n\n"
	"Two problems remain.\n"
	"\n"
	"${F}json\n"
	"{\"verdict\": \"request_changes\", \"findings\": [\n"
	" {\"severity\": \"NOTE\", \"ordinal\": 2, \"filePath\": \"README.md\", \"line\": 3,"
	" \"title\": \"Typo in heading\", \"description\": \"spelled parsre (pass $n)\"},\n"
	" {\"severity\": \"BLOCKING\", \"ordinal\": 1, \"filePath\": \"src/parse.c\", \"line\": 42,"
	" \"title\": \"$1\", \"description\": \"reads one byte past the end (pass $n)\","
	" \"fix\": \"Check len == 0 first.\"}\n"
	"]}\n"
	"$F\n"
	"EOT\n"
	"}\n";

char *fgl_in_dir(const char *dir, const char *name)
{
	return fgt_fmt("%s/%s", dir, name);
}

/* Lays out the tree: workspace, skill, task file, the two agents. */
static void fgl_init(struct fgl *l, const struct fgl_spec *s)
{
	char *task, *rev;

	memset(l, 0, sizeof(*l));
	l->s = s;
	fgw_init(&l->w);
	l->save = fgw_path(&l->w, "save");
	fge_write_in(l->w.ws, "README.md", "# parsre\n");
	fge_write_in(l->save, ".keep", "");
	fge_write_in(l->w.skills, "default/impl/review.md", s->review_md);
	task = fgt_fmt("{\"task_key\":\"%s\",\"summary\":\"" FGL_TASK_SUMMARY "\",\"description\":\""
		       FGL_TASK_DESCRIPTION "\"}\n", s->task_key);
	fge_write_in(l->w.root, "task.json", task);
	fge_write_in(l->w.root, "work.sh", FGL_WORKER);
	rev = fgt_fmt("%s%s", FGL_REVIEWER_HEAD, s->reviewer);
	fge_write_in(l->w.root, "rev.sh", rev);
	free(rev);
	free(task);
}

/* Runs forge-runner run --engine local with the real entrypoint; loads the
 * result file (which must exist). */
static void fgl_exec(struct fgl *l)
{
	char *task = fgl_in_dir(l->w.root, "task.json");
	const char *argv[] = { FG_RUNNER_BIN, "run", "--engine", "local", "--workspace", l->w.ws,
			       "--step", l->s->step, "--skill", "impl", "--task-key", l->s->task_key,
			       "--task-file", task, "--skills-dir", l->w.skills,
			       "--entrypoint", FG_ENTRYPOINT_BIN, "--result", l->w.result, NULL };

	fge_run_with_agents(&l->p, argv, l->w.root, "", l->save, l->s->env);
	l->res = fge_json_file(l->w.result, l->p.err);
	free(task);
}

void fgl_run(struct fgl *l, const struct fgl_spec *s)
{
	fgl_init(l, s);
	fgl_exec(l);
}

void fgl_release(struct fgl *l)
{
	cJSON_Delete(l->res);
	fgt_proc_release(&l->p);
	fgw_release(&l->w);
	free(l->save);
}

const cJSON *fgl_cycles(const struct fgl *l)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(l->res, "review_cycles");

	cr_assert(cJSON_IsArray(v));
	return v;
}

/* The same plain feedback every cycle, its whitespace varied. */
const char *FGL_REPEATING_REVIEWER =
	"case $n in\n"
	"1) printf 'REJECTED\\n  Missing   tests for\\tparse.c \\n';;\n"
	"*) printf 'REJECTED\\nMissing tests\\nfor parse.c\\n\\n';;\n"
	"esac\n";
