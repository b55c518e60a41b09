/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance: what a revoked descriptor does, and which descriptors are
 * revoked. A revoked fd stays allocated until its holder closes it; every
 * operation but close() fails with EBADF; FD_CLOEXEC is kept; it is no
 * directory (openat through it fails with ENOTDIR). Every descriptor of the
 * file is cut: dup'd, inherited, in every thread, in fd tables shared with
 * CLONE_FILES, in stopped processes and in the caller itself; nothing else.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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

#define FILE_PATH "/tmp/file"
#define FILE_DATA "0123456789"

#define CHECK_EBADF(r, what)                                                                       \
	CHECK((r).ret == -1 && (r).err == EBADF, "%s on the revoked fd: ret %ld errno %d (%s)",    \
	      what, (r).ret, (r).err, strerror((r).err))

/* A scratch file held O_RDWR by one victim; returns the victim's fd. */
static int setup(struct victim *v)
{
	test_scratch();
	test_write_file(FILE_PATH, FILE_DATA);
	victim_start(v);
	return victim_open(v, FILE_PATH, O_RDWR);
}

static void do_revoke(void)
{
	CHECK(test_revoke(FILE_PATH) == 0, "revoke(%s): %m", FILE_PATH);
}

static void read_ebadf(void)
{
	struct victim v;
	int fd = setup(&v);
	struct victim_res r = victim_read(&v, fd, 4);

	CHECK(r.ret == 4, "read before revoke: %s", strerror(r.err));
	do_revoke();
	r = victim_read(&v, fd, 4);
	CHECK_EBADF(r, "read");
}

static void write_ebadf(void)
{
	struct victim v;
	int fd = setup(&v);
	struct victim_res r;
	char buf[16] = "";

	do_revoke();
	r = victim_write(&v, fd, "XY");
	CHECK_EBADF(r, "write");
	/* And nothing reached the file. */
	int tfd = open(FILE_PATH, O_RDONLY | O_CLOEXEC);
	CHECK(tfd >= 0, "open: %m");
	CHECK(read(tfd, buf, sizeof(buf) - 1) == 10 && strcmp(buf, FILE_DATA) == 0,
	      "the file changed: \"%s\"", buf);
	close(tfd);
}

static void ioctl_fionread_ebadf(void)
{
	struct victim v;
	int fd = setup(&v);
	struct victim_res r = victim_call(&v, VICTIM_REQ(.op = VOP_FIONREAD, .fd = fd));

	CHECK(r.ret == 10, "FIONREAD before revoke: ret %ld %s", r.ret, strerror(r.err));
	do_revoke();
	r = victim_call(&v, VICTIM_REQ(.op = VOP_FIONREAD, .fd = fd));
	CHECK_EBADF(r, "ioctl(FIONREAD)");
}

static void mmap_ebadf(void)
{
	struct victim v;
	int fd = setup(&v);
	struct victim_res r;

	do_revoke();
	r = victim_call(&v, VICTIM_REQ(.op = VOP_MMAP, .fd = fd, .len = 4096, .prot = PROT_READ,
				       .flags = MAP_SHARED));
	CHECK_EBADF(r, "mmap");
}

static void close_returns_0(void)
{
	struct victim v;
	int fd = setup(&v);
	struct victim_res r;

	do_revoke();
	r = victim_read(&v, fd, 1);
	CHECK_EBADF(r, "precondition: read");
	r = victim_call(&v, VICTIM_REQ(.op = VOP_CLOSE, .fd = fd));
	CHECK(r.ret == 0, "close of the revoked fd: ret %ld %s", r.ret, strerror(r.err));
	/* Now, and only now, the number is free. */
	r = victim_call(&v, VICTIM_REQ(.op = VOP_GETFD, .fd = fd));
	CHECK_EBADF(r, "fcntl(F_GETFD) after close");
}

static void number_stays_taken(void)
{
	struct victim v;
	struct victim_res r;
	int fd = setup(&v), fd2;

	test_write_file("/tmp/other", "other");
	/* fd was the lowest free number when it was opened and nothing was
	 * closed since: were it freed, the next open would get it back. */
	do_revoke();
	r = victim_read(&v, fd, 1);
	CHECK_EBADF(r, "precondition: read");
	fd2 = victim_open(&v, "/tmp/other", O_RDONLY);
	CHECK(fd2 != fd, "the revoked fd %d was freed: a new open got it", fd);
}

