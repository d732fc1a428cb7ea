/*
 * names.c - validation of step, skill and task names, and ticket project keys
 * (see names.h).
 */
#include "forge/text.h"
#include "forge/names.h"

#include <errno.h>
#include <string.h>

#include "internal.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* How much of a refused name is echoed back: enough to recognise it. */
#define QUOTE_MAX 48

const char *fg_name_kind_str(enum fg_name_kind kind)
{
	switch (kind) {
	case FG_NAME_STEP:
		return "step";
	case FG_NAME_SKILL:
		return "skill";
	case FG_NAME_TASK_KEY:
		return "task key";
	case FG_NAME_RUN_ID:
		return "run id";
	}
	return "name";
}

/*
 * Copies a printable rendering of name into out: a refused name may hold
 * newlines, escapes or NUL bytes, and the message must stay one safe line.
 * Unprintable bytes become "\xNN" and long names are cut with "...".
 */
static void quote_name(const char *name, size_t len, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	size_t i;

	for (i = 0; i < len && i < QUOTE_MAX && o + 5 < outlen; i++) {
		unsigned char ch = (unsigned char)name[i];

		if (ch >= 0x20 && ch < 0x7f && ch != '\'' && ch != '\\') {
			out[o++] = (char)ch;
			continue;
		}
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[ch >> 4];
		out[o++] = hex[ch & 15];
	}
	if (i < len && o + 4 < outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/* The first reason a byte of name is refused, or NULL. */
static const char *bad_byte(const char *name, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned char ch = (unsigned char)name[i];
		size_t n;

		if (ch == '\0')
			return "contains a NUL byte";
		if (ch == '/')
			return "contains '/'";
		if (ch == '\\')
			return "contains '\\'";
		if (ch < 0x20 || ch == 0x7f)
			return "contains a control character";
		if (ch == ' ')
			return "contains whitespace";
		n = fg_utf8_seq((const unsigned char *)name + i, len - i);
		if (!n)
			return "is not valid UTF-8";
		i += n;
	}
	return NULL;
}

/* The reason name is not a valid path component, or NULL when it is. */
static const char *name_problem(const char *name, size_t len)
{
	const char *why;

	if (len == 0)
		return "is empty";
	if (len > FG_NAME_MAX)
		return "is longer than " STR(FG_NAME_MAX) " bytes";
	why = bad_byte(name, len);
	if (why)
		return why;
	if (len == 1 && name[0] == '.')
		return "is '.'";
	if (len == 2 && name[0] == '.' && name[1] == '.')
		return "is '..'";
	if (memmem(name, len, "..", 2))
		return "contains '..'";
	if (name[0] == '.')
		return "starts with '.'";
	return NULL;
}

int fg_name_check(enum fg_name_kind kind, const char *name, size_t len, char *err, size_t errlen)
{
	char quoted[QUOTE_MAX * 4 + 8];
	const char *why;

	if (!name)
		len = 0;
	why = name_problem(name ? name : "", len);
	if (!why)
		return 0;
	quote_name(name ? name : "", len, quoted, sizeof(quoted));
	fg__seterr(err, errlen, "invalid %s name '%s': %s", fg_name_kind_str(kind), quoted, why);
	return -EINVAL;
}

static int is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Length of the project part of key (LETTERS before "-DIGITS"), 0 if none. */
static size_t project_len(const char *key)
{
	size_t i = 0;
	size_t dash;

	if (!is_alpha(key[0]))
		return 0;
	while (is_alpha(key[i]) || is_digit(key[i]) || key[i] == '_')
		i++;
	if (key[i] != '-')
		return 0;
	dash = i++;
	if (!is_digit(key[i]))
		return 0;
	while (is_digit(key[i]))
		i++;
	return key[i] == '\0' ? dash : 0;
}

int fg_ticket_project(const char *key, char *out, size_t outlen)
{
	size_t n;

	if (outlen)
		out[0] = '\0';
	/* A key that could not even be a path component is refused outright,
	 * so "../../etc-1" is an error and never a quiet "no project". */
	if (!key || fg_name_check(FG_NAME_TASK_KEY, key, strlen(key), NULL, 0) < 0)
		return -EINVAL;
	n = project_len(key);
	if (!n)
		return -ENOENT;
	if (n + 1 > outlen)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < n; i++)
		out[i] = (char)(key[i] >= 'A' && key[i] <= 'Z' ? key[i] - 'A' + 'a' : key[i]);
	out[n] = '\0';
	return 0;
}

int fg__name_field(int kind, const char *key, const char *value, char *err, size_t errlen)
{
	char why[256];

	if (!fg_name_check((enum fg_name_kind)kind, value, strlen(value), why, sizeof(why)))
		return 0;
	fg__seterr(err, errlen, "field '%s': %s", key, why);
	return -EINVAL;
}
