/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance: revoke() works on every kind of file (like NetBSD's, unlike
 * FreeBSD's devices-only one): regular files, directories, FIFOs (both ends),
 * character and block devices, socket inodes, and sockets named through
 * /proc/PID/fd/N. The file is the inode the path names: a device node of our
 * own for a device does not reach other nodes of the same device.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
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
#include "device.h"
#include "proc.h"
#include "terminal.h"
#include "scratch.h"
#include "victim.h"

#define CHECK_EBADF(r, what)                                                                       \
	CHECK((r).ret == -1 && (r).err == EBADF, "%s on the revoked fd: ret %ld errno %d (%s)",    \
	      what, (r).ret, (r).err, strerror((r).err))

#define CHECK_REVOKE(path) CHECK(test_revoke(path) == 0, "revoke(%s): %m", path)

/* The victim's fd's file type, or 0 when fstat() fails with EBADF: the
 * contract lets a revoked fd answer fstat() or not, never with the file. */
static mode_t victim_fd_mode(struct victim *v, int fd)
{
	struct victim_res r = victim_call(v, VICTIM_REQ(.op = VOP_FSTAT, .fd = fd));

	if (r.ret == -1 && r.err == EBADF)
		return 0;
	CHECK(r.ret == 0, "fstat in the victim: %s", strerror(r.err));
	return ((struct stat *)r.data)->st_mode & S_IFMT;
}

static void regular_file(void)
{
	struct victim v;
	struct victim_res r;
	int fd;

	test_scratch();
	test_write_file("/tmp/file", "data");
	victim_start(&v);
	fd = victim_open(&v, "/tmp/file", O_RDONLY);
	CHECK_REVOKE("/tmp/file");
	r = victim_read(&v, fd, 4);
	CHECK_EBADF(r, "read");
}

static void directory_getdents_ebadf(void)
{
	struct victim v;
	struct victim_res r;
	int fd;

	test_scratch();
	CHECK(mkdir("/tmp/dir", 0755) == 0, "mkdir: %m");
	test_write_file("/tmp/dir/entry", "x");
	victim_start(&v);
	fd = victim_open(&v, "/tmp/dir", O_RDONLY | O_DIRECTORY);
	r = victim_call(&v, VICTIM_REQ(.op = VOP_GETDENTS, .fd = fd));
	CHECK(r.ret > 0, "getdents64 before revoke: %s", strerror(r.err));
	CHECK_REVOKE("/tmp/dir");
	r = victim_call(&v, VICTIM_REQ(.op = VOP_GETDENTS, .fd = fd));
	CHECK_EBADF(r, "getdents64");
}

static void fifo_reader_and_writer_cut(void)
{
	struct victim rv, wv;
	struct victim_res r;
	int rfd, wfd;

	test_scratch();
	CHECK(mkfifo("/tmp/fifo", 0600) == 0, "mkfifo: %m");
	victim_start(&rv);
	victim_start(&wv);
	rfd = victim_open(&rv, "/tmp/fifo", O_RDONLY | O_NONBLOCK);
	wfd = victim_open(&wv, "/tmp/fifo", O_WRONLY | O_NONBLOCK);
	r = victim_write(&wv, wfd, "ab");
	CHECK(r.ret == 2, "write before revoke: %s", strerror(r.err));
	CHECK_REVOKE("/tmp/fifo");
	r = victim_read(&rv, rfd, 2);
	CHECK_EBADF(r, "read (the reader)");
	r = victim_write(&wv, wfd, "cd");
	CHECK_EBADF(r, "write (the writer)");
}

static void char_device(void)
{
	char slave[64];
	struct victim v;
	struct victim_res r;
	dev_t rdev;
	int fd, node, other;

	test_scratch();
	/* A device no one else holds, under a node of our own too: a revoke
	 * of a shared device's node (/dev/kmsg) would reach every other node of
	 * it, the loggers' (revoke-alias). The shared devices (/dev/null...) are
	 * refused: revoke-errors. */
	rdev = test_unheld_device();
	CHECK(mknod("/tmp/dev", S_IFCHR | 0600, rdev) == 0, "mknod: %m");
	test_pty(slave, sizeof(slave));
	victim_start(&v);
	fd = victim_open(&v, "/tmp/dev", O_RDWR);
	node = victim_open(&v, TEST_DEVICE, O_RDWR);
	other = victim_open(&v, slave, O_RDWR | O_NOCTTY);
	r = victim_read(&v, fd, 4); /* the latency requested: a 32-bit value */
	CHECK(r.ret == 4, "read of the device before revoke: %s", strerror(r.err));
	CHECK_REVOKE("/tmp/dev");
	r = victim_read(&v, fd, 4);
	CHECK_EBADF(r, "read");
	r = victim_write(&v, fd, "1");
	CHECK_EBADF(r, "write");
	/* The device is one file whatever node opened it. */
	r = victim_read(&v, node, 4);
	CHECK_EBADF(r, "read through the device's own node");
	r = victim_write(&v, other, "d\n");
	CHECK(r.ret == 2, "the victim's fd of another device (%s) was touched: %s", slave,
	      strerror(r.err));
}

/* Attach BACKING to a free loop device that detaches itself on last close;
 * returns our fd of it (/dev/loopN) and its number. */
static int loop_attach(const char *backing, int *ret_nr)
{
	int ctl, bfd, lfd = -1;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		SKIP("no /dev/loop-control (the kernel has no loop driver): %m");
	bfd = open(backing, O_RDWR | O_CLOEXEC);
	CHECK(bfd >= 0, "open %s: %m", backing);
	for (int i = 0; i < 20 && lfd < 0; i++) { /* others may take the free one first */
		struct loop_config cfg = {.fd = (unsigned int)bfd};
		char dev[64];
		int nr = ioctl(ctl, LOOP_CTL_GET_FREE);

		CHECK(nr >= 0, "LOOP_CTL_GET_FREE: %m");
		snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
		lfd = open(dev, O_RDWR | O_CLOEXEC);
		CHECK(lfd >= 0, "open %s: %m", dev);
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0) {
			*ret_nr = nr;
			break;
		}
		CHECK(errno == EBUSY, "LOOP_CONFIGURE %s: %m", dev);
		close(lfd);
		lfd = -1;
	}
	CHECK(lfd >= 0, "no free loop device");
	close(bfd);
	close(ctl);
	return lfd;
}

