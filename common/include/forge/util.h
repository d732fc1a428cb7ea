/*
 * util.h - small macros every module may use.
 *
 * The tiers of common/ (each module's header states its place the same
 * way, as git's strbuf.h does):
 *   base    util, exit, alloc, buf, num, timeutil, sys, diag, text, quote,
 *           msg, tracectx, json, fsutil, opts, cmdline, cmd: know nothing
 *           of reviews or their files; each may call only the base modules
 *           listed before it.
 *   domain  names, severity, usage, phase, denied, isolation, verdict,
 *           evidence, audit, rules, reviewmd, resolve, cycle, summary,
 *           frame, seal, stepdir: forge-review's names, formats and rules;
 *           they may call any base module and each other.
 * Every module is in one tier. A source file without a header of its own
 * belongs to the module its name starts with (reviewmd_yaml.c) or to the
 * header it implements (review.c, cycle.h). A base module never includes a
 * domain header nor a domain module's internal header; internal.h holds
 * cross-file internals of both tiers and includes no forge/ header.
 * tests/common/test_tiers.c checks all of it, reading the lists above.
 */
#ifndef FORGE_UTIL_H
#define FORGE_UTIL_H

#include <errno.h>
#include <stddef.h>

/* The number of elements of the array a (an array, never a pointer: the
 * second sizeof would then silently divide a pointer's size). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The spelling of a macro's value as a string literal, for help texts that
 * must say the number the code uses: FG_XSTR(FG_EXIT_TIMEOUT) is "124". */
#define FG_STR(x) #x
#define FG_XSTR(x) FG_STR(x)

/* Flags of fg_name_index(). */
#define FG_NAME_ANYCASE 1u   /* compare with strcasecmp() */

/*
 * The one name-table lookup (an enum's spellings, indexed by value): the
 * index of s among the n entries of names (NULL entries never match), or
 * -1 when s is NULL or not there. FG_NAME_INDEX() counts the table itself,
 * so a name added to the table needs no count changed anywhere.
 */
int fg_name_index(const char *const *names, size_t n, const char *s, unsigned flags);
#define FG_NAME_INDEX(names, s, flags) fg_name_index((names), ARRAY_SIZE(names), (s), (flags))
/*
 * The same lookup over a table of pointers to structs that carry their own
 * name (an ops table indexed by an enum: each entry's const char * member
 * at byte offset off; NULL entries and NULL names never match).
 * FG_NAME_INDEX_OPS(table, member, s, flags) counts the table and finds
 * the member itself.
 */
int fg_name_index_ops(const void *const *table, size_t n, size_t off, const char *s, unsigned flags);
#define FG_NAME_INDEX_OPS(table, member, s, flags)                                  \
	fg_name_index_ops((const void *const *)(table), ARRAY_SIZE(table),            \
			  offsetof(__typeof__(**(table)), member), (s), (flags))
/* The parser of an enum's spellings: *out (a pointer to the enum) set to
 * the index of s and 0, or -EINVAL with *out untouched when s is not in the
 * table (the lookup runs again to set *out: the tables are a few names). */
#define FG_NAME_PARSE(names, s, flags, out)                       \
	(FG_NAME_INDEX(names, s, flags) < 0 ? -EINVAL               \
	 : (*(out) = FG_NAME_INDEX(names, s, flags), 0))
/* names[i] when i indexes the table, else fallback (an out-of-range enum). */
#define FG_NAME_OF(names, i, fallback) \
	((size_t)(i) < ARRAY_SIZE(names) ? (names)[(size_t)(i)] : (fallback))
/* Defines an enum's pair of name functions over its table (their contract
 * is in the header that declares them): `const char *name_fn(type)`, which
 * is FG_NAME_OF() with fallback, and `int parse_fn(const char *, type *)`,
 * which is FG_NAME_PARSE() with exact case. */
#define FG_NAME_FUNCS(type, names, fallback, name_fn, parse_fn)  \
	const char *name_fn(type v)                              \
	{                                                        \
		return FG_NAME_OF(names, v, fallback);           \
	}                                                        \
	int parse_fn(const char *s, type *out)                   \
	{                                                        \
		return FG_NAME_PARSE(names, s, 0, out);          \
	}

#endif
