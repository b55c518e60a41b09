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
#include <sys/mount.h>
#include <sys/syscall.h>

#include "internal.h"

#define RV_NATIVE_MARKER	"/sys/kernel/revoke/syscalls"
#define RV_NATIVE_UMOUNT_MARKER "/sys/kernel/revoke/umount"

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
	char buf[64];
	long a, b;

	if (read_text_at(AT_FDCWD, RV_NATIVE_MARKER, buf, sizeof(buf)) <= 0)
		return;
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

/*
 * The forced unmount, umount2(target, UMOUNT_REVOKE): the patched kernel
 * publishes the flag in /sys/kernel/revoke/umount ("16\n", decimal). The
 * probe also calls umount2("", flag): the patched kernel looks the empty path
 * up first (ENOENT), a kernel that does not know the flag fails it (EINVAL)
 * and a seccomp filter may refuse the call (EPERM, ENOSYS).
 */
static pthread_once_t umount_probe_once = PTHREAD_ONCE_INIT;
static int umount_flag;

static void probe_umount(void)
{
	char buf[32], *end;
	long v;

	if (read_text_at(AT_FDCWD, RV_NATIVE_UMOUNT_MARKER, buf, sizeof(buf)) <= 0)
		return;
	if (buf[0] < '1' || buf[0] > '9')
		return;
	errno = 0;
	v = strtol(buf, &end, 10);
	/* One flag bit above umount's own (MNT_FORCE..UMOUNT_NOFOLLOW). */
	if (errno || strcmp(end, "\n") != 0 || v <= 0x8 || v > (1L << 30) || (v & (v - 1)))
		return;
	if (umount2("", (int)v) == 0 || errno != ENOENT)
		return;
	umount_flag = (int)v;
}

bool rv_native_umount_available(void)
{
	const char *env = getenv("REVOKE_ENGINE");

	if (env && strcmp(env, "ptrace") == 0)
		return false;
	pthread_once(&umount_probe_once, probe_umount);
	return umount_flag != 0;
}

int rv_native_umount(const char *mountpoint)
{
	if (!rv_native_umount_available())
		return -ENOSYS;
	return umount2(mountpoint, umount_flag) < 0 ? negative_errno() : 0;
}
