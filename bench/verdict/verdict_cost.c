/*
 * verdict_cost.c - forge-bench-verdict [DIR]: what reading a verdict costs
 * per review. Each file of DIR (default: the verdict fixtures, realistic
 * reviewer outputs) and one synthetic 1 MiB review (prose, fences, quotes
 * and a findings table, repeated) is parsed by fg_verdict_parse() over and
 * over for at least 0.2 s, 9 times; the median of the nine per-parse times
 * is printed per file, and their sum is the cost of one review of each. One
 * JSON object on standard output: {"files": [{"file", "bytes", "ns"}],
 * "total_ns"}. Exit 1 when DIR cannot be read.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "forge/alloc.h"
#include "forge/buf.h"
#include "forge/fsutil.h"
#include "forge/verdict.h"

#ifndef FB_VERDICT_DIR
#define FB_VERDICT_DIR "tests/fixtures/verdict"
#endif
#define REPS 9

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median over REPS of the time of one parse, in nanoseconds. */
static double cost(const char *t, size_t n)
{
	struct fg_judgement v;
	double per[REPS];

	fg_judgement_init(&v);
	for (int r = 0; r < REPS; r++) {
		double t0 = now(), el;
		long k = 0;

		do {
			fg_verdict_parse(&v, t, n);
			k++;
			el = now() - t0;
		} while (el < 0.2);
		per[r] = el / (double)k * 1e9;
	}
	fg_judgement_reset(&v);
	qsort(per, REPS, sizeof(per[0]), cmp);
	return per[REPS / 2];
}

static char *synthetic(size_t *n)
{
	static const char unit[] =
		"The change reads the file once; the tests in `tests/a.c` pass.\n\n"
		"```\n$ make test\n100% tests passed\n```\n\n"
		"> the worker wrote: all done\n\n"
		"| # | Severity | Finding | Location | Evidence |\n|---|---|---|---|---|\n"
		"| 1 | NOTE | naming | a.c:3 | - |\n\n";
	struct fg_buf b;

	fg_buf_init(&b, 2 * 1024 * 1024);
	while (b.len < 1024 * 1024)
		fg_buf_adds(&b, unit);
	fg_buf_adds(&b, "APPROVED\n");
	return fg_buf_detach(&b, n);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : FB_VERDICT_DIR;
	struct dirent **names;
	int nn = scandir(dir, &names, NULL, alphasort);
	double total = 0, ns;
	size_t n;
	char *t;

	if (nn < 0) {
		fprintf(stderr, "forge-bench-verdict: cannot read '%s'\n", dir);
		return 1;
	}
	printf("{\"files\": [");
	for (int i = 0; i < nn; i++) {
		char *path = fg_xasprintf("%s/%s", dir, names[i]->d_name);

		struct fg_buf b;

		fg_buf_init(&b, 16 * 1024 * 1024);
		if (names[i]->d_name[0] != '.' &&
		    !fg_read_file_at(AT_FDCWD, path, 16 * 1024 * 1024, FG_READ_FOLLOW, &b, NULL)) {
			ns = cost(b.data, b.len);
			total += ns;
			printf("{\"file\": \"%s\", \"bytes\": %zu, \"ns\": %.0f}, ", names[i]->d_name, b.len, ns);
		}
		fg_buf_release(&b);
		free(path);
		free(names[i]);
	}
	free(names);
	t = synthetic(&n);
	ns = cost(t, n);
	total += ns;
	printf("{\"file\": \"synthetic-1MiB\", \"bytes\": %zu, \"ns\": %.0f}], \"total_ns\": %.0f}\n", n, ns,
	       total);
	free(t);
	return 0;
}
