/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by test-unit-ptrace.c and test-unit-cut.c: victims and shortcuts.
 * Every victim is a forked child of the case with PR_SET_PDEATHSIG, driven
 * over pipes: IN (test -> victim), OUT (victim -> test).
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
#include "harness.h"
#include "internal.h"

struct victim {
	pid_t pid;
	int in, out; /* the test's ends */
};

static void (*victim_fn)(int in, int out);

static inline void victim_start(struct victim *v, void (*fn)(int in, int out))
{
	int a[2], b[2];
	pid_t parent = getpid();

	CHECK(pipe2(a, O_CLOEXEC) == 0 && pipe2(b, O_CLOEXEC) == 0, "pipe: %m");
	victim_fn = fn;
	v->pid = fork();
	CHECK(v->pid >= 0, "fork: %m");
	if (v->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		close(a[1]);
		close(b[0]);
		victim_fn(a[0], b[1]);
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	v->in = a[1];
	v->out = b[0];
}

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

static inline void sleep_ms(unsigned int ms)
{
	nanosleep(&(struct timespec){ms / 1000, (long)(ms % 1000) * 1000000}, NULL);
}

static inline char task_state(pid_t pid, pid_t tid);

/* Wait until thread TID of PID sleeps in syscall NR. */
static inline void wait_in_syscall(pid_t pid, pid_t tid, long nr)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	for (int i = 0; i < 5000; i++) {
		FILE *f = fopen(path, "re");
		long cur = -2;

		if (!f && nr == -1 && errno == ENOENT)
			return; /* the thread has exited */
		CHECK(f, "open %s: %m", path);
		if (fgets(buf, sizeof(buf), f) && buf[0] >= '0' && buf[0] <= '9')
			cur = strtol(buf, NULL, 10);
		fclose(f);
		/* nr -1: any syscall, with the thread asleep in it */
		if (cur == nr || (nr == -1 && cur >= 0 && task_state(pid, tid) == 'S'))
			return;
		sleep_ms(1);
	}
	test_fail("thread %d never blocked in syscall %ld", tid, nr);
}

static inline char task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[1024];
	struct rv_proc_stat st;
	ssize_t l;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	l = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (l <= 0)
		return '?';
	buf[l] = '\0';
	return rv_parse_stat(buf, &st) == 0 ? st.state : '?';
}

static inline int tracer_of(pid_t pid)
{
	char path[64], buf[4096];
	struct rv_proc_status st;
	ssize_t l;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open %s: %m", path);
	l = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	CHECK(l > 0, "read status");
	buf[l] = '\0';
	CHECK(rv_parse_status(buf, &st) == 0, "parse status");
	return st.tracer;
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
