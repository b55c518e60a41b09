/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rv_fdinfo_next_user_file: the "UserFiles:" list of an io_uring fdinfo,
 * iterated as lib/discover/hidden.c does: a 4096-byte name buffer, and an
 * error (-ENAMETOOLONG) skips to the next call. Each call must move on, or
 * that loop never ends. Then once more with a tiny buffer, stopping at the
 * first error.
 */
#include <errno.h>

#include "fuzz.h"

static void iterate(const char *text, size_t size, int stop_on_error)
{
	char *name = malloc(size); /* exactly SIZE: ASan sees an overrun */
	const char *cursor = NULL;
	size_t textlen = strlen(text);

	if (!name)
		return;
	for (size_t calls = 0;; calls++) {
		int r;

		FUZZ_ASSERT(calls <= textlen + 1,
			    "no end after %zu calls on %zu bytes (name buffer %zu): a caller "
			    "that skips an error, as lib/discover/hidden.c does, loops forever",
			    calls, textlen, size);
		r = rv_fdinfo_next_user_file(text, &cursor, name, size);
		if (r == 1)
			break;
		if (r < 0) {
			FUZZ_ASSERT(r == -ENAMETOOLONG, "unexpected error %d", r);
			if (stop_on_error)
				break;
			continue;
		}
		FUZZ_ASSERT(r == 0, "returned %d", r);
		FUZZ_ASSERT(memchr(name, '\0', size), "name not NUL-terminated");
		FUZZ_ASSERT(cursor >= text && cursor <= text + textlen, "cursor outside the text");
	}
	free(name);
}

FUZZ_TARGET(text, len)
{
	iterate(text, 4096, 0);
	iterate(text, 1 + len % 16, 1);
}
