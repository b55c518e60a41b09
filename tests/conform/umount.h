/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fixture of the forced-unmount tests (test-revoke-umount.c; issue 10): real
 * filesystems made by the case inside its own namespaces, and what to look
 * at afterwards.
 *
 *   um_isolate()           first thing in a case: its own mount and pid
 *                          namespaces, /proc and /tmp
 *   um_ext4(MB)            an ext4 image UM_IMG, loop-mounted on UM_MNT
 *   um_mount_tmpfs(DIR)    a tmpfs (the submount)
 *   um_mount_id(PATH)      the id of the topmost mount at PATH in
 *                          /proc/self/mountinfo, or -1: proof of (un)mounting
 *   um_loop_of_mount(DIR)  "loopN", the device under DIR, for um_wait_loop_gone()
 *   um_fsck(IMG)           e2fsck -fn, which must find nothing
 *   um_loop_holder(FILE)   a loop device backed by FILE, gone with the case
 *   um_run(...)            a command (PATH includes the sbin directories),
 *                          killed after 60 s, its output kept for messages
 *
 * Everything a case mounts lives in its own mount namespace (um_isolate()),
 * so when the case fails (or the harness kills its process group) the
 * namespace dies with its last process and takes the mounts with it; the loop
 * devices made with `mount -o loop` or um_loop_holder() clear themselves
 * (LO_FLAGS_AUTOCLEAR) when their last user goes; um_isolate()'s outer process
 * swapoff()s the case's swap file, the one thing that outlives a namespace.
 */
#ifndef REVOKE_TEST_UMOUNT_H
#define REVOKE_TEST_UMOUNT_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "call.h"
#include "fork.h"
#include "harness.h"
#include "proc.h"
#include "revoke.h"
#include "scratch.h"
#include "victim.h"

#define UM_IMG	     "/tmp/img"
#define UM_MNT	     "/tmp/mnt"
#define UM_SUB	     UM_MNT "/sub"
#define UM_ELSEWHERE "/tmp/elsewhere"
#define UM_RO	     "/tmp/ro"

static char um_out[8192]; /* the output of the last um_run() */

