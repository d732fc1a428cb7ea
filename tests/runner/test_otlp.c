/*
 * test_otlp.c - the OTLP export's configuration from the standard OTEL_*
 * variables (runner/otlp.c), table-driven.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "otlp.h"

TestSuite(otlp, .timeout = 30);

static const char *const VARS[] = {
	"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_PROTOCOL",
	"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
};

struct env_case {
	const char *set[4];        /* "NAME=value" */
	bool on;
	const char *url;           /* when on */
	const char *headers;       /* the decoded lines, when on */
	bool warned;
};

static const struct env_case CASES[] = {
	{ { NULL }, false, NULL, NULL, false },
	{ { "OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318" }, true, "http://c:4318/v1/traces", "", false },
	{ { "OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318/" }, true, "http://c:4318/v1/traces", "", false },
	{ { "OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://t/x" },
	  true, "http://t/x", "", false },
	{ { "OTEL_TRACES_EXPORTER=otlp" }, true, "http://localhost:4318/v1/traces", "", false },
	{ { "OTEL_TRACES_EXPORTER=none", "OTEL_EXPORTER_OTLP_ENDPOINT=http://c" }, false, NULL, NULL, false },
	{ { "OTEL_TRACES_EXPORTER=zipkin", "OTEL_EXPORTER_OTLP_ENDPOINT=http://c" }, false, NULL, NULL, true },
	{ { "OTEL_EXPORTER_OTLP_ENDPOINT=http://c", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc" }, false, NULL, NULL, true },
	{ { "OTEL_EXPORTER_OTLP_ENDPOINT=http://c", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf" },
	  true, "http://c/v1/traces", "", false },
	{ { "OTEL_EXPORTER_OTLP_ENDPOINT=http://c",
	    "OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20tok, x-team = a%2Cb" },
	  true, "http://c/v1/traces", "Authorization: Bearer tok\nx-team: a,b\n", false },
	{ { "OTEL_EXPORTER_OTLP_ENDPOINT=http://c", "OTEL_EXPORTER_OTLP_HEADERS=bad name=1,ok=%0d%0aX: y" },
	  true, "http://c/v1/traces", "", true },
	{ { "OTEL_EXPORTER_OTLP_ENDPOINT=http://c", "OTEL_EXPORTER_OTLP_TIMEOUT=abc" },
	  true, "http://c/v1/traces", "", true },
};

Test(otlp, configuration_from_the_standard_variables)
{
	for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
		const struct env_case *k = &CASES[i];
		struct rn_otlp_config c;

		for (size_t v = 0; v < sizeof(VARS) / sizeof(VARS[0]); v++)
			unsetenv(VARS[v]);
		for (size_t s = 0; s < 4 && k->set[s]; s++)
			putenv((char *)k->set[s]);
		rn_otlp_config_load(&c);
		cr_expect_eq(c.on, k->on, "case %zu: on", i);
		cr_expect_eq(c.warning[0] != '\0', k->warned, "case %zu: warning '%s'", i, c.warning);
		if (k->on) {
			cr_expect_str_eq(c.url, k->url, "case %zu", i);
			cr_expect_str_eq(c.headers.data ? c.headers.data : "", k->headers, "case %zu", i);
		}
		rn_otlp_config_release(&c);
	}
}

Test(otlp, a_value_decodes_without_control_characters)
{
	char out[16];

	cr_expect(rn_otlp_decode(" a%20b ", 7, out, sizeof(out)));
	cr_expect_str_eq(out, "a b");
	cr_expect(!rn_otlp_decode("a%0Ab", 5, out, sizeof(out)), "a line break is refused");
	cr_expect(!rn_otlp_decode("0123456789abcdefg", 17, out, sizeof(out)), "too long");
	cr_expect(rn_otlp_decode("%zz", 3, out, sizeof(out)));
	cr_expect_str_eq(out, "%zz", "not an escape: kept");
}

Test(otlp, finish_without_a_child_is_a_no_op)
{
	struct rn_otlp o = { .pid = 0, .in_fd = -1, .status_fd = -1 };
	char why[64] = "";

	cr_expect_eq(rn_otlp_finish(&o, 0, why, sizeof(why)), 0);
	rn_otlp_send(&o, "x", 1);
	cr_expect_eq(o.sent, 0);
}
