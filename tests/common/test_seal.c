/*
 * test_seal.c - sealed records (forge/seal.h): keys, the seal member of a
 * file and of a frame, what a reader finds (sealed, unverified, unsealed,
 * bad_seal, replayed), and the sealed writers of cycles, the summary and
 * frames, read back by the unchanged readers.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "forge/alloc.h"
#include "forge/frame.h"
#include "forge/seal.h"

#include "cycle_sample.h"
#include "tmp_fixture.h"

TestSuite(seal, .init = tmp_init, .fini = tmp_fini, .timeout = 30);

static void key_of(struct fg_seal_key *k, unsigned char fill)
{
	memset(k->b, fill, sizeof(k->b));
}

static const struct fg_seal_bind B1 = { "run1", "impl", "review_cycle_1.json", 1 };

/* text sealed as kind, bound to B1, with the key of fill (set in *k); the
 * sealed text is owned, its length in *n. */
static char *sealed(struct fg_seal_key *k, unsigned char fill, enum fg_seal_kind kind, const char *text,
		    size_t *n)
{
	char *s;

	key_of(k, fill);
	s = fg_seal_append(k, kind, &B1, text, strlen(text), n);
	cr_assert_not_null(s, "%s", text);
	cr_assert_eq(*n, strlen(s));
	return s;
}

static char *read_in(const char *dir, const char *name, size_t *n)
{
	char *path = fgt_fmt("%s/%s", dir, name);
	char *text = fgt_read(path, n);

	cr_assert_not_null(text, "%s", path);
	free(path);
	return text;
}

static void make_cycle(struct fg_cycle *c, int n, enum fg_verdict_kind v)
{
	fg_cycle_init(c);
	c->cycle = n;
	c->max_cycles = 3;
	c->j.verdict = v;
	c->j.feedback = fg_xstrdup("caf\xc3\xa9 \"quoted\"\n\ttab");
	c->skill = fg_xstrdup("impl");
	c->elapsed_seconds = 1.25;
	snprintf(c->timestamp, sizeof(c->timestamp), "%s", "2026-01-15T10:30:00Z");
	c->run_id = fg_xstrdup("run1");
}

Test(seal, keys_are_fresh_and_round_trip_through_hex)
{
	struct fg_seal_key a, b, c;
	char hex[FG_SEAL_KEY_HEX + 1];

	cr_assert_eq(fg_seal_key_new(&a), 0);
	cr_assert_eq(fg_seal_key_new(&b), 0);
	cr_expect(memcmp(a.b, b.b, sizeof(a.b)), "two keys from the kernel are equal");
	fg_seal_key_hex(&a, hex);
	cr_assert_eq(strlen(hex), 64);
	for (size_t i = 0; i < 64; i++)
		cr_assert(strchr("0123456789abcdef", hex[i]), "%s", hex);
	cr_assert_eq(fg_seal_key_parse(hex, 64, &c), 0);
	cr_assert_eq(memcmp(a.b, c.b, sizeof(a.b)), 0);
	fg_seal_key_wipe(&c);
	for (size_t i = 0; i < sizeof(c.b); i++)
		cr_assert_eq(c.b[i], 0);
}

Test(seal, key_parse_takes_exactly_64_lowercase_hex_digits)
{
	struct fg_seal_key k;
	char hex[FG_SEAL_KEY_HEX + 2];

	memset(hex, 'a', sizeof(hex));
	cr_expect_eq(fg_seal_key_parse(hex, 64, &k), 0);
	cr_expect_eq(fg_seal_key_parse(hex, 63, &k), -EINVAL);
	cr_expect_eq(fg_seal_key_parse(hex, 65, &k), -EINVAL);
	hex[10] = 'A';
	cr_expect_eq(fg_seal_key_parse(hex, 64, &k), -EINVAL, "uppercase accepted");
	hex[10] = 'g';
	cr_expect_eq(fg_seal_key_parse(hex, 64, &k), -EINVAL);
	hex[10] = '\n';
	cr_expect_eq(fg_seal_key_parse(hex, 64, &k), -EINVAL);
}

