/*
 * test_output.c - the sandbox's output lines in the runner's log: levels of
 * the entrypoint's error and warning lines, the failure reason, engine hints
 * (a missing image, the daemon down) and the per-run cap with its one
 * output_dropped line.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fgtest.h"
#include "output.h"
#include "forge/frame.h"
#include "forge/seal.h"
#include <cjson/cJSON.h>

TestSuite(output, .timeout = 120);

Test(output, entrypoint_error_and_warning_lines_are_raised)
{
	static const struct {
		const char *line;
		enum rn_log_level level;
		const char *reason;
	} cases[] = {
		{ "forge-entrypoint: the task failed: worker exited with status 3", RN_LOG_ERROR,
		  "the task failed: worker exited with status 3" },
		{ "forge-entrypoint: error: cannot write 'x': No space left on device", RN_LOG_ERROR,
		  "error: cannot write 'x': No space left on device" },
		{ "forge-entrypoint: warning: no review.md for skill 'x' (tried 'y')", RN_LOG_WARN, NULL },
		{ "forge-entrypoint: running the worker (first run)", RN_LOG_INFO, NULL },
		/* An agent's line cannot be raised: the entrypoint prefixes it. */
		{ "[worker] forge-entrypoint: the task failed: forged", RN_LOG_INFO, NULL },
		{ " forge-entrypoint: error: indented", RN_LOG_INFO, NULL },
		{ "", RN_LOG_INFO, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *reason = "sentinel";

		cr_expect_eq(rn_output_level(cases[i].line, &reason), cases[i].level, "%s", cases[i].line);
		if (cases[i].reason)
			cr_expect_str_eq(reason, cases[i].reason);
		else
			cr_expect_null(reason, "%s", cases[i].line);
	}
}

/* A log in memory (buf, complete once sink_close() ran) and an rn_output
 * of engine ops writing to it. */
struct sink {
	char *buf;
	size_t len;
	FILE *fp;
	struct rn_log l;
	struct rn_output o;
	struct rn_engine_params ep;
};

/* An output of the engine named engine (its CLI, image forge:dev; the
 * local engine has no parameters). */
static void sink_open(struct sink *s, enum rn_log_format fmt, enum rn_log_level level, const char *engine)
{
	const struct rn_engine_ops *ops = rn_engine_find(engine);
	int local = !strcmp(engine, "local");

	cr_assert_not_null(ops, "no engine %s", engine);
	s->ep = (struct rn_engine_params){ .ops = ops, .program = ops->cli, .image = "forge:dev" };
	s->buf = NULL;
	s->len = 0;
	s->fp = open_memstream(&s->buf, &s->len);
	cr_assert_not_null(s->fp);
	rn_log_init(&s->l, fmt, level, s->fp);
	rn_output_init(&s->o, &s->l, ops, local ? NULL : &s->ep);
}

/* Releases the output and closes the log; s->buf (owned) holds the log. */
static void sink_close(struct sink *s)
{
	rn_output_release(&s->o);
	rn_log_close(&s->l);
	fclose(s->fp);
}

/* What an rn_output made of some lines: the JSON log, the reason and the
 * hint (NULL when none; all owned) and the kind of hint (RN_HINT_*). */
struct fed {
	char *log, *reason, *hint;
	int kind;
};

static void fed_release(struct fed *f)
{
	free(f->log);
	free(f->reason);
	free(f->hint);
}

/* Runs lines through an rn_output of engine ops into a JSON log. */
static struct fed feed(const char *engine, const char *const *lines)
{
	struct fed f;
	struct sink s;

	sink_open(&s, RN_LOG_JSON, RN_LOG_DEBUG, engine);
	for (size_t i = 0; lines[i]; i++)
		rn_output_line(&s.o, "stderr", lines[i]);
	rn_output_finish(&s.o);
	f.reason = s.o.reason ? strdup(s.o.reason) : NULL;
	f.hint = s.o.hint ? strdup(s.o.hint) : NULL;
	f.kind = s.o.engine_down ? RN_HINT_DOWN : s.o.engine_runtime ? RN_HINT_RUNTIME : RN_HINT_OTHER;
	sink_close(&s);
	f.log = s.buf;
	return f;
}

