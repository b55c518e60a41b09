/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The references no fd table shows, found behind another descriptor of the
 * process: io_uring registered files (the ring's fdinfo), descriptors in
 * flight in a unix socket's queue (SCM_RIGHTS), rings mapped without a
 * descriptor.
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

#define STATX_FLAGS AT_STATX_DONT_SYNC
#define STATX_MASK  (STATX_TYPE | STATX_INO | STATX_MNT_ID)

static bool uring_name_matches(const struct target_names *tn, const struct rv_target *t,
			       const char *name)
{
	if (t->mount) {
		/* Anything under the mount point (6.x gives full paths; the
		 * older bare names cannot tell). */
		size_t len = tn->real ? strlen(tn->real) : 0;

		if (len == 1) /* the root mount: every full path */
			return name[0] == '/';
		return len && strncmp(name, tn->real, len) == 0 &&
		       (name[len] == '/' || name[len] == '\0');
	}
	if (strchr(name, '/'))
		return (tn->real && strcmp(name, tn->real) == 0) ||
		       (t->path && t->path[0] == '/' && strcmp(name, t->path) == 0);
	/* Before Linux 6.x the list shows the dentry name only: the best
	 * that can be done is comparing last components. */
	return tn->base && strcmp(name, tn->base) == 0;
}

/* An anon inode: if it is an io_uring, look for the targets among its
 * registered files. fdinfo lists only names, so names are compared; the
 * list is empty when the ring's lock was busy at that moment. */
int rv_scan_check_uring(struct scan_worker *w, int dir, int *fdinfo_dir, int fdd,
			const char *fdname, int fd)
{
	static const char uring[] = "anon_inode:[io_uring]";
	struct scan_ctx *ctx = w->ctx;
	const char *cursor = NULL;
	char link[64], name[4096];
	uint32_t slot = 0;
	ssize_t n;
	int r;

	n = readlinkat(fdd, fdname, link, sizeof(link) - 1);
	if (n != (ssize_t)strlen(uring) || memcmp(link, uring, (size_t)n) != 0)
		return 0;
	if (w->nring_fds < ARRAY_SIZE(w->ring_fds))
		w->ring_fds[w->nring_fds] = fd;
	w->nring_fds++;
	r = rv_scan_fdinfo_of(w, dir, fdinfo_dir, fd, &(struct rv_fdinfo){0});
	if (r < 0)
		return rv_gone_errno(-r) || rv_hidden_errno(-r) || r == -EINVAL ? 0 : r;
	/* One ref per slot: the cut empties slots (cut.c). A name that
	 * matches two targets (a mount and a file on it) is one slot, cut once. */
	while ((r = rv_fdinfo_next_user_slot(w->buf, &cursor, name, sizeof(name), &slot)) != 1) {
		if (r < 0)
			continue; /* a name too long to be a target's */
		for (size_t t = 0; t < ctx->ntargets; t++) {
			struct revoke_ref *ref;

			if (!uring_name_matches(&ctx->names[t], &ctx->targets[t], name))
				continue;
			ref = rv_scan_add_ref(w, REVOKE_REF_URING, t, fd);
			if (!ref)
				return -ENOMEM;
			ref->offset = slot;
			break;
		}
	}
	return 0;
}

/*
 * A unix socket whose receive queue holds SCM_RIGHTS fds: take a copy of the
 * socket (pidfd_getfd) and peek at the first message that carries fds. Only
 * that one message is seen (MSG_PEEK stops at it, and moving SO_PEEK_OFF
 * would disturb the owner's own peeking; if the owner itself set SO_PEEK_OFF
 * our peek starts at, and advances, its offset). When the copy is refused
 * (no ptrace permission over the owner) nothing can be said and nothing is
 * reported. Known hazard: closing a received fd runs the file's ->flush, so
 * a FUSE file in flight whose server hangs would block this close.
 */
int rv_scan_check_inflight(struct scan_worker *w, int dir, int *fdinfo_dir, pid_t pid, int fd,
			   int *pidfd)
{
	enum { PEEK_SIZE = 65536, MAX_FDS = 253 /* SCM_MAX_FD */ };
	struct scan_ctx *ctx = w->ctx;
	union {
		char buf[CMSG_SPACE(MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} control;
	_cleanup_close_ int sock = -1;
	struct iovec iov;
	struct msghdr msg = {0};
	struct rv_fdinfo fi;
	int r = 0;

	r = rv_scan_fdinfo_of(w, dir, fdinfo_dir, fd, &fi);
	if (r == -EMFILE || r == -ENFILE || r == -ENOMEM)
		return r;
	if (r < 0 || fi.scm_fds <= 0)
		return 0;
	if (*pidfd < 0) {
		*pidfd = rv_pidfd_open(pid);
		if (*pidfd < 0)
			return errno == EMFILE || errno == ENFILE || errno == ENOMEM ? -errno : 0;
	}
	sock = rv_pidfd_getfd(*pidfd, fd);
	if (sock < 0)
		return errno == EMFILE || errno == ENFILE || errno == ENOMEM ? -errno : 0;
	if (!w->peek) {
		w->peek = malloc(PEEK_SIZE);
		if (!w->peek)
			return -ENOMEM;
	}
	iov = (struct iovec){.iov_base = w->peek, .iov_len = PEEK_SIZE};
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control.buf;
	msg.msg_controllen = sizeof(control.buf);
	if (recvmsg(sock, &msg, MSG_PEEK | MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0)
		return 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		size_t nfds;
		int *fds;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		fds = (int *)(void *)CMSG_DATA(c);
		nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfds; i++) {
			struct statx stx;

			if (r == 0 &&
			    statx(fds[i], "", AT_EMPTY_PATH | STATX_FLAGS, STATX_MASK, &stx) == 0)
				for (size_t t = 0; t < ctx->ntargets; t++)
					if (rv_target_match(
						&ctx->targets[t],
						makedev(stx.stx_dev_major, stx.stx_dev_minor),
						stx.stx_ino, rv_stx_mnt_id(&stx)) &&
					    !rv_scan_ref_exists(w, REVOKE_REF_INFLIGHT, t, fd) &&
					    !rv_scan_add_ref(w, REVOKE_REF_INFLIGHT, t, fd))
						r = -ENOMEM;
			close(fds[i]);
		}
	}
	return r;
}

/*
 * A ring it maps but holds no descriptor of (registered with
 * IORING_REGISTER_RING_FDS and closed, or passed on): no fdinfo lists its
 * registered files, so it may hold any target. One URING ref without a
 * descriptor per target, which the userspace engine cannot cut (cut.c).
 * Dup'd descriptors of one ring count once.
 */
int rv_scan_check_fdless_rings(struct scan_worker *w, pid_t pid)
{
	unsigned int held = w->nring_fds;

	if (w->ring_maps == 0 || held < w->ring_maps)
		goto fdless;
	for (unsigned int i = 1; i < w->nring_fds && i < ARRAY_SIZE(w->ring_fds); i++)
		for (unsigned int j = 0; j < i; j++)
			if (syscall(SYS_kcmp, pid, pid, KCMP_FILE, w->ring_fds[j],
				    w->ring_fds[i]) == 0) {
				held--;
				break;
			}
	if (w->ring_maps <= held)
		return 0;
fdless:
	/* Without the anon inodes' device no ring descriptor was recognised. */
	if (w->ring_maps == 0 || !w->ctx->have_anon_dev)
		return 0;
	for (size_t t = 0; t < w->ctx->ntargets; t++)
		if (!rv_scan_add_ref(w, REVOKE_REF_URING, t, -1))
			return -ENOMEM;
	return 0;
}