static void cloexec_kept_both_ways(void)
{
	struct victim v;
	int fd_plain = setup(&v);
	int fd_cloexec = victim_open(&v, FILE_PATH, O_RDONLY | O_CLOEXEC);
	struct victim_res r;

	do_revoke();
	r = victim_call(&v, VICTIM_REQ(.op = VOP_GETFD, .fd = fd_cloexec));
	CHECK(r.ret == FD_CLOEXEC, "F_GETFD of the O_CLOEXEC fd: ret %ld %s", r.ret,
	      strerror(r.err));
	r = victim_call(&v, VICTIM_REQ(.op = VOP_GETFD, .fd = fd_plain));
	CHECK(r.ret == 0, "F_GETFD of the fd without O_CLOEXEC: ret %ld %s", r.ret,
	      strerror(r.err));
	/* Both really are cut. */
	r = victim_read(&v, fd_cloexec, 1);
	CHECK_EBADF(r, "read (O_CLOEXEC fd)");
	r = victim_read(&v, fd_plain, 1);
	CHECK_EBADF(r, "read (plain fd)");
}

static void openat_through_revoked_dir_enotdir(void)
{
	struct victim v;
	struct victim_res r;
	int dfd;

	test_scratch();
	CHECK(mkdir("/tmp/dir", 0755) == 0, "mkdir: %m");
	test_write_file("/tmp/dir/x", "x");
	victim_start(&v);
	dfd = victim_open(&v, "/tmp/dir", O_RDONLY | O_DIRECTORY);
	r = victim_call(&v,
			VICTIM_REQ(.op = VOP_OPENAT, .fd = dfd, .path = "x", .flags = O_RDONLY));
	CHECK(r.ret >= 0, "openat before revoke: %s", strerror(r.err));
	CHECK(test_revoke("/tmp/dir") == 0, "revoke(/tmp/dir): %m");
	r = victim_call(&v,
			VICTIM_REQ(.op = VOP_OPENAT, .fd = dfd, .path = "x", .flags = O_RDONLY));
	/* Natively a revoked descriptor is refused as a dirfd like everywhere else. */
	CHECK(r.ret == -1 && r.err == (engine_native() ? EBADF : ENOTDIR),
	      "openat(revoked dir fd, \"x\"): ret %ld errno %d (%s), expected %s", r.ret, r.err,
	      strerror(r.err), engine_native() ? "EBADF" : "ENOTDIR");
}

static void dups_all_cut(void)
{
	struct victim v;
	int fd = setup(&v);
	struct victim_res r;
	int fds[3] = {fd};

	r = victim_call(&v, VICTIM_REQ(.op = VOP_DUP, .fd = fd));
	CHECK(r.ret >= 0, "dup: %s", strerror(r.err));
	fds[1] = (int)r.ret;
	r = victim_call(&v, VICTIM_REQ(.op = VOP_DUPFD, .fd = fd, .arg = 100));
	CHECK(r.ret >= 100, "F_DUPFD: %s", strerror(r.err));
	fds[2] = (int)r.ret;
	do_revoke();
	for (int i = 0; i < 3; i++) {
		r = victim_read(&v, fds[i], 1);
		CHECK(r.ret == -1 && r.err == EBADF, "read on fd %d: ret %ld errno %s", fds[i],
		      r.ret, strerror(r.err));
	}
}

static void inherited_by_grandchild_cut(void)
{
	struct victim v, g;
	int fd = setup(&v);
	struct victim_res r;

	victim_spawn(&v, VOP_FORK, &g); /* inherits fd */
	r = victim_read(&g, fd, 1);
	CHECK(r.ret == 1, "the grandchild's read before revoke: %s", strerror(r.err));
	do_revoke();
	r = victim_read(&g, fd, 1);
	CHECK_EBADF(r, "read in the grandchild");
	r = victim_read(&v, fd, 1);
	CHECK_EBADF(r, "read in the child");
}

static void other_thread_cut(void)
{
	struct victim v, t;
	int fd = setup(&v);
	struct victim_res r;

	victim_spawn(&v, VOP_THREAD, &t);
	do_revoke();
	r = victim_read(&t, fd, 1);
	CHECK(r.tid != v.pid, "the read ran in the main thread");
	CHECK_EBADF(r, "read in a second thread");
}

