/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rv_parse_stat: /proc/PID/stat, whose comm may hold ')', spaces, newlines. */
#include <errno.h>

#include "fuzz.h"

FUZZ_TARGET(text, len)
{
	struct rv_proc_stat st;
	const char *close;
	int r;

	(void)len;
	memset(&st, FUZZ_CANARY, sizeof(st));
	r = rv_parse_stat(text, &st);
	if (r < 0) {
		FUZZ_ASSERT(r == -EINVAL || r == -ERANGE, "unexpected error %d", r);
		FUZZ_ASSERT(fuzz_untouched(&st, sizeof(st)), "out-parameter changed on failure");
		return;
	}
	FUZZ_ASSERT(r == 0, "returned %d", r);
	FUZZ_ASSERT(memchr(st.comm, '\0', sizeof(st.comm)), "comm not NUL-terminated");
	/* comm is what lies between the first " (" and the last ')', truncated. */
	close = strrchr(text, ')');
	FUZZ_ASSERT(close && close[1] == ' ' && close[2] == st.state,
		    "state '%c' is not the letter after the last ')'", st.state);
	FUZZ_ASSERT(strstr(text, st.comm), "comm '%s' is not in the text", st.comm);
	FUZZ_ASSERT(st.num_threads >= 0, "num_threads %d", st.num_threads);
}
