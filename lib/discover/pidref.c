/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Holding a process by pidfd from the moment it is found (no pid reuse can
 * make another process ours), and taking a descriptor of it.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "kinds/refkind.h"
#include "discover/proc.h"
#include "kinds/target.h"

int rv_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* The highest descriptor a holder may keep as its pidfd: a quarter of
 * RLIMIT_NOFILE (at least 32, at most 256) stays free for the scan's and the
 * cut's own passing descriptors. */
long rv_pidfd_max(void)
{
	struct rlimit rl;
	rlim_t reserve;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > INT_MAX)
		return INT_MAX;
	reserve = rl.rlim_cur / 4 < 32 ? 32 : rl.rlim_cur / 4 > 256 ? 256 : rl.rlim_cur / 4;
	return (long)rl.rlim_cur - (long)reserve - 1;
}

int rv_holder_pidfd(pid_t pid, int *pidfd, long *max)
{
	if (*max == 0)
		*max = rv_pidfd_max();
	if (*pidfd < 0) {
		*pidfd = rv_pidfd_open(pid);
		/* Out of descriptors (3000 holders against the default soft
		 * limit of 1024): the holder goes without a pidfd. */
		if (*pidfd < 0 && errno != ENOSYS && errno != EMFILE && errno != ENFILE)
			return negative_errno();
	}
	if (*pidfd > *max)
		*pidfd = safe_close(*pidfd);
	return 0;
}

int rv_pidfd_getfd(int pidfd, int fd)
{
	return (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
}

int rv_pidfd_alive(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 ? negative_errno() : 0;
}
