/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The conformance programs' family built on tests/lib: the case's target file
 * (tpath, in a scratch directory of the host's /tmp, tdir), a plain holder of
 * it that answers CMD_READ/CMD_QUIT and its CHECK_READS/CHECK_CUT checks, and
 * the wait for a victim asleep in a system call.
 *
 * Everything is static (inline), so each program gets its own copy of the
 * state (tdir, tpath).
 */
#ifndef REVOKE_TEST_CONFORM_H
#define REVOKE_TEST_CONFORM_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "call.h"
#include "fork.h"
#include "harness.h"
#include "msg.h"
#include "proc.h"
#include "revoke.h"
#include "scratch.h"
#include "victim.h"

static char tdir[64];	/* the case's scratch directory */
static char tpath[128]; /* the target file */

/* The case's scratch directory (tdir) and the target's path in it (tpath). */
static inline void make_scratch(void)
{
	test_scratch_dir(tdir, sizeof(tdir), "/tmp/revoke-conf2-XXXXXX");
	snprintf(tpath, sizeof(tpath), "%s/target", tdir);
}

/* Wait (up to 5 s) until thread TID of PID sleeps in syscall NR or ALT (-1: none). */
static inline bool wait_in_syscall(pid_t pid, pid_t tid, long nr, long alt)
{
	int r = proc_wait_syscall(pid, tid, nr, alt, "SD", 500, 10000);

	if (r < 0)
		fprintf(stderr, "  /proc/%d/task/%d/syscall: %ld (%s), state %c\n", (int)pid,
			(int)tid, proc_syscall(pid, tid), strerror(-r), task_state(pid, tid));
	return r == 0;
}

/* ---- a plain holder: opens the target and answers commands ---- */
enum { CMD_READ = 1, CMD_QUIT, CMD_GO };

static inline void holder_loop(int sock, int fd)
{
	for (int i = 0; i < 10000; i++) {
		struct msg m = msg_wait(sock);
		char b[8] = {0};
		ssize_t r;

		if (m.v[0] == CMD_QUIT)
			_exit(0);
		if (m.v[0] != CMD_READ)
			continue;
		errno = 0;
		r = pread(fd, b, 5, 0);
		send_msg(sock, MSG(r, r < 0 ? errno : 0, b[0]));
	}
	_exit(4);
}

static inline void holder_main(int sock)
{
	int fd = open(tpath, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid(), fd));
	holder_loop(sock, fd);
}

/* Ask a holder to pread its descriptor: v[0] result, v[1] errno, v[2] first byte. */
static inline struct msg ask_read(const struct victim *v)
{
	send_msg(v->sock, MSG(CMD_READ));
	return recv_msg(v);
}

/* Check that holder V still reads the target's first bytes ("hello"). */
#define CHECK_READS(vic)                                                                           \
	do {                                                                                       \
		struct msg m_ = ask_read(vic);                                                     \
		CHECK(m_.v[0] == 5 && m_.v[2] == 'h',                                              \
		      "holder %d: read gave %lld (%s), not 5 bytes", (int)(vic)->pid,              \
		      (long long)m_.v[0], strerror((int)m_.v[1]));                                 \
	} while (0)

/* Check that holder V's descriptor was cut: pread fails with EBADF. */
#define CHECK_CUT(vic)                                                                             \
	do {                                                                                       \
		struct msg m_ = ask_read(vic);                                                     \
		CHECK(m_.v[0] == -1 && m_.v[1] == EBADF,                                           \
		      "holder %d: read gave %lld (%s), expected EBADF", (int)(vic)->pid,           \
		      (long long)m_.v[0], strerror((int)m_.v[1]));                                 \
	} while (0)

#endif /* REVOKE_TEST_CONFORM_H */
