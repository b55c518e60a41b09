/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rv_parse_status: /proc/PID/status (Uid, State, Tgid, TracerPid, Seccomp, NSpid). */
#include <errno.h>

#include "fuzz.h"

FUZZ_TARGET(text, len)
{
	struct rv_proc_status st;
	int r;

	(void)len;
	memset(&st, FUZZ_CANARY, sizeof(st));
	r = rv_parse_status(text, &st);
	if (r < 0) {
		FUZZ_ASSERT(r == -EINVAL || r == -ERANGE, "unexpected error %d", r);
		FUZZ_ASSERT(fuzz_untouched(&st, sizeof(st)), "out-parameter changed on failure");
		return;
	}
	FUZZ_ASSERT(r == 0, "returned %d", r);
	FUZZ_ASSERT(st.state != '\0' && st.state != '\n', "empty state accepted");
}
