/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Guest tests of the revoke(2)/frevoke(2) system calls (x86_64 451/452 on the
 * patched 6.1 kernel). Statically linked; run as root by the guest's init.
 * Every case runs in a forked child with an alarm and prints one line:
 * PASS name | FAIL name: why | SKIP name: why.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

/* Not in 6.1's uapi headers: the numbers this patch series gives them. */
#define NR_revoke  451
#define NR_frevoke 452

static int sys_revoke(const char *path)
{
	return syscall(NR_revoke, path);
}
static int sys_frevoke(int fd)
{
	return syscall(NR_frevoke, fd);
}

static char fail_msg[512];
#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			snprintf(fail_msg, sizeof(fail_msg), "%s:%d: %s (errno %d %s)", __FILE__,  \
				 __LINE__, #cond, errno, strerror(errno));                         \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)
#define SKIP(...)                                                                                  \
	do {                                                                                       \
		snprintf(fail_msg, sizeof(fail_msg), __VA_ARGS__);                                 \
		return 77;                                                                         \
	} while (0)

static int npass, nfail, nskip;

static void run(const char *name, int (*fn)(void), unsigned int timeout)
{
	int fds[2], status;
	char buf[sizeof(fail_msg)] = "";
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		printf("FAIL %s: pipe: %s\n", name, strerror(errno));
		nfail++;
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int r;
		close(fds[0]);
		setpgid(0, 0);
		alarm(timeout);
		r = fn();
		if (write(fds[1], fail_msg, strlen(fail_msg)) < 0)
			_exit(2);
		_exit(r);
	}
	close(fds[1]);
	ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	close(fds[0]);
	waitpid(pid, &status, 0);
	kill(-pid, SIGKILL); /* leftovers of the case */
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("PASS %s\n", name);
		npass++;
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("SKIP %s: %s\n", name, buf);
		nskip++;
	} else if (WIFSIGNALED(status)) {
		printf("FAIL %s: killed by signal %d%s %s\n", name, WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? " (timeout)" : "", buf);
		nfail++;
	} else {
		printf("FAIL %s: %s\n", name, buf);
		nfail++;
	}
	fflush(stdout);
}

/* ---- helpers ---------------------------------------------------------- */

static const char *tmpfile_with(const char *name, const char *content, mode_t mode)
{
	static char path[256];
	int fd;

	snprintf(path, sizeof(path), "/tmp/%s", name);
	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0 || write(fd, content, strlen(content)) != (ssize_t)strlen(content))
		return NULL;
	close(fd);
	chmod(path, mode);
	return path;
}

/* A forked helper: runs fn(arg) and reports one int over a pipe. */
static pid_t spawn(int (*fn)(void *), void *arg, int *ret_rfd)
{
	int p[2];
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		int v = fn(arg);
		if (write(p[1], &v, sizeof(v)) != sizeof(v))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	*ret_rfd = p[0];
	return pid;
}

static int wait_int(int rfd, int timeout_ms, int *ret)
{
	struct pollfd pfd = {.fd = rfd, .events = POLLIN};
	if (poll(&pfd, 1, timeout_ms) != 1)
		return -1;
	return read(rfd, ret, sizeof(*ret)) == sizeof(*ret) ? 0 : -1;
}

static bool fd_dead(int fd)
{
	char c;
	return read(fd, &c, 1) < 0 && errno == EBADF;
}

/* ---- cases ------------------------------------------------------------- */

