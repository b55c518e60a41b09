/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <revoke.h> compiles together with a <unistd.h> that declares glibc's own
 * revoke() (an ENOSYS stub, declared under _DEFAULT_SOURCE), and linking
 * with -lrevoke binds revoke() to librevoke: revoke() of a file nobody holds
 * returns 0, not ENOSYS.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include <unistd.h>
#include <revoke.h>
#include <unistd.h> /* again, after: harmless */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "harness.h"

/* The declarations must agree: this only compiles if both name one type. */
static int (*const revoke_ptr)(const char *) = revoke;

static void glibc_declares_revoke_too(void)
{
#if !defined(__GLIBC__)
	SKIP("not glibc: no <unistd.h> declares a second revoke()");
#elif !defined(__USE_MISC)
	test_fail("<unistd.h> did not declare glibc's revoke(): this file proves nothing");
#else
	/* Both declarations were seen and this file compiled: they agree. */
	CHECK(revoke_ptr != NULL, "no revoke()");
#endif
}

static void revoke_binds_to_librevoke(void)
{
	Dl_info info;

	CHECK(dladdr((void *)revoke_ptr, &info) != 0 && info.dli_fname,
	      "dladdr(revoke) found no object");
	CHECK(strstr(info.dli_fname, "librevoke"), "revoke() comes from %s, not librevoke",
	      info.dli_fname);
}

static void unheld_file_returns_0_not_enosys(void)
{
	char path[] = "/tmp/revoke-header-XXXXXX";
	int fd = mkostemp(path, O_CLOEXEC), r, e;

	CHECK(fd >= 0, "mkostemp: %m");
	CHECK(close(fd) == 0, "close: %m");
	errno = 0;
	r = revoke(path);
	e = errno;
	unlink(path);
	CHECK(r == 0, "revoke() of a file nobody holds returned %d errno %d (%s)", r, e,
	      strerror(e));
}

/* clang-format off */
TEST_MAIN("header-unistd",
	  {"glibc_declares_revoke_too", glibc_declares_revoke_too, 0},
	  {"revoke_binds_to_librevoke", revoke_binds_to_librevoke, 0},
	  {"unheld_file_returns_0_not_enosys", unheld_file_returns_0_not_enosys, 0},
)
/* clang-format on */
