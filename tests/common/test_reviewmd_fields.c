/*
 * test_reviewmd_fields.c - review.md's other fields: max_cost_usd and its
 * priority over the environment, require_evidence, checks:, audit: and the
 * did-you-mean of a misspelled entry.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fgtest.h"
#include "forge/buf.h"
#include "forge/alloc.h"
#include "forge/reviewmd.h"

#include "reviewmd_sample.h"
#include "tmp_fixture.h"

TestSuite(reviewmd, .init = tmp_init, .fini = tmp_fini, .timeout = 60);

/* max_cost_usd: plain numbers only; the frontmatter wins over
 * AUTO_REVIEW_MAX_COST_USD; invalid values warn and fall back. */
Test(reviewmd, max_cost_usd_values_and_priority)
{
	static const struct {
		const char *fm, *env;
		double want;
		bool warns;
	} k[] = {
		{ "max_cost_usd: 2.50", NULL, 2.5, false },
		{ "max_cost_usd: 5", "1", 5, false },
		{ "max_cost_usd: 0", NULL, 0, false },
		{ NULL, "0.75", 0.75, false },
		{ NULL, NULL, -1, false },
		{ "max_cost_usd: \"3\"", NULL, -1, true },
		{ "max_cost_usd: -1", "2", 2, true },
		{ "max_cost_usd: .inf", NULL, -1, true },
		{ "max_cost_usd: true", NULL, -1, true },
		{ "max_cost_usd: [1]", NULL, -1, true },
		{ NULL, "lots", -1, true },
		{ NULL, "-3", -1, true },
		{ "max_cost_usd: 1000001", NULL, -1, true },
	};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct fg_review_env env = { NULL, NULL, k[i].env };
		struct fg_review_config c;
		char *text = k[i].fm ? fgt_fmt("---\n%s\n---\nBody\n", k[i].fm) : fgt_fmt("Body\n");

		fg_review_config_init(&c);
		fg_review_config_parse(&c, text, strlen(text), &env);
		cr_expect_float_eq(c.max_cost_usd, k[i].want, 1e-12, "case %zu: got %g", i, c.max_cost_usd);
		cr_expect_eq(c.diags.n > 0, k[i].warns, "case %zu: %zu diagnostic(s)", i, c.diags.n);
		fg_review_config_release(&c);
		free(text);
	}
}

Test(reviewmd, require_evidence_is_a_bool_defaulting_to_false)
{
	struct fg_review_config c;

	fg_review_config_init(&c);
	parse_str(&c, "Body\n");
	cr_assert_not(c.require_evidence);
	parse_str(&c, "---\nrequire_evidence: true\n---\nBody\n");
	cr_assert(c.require_evidence);
	cr_assert_eq(c.diags.n, 0);
	parse_str(&c, "---\nrequire_evidence: yes\n---\nBody\n");
	cr_assert_not(c.require_evidence, "YAML 1.2: 'yes' is no boolean");
	cr_assert_eq(c.diags.n, 1);
	cr_assert(strstr(c.diags.v[0].msg, "invalid 'require_evidence' value 'yes'"), "%s", c.diags.v[0].msg);
	parse_str(&c, "---\nrequire_evidnce: true\n---\nBody\n");
	cr_assert(strstr(c.diags.v[0].msg, "did you mean 'require_evidence'"), "%s", c.diags.v[0].msg);
	fg_review_config_release(&c);
}

Test(reviewmd, checks_entries_are_validated_one_by_one)
{
	struct fg_review_config c;

	fg_review_config_init(&c);
	parse_str(&c, "---\nchecks:\n"
		      "  - name: tests\n    run: sh tests/test_calc.sh\n    timeout_seconds: 30\n"
		      "  - name: lint\n    run: \"make lint\"\n"
		      "  - name: Bad Name\n    run: true\n"
		      "  - name: tests\n    run: true\n"
		      "  - name: quote\n    run: \"sh -c 'unclosed\"\n"
		      "  - name: slow\n    run: sleep 1\n    timeout_seconds: 0\n"
		      "  - name: empty\n    run: \"  \"\n"
		      "  - just a string\n"
		      "---\nBody\n");
	cr_assert_eq(c.nchecks, 2);
	cr_assert_str_eq(c.checks[0].name, "tests");
	cr_assert_str_eq(c.checks[0].run, "sh tests/test_calc.sh");
	cr_assert_eq(c.checks[0].timeout_s, 30);
	cr_assert_eq(c.checks[0].line, 3);
	cr_assert_str_eq(c.checks[1].name, "lint");
	cr_assert_eq(c.checks[1].timeout_s, FG_CHECK_TIMEOUT_DEFAULT);
	cr_assert_eq(c.diags.n, 6, "%zu diagnostics", c.diags.n);
	for (size_t i = 0; i < c.diags.n; i++) {
		cr_assert_eq(c.diags.v[i].level, FG_DIAG_ERROR);
		cr_assert(strstr(c.diags.v[i].msg, "invalid 'checks' entry"), "%s", c.diags.v[i].msg);
	}
	cr_assert(strstr(c.diags.v[0].msg, "'name' must be a slug"), "%s", c.diags.v[0].msg);
	cr_assert(strstr(c.diags.v[1].msg, "check 'tests' is repeated (first on line 3)"), "%s", c.diags.v[1].msg);
	cr_assert(strstr(c.diags.v[2].msg, "'run' is not a command line"), "%s", c.diags.v[2].msg);
	cr_assert(strstr(c.diags.v[3].msg, "'timeout_seconds' must be a plain integer from 1 to 86400"), "%s",
		  c.diags.v[3].msg);
	cr_assert(strstr(c.diags.v[4].msg, "check 'empty': 'run' is not a command line"), "%s", c.diags.v[4].msg);
	parse_str(&c, "---\nchecks: make test\n---\nBody\n");
	cr_assert_eq(c.nchecks, 0);
	cr_assert(strstr(c.diags.v[0].msg, "invalid 'checks' value 'make test'"), "%s", c.diags.v[0].msg);
	fg_review_config_release(&c);
}

