/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writes the seed corpus of the /proc parser fuzzers from this machine's
 * real /proc files: make-seeds OUTDIR (as root; tests/fuzz/run --make-seeds
 * builds and runs it into tests/fuzz/corpus). For each object it creates, it
 * saves the text the kernel shows for it:
 *   stat, status: this process, a thread, a zombie, kernel threads, ')' and
 *     spaces and a newline in comm, a stopped, a traced, a seccomp-filtered
 *     process, one in a child pid namespace (two NSpid entries);
 *   fdinfo, user-files: a regular file, a directory, O_PATH, a pipe, a unix
 *     socket with descriptors in flight (scm_fds), io_uring with registered
 *     files (UserFiles, a name with spaces and a tab, an empty slot, and a
 *     path longer than PATH_MAX), epoll (tfd lines), eventfd, signalfd,
 *     timerfd, inotify, memfd, pidfd;
 *   maps-line: maps with [vdso], [vvar], [stack], [heap], a deleted file, a
 *     name with spaces and a newline, a memfd, shared and private mappings;
 *   int: /proc directory names and kernel limits.
 * Everything it creates is its own (children it forks and reaps, files in a
 * directory it removes).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fork.h"
#include "scratch.h"

static const char *outdir;
static char tmpdir[] = "/tmp/revoke-seeds-XXXXXX";
static int failures;

static void die(const char *what)
{
	fprintf(stderr, "make-seeds: %s: %s\n", what, strerror(errno));
	exit(1);
}

static ssize_t read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return -1;
	while (n < size && (r = read(fd, buf + n, size - n)) > 0)
		n += (size_t)r;
	close(fd);
	return (ssize_t)n;
}

/* Saves the text of /proc file PATH as OUTDIR/TARGET/NAME. */
static void save(const char *target, const char *name, const char *path)
{
	static char buf[1 << 20];
	char out[4096];
	ssize_t n = read_file(path, buf, sizeof(buf));
	int fd;

	if (n <= 0) {
		fprintf(stderr, "make-seeds: cannot read %s for %s/%s: %s\n", path, target, name,
			n < 0 ? strerror(errno) : "empty");
		failures++;
		return;
	}
	snprintf(out, sizeof(out), "%s/%s", outdir, target);
	mkdir(out, 0755);
	snprintf(out, sizeof(out), "%s/%s/%s", outdir, target, name);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, (size_t)n) != n)
		die(out);
	close(fd);
	printf("%s/%s: %zd bytes from %s\n", target, name, n, path);
}

static void save_text(const char *target, const char *name, const char *text)
{
	char out[4096];
	int fd;

	snprintf(out, sizeof(out), "%s/%s", outdir, target);
	mkdir(out, 0755);
	snprintf(out, sizeof(out), "%s/%s/%s", outdir, target, name);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die(out);
	close(fd);
}

static void save_proc(pid_t pid, const char *what, const char *target, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, what);
	save(target, name, path);
}

static void save_stat_status(pid_t pid, const char *name)
{
	save_proc(pid, "stat", "stat", name);
	save_proc(pid, "status", "status", name);
}

static void save_fdinfo(int fd, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	save("fdinfo", name, path);
}

/* A child that sets its comm (NULL: keeps it), then waits to be killed. */
static pid_t child_named(const char *comm)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) < 0)
		die("pipe");
	pid = test_fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (comm)
			prctl(PR_SET_NAME, comm);
		close(p[0]);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		die("child start");
	close(p[0]);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
}

static void wait_state(pid_t pid, char want)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (int i = 0; i < 2000; i++) {
		ssize_t n = read_file(path, buf, sizeof(buf) - 1);
		char *close;

		if (n > 0) {
			buf[n] = '\0';
			close = strrchr(buf, ')');
			if (close && close[1] == ' ' && close[2] == want)
				return;
		}
		usleep(1000);
	}
	fprintf(stderr, "make-seeds: pid %d never reached state %c\n", pid, want);
	failures++;
}

static volatile pid_t thread_tid;

static void *thread_main(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "seed thread");
	thread_tid = (pid_t)syscall(SYS_gettid);
	pause();
	return NULL;
}

