/*
 * seal.c - sealed records (see forge/seal.h).
 */
#include "forge/seal.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/fsutil.h"
#include "forge/sys.h"
#include "forge/util.h"
#include "internal.h"

#define DOMAIN "forge-review seal 1"
/* The seal member as the last one of each form, around its 64 hex digits. */
#define PRETTY_HEAD ",\n\t\"" FG_SEAL_MEMBER "\":\t\""
#define PRETTY_TAIL "\"\n}\n"
#define PRETTY_END "\n}\n"
#define COMPACT_HEAD ",\"" FG_SEAL_MEMBER "\":\""
#define COMPACT_TAIL "\"}"
#define COMPACT_END "}"
#define LIT_LEN(s) (sizeof(s) - 1)
/* A message beyond any record's size (FG_CYCLE_MAX_BYTES and the frame's
 * bound are far below it): the buffer's bound, never reached. */
#define MSG_MAX ((size_t)64 * 1024 * 1024)

struct form {
	const char *head, *tail, *end;
	size_t head_len, tail_len, end_len;
};

static const struct form FORMS[] = {
	{ PRETTY_HEAD, PRETTY_TAIL, PRETTY_END, LIT_LEN(PRETTY_HEAD), LIT_LEN(PRETTY_TAIL),
	  LIT_LEN(PRETTY_END) },
	{ COMPACT_HEAD, COMPACT_TAIL, COMPACT_END, LIT_LEN(COMPACT_HEAD), LIT_LEN(COMPACT_TAIL),
	  LIT_LEN(COMPACT_END) },
};

const char *fg_seal_status_name(enum fg_seal_status s)
{
	static const char *const names[] = { "sealed", "unverified", "unsealed", "bad_seal",
					     "replayed" };

	return FG_NAME_OF(names, s, "bad_seal");
}

bool fg_seal_forged(enum fg_seal_status s)
{
	return s == FG_SEAL_UNSEALED || s == FG_SEAL_BAD || s == FG_SEAL_REPLAYED;
}

int fg_seal_key_new(struct fg_seal_key *k)
{
	return fg_random_bytes(k->b, sizeof(k->b));
}

void fg_seal_key_hex(const struct fg_seal_key *k, char out[FG_SEAL_KEY_HEX + 1])
{
	sodium_bin2hex(out, FG_SEAL_KEY_HEX + 1, k->b, sizeof(k->b));
}

/* 1 when the n bytes of s are lowercase hex digits. */
static int lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int unhex(const char *s, unsigned char *out, size_t n)
{
	size_t got = 0;

	if (!lower_hex(s, 2 * n))
		return -EINVAL;
	if (sodium_hex2bin(out, n, s, 2 * n, NULL, &got, NULL) != 0 || got != n)
		return -EINVAL;
	return 0;
}

int fg_seal_key_parse(const char *s, size_t len, struct fg_seal_key *k)
{
	if (len != FG_SEAL_KEY_HEX)
		return -EINVAL;
	return unhex(s, k->b, sizeof(k->b));
}

int fg_seal_key_load(const char *path, struct fg_seal_key *k, char *err, size_t errlen)
{
	struct fg_buf b;
	size_t n;
	int r;

	fg_buf_init(&b, 256);
	r = fg_read_file_at(AT_FDCWD, path, 256, FG_READ_FOLLOW, &b, NULL);
	n = b.len;
	if (!r && n > 0 && b.data[n - 1] == '\n')
		n--;
	if (r) {
		fg__seterr(err, errlen, "cannot read the seal key file '%s': %s", path,
			   r == -EFBIG ? "larger than a key" : strerror(-r));
	} else if (fg_seal_key_parse(fg_buf_str(&b), n, k)) {
		fg__seterr(err, errlen, "'%s' does not hold a seal key (64 lowercase hex digits)", path);
		r = -EINVAL;
	}
	if (b.data)
		sodium_memzero(b.data, b.len);
	fg_buf_release(&b);
	return r;
}

void fg_seal_wipe(void *p, size_t n)
{
	sodium_memzero(p, n);
}

void fg_seal_key_wipe(struct fg_seal_key *k)
{
	fg_seal_wipe(k->b, sizeof(k->b));
}