/* audit: (the held-out second opinion): the mapping's members, their
 * defaults, bad values with an error each, the instructions file read
 * beside review.md (never outside), the role name "audit" reserved. */
/* Parses t into c and checks that it asks for an audit of that sample,
 * blocking or not. */
static void expect_audit(struct fg_review_config *c, const char *t, double sample, bool blocks)
{
	parse_str(c, t);
	cr_assert(c->audit.on, "%s", t);
	cr_assert_float_eq(c->audit.sample, sample, 1e-12, "%s", t);
	cr_assert_eq(c->audit.blocks, blocks, "%s", t);
}

Test(reviewmd, audit_mapping_members_defaults_and_errors)
{
	struct fg_review_config c;
	const char *t;

	fg_review_config_init(&c);
	fg_review_config_parse(&c, "---\nmax_retries: 2\n---\nBody\n", 0, NULL);
	cr_assert_not(c.audit.on, "no audit: unless asked for");
	expect_audit(&c, "---\naudit: {}\n---\nBody\n", 1, false);
	cr_assert_null(c.audit.instructions_file);
	cr_assert_eq(c.diags.n, 0);
	expect_audit(&c, "---\naudit:\n  sample: 0.2\n  blocks: true\n---\nBody\n", 0.2, true);
	cr_assert_eq(c.audit.line, 2);
	/* Bad members: an error each, the default kept, the audit still on. */
	expect_audit(&c, "---\naudit:\n  sample: 1.5\n  blocks: yes\n  instructions: ../x.md\n  smaple: 1\n---\nB\n",
		     1, false);
	cr_assert_null(c.audit.instructions_file);
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 3, "invalid 'audit.sample' value '1.5'"));
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 4, "invalid 'audit.blocks' value 'yes'"));
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 5, "audit file '../x.md' refused"));
	cr_assert(has_diag(&c.diags, FG_DIAG_WARNING, 6, "unknown field 'smaple' in 'audit'"));
	/* Not a mapping: an error, no audit. */
	t = "---\naudit: true\n---\nB\n";
	fg_review_config_parse(&c, t, strlen(t), NULL);
	cr_assert_not(c.audit.on);
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 2, "invalid 'audit' value 'true'"));
	/* A typo of the field is said at run time too. */
	t = "---\naudti: {}\n---\nB\n";
	fg_review_config_parse(&c, t, strlen(t), NULL);
	cr_assert_not(c.audit.on);
	cr_assert(has_diag(&c.diags, FG_DIAG_WARNING, 2, "did you mean 'audit'"));
	/* The audit's role name is no panel role's. */
	t = "---\nreviewers:\n  - role: audit\n  - role: docs\n---\nB\n";
	fg_review_config_parse(&c, t, strlen(t), NULL);
	cr_assert_eq(c.nreviewers, 1);
	cr_assert_str_eq(c.reviewers[0].role, "docs");
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 3, "role 'audit' is reserved for the audit"));
	fg_review_config_release(&c);
}