static void block_device(void)
{
	static char block[4096];
	struct victim v;
	struct victim_res r;
	int lfd, nr, fd;

	test_scratch();
	memset(block, 'B', sizeof(block));
	{
		int bfd = open("/tmp/backing", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		CHECK(bfd >= 0, "create backing file: %m");
		for (int i = 0; i < 256; i++) /* 1 MiB */
			CHECK(write(bfd, block, sizeof(block)) == sizeof(block), "write: %m");
		close(bfd);
	}
	/* Detached automatically when the last fd closes (AUTOCLEAR): ours when
	 * this case's process exits, however it exits. */
	lfd = loop_attach("/tmp/backing", &nr);
	/* A node of our own: the device is ours, nobody else holds it. */
	CHECK(mknod("/tmp/blk", S_IFBLK | 0600, makedev(7, nr)) == 0, "mknod: %m");
	victim_start(&v);
	fd = victim_open(&v, "/tmp/blk", O_RDONLY);
	r = victim_read(&v, fd, 16);
	CHECK(r.ret == 16 && r.data[0] == 'B', "read of the block device before revoke: %s",
	      strerror(r.err));
	CHECK_REVOKE("/tmp/blk");
	r = victim_read(&v, fd, 16);
	CHECK_EBADF(r, "read");
	/* Ours, of the device's own node /dev/loopN, is cut too: one device
	 * whatever node opened it. */
	errno = 0;
	CHECK(pread(lfd, block, 16, 0) < 0 && errno == EBADF,
	      "our fd of /dev/loop%d, another node of the device, was not cut: %m", nr);
	close(lfd);
}

static void socket_inode_opath_cut(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = "/tmp/sock"};
	struct victim v;
	int s, fd;

	test_scratch();
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(s >= 0, "socket: %m");
	CHECK(bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0, "bind: %m");
	CHECK(listen(s, 1) == 0, "listen: %m");
	victim_start(&v);
	fd = victim_open(&v, "/tmp/sock", O_PATH);
	CHECK(S_ISSOCK(victim_fd_mode(&v, fd)), "the victim's O_PATH fd is no socket inode");
	CHECK_REVOKE("/tmp/sock");
	CHECK(!S_ISSOCK(victim_fd_mode(&v, fd)),
	      "the victim's O_PATH fd still refers to the socket inode");
}

static void socket_via_proc_fd_cut(void)
{
	struct victim v;
	struct victim_res r;
	char path[64];
	int s0, s1;

	victim_start(&v);
	r = victim_call(&v, VICTIM_REQ(.op = VOP_SOCKETPAIR));
	CHECK(r.ret >= 0, "socketpair: %s", strerror(r.err));
	s0 = (int)r.ret;
	memcpy(&s1, r.data, sizeof(int));
	r = victim_write(&v, s0, "ping");
	CHECK(r.ret == 4, "write to the socket before revoke: %s", strerror(r.err));
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)v.pid, s0);
	CHECK_REVOKE(path);
	r = victim_write(&v, s0, "ping");
	CHECK_EBADF(r, "write to the socket");
	CHECK(S_ISSOCK(victim_fd_mode(&v, s1)), "the peer socket (another inode) was cut");
	r = victim_read(&v, s1, 16);
	CHECK(r.ret == 4 && memcmp(r.data, "ping", 4) == 0,
	      "the peer lost what was sent before revoke: ret %ld %s", r.ret, strerror(r.err));
}

