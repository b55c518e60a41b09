/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cut: a dead descriptor over every revoked fd, a SIGBUS mapping over
 * every revoked range; in a stopped tracee through injected syscalls, or in
 * the calling process directly.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

struct cutter {
	struct rv_holder *h;
	struct rv_tracee *t; /* NULL: the caller itself */
	int broken;	     /* the injection failed: nothing more can be done */
};

/* One syscall in the holder. The int says whether it could be run; *res is
 * the holder's result (-errno on its failure). */
static int sys(struct cutter *c, long nr, long *res, long a0, long a1, long a2, long a3, long a4,
	       long a5)
{
	long v;
	int r;

	if (c->broken)
		return c->broken;
	if (c->t) {
		r = rv_tracee_syscall(c->t, nr, &v, a0, a1, a2, a3, a4, a5);
		if (r < 0)
			return c->broken = r;
	} else {
		v = syscall(nr, a0, a1, a2, a3, a4, a5);
		if (v < 0)
			v = negative_errno();
	}
	*res = v;
	return 0;
}

/* Put a string where the holder can read it. */
static int put_string(struct cutter *c, const char *s, long *ret_addr)
{
	uint64_t addr;
	int r;

	if (!c->t) {
		*ret_addr = (long)s;
		return 0;
	}
	r = rv_tracee_scratch(c->t, s, strlen(s) + 1, &addr);
	if (r < 0)
		return c->broken = r;
	*ret_addr = (long)addr;
	return 0;
}

static int close_in_holder(struct cutter *c, long fd)
{
	long res;

	return sys(c, SYS_close, &res, fd, 0, 0, 0, 0, 0);
}

/* Whether the holder's descriptor FD is a directory (an O_PATH directory
 * would still serve as an openat() dirfd: a new way in, not a dead end). */
static int is_dir(struct cutter *c, long fd)
{
	char path[64];
	struct statx stx;

	if (c->t)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/fd/%ld", c->h->pub.pid,
			 rv_tracee_tid(c->t), fd);
	else
		snprintf(path, sizeof(path), "/proc/self/fd/%ld", fd);
	/* The type is all we need: DONT_SYNC keeps a network or FUSE file
	 * system (maybe hung) out of it. */
	if (statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_TYPE, &stx) < 0)
		return negative_errno();
	return S_ISDIR(stx.stx_mode);
}

/* An O_PATH descriptor of a non-directory: every operation but close() on it
 * fails with EBADF. /dev/null normally; the executable if the holder's mount
 * namespace lacks a usable /dev/null. */
static int open_dead(struct cutter *c, long *ret_fd)
{
	static const char *const paths[] = {"/dev/null", "/proc/self/exe"};
	long res = -ENOENT;
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		long addr;

		r = put_string(c, paths[i], &addr);
		if (r < 0)
			return r;
		r = sys(c, SYS_openat, &res, AT_FDCWD, addr, O_PATH | O_CLOEXEC, 0, 0, 0);
		if (r < 0)
			return r;
		if (res < 0)
			continue;
		r = is_dir(c, res);
		if (r == 0) {
			*ret_fd = res;
			return 0;
		}
		close_in_holder(c, res);
		if (c->broken)
			return c->broken;
		res = r < 0 ? r : -EISDIR;
	}
	return (int)res;
}

static int cut_fd(struct cutter *c, long dead, const struct revoke_ref *ref)
{
	long res;
	int r;

	r = sys(c, SYS_dup3, &res, dead, ref->fd, (ref->fd_flags & FD_CLOEXEC) ? O_CLOEXEC : 0, 0,
		0, 0);
	if (r < 0)
		return r;
	if (res == ref->fd)
		return 0;
	if (res == -EBADF || res == -EINVAL)
		return (int)res;
	/* dup3 refused (a seccomp filter returning an errno, say): close and
	 * let F_DUPFD take the lowest free number, which is the one just
	 * freed while every thread of the holder is stopped. */
	r = sys(c, SYS_close, &res, ref->fd, 0, 0, 0, 0, 0);
	if (r < 0)
		return r;
	if (res < 0 && res != -EINTR)
		return (int)res;
	r = sys(c, SYS_fcntl, &res, dead, (ref->fd_flags & FD_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD,
		ref->fd, 0, 0, 0);
	if (r < 0)
		return r;
	if (res < 0)
		return (int)res;
	if (res != ref->fd) {
		/* Someone took the number in between (only possible when
		 * cutting ourselves): the fd is closed but not held. */
		close_in_holder(c, res);
		return c->broken ? c->broken : -EBUSY;
	}
	return 0;
}

static int open_sigbus_file(struct cutter *c, long *ret_fd)
{
	long addr, res;
	int r;

	r = put_string(c, "revoked", &addr);
	if (r < 0)
		return r;
	r = sys(c, SYS_memfd_create, &res, addr, MFD_CLOEXEC, 0, 0, 0, 0);
	if (r < 0)
		return r;
	if (res < 0)
		return (int)res;
	*ret_fd = res;
	return 0;
}

static int cut_map(struct cutter *c, long memfd, const struct revoke_ref *ref)
{
	long res;
	int r;

	if (ref->end <= ref->start)
		return -EINVAL;
	/* A zero-sized file behind the range: the addresses stay taken and
	 * every access raises SIGBUS. */
	r = sys(c, SYS_mmap, &res, (long)ref->start, (long)(ref->end - ref->start), ref->prot,
		MAP_SHARED | MAP_FIXED, memfd, 0);
	if (r < 0)
		return r;
	if (res < 0 && res > -4096)
		return (int)res;
	if ((uint64_t)res != ref->start)
		return -EFAULT;
	return 0;
}

static void set_outcome(struct revoke_ref *ref, int r, int *first)
{
	ref->state = r < 0 ? REVOKE_STATE_FAILED : REVOKE_STATE_CUT;
	ref->error = r < 0 ? -r : 0;
	if (r < 0 && *first == 0)
		*first = r;
}

int rv_cut_holder(struct rv_holder *h, struct rv_tracee *t)
{
	struct cutter c = {.h = h, .t = t};
	long dead = -1, memfd = -1;
	int dead_r = 0, memfd_r = 0, first = 0, r;

	if (!h)
		return -EINVAL;
	for (size_t i = 0; i < h->pub.nrefs; i++) {
		struct revoke_ref *ref = &h->pub.refs[i];

		if (ref->state != REVOKE_STATE_FOUND)
			continue;
		if (c.broken) {
			set_outcome(ref, c.broken, &first);
			continue;
		}
		switch (ref->type) {
		case REVOKE_REF_FD:
			if (dead < 0 && dead_r == 0)
				dead_r = open_dead(&c, &dead);
			r = dead_r < 0 ? dead_r : cut_fd(&c, dead, ref);
			break;
		case REVOKE_REF_MAP:
			if (memfd < 0 && memfd_r == 0)
				memfd_r = open_sigbus_file(&c, &memfd);
			r = memfd_r < 0 ? memfd_r : cut_map(&c, memfd, ref);
			break;
		default:
			r = -EOPNOTSUPP; /* the engine marks these before a cut */
			break;
		}
		set_outcome(ref, c.broken ? c.broken : r, &first);
	}
	if (dead >= 0)
		close_in_holder(&c, dead);
	if (memfd >= 0)
		close_in_holder(&c, memfd);
	return first;
}