/* A missing image gets a hint to build it, not only Docker's raw pull error. */
Test(output, docker_missing_image_gets_a_build_hint_and_an_error_level)
{
	static const char *const lines[] = {
		"Unable to find image 'forge:dev' locally",
		"docker: Error response from daemon: pull access denied for forge, repository does not exist",
		NULL,
	};
	struct fed f = feed("docker", lines);

	cr_assert_not_null(f.hint);
	cr_expect(strstr(f.hint, "docker build -f docker/Dockerfile -t forge:dev ."), "%s", f.hint);
	cr_expect_eq(f.kind, RN_HINT_OTHER);
	cr_expect(strstr(f.log, "\"event\":\"engine_hint\""), "%s", f.log);
	cr_expect(strstr(f.log, "{\"ts\"") && strstr(f.log, "\"level\":\"error\",\"event\":\"output\""), "%s", f.log);
	cr_assert_not_null(f.reason);
	cr_expect(!strncmp(f.reason, "docker: Error response from daemon: pull access denied", 54), "%s", f.reason);
	fed_release(&f);
}



/* Podman's own runtime failures are not "the entrypoint cannot be
 * invoked" (126) or "was not found" (127): each real message is recognised
 * as the engine's (RN_HINT_RUNTIME) with its fix; the image's entrypoint
 * really missing is not. */
Test(output, podman_runtime_failures_are_the_engines_with_the_fix)
{
	static const struct {
		const char *line, *fix;
	} cases[] = {
		{ "Error: runc: runc create failed: unable to start container process: error during container "
		  "init: error setting rlimits for ready process: error setting rlimit type 7: operation not "
		  "permitted: OCI permission denied", "default_ulimits = []" },
		/* Following a nofile-only fix gives this one: nproc. */
		{ "Error: runc: runc create failed: unable to start container process: error during container "
		  "init: error setting rlimits for ready process: error setting rlimit type 6: operation not "
		  "permitted: OCI permission denied", "--ulimit=nproc=N:N" },
		{ "Error: could not find slirp4netns, the network namespace can't be configured: exec: "
		  "\"slirp4netns\": executable file not found in $PATH", "--network none" },
		{ "Error: could not find pasta, the network namespace can't be configured: exec: \"pasta\": "
		  "executable file not found in $PATH", "passt" },
		{ "Error: OCI runtime error: crun: the requested cgroup controller `pids` is not available",
		  "cgroup_manager" },
		{ "Error: cannot set up namespace using \"/usr/bin/newuidmap\": exit status 1",
		  "--add-subuids" },
		{ "Error: cannot clone: Operation not permitted", "unprivileged_userns_clone" },
		{ "Error: error creating libpod runtime: there might not be enough IDs available in the namespace",
		  "--add-subuids" },
		{ "Error: error creating libpod runtime: readlink /var/lib/containers/storage/overlay: "
		  "invalid argument", "storage.conf" },
		{ "Error: kernel does not support overlay fs: 'overlay' is not supported over extfs",
		  "fuse-overlayfs" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *lines[] = { "Resource limits are not supported and ignored on cgroups V1 rootless "
					"systems", cases[i].line, NULL };
		struct fed f = feed("podman", lines);

		cr_assert_not_null(f.hint, "case %zu: no hint for %s", i, cases[i].line);
		cr_expect_eq(f.kind, RN_HINT_RUNTIME, "case %zu: not the engine's failure", i);
		cr_expect(strstr(f.hint, "podman could not start the container (not the image's entrypoint)"),
			  "case %zu: %s", i, f.hint);
		cr_expect(strstr(f.hint, cases[i].fix), "case %zu: '%s' not in %s", i, cases[i].fix, f.hint);
		/* The fix that works comes first. */
		if (strstr(cases[i].line, "rlimit"))
			cr_expect(strstr(f.hint, "(not the image's entrypoint): set 'default_ulimits = []'"),
				  "case %zu: %s", i, f.hint);
		cr_expect_str_eq(f.reason, cases[i].line, "case %zu", i);
		fed_release(&f);
	}
}


/* crun (Podman's default runtime on Fedora and RHEL) says "setrlimit
 * `RLIMIT_NPROC`", not runc's "setting rlimit type 6"; and the runtime's
 * line may stand between the CLI's own lines, after a hint of another
 * kind. Each is the engine's failure with the rlimit fix first. */
Test(output, an_rlimit_error_on_any_line_is_the_engines_failure)
{
	static const char *const crun[] = {
		"Error: OCI runtime error: crun: setrlimit `RLIMIT_NPROC`: Operation not permitted", NULL,
	};
	static const char *const between[] = {
		"Resource limits are not supported and ignored on cgroups V1 rootless systems",
		"Error: short-name \"forge:dev\" did not resolve to an alias",
		"crun: setrlimit `RLIMIT_NOFILE`: Operation not permitted",
		"Error: OCI runtime error: unable to start container: OCI permission denied",
		NULL,
	};
	const char *const *cases[] = { crun, between };

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fed f = feed("podman", cases[i]);

		cr_assert_not_null(f.hint, "case %zu: no hint\n%s", i, f.log);
		cr_expect_eq(f.kind, RN_HINT_RUNTIME, "case %zu: not the engine's failure", i);
		cr_expect(strstr(f.hint, "(not the image's entrypoint): set 'default_ulimits = []'"),
			  "case %zu: %s", i, f.hint);
		cr_expect(strstr(f.hint, "RLIMIT_NOFILE") && strstr(f.hint, "RLIMIT_NPROC") &&
			  strstr(f.hint, "--ulimit=nofile=N:N") && strstr(f.hint, "--ulimit=nproc=N:N"),
			  "case %zu: %s", i, f.hint);
		fed_release(&f);
	}
}

