/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by the libFuzzer targets of the /proc parsers (tests/fuzz/fuzz-*.c,
 * built and run by tests/fuzz/run). A target is one small file:
 *
 *     #include "fuzz.h"
 *     FUZZ_TARGET(text, len) { ...call the parser on TEXT, FUZZ_ASSERT what it promises... }
 *
 * TEXT is the input copied into a buffer of exactly LEN + 1 bytes ending in a
 * NUL (the parsers take C strings), so AddressSanitizer catches a read one
 * byte past the end. A broken promise aborts with a message, which libFuzzer
 * reports as a crash and saves as a reproducer.
 */
#ifndef REVOKE_FUZZ_H
#define REVOKE_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define FUZZ_ASSERT(cond, ...)                                                                     \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: FUZZ_ASSERT(%s) failed: ", __FILE__, __LINE__,     \
				#cond);                                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* A parser's out-parameter must be untouched when it fails: fill it with this
 * byte before the call and compare afterwards. */
#define FUZZ_CANARY 0xa5

static inline int fuzz_untouched(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i] != FUZZ_CANARY)
			return 0;
	return 1;
}

#define FUZZ_TARGET(text, len)                                                                     \
	static void fuzz_one(const char *text, size_t len);                                        \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                              \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)                               \
	{                                                                                          \
		char *copy = malloc(size + 1);                                                     \
		if (!copy)                                                                         \
			return 0;                                                                  \
		memcpy(copy, data, size);                                                          \
		copy[size] = '\0';                                                                 \
		fuzz_one(copy, size);                                                              \
		free(copy);                                                                        \
		return 0;                                                                          \
	}                                                                                          \
	static void fuzz_one(const char *text, size_t len)

#endif