static int t_marker(void)
{
	char buf[64] = "";
	int fd = open("/sys/kernel/revoke/syscalls", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(read(fd, buf, sizeof(buf) - 1) > 0);
	CHECK(strcmp(buf, "451 452\n") == 0);
	CHECK(write(fd, "x", 1) < 0);
	return 0;
}

struct holder_arg {
	const char *path;
	int fd; /* inherited, or -1: open path */
	int gate;
	int ready; /* write end: one byte once the file is held */
};
/* Holds the file, waits for the gate, reports errno of read (0 if it worked). */
static int holder_fn(void *p)
{
	struct holder_arg *a = p;
	int fd = a->fd >= 0 ? a->fd : open(a->path, O_RDONLY);
	char c = 'r';
	if (fd < 0)
		return -1000;
	if (a->ready >= 0 && write(a->ready, &c, 1) != 1)
		return -1002;
	if (read(a->gate, &c, 1) != 1)
		return -1001;
	if (pread(fd, &c, 1, 0) == 1)
		return 0;
	return errno;
}

static int t_basic(void)
{
	const char *path = tmpfile_with("basic", "hello", 0644);
	int gate[2], ready[2], r1, r2, v;
	char c, rr[2];
	CHECK(path);
	int a = open(path, O_RDONLY), b = open(path, O_RDWR), d = dup(a);
	CHECK(a >= 0 && b >= 0 && d >= 0);
	CHECK(pipe(gate) == 0 && pipe(ready) == 0);
	struct holder_arg inh = {path, a, gate[0], ready[1]}, own = {path, -1, gate[0], ready[1]};
	pid_t p1 = spawn(holder_fn, &inh, &r1), p2 = spawn(holder_fn, &own, &r2);
	CHECK(p1 > 0 && p2 > 0);
	CHECK(read(ready[0], rr, 1) == 1 && read(ready[0], rr + 1, 1) == 1); /* both hold it */
	CHECK(sys_revoke(path) == 0);
	CHECK(write(gate[1], "xx", 2) == 2);
	CHECK(wait_int(r1, 5000, &v) == 0 && v == EBADF);
	CHECK(wait_int(r2, 5000, &v) == 0 && v == EBADF);
	CHECK(fd_dead(a) && fd_dead(b) && fd_dead(d));
	CHECK(write(b, "x", 1) < 0 && errno == EBADF);
	CHECK(lseek(a, 0, SEEK_SET) < 0 && errno == EBADF);
	CHECK(ioctl(a, TCGETS, &(struct termios){0}) < 0 && errno == EBADF);
	CHECK(mmap(NULL, 4096, PROT_READ, MAP_SHARED, a, 0) == MAP_FAILED && errno == EBADF);
	CHECK(fsync(b) < 0 && errno == EBADF);
	CHECK(ftruncate(b, 0) < 0 && errno == EBADF);
	CHECK(fchmod(b, 0600) < 0 && errno == EBADF);
	CHECK(flock(a, LOCK_SH) < 0 && errno == EBADF);
	CHECK(fcntl(a, F_SETFL, O_NONBLOCK) < 0 && errno == EBADF);
	struct pollfd pfd = {.fd = a, .events = POLLIN};
	CHECK(poll(&pfd, 1, 0) == 1 && pfd.revents == POLLNVAL);
	CHECK(fcntl(a, F_GETFD) >= 0); /* the number stays taken */
	struct stat st;
	CHECK(fstat(a, &st) < 0 && errno == EBADF); /* nor its metadata */
	char proclink[64], target[256];
	snprintf(proclink, sizeof(proclink), "/proc/self/fd/%d", a);
	CHECK(readlink(proclink, target, sizeof(target)) < 0 && errno == ENOENT);
	CHECK(open(proclink, O_RDONLY) < 0 && errno == ENOENT);
	char info[64], text[512] = "";
	snprintf(info, sizeof(info), "/proc/self/fdinfo/%d", a);
	int fi = open(info, O_RDONLY);
	CHECK(fi >= 0 && read(fi, text, sizeof(text) - 1) > 0 && strstr(text, "revoked:\t1\n"));
	close(fi);
	int n = open(path, O_RDONLY); /* future opens are not blocked */
	CHECK(n >= 0 && n != a && n != b && n != d);
	CHECK(read(n, &c, 1) == 1 && c == 'h');
	CHECK(stat(path, &st) == 0 && st.st_size == 5); /* ftruncate did nothing */
	CHECK(close(a) == 0 && close(b) == 0 && close(d) == 0);
	CHECK(fcntl(a, F_GETFD) < 0 && errno == EBADF); /* freed by close */
	return 0;
}

static int t_no_holders(void)
{
	const char *path = tmpfile_with("none", "x", 0644);
	CHECK(path);
	CHECK(sys_revoke(path) == 0);
	return 0;
}

static int t_errors(void)
{
	char longname[300], longpath[5000];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = 0;
	for (size_t i = 100; i < sizeof(longpath) - 1; i += 100)
		longpath[i] = '/';
	errno = 0;
	CHECK(sys_revoke("/tmp/does-not-exist") < 0 && errno == ENOENT);
	CHECK(sys_revoke((const char *)1) < 0 && errno == EFAULT);
	CHECK(sys_revoke(longname) < 0 && errno == ENAMETOOLONG);
	CHECK(sys_revoke(longpath) < 0 && errno == ENAMETOOLONG);
	const char *f = tmpfile_with("notdir", "x", 0644);
	CHECK(f);
	CHECK(sys_revoke("/tmp/notdir/x") < 0 && errno == ENOTDIR);
	unlink("/tmp/loop1");
	unlink("/tmp/loop2");
	CHECK(symlink("/tmp/loop2", "/tmp/loop1") == 0 && symlink("/tmp/loop1", "/tmp/loop2") == 0);
	CHECK(sys_revoke("/tmp/loop1") < 0 && errno == ELOOP);
	CHECK(sys_frevoke(-1) < 0 && errno == EBADF);
	CHECK(sys_frevoke(999) < 0 && errno == EBADF);
	return 0;
}

static int t_symlink_followed(void)
{
	const char *path = tmpfile_with("target", "x", 0644);
	CHECK(path);
	unlink("/tmp/link");
	CHECK(symlink(path, "/tmp/link") == 0);
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(sys_revoke("/tmp/link") == 0);
	CHECK(fd_dead(fd));
	return 0;
}

static int unpriv_fn(void *p)
{
	const char *path = p;
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return -1;
	return sys_revoke(path) < 0 ? errno : 0;
}

static int t_eperm(void)
{
	const char *path = tmpfile_with("rootfile", "x", 0644);
	int r, v;
	CHECK(path);
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(spawn(unpriv_fn, (void *)path, &r) > 0);
	CHECK(wait_int(r, 5000, &v) == 0 && v == EPERM);
	CHECK(!fd_dead(fd));
	/* Lookup errors come first: EACCES from a directory it cannot search. */
	mkdir("/tmp/private", 0700);
	const char *q = tmpfile_with("private/f", "x", 0644);
	CHECK(q && chown(q, 65534, 65534) == 0);
	CHECK(spawn(unpriv_fn, (void *)q, &r) > 0);
	CHECK(wait_int(r, 5000, &v) == 0 && v == EACCES);
	/* The owner may. */
	const char *o = tmpfile_with("ownfile", "x", 0644);
	CHECK(o && chown(o, 65534, 65534) == 0);
	int ofd = open(o, O_RDONLY);
	CHECK(ofd >= 0);
	CHECK(spawn(unpriv_fn, (void *)o, &r) > 0);
	CHECK(wait_int(r, 5000, &v) == 0 && v == 0);
	CHECK(fd_dead(ofd));
	return 0;
}

static int t_frevoke_keeps(void)
{
	const char *path = tmpfile_with("keep", "hello", 0644);
	int gate[2], r, v;
	CHECK(path);
	int a = open(path, O_RDONLY), b = open(path, O_RDONLY), c = dup(a);
	CHECK(a >= 0 && b >= 0 && c >= 0);
	CHECK(pipe(gate) == 0);
	struct holder_arg inh = {path, a, gate[0], -1};
	CHECK(spawn(holder_fn, &inh, &r) > 0);
	CHECK(sys_frevoke(a) == 0);
	CHECK(write(gate[1], "x", 1) == 1);
	CHECK(wait_int(r, 5000, &v) == 0 && v == 0); /* the child's copy of a is kept */
	CHECK(!fd_dead(a) && !fd_dead(c));
	CHECK(fd_dead(b));
	return 0;
}

static int child_frevoke_fn(void *p)
{
	int fd = *(int *)p;
	return sys_frevoke(fd) < 0 ? errno : 0;
}

static int t_frevoke_in_child(void)
{
	const char *path = tmpfile_with("keepchild", "hello", 0644);
	int r, v;
	CHECK(path);
	int a = open(path, O_RDONLY), b = open(path, O_RDONLY);
	CHECK(a >= 0 && b >= 0);
	CHECK(spawn(child_frevoke_fn, &a, &r) > 0); /* inherits a's description */
	CHECK(wait_int(r, 5000, &v) == 0 && v == 0);
	CHECK(!fd_dead(a));
	CHECK(fd_dead(b));
	return 0;
}

static sigjmp_buf jb;
static volatile sig_atomic_t got_sigbus;
static void on_sigbus(int sig)
{
	(void)sig;
	got_sigbus = 1;
	siglongjmp(jb, 1);
}

static bool touches_sigbus(volatile char *p, bool write)
{
	got_sigbus = 0;
	if (sigsetjmp(jb, 1) == 0) {
		if (write)
			*p = 'z';
		else
			(void)*p;
	}
	return got_sigbus;
}

static bool range_kept(void *addr, size_t len)
{
	void *q =
	    mmap(addr, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (q == addr) {
		munmap(q, len);
		return false;
	}
	return q == MAP_FAILED && errno == EEXIST;
}

static int t_mmap_sigbus(void)
{
	const char *path = tmpfile_with("map", "", 0644);
	CHECK(path);
	int fd = open(path, O_RDWR);
	CHECK(fd >= 0 && ftruncate(fd, 8192) == 0);
	char *s = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *pv = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(s != MAP_FAILED && pv != MAP_FAILED);
	memcpy(s, "dirty data", 10); /* dirty shared page */
	pv[0] = 'p';		     /* a private COW page */
	signal(SIGBUS, on_sigbus);
	CHECK(sys_revoke(path) == 0);
	CHECK(touches_sigbus(s, false));
	CHECK(touches_sigbus(s + 4096, true));
	CHECK(touches_sigbus(pv, false));
	CHECK(range_kept(s, 8192) && range_kept(pv, 8192));
	/* The dirty shared page reached the file. */
	char buf[16] = "";
	int n = open(path, O_RDONLY);
	CHECK(n >= 0 && read(n, buf, 10) == 10 && memcmp(buf, "dirty data", 10) == 0);
	/* The owner can still unmap it. */
	CHECK(munmap(s, 8192) == 0 && munmap(pv, 8192) == 0);
	return 0;
}

static int mapper_fn(void *p)
{
	const char *path = p;
	int fd = open(path, O_RDONLY);
	char *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	/* fd stays open: this stopped process is a holder revoke must not wait for */
	signal(SIGBUS, on_sigbus);
	raise(SIGSTOP);
	char c;
	return touches_sigbus(m, false) && range_kept(m, 4096) && read(fd, &c, 1) < 0 &&
		       errno == EBADF
		   ? 1
		   : 0;
}

static int t_mmap_other_process(void)
{
	const char *path = tmpfile_with("map2", "0123456789", 0644);
	int r, v, st;
	CHECK(path);
	pid_t pid = spawn(mapper_fn, (void *)path, &r);
	CHECK(pid > 0);
	CHECK(waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st));
	CHECK(sys_revoke(path) == 0); /* a stopped holder does not delay revoke */
	CHECK(kill(pid, SIGCONT) == 0);
	CHECK(wait_int(r, 5000, &v) == 0 && v == 1);
	return 0;
}

static int blocked_reader_fn(void *p)
{
	int fd = *(int *)p;
	char c;
	ssize_t n = read(fd, &c, 1);
	return n < 0 ? errno : -(int)n - 100;
}

static int t_pipe_reader(void)
{
	int p[2], r, v;
	CHECK(pipe(p) == 0);
	CHECK(spawn(blocked_reader_fn, &p[0], &r) > 0);
	usleep(200000);
	CHECK(sys_frevoke(p[1]) == 0); /* keeps the write end, revokes every read end */
	CHECK(wait_int(r, 5000, &v) == 0);
	CHECK(v == EBADF);
	CHECK(fd_dead(p[0]));
	return 0;
}

static void *reader_thread(void *p)
{
	int fd = *(int *)p;
	char c;
	ssize_t n = read(fd, &c, 1);
	return (void *)(long)(n < 0 ? errno : 0);
}

static int t_pipe_reader_thread(void)
{
	int p[2];
	pthread_t t;
	void *res;
	CHECK(pipe(p) == 0);
	CHECK(pthread_create(&t, NULL, reader_thread, &p[0]) == 0);
	usleep(200000);
	CHECK(sys_frevoke(p[1]) == 0);
	CHECK(pthread_join(t, &res) == 0);
	CHECK((long)res == EBADF);
	return 0;
}

static int t_fifo_reader(void)
{
	int r, v;
	unlink("/tmp/fifo");
	CHECK(mkfifo("/tmp/fifo", 0644) == 0);
	int fd = open("/tmp/fifo", O_RDWR);
	CHECK(fd >= 0);
	CHECK(spawn(blocked_reader_fn, &fd, &r) > 0);
	usleep(200000);
	CHECK(sys_revoke("/tmp/fifo") == 0);
	CHECK(wait_int(r, 5000, &v) == 0 && v == EBADF);
	return 0;
}

static int t_pty_reader(void)
{
	int r, v;
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0)
		SKIP("no ptys (UNIX98_PTYS/devpts): %s", strerror(errno));
	CHECK(grantpt(m) == 0 && unlockpt(m) == 0);
	char *name = ptsname(m);
	CHECK(name);
	int s = open(name, O_RDWR | O_NOCTTY);
	CHECK(s >= 0);
	CHECK(spawn(blocked_reader_fn, &s, &r) > 0);
	usleep(200000);
	CHECK(sys_revoke(name) == 0);
	CHECK(wait_int(r, 5000, &v) == 0 && v == EBADF);
	CHECK(fd_dead(s));
	CHECK(write(m, "x", 1) == 1 || errno == EIO); /* the master is another inode */
	return 0;
}

