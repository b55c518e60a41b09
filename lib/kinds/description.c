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

/* The references of H to DESC_FD's description: -ESRCH when H is gone,
 * -EPERM when it cannot be compared. */
static int filter_holder(int desc_fd, struct rv_holder *h)
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
			if (r < 0)
				return -EPERM;
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

size_t rv_description_filter(int desc_fd, struct rv_holders *hs, size_t from)
{
	size_t none = 0;

	for (size_t i = from; i < hs->n; i++) {
		struct rv_holder *h = &hs->v[i];
		bool cut = false;
		int r;

		if (h->other_user || h->uninspected || !h->pub.nrefs)
			continue;
		r = filter_holder(desc_fd, h);
		if (r == -ESRCH) {
			rv_holder_clear(h);
			h->pub.reason[0] = '\0';
		} else if (r < 0) {
			/* What cannot be compared is not guessed at. */
			rv_holder_clear(h);
			h->uninspected = true;
			snprintf(h->pub.reason, sizeof(h->pub.reason),
				 "kcmp refused: cannot tell which descriptions it holds");
		}
		for (size_t j = 0; j < h->pub.nrefs && !cut; j++)
			cut = h->pub.refs[j].state == REVOKE_STATE_FOUND;
		none += !cut;
	}
	return none;
}
