/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rv_parse_status: /proc/PID/status (Uid, State, Tgid, TracerPid, Seccomp, NSpid);
 * rv_parse_creds: its credentials (Uid, Gid, Groups, CapEff), on the same text. */
#include <errno.h>

#include "fuzz.h"

static void fuzz_creds(const char *text)
{
	static struct rv_proc_creds c;
	int r;

	memset(&c, FUZZ_CANARY, sizeof(c));
	r = rv_parse_creds(text, &c);
	if (r < 0) {
		FUZZ_ASSERT(r == -EINVAL || r == -E2BIG, "creds: unexpected error %d", r);
		FUZZ_ASSERT(fuzz_untouched(&c, sizeof(c)),
			    "creds: out-parameter changed on failure");
		return;
	}
	FUZZ_ASSERT(r == 0 && c.ngroups <= RV_CREDS_MAX_GROUPS, "creds: returned %d, %zu groups", r,
		    c.ngroups);
}

FUZZ_TARGET(text, len)
{
	struct rv_proc_status st;
	int r;

	(void)len;
	fuzz_creds(text);
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
