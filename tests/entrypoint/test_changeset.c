/*
 * test_changeset.c - workspace states and their differences (changeset.h):
 * with real git (a repository whose index, refs, config and hooks must not
 * move) and with the manifest outside git.
 */
#include <criterion/criterion.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "changeset.h"
#include "fge2e.h"
#include "fgtest.h"
#include "manifest.h"
#include "../common/tmp_fixture.h"

TestSuite(changeset, .init = tmp_init, .fini = tmp_fini, .timeout = 120);

struct fx {
	char *root, *ws, *tmp;
	struct ep_pid1 pid1;
	struct ep_changeset cs;
};

static int sh(const char *cwd, const char *script)
{
	struct fgt_proc p;
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	const char *env[] = { "GIT_CONFIG_NOSYSTEM=1", "HOME=/nonexistent", NULL };
	int rc;

	cr_assert_eq(fgt_run(&p, argv, env, cwd, NULL, 60), 0);
	rc = p.exited ? p.exit_code : -1;
	if (rc)
		cr_log_info("sh failed: %s\n%s", script, p.err);
	fgt_proc_release(&p);
	return rc;
}

static bool have_git(void)
{
	return sh("/", "git --version >/dev/null 2>&1") == 0;
}

static void fx_setup(struct fx *f, bool git)
{
	f->root = fgt_tmpdir();
	f->ws = fgt_fmt("%s/ws", f->root);
	f->tmp = fgt_fmt("%s/tmp", f->root);
	fge_write_in(f->ws, "calc.sh", "echo $(($1 - $2))\n");
	fge_write_in(f->ws, "README", "calc\n");
	fge_write_in(f->ws, ".forge/impl/review_cycle_1.json", "{}");
	cr_assert_eq(mkdir(f->tmp, 0700), 0);
	if (git)
		cr_assert_eq(sh(f->ws, "git init -q . && git add calc.sh README && "
				       "git -c user.name=t -c user.email=t@t commit -qm init"), 0);
	cr_assert_eq(ep_pid1_init(&f->pid1), 0);
	ep_changeset_init(&f->cs, &f->pid1, f->ws, f->tmp, ".forge/impl");
}

static void fx_teardown(struct fx *f)
{
	ep_changeset_release(&f->cs);
	ep_pid1_release(&f->pid1);
	fgt_rm_rf(f->root);
	free(f->root);
	free(f->ws);
	free(f->tmp);
}

static const struct fg_change *find(const struct fg_evidence *ev, const char *path)
{
	for (size_t i = 0; i < ev->nchanges; i++)
		if (!strcmp(ev->changes[i].path, path))
			return &ev->changes[i];
	return NULL;
}