Test(seal, key_file_holds_the_key_and_one_optional_newline)
{
	char *path = tmp_path("key");
	struct fg_seal_key k, want;
	char hex[FG_SEAL_KEY_HEX + 1], err[256] = "";
	char *text;

	key_of(&want, 0x5a);
	fg_seal_key_hex(&want, hex);
	text = fgt_fmt("%s\n", hex);
	fgt_write(path, text);
	cr_assert_eq(fg_seal_key_load(path, &k, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(memcmp(k.b, want.b, sizeof(k.b)), 0);
	free(text);
	text = fgt_fmt("%s\n\n", hex);
	fgt_write(path, text);
	cr_expect_eq(fg_seal_key_load(path, &k, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "does not hold a seal key"), "%s", err);
	cr_expect_eq(fg_seal_key_load("/nonexistent/key", &k, err, sizeof(err)), -ENOENT);
	cr_expect(strstr(err, "/nonexistent/key"), "%s", err);
	free(text);
}

Test(seal, a_pretty_file_gets_the_seal_as_its_last_member_and_stays_json)
{
	struct fg_seal_key k;
	const char text[] = "{\n\t\"cycle\":\t1,\n\t\"verdict\":\t\"approved\"\n}\n";
	size_t n = 0;
	char *s;
	cJSON *o;

	s = sealed(&k, 1, FG_SEAL_FILE, text, &n);
	cr_expect(strstr(s, ",\n\t\"seal\":\t\""), "%s", s);
	cr_expect_eq(strncmp(s, text, strlen(text) - 3), 0, "the body changed:\n%s", s);
	o = cJSON_Parse(s);
	cr_assert_not_null(o, "%s", s);
	cr_expect_eq(strlen(cJSON_GetObjectItem(o, "seal")->valuestring), 64);
	cr_expect_eq(cJSON_GetObjectItem(o, "cycle")->valueint, 1);
	cJSON_Delete(o);
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FILE, &B1, NULL, s, n), FG_SEAL_OK);
	cr_expect_eq(fg_seal_check(NULL, FG_SEAL_FILE, &B1, NULL, s, n), FG_SEAL_UNVERIFIED);
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FRAME, &B1, NULL, s, n), FG_SEAL_BAD,
		     "a file's seal passed for a frame's");
	free(s);
}

Test(seal, a_compact_object_gets_the_seal_as_its_last_member)
{
	struct fg_seal_key k;
	const char text[] = "{\"v\":1,\"type\":\"review_cycle\"}";
	size_t n = 0;
	char *s;

	s = sealed(&k, 2, FG_SEAL_FRAME, text, &n);
	cr_expect_eq(strncmp(s, "{\"v\":1,\"type\":\"review_cycle\",\"seal\":\"",
			     strlen("{\"v\":1,\"type\":\"review_cycle\",\"seal\":\"")), 0, "%s", s);
	cr_expect_eq(s[n - 1], '}');
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FRAME, &B1, NULL, s, n), FG_SEAL_OK);
	cr_expect_null(fg_seal_append(&k, FG_SEAL_FRAME, &B1, "[1]", 3, &n));
	free(s);
}

Test(seal, any_change_of_content_key_or_place_breaks_the_seal)
{
	struct fg_seal_key k, other;
	const char text[] = "{\n\t\"cycle\":\t1,\n\t\"verdict\":\t\"rejected\"\n}\n";
	struct fg_seal_bind b;
	size_t n = 0;
	char *s, *p;

	key_of(&other, 4);
	s = sealed(&k, 3, FG_SEAL_FILE, text, &n);
	cr_expect_eq(fg_seal_check(&other, FG_SEAL_FILE, &B1, NULL, s, n), FG_SEAL_BAD);
	b = B1;
	b.run_id = "run2";
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FILE, &b, NULL, s, n), FG_SEAL_BAD);
	b = B1;
	b.step = "other";
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FILE, &b, NULL, s, n), FG_SEAL_BAD);
	p = strstr(s, "rejected");
	memcpy(p, "approved", 8);
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FILE, &B1, NULL, s, n), FG_SEAL_BAD);
	memcpy(p, "rejected", 8);
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FILE, &B1, NULL, s, n), FG_SEAL_OK);
	/* Cut, or with a member after the seal. */
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FILE, &B1, NULL, s, n - 1), FG_SEAL_BAD);
	s[n - 5] = s[n - 5] == '0' ? '1' : '0';
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FILE, &B1, NULL, s, n), FG_SEAL_BAD);
	free(s);
}

