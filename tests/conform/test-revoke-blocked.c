/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance: a call already blocked on the file when revoke() runs does
 * not stay attached to it. The holder's read() on an empty FIFO fails with
 * EBADF once revoke() has returned, and bytes written to the FIFO afterwards
 * never reach it: they are still in the FIFO for the next opener.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "revoke.h"
#include "call.h"
#include "fork.h"
#include "proc.h"
#include "scratch.h"
#include "victim.h"

#define FIFO   "/tmp/fifo"
#define SECRET "secret"

/* READER blocks in read() of FD; revoke; write SECRET; the
 * read must fail and SECRET must come back to us. */
static void blocked_read(struct victim *reader, int fd)
{
	struct victim_res r;
	char buf[64];
	int wfd;

	victim_send(reader, VICTIM_REQ(.op = VOP_READ, .fd = fd, .len = 64));
	/* reader->pid is the reading thread's id (a process's: its pid). */
	CHECK(victim_wait_syscall(reader->pid, SYS_read) == 0,
	      "the victim never blocked in read()");
	CHECK(test_revoke(FIFO) == 0, "revoke(%s): %m", FIFO);
	/* Opened after revoke(), so it is nobody's to cut. O_RDWR: no wait
	 * for a peer, and we can read our own bytes back. */
	wfd = open(FIFO, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	CHECK(wfd >= 0, "open %s: %m", FIFO);
	CHECK(write(wfd, SECRET, strlen(SECRET)) == (ssize_t)strlen(SECRET), "write: %m");
	r = victim_recv(reader);
	CHECK(r.ret == -1 && r.err == EBADF,
	      "the blocked read returned %ld errno %d (%s), expected -1 EBADF", r.ret, r.err,
	      strerror(r.err));
	CHECK(r.len == 0, "the revoked reader received %zu bytes", r.len);
	CHECK(read(wfd, buf, sizeof(buf)) == (ssize_t)strlen(SECRET) &&
		  memcmp(buf, SECRET, strlen(SECRET)) == 0,
	      "the bytes written after revoke were not all left in the FIFO");
	close(wfd);
}

static void blocked_fifo_read_ebadf(void)
{
	struct victim v;
	int fd;

	test_scratch();
	CHECK(mkfifo(FIFO, 0600) == 0, "mkfifo: %m");
	victim_start(&v);
	/* O_RDWR: the victim is its own writer, so the read blocks instead of
	 * seeing EOF, and the open does not wait for a peer. */
	fd = victim_open(&v, FIFO, O_RDWR);
	blocked_read(&v, fd);
}

/* A thread other than the main one blocked in read(); the main thread sits
 * in recv() on its own socket. */
static void blocked_fifo_read_in_thread_ebadf(void)
{
	struct victim v, t;
	struct victim_res r;
	int fd;

	test_scratch();
	CHECK(mkfifo(FIFO, 0600) == 0, "mkfifo: %m");
	victim_start(&v);
	fd = victim_open(&v, FIFO, O_RDWR);
	victim_spawn(&v, VOP_THREAD, &t);
	r = victim_call(&t, VICTIM_REQ(.op = VOP_PING));
	CHECK(r.tid != v.pid, "the thread victim is the main thread");
	t.pid = r.tid; /* blocked_read() watches this thread */
	blocked_read(&t, fd);
}

/* clang-format off */
TEST_MAIN("revoke-blocked",
	  {"blocked_fifo_read_ebadf", blocked_fifo_read_ebadf, 0},
	  {"blocked_fifo_read_in_thread_ebadf", blocked_fifo_read_in_thread_ebadf, 0},
)
/* clang-format on */
