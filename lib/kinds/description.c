/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One open file description as the target (REVOKE_DESCRIPTION): what
 * EVIOCREVOKE does for an input device, for any file. Discovery finds every
 * reference to the file; this keeps those to the one description. Applied
 * before anyone is stopped (and to what every rescan finds), so that a
 * process holding only other opens of the file is never stopped.
 *
 * A descriptor is compared with kcmp(KCMP_FILE), which answers for the
 * struct file itself, so copies made by dup, fork, SCM_RIGHTS and
 * pidfd_getfd all match and another open of the same file never does.
 * Neither /proc nor the BPF records name the struct file behind a mapping
 * (vm_file) or an io_uring fixed-file slot: those are reported, not cut.
 */
#include <linux/kcmp.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kinds/description.h"

/* Whether REF of holder PID shares DESC_FD's description: 1, 0, or -errno
 * (-ESRCH: gone; -EBADF: the descriptor was closed meanwhile; -EPERM,
 * -EACCES: may not be compared). */
static int same_description(int desc_fd, pid_t pid, int fd)
{
	long r = syscall(SYS_kcmp, getpid(), pid, KCMP_FILE, desc_fd, fd);

	if (r < 0)
		return negative_errno();
	return r == 0;
}

int rv_description_narrow(int desc_fd, struct rv_holder *h, char *why, size_t size)
{
	pid_t pid = h->self ? getpid() : h->pub.pid;
	size_t k = 0;

	for (size_t j = 0; j < h->pub.nrefs; j++) {
		struct revoke_ref *ref = &h->pub.refs[j];
		int r;

		switch (ref->type) {
		case REVOKE_REF_FD:
			r = same_description(desc_fd, pid, ref->fd);
			if (r == -ESRCH)
				return r;
			if (r == -EBADF || r == 0)
				continue; /* closed since, or another open */
			if (r < 0) {
				/* What cannot be compared is not guessed at. */
				snprintf(why, size,
					 "kcmp refused: cannot tell which descriptions it holds");
				return -EPERM;
			}
			break;
		case REVOKE_REF_MAP:
		case REVOKE_REF_URING:
			/* Reported, never guessed (the command says why, by kind). */
			ref->state = REVOKE_STATE_UNKNOWN;
			break;
		case REVOKE_REF_INFLIGHT:
			/* May be this description: left to be found unreachable,
			 * as a full revoke finds it. */
			break;
		default:
			/* A cwd, root or executable is no open file description. */
			continue;
		}
		h->pub.refs[k++] = *ref;
	}
	h->pub.nrefs = k;
	return 0;
}