Test(changeset, git_states_and_changes_without_touching_the_repository)
{
	struct fx f;
	struct ep_state a = { 0 }, b = { 0 }, c = { 0 };
	struct fg_evidence ev;
	bool diffed;

	if (!have_git())
		cr_skip_test("git is not installed");
	fx_setup(&f, true);
	cr_assert(f.cs.git, "%s", f.cs.err);
	char *index0 = fgt_fmt("%s/.git/index", f.ws), *before = fgt_read(index0, NULL);
	char *head0 = fge_read_in(f.ws, ".git/HEAD"), *config0 = fge_read_in(f.ws, ".git/config");
	cr_assert_eq(ep_changeset_snapshot(&f.cs, &f.pid1, &a), 0, "%s", f.cs.err);
	cr_assert_eq(ep_changeset_snapshot(&f.cs, &f.pid1, &b), 0, "%s", f.cs.err);
	cr_assert(ep_changeset_same(&a, &b), "nothing changed");
	fge_write_in(f.ws, "calc.sh", "echo $(($1 + $2))\n");
	fge_write_in(f.ws, "tests/new.sh", "one\ntwo\n");
	char *from = fgt_fmt("%s/README", f.ws), *to = fgt_fmt("%s/README.md", f.ws);

	cr_assert_eq(rename(from, to), 0);
	free(from);
	free(to);
	fge_write_in(f.ws, ".forge/impl/review_cycle_2.json", "{}");
	cr_assert_eq(ep_changeset_snapshot(&f.cs, &f.pid1, &c), 0, "%s", f.cs.err);
	cr_assert_not(ep_changeset_same(&a, &c));
	fg_evidence_init(&ev);
	char *diffpath = fgt_fmt("%s/d.diff", f.root);
	FILE *df = fopen(diffpath, "w");
	cr_assert_eq(ep_changeset_compare(&f.cs, &f.pid1, &a, &c, &ev, fileno(df), &diffed), 0, "%s", f.cs.err);
	fclose(df);
	cr_assert(diffed);
	cr_assert_eq(ev.nchanges, 3, "%zu changes", ev.nchanges);
	cr_assert_eq(find(&ev, "calc.sh")->status, FG_CHANGE_MODIFIED);
	cr_assert_eq(find(&ev, "calc.sh")->added, 1);
	cr_assert_eq(find(&ev, "calc.sh")->deleted, 1);
	cr_assert_eq(find(&ev, "tests/new.sh")->status, FG_CHANGE_ADDED);
	cr_assert_eq(find(&ev, "tests/new.sh")->added, 2);
	cr_assert_eq(find(&ev, "README.md")->status, FG_CHANGE_RENAMED);
	cr_assert_str_eq(find(&ev, "README.md")->old_path, "README");
	char *diff = fgt_read(diffpath, NULL);
	cr_assert(strstr(diff, "+echo $(($1 + $2))"), "%s", diff);
	cr_assert_null(strstr(diff, ".forge"), ".forge is never in the change set");
	/* The repository's own index, HEAD and config did not move. */
	char *after = fgt_read(index0, NULL), *head1 = fge_read_in(f.ws, ".git/HEAD");
	char *config1 = fge_read_in(f.ws, ".git/config");
	cr_assert_str_eq(before, after);
	cr_assert_str_eq(head0, head1);
	cr_assert_str_eq(config0, config1);
	cr_assert_eq(sh(f.ws, "test -z \"$(git status --porcelain --untracked-files=no -- calc.sh | grep '^M')\""),
		     0, "calc.sh is not staged in the repository's index");
	fg_evidence_release(&ev);
	ep_state_release(&a);
	ep_state_release(&b);
	ep_state_release(&c);
	free(index0); free(before); free(after); free(head0); free(head1); free(config0); free(config1);
	free(diff); free(diffpath);
	fx_teardown(&f);
}

Test(changeset, git_never_runs_a_filter_or_fsmonitor_the_workspace_configures)
{
	struct fx f;
	struct ep_state a = { 0 };

	if (!have_git())
		cr_skip_test("git is not installed");
	fx_setup(&f, true);
	cr_assert_eq(sh(f.ws, "git config filter.evil.clean 'touch ../filter_ran; cat' && "
			      "git config core.fsmonitor 'touch ../fsmonitor_ran; exit 1' && "
			      "echo '* filter=evil' > .gitattributes && printf '#!/bin/sh\\ntouch ../hook_ran\\n' "
			      "> .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"), 0);
	fge_write_in(f.ws, "calc.sh", "changed\n");
	cr_assert_eq(ep_changeset_snapshot(&f.cs, &f.pid1, &a), 0, "%s", f.cs.err);
	cr_assert_not(fge_exists_in(f.root, "filter_ran"), "the workspace's filter ran");
	cr_assert_not(fge_exists_in(f.root, "fsmonitor_ran"), "the workspace's fsmonitor ran");
	cr_assert_not(fge_exists_in(f.root, "hook_ran"));
	ep_state_release(&a);
	fx_teardown(&f);
}

Test(changeset, info_exclude_gets_the_cycle_dir_once)
{
	struct fx f;

	if (!have_git())
		cr_skip_test("git is not installed");
	fx_setup(&f, true);
	cr_assert_eq(ep_changeset_exclude_in_repo(&f.cs), 0, "%s", f.cs.err);
	cr_assert_eq(ep_changeset_exclude_in_repo(&f.cs), 1, "the second time it is there");
	char *ex = fge_read_in(f.ws, ".git/info/exclude");
	cr_assert(strstr(ex, "\n/.forge/\n"), "%s", ex);
	cr_assert_eq(sh(f.ws, "test -z \"$(git status --porcelain | grep forge)\""), 0,
		     "git add -A would not pick up .forge");
	free(ex);
	fx_teardown(&f);
}

