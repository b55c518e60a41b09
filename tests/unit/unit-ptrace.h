/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ptrace unit tests' family (test-unit-ptrace, -cut, -death, -sibling)
 * built on tests/lib: victims on two pipes (victim_start_pipes(): IN test ->
 * victim, OUT victim -> test), shortcuts into lib/tracee, and the common
 * victims.
 */
#ifndef REVOKE_TEST_UNIT_PTRACE_H
#define REVOKE_TEST_UNIT_PTRACE_H

#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>

#include "arch/arch.h"
#include "fork.h"
#include "harness.h"
#include "internal.h"
#include "proc.h"
#include "victim.h"

static inline void xwrite(int fd, const void *p, size_t n)
{
	CHECK(write(fd, p, n) == (ssize_t)n, "write: %m");
}

static inline void xread(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t l = read(fd, (char *)p + got, n - got);
		CHECK(l > 0 || (l < 0 && errno == EINTR), "read: %s",
		      l == 0 ? "EOF" : strerror(errno));
		if (l > 0)
			got += (size_t)l;
	}
}

static inline uint64_t after_ms(unsigned int ms)
{
	return rv_now_ns() + ms * 1000000ull;
}

/* Wait until thread TID of PID sleeps in syscall NR (-1: asleep in any). */
static inline void wait_in_syscall(pid_t pid, pid_t tid, long nr)
{
	int r = proc_wait_syscall(pid, tid, nr, -1, nr == -1 ? "S" : NULL, 5000, 1000);

	if (r == -ENOENT && nr == -1)
		return; /* the thread has exited */
	CHECK(r != -ENOENT, "open /proc/%d/task/%d/syscall: %s", pid, tid, strerror(-r));
	if (r < 0)
		test_fail("thread %d never blocked in syscall %ld", tid, nr);
}

/* TracerPid of PID; the case fails when it cannot be read. */
static inline int tracer_of(pid_t pid)
{
	long t = proc_status_field(pid, "TracerPid");

	CHECK(t >= 0, "read /proc/%d/status", pid);
	return (int)t;
}

static inline struct rv_tracee *stop(pid_t pid)
{
	struct rv_tracee *t = NULL;
	char reason[128];
	int r = rv_tracee_stop(pid, -1, after_ms(5000), &t, reason);

	CHECK(r == 0 && t, "rv_tracee_stop(%d) = %d (%s)", pid, r, reason);
	return t;
}

static inline long remote(struct rv_tracee *t, long nr, long a0, long a1, long a2)
{
	long res = 0;
	int r = rv_tracee_syscall(t, nr, &res, a0, a1, a2, 0, 0, 0);

	CHECK(r == 0, "rv_tracee_syscall(%ld) = %d", nr, r);
	return res;
}

static inline void release(struct rv_tracee *t)
{
	int r = rv_tracee_release(t);
	CHECK(r == 0, "rv_tracee_release = %d", r);
}

/* A holder with N refs, for rv_cut_holder. */
static inline struct rv_holder holder(pid_t pid, struct revoke_ref *refs, size_t n)
{
	struct rv_holder h = {.pidfd = -1};

	h.pub.pid = pid;
	h.pub.refs = refs;
	h.pub.nrefs = n;
	for (size_t i = 0; i < n; i++) {
		refs[i].state = REVOKE_STATE_FOUND;
		if (refs[i].type != REVOKE_REF_FD)
			refs[i].fd = -1;
	}
	return h;
}

static char tmpfile_path[64];

static inline int make_tmpfile(size_t size, char fill)
{
	char buf[4096];
	int fd;

	snprintf(tmpfile_path, sizeof(tmpfile_path), "/tmp/test-unit-ptrace-XXXXXX");
	fd = mkostemp(tmpfile_path, O_CLOEXEC);
	CHECK(fd >= 0, "mkostemp: %m");
	unlink(tmpfile_path);
	memset(buf, fill, sizeof(buf));
	for (size_t off = 0; off < size; off += sizeof(buf))
		xwrite(fd, buf, sizeof(buf));
	return fd;
}

/* ---- common victims ---------------------------------------------------------------- */

/* Echo loop: each byte read is answered by one byte (its pid on 'p'). */
static inline void v_echo(int in, int out)
{
	char c;

	while (read(in, &c, 1) == 1) {
		int v = c == 'p' ? getpid() : c;
		if (write(out, &v, sizeof(v)) != sizeof(v))
			break;
	}
}

/* Reports read(IN, 5 bytes): ret, errno, the bytes. */
static inline void v_read_once(int in, int out)
{
	struct {
		long ret;
		int err;
		char data[8];
	} rep = {0};

	rep.ret = read(in, rep.data, 5);
	rep.err = rep.ret < 0 ? errno : 0;
	xwrite(out, &rep, sizeof(rep));
}

#endif