Test(seal, a_record_without_a_seal_member_is_unsealed)
{
	struct fg_seal_key k;
	const char text[] = "{\n\t\"cycle\":\t3,\n\t\"verdict\":\t\"approved\"\n}\n";
	const char fake[] = "{\n\t\"cycle\":\t3,\n\t\"seal\":\t\"00\"\n}\n";

	key_of(&k, 5);
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FILE, &B1, NULL, text, strlen(text)), FG_SEAL_UNSEALED);
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FILE, &B1, NULL, fake, strlen(fake)), FG_SEAL_BAD);
	cr_expect_str_eq(fg_seal_status_name(FG_SEAL_UNSEALED), "unsealed");
	cr_expect_str_eq(fg_seal_status_name(FG_SEAL_BAD), "bad_seal");
	cr_expect_str_eq(fg_seal_status_name(FG_SEAL_REPLAYED), "replayed");
	cr_expect_str_eq(fg_seal_status_name(FG_SEAL_OK), "sealed");
	cr_expect_str_eq(fg_seal_status_name(FG_SEAL_UNVERIFIED), "unverified");
	cr_expect(fg_seal_forged(FG_SEAL_UNSEALED) && fg_seal_forged(FG_SEAL_BAD) &&
		  fg_seal_forged(FG_SEAL_REPLAYED));
	cr_expect(!fg_seal_forged(FG_SEAL_OK) && !fg_seal_forged(FG_SEAL_UNVERIFIED));
}

Test(seal, a_sealed_record_under_another_name_or_cycle_is_replayed)
{
	struct fg_seal_key k;
	const char text[] = "{\n\t\"cycle\":\t1\n}\n";
	struct fg_seal_bind there = { "run1", "impl", "review_cycle_3.json", 3 };
	size_t n = 0;
	char *s;

	s = sealed(&k, 6, FG_SEAL_FILE, text, &n);
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FILE, &there, &B1, s, n), FG_SEAL_REPLAYED);
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FILE, &there, NULL, s, n), FG_SEAL_BAD);
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FILE, &B1, &B1, s, n), FG_SEAL_OK);
	free(s);
}

Test(seal, sealed_cycle_and_summary_files_read_back_with_the_usual_readers)
{
	struct fg_seal_key k;
	struct fg_cycle c, back;
	struct fg_summary s, sback;
	struct fg_seal_bind b = { "run1", "impl", "review_cycle_2.json", 2 };
	struct fg_seal_bind sb = { "run1", "impl", FG_SUMMARY_FILE, 0 };
	char err[256] = "", *text;
	size_t n;

	key_of(&k, 7);
	make_cycle(&c, 2, FG_VERDICT_REJECTED);
	cr_assert_eq(fg_cycle_write_sealed(tmp_dir, &c, &k, "impl"), 0);
	text = read_in(tmp_dir, "review_cycle_2.json", &n);
	fg_cycle_init(&back);
	cr_assert_eq(fg_cycle_parse(&back, text, n, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(back.j.feedback, c.j.feedback);
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FILE, &b, NULL, text, n), FG_SEAL_OK);
	free(text);
	summary_fill(&s, FG_STATE_APPROVED, 2, 3, "impl", "impl");
	s.task_key = fg_xstrdup("");
	s.run_id = fg_xstrdup("run1");
	cr_assert_eq(fg_summary_write_sealed(tmp_dir, &s, &k), 0);
	fg_summary_init(&sback);
	cr_assert_eq(fg_summary_read(tmp_dir, &sback, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(sback.state, FG_STATE_APPROVED);
	text = read_in(tmp_dir, FG_SUMMARY_FILE, &n);
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FILE, &sb, NULL, text, n), FG_SEAL_OK);
	free(text);
	fg_summary_release(&s);
	fg_summary_release(&sback);
	fg_cycle_release(&c);
	fg_cycle_release(&back);
}

Test(seal, a_sealed_frame_parses_and_its_seal_covers_the_frame_object)
{
	struct fg_seal_key k;
	struct fg_cycle c;
	struct fg_frame f;
	struct fg_seal_bind b = { "run1", "impl", "review_cycle_1.json", 1 };
	char err[256] = "";
	size_t len = 0;
	char *line;

	key_of(&k, 8);
	make_cycle(&c, 1, FG_VERDICT_APPROVED);
	line = fg_frame_cycle_line(&c, "impl", &k, &len);
	cr_assert_not_null(line);
	cr_assert_eq(line[len - 1], '\n');
	fg_frame_init(&f);
	cr_assert_eq(fg_frame_parse(&f, line, len - 1, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(f.cycle.j.verdict, FG_VERDICT_APPROVED);
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FRAME, &b, NULL, line + FG_FRAME_PREFIX_LEN,
				   len - 1 - FG_FRAME_PREFIX_LEN),
		     FG_SEAL_OK);
	cr_expect_eq(fg_seal_check(&k, FG_SEAL_FILE, &b, NULL, line + FG_FRAME_PREFIX_LEN,
				   len - 1 - FG_FRAME_PREFIX_LEN),
		     FG_SEAL_BAD);
	fg_frame_release(&f);
	fg_cycle_release(&c);
	free(line);
}