Test(changeset, manifest_outside_git)
{
	struct fx f;
	struct ep_state a = { 0 }, b = { 0 }, c = { 0 };
	struct fg_evidence ev;
	bool diffed;

	fx_setup(&f, false);
	cr_assert_not(f.cs.git);
	cr_assert_eq(ep_changeset_snapshot(&f.cs, &f.pid1, &a), 0);
	cr_assert_eq(ep_changeset_snapshot(&f.cs, &f.pid1, &b), 0);
	cr_assert(ep_changeset_same(&a, &b));
	/* Again into the state that holds the last manifest (its hashes are
	 * lent to the new one first). */
	cr_assert_eq(ep_changeset_snapshot(&f.cs, &f.pid1, &b), 0);
	cr_assert(ep_changeset_same(&a, &b));
	fge_write_in(f.ws, "calc.sh", "echo $(($1 + $2))\n");
	fge_write_in(f.ws, "new/file", "x");
	char *readme = fgt_fmt("%s/README", f.ws), *link = fgt_fmt("%s/link", f.ws);

	unlink(readme);
	fge_write_in(f.ws, ".forge/impl/review_cycle_2.json", "{}");
	cr_assert_eq(symlink("/etc/passwd", link), 0);
	free(readme);
	free(link);
	cr_assert_eq(ep_changeset_snapshot(&f.cs, &f.pid1, &c), 0);
	cr_assert_not(ep_changeset_same(&a, &c));
	fg_evidence_init(&ev);
	cr_assert_eq(ep_changeset_compare(&f.cs, &f.pid1, &a, &c, &ev, -1, &diffed), 0);
	cr_assert_not(diffed);
	cr_assert_eq(ev.nchanges, 4, "%zu", ev.nchanges);
	cr_assert_eq(find(&ev, "calc.sh")->status, FG_CHANGE_MODIFIED);
	cr_assert_eq(find(&ev, "calc.sh")->added, -1);
	cr_assert_eq(find(&ev, "new/file")->status, FG_CHANGE_ADDED);
	cr_assert_eq(find(&ev, "README")->status, FG_CHANGE_DELETED);
	cr_assert_eq(find(&ev, "link")->status, FG_CHANGE_ADDED);
	fg_evidence_release(&ev);
	ep_state_release(&a);
	ep_state_release(&b);
	ep_state_release(&c);
	fx_teardown(&f);
}

Test(changeset, same_size_rewrite_with_the_same_mtime_is_still_seen)
{
	struct ep_manifest *a = NULL, *b = NULL;

	fge_write_in(tmp_dir, "f", "aaaa");
	cr_assert_eq(ep_manifest_take(tmp_dir, NULL, NULL, &a), 0);
	/* Same size, new content: the inode or ctime moves even when the
	 * mtime is put back, so the hash is computed again. */
	fge_write_in(tmp_dir, "f", "bbbb");
	cr_assert_eq(ep_manifest_take(tmp_dir, NULL, a, &b), 0);
	cr_assert_not(ep_manifest_same(a, b));
	ep_manifest_free(a);
	ep_manifest_free(b);
}

/* The manifest's content hash is BLAKE2b-256 (libsodium's generichash) of
 * the file, and of a link's target text: a worker cannot make two contents
 * of one hash, as it could with size and FNV-1a. */
Test(changeset, manifest_hash_is_blake2b_of_the_content)
{
	static const char content[] = "two 32-byte lines: the first one\nand the second, same length.\n";
	unsigned char want[EP_MANIFEST_HASH_BYTES], lwant[EP_MANIFEST_HASH_BYTES];
	struct ep_manifest *a = NULL;
	char *root = fgt_tmpdir(), *lk = fgt_fmt("%s/l", root);

	cr_assert_geq(sodium_init(), 0);
	fge_write_in(root, "f", content);
	cr_assert_eq(symlink("f", lk), 0);
	crypto_generichash(want, sizeof(want), (const unsigned char *)content, strlen(content), NULL, 0);
	crypto_generichash(lwant, sizeof(lwant), (const unsigned char *)"f", 1, NULL, 0);
	cr_assert_eq(ep_manifest_take(root, NULL, NULL, &a), 0);
	cr_assert_eq(a->n, 2);
	cr_assert_str_eq(a->e[0].path, "f");
	cr_assert_eq(memcmp(a->e[0].hash, want, sizeof(want)), 0);
	cr_assert_str_eq(a->e[1].path, "l");
	cr_assert(a->e[1].link);
	cr_assert_eq(memcmp(a->e[1].hash, lwant, sizeof(lwant)), 0);
	ep_manifest_free(a);
	fgt_rm_rf(root);
	free(root);
	free(lk);
}
