/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance: holders in other namespaces are holders too. A victim that is
 * pid 1 of its own pid namespace, in its own mount namespace, is cut; and a
 * file only its mount namespace can see is revoked through /proc/PID/root.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
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

/*
 * Fork an intermediate that unshares a pid and a mount namespace, runs
 * SETUP(path) in them, and forks the victim: pid 1 of the new pid namespace.
 * Returns the intermediate's pid (in our namespace); V->pid stays 0.
 */
static pid_t ns_victim(struct victim *v, void (*setup)(void))
{
	int sp[2];
	pid_t mid;

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0, "socketpair: %m");
	mid = test_fork();
	CHECK(mid >= 0, "fork: %m");
	if (mid == 0) {
		pid_t pid;
		int status;

		close(sp[0]);
		if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0)
			test_fail("unshare(CLONE_NEWPID|CLONE_NEWNS): %m");
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			test_fail("make / private: %m");
		if (setup)
			setup();
		pid = test_fork();
		if (pid == 0)
			victim_become(sp[1]);
		close(sp[1]);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(sp[1]);
	v->sock = sp[0];
	v->pid = 0;
	return mid;
}

static void check_is_ns_init(struct victim *v)
{
	struct victim_res r = victim_call(v, VICTIM_REQ(.op = VOP_PING));

	CHECK(r.ret == 1, "the victim is pid %ld in its namespace, not 1", r.ret);
}

static void pid_and_mount_ns_victim_cut(void)
{
	struct victim v;
	struct victim_res r;
	int fd;

	test_scratch();
	test_write_file("/tmp/file", "data");
	ns_victim(&v, NULL);
	check_is_ns_init(&v);
	fd = victim_open(&v, "/tmp/file", O_RDONLY);
	CHECK(test_revoke("/tmp/file") == 0, "revoke: %m");
	r = victim_read(&v, fd, 4);
	CHECK(r.ret == -1 && r.err == EBADF,
	      "the victim in other namespaces: read ret %ld errno %d (%s), expected EBADF", r.ret,
	      r.err, strerror(r.err));
}

/* In the intermediate, in the new mount namespace: a file only it sees. */
static void private_mount(void)
{
	if (mount("priv", "/tmp/priv", "tmpfs", 0, NULL) < 0)
		test_fail("mount tmpfs: %m");
	test_write_file("/tmp/priv/file", "hidden");
}

static void private_mount_via_proc_root(void)
{
	struct victim v;
	struct victim_res r;
	struct stat st;
	char path[96];
	pid_t mid;
	int fd;

	test_scratch();
	CHECK(mkdir("/tmp/priv", 0755) == 0, "mkdir: %m");
	mid = ns_victim(&v, private_mount);
	check_is_ns_init(&v);
	fd = victim_open(&v, "/tmp/priv/file", O_RDONLY);
	CHECK(stat("/tmp/priv/file", &st) < 0 && errno == ENOENT,
	      "the victim's mount is visible here: the case proves nothing");
	snprintf(path, sizeof(path), "/proc/%d/root/tmp/priv/file", (int)mid);
	CHECK(test_revoke(path) == 0, "revoke(%s): %m", path);
	r = victim_read(&v, fd, 6);
	CHECK(r.ret == -1 && r.err == EBADF,
	      "the file in a private mount: read ret %ld errno %d (%s), expected EBADF", r.ret,
	      r.err, strerror(r.err));
}

/* The same inode through a bind mount at another path. */
static void bind_mount_holder_cut(void)
{
	struct victim v;
	struct victim_res r;
	int fd;

	test_scratch();
	CHECK(mkdir("/tmp/a", 0755) == 0 && mkdir("/tmp/b", 0755) == 0, "mkdir: %m");
	test_write_file("/tmp/a/file", "data");
	CHECK(mount("/tmp/a", "/tmp/b", NULL, MS_BIND, NULL) == 0, "bind mount: %m");
	victim_start(&v);
	fd = victim_open(&v, "/tmp/b/file", O_RDONLY);
	CHECK(test_revoke("/tmp/a/file") == 0, "revoke: %m");
	r = victim_read(&v, fd, 4);
	CHECK(r.ret == -1 && r.err == EBADF,
	      "the holder through a bind mount: read ret %ld errno %d (%s), expected EBADF", r.ret,
	      r.err, strerror(r.err));
}

/* clang-format off */
TEST_MAIN("revoke-ns",
	  {"pid_and_mount_ns_victim_cut", pid_and_mount_ns_victim_cut, 0},
	  {"private_mount_via_proc_root", private_mount_via_proc_root, 0},
	  {"bind_mount_holder_cut", bind_mount_holder_cut, 0},
)
/* clang-format on */
