/*
 * fgdocs.h - what the documentation tests (tests/e2e/test_docs_help.c,
 * test_docs_reference.c) read: a source file, a man page as plain text,
 * the option and variable names in a text, a program's --help.
 */
#ifndef FGDOCS_H
#define FGDOCS_H

#include <stdbool.h>
#include <stddef.h>

struct fgdoc_help_case {
	const char *bin;
	const char *man;        /* relative to FG_SOURCE_DIR */
	const char *args[3];    /* subcommand words before --help */
};

/* Every program and subcommand whose --help is checked, with its man page.
 * Every program and subcommand whose --help is checked, with its man page. */
extern const struct fgdoc_help_case FGDOC_HELP_CASES[];
/* The number of FGDOC_HELP_CASES. */
extern const size_t FGDOC_NHELP;

/* The file at FG_SOURCE_DIR/rel (owned; fails the test when it cannot be
 * read). */
char *fgdoc_read_source(const char *rel);

/* Man page source as a reader sees it: font escapes (\fB, \fR, \f(CW),
 * zero-width \& and the roff minus \- reduced to plain text. */
char *fgdoc_man_plain(const char *rel);

/* true for a character of a word (letters, digits, _ and -). */
bool fgdoc_word_char(char c);

/* Length of the option or variable name starting at p (0: none). "FORGE_*"
 * is a wildcard, not a name. */
size_t fgdoc_token_len(const char *text, const char *p);

/* Appends to names every distinct long option (--name) and environment
 * variable (FORGE_*, AUTO_REVIEW_*) of text. Returns the new count. */
size_t fgdoc_collect_tokens(const char *text, char names[][64], size_t n, size_t max);

/* The --help text of c's program and subcommand (owned; fails the test when
 * it does not exit 0). */
char *fgdoc_help_of(const struct fgdoc_help_case *c);

/* ---- the other direction: what the docs define exists in --help ---- */

/* Every long option of every --help of bin, collected once (names, n). */
size_t fgdoc_help_tokens_of(const char *bin, char names[][64], size_t max);

/* true when p[0..len) is one of names[0..n). */
bool fgdoc_in_names(char names[][64], size_t n, const char *p, size_t len);

#endif
