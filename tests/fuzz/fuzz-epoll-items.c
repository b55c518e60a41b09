/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rv_fdinfo_next_epoll_item: the "tfd:" lines of an epoll fdinfo, iterated as
 * lib/wake.c does (an error skips to the next call). Each call must move on;
 * a result is filled only on success.
 */
#include <errno.h>

#include "fuzz.h"

FUZZ_TARGET(text, len)
{
	const char *cursor = NULL;

	for (size_t calls = 0;; calls++) {
		struct rv_epoll_item it;
		const char *before = cursor;
		int r;

		FUZZ_ASSERT(calls <= len + 1, "no end after %zu calls on %zu bytes", calls, len);
		memset(&it, FUZZ_CANARY, sizeof(it));
		r = rv_fdinfo_next_epoll_item(text, &cursor, &it);
		if (r == 1)
			break;
		FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ERANGE, "unexpected result %d", r);
		FUZZ_ASSERT(cursor && cursor > (before ? before : text - 1) && cursor <= text + len,
			    "the cursor did not move on");
		if (r < 0)
			FUZZ_ASSERT(fuzz_untouched(&it, sizeof(it)), "item written on failure");
	}
}
