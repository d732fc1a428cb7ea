/*
 * fuzz_cmdline.c - the agent command splitter must accept or refuse any
 * string without crashing; on success every word is non-NULL, the vector is
 * NULL-terminated, and placeholder expansion keeps the word count.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forge/alloc.h"
#include "forge/cmdline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fg_placeholder ph[] = {
		{ "workspace", "/w s" }, { "cycle", "2" }, { "prompt_file", "it's \"q\"" },
	};
	struct fg_strvec v;
	char err[128] = "";
	char *cmd = fg_xstrndup((const char *)data, size);
	size_t n;

	fg_strvec_init(&v);
	if (fg_cmdline_split(cmd, &v, err, sizeof(err)) == 0) {
		if (!v.v || v.v[v.n] != NULL)
			abort();
		n = v.n;
		fg_cmdline_expand(&v, ph, 3);
		if (v.n != n)
			abort();
		for (size_t i = 0; i < v.n; i++)
			if (!v.v[i])
				abort();
	} else if (!err[0] || v.n != 0) {
		abort();
	}
	fg_strvec_release(&v);
	free(cmd);
	return 0;
}
