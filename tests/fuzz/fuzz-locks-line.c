/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rv_parse_locks_line: one line of /proc/locks (lib/lock.c names who holds
 * the revoke lock with it). Out-parameter untouched on failure. */
#include <errno.h>

#include "fuzz.h"

FUZZ_TARGET(text, len)
{
	struct rv_lock_entry e;
	int r;

	(void)len;
	memset(&e, FUZZ_CANARY, sizeof(e));
	r = rv_parse_locks_line(text, &e);
	FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ERANGE, "unexpected result %d", r);
	if (r < 0)
		FUZZ_ASSERT(fuzz_untouched(&e, sizeof(e)), "entry written on failure");
}