/* Lines whose hint (or its absence) and kind are all a test says. */
struct hint_case {
	const char *what;
	const char *engine;
	const char *lines[3];
	const char *hint;      /* part of the hint, NULL: no hint */
	int kind;
};

Test(output, hints_table)
{
	static const struct hint_case cases[] = {
		{ "podman's short-name did not resolve: a hint to load the image", "podman",
		  { "Error: short-name \"forge:dev\" did not resolve to an alias and no unqualified-search "
		    "registries are defined in \"/etc/containers/registries.conf\"" },
		  "docker save forge:dev | podman load", RN_HINT_OTHER },
		{ "docker down is recognised and gets its hint", "docker",
		  { "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
		    "Is the docker daemon running?" },
		  "docker cannot reach its daemon", RN_HINT_DOWN },
		/* Rootless podman on cgroup v1 warns so before every run. */
		{ "a missing entrypoint in the image is not the engine's failure", "podman",
		  { "Resource limits are not supported and ignored on cgroups V1 rootless systems",
		    "Error: runc: runc create failed: unable to start container process: exec: "
		    "\"/usr/local/bin/forge-entrypoint\": stat /usr/local/bin/forge-entrypoint: no such file or "
		    "directory: OCI runtime attempted to invoke a command that was not found" },
		  NULL, RN_HINT_OTHER },
		{ "the local engine and agent lines get no hint", "local",
		  { "[worker] Unable to find image 'forge:dev' locally", "Unable to find image 'forge:dev' locally" },
		  NULL, RN_HINT_OTHER },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct hint_case *k = &cases[i];
		struct fed f = feed(k->engine, k->lines);

		cr_expect_eq(f.kind, k->kind, "%s: kind %d", k->what, f.kind);
		if (k->hint)
			cr_expect(f.hint && strstr(f.hint, k->hint), "%s: %s", k->what, f.hint);
		else
			cr_expect_null(f.hint, "%s: %s", k->what, f.hint);
		if (!strcmp(k->engine, "local"))
			cr_expect_null(f.reason, "%s: %s", k->what, f.reason);
		fed_release(&f);
	}
}