/* A memfd has no name but /proc/PID/fd/N; its fd and its mapping are cut. */
static void memfd_via_proc_fd(void)
{
	struct victim v;
	struct victim_res r;
	char path[64];
	long addr;
	int fd;

	victim_start(&v);
	r = victim_call(&v,
			VICTIM_REQ(.op = VOP_MEMFD, .path = "victim", .len = 4096, .data = "m"));
	CHECK(r.ret >= 0, "memfd_create: %s", strerror(r.err));
	fd = (int)r.ret;
	r = victim_call(&v, VICTIM_REQ(.op = VOP_MMAP, .fd = fd, .len = 4096, .prot = PROT_READ,
				       .flags = MAP_SHARED));
	CHECK(r.ret != -1, "mmap: %s", strerror(r.err));
	addr = r.ret;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)v.pid, fd);
	CHECK_REVOKE(path);
	r = victim_call(&v, VICTIM_REQ(.op = VOP_PREAD, .fd = fd, .len = 1, .arg = 0));
	CHECK_EBADF(r, "pread of the memfd");
	r = victim_call(&v, VICTIM_REQ(.op = VOP_LOAD, .arg = addr));
	CHECK(r.sig == SIGBUS, "load from the memfd mapping: signal %d value %ld", r.sig, r.ret);
}

/* On overlayfs a mapping's /proc/PID/maps dev:ino is the lower file's, not the
 * one stat() of the path gives: the holder must be found all the same. */
static void overlayfs_fd_and_mapping_cut(void)
{
	struct victim v, m;
	struct victim_res r;
	int fd, mfd;
	long addr;

	test_scratch();
	CHECK(mkdir("/tmp/lower", 0755) == 0 && mkdir("/tmp/upper", 0755) == 0 &&
		  mkdir("/tmp/work", 0755) == 0 && mkdir("/tmp/ovl", 0755) == 0,
	      "mkdir: %m");
	test_write_file("/tmp/lower/file", "lower data");
	if (mount("overlay", "/tmp/ovl", "overlay", 0,
		  "lowerdir=/tmp/lower,upperdir=/tmp/upper,workdir=/tmp/work") < 0) {
		CHECK(errno == ENODEV, "mount overlay: %m");
		SKIP("the kernel has no overlayfs");
	}
	victim_start(&v);
	fd = victim_open(&v, "/tmp/ovl/file", O_RDONLY);
	/* Another victim holds a mapping only. */
	victim_start(&m);
	mfd = victim_open(&m, "/tmp/ovl/file", O_RDONLY);
	r = victim_call(&m, VICTIM_REQ(.op = VOP_MMAP, .fd = mfd, .len = 4096, .prot = PROT_READ,
				       .flags = MAP_SHARED));
	CHECK(r.ret != -1, "mmap: %s", strerror(r.err));
	addr = r.ret;
	r = victim_call(&m, VICTIM_REQ(.op = VOP_CLOSE, .fd = mfd));
	CHECK(r.ret == 0, "close: %s", strerror(r.err));
	CHECK_REVOKE("/tmp/ovl/file");
	r = victim_read(&v, fd, 4);
	CHECK_EBADF(r, "read through overlayfs");
	r = victim_call(&m, VICTIM_REQ(.op = VOP_LOAD, .arg = addr));
	CHECK(r.sig == SIGBUS, "load from the overlayfs mapping: signal %d value %ld", r.sig,
	      r.ret);
}

/* clang-format off */
TEST_MAIN("revoke-types",
	  {"regular_file", regular_file, 0},
	  {"directory_getdents_ebadf", directory_getdents_ebadf, 0},
	  {"fifo_reader_and_writer_cut", fifo_reader_and_writer_cut, 0},
	  {"char_device", char_device, 0},
	  {"block_device", block_device, 0},
	  {"socket_inode_opath_cut", socket_inode_opath_cut, 0},
	  {"socket_via_proc_fd_cut", socket_via_proc_fd_cut, 0},
	  {"memfd_via_proc_fd", memfd_via_proc_fd, 0},
	  {"overlayfs_fd_and_mapping_cut", overlayfs_fd_and_mapping_cut, 0},
)
/* clang-format on */