Test(reviewmd, audit_instructions_file_is_read_beside_review_md_only)
{
	char *skill = tmp_path("skill");
	char *rmd = fgt_fmt("%s/review.md", skill);
	char *file = fgt_fmt("%s/audit/hunt.md", skill), *outside = fgt_fmt("%s/secret.md", tmp_dir);
	char *link = fgt_fmt("%s/link.md", skill);
	struct fg_review_config c;
	struct fg_diags out;

	fgt_write(file, "\nHunt for off-by-one errors.\r\n\n");
	fgt_write(outside, "outside\n");
	cr_assert_eq(symlink("../secret.md", link), 0);
	fgt_write(rmd, "---\naudit:\n  instructions: audit/hunt.md\n  sample: 0\n---\nShared\n");
	fg_review_config_init(&c);
	cr_assert_eq(fg_review_config_load(&c, rmd, NULL), 0);
	cr_assert(c.audit.on);
	cr_assert_str_eq(c.audit.instructions_file, "audit/hunt.md");
	cr_assert_str_eq(c.audit.instructions, "Hunt for off-by-one errors.");
	cr_assert_float_eq(c.audit.sample, 0, 1e-12);
	cr_assert_eq(c.diags.n, 0, "%s", c.diags.n ? c.diags.v[0].msg : "");
	/* A symlink leading out: refused, the audit runs with its prompt alone. */
	fgt_write(rmd, "---\naudit:\n  instructions: link.md\n---\nShared\n");
	cr_assert_eq(fg_review_config_load(&c, rmd, NULL), 0);
	cr_assert(c.audit.on);
	cr_assert_str_eq(c.audit.instructions, "");
	cr_assert(has_diag(&c.diags, FG_DIAG_ERROR, 2, "audit file 'link.md' refused"));
	fg_review_config_release(&c);
	fg_diags_init(&out);
	cr_assert_eq(fg_review_lint_file(rmd, &out), 1, "lint fails on a refused audit file");
	fg_diags_release(&out);
	FG_FREE_ALL(rmd, file, outside, link);
}

/* The message of c's diagnostic that holds part, or NULL; *line its line. */
static const char *diag_with(const struct fg_review_config *c, const char *part, int *line)
{
	for (size_t i = 0; i < c->diags.n; i++)
		if (strstr(c->diags.v[i].msg, part)) {
			*line = c->diags.v[i].line;
			return c->diags.v[i].msg;
		}
	return NULL;
}

/* Lint and the run-time parse guess what an author meant in an entry, say
 * "missing 'run'", flag an unknown placeholder, and point at the value's
 * line; "./style.md" is the role file beside review.md. */
Test(reviewmd, entries_get_a_did_you_mean_and_errors_at_the_values_line)
{
	struct fg_review_config c;
	const char *m;
	int line = 0;

	fg_review_config_init(&c);
	parse_str(&c, "---\nchecks:\n"
		      "  - name: lint\n    command: make lint\n"
		      "  - name: tests\n    run: make test\n    timeout: 30\n"
		      "  - name: slow\n    run: sleep 1\n    timeout_seconds: 0\n"
		      "  - name: own\n    run: sh {skills_dir}/lint.sh {cycle}\n"
		      "reviewers:\n  - name: security\n"
		      "---\nBody\n");
	m = diag_with(&c, "unknown field 'command' in a 'checks' entry is ignored (did you mean 'run'?)", &line);
	cr_assert(m && line == 4, "%s at %d", m ? m : "(none)", line);
	m = diag_with(&c, "check 'lint': missing 'run' (the command line the check runs)", &line);
	cr_assert(m && line == 3, "%s at %d", m ? m : "(none)", line);
	m = diag_with(&c, "unknown field 'timeout' in a 'checks' entry is ignored (did you mean 'timeout_seconds'?)",
		      &line);
	cr_assert(m && line == 7, "%s at %d", m ? m : "(none)", line);
	m = diag_with(&c, "check 'slow': 'timeout_seconds' must be a plain integer", &line);
	cr_assert(m && line == 10, "at the value's line: %s at %d", m ? m : "(none)", line);
	m = diag_with(&c, "check 'own': unknown placeholder '{skills_dir}' in 'run' is left as it is "
			  "(did you mean '{skill_dir}'? a check takes", &line);
	cr_assert(m && line == 12, "%s at %d", m ? m : "(none)", line);
	m = diag_with(&c, "unknown field 'name' in a 'reviewers' entry is ignored (did you mean 'role'?)", &line);
	cr_assert(m && line == 14, "%s at %d", m ? m : "(none)", line);
	fg_review_config_release(&c);

	char *md = fgt_fmt("%s/review.md", tmp_dir), *style = fgt_fmt("%s/style.md", tmp_dir);
	struct fg_diags d;

	fgt_write(style, "Check the style.\n");
	fgt_write(md, "---\nreviewers:\n  - role: style\n    instructions: ./style.md\n"
		      "checks:\n  - name: lint\n    run: sh {skill_dir}/lint.sh\n---\nBody\n");
	fg_diags_init(&d);
	cr_assert_eq(fg_review_lint_file(md, &d), 0, "./style.md is accepted");
	char *want = fgt_fmt("check 'lint': '%s/lint.sh' does not exist ({skill_dir} is the directory of this "
			     "review.md: ship the file there)", tmp_dir);
	int found = 0;

	for (size_t i = 0; i < d.n; i++)
		found |= d.v[i].level == FG_DIAG_WARNING && strstr(d.v[i].msg, want) && d.v[i].line == 6;
	cr_assert(found, "no warning '%s' (%zu diagnostics%s%s)", want, d.n, d.n ? ", first: " : "",
		  d.n ? d.v[0].msg : "");
	fg_diags_release(&d);
	FG_FREE_ALL(md, style, want);
}