/* A writer blocked on a full pipe: after revoke returns nothing more arrives. */
static int t_drain_blocked_writer(void)
{
	int p[2], r, v;
	CHECK(pipe2(p, O_NONBLOCK) == 0);
	int cap = fcntl(p[1], F_GETPIPE_SZ);
	CHECK(cap > 0);
	char *buf = calloc(1, cap * 4);
	int filled = 0;
	while (write(p[1], buf, 4096) > 0)
		filled += 4096;
	int fl = fcntl(p[1], F_GETFL);
	CHECK(fcntl(p[1], F_SETFL, fl & ~O_NONBLOCK) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ssize_t n = write(p[1], buf, cap * 4);
		_exit(n < 0 && errno == EBADF ? 0 : 1);
	}
	(void)r;
	usleep(200000);
	CHECK(sys_frevoke(p[0]) == 0); /* keeps the read end */
	int total = 0;
	ssize_t n;
	while ((n = read(p[0], buf, cap * 4)) > 0)
		total += n;
	CHECK(total == filled);
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	v = 0;
	(void)v;
	return 0;
}

static int t_scm_rights(void)
{
	const char *path = tmpfile_with("scm", "x", 0644);
	int sv[2];
	CHECK(path);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	char byte = 'x';
	struct iovec iov = {&byte, 1};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	CHECK(sendmsg(sv[0], &mh, 0) == 1);
	CHECK(close(fd) == 0); /* only the message holds it now */
	CHECK(sys_revoke(path) == 0);
	memset(cbuf, 0, sizeof(cbuf));
	mh.msg_controllen = sizeof(cbuf);
	CHECK(recvmsg(sv[1], &mh, 0) == 1);
	cm = CMSG_FIRSTHDR(&mh);
	CHECK(cm && cm->cmsg_type == SCM_RIGHTS);
	int got;
	memcpy(&got, CMSG_DATA(cm), sizeof(int));
	CHECK(fd_dead(got));
	CHECK(close(got) == 0);
	return 0;
}

