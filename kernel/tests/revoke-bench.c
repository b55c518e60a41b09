/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fast-path cost of the revoke patches on files that are never revoked.
 *
 * kernel/run-tests --bench boots the patched and the unpatched kernel with the
 * same initramfs under QEMU with -icount shift=0: the guest clock advances by
 * 1 ns per guest instruction executed, so "ns per op" here is the number of
 * guest instructions per operation (user and kernel, plus the amortized share
 * of timer interrupts), deterministic rather than host-dependent.
 *
 * Loops, each the best of RUNS runs:
 *   getppid            control: bare system call entry/exit
 *   read16, write16    read()/write() of 16 bytes on a tmpfs file opened with
 *                      O_NOATIME (sequential over 64 KiB of existing pages,
 *                      lseek to 0 every 4096 ops)
 *   pread16, pwrite16  the same at offset 0
 *   pipe-write+read16  one write() then one read() of 16 bytes on one pipe
 *   open+close         EXPECTED TO COST MORE on the patched kernel: open puts the
 *                      file on its inode's list, the last close takes it off
 *                      (a spin_lock/unlock of i_lock each)
 *   pipe+close         EXPECTED TO COST MORE too: pipe() creates two files (both
 *                      listed on the pipe's inode when installed), close of each
 *                      unlists it
 *   devnull-read16, devzero-read16
 *                      read() on /dev/null (end of file) and of 16 bytes of
 *                      /dev/zero: EXPECTED TO COST MORE on the patched kernel,
 *                      devices are drained: fdget() takes its slow path (a
 *                      reference and an f_active count, with a full barrier)
 *   uring-read16, uring-devzero-read16
 *                      one io_uring read of 16 bytes (the tmpfs file at offset
 *                      0, /dev/zero) through a registered (fixed) file, submit
 *                      and wait: the fixed-file lookup tests f_mode, and for a
 *                      device counts the request in f_active (two atomics);
 *                      built only with liburing
 * Each timed loop starts after a 20 ms sleep, so that deferred work of the
 * previous one (RCU callbacks freeing files, dentries, inodes) runs outside it;
 * with QEMU's sleep=off the idle time costs nothing.
 * Output lines: "BENCH name best_ns_per_op worst_ns_per_op".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

enum { N = 20000, RUNS = 5, FILE_OPS = 4096, OPLEN = 16 };

static int fd, p[2], devnull, devzero;
static char buf[OPLEN];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int l_getppid(int n)
{
	for (int i = 0; i < n; i++)
		getppid();
	return 0;
}

static int l_read(int n)
{
	for (int i = 0; i < n; i++) {
		if (i % FILE_OPS == 0 && lseek(fd, 0, SEEK_SET) != 0)
			return -1;
		if (read(fd, buf, OPLEN) != OPLEN)
			return -1;
	}
	return 0;
}

static int l_write(int n)
{
	for (int i = 0; i < n; i++) {
		if (i % FILE_OPS == 0 && lseek(fd, 0, SEEK_SET) != 0)
			return -1;
		if (write(fd, buf, OPLEN) != OPLEN)
			return -1;
	}
	return 0;
}

static int l_pread(int n)
{
	for (int i = 0; i < n; i++)
		if (pread(fd, buf, OPLEN, 0) != OPLEN)
			return -1;
	return 0;
}

static int l_pwrite(int n)
{
	for (int i = 0; i < n; i++)
		if (pwrite(fd, buf, OPLEN, 0) != OPLEN)
			return -1;
	return 0;
}

static int l_pipe_rw(int n)
{
	for (int i = 0; i < n; i++)
		if (write(p[1], buf, OPLEN) != OPLEN || read(p[0], buf, OPLEN) != OPLEN)
			return -1;
	return 0;
}

static int l_open_close(int n)
{
	for (int i = 0; i < n; i++) {
		int f = open("/tmp/bench", O_RDONLY);
		if (f < 0 || close(f) < 0)
			return -1;
	}
	return 0;
}

static int l_pipe_close(int n)
{
	for (int i = 0; i < n; i++) {
		int q[2];
		if (pipe(q) < 0 || close(q[0]) < 0 || close(q[1]) < 0)
			return -1;
	}
	return 0;
}

static int l_dev_read(int dev, ssize_t want, int n)
{
	for (int i = 0; i < n; i++)
		if (read(dev, buf, OPLEN) != want)
			return -1;
	return 0;
}

static int l_devnull(int n)
{
	return l_dev_read(devnull, 0, n);
}

static int l_devzero(int n)
{
	return l_dev_read(devzero, OPLEN, n);
}

#ifdef HAVE_LIBURING
static struct io_uring ring;

/* Registered files: 0 the tmpfs file, 1 /dev/zero. */
static int l_uring(int slot, int n)
{
	for (int i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct io_uring_cqe *cqe;

		io_uring_prep_read(sqe, slot, buf, OPLEN, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		if (io_uring_submit_and_wait(&ring, 1) != 1 || io_uring_peek_cqe(&ring, &cqe) ||
		    cqe->res != OPLEN)
			return -1;
		io_uring_cqe_seen(&ring, cqe);
	}
	return 0;
}

static int l_uring_file(int n)
{
	return l_uring(0, n);
}

static int l_uring_devzero(int n)
{
	return l_uring(1, n);
}
#endif

static const struct {
	const char *name;
	int (*loop)(int n);
	int n;
} loops[] = {
    {"getppid", l_getppid, N},
    {"read16", l_read, N},
    {"write16", l_write, N},
    {"pread16", l_pread, N},
    {"pwrite16", l_pwrite, N},
    {"pipe-write+read16", l_pipe_rw, N},
    {"open+close", l_open_close, N / 4},
    {"pipe+close", l_pipe_close, N / 4},
    {"devnull-read16", l_devnull, N},
    {"devzero-read16", l_devzero, N},
#ifdef HAVE_LIBURING
    {"uring-read16", l_uring_file, N / 4},
    {"uring-devzero-read16", l_uring_devzero, N / 4},
#endif
};
enum { NLOOPS = sizeof(loops) / sizeof(loops[0]) };

int main(void)
{
	static char file[FILE_OPS * OPLEN];
	memset(file, 'x', sizeof(file));
	memset(buf, 'y', sizeof(buf));
	/*
	 * O_NOATIME: with relatime, every read compares mtime and ctime with
	 * atime, and timespec64_compare() stops at tv_sec when the seconds
	 * differ: the read loops would cost 8 instructions per op less whenever
	 * a wall-clock second boundary happened to fall between the last write
	 * and the first read, which depends on how many instructions each
	 * kernel executed since boot, not on the code being measured.
	 */
	fd = open("/tmp/bench", O_RDWR | O_CREAT | O_TRUNC | O_NOATIME, 0644);
	devnull = open("/dev/null", O_RDONLY);
	devzero = open("/dev/zero", O_RDONLY);
	if (fd < 0 || write(fd, file, sizeof(file)) != sizeof(file) || pipe(p) < 0 || devnull < 0 ||
	    devzero < 0) {
		perror("revoke-bench: setup");
		return 1;
	}
#ifdef HAVE_LIBURING
	int files[2] = {fd, devzero};
	if (io_uring_queue_init(8, &ring, 0) || io_uring_register_files(&ring, files, 2)) {
		perror("revoke-bench: io_uring");
		return 1;
	}
#endif
	double best[NLOOPS], worst[NLOOPS];
	for (int k = 0; k < NLOOPS; k++)
		best[k] = 1e30, worst[k] = 0;
	/* Runs interleave the loops; a first short pass faults everything in. */
	for (int r = -1; r < RUNS; r++) {
		for (int k = 0; k < NLOOPS; k++) {
			int n = r < 0 ? 100 : loops[k].n;
			usleep(20000); /* the previous loop's RCU work, see above */
			double t0 = now();
			if (loops[k].loop(n) < 0) {
				perror(loops[k].name);
				return 1;
			}
			double v = (now() - t0) / n;
			if (r < 0)
				continue;
			if (v < best[k])
				best[k] = v;
			if (v > worst[k])
				worst[k] = v;
		}
	}
	for (int k = 0; k < NLOOPS; k++)
		printf("BENCH %s %.1f %.1f\n", loops[k].name, best[k], worst[k]);
	close(fd);
	unlink("/tmp/bench");
	return 0;
}