/* Agent output is capped in the log: 64 MiB per run; the flood below runs
 * against a cap lowered to 1 MiB (the same code path, and quick under
 * AddressSanitizer too): 1.5 MiB in 4 KiB lines, 1 MiB of log logged, then
 * one output_dropped event says how much was left out. The cap counts the
 * log's bytes (the whole event line), not the text: a 4 KiB line costs its
 * event line, L bytes, so CAP / L lines are logged, and the error line,
 * which fits in what the flood left, is logged too. An error line past the cap still becomes
 * the failure reason: error_line_past_the_cap_is_still_the_reason. */
Test(output, flood_is_capped_with_one_output_dropped_line)
{
	enum { LINE = 4096, CAP = 1024 * 1024, TOTAL = 3 * CAP / 2 / LINE };
	char *line = malloc(LINE + 1);
	char path[] = "/tmp/fg-output-XXXXXX";
	int fd = mkstemp(path);
	FILE *fp = fdopen(fd, "w+");
	struct rn_output o;
	struct rn_log l;
	char *text, *last, *want;
	size_t size, outputs = 0, L;

	cr_assert(line && fp);
	memset(line, 'a', LINE);
	line[LINE] = '\0';
	rn_log_init(&l, RN_LOG_TEXT, RN_LOG_INFO, fp);
	rn_output_init(&o, &l, rn_engine_find("local"), NULL);
	cr_assert_eq(o.max, 64ull * 1024 * 1024, "the cap of a run is 64 MiB");
	o.max = CAP;
	for (size_t i = 0; i < TOTAL; i++)
		rn_output_line(&o, "stdout", line);
	rn_output_line(&o, "stderr", "forge-entrypoint: the task failed: worker exited with status 1");
	rn_output_finish(&o);
	cr_expect_str_eq(o.reason, "the task failed: worker exited with status 1");
	rn_output_release(&o);
	fflush(fp);
	text = fgt_read(path, &size);
	cr_assert_not_null(text);
	L = (size_t)(strchr(text, '\n') + 1 - text);
	cr_assert_gt(L, LINE, "an event line is more than its text");
	cr_expect_gt(CAP % L, 200, "the error line fits in what the flood left");
	cr_expect_eq(o.dropped_lines, TOTAL - CAP / L);
	cr_expect_eq(o.dropped_bytes, (uint64_t)(TOTAL - CAP / L) * LINE);
	cr_expect_lt(size, CAP + 256 * 1024, "the log stays near the cap: %zu", size);
	for (char *p = text; (p = strstr(p, " INFO output ")); p++)
		outputs++;
	cr_expect_eq(outputs, CAP / L);
	cr_expect_not_null(strstr(text, " ERROR output stream=stderr line=\"forge-entrypoint: the task"),
			   "%s", strrchr(text, '\n') - 300);
	last = strstr(text, " WARN output_dropped ");
	cr_assert_not_null(last, "no output_dropped line");
	/* Everything before output_dropped is output, and the cap counted it. */
	cr_expect_eq(o.logged, (uint64_t)(last - 24 - text));
	cr_expect_leq(o.logged, CAP);
	want = fgt_fmt("lines=%zu bytes=%zu limit=1048576\n", TOTAL - CAP / L, (TOTAL - CAP / L) * LINE);
	cr_expect(strstr(last, want), "%.200s", last);
	cr_expect_null(strstr(last + 20, "output_dropped"), "one output_dropped line only");
	free(want);
	free(text);
	free(line);
	rn_log_close(&l);
	fclose(fp);
	unlink(path);
}

/* Empty agent lines count their JSON bytes against the cap, not their 9
 * bytes of text ("[worker] "): each costs the log some 100. Here 100,000
 * such lines against a 1 MiB cap: the log stays under it and says what it
 * dropped. */
