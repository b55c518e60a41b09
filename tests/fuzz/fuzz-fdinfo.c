/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rv_parse_fdinfo: /proc/PID/fdinfo/N of any kind of file. */
#include <errno.h>

#include "fuzz.h"

FUZZ_TARGET(text, len)
{
	struct rv_fdinfo fi;
	int r;

	(void)len;
	memset(&fi, FUZZ_CANARY, sizeof(fi));
	r = rv_parse_fdinfo(text, &fi);
	if (r < 0) {
		FUZZ_ASSERT(r == -EINVAL || r == -ERANGE, "unexpected error %d", r);
		FUZZ_ASSERT(fuzz_untouched(&fi, sizeof(fi)), "out-parameter changed on failure");
		return;
	}
	FUZZ_ASSERT(r == 0, "returned %d", r);
	FUZZ_ASSERT(fi.flags >= 0, "flags %d", fi.flags);
}