static int t_io_uring_fixed(void)
{
#ifdef HAVE_LIBURING
	const char *path = tmpfile_with("uring", "hello", 0644);
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	char buf[8];
	CHECK(path);
	int r = io_uring_queue_init(4, &ring, 0);
	if (r < 0)
		SKIP("io_uring_setup: %s", strerror(-r));
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(io_uring_register_files(&ring, &fd, 1) == 0);
	CHECK(close(fd) == 0); /* only the ring holds it now */
	for (int round = 0; round < 2; round++) {
		if (round == 1)
			CHECK(sys_revoke(path) == 0);
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read(sqe, 0, buf, sizeof(buf), 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		CHECK(io_uring_submit(&ring) == 1);
		CHECK(io_uring_wait_cqe(&ring, &cqe) == 0);
		if (round == 0)
			CHECK(cqe->res == 5);
		else
			CHECK(cqe->res == -EBADF);
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	return 0;
#else
	SKIP("built without liburing");
#endif
}

static int t_epoll(void)
{
	unlink("/tmp/efifo");
	CHECK(mkfifo("/tmp/efifo", 0644) == 0);
	int rd = open("/tmp/efifo", O_RDONLY | O_NONBLOCK), wr = open("/tmp/efifo", O_WRONLY);
	CHECK(rd >= 0 && wr >= 0);
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = rd}, out;
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, rd, &ev) == 0);
	CHECK(sys_frevoke(wr) == 0); /* keeps the writer, revokes the registered reader */
	CHECK(write(wr, "x", 1) == 1);
	CHECK(epoll_wait(ep, &out, 1, 200) == 0); /* the registration is gone */
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, rd, &ev) < 0 && errno == EBADF);
	CHECK(fd_dead(rd));
	return 0;
}