static void clone_files_sharer_cut(void)
{
	struct victim v, c;
	int fd = setup(&v);
	struct victim_res r;

	victim_spawn(&v, VOP_CLONE_FILES, &c);
	CHECK(c.pid != v.pid, "clone(CLONE_FILES) made no process");
	do_revoke();
	r = victim_read(&c, fd, 1);
	CHECK(r.tid == c.pid, "the read ran in %d, not in the CLONE_FILES process %d", (int)r.tid,
	      (int)c.pid);
	CHECK_EBADF(r, "read in the CLONE_FILES process");
	r = victim_read(&v, fd, 1);
	CHECK_EBADF(r, "read in the process that cloned");
}

static void stopped_process_cut_stays_stopped(void)
{
	struct victim v;
	int fd = setup(&v);
	struct victim_res r;
	int status;
	char st;

	CHECK(kill(v.pid, SIGSTOP) == 0, "SIGSTOP: %m");
	CHECK(waitpid(v.pid, &status, WUNTRACED) == v.pid && WIFSTOPPED(status),
	      "the victim did not stop");
	do_revoke();
	st = proc_state(v.pid);
	CHECK(st == 'T', "the stopped victim is '%c' after revoke, not 'T'", st ? st : '?');
	CHECK(kill(v.pid, SIGCONT) == 0, "SIGCONT: %m");
	r = victim_read(&v, fd, 1);
	CHECK_EBADF(r, "read in the once stopped victim");
}

static void own_fd_cut(void)
{
	char c;
	int fd, fd2;

	test_scratch();
	test_write_file(FILE_PATH, FILE_DATA);
	fd = open(FILE_PATH, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0, "open: %m");
	fd2 = dup(fd);
	CHECK(fd2 >= 0, "dup: %m");
	do_revoke();
	errno = 0;
	CHECK(read(fd, &c, 1) == -1 && errno == EBADF, "read on the caller's own fd: errno %s",
	      strerror(errno));
	errno = 0;
	CHECK(write(fd2, "x", 1) == -1 && errno == EBADF,
	      "write on the caller's own dup'd fd: errno %s", strerror(errno));
	CHECK(fcntl(fd, F_GETFD) == FD_CLOEXEC, "FD_CLOEXEC lost on the caller's own fd");
	CHECK(close(fd) == 0, "close: %m");
	CHECK(close(fd2) == 0, "close: %m");
}

static void others_untouched(void)
{
	struct victim v, w;
	int fd = setup(&v), other, wfd;
	struct victim_res r;

	test_write_file("/tmp/other", "other");
	other = victim_open(&v, "/tmp/other", O_RDONLY);
	victim_start(&w);
	wfd = victim_open(&w, "/tmp/other", O_RDONLY);
	r = victim_read(&v, other, 2);
	CHECK(r.ret == 2, "read before revoke: %s", strerror(r.err));
	do_revoke();
	r = victim_read(&v, fd, 1);
	CHECK_EBADF(r, "read");
	r = victim_read(&v, other, 16);
	CHECK(r.ret == 3 && memcmp(r.data, "her", 3) == 0,
	      "the holder's other file (its position too) was touched: ret %ld %s", r.ret,
	      strerror(r.err));
	r = victim_read(&w, wfd, 16);
	CHECK(r.ret == 5 && memcmp(r.data, "other", 5) == 0,
	      "another process's other file was touched: ret %ld %s", r.ret, strerror(r.err));
}

#define NVICTIMS 8

static void several_victims_all_cut(void)
{
	struct victim v[NVICTIMS];
	int fd[NVICTIMS];
	struct victim_res r;

	test_scratch();
	test_write_file(FILE_PATH, FILE_DATA);
	for (int i = 0; i < NVICTIMS; i++) {
		victim_start(&v[i]);
		fd[i] = victim_open(&v[i], FILE_PATH, i % 2 ? O_RDONLY : O_RDWR);
	}
	do_revoke();
	for (int i = 0; i < NVICTIMS; i++) {
		r = victim_read(&v[i], fd[i], 1);
		CHECK(r.ret == -1 && r.err == EBADF, "victim %d of %d: read ret %ld errno %s", i,
		      NVICTIMS, r.ret, strerror(r.err));
	}
}

#define NOPENS 200

