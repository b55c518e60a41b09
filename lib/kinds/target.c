/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Targets: resolving them, telling them apart, and who may revoke them. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/openat2.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "kinds/target.h"

void rv_targets_free(struct rv_target *t, size_t n)
{
	if (!t)
		return;
	for (size_t i = 0; i < n; i++) {
		safe_close(t[i].path_fd);
		free(t[i].path);
	}
	free(t);
}

bool rv_shared_device(dev_t rdev)
{
	/* mem's null, zero, full, random, urandom; tty's tty, console, ptmx
	 * (Documentation/admin-guide/devices.txt) */
	static const struct {
		unsigned major, minor;
	} shared[] = {{1, 3}, {1, 5}, {1, 7}, {1, 8}, {1, 9}, {5, 0}, {5, 1}, {5, 2}};

	for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++)
		if (major(rdev) == shared[i].major && minor(rdev) == shared[i].minor)
			return true;
	return false;
}

static int target_from_fd(int fd, const char *path, const struct rv_guard *guard,
			  struct rv_target *ret)
{
	struct statx stx;

	/* DONT_SYNC: the inode cache answers; a FUSE server is not asked. */
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_MODE | STATX_INO | STATX_UID, &stx) < 0)
		return negative_errno();
	/* eventfd, epoll, timerfd, signalfd... all share one anonymous inode:
	 * "every file on this inode" would be every such file in the system. */
	if ((stx.stx_mode & S_IFMT) == 0)
		return -EINVAL;
	/* Devices every process opens, none of them owning it: cutting "every
	 * descriptor of /dev/null" would reach every daemon and shell on the
	 * machine, which no one asks for on purpose. */
	if (S_ISCHR(stx.stx_mode) &&
	    rv_shared_device(makedev(stx.stx_rdev_major, stx.stx_rdev_minor)))
		return -EINVAL;
	/* A descriptor an earlier revoke left: its memfd is that holder's own,
	 * and "revoking" it again would only replace one dead file by another.
	 * Say what it is instead. */
	if (rv_is_dead_fd(fd))
		return -EBADF;
	ret->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	ret->ino = stx.stx_ino;
	ret->mode = stx.stx_mode;
	ret->uid = stx.stx_uid;
	ret->rdev = makedev(stx.stx_rdev_major, stx.stx_rdev_minor);
	if (guard)
		pthread_mutex_lock(guard->mu);
	ret->path = guard && *guard->gone ? NULL : strdup(path);
	if (guard)
		pthread_mutex_unlock(guard->mu);
	return ret->path ? 0 : -ENOMEM;
}

/*
 * Looking a path up can block for good: a FUSE or NFS server that stopped
 * answering, with the request already taken by the server, waits even
 * through SIGKILL ("wait it out", fs/fuse/dev.c). A thread stuck there
 * keeps its whole process from exiting, so the lookup is made by a separate
 * process (CLONE_VM, not a thread of ours) that keeps none of our
 * descriptors (a pipe to the caller's reader would stay open) and hands its
 * O_PATH descriptor back over a socket; if it does not answer by the
 * deadline, we go on without it (ETIMEDOUT) and can exit.
 */
struct lookup {
	const char *path;
	int flags;
	int sock;
	int root_fd, cwd_fd; /* another process's view (rv_ns_open), or -1 */
};

#define LOOKUP_STACK (64u * 1024u)

/* Raw syscalls only: this runs on a stack of its own, in a process that is
 * not ours (no sanitizer runtime, no libc state of its own). */