static int t_directory(void)
{
	mkdir("/tmp/dir", 0755);
	int fd = open("/tmp/dir", O_RDONLY | O_DIRECTORY);
	char buf[4096];
	CHECK(fd >= 0);
	CHECK(sys_revoke("/tmp/dir") == 0);
	CHECK(syscall(SYS_getdents64, fd, buf, sizeof(buf)) < 0 && errno == EBADF);
	return 0;
}

static int t_locks_released(void)
{
	const char *path = tmpfile_with("lock", "x", 0644);
	CHECK(path);
	int fd = open(path, O_RDWR), fl1 = open(path, O_RDONLY);
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	CHECK(fd >= 0 && fl1 >= 0);
	CHECK(fcntl(fd, F_OFD_SETLK, &fl) == 0);
	CHECK(flock(fl1, LOCK_EX) == 0);
	CHECK(sys_revoke(path) == 0);
	CHECK(fcntl(fd, F_OFD_SETLK, &fl) < 0 && errno == EBADF);
	CHECK(flock(fl1, LOCK_UN) < 0 && errno == EBADF);
	int fd2 = open(path, O_RDWR);
	CHECK(fd2 >= 0);
	/* Held until the holder closes the revoked descriptor... */
	CHECK(fcntl(fd2, F_OFD_SETLK, &fl) < 0 && errno == EAGAIN);
	CHECK(flock(fd2, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK);
	/* ...whose last close releases them through the revoked file. */
	CHECK(close(fd) == 0 && close(fl1) == 0);
	CHECK(fcntl(fd2, F_OFD_SETLK, &fl) == 0);
	int fd3 = open(path, O_RDONLY);
	CHECK(fd3 >= 0 && flock(fd3, LOCK_EX | LOCK_NB) == 0);
	/* A POSIX lock of this process: released by close() of the revoked fd. */
	CHECK(close(fd2) == 0 && close(fd3) == 0);
	int fd4 = open(path, O_RDWR);
	struct flock pl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	CHECK(fd4 >= 0 && fcntl(fd4, F_SETLK, &pl) == 0);
	CHECK(sys_revoke(path) == 0);
	int st;
	pid_t pid = fork();
	if (pid == 0)
		_exit(fcntl(open(path, O_RDWR), F_SETLK, &pl) < 0 && errno == EAGAIN ? 0 : 1);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(close(fd4) == 0);
	pid = fork();
	if (pid == 0)
		_exit(fcntl(open(path, O_RDWR), F_SETLK, &pl) == 0 ? 0 : 1);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}

/* ---- concurrency ------------------------------------------------------ */

static atomic_int stop_flag;
static const char *stress_path;
static atomic_long stress_ops;

static void *stress_thread(void *p)
{
	long kind = (long)p;
	char buf[64];
	unsigned int seed = kind;
	while (!atomic_load(&stop_flag)) {
		int fd = open(stress_path, O_RDWR);
		if (fd < 0)
			continue;
		for (int i = 0; i < 20; i++) {
			switch ((kind + rand_r(&seed)) % 5) {
			case 0:
				(void)!pread(fd, buf, sizeof(buf), 0);
				break;
			case 1:
				(void)!pwrite(fd, "abcdefgh", 8, 0);
				break;
			case 2: {
				int d = dup(fd);
				if (d >= 0) {
					(void)!read(d, buf, 1);
					close(d);
				}
				break;
			}
			case 3: {
				char *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
				if (m != MAP_FAILED)
					munmap(m, 4096);
				break;
			}
			case 4:
				(void)!lseek(fd, 0, SEEK_SET);
				break;
			}
			atomic_fetch_add(&stress_ops, 1);
		}
		close(fd);
	}
	return NULL;
}

static void *pipe_stress_thread(void *p)
{
	int *fds = p;
	char buf[128];
	while (!atomic_load(&stop_flag)) {
		if (read(fds[0], buf, sizeof(buf)) < 0 && errno == EBADF)
			break;
	}
	return NULL;
}

static int t_stress(void)
{
	enum { NT = 4 };
	pthread_t t[NT];
	stress_path = tmpfile_with("stress", "0123456789abcdef", 0644);
	CHECK(stress_path);
	CHECK(sysconf(_SC_NPROCESSORS_ONLN) >= 2 || 1);
	for (long i = 0; i < NT; i++)
		CHECK(pthread_create(&t[i], NULL, stress_thread, (void *)i) == 0);
	int revokes = 0;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		/* Also blocked pipe readers revoked while the others churn. */
		int p[2];
		pthread_t pt;
		CHECK(pipe(p) == 0);
		CHECK(pthread_create(&pt, NULL, pipe_stress_thread, p) == 0);
		CHECK(sys_revoke(stress_path) == 0);
		CHECK(sys_frevoke(p[1]) == 0);
		CHECK(pthread_join(pt, NULL) == 0);
		close(p[0]);
		close(p[1]);
		revokes++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < 8);
	atomic_store(&stop_flag, 1);
	for (int i = 0; i < NT; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	printf("# stress: %d revokes, %ld operations, %ld cpus\n", revokes,
	       atomic_load(&stress_ops), sysconf(_SC_NPROCESSORS_ONLN));
	CHECK(revokes > 10);
	return 0;
}

/* ---- no partial damage --------------------------------------------------- */

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int r = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
	close(fd);
	return r;
}