static void processes(void)
{
	pthread_t th;
	pid_t pid;
	char path[128];

	save_stat_status(getpid(), "self");
	if (pthread_create(&th, NULL, thread_main, NULL) != 0)
		die("pthread_create");
	usleep(20000);
	save("stat", "self-threads", "/proc/self/stat");
	save("status", "self-threads", "/proc/self/status");
	for (int i = 0; i < 2; i++) {
		static const char *const what[] = {"stat", "status"};
		snprintf(path, sizeof(path), "/proc/self/task/%ld/%s", (long)thread_tid, what[i]);
		save(what[i], "thread", path);
	}

	/* Kernel threads: kthreadd, and the first kworker found. */
	save_stat_status(2, "kthreadd");

	pid = child_named("a) (b");
	save_stat_status(pid, "comm-paren");
	reap(pid);
	pid = child_named("x y\nz) T 1 ");
	save_stat_status(pid, "comm-space-newline");
	reap(pid);
	pid = child_named(")))");
	save_stat_status(pid, "comm-only-parens");
	reap(pid);

	pid = child_named(NULL);
	kill(pid, SIGSTOP);
	wait_state(pid, 'T');
	save_stat_status(pid, "stopped");
	reap(pid);

	pid = child_named(NULL);
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) == 0 && ptrace(PTRACE_INTERRUPT, pid, 0, 0) == 0) {
		waitpid(pid, NULL, __WALL);
		save_stat_status(pid, "traced");
	} else {
		fprintf(stderr, "make-seeds: ptrace: %s\n", strerror(errno));
		failures++;
	}
	reap(pid);

	pid = test_fork();
	if (pid < 0)
		die("fork");
	if (pid == 0)
		_exit(0);
	wait_state(pid, 'Z');
	save_stat_status(pid, "zombie");
	waitpid(pid, NULL, 0);

	/* Seccomp: 2 (a filter that allows everything). */
	pid = test_fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		struct sock_fprog prog = {.len = 1, .filter = &allow};

		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
		prctl(PR_SET_NAME, "seccomp");
		for (;;)
			pause();
	}
	usleep(50000);
	save_stat_status(pid, "seccomp");
	reap(pid);

	/* A process in a child pid namespace: NSpid has two entries. Done in a
	 * helper: once the namespace's first process is gone, whoever
	 * unshared it can fork no more. */
	pid = test_fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		pid_t inner;

		if (unshare(CLONE_NEWPID) < 0) {
			fprintf(stderr, "make-seeds: unshare(CLONE_NEWPID): %s\n", strerror(errno));
			_exit(1);
		}
		inner = child_named("nspid");
		save_stat_status(inner, "pid-namespace");
		reap(inner);
		_exit(failures ? 1 : 0);
	} else {
		int st;

		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failures++;
	}
}

static int io_uring_setup_(unsigned int entries, struct io_uring_params *p)
{
	return (int)syscall(SYS_io_uring_setup, entries, p);
}

static int io_uring_register_(int fd, unsigned int op, void *arg, unsigned int n)
{
	return (int)syscall(SYS_io_uring_register, fd, op, arg, n);
}

