/*
 * quote.h - names and agent text as they are shown: in prompts, reports
 * and logs. One module, so every place and every report format (Markdown
 * today, HTML later) quotes the same way. Text from the sandbox (paths,
 * reviewer feedback, finding titles, check output) is data: quoted, it can
 * neither start a line of its own in a prompt nor render as markup.
 *
 *   fg_quote_name()      a path or name as git's core.quotePath shows it
 *   fg_quote_md_name()   a validated name (step, skill, role) for Markdown
 *   fg_quote_md_text()   one line of agent text for Markdown: inert
 *   fg_quote_md_block()  agent text as a Markdown block quote: inert
 *   fg_quote_md_fence()  text as a fenced code block its content cannot close
 *
 * Tier: base (util.h). Uses buf and text. Appends only; a full buffer
 * (-E2BIG) leaves what fitted.
 */
#ifndef FORGE_QUOTE_H
#define FORGE_QUOTE_H

#include <stddef.h>

struct fg_buf;

/*
 * Appends the n bytes of s as git's core.quotePath (the default, true)
 * does: unchanged when no byte needs quoting; else in double quotes, with
 * '"' and '\\' escaped, \a \b \t \n \v \f \r as C escapes and every other
 * control byte, DEL and byte >= 0x80 as a three-digit octal escape. A
 * quoted name is one line whatever it holds.
 */
void fg_quote_name(struct fg_buf *b, const char *s, size_t n);
/* fg_quote_name() into an owned string. */
char *fg_quote_name_dup(const char *s);

/*
 * Appends the validated name s (no blanks or control bytes) for Markdown:
 * the characters \ ` * [ ] < > | ~ # backslash-escaped; '_' is left alone
 * (GitHub never emphasises inside a word, and step names are full of it).
 */
void fg_quote_md_name(struct fg_buf *b, const char *s);

/*
 * Appends the n bytes of s as Markdown text that renders as exactly these
 * characters: every ASCII punctuation character backslash-escaped (so no
 * emphasis, code span, link, image, autolink, HTML, entity, table cell
 * end or heading can open), every control byte (newlines included) as a
 * space, bytes that are not valid UTF-8 as U+FFFD.
 */
void fg_quote_md_text(struct fg_buf *b, const char *s, size_t n);

/*
 * Appends the n bytes of s as a block quote: each line ("\n", "\r\n" or
 * "\r" ends one) "> " then the line as fg_quote_md_text() writes it (">"
 * alone for an empty line), trailing blank lines dropped. Nothing in it can
 * end the quote, or open a heading, link, image or HTML inside it.
 */
void fg_quote_md_block(struct fg_buf *b, const char *s, size_t n);

/*
 * Appends s (NUL-terminated) as a fenced code block: a backtick fence one
 * longer than the longest run of backticks in s (at least 3), info (may be
 * NULL) after the opening fence, s, a newline if s does not end with one,
 * and the closing fence. empty (may be NULL) is written when s is "".
 */
void fg_quote_md_fence(struct fg_buf *b, const char *s, const char *info, const char *empty);

#endif
