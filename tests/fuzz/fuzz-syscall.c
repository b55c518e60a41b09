/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rv_parse_syscall: /proc/PID/task/TID/syscall, read before an interrupt
 * where the registers lose a call's first argument (aarch64). Out-parameter
 * untouched on failure; a number and six arguments on success. */
#include <errno.h>

#include "fuzz.h"

FUZZ_TARGET(text, len)
{
	struct rv_proc_syscall s;
	int r;

	(void)len;
	memset(&s, FUZZ_CANARY, sizeof(s));
	r = rv_parse_syscall(text, &s);
	FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ERANGE || r == -ENOENT, "unexpected result %d",
		    r);
	if (r < 0)
		FUZZ_ASSERT(fuzz_untouched(&s, sizeof(s)), "written on failure");
	else
		FUZZ_ASSERT(s.nr >= 0 && s.nr <= INT32_MAX, "number %ld out of range", s.nr);
}
