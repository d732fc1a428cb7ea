/*
 * test_isolation.c - the isolation object: written, read back, refused when
 * it is not one, carried by the summary.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/isolation.h"
#include "forge/summary.h"

TestSuite(isolation, .timeout = 30);

static void check_round_trip(const struct fg_isolation *in)
{
	cJSON *o = fg_isolation_to_cjson(in);
	struct fg_isolation out;

	memset(&out, 0, sizeof(out));
	cr_assert_eq(fg_isolation_from_cjson(&out, o), 0);
	cr_assert(out.known);
	cr_assert_eq(out.landlock, in->landlock);
	cr_assert_eq(out.abi, in->abi);
	cr_assert_eq(out.scoped, in->scoped);
	cr_assert_eq(out.agent_uid, in->agent_uid);
	cr_assert_eq(out.root_dropped, in->root_dropped);
	cr_assert_str_eq(out.reason, in->landlock ? "" : in->reason);
	cJSON_Delete(o);
}

Test(isolation, landlock_and_none_read_back_as_written)
{
	struct fg_isolation ll = { .known = true, .landlock = true, .abi = 7,
				   .scoped = FG_SCOPE_SIGNAL | FG_SCOPE_ABSTRACT_UNIX_SOCKET,
				   .agent_uid = 10001, .root_dropped = true };
	struct fg_isolation v5 = { .known = true, .landlock = true, .abi = 5, .agent_uid = 0 };
	struct fg_isolation none = { .known = true, .abi = 0, .agent_uid = 1000 };
	char names[64];

	snprintf(none.reason, sizeof(none.reason), "the kernel has no Landlock system calls");
	check_round_trip(&ll);
	check_round_trip(&v5);
	check_round_trip(&none);
	fg_isolation_scope_names(ll.scoped, names, sizeof(names));
	cr_assert_str_eq(names, "signal,abstract_unix_socket");
	fg_isolation_scope_names(0, names, sizeof(names));
	cr_assert_str_eq(names, "");
}

Test(isolation, event_frame_fields_read_back_as_written)
{
	struct fg_isolation in = { .known = true, .landlock = true, .abi = 7,
				   .scoped = FG_SCOPE_SIGNAL | FG_SCOPE_ABSTRACT_UNIX_SOCKET,
				   .agent_uid = 4242, .root_dropped = true }, out;
	cJSON *f = fg_isolation_to_fields(&in), *v;

	cJSON_ArrayForEach(v, f)
		cr_assert(cJSON_IsString(v) || cJSON_IsNumber(v), "field '%s' is neither", v->string);
	cr_assert_eq(fg_isolation_from_fields(&out, f), 0);
	cr_assert_eq(out.scoped, in.scoped);
	cr_assert(out.root_dropped && out.landlock);
	cr_assert_eq(out.abi, 7);
	cr_assert_eq(out.agent_uid, 4242);
	cJSON_Delete(f);
}

Test(isolation, what_is_not_an_isolation_object_is_refused_and_left_untouched)
{
	static const char *const bad[] = {
		"null", "[]", "{}", "{\"mechanism\":\"seccomp\",\"abi\":1}", "{\"mechanism\":\"landlock\"}",
		"{\"mechanism\":\"landlock\",\"abi\":-1}", "{\"mechanism\":\"landlock\",\"abi\":\"7\"}",
		"{\"mechanism\":7,\"abi\":7}", "{\"mechanism\":\"none\",\"abi\":1e308}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cJSON *o = cJSON_Parse(bad[i]);
		struct fg_isolation iso = { .abi = 42 };

		cr_assert_eq(fg_isolation_from_cjson(&iso, o), -EINVAL, "%s", bad[i]);
		cr_assert_eq(iso.abi, 42, "%s changed the output", bad[i]);
		cr_assert_not(iso.known);
		cJSON_Delete(o);
	}
}

Test(isolation, unknown_scopes_and_a_bad_uid_are_ignored)
{
	cJSON *o = cJSON_Parse("{\"mechanism\":\"landlock\",\"abi\":9,\"scoped\":[\"signal\",\"future\",3],"
			       "\"agent_uid\":-5}");
	struct fg_isolation iso;

	cr_assert_eq(fg_isolation_from_cjson(&iso, o), 0);
	cr_assert_eq(iso.scoped, FG_SCOPE_SIGNAL);
	cr_assert_eq(iso.agent_uid, -1);
	cJSON_Delete(o);
}

Test(isolation, the_summary_carries_it)
{
	struct fg_summary s, back;
	cJSON *o;
	char *text, err[256] = "";

	fg_summary_init(&s);
	fg_summary_init(&back);
	s.state = FG_STATE_APPROVED;
	s.step = strdup("impl");
	s.skill = strdup("impl");
	s.isolation = (struct fg_isolation){ .known = true, .landlock = true, .abi = 6,
					     .scoped = FG_SCOPE_SIGNAL, .agent_uid = 4242 };
	o = fg_summary_to_cjson(&s);
	text = cJSON_PrintUnformatted(o);
	cr_assert_not_null(strstr(text, "\"isolation\":{\"mechanism\":\"landlock\",\"abi\":6"), "%s", text);
	cr_assert_eq(fg_summary_parse(&back, text, strlen(text), err, sizeof(err)), 0, "%s", err);
	cr_assert(back.isolation.known);
	cr_assert_eq(back.isolation.abi, 6);
	cr_assert_eq(back.isolation.agent_uid, 4242);
	s.isolation.known = false;
	cJSON_Delete(o);
	cJSON_free(text);
	o = fg_summary_to_cjson(&s);
	cr_assert_null(cJSON_GetObjectItemCaseSensitive(o, "isolation"), "an unknown box is written");
	cJSON_Delete(o);
	fg_summary_release(&s);
	fg_summary_release(&back);
}