__attribute__((no_sanitize("address", "undefined"))) static int lookup_fn(void *arg)
{
	const struct lookup *l = arg;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov;
	struct msghdr msg = {0};
	struct cmsghdr *c;
	int err, sock = l->sock;
	long fd;

	/* None of our descriptors stays open in a lookup that may hang but
	 * the socket and the other process's root and cwd (O_PATH). */
	for (unsigned int lo = 0;;) {
		int keep[3] = {sock, l->root_fd, l->cwd_fd};
		unsigned int next = ~0u;

		for (int k = 0; k < 3; k++)
			if (keep[k] >= 0 && (unsigned int)keep[k] >= lo &&
			    (unsigned int)keep[k] < next)
				next = (unsigned int)keep[k];
		if (next > lo)
			syscall(SYS_close_range, lo, next == ~0u ? ~0u : next - 1, 0);
		if (next == ~0u)
			break;
		lo = next + 1;
	}
	if (l->root_fd >= 0) {
		/* Its root and cwd are ours (this process has an fs_struct of
		 * its own: no CLONE_FS), so the walk is the one it would make:
		 * its mounts (a walk follows the mounts of the mount it is on,
		 * whatever namespace we are in), "/" and ".." stopping at its
		 * root, absolute symlinks from there, magic links as for it. */
		if (syscall(SYS_fchdir, l->root_fd) == 0 && syscall(SYS_chroot, ".") == 0) {
			if (l->path[0] != '/' && syscall(SYS_fchdir, l->cwd_fd) < 0)
				fd = -1;
			else
				fd = -2;
		} else {
			/* No CAP_SYS_CHROOT: the kernel keeps the walk inside
			 * its root (or its cwd), or fails (ELOOP, EXDEV). */
			struct open_how how = {
			    .flags = (uint64_t)l->flags,
			    .resolve = l->path[0] == '/' ? RESOLVE_IN_ROOT : RESOLVE_BENEATH,
			};

			fd = syscall(SYS_openat2, l->path[0] == '/' ? l->root_fd : l->cwd_fd,
				     l->path, &how, sizeof(how));
		}
		if (fd != -2)
			goto send;
		syscall(SYS_close, l->root_fd);
		syscall(SYS_close, l->cwd_fd);
	}
	fd = syscall(SYS_openat, AT_FDCWD, l->path, l->flags, 0);
send:
	err = fd < 0 ? errno : 0;
	iov.iov_base = &err;
	iov.iov_len = sizeof(err);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (fd >= 0) {
		msg.msg_control = control.buf;
		msg.msg_controllen = sizeof(control.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		__builtin_memcpy(CMSG_DATA(c), &(int){(int)fd}, sizeof(int));
	}
	syscall(SYS_sendmsg, sock, &msg, MSG_NOSIGNAL);
	syscall(SYS_exit, 0);
	return 0;
}

/* Lookup processes left behind, reaped when they come back. */
static pid_t stuck[64];
static size_t nstuck;
static pthread_mutex_t stuck_mu = PTHREAD_MUTEX_INITIALIZER;

static void reap_stuck(void)
{
	pthread_mutex_lock(&stuck_mu);
	for (size_t i = 0; i < nstuck;) {
		if (waitpid(stuck[i], NULL, __WALL | WNOHANG) != 0)
			stuck[i] = stuck[--nstuck];
		else
			i++;
	}
	pthread_mutex_unlock(&stuck_mu);
}

static int recv_result(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov;
	struct msghdr msg = {0};
	int err = EIO, fd = -1;

	iov.iov_base = &err;
	iov.iov_len = sizeof(err);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control.buf;
	msg.msg_controllen = sizeof(control.buf);
	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(err))
		return -EIO;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (fd >= 0)
		return fd;
	return err > 0 ? -err : -EIO;
}

int rv_open_bounded(const char *path, int flags, uint64_t deadline)
{
	return rv_open_bounded_in(path, flags, deadline, -1, -1);
}

int rv_open_bounded_in(const char *path, int flags, uint64_t deadline, int root_fd, int cwd_fd)
{
	struct lookup l = {.path = path, .flags = flags, .root_fd = root_fd, .cwd_fd = cwd_fd};
	_cleanup_close_ int sock = -1;
	int sv[2], r = -ETIMEDOUT;
	void *stack;
	pid_t pid;

	reap_stuck();
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return negative_errno();
	sock = sv[0];
	l.sock = sv[1];
	stack = mmap(NULL, LOOKUP_STACK, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED) {
		safe_close(sv[1]);
		return negative_errno();
	}
	/* No exit signal: the caller hears of nothing. */
	pid = clone(lookup_fn, (char *)stack + LOOKUP_STACK, CLONE_VM, &l);
	safe_close(sv[1]);
	if (pid < 0) {
		r = negative_errno();
		munmap(stack, LOOKUP_STACK);
		return r;
	}
	for (;;) {
		uint64_t now = rv_now_ns();
		struct pollfd p = {.fd = sock, .events = POLLIN};
		int ms;

		if (now >= deadline)
			break;
		ms = (int)((deadline - now + 999999) / 1000000);
		if (poll(&p, 1, ms) > 0) {
			r = recv_result(sock);
			break;
		}
	}
	if (r == -ETIMEDOUT) {
		/* Still in the lookup: its stack stays with it; L is not read
		 * again (the kernel copied the path at its syscall's entry). */
		pthread_mutex_lock(&stuck_mu);
		if (nstuck < ARRAY_SIZE(stuck))
			stuck[nstuck++] = pid;
		pthread_mutex_unlock(&stuck_mu);
		return r;
	}
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	munmap(stack, LOOKUP_STACK);
	return r;
}

int rv_targets_resolve(const struct rv_request *req, const struct rv_guard *guard,
		       struct rv_target **ret, size_t *ret_n)
{
	struct rv_target *t;
	size_t n = req->fds ? req->nfds : req->paths ? req->npaths : 1;
	int r;