/* A directory chain deeper than PATH_MAX, built with relative mkdirs. */
static int deep_file(void)
{
	char comp[250];
	int dir = open(tmpdir, O_PATH | O_DIRECTORY | O_CLOEXEC), fd;

	memset(comp, 'd', sizeof(comp) - 1);
	comp[sizeof(comp) - 1] = '\0';
	for (int i = 0; i < 20; i++) { /* 20 * 250 > 4096 */
		int next;

		if (mkdirat(dir, comp, 0755) < 0 && errno != EEXIST)
			die("mkdirat");
		next = openat(dir, comp, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (next < 0)
			die("openat");
		close(dir);
		dir = next;
	}
	fd = openat(dir, "deep file", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		die("deep file");
	close(dir);
	return fd;
}

static void descriptors(void)
{
	char path[4096];
	int fd, fds[4], sv[2], p[2], ring, ep, efd, sfd, tfd, ino, mfd, pfd, dir, opath;
	struct io_uring_params params = {0};
	struct epoll_event ev = {.events = EPOLLIN};
	sigset_t mask;

	snprintf(path, sizeof(path), "%s/regular", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "hello\n", 6) != 6)
		die("regular");
	save_fdinfo(fd, "regular");
	dir = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	save_fdinfo(dir, "directory");
	opath = open(path, O_PATH);
	save_fdinfo(opath, "o-path");
	if (pipe2(p, O_NONBLOCK) < 0)
		die("pipe");
	save_fdinfo(p[0], "pipe");

	/* A unix socket with two descriptors in flight. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		die("socketpair");
	{
		union {
			char buf[CMSG_SPACE(2 * sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = {.iov_base = "x", .iov_len = 1};
		struct msghdr msg = {.msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf)};
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		int two[2] = {fd, dir};

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(two));
		memcpy(CMSG_DATA(c), two, sizeof(two));
		if (sendmsg(sv[0], &msg, 0) != 1)
			die("sendmsg");
	}
	save_fdinfo(sv[1], "unix-scm-fds");
	save_fdinfo(sv[0], "unix");

	/* io_uring with registered files: a plain one, a name with a space
	 * and a tab, an empty slot, and a path longer than PATH_MAX. */
	ring = io_uring_setup_(4, &params);
	if (ring < 0) {
		fprintf(stderr, "make-seeds: io_uring_setup: %s\n", strerror(errno));
		failures++;
	} else {
		snprintf(path, sizeof(path), "%s/with space\tand tab", tmpdir);
		fds[0] = fd;
		fds[1] = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		fds[2] = -1;
		fds[3] = deep_file();
		if (io_uring_register_(ring, IORING_REGISTER_FILES, fds, 3) < 0)
			die("IORING_REGISTER_FILES");
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ring);
		save("fdinfo", "io_uring", path);
		save("user-files", "io_uring", path);
		close(ring);
		ring = io_uring_setup_(4, &params);
		if (ring < 0 || io_uring_register_(ring, IORING_REGISTER_FILES, fds, 4) < 0)
			die("io_uring with a deep path");
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ring);
		save("user-files", "io_uring-deep-path", path);
		close(ring);
		close(fds[1]);
		close(fds[3]);
	}

	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.data.u64 = 0x1122334455667788ULL;
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	ev.events = EPOLLOUT | EPOLLET;
	epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev);
	save_fdinfo(ep, "epoll");

	efd = eventfd(42, EFD_CLOEXEC | EFD_SEMAPHORE);
	save_fdinfo(efd, "eventfd");
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGRTMIN + 3);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	save_fdinfo(sfd, "signalfd");
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	timerfd_settime(tfd, 0, &(struct itimerspec){.it_value = {100, 0}, .it_interval = {1, 5}},
			NULL);
	save_fdinfo(tfd, "timerfd");
	ino = inotify_init1(IN_CLOEXEC);
	inotify_add_watch(ino, tmpdir, IN_CREATE | IN_DELETE);
	save_fdinfo(ino, "inotify");
	mfd = memfd_create("seed memfd", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	save_fdinfo(mfd, "memfd");
	pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	save_fdinfo(pfd, "pidfd");
}

static void mappings(void)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/name with spaces\nand a newline", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, 8192) < 0)
		die(path);
	mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 4096);
	close(fd);
	snprintf(path, sizeof(path), "%s/deleted", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		die(path);
	mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	unlink(path);
	close(fd);
	fd = memfd_create("revoked", MFD_CLOEXEC);
	mmap(NULL, 4096, PROT_NONE, MAP_SHARED, fd, 0);
	close(fd);
	malloc(1 << 20); /* [heap] or an anonymous mapping */
	save("maps-line", "self", "/proc/self/maps");
}

static int rm_tree(const char *dir)
{
	return test_remove_tree(dir);
}

int main(int argc, char **argv)
{
	char buf[64];
	ssize_t n;

	if (argc != 2) {
		fprintf(stderr, "usage: make-seeds OUTDIR\n");
		return 2;
	}
	outdir = argv[1];
	mkdir(outdir, 0755);
	if (!mkdtemp(tmpdir))
		die("mkdtemp");
	descriptors();
	mappings();
	processes();

	save_text("int", "pid", "1");
	save_text("int", "int-max", "2147483647");
	save_text("int", "int-max-plus-one", "2147483648");
	save_text("int", "self", "self");
	save_text("int", "dot", ".");
	n = read_file("/proc/sys/kernel/pid_max", buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		save_text("int", "pid-max", buf);
	}
	rm_tree(tmpdir);
	return failures ? 1 : 0;
}
