/*
 * internal.h - cross-file internals of common/ (not installed, not public).
 */
#ifndef FORGE_INTERNAL_H
#define FORGE_INTERNAL_H

#include <stddef.h>

/* Copies src into dst (size n > 0), truncating; always NUL-terminates. */
void fg__strlcpy(char *dst, const char *src, size_t n);
/* snprintf into err if err != NULL and errlen > 0. */
void fg__seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A failed fg_read_file_at() of name (bounded at max bytes) said in err:
 * "'name' is a symbolic link", "... is not a regular file" (a directory
 * too), "... is larger than max bytes", "cannot read 'name': why".
 * Returns r, -EISDIR turned into -EINVAL. */
int fg__read_failed(int r, const char *name, int max, char *err, size_t errlen);

/*
 * Checks the string member key of a cycle or summary file like the name it
 * stands for (names.h: fg_name_check() of kind, its length bound
 * included). 0, or -EINVAL with "field 'key': invalid skill name '...':
 * ..." in err. In names.c: the one edge from a JSON reader to the names.
 */
int fg__name_field(int kind, const char *key, const char *value, char *err, size_t errlen);

/* verdict_findings.c: the "format" and "findings" members of a cycle or
 * review object o read into j (has_format and has_findings set when
 * present and valid; an unknown format reads as none). */
struct cJSON;
struct fg_judgement;
void fg__judgement_read(const struct cJSON *o, struct fg_judgement *j);

/* review.c: the cycle's "reviews" array added to o (none when c has no
 * reviews), and read back from arr into c (a malformed entry is skipped). */
struct cJSON;
struct fg_cycle;
void fg__cycle_add_reviews(struct cJSON *o, const struct fg_cycle *c);
void fg__cycle_parse_reviews(const struct cJSON *arr, struct fg_cycle *c);
/* cycle.c: 1 when s is a plain file name (no '/', not "." or ".."): a
 * reviewer log named in a cycle file is opened in the step directory. */
int fg__safe_base_name(const char *s);

/* A duration for a file we write: rounded to milliseconds; a non-finite
 * or negative value is 0, so what we write always reads back. */
double fg__seconds_for_file(double x);

#endif