/* NetBSD's t_revoke: one file opened many times, every one cut. */
static void many_opens_all_cut(void)
{
	static int fd[NOPENS];
	struct victim v;
	struct victim_res r;

	fd[0] = setup(&v);
	for (int i = 1; i < NOPENS; i++)
		fd[i] = victim_open(&v, FILE_PATH, i % 2 ? O_RDONLY : O_RDWR);
	do_revoke();
	for (int i = 0; i < NOPENS; i++) {
		r = victim_read(&v, fd[i], 1);
		CHECK(r.ret == -1 && r.err == EBADF, "fd %d (open %d of %d): read ret %ld errno %s",
		      fd[i], i, NOPENS, r.ret, strerror(r.err));
	}
}

/* The file is the inode, not the name: another hard link's holder is cut. */
static void hard_link_holder_cut(void)
{
	struct victim v;
	struct victim_res r;
	int fd;

	test_scratch();
	test_write_file(FILE_PATH, FILE_DATA);
	CHECK(link(FILE_PATH, "/tmp/alias") == 0, "link: %m");
	victim_start(&v);
	fd = victim_open(&v, "/tmp/alias", O_RDONLY);
	do_revoke();
	r = victim_read(&v, fd, 1);
	CHECK_EBADF(r, "read through another hard link");
}

/* An unlinked file has no name left but /proc/PID/fd/N. */
static void deleted_file_via_proc_fd(void)
{
	struct victim v;
	struct victim_res r;
	char path[64];
	int fd = setup(&v), fd2;

	fd2 = victim_open(&v, FILE_PATH, O_RDONLY);
	CHECK(unlink(FILE_PATH) == 0, "unlink: %m");
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)v.pid, fd);
	CHECK(test_revoke(path) == 0, "revoke(%s) of a deleted file: %m", path);
	r = victim_read(&v, fd, 1);
	CHECK_EBADF(r, "read (the fd named)");
	r = victim_read(&v, fd2, 1);
	CHECK_EBADF(r, "read (another fd of the deleted file)");
}

/* A revoked fd is nobody's reference to the file any more. */
static void second_revoke_returns_0(void)
{
	struct victim v;
	struct victim_res r;
	int fd = setup(&v);

	do_revoke();
	CHECK(test_revoke(FILE_PATH) == 0, "the second revoke(%s): %m", FILE_PATH);
	r = victim_read(&v, fd, 1);
	CHECK_EBADF(r, "read");
}

static void revoke_ex_two_paths_both_cut(void)
{
	const char *paths[] = {FILE_PATH, "/tmp/second"};
	struct victim v, w;
	struct victim_res r;
	int fd = setup(&v), wfd;

	test_write_file("/tmp/second", "second");
	victim_start(&w);
	wfd = victim_open(&w, "/tmp/second", O_RDONLY);
	CHECK(test_revoke_ex(paths, 2, NULL, NULL) == 0, "revoke_ex of two files: %m");
	r = victim_read(&v, fd, 1);
	CHECK_EBADF(r, "read (first file)");
	r = victim_read(&w, wfd, 1);
	CHECK_EBADF(r, "read (second file)");
}

/* Any uid's descriptors are cut when root (CAP_FOWNER, CAP_SYS_PTRACE) asks. */
static void other_uid_holder_cut(void)
{
	struct victim v;
	struct victim_res r;
	int sp[2], fd;

	test_scratch();
	test_write_file(FILE_PATH, FILE_DATA); /* 0644: readable by anyone */
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0, "socketpair: %m");
	v.pid = test_fork();
	CHECK(v.pid >= 0, "fork: %m");
	if (v.pid == 0) {
		close(sp[0]);
		if (test_become(TEST_NOBODY, TEST_NOBODY, TEST_BECOME_NOGROUPS) < 0)
			_exit(1);
		victim_become(sp[1]);
	}
	close(sp[1]);
	v.sock = sp[0];
	fd = victim_open(&v, FILE_PATH, O_RDONLY);
	do_revoke();
	r = victim_read(&v, fd, 1);
	CHECK_EBADF(r, "read in a holder of uid 65534");
}

/*
 * As uid 65534: its own child is a holder it can cut, but the processes of
 * other users (root's, this test's own) may hold the file too, and it cannot
 * look at them. Without best effort: EBUSY, nothing touched, each of them in
 * the report as uninspected. With it: the child is cut, the others listed.
 */