static int t_enomem_no_damage(void)
{
	char nth[32];
	int injected = 0, n;
	if (access("/proc/thread-self/fail-nth", W_OK) != 0)
		SKIP("no fail-nth (CONFIG_FAULT_INJECTION): %s", strerror(errno));
	if (write_file("/sys/kernel/debug/failslab/ignore-gfp-wait", "N") != 0 ||
	    write_file("/sys/kernel/debug/failslab/verbose", "0") != 0)
		SKIP("no failslab debugfs: %s", strerror(errno));
	const char *path = tmpfile_with("enomem", "hello", 0644);
	CHECK(path);
	for (n = 1; n < 500; n++) {
		int fds[4];
		for (int i = 0; i < 4; i++)
			CHECK((fds[i] = open(path, O_RDONLY)) >= 0);
		char *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fds[0], 0);
		CHECK(m != MAP_FAILED);
		int p[2];
		CHECK(pipe(p) == 0);
		pid_t holder = fork(); /* another process holding the files */
		if (holder == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			pause();
			_exit(0);
		}
		snprintf(nth, sizeof(nth), "%d", n);
		CHECK(write_file("/proc/thread-self/fail-nth", nth) == 0);
		int r = sys_revoke(path);
		int e = errno;
		write_file("/proc/thread-self/fail-nth", "0");
		if (r == 0) {
			for (int i = 0; i < 4; i++)
				CHECK(fd_dead(fds[i]));
			signal(SIGBUS, on_sigbus);
			CHECK(touches_sigbus(m, false));
		} else {
			errno = e;
			CHECK(e == ENOMEM);
			injected++;
			char c;
			for (int i = 0; i < 4; i++)
				CHECK(pread(fds[i], &c, 1, 0) == 1 && c == 'h');
			CHECK(m[0] == 'h');
		}
		kill(holder, SIGKILL);
		waitpid(holder, NULL, 0);
		munmap(m, 4096);
		for (int i = 0; i < 4; i++)
			close(fds[i]);
		close(p[0]);
		close(p[1]);
		if (r == 0)
			break;
	}
	printf("# enomem: %d injected failures, every one left all 4 fds and the mapping intact; "
	       "success at allocation %d\n",
	       injected, n);
	CHECK(injected >= 3);
	return 0;
}

