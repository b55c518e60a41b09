/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The native revoke(2)/frevoke(2) syscalls (kernel/), used when the running
 * kernel has them. Their numbers (472 and 473 in the patched 6.1, the first
 * no upstream version has assigned) may be given to other calls upstream one
 * day, as 451 and 452 of v1 were (cachestat, fchmodat2), so a number alone
 * proves nothing: the patched kernel publishes its numbers in
 * /sys/kernel/revoke/syscalls ("472 473\n"), and only then are they called.
 * The probe also calls frevoke(-1), which the patched kernel answers with
 * EBADF: a seccomp filter or container runtime that refuses unknown syscalls
 * (ENOSYS, EPERM) sends the library to the userspace engine instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "internal.h"

#define RV_NATIVE_MARKER "/sys/kernel/revoke/syscalls"

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static long nr_revoke = -1, nr_frevoke = -1;

/* "472 473\n": two positive decimal numbers, nothing else. */
static int parse_marker(const char *s, long *ret_a, long *ret_b)
{
	long v[2];
	char *end;

	for (int i = 0; i < 2; i++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		errno = 0;
		v[i] = strtol(s, &end, 10);
		if (errno || v[i] <= 0 || v[i] > 4095)
			return -EINVAL;
		s = end;
		if (i == 0 && *s++ != ' ')
			return -EINVAL;
	}
	if (strcmp(s, "\n") != 0 && *s != 0)
		return -EINVAL;
	*ret_a = v[0];
	*ret_b = v[1];
	return 0;
}

static void probe(void)
{
	_cleanup_close_ int fd = -1;
	char buf[64];
	long a, b;
	ssize_t n;

	fd = open(RV_NATIVE_MARKER, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return;
	buf[n] = 0;
	if (parse_marker(buf, &a, &b) < 0)
		return;
	if (syscall(b, -1) >= 0 || errno != EBADF)
		return;
	nr_revoke = a;
	nr_frevoke = b;
}

bool rv_native_available(void)
{
	const char *env = getenv("REVOKE_ENGINE");

	if (env && strcmp(env, "ptrace") == 0)
		return false;
	pthread_once(&probe_once, probe);
	return nr_revoke > 0;
}

int rv_native_revoke(const char *path)
{
	if (!rv_native_available())
		return -ENOSYS;
	return syscall(nr_revoke, path) < 0 ? negative_errno() : 0;
}

int rv_native_frevoke(int fd)
{
	if (!rv_native_available())
		return -ENOSYS;
	return syscall(nr_frevoke, fd) < 0 ? negative_errno() : 0;
}
