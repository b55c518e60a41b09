/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <stdlib.h>

#include "harness.h"
#include "terminal.h"

int test_pty(char *slave, size_t len)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);

	CHECK(m >= 0, "posix_openpt: %m");
	CHECK(grantpt(m) == 0 && unlockpt(m) == 0, "grantpt/unlockpt: %m");
	CHECK(ptsname_r(m, slave, len) == 0, "ptsname: %m");
	return m;
}