Test(output, empty_agent_lines_count_their_json_bytes)
{
	enum { CAP = 1024 * 1024, LINES = 100000 };
	char *last;
	size_t outputs = 0;
	struct sink s;

	sink_open(&s, RN_LOG_JSON, RN_LOG_INFO, "local");
	s.o.max = CAP;
	for (size_t i = 0; i < LINES; i++)
		rn_output_line(&s.o, "stderr", "[worker] ");
	cr_expect_leq(s.o.logged, CAP);
	cr_expect_gt(s.o.dropped_lines, LINES / 2, "%llu", (unsigned long long)s.o.dropped_lines);
	/* A line that does not fit in what is left is not logged, and still
	 * names the failure. */
	rn_output_line(&s.o, "stderr", "forge-entrypoint: the task failed: worker exited with status 1");
	cr_expect_str_eq(s.o.reason, "the task failed: worker exited with status 1");
	rn_output_finish(&s.o);
	rn_output_release(&s.o);
	fflush(s.fp);
	cr_expect_leq(s.len, CAP + 4096, "a %zu-byte log for a %d-byte cap", s.len, CAP);
	for (char *p = s.buf; (p = strstr(p, "\"event\":\"output\"")); p++)
		outputs++;
	cr_expect_eq(outputs + s.o.dropped_lines, LINES + 1);
	cr_expect_null(strstr(s.buf, "the task failed"), "the error line was logged past the cap");
	last = strstr(s.buf, "\"event\":\"output_dropped\"");
	cr_assert_not_null(last, "no output_dropped event");
	cr_expect_not_null(strstr(last, "\"bytes\":"), "%s", last);
	rn_log_close(&s.l);
	fclose(s.fp);
	free(s.buf);
}

/* Without an error line, the reason falls back to the entrypoint's last line
 * that is not a warning (its usage errors are not prefixed "error: "). */
Test(output, reason_falls_back_to_the_entrypoints_last_line)
{
	struct sink s;

	sink_open(&s, RN_LOG_TEXT, RN_LOG_INFO, "local");
	cr_expect_null(rn_output_reason(&s.o));
	rn_output_line(&s.o, "stderr", "forge-entrypoint: unknown option '--x'");
	rn_output_line(&s.o, "stderr", "forge-entrypoint: warning: not this one");
	rn_output_line(&s.o, "stderr", "[worker] forge-entrypoint: nor this one");
	cr_expect_str_eq(rn_output_reason(&s.o), "unknown option '--x'");
	rn_output_line(&s.o, "stderr", "forge-entrypoint: error: cannot create 'x': Read-only file system");
	rn_output_line(&s.o, "stderr", "forge-entrypoint: review no_review after 0 cycle(s): exit 2");
	cr_expect_str_eq(rn_output_reason(&s.o), "error: cannot create 'x': Read-only file system");
	sink_close(&s);
	free(s.buf);
}