	t = calloc(n, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		/* The helper's descriptors are the targets' own from now on (and
		 * left out of every scan, as the lookups' are). */
		t[i].path_fd = req->fds ? req->fds[i] : -1;

	if (req->fds) {
		for (size_t i = 0; i < n; i++) {
			char buf[4096];
			ssize_t len;

			/* The file the descriptor holds, never a path looked up
			 * again: what a client swaps in after it sent it is not
			 * what is revoked. The name is for reports only. */
			len = rv_proc_readlink(RV_PROC_SELF, 0, buf, sizeof(buf), "fd/%d",
					       t[i].path_fd);
			if (len < 0)
				len = snprintf(buf, sizeof(buf), "fd %d", t[i].path_fd);
			buf[len] = 0;
			r = target_from_fd(t[i].path_fd, buf, NULL, &t[i]);
			if (r < 0)
				goto fail;
		}
	} else if (!req->paths) {
		char buf[4096];
		ssize_t len;

		len = rv_proc_readlink(RV_PROC_SELF, 0, buf, sizeof(buf), "fd/%d", req->fd);
		if (len < 0)
			len = snprintf(buf, sizeof(buf), "fd %d", req->fd);
		buf[len] = 0;
		r = target_from_fd(req->fd, buf, NULL, &t[0]);
		if (r < 0)
			goto fail;
	} else {
		for (size_t i = 0; i < n; i++) {
			int flags = O_PATH | O_CLOEXEC;

			if (req->flags & REVOKE_NOFOLLOW)
				flags |= O_NOFOLLOW;
			r = rv_open_bounded_in(req->paths[i], flags, req->deadline_ns,
					       req->ns_root_fd, req->ns_cwd_fd);
			if (r < 0)
				goto fail;
			t[i].path_fd = r;
			/* The kernel read the string, so it is safe to read here
			 * (while our caller waits for us). */
			r = target_from_fd(t[i].path_fd, req->paths[i], guard, &t[i]);
			if (r < 0)
				goto fail;
		}
	}
	*ret = t;
	*ret_n = n;
	return 0;
fail:
	rv_targets_free(t, n);
	return r;
}

bool rv_has_cap(int cap)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	return data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap);
}

int rv_targets_check_permission(const struct rv_target *t, size_t n)
{
	uid_t fsuid = (uid_t)setfsuid((uid_t)-1); /* -1 is never valid: only reads it */
	bool fowner = rv_has_cap(CAP_FOWNER);

	for (size_t i = 0; i < n; i++)
		if (t[i].uid != fsuid && !fowner)
			return -EPERM;
	return 0;
}

int rv_targets_check_owner(const struct rv_target *t, size_t n, uid_t uid)
{
	for (size_t i = 0; i < n && uid != 0; i++)
		if (t[i].uid != uid)
			return -EPERM;
	return 0;
}

int rv_target_reopen(const struct rv_request *req, struct rv_target *tg)
{
	int flags = O_PATH | O_CLOEXEC | (req->flags & REVOKE_NOFOLLOW ? O_NOFOLLOW : 0);
	struct statx stx;
	int fd;

	/* The helper's targets are descriptors: their paths are names for the
	 * report, which a client may have pointed elsewhere since. */
	if (req->fds)
		return -EBUSY;
	fd = rv_open_bounded_in(tg->path, flags, req->deadline_ns, req->ns_root_fd, req->ns_cwd_fd);
	if (fd < 0)
		return fd;
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO | STATX_MNT_ID, &stx) < 0 ||
	    !rv_target_match(tg, makedev(stx.stx_dev_major, stx.stx_dev_minor), stx.stx_ino,
			     rv_stx_mnt_id(&stx))) {
		safe_close(fd);
		return -EBUSY;
	}
	safe_close(tg->path_fd);
	tg->path_fd = fd;
	return 0;
}

int rv_ns_open(pid_t pid, int *ret_root, int *ret_cwd)
{
	_cleanup_close_ int pidfd = -1, root = -1, cwd = -1;

	/* The pidfd pins the process we were named, so that what /proc shows
	 * below is checked to be still its own (a pid reused meanwhile). */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0 && errno != ENOSYS && errno != EINVAL) /* EINVAL: a thread's id */
		return negative_errno();
	/* /proc/PID/root and cwd can be followed only with ptrace read access
	 * (PTRACE_MODE_READ_FSCREDS): who could not look into its namespace
	 * learns nothing of what is there. */
	root = rv_proc_open(pid, 0, O_PATH | O_DIRECTORY, "root");
	if (root < 0)
		return errno == EACCES ? -EPERM : errno == ENOENT ? -ESRCH : negative_errno();
	cwd = rv_proc_open(pid, 0, O_PATH | O_DIRECTORY, "cwd");
	if (cwd < 0)
		return errno == EACCES ? -EPERM : errno == ENOENT ? -ESRCH : negative_errno();
	if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
		return errno == EPERM ? -EPERM : -ESRCH;
	*ret_root = TAKE_FD(root);
	*ret_cwd = TAKE_FD(cwd);
	return 0;
}
