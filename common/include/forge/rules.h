/*
 * rules.h - the review loop's pure rules: when it stalls, how a cycle is
 * fitted into its file, when the cost budget is spent.
 *
 * Pure functions of their arguments (no I/O, no clock, no environment):
 * the entrypoint's loop (entrypoint/loop.c) applies them to the cycles it
 * holds, and tests/common/test_rules.c checks them case by case.
 */
#ifndef FORGE_RULES_H
#define FORGE_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "forge/cycle.h"
#include "forge/usage.h"

/*
 * True when cycle b, right after cycle a, rejected the work for the same
 * reasons: both rejected, neither reviewer failed (a_failed,
 * b_failed: a crashed reviewer says nothing about the work), and either
 * both carry structured findings (at least one each) with the same set of
 * (file, title) pairs (NULL and "" are equal; order and repeats do not
 * matter), or, when either has none, their feedback is equal after
 * collapsing whitespace runs and trimming. Borrowed.
 */
bool fg_rules_stalled(const struct fg_cycle *a, bool a_failed, const struct fg_cycle *b,
		      bool b_failed);

/*
 * Keeps a panel's cycle (c with reviews) under max bytes of fg_cycle_to_json()
 * (the cycle file's bound is FG_CYCLE_MAX_BYTES): eight roles each at the
 * verdict parser's bounds could exceed it. Over max, first every finding's
 * description, evidence and fix are dropped (the roles' and the merged
 * ones; the reviewer logs keep them); still over, each role's feedback
 * becomes "(too long for the cycle file: see the reviewer log)" (the merged
 * top-level feedback stays). A cycle without reviews is left alone; the
 * result may still be over max.
 */
void fg_rules_fit(struct fg_cycle *c, size_t max);

/*
 * True when total's reported cost (fg_usage_pair_cost) has passed
 * max_cost_usd; false when max_cost_usd < 0 (no budget) or no cost was
 * reported. *spent (spent may be NULL) receives the cost whenever there is
 * a budget and a cost, and is untouched otherwise.
 */
bool fg_rules_over_budget(double max_cost_usd, const struct fg_usage_pair *total, double *spent);

#endif