static inline int um_run_argv(const char *const argv[])
{
	int p[2], status;
	size_t n = 0;
	pid_t pid;

	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe2: %m");
	pid = test_fork();
	CHECK(pid >= 0, "fork: %m");
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		dup2(null, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		alarm(60);
		setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
		setenv("LC_ALL", "C", 1);
		execvp(argv[0], (char **)argv);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		ssize_t k = read(p[0], um_out + n, sizeof(um_out) - 1 - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
		if (n == sizeof(um_out) - 1)
			n = 0; /* keep the tail of a long output */
	}
	um_out[n] = 0;
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0)
		CHECK(errno == EINTR, "waitpid: %m");
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

#define um_run(...) um_run_argv((const char *const[]){__VA_ARGS__, NULL})

/*
 * The case's own world: a mount namespace (propagation private: nothing it
 * mounts is seen elsewhere, everything goes when its last process does), a
 * pid namespace with its own /proc, and a tmpfs on /tmp. The case goes on in
 * a child, pid 1 of that pid namespace; the case's process waits for it, and
 * passes on its exit status.
 *
 * Why a pid namespace: a mount is scanned through /proc, and a process the
 * caller may not inspect makes a listing incomplete and a cut refuse with
 * EBUSY (unless best effort). On a machine with such a process (pid 1 of some
 * sandboxes, which not even root may inspect) every case would only prove
 * that rule, which tests/conform/test-revoke-fds.c covers; here the library sees the
 * case's processes only. Kernel users (swap, loop devices) are global anyway.
 *
 * The outer process also swapoff()s UM_MNT/swapfile when the case is over
 * (a swap file is the one thing that outlives a namespace); on its alarm
 * (the harness's timeout) it kills the case first.
 */
static pid_t um_inner;
static volatile sig_atomic_t um_timed_out;

static void um_outer_alarm(int sig)
{
	(void)sig;
	um_timed_out = 1;
	if (um_inner > 0)
		kill(um_inner, SIGKILL);
}

/* A tmpfs on /tmp; a build tree under /tmp (a clone in /tmp, as CI may make)
 * stays reachable through it, bound back at its place: the cases run
 * REVOKE_BUILDDIR/tools/revoke, which loads REVOKE_BUILDDIR/lib. */
static inline void um_keep_builddir_mounted(void)
{
	const char *b = REVOKE_BUILDDIR;
	bool under_tmp = strncmp(b, "/tmp/", 5) == 0;
	int keep = under_tmp ? open(b, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	char path[4096], src[64];

	/* Not there at all (the tests copied into a guest): nothing to keep. */
	if (under_tmp && keep < 0 && errno == ENOENT)
		under_tmp = false;
	CHECK(!under_tmp || keep >= 0, "open %s: %m", b);
	CHECK(mount("revoke-test", "/tmp", "tmpfs", 0, "mode=1777") == 0, "mount tmpfs: %m");
	if (!under_tmp)
		return;
	snprintf(path, sizeof(path), "%s", b);
	for (char *p = path + 5; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		CHECK(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s: %m", path);
		*p = '/';
	}
	CHECK(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s: %m", path);
	snprintf(src, sizeof(src), "/proc/self/fd/%d", keep);
	CHECK(mount(src, path, NULL, MS_BIND | MS_REC, NULL) == 0, "bind %s back: %m", b);
	close(keep);
}

static inline void um_isolate(void)
{
	struct sigaction sa = {.sa_handler = um_outer_alarm};
	int status;

	CHECK(unshare(CLONE_NEWNS | CLONE_NEWPID) == 0, "unshare(CLONE_NEWNS | CLONE_NEWPID): %m");
	CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "make / private: %m");
	um_inner = test_fork(); /* pid 1 of the new namespace */
	CHECK(um_inner >= 0, "fork: %m");
	if (um_inner == 0) {
		CHECK(mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0,
		      "mount a /proc of the new pid namespace: %m");
		um_keep_builddir_mounted();
		return;
	}
	sigaction(SIGALRM, &sa, NULL);
	while (waitpid(um_inner, &status, 0) < 0)
		if (errno != EINTR)
			_exit(1);
	swapoff(UM_MNT "/swapfile");
	fflush(NULL);
	if (um_timed_out) {
		signal(SIGALRM, SIG_DFL);
		raise(SIGALRM);
	}
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status));
	fprintf(stderr, "  the case died of signal %d\n", WTERMSIG(status));
	_exit(1);
}

/* The id of the topmost mount whose mount point is PATH in our namespace, or -1. */
static inline int um_mount_id(const char *path)
{
	int id = proc_mount_id(path);

	CHECK(id != -2, "open /proc/self/mountinfo: %m");
	return id;
}

/* The mount source ("/dev/loop3") of the topmost mount at PATH, or "". */
static inline void um_mount_source(const char *path, char *buf, size_t size)
{
	CHECK(proc_mount_source(path, buf, size) == 0, "open /proc/self/mountinfo: %m");
}

static inline bool um_have_loop(void)
{
	return access("/dev/loop-control", F_OK) == 0;
}

/* A file of SIZE bytes of zeros (not sparse). */
static inline void um_make_file(const char *path, size_t size, mode_t mode)
{
	static const char zeros[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	CHECK(fd >= 0, "create %s: %m", path);
	for (size_t off = 0; off < size;) {
		size_t k = size - off < sizeof(zeros) ? size - off : sizeof(zeros);
		ssize_t w = write(fd, zeros, k);

		CHECK(w > 0, "write %s: %m", path);
		off += (size_t)w;
	}
	CHECK(fsync(fd) == 0 && close(fd) == 0, "fsync/close %s: %m", path);
}

/* An ext4 image of MB MiB in UM_IMG, loop-mounted on UM_MNT. */
static inline void um_ext4(unsigned int mb)
{
	int fd, r;

	if (!um_have_loop())
		SKIP("no loop devices on this machine (/dev/loop-control is missing)");
	fd = open(UM_IMG, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0, "create %s: %m", UM_IMG);
	CHECK(ftruncate(fd, (off_t)mb << 20) == 0, "ftruncate: %m");
	close(fd);
	r = um_run("mkfs.ext4", "-q", "-F", UM_IMG);
	if (r == 127)
		SKIP("mkfs.ext4 is not installed (e2fsprogs)");
	CHECK(r == 0, "mkfs.ext4 %s: exit %d: %s", UM_IMG, r, um_out);
	CHECK(mkdir(UM_MNT, 0755) == 0 || errno == EEXIST, "mkdir %s: %m", UM_MNT);
	r = um_run("mount", "-o", "loop", UM_IMG, UM_MNT);
	CHECK(r == 0, "mount -o loop %s %s: exit %d: %s", UM_IMG, UM_MNT, r, um_out);
	CHECK(um_mount_id(UM_MNT) > 0, "%s is not in /proc/self/mountinfo after mount", UM_MNT);
}

static inline void um_mount_tmpfs(const char *dir)
{
	CHECK(mkdir(dir, 0755) == 0 || errno == EEXIST, "mkdir %s: %m", dir);
	CHECK(mount("revoke-umount-test", dir, "tmpfs", 0, "size=16m") == 0,
	      "mount tmpfs on %s: %m", dir);
}

static inline void um_bind(const char *from, const char *to)
{
	CHECK(mkdir(to, 0755) == 0 || errno == EEXIST, "mkdir %s: %m", to);
	CHECK(mount(from, to, NULL, MS_BIND, NULL) == 0, "bind %s on %s: %m", from, to);
}

static inline void um_mkdir(const char *dir)
{
	CHECK(mkdir(dir, 0755) == 0, "mkdir %s: %m", dir);
}

/* "loop3" for the mount at DIR (a `mount -o loop`), for um_wait_loop_gone(). */
static inline void um_loop_of_mount(const char *dir, char *name, size_t size)
{
	char src[256];

	um_mount_source(dir, src, sizeof(src));
	CHECK(strncmp(src, "/dev/loop", 9) == 0, "the source of %s is '%s', not a loop device", dir,
	      src);
	snprintf(name, size, "%s", src + 5);
}

/* The backing file of loop device NAME ("" when it has none). */
static inline void um_loop_backing(const char *name, char *buf, size_t size)
{
	char path[512];
	ssize_t n;
	int fd;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

/*
 * Until loop device NAME no longer has UM_IMG behind it (at most 5 s): the
 * filesystem on it is gone for good (not lazily detached with its users), the
 * image is consistent as the filesystem left it.
 */
static inline bool um_wait_loop_gone(const char *name)
{
	for (int i = 0; i < 500; i++) {
		char b[4096];

		um_loop_backing(name, b, sizeof(b));
		if (strcmp(b, UM_IMG) != 0)
			return true;
		usleep(10000);
	}
	return false;
}

/* e2fsck -fn IMG must find nothing to fix. */
static inline void um_fsck(const char *img)
{
	int r = um_run("e2fsck", "-fn", img);

	CHECK(r == 0, "e2fsck -fn %s: exit %d:\n%s", img, r, um_out);
}

/* Mount UM_IMG read-only on UM_RO (after the case's unmount), and back. */
static inline void um_mount_ro(void)
{
	int r;

	CHECK(mkdir(UM_RO, 0755) == 0 || errno == EEXIST, "mkdir %s: %m", UM_RO);
	r = um_run("mount", "-o", "loop,ro", UM_IMG, UM_RO);
	CHECK(r == 0, "mount -o loop,ro %s %s: exit %d: %s", UM_IMG, UM_RO, r, um_out);
}

static inline void um_umount(const char *dir)
{
	CHECK(umount2(dir, 0) == 0, "umount %s: %m", dir);
}

/* The whole of PATH (at most SIZE bytes) into BUF; its length. */
static inline size_t um_slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	CHECK(fd >= 0, "open %s: %m", path);
	for (;;) {
		ssize_t k = read(fd, buf + n, size - n);

		CHECK(k >= 0, "read %s: %m", path);
		if (k == 0 || n + (size_t)k == size) {
			n += (size_t)k;
			break;
		}
		n += (size_t)k;
	}
	close(fd);
	return n;
}

/* ---- records: fixed-size, numbered lines a writer appends ---- */

#define UM_REC 32

/* Record SEQ of writer W: "w01 rec 0000000042" padded with '.' to 31, '\n'. */
static inline void um_record(char buf[UM_REC + 1], unsigned int w, unsigned int seq)
{
	int n = snprintf(buf, UM_REC + 1, "w%02u rec %010u", w, seq);

	memset(buf + n, '.', UM_REC - 1 - (size_t)n);
	buf[UM_REC - 1] = '\n';
	buf[UM_REC] = 0;
}

/*
 * LOG (LEN bytes) holds exactly the records 0 .. N-1 of writer W, in order,
 * whole. Returns NULL or what is wrong.
 */
static inline const char *um_check_records(const char *log, size_t len, unsigned int w,
					   unsigned int n)
{
	static char why[256];
	char rec[UM_REC + 1];

	if (len != (size_t)n * UM_REC) {
		snprintf(why, sizeof(why),
			 "%zu bytes (%zu records and %zu bytes), expected %u records", len,
			 len / UM_REC, len % UM_REC, n);
		return why;
	}
	for (unsigned int i = 0; i < n; i++) {
		um_record(rec, w, i);
		if (memcmp(log + (size_t)i * UM_REC, rec, UM_REC) != 0) {
			snprintf(why, sizeof(why), "record %u is '%.*s', expected '%.*s'", i,
				 UM_REC - 1, log + (size_t)i * UM_REC, UM_REC - 1, rec);
			return why;
		}
	}
	return NULL;
}

/* ---- other users of a filesystem ---- */

/*
 * A child that sets up a loop device backed by FILE with LO_FLAGS_AUTOCLEAR
 * and keeps it open: the device clears itself when the child dies (with the
 * case, whatever happens). NAME gets "loopN"; returns the child's pid.
 */
static inline pid_t um_loop_holder(const char *file, char *name, size_t size)
{
	int p[2], n = -1;
	pid_t pid;

	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe2: %m");
	pid = test_fork();
	CHECK(pid >= 0, "fork: %m");
	if (pid == 0) {
		int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
		int back = open(file, O_RDWR | O_CLOEXEC);

		n = -errno;
		for (int i = 0; ctl >= 0 && back >= 0 && i < 20; i++) {
			struct loop_config c = {.fd = (uint32_t)back};
			char dev[32];
			int nr = ioctl(ctl, LOOP_CTL_GET_FREE), fd;

			if (nr < 0) {
				n = -errno;
				break;
			}
			snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
			fd = open(dev, O_RDWR | O_CLOEXEC);
			if (fd < 0) {
				n = -errno;
				continue;
			}
			c.info.lo_flags = LO_FLAGS_AUTOCLEAR;
			if (ioctl(fd, LOOP_CONFIGURE, &c) == 0) {
				close(back);
				close(ctl);
				n = nr;
				if (write(p[1], &n, sizeof(n)) != sizeof(n))
					_exit(1);
				for (;;)
					pause(); /* fd keeps the device */
			}
			n = -errno;
			close(fd); /* taken by someone else meanwhile: another one */
		}
		if (write(p[1], &n, sizeof(n)) != sizeof(n))
			_exit(1);
		_exit(1);
	}
	close(p[1]);
	CHECK(read(p[0], &n, sizeof(n)) == sizeof(n), "the loop holder died");
	close(p[0]);
	CHECK(n >= 0, "loop device over %s: %s", file, strerror(-n));
	snprintf(name, size, "loop%d", n);
	return pid;
}

/* ---- the report ---- */

static inline const struct revoke_holder *um_holder(const struct revoke_report *rep, pid_t pid)
{
	const struct revoke_holder *h;

	for (size_t i = 0; rep && (h = revoke_report_holder(rep, i)); i++)
		if (h->pid == pid)
			return h;
	return NULL;
}

/* The holder whose pid is 0 and whose comm is COMM (a kernel user). */
static inline const struct revoke_holder *um_kernel_holder(const struct revoke_report *rep,
							   const char *comm)
{
	const struct revoke_holder *h;

	for (size_t i = 0; rep && (h = revoke_report_holder(rep, i)); i++)
		if (h->pid == 0 && strcmp(h->comm, comm) == 0)
			return h;
	return NULL;
}

/* The first reference of H of TYPE (REVOKE_REF_FD, REVOKE_REF_LOOP...). */
static inline const struct revoke_ref *um_ref(const struct revoke_report *rep,
					      const struct revoke_holder *h, int type)
{
	const struct revoke_ref *r;

	for (size_t j = 0; h && (r = revoke_report_ref(rep, h, j)); j++)
		if (r->type == type)
			return r;
	return NULL;
}

/* The report in a few lines of the case's output, for the failures that follow. */
static inline void um_dump(const char *what, int r, int e, const struct revoke_report *rep)
{
	const struct revoke_holder *h;

	fprintf(stderr, "  %s returned %d (%s)\n", what, r, r < 0 ? strerror(e) : "ok");
	if (!rep)
		return;
	fprintf(stderr, "  report: error %d, phase %s, pid %d, detail '%s', %zu targets\n",
		rep->error, revoke_phase_name(rep->failed_phase) ?: "(no name)",
		(int)rep->failed_pid, rep->failed_detail, rep->ntargets);
	for (size_t i = 0; i < rep->ntargets; i++)
		fprintf(stderr, "    target %zu: %s\n", i, rep->targets[i].path);
	for (size_t i = 0; (h = revoke_report_holder(rep, i)); i++) {
		const struct revoke_ref *ref;

		fprintf(stderr, "    holder %d (%s): %s %s\n", (int)h->pid, h->comm,
			revoke_state_name(h->state) ?: "?", h->reason);
		for (size_t j = 0; (ref = revoke_report_ref(rep, h, j)); j++)
			fprintf(stderr, "      %s fd %d target %u: %s %s\n",
				revoke_ref_type_name(ref->type) ?: "(no name)", ref->fd,
				ref->target, revoke_state_name(ref->state) ?: "?",
				ref->error ? strerror(ref->error) : "");
	}
}

/* revoke_ex of the one mount point PATH with FLAGS (retried on ETIMEDOUT). */
static inline int um_call(const char *path, unsigned int flags, struct revoke_report **rep)
{
	const char *paths[] = {path};
	struct revoke_opts o = {.sz = sizeof(o), .flags = flags, .timeout_ms = 0, .keep_fd = -1};
	int r, e;

	*rep = NULL;
	r = test_revoke_ex(paths, 1, &o, rep);
	e = errno;
	um_dump(flags & REVOKE_UMOUNT ? "revoke_ex(REVOKE_UMOUNT)" : "revoke_ex(REVOKE_MOUNT)", r,
		e, *rep);
	errno = e;
	return r;
}

#endif
