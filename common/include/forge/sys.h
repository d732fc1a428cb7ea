/*
 * sys.h - process start-up shared by the two programs' main().
 *
 * Protocol: main() calls fg_main_start() first, before anything opens a
 * file (it sanitizes fds 0-2 and ignores SIGPIPE), then hands over to the
 * program.
 *
 * Tier: base (util.h). Uses nothing of common/ (libsodium for the random bytes).
 */
#ifndef FORGE_SYS_H
#define FORGE_SYS_H

#include <stddef.h>

/*
 * Makes sure file descriptors 0, 1 and 2 are open: each closed one is
 * reopened on /dev/null (0 for reading, 1 and 2 for writing), so that a
 * later open() cannot land on 0-2 and have diagnostics or a child's stdin
 * go to a file the program is writing. Open descriptors are left alone.
 * Returns 0, or a negative errno when /dev/null cannot be opened onto the
 * missing descriptor (the caller should exit; nothing was printed).
 */
int fg_sanitize_stdio(void);

/* The start of both programs' main(): fg_sanitize_stdio(), then SIGPIPE
 * ignored (a closed pipe is a write error, not death). 0, or what
 * fg_sanitize_stdio() returned (the caller exits with FG_EXIT_RUNTIME). */
int fg_main_start(void);

/*
 * Fills all n bytes of buf from the kernel's random source, through
 * libsodium (randombytes_buf(): getrandom(2), or /dev/urandom on a kernel
 * without it). Returns 0, or -EIO when libsodium cannot start (no random
 * source); buf is then unspecified. For names nobody may guess (temporary
 * files, run ids) and for the seal keys (seal.h).
 */
int fg_random_bytes(void *buf, size_t n);

#endif