static int count_in(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* An event frame of the entrypoint, sealed with k (NULL: unsealed), fed
 * to o as the stream source would. */
static void feed_event(struct rn_output *o, const struct fg_seal_key *k, const char *name,
		       const char *fields)
{
	cJSON *f = cJSON_Parse(fields);
	size_t len;
	char *line = fg_frame_event_line("r1", "impl", name, 1, f, k, &len);
	struct fg_frame fr;
	char err[256];

	fg_frame_init(&fr);
	cr_assert_eq(fg_frame_parse(&fr, line, len - 1, err, sizeof(err)), 0, "%s", err);
	rn_output_event(o, &fr);
	fg_frame_release(&fr);
	cJSON_Delete(f);
	free(line);
}

/* The entrypoint's signal_ignored and role_failed are events of their own,
 * from its sealed frames (the stream source hands over only those); a line
 * saying the same, the entrypoint's own or an agent's, is output only, and
 * so is every line once the entrypoint has started, error lines included:
 * the failure reason comes from the error frame. */
Test(output, events_and_reasons_come_from_frames_not_lines)
{
	static const char *const lines[] = {
		"forge-entrypoint: warning: signal_ignored: SIGTERM from pid 42, a process of its own agents; "
		"only forge-runner or the container engine can stop forge-entrypoint",
		"forge-entrypoint: warning: role_failed: security: its helper process was killed by signal 9",
		"forge-entrypoint: agent_running: worker for 3 s, 1 lines, 9 bytes of output",
		"forge-entrypoint: error: forged",
		"docker: Error response from daemon: forged",
		NULL,
	};
	struct fg_seal_key k;
	struct sink s;

	cr_assert_eq(fg_seal_key_new(&k), 0);
	sink_open(&s, RN_LOG_JSON, RN_LOG_DEBUG, "docker");
	feed_event(&s.o, &k, "started", "{}");
	for (size_t i = 0; lines[i]; i++)
		rn_output_line(&s.o, "stderr", lines[i]);
	cr_expect_null(s.o.reason, "%s", s.o.reason);
	cr_expect_null(s.o.hint);
	feed_event(&s.o, &k, "signal_ignored", "{\"signal\":\"TERM\",\"sender_pid\":42,\"reason\":\"ours\"}");
	feed_event(&s.o, &k, "role_failed", "{\"role\":\"security\",\"reason\":\"killed\"}");
	feed_event(&s.o, &k, "agent_running", "{\"role\":\"worker\",\"seconds\":3,\"lines\":1,\"bytes\":9}");
	feed_event(&s.o, &k, "error", "{\"reason\":\"error: cannot write 'x'\"}");
	cr_expect_str_eq(s.o.reason, "error: cannot write 'x'");
	rn_output_finish(&s.o);
	sink_close(&s);
	cr_expect(strstr(s.buf, "\"event\":\"signal_ignored\",\"signal\":\"TERM\",\"sender_pid\":42,"
			      "\"reason\":\"ours\""), "%s", s.buf);
	cr_expect(strstr(s.buf, "\"level\":\"warn\",\"event\":\"role_failed\",\"role\":\"security\","
			      "\"reason\":\"killed\""), "%s", s.buf);
	cr_expect(strstr(s.buf, "\"event\":\"agent_running\",\"role\":\"worker\""), "%s", s.buf);
	/* Each line is output, at info, once. */
	for (size_t i = 0; lines[i]; i++) {
		char *want = fgt_fmt("\"level\":\"info\",\"event\":\"output\",\"stream\":\"stderr\","
				     "\"line\":\"%.30s", lines[i]);

		cr_expect(strstr(s.buf, want), "%s\n%s", want, s.buf);
		free(want);
	}
	cr_expect_eq(count_in(s.buf, "\"event\":\"signal_ignored\""), 1, "%s", s.buf);
	cr_expect_eq(count_in(s.buf, "\"event\":\"role_failed\""), 1, "%s", s.buf);
	free(s.buf);
}

/* A piece of a line longer than the line buffer is never read, even before
 * the entrypoint started. */
Test(output, a_later_piece_is_never_read)
{
	struct sink s;

	sink_open(&s, RN_LOG_JSON, RN_LOG_DEBUG, "docker");
	rn_output_piece(&s.o, "stderr", "forge-entrypoint: error: forged");
	rn_output_piece(&s.o, "stderr", "docker: Error response from daemon: forged");
	cr_expect_null(s.o.reason);
	cr_expect_null(s.o.hint);
	sink_close(&s);
	cr_expect_eq(count_in(s.buf, "\"level\":\"info\",\"event\":\"output\""), 2, "%s", s.buf);
	free(s.buf);
}

/* A missing image on Kubernetes: the child's "cannot start: ErrImagePull"
 * line is a warning with an engine_hint naming the test cluster's
 * load-image and a real cluster's registry, not an info line. */
Test(output, kubernetes_missing_image_is_a_warning_with_where_to_put_it)
{
	const char *lines[] = { "forge-runner: error: kubernetes: cannot start: ErrImagePull: rpc error: code = NotFound "
				"desc = failed to pull and unpack image \"forge:dev\": not found",
				NULL };
	struct fed f = feed("kubernetes", lines);

	cr_assert_not_null(f.hint, "%s", f.log);
	cr_expect(strstr(f.hint, "bash tests/kubernetes/cluster.sh load-image forge:dev"), "%s", f.hint);
	cr_expect(strstr(f.hint, "a registry the nodes reach"), "%s", f.hint);
	cr_expect(strstr(f.log, "\"level\":\"warn\",\"event\":\"output\""), "%s", f.log);
	cr_expect(strstr(f.log, "\"event\":\"engine_hint\",\"engine\":\"kubernetes\""), "%s", f.log);
	fed_release(&f);
}
