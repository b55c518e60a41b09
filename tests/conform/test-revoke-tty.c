/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance: terminals. A process blocked reading a pty slave never gets
 * what is typed after revoke() (the point of revoke() on BSD: a new login
 * must not be read by the old session). Then revoke() hangs the terminal up
 * (TIOCVHANGUP, needs CAP_SYS_ADMIN) so that open files of it that no fd
 * table names as the slave, like one opened through /dev/tty, read 0 and
 * write EIO; not with REVOKE_NO_HANGUP, and not for frevoke().
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#include "terminal.h"
#include "scratch.h"
#include "victim.h"

static void blocked_reader_never_sees_secret(void)
{
	char slave[64];
	struct victim v;
	struct victim_res r;
	int m = test_pty(slave, sizeof(slave)), fd;

	victim_start(&v);
	fd = victim_open(&v, slave, O_RDWR | O_NOCTTY);
	victim_send(&v, VICTIM_REQ(.op = VOP_READ, .fd = fd, .len = 64));
	CHECK(victim_wait_syscall(v.pid, SYS_read) == 0, "the victim never blocked in read()");
	CHECK(test_revoke(slave) == 0, "revoke(%s): %m", slave);
	CHECK(write(m, "secret\n", 7) == 7 || errno == EIO, "write to the master: %m");
	r = victim_recv(&v);
	CHECK((r.ret == -1 && r.err == EBADF) || r.ret == 0,
	      "the revoked reader's read returned %ld errno %d (%s)", r.ret, r.err,
	      strerror(r.err));
	CHECK(r.len == 0 && !memmem(r.data, sizeof(r.data), "secret", 6),
	      "the revoked reader received the bytes typed after revoke");
}

/* A victim whose controlling terminal is the pty, holding the slave and an fd
 * opened through /dev/tty (whose inode is /dev/tty's, not the slave's). */
static int ctty_victim(struct victim *v, const char *slave)
{
	struct victim_res r;

	victim_start(v);
	/* The session leader gets SIGHUP on hangup; it must survive to tell. */
	r = victim_call(v, VICTIM_REQ(.op = VOP_SIGIGN, .arg = SIGHUP));
	CHECK(r.ret == 0, "signal(SIGHUP): %s", strerror(r.err));
	r = victim_call(v, VICTIM_REQ(.op = VOP_SETSID));
	CHECK(r.ret >= 0, "setsid: %s", strerror(r.err));
	victim_open(v, slave, O_RDWR); /* no O_NOCTTY: it becomes the controlling tty */
	/* O_NONBLOCK: a read that is not hung up fails with EAGAIN, not hangs. */
	return victim_open(v, "/dev/tty", O_RDWR | O_NONBLOCK);
}

static void need_cap_sys_admin(void)
{
	if (geteuid() != 0)
		SKIP("hanging up a terminal needs CAP_SYS_ADMIN");
}

static void hangup_reaches_dev_tty_fd(void)
{
	char slave[64];
	struct victim v;
	struct victim_res r;
	int tfd;

	need_cap_sys_admin();
	test_pty(slave, sizeof(slave));
	tfd = ctty_victim(&v, slave);
	r = victim_write(&v, tfd, "x");
	CHECK(r.ret == 1, "write through /dev/tty before revoke: %s", strerror(r.err));
	CHECK(test_revoke(slave) == 0, "revoke(%s): %m", slave);
	r = victim_read(&v, tfd, 16);
	CHECK(r.ret == 0, "read through /dev/tty after hangup: ret %ld errno %d (%s), expected 0",
	      r.ret, r.err, strerror(r.err));
	r = victim_write(&v, tfd, "x");
	CHECK(r.ret == -1 && r.err == EIO,
	      "write through /dev/tty after hangup: ret %ld errno %d (%s), expected EIO", r.ret,
	      r.err, strerror(r.err));
}

static void no_hangup_flag_keeps_dev_tty_fd(void)
{
	const char *paths[1];
	struct revoke_opts o = {.sz = sizeof(o), .flags = REVOKE_NO_HANGUP, .keep_fd = -1};
	char slave[64];
	struct victim v;
	struct victim_res r;
	int tfd;

	test_pty(slave, sizeof(slave));
	tfd = ctty_victim(&v, slave);
	paths[0] = slave;
	CHECK(test_revoke_ex(paths, 1, &o, NULL) == 0, "revoke_ex(%s, NO_HANGUP): %m", slave);
	r = victim_write(&v, tfd, "x");
	/* The native syscalls hang a terminal up themselves, flag or not. */
	if (engine_native())
		CHECK(r.ret == -1 && r.err == EIO,
		      "write through /dev/tty after a native revoke: ret %ld errno %s", r.ret,
		      strerror(r.err));
	else
		CHECK(r.ret == 1, "write through /dev/tty with REVOKE_NO_HANGUP: ret %ld errno %s",
		      r.ret, strerror(r.err));
}

static void frevoke_does_not_hang_up(void)
{
	char slave[64];
	struct victim v;
	struct victim_res r;
	int tfd, s;

	need_cap_sys_admin(); /* else there would be no hangup to miss */
	test_pty(slave, sizeof(slave));
	tfd = ctty_victim(&v, slave);
	s = open(slave, O_RDWR | O_NOCTTY | O_CLOEXEC);
	CHECK(s >= 0, "open %s: %m", slave);
	CHECK(test_frevoke(s) == 0, "frevoke(%s): %m", slave);
	r = victim_write(&v, tfd, "x");
	/* The native frevoke() hangs the terminal up, the kept fd too until the
	 * terminal is opened again. */
	if (engine_native()) {
		CHECK(r.ret == -1 && r.err == EIO,
		      "write through /dev/tty after a native frevoke: ret %ld errno %s", r.ret,
		      strerror(r.err));
		CHECK(open(slave, O_RDWR | O_NOCTTY | O_CLOEXEC) >= 0, "reopen %s: %m", slave);
	} else {
		CHECK(r.ret == 1, "write through /dev/tty after frevoke: ret %ld errno %s", r.ret,
		      strerror(r.err));
	}
	CHECK(write(s, "y", 1) == 1, "the kept slave fd: %m");
}

/* clang-format off */
TEST_MAIN("revoke-tty",
	  {"blocked_reader_never_sees_secret", blocked_reader_never_sees_secret, 0},
	  {"hangup_reaches_dev_tty_fd", hangup_reaches_dev_tty_fd, 0},
	  {"no_hangup_flag_keeps_dev_tty_fd", no_hangup_flag_keeps_dev_tty_fd, 0},
	  {"frevoke_does_not_hang_up", frevoke_does_not_hang_up, 0},
)
/* clang-format on */