/*
 * O_PATH files are revoked too, of any inode type (symbolic link, socket
 * inode, directory, device); what uses only their path refuses them.
 */
static int t_opath(void)
{
	const char *path = tmpfile_with("opath", "x", 0644);
	struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = "/tmp/opath-sock"};
	char proclink[64], target[256];
	struct statfs sfs;
	struct stat st;
	CHECK(path);
	unlink("/tmp/opath-link");
	unlink("/tmp/opath-sock");
	unlink("/tmp/opath-null");
	mkdir("/tmp/opath-dir", 0755);
	CHECK(symlink(path, "/tmp/opath-link") == 0);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(s >= 0 && bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(s, 1) == 0);
	/* A private node of /dev/null: revoking it leaves the guest's own alone. */
	CHECK(mknod("/tmp/opath-null", S_IFCHR | 0666, makedev(1, 3)) == 0);

	int f = open(path, O_PATH), l = open("/tmp/opath-link", O_PATH | O_NOFOLLOW);
	int d = open("/tmp/opath-dir", O_PATH | O_DIRECTORY), k = open("/tmp/opath-sock", O_PATH);
	int np = open("/tmp/opath-null", O_PATH), nw = open("/tmp/opath-null", O_WRONLY);
	CHECK(f >= 0 && l >= 0 && d >= 0 && k >= 0 && np >= 0 && nw >= 0);
	CHECK(fstat(l, &st) == 0 && S_ISLNK(st.st_mode));

	CHECK(sys_revoke(path) == 0);
	CHECK(fstat(f, &st) < 0 && errno == EBADF);
	CHECK(fstatat(f, "", &st, AT_EMPTY_PATH) < 0 && errno == EBADF);
	CHECK(fstatfs(f, &sfs) < 0 && errno == EBADF);
	snprintf(proclink, sizeof(proclink), "/proc/self/fd/%d", f);
	CHECK(readlink(proclink, target, sizeof(target)) < 0 && errno == ENOENT);
	CHECK(open(proclink, O_RDONLY) < 0 && errno == ENOENT);
	/* Revoking the file a link names leaves the link's own O_PATH file. */
	CHECK(fstat(l, &st) == 0 && S_ISLNK(st.st_mode));
	snprintf(proclink, sizeof(proclink), "/proc/self/fd/%d", l);
	CHECK(sys_revoke(proclink) == 0); /* the magic link names the link itself */
	CHECK(fstat(l, &st) < 0 && errno == EBADF);

	/* frevoke() takes an O_PATH descriptor, keeps it, revokes the rest. */
	int keep = open("/tmp/opath-dir", O_PATH), other = open("/tmp/opath-dir", O_RDONLY);
	CHECK(keep >= 0 && other >= 0 && sys_frevoke(keep) == 0);
	CHECK(fstat(keep, &st) == 0 && S_ISDIR(st.st_mode));
	CHECK(fstat(d, &st) < 0 && errno == EBADF);
	CHECK(fchdir(other) < 0 && errno == ENOTDIR);
	CHECK(sys_frevoke(d) < 0 && errno == EBADF); /* revoked itself */
	CHECK(close(keep) == 0 && close(other) == 0);
	CHECK(sys_revoke("/tmp/opath-dir") == 0);
	CHECK(openat(d, "x", O_RDONLY) < 0 && errno == ENOTDIR);
	CHECK(fchdir(d) < 0 && errno == ENOTDIR);

	CHECK(sys_revoke("/tmp/opath-sock") == 0);
	CHECK(fstat(k, &st) < 0 && errno == EBADF);
	socklen_t len = sizeof(sa);
	CHECK(getsockname(s, (struct sockaddr *)&sa, &len) == 0); /* the socket is not its inode */

	/* Revoked O_PATH and open files of a device: only the open one put the
	 * cdev reference it took (a second put would free the cdev). */
	CHECK(sys_revoke("/tmp/opath-null") == 0);
	CHECK(fstat(np, &st) < 0 && errno == EBADF);
	CHECK(write(nw, "x", 1) < 0 && errno == EBADF);
	CHECK(close(f) == 0 && close(l) == 0 && close(d) == 0 && close(k) == 0);
	CHECK(close(np) == 0 && close(nw) == 0);
	for (int i = 0; i < 3; i++) {
		int n = open("/tmp/opath-null", O_WRONLY);
		CHECK(n >= 0 && write(n, "x", 1) == 1 && close(n) == 0);
	}
	close(s);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(void);
		unsigned int timeout;
	} cases[] = {
	    {"marker", t_marker, 10},
	    {"basic-several-processes", t_basic, 20},
	    {"no-holders", t_no_holders, 10},
	    {"errors", t_errors, 10},
	    {"symlink-followed", t_symlink_followed, 10},
	    {"eperm-eacces", t_eperm, 20},
	    {"frevoke-keeps-description", t_frevoke_keeps, 20},
	    {"frevoke-in-forked-child", t_frevoke_in_child, 20},
	    {"mmap-sigbus-range-kept-writeback", t_mmap_sigbus, 20},
	    {"mmap-other-stopped-process", t_mmap_other_process, 20},
	    {"pipe-blocked-reader", t_pipe_reader, 20},
	    {"pipe-blocked-reader-thread", t_pipe_reader_thread, 20},
	    {"fifo-blocked-reader", t_fifo_reader, 20},
	    {"pty-blocked-reader", t_pty_reader, 20},
	    {"drain-blocked-writer", t_drain_blocked_writer, 20},
	    {"scm-rights-in-flight", t_scm_rights, 20},
	    {"io-uring-fixed-file", t_io_uring_fixed, 20},
	    {"epoll-registration", t_epoll, 20},
	    {"directory", t_directory, 20},
	    {"opath-files", t_opath, 20},
	    {"locks-released-on-close", t_locks_released, 20},
	    {"smp-stress", t_stress, 120},
	    {"enomem-no-partial-damage", t_enomem_no_damage, 300},
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && !strstr(cases[i].name, argv[1]))
			continue;
		run(cases[i].name, cases[i].fn, cases[i].timeout);
	}
	printf("# revoke-test: %d passed, %d failed, %d skipped\n", npass, nfail, nskip);
	return nfail ? 1 : 0;
}
