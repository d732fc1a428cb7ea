/*
 * rules.c - the review loop's pure rules (see rules.h).
 */
#include "forge/rules.h"

#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"

#define BLANKS " \t\r\n\v\f"

/* Equal after collapsing whitespace runs and trimming. */
static bool same_text(const char *a, const char *b)
{
	for (;;) {
		while (*a && strchr(BLANKS, *a))
			a++;
		while (*b && strchr(BLANKS, *b))
			b++;
		if (!*a || !*b)
			return !*a && !*b;
		while (*a && *b && !strchr(BLANKS, *a) && *a == *b) {
			a++;
			b++;
		}
		if ((*a && !strchr(BLANKS, *a)) || (*b && !strchr(BLANKS, *b)))
			return false;
	}
}

static bool same_str(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* Every (file, title) of a occurs in b. */
static bool findings_within(const struct fg_judgement *a, const struct fg_judgement *b)
{
	for (size_t i = 0; i < a->nfindings; i++) {
		bool found = false;

		for (size_t j = 0; j < b->nfindings && !found; j++)
			found = same_str(a->findings[i].file_path, b->findings[j].file_path) &&
				same_str(a->findings[i].title, b->findings[j].title);
		if (!found)
			return false;
	}
	return true;
}

bool fg_rules_stalled(const struct fg_cycle *a, bool a_failed, const struct fg_cycle *b,
		      bool b_failed)
{
	const struct fg_judgement *x = &a->j, *y = &b->j;

	if (x->verdict != FG_VERDICT_REJECTED || y->verdict != FG_VERDICT_REJECTED || a_failed ||
	    b_failed)
		return false;
	if (x->has_findings && x->nfindings && y->has_findings && y->nfindings)
		return findings_within(x, y) && findings_within(y, x);
	return same_text(x->feedback, y->feedback);
}

static void shorten(struct fg_finding *f)
{
	FG_FREE_AND_NULL(f->description);
	FG_FREE_AND_NULL(f->evidence);
	FG_FREE_AND_NULL(f->fix);
}

void fg_rules_fit(struct fg_cycle *c, size_t max)
{
	for (int step = 0; step < 2 && c->has_reviews; step++) {
		char *text = fg_cycle_to_json(c);
		size_t len = strlen(text);

		free(text);
		if (len <= max)
			return;
		for (size_t i = 0; i < c->nreviews; i++) {
			struct fg_review *r = &c->reviews[i];

			if (step == 1) {
				free(r->j.feedback);
				r->j.feedback = fg_xstrdup("(too long for the cycle file: see the reviewer log)");
				continue;
			}
			for (size_t j = 0; j < r->j.nfindings; j++)
				shorten(&r->j.findings[j]);
		}
		for (size_t j = 0; step == 0 && j < c->j.nfindings; j++)
			shorten(&c->j.findings[j]);
	}
}

bool fg_rules_over_budget(double max_cost_usd, const struct fg_usage_pair *total, double *spent)
{
	double usd = 0;

	if (max_cost_usd < 0 || !fg_usage_pair_cost(total, &usd))
		return false;
	if (spent)
		*spent = usd;
	return usd > max_cost_usd;
}