static void nobody_cuts_own_child(void *arg)
{
	const char *path = "/tmp/mine/file";
	struct revoke_opts o = {.sz = sizeof(o), .keep_fd = -1};
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	struct victim v;
	struct victim_res r;
	int fd, ret;

	(void)arg;
	victim_start(&v);
	fd = victim_open(&v, path, O_RDONLY);
	if (engine_native()) {
		/* The native system call reaches everyone: the owner's revoke
		 * simply works (the seed's rule). */
		CHECK(test_revoke(path) == 0, "native revoke as the unprivileged owner: %m");
		r = victim_read(&v, fd, 1);
		CHECK_EBADF(r, "read in the owner's child");
		return;
	}
	ret = revoke_ex(&path, 1, &o, &rep);
	CHECK(ret == -1 && errno == EBUSY, "revoke as the unprivileged owner: %d (%m), want EBUSY",
	      ret);
	CHECK(rep && rep->nuninspected > 0, "no process reported as not inspected");
	h = NULL;
	for (size_t i = 0; rep && i < rep->nholders; i++)
		if (rep->holders[i].pid == getppid())
			h = &rep->holders[i];
	CHECK(h && h->state == REVOKE_STATE_UNINSPECTED && h->nrefs == 0 && h->error == EACCES,
	      "root's process %d not reported as uninspected", getppid());
	revoke_report_free(rep);
	r = victim_read(&v, fd, 1);
	CHECK(r.ret == 1, "the child's descriptor changed though the call failed");

	o.flags = REVOKE_BEST_EFFORT;
	ret = revoke_ex(&path, 1, &o, &rep);
	CHECK(ret == 0, "best-effort revoke as the unprivileged owner: %m");
	CHECK(rep && rep->nuninspected > 0, "best effort: uninspected processes not reported");
	revoke_report_free(rep);
	r = victim_read(&v, fd, 1);
	CHECK_EBADF(r, "read in the owner's child");
}

static void unprivileged_owner_cuts_own_child(void)
{
	test_scratch();
	CHECK(mkdir("/tmp/mine", 0755) == 0, "mkdir: %m");
	CHECK(chown("/tmp/mine", TEST_NOBODY, TEST_NOBODY) == 0, "chown: %m");
	test_write_file("/tmp/mine/file", FILE_DATA);
	CHECK(chown("/tmp/mine/file", TEST_NOBODY, TEST_NOBODY) == 0, "chown: %m");
	test_as_nobody(nobody_cuts_own_child, NULL);
}

/* clang-format off */
TEST_MAIN("revoke-fds",
	  {"read_ebadf", read_ebadf, 0},
	  {"write_ebadf", write_ebadf, 0},
	  {"ioctl_fionread_ebadf", ioctl_fionread_ebadf, 0},
	  {"mmap_ebadf", mmap_ebadf, 0},
	  {"close_returns_0", close_returns_0, 0},
	  {"number_stays_taken", number_stays_taken, 0},
	  {"cloexec_kept_both_ways", cloexec_kept_both_ways, 0},
	  {"openat_through_revoked_dir_enotdir", openat_through_revoked_dir_enotdir, 0},
	  {"dups_all_cut", dups_all_cut, 0},
	  {"inherited_by_grandchild_cut", inherited_by_grandchild_cut, 0},
	  {"other_thread_cut", other_thread_cut, 0},
	  {"clone_files_sharer_cut", clone_files_sharer_cut, 0},
	  {"stopped_process_cut_stays_stopped", stopped_process_cut_stays_stopped, 0},
	  {"own_fd_cut", own_fd_cut, 0},
	  {"others_untouched", others_untouched, 0},
	  {"several_victims_all_cut", several_victims_all_cut, 0},
	  {"many_opens_all_cut", many_opens_all_cut, 0},
	  {"hard_link_holder_cut", hard_link_holder_cut, 0},
	  {"deleted_file_via_proc_fd", deleted_file_via_proc_fd, 0},
	  {"second_revoke_returns_0", second_revoke_returns_0, 0},
	  {"revoke_ex_two_paths_both_cut", revoke_ex_two_paths_both_cut, 0},
	  {"other_uid_holder_cut", other_uid_holder_cut, 0},
	  {"unprivileged_owner_cuts_own_child", unprivileged_owner_cuts_own_child, 0},
)
/* clang-format on */
