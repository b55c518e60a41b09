/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The native revokeat(2) system call (kernel/), used when the running kernel
 * has it. Its number (472 in the patched 6.12, the first no upstream version
 * has assigned) may be given to another call upstream one day, as 451 and 452
 * of the first series were (cachestat, fchmodat2), so a number alone proves
 * nothing: the patched kernel publishes its calls in
 * /sys/kernel/revoke/syscalls, one line per call, name and number
 * ("revokeat 472\n"), and only a number found there is called. The probe
 * also calls revokeat(-1, "", AT_EMPTY_PATH), which the patched kernel
 * answers with EBADF: a seccomp filter or container runtime that refuses
 * unknown syscalls (ENOSYS, EPERM) sends the library to the userspace engine
 * instead. A kernel of the previous series ("472 473\n": revoke, frevoke)
 * does not match the format and is not used.
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

/* revokeat(2)'s own flags (the kernel's <linux/fcntl.h>), with AT_EMPTY_PATH
 * (glibc's only with _GNU_SOURCE, which kernel/run-tests' build lacks). */
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#ifndef AT_REVOKE_KEEP_FILE
#define AT_REVOKE_KEEP_FILE 0x0001 /* keep dfd's open file description */
#endif
#ifndef AT_REVOKE_FILE_ONLY
#define AT_REVOKE_FILE_ONLY 0x0002 /* revoke dfd's open file description only */
#endif

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static long nr_revokeat = -1;

/* The number of the line "revokeat NR\n" (NR a positive decimal); the
 * other lines name other calls, which this library does not use. */
static long parse_marker(const char *s)
{
	static const char name[] = "revokeat ";

	while (s && *s) {
		if (strncmp(s, name, sizeof(name) - 1) == 0) {
			char *end;
			long v;

			s += sizeof(name) - 1;
			if (*s < '1' || *s > '9')
				return -EINVAL;
			errno = 0;
			v = strtol(s, &end, 10);
			if (errno || v > 4095 || *end != '\n')
				return -EINVAL;
			return v;
		}
		s = strchr(s, '\n');
		if (s)
			s++;
	}
	return -ENOENT;
}

static void probe(void)
{
	char buf[256];
	long nr;

	if (read_text_at(AT_FDCWD, RV_NATIVE_MARKER, buf, sizeof(buf)) <= 0)
		return;
	nr = parse_marker(buf);
	if (nr < 0)
		return;
	if (syscall(nr, -1, "", AT_EMPTY_PATH) >= 0 || errno != EBADF)
		return;
	nr_revokeat = nr;
}

bool rv_native_available(void)
{
	const char *env = getenv("REVOKE_ENGINE");

	if (env && strcmp(env, "ptrace") == 0)
		return false;
	pthread_once(&probe_once, probe);
	return nr_revokeat > 0;
}

static int native_revokeat(int dfd, const char *path, unsigned int flags)
{
	if (!rv_native_available())
		return -ENOSYS;
	return syscall(nr_revokeat, dfd, path, flags) < 0 ? negative_errno() : 0;
}

/* Every open file of the object PATH names (symbolic links followed). */
int rv_native_revoke(const char *path)
{
	return native_revokeat(AT_FDCWD, path, 0);
}

/* Every open file of FD's object but FD's open file description. */
int rv_native_frevoke(int fd)
{
	return native_revokeat(fd, "", AT_EMPTY_PATH | AT_REVOKE_KEEP_FILE);
}

/* FD's open file description only, in every process that shares it. */
int rv_native_revoke_file(int fd)
{
	return native_revokeat(fd, "", AT_EMPTY_PATH | AT_REVOKE_FILE_ONLY);
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