/* The MAC's message: the domain, the binding, then body (n bytes) and end. */
static void message(struct fg_buf *m, enum fg_seal_kind kind, const struct fg_seal_bind *b,
		    const char *body, size_t n, const char *end, size_t end_len)
{
	fg_buf_init(m, MSG_MAX);
	fg_buf_add(m, DOMAIN, sizeof(DOMAIN));
	fg_buf_add(m, kind == FG_SEAL_FRAME ? "frame" : "file", kind == FG_SEAL_FRAME ? 6 : 5);
	fg_buf_add(m, b->run_id ? b->run_id : "", strlen(b->run_id ? b->run_id : "") + 1);
	fg_buf_add(m, b->step ? b->step : "", strlen(b->step ? b->step : "") + 1);
	fg_buf_add(m, b->file ? b->file : "", strlen(b->file ? b->file : "") + 1);
	fg_buf_addf(m, "%d", b->cycle);
	fg_buf_addc(m, '\0');
	fg_buf_add(m, body, n);
	fg_buf_add(m, end, end_len);
}

/* The form text (len bytes) ends as, or NULL. */
static const struct form *form_of(const char *text, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(FORMS); i++) {
		const struct form *f = &FORMS[i];

		if (len > f->end_len && !memcmp(text + len - f->end_len, f->end, f->end_len))
			return f;
	}
	return NULL;
}

char *fg_seal_append(const struct fg_seal_key *k, enum fg_seal_kind kind,
		     const struct fg_seal_bind *b, const char *text, size_t len, size_t *outlen)
{
	const struct form *f = form_of(text, len);
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	char hex[FG_SEAL_HEX + 1];
	struct fg_buf m, out;
	size_t body;

	if (!f)
		return NULL;
	body = len - f->end_len;
	message(&m, kind, b, text, body, f->end, f->end_len);
	crypto_auth_hmacsha256(mac, (const unsigned char *)m.data, m.len, k->b);
	fg_buf_release(&m);
	sodium_bin2hex(hex, sizeof(hex), mac, sizeof(mac));
	fg_buf_init(&out, MSG_MAX);
	fg_buf_add(&out, text, body);
	fg_buf_add(&out, f->head, f->head_len);
	fg_buf_add(&out, hex, FG_SEAL_HEX);
	fg_buf_add(&out, f->tail, f->tail_len);
	return fg_buf_detach(&out, outlen);
}

char *fg_seal_take(const struct fg_seal_key *k, enum fg_seal_kind kind,
		   const struct fg_seal_bind *b, char *text, size_t *len)
{
	size_t n = strlen(text);
	char *sealed = k ? fg_seal_append(k, kind, b, text, n, &n) : NULL;

	if (sealed) {
		free(text);
		text = sealed;
	}
	if (len)
		*len = n;
	return text;
}

/* The seal of text for b, when it sits where a form puts it. */
static enum fg_seal_status verify(const struct fg_seal_key *k, enum fg_seal_kind kind,
				  const struct fg_seal_bind *b, const char *text, size_t len)
{
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	enum fg_seal_status st = FG_SEAL_BAD;

	for (size_t i = 0; i < ARRAY_SIZE(FORMS); i++) {
		const struct form *f = &FORMS[i];
		size_t sealed = f->head_len + FG_SEAL_HEX + f->tail_len, body;
		struct fg_buf m;

		if (len <= sealed || memcmp(text + len - f->tail_len, f->tail, f->tail_len))
			continue;
		body = len - sealed;
		if (memcmp(text + body, f->head, f->head_len) ||
		    unhex(text + body + f->head_len, mac, sizeof(mac)))
			continue;
		message(&m, kind, b, text, body, f->end, f->end_len);
		if (!crypto_auth_hmacsha256_verify(mac, (const unsigned char *)m.data, m.len, k->b))
			st = FG_SEAL_OK;
		fg_buf_release(&m);
		break;
	}
	return st;
}

static bool same_place(const struct fg_seal_bind *a, const struct fg_seal_bind *b)
{
	return a->cycle == b->cycle && !strcmp(a->file ? a->file : "", b->file ? b->file : "") &&
	       !strcmp(a->step ? a->step : "", b->step ? b->step : "") &&
	       !strcmp(a->run_id ? a->run_id : "", b->run_id ? b->run_id : "");
}

enum fg_seal_status fg_seal_check(const struct fg_seal_key *k, enum fg_seal_kind kind,
				  const struct fg_seal_bind *where,
				  const struct fg_seal_bind *claimed, const char *text, size_t len)
{
	static const char member[] = "\"" FG_SEAL_MEMBER "\":";
	enum fg_seal_status st;

	if (!k)
		return FG_SEAL_UNVERIFIED;
	if (!memmem(text, len, member, sizeof(member) - 1))
		return FG_SEAL_UNSEALED;
	st = verify(k, kind, where, text, len);
	if (st == FG_SEAL_BAD && claimed && !same_place(where, claimed) &&
	    verify(k, kind, claimed, text, len) == FG_SEAL_OK)
		st = FG_SEAL_REPLAYED;
	return st;
}
