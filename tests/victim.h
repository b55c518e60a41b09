/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Victims for the conformance suite: processes (and threads) the test created
 * itself, that hold files and perform one operation at a time on request.
 *
 * A victim is a forked child of the test (so the test may trace and signal
 * it) with PR_SET_PDEATHSIG(SIGKILL), and stays in the case's process group,
 * so the harness's kill(-case) takes it down. It serves requests over a
 * SOCK_SEQPACKET socketpair: the test sends a struct victim_req, the victim
 * performs exactly that call and sends back a struct victim_res with the
 * return value, errno, the signal a memory access raised, the thread that did
 * it and any bytes read. Victims never print.
 *
 *	struct victim v;
 *	victim_start(&v);                         // forked child, serving
 *	int fd = victim_open(&v, path, O_RDONLY); // opened in the victim
 *	... revoke(path) ...
 *	struct victim_res r = victim_read(&v, fd, 16);
 *	CHECK(r.ret == -1 && r.err == EBADF, ...);
 *
 * A victim can make more victims that inherit its descriptors: VOP_FORK (a
 * child), VOP_THREAD (a thread of the same process), VOP_CLONE_FILES (a
 * process sharing its fd table, not its memory). Each serves its own socket,
 * handed back to the test with SCM_RIGHTS (victim_spawn()).
 *
 * For a call that blocks (a read on an empty FIFO), split it:
 * victim_send(), victim_wait_syscall() until the thread sits in that syscall,
 * act, then victim_recv().
 *
 * The low level, for victims that need a special parent (an unshared
 * namespace, another uid): victim_become(sock) turns the calling child into a
 * victim of its parent serving SOCK, and never returns.
 *
 * Also here, for the cases themselves: test_scratch() (a private tmpfs on
 * /tmp that vanishes with the case), test_write_file(), test_as_nobody()
 * (run a function as uid 65534), victim_state() and victim_wait_syscall()
 * (read /proc), and test_revoke()/test_frevoke()/test_revoke_ex(): the
 * library calls, retried when a loaded machine made them run out of time.
 */
#ifndef REVOKE_TEST_VICTIM_H
#define REVOKE_TEST_VICTIM_H

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

#define VICTIM_PATH_MAX 512
#define VICTIM_DATA_MAX 512

enum victim_op {
	VOP_PING = 1,	 /* ret = getpid() (in the victim's pid namespace) */
	VOP_OPEN,	 /* open(path, flags, 0600) */
	VOP_OPENAT,	 /* openat(fd, path, flags, 0600) */
	VOP_CLOSE,	 /* close(fd) */
	VOP_DUP,	 /* dup(fd) */
	VOP_DUPFD,	 /* fcntl(fd, F_DUPFD, arg) */
	VOP_READ,	 /* read(fd, data, len): the bytes come back in data */
	VOP_PREAD,	 /* pread(fd, data, len, arg) */
	VOP_WRITE,	 /* write(fd, data, len) */
	VOP_FIONREAD,	 /* ioctl(fd, FIONREAD, &n): ret = n */
	VOP_GETFD,	 /* fcntl(fd, F_GETFD) */
	VOP_GETDENTS,	 /* getdents64(fd, data, sizeof data) */
	VOP_FSTAT,	 /* fstat(fd, (struct stat *)data) */
	VOP_MMAP,	 /* mmap(NULL, len, prot, flags, fd, arg): ret = address */
	VOP_MPROTECT,	 /* mprotect(arg, len, prot) */
	VOP_LOAD,	 /* ret = *(volatile uint8_t *)arg; sig = SIGBUS/SIGSEGV */
	VOP_STORE,	 /* *(volatile uint8_t *)arg = data[0]; sig as VOP_LOAD */
	VOP_MEMFD,	 /* memfd_create(path, 0) holding len bytes of data[0]: ret = fd */
	VOP_SOCKETPAIR,	 /* socketpair(AF_UNIX, SOCK_STREAM): ret = sv[0], data = (int)sv[1] */
	VOP_SETSID,	 /* setsid() */
	VOP_SIGIGN,	 /* signal(arg, SIG_IGN) */
	VOP_FORK,	 /* fork a child victim (inherits everything) */
	VOP_THREAD,	 /* start a thread victim in this process */
	VOP_CLONE_FILES, /* clone(CLONE_FILES) a process victim sharing the fd table */
	VOP_CHDIR,	 /* chdir(path) */
	VOP_CHROOT,	 /* chroot(path), then chdir("/") */
	VOP_GETCWD,	 /* getcwd(data, sizeof data): ret = 0, the path in data */
	VOP_STAT,	 /* stat(path, (struct stat *)data) */
	VOP_EXIT,	 /* stop serving */
};

struct victim_req {
	int op;
	int fd;
	int flags; /* open flags, mmap flags */
	int prot;  /* mmap prot */
	long arg;  /* see enum victim_op */
	size_t len;
	char path[VICTIM_PATH_MAX];
	char data[VICTIM_DATA_MAX];
};

struct victim_res {
	long ret;   /* the call's return value (-1 on failure) */
	int err;    /* errno when the call failed, else 0 */
	int sig;    /* the signal a VOP_LOAD/VOP_STORE raised, else 0 */
	pid_t tid;  /* the thread that performed it (gettid()) */
	size_t len; /* bytes in data */
	char data[VICTIM_DATA_MAX];
};

struct victim {
	pid_t pid; /* in the test's pid namespace, or 0 if unknown */
	int sock;  /* the test's end */
};

/* ---- inside the victim ---- */

static __thread sigjmp_buf victim_jmp;
static __thread volatile int victim_jmp_armed;

static inline void victim_on_fault(int sig)
{
	if (victim_jmp_armed)
		siglongjmp(victim_jmp, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

static inline void victim_serve(int sock);

static void *victim_thread_main(void *p)
{
	victim_serve((int)(intptr_t)p);
	return NULL;
}

static inline int victim_clone_main(void *p)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	victim_serve((int)(intptr_t)p);
	_exit(0);
}

/* Send RES, with FD attached when FD >= 0. */
static inline int victim_send_res(int sock, const struct victim_res *res, int fd)
{
	struct iovec iov = {.iov_base = (void *)res, .iov_len = sizeof(*res)};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(*res) ? 0 : -1;
}

/* Make a new victim of kind OP sharing what OP shares; returns its pid/tid
 * and the test's end of its socket in *ret_sock. */
static inline long victim_spawn_local(int op, int parent_sock, int *ret_sock)
{
	static char clone_stack[64 * 1024] __attribute__((aligned(16)));
	int sp[2];
	long r;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -1;
	if (op == VOP_FORK) {
		pid_t pid = fork();
		if (pid == 0) {
			close(parent_sock);
			close(sp[0]);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			victim_serve(sp[1]);
			_exit(0);
		}
		r = pid;
		close(sp[1]);
	} else if (op == VOP_THREAD) {
		pthread_t t;
		int e = pthread_create(&t, NULL, victim_thread_main, (void *)(intptr_t)sp[1]);
		if (e) {
			close(sp[0]);
			close(sp[1]);
			errno = e;
			return -1;
		}
		pthread_detach(t);
		r = 0; /* the thread tells its tid with every reply */
	} else {
		/* No CLONE_VM: the child has its own copy of the stack buffer.
		 * sp[1] stays open here: closing it would close it in the shared
		 * table, under the child. */
		r = clone(victim_clone_main, clone_stack + sizeof(clone_stack),
			  CLONE_FILES | SIGCHLD, (void *)(intptr_t)sp[1]);
		if (r < 0) {
			close(sp[0]);
			close(sp[1]);
			return -1;
		}
	}
	if (r < 0) {
		close(sp[0]);
		return -1;
	}
	*ret_sock = sp[0];
	return r;
}

static inline void victim_do(int sock, const struct victim_req *q, struct victim_res *s,
			     int *ret_fd)
{
	char path[VICTIM_PATH_MAX];
	size_t len = q->len < VICTIM_DATA_MAX ? q->len : VICTIM_DATA_MAX;
	long r = -1;

	memcpy(path, q->path, sizeof(path));
	path[sizeof(path) - 1] = 0;
	errno = 0;
	switch (q->op) {
	case VOP_PING:
		r = getpid();
		break;
	case VOP_OPEN:
		r = open(path, q->flags, 0600);
		break;
	case VOP_OPENAT:
		r = openat(q->fd, path, q->flags, 0600);
		break;
	case VOP_CLOSE:
		r = close(q->fd);
		break;
	case VOP_DUP:
		r = dup(q->fd);
		break;
	case VOP_DUPFD:
		r = fcntl(q->fd, F_DUPFD, (int)q->arg);
		break;
	case VOP_READ:
		r = read(q->fd, s->data, len);
		break;
	case VOP_PREAD:
		r = pread(q->fd, s->data, len, q->arg);
		break;
	case VOP_WRITE:
		r = write(q->fd, q->data, len);
		break;
	case VOP_FIONREAD: {
		int n = 0;
		r = ioctl(q->fd, FIONREAD, &n);
		if (r == 0)
			r = n;
		break;
	}
	case VOP_GETFD:
		r = fcntl(q->fd, F_GETFD);
		break;
	case VOP_GETDENTS:
		r = syscall(SYS_getdents64, q->fd, s->data, sizeof(s->data));
		break;
	case VOP_FSTAT: {
		/* In braces: a declaration may not follow a label before C23 (clang). */
		_Static_assert(sizeof(struct stat) <= VICTIM_DATA_MAX, "stat fits");
		r = fstat(q->fd, (struct stat *)s->data);
		if (r == 0)
			s->len = sizeof(struct stat);
		break;
	}
	case VOP_MMAP: {
		void *p = mmap(NULL, q->len, q->prot, q->flags, q->fd, q->arg);
		r = p == MAP_FAILED ? -1 : (long)(uintptr_t)p;
		break;
	}
	case VOP_MPROTECT:
		r = mprotect((void *)(uintptr_t)q->arg, q->len, q->prot);
		break;
	case VOP_LOAD:
	case VOP_STORE: {
		int sig;

		victim_jmp_armed = 1;
		sig = sigsetjmp(victim_jmp, 1);
		if (sig == 0) {
			volatile uint8_t *p = (volatile uint8_t *)(uintptr_t)q->arg;
			if (q->op == VOP_LOAD)
				r = *p;
			else {
				*p = (uint8_t)q->data[0];
				r = 0;
			}
		} else
			s->sig = sig;
		victim_jmp_armed = 0;
		break;
	}
	case VOP_MEMFD:
		r = memfd_create(path, 0);
		if (r >= 0) {
			for (size_t off = 0; off < q->len; off++)
				if (pwrite((int)r, q->data, 1, (off_t)off) != 1) {
					close((int)r);
					r = -1;
					break;
				}
		}
		break;
	case VOP_SOCKETPAIR: {
		int sv[2];
		r = socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
		if (r == 0) {
			r = sv[0];
			memcpy(s->data, &sv[1], sizeof(int));
			s->len = sizeof(int);
		}
		break;
	}
	case VOP_SETSID:
		r = setsid();
		break;
	case VOP_SIGIGN:
		r = signal((int)q->arg, SIG_IGN) == SIG_ERR ? -1 : 0;
		break;
	case VOP_CHDIR:
		r = chdir(path);
		break;
	case VOP_CHROOT:
		r = chroot(path);
		if (r == 0)
			r = chdir("/");
		break;
	case VOP_GETCWD:
		r = getcwd(s->data, sizeof(s->data)) ? 0 : -1;
		if (r == 0)
			s->len = strlen(s->data);
		break;
	case VOP_STAT:
		r = stat(path, (struct stat *)s->data);
		if (r == 0)
			s->len = sizeof(struct stat);
		break;
	case VOP_FORK:
	case VOP_THREAD:
	case VOP_CLONE_FILES:
		r = victim_spawn_local(q->op, sock, ret_fd);
		break;
	default:
		errno = EINVAL;
	}
	s->ret = r;
	s->err = r == -1 ? errno : 0;
	if (s->ret >= 0 && (q->op == VOP_READ || q->op == VOP_PREAD || q->op == VOP_GETDENTS))
		s->len = (size_t)s->ret;
	s->tid = (pid_t)syscall(SYS_gettid);
}

/* Serve requests on SOCK until the test hangs up or sends VOP_EXIT. */
static inline void victim_serve(int sock)
{
	struct sigaction sa = {.sa_handler = victim_on_fault};

	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	for (int i = 0; i < 1000000; i++) {
		static __thread struct victim_req q;
		static __thread struct victim_res s;
		int fd = -1;
		ssize_t n = recv(sock, &q, sizeof(q), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(q) || q.op == VOP_EXIT)
			break;
		memset(&s, 0, sizeof(s));
		victim_do(sock, &q, &s, &fd);
		if (victim_send_res(sock, &s, fd) < 0)
			break;
		if (fd >= 0)
			close(fd);
	}
}

/* In a forked child: become a victim of the parent, serving SOCK. */
static inline void __attribute__((noreturn)) victim_become(int sock)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	victim_serve(sock);
	_exit(0);
}

/* ---- in the test ---- */

/* Fork a victim that serves requests; returns in the parent only. */
static inline void victim_start(struct victim *v)
{
	pid_t parent = getpid();
	int sp[2];

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0, "socketpair: %m");
	v->pid = fork();
	CHECK(v->pid >= 0, "fork: %m");
	if (v->pid == 0) {
		close(sp[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		victim_serve(sp[1]);
		_exit(0);
	}
	close(sp[1]);
	v->sock = sp[0];
}

static inline void victim_send(struct victim *v, const struct victim_req *q)
{
	CHECK(send(v->sock, q, sizeof(*q), MSG_NOSIGNAL) == (ssize_t)sizeof(*q),
	      "send to victim %d: %m", (int)v->pid);
}

/* Receive one reply; *ret_fd (if not NULL) gets a descriptor attached to it or -1. */
static inline struct victim_res victim_recv_fd(struct victim *v, int *ret_fd)
{
	struct victim_res s;
	struct iovec iov = {.iov_base = &s, .iov_len = sizeof(s)};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf)};
	ssize_t n;

	do
		n = recvmsg(v->sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	CHECK(n == (ssize_t)sizeof(s), "no reply from victim %d (%zd: %m): did it die?",
	      (int)v->pid, n);
	if (ret_fd) {
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		*ret_fd = -1;
		if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(ret_fd, CMSG_DATA(c), sizeof(int));
	}
	return s;
}

static inline struct victim_res victim_recv(struct victim *v)
{
	return victim_recv_fd(v, NULL);
}

static inline struct victim_res victim_call(struct victim *v, const struct victim_req *q)
{
	victim_send(v, q);
	return victim_recv(v);
}

#define VICTIM_REQ(...) (&(struct victim_req){__VA_ARGS__})

/* Open PATH in the victim; the case fails unless it worked. */
static inline int victim_open(struct victim *v, const char *path, int flags)
{
	struct victim_req q = {.op = VOP_OPEN, .flags = flags};
	struct victim_res r;

	snprintf(q.path, sizeof(q.path), "%s", path);
	r = victim_call(v, &q);
	CHECK(r.ret >= 0, "victim %d: open(%s): %s", (int)v->pid, path, strerror(r.err));
	return (int)r.ret;
}

static inline struct victim_res victim_read(struct victim *v, int fd, size_t len)
{
	return victim_call(v, VICTIM_REQ(.op = VOP_READ, .fd = fd, .len = len));
}

static inline struct victim_res victim_write(struct victim *v, int fd, const char *data)
{
	struct victim_req q = {.op = VOP_WRITE, .fd = fd, .len = strlen(data)};

	snprintf(q.data, sizeof(q.data), "%s", data);
	return victim_call(v, &q);
}

/* Make a new victim from V (VOP_FORK, VOP_THREAD or VOP_CLONE_FILES) into *NV. */
static inline void victim_spawn(struct victim *v, int op, struct victim *nv)
{
	struct victim_res r;
	int fd;

	victim_send(v, VICTIM_REQ(.op = op));
	r = victim_recv_fd(v, &fd);
	CHECK(r.ret >= 0 && fd >= 0, "victim %d: spawn op %d: %s", (int)v->pid, op,
	      strerror(r.err));
	nv->sock = fd;
	nv->pid = op == VOP_THREAD ? v->pid : (pid_t)r.ret;
}

/* Wait (bounded) until thread TID sits in syscall NR, e.g. blocked in read(). */
static inline int victim_wait_syscall(pid_t tid, long nr)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	for (int i = 0; i < 10000; i++) { /* at most ~10 s */
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n;

		if (fd < 0)
			return -errno;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			char *end;
			long cur;

			buf[n] = 0;
			cur = strtol(buf, &end, 10);
			if (end != buf && cur == nr)
				return 0;
		}
		usleep(1000);
	}
	return -ETIMEDOUT;
}

/* The state letter of /proc/PID/stat ('R', 'S', 'T', 't', ...), or 0. */
static inline char victim_state(pid_t pid)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')'); /* comm may hold anything, ')' too */
	return p && p[1] == ' ' ? p[2] : 0;
}

/* ---- calling the library ---- */

/*
 * CALL (revoke(), frevoke(), revoke_ex()) run again, at most twice more, when
 * it fails with ETIMEDOUT: that promises nothing was changed, and a machine
 * busy with other work (a parallel build, benchmarks with thousands of
 * processes) can make one scan of every process outlast the 5 s default. A
 * call that hangs for real still fails, three times over. Each retry leaves
 * a note in the case's output.
 */
#define TEST_RETRY_TIMEDOUT(call)                                                                  \
	({                                                                                         \
		int _r;                                                                            \
		for (int _i = 0;; _i++) {                                                          \
			_r = (call);                                                               \
			if (!(_r == -1 && errno == ETIMEDOUT && _i < 2))                           \
				break;                                                             \
			fprintf(stderr, "  note: %s: ETIMEDOUT (nothing changed), again\n",        \
				#call);                                                            \
		}                                                                                  \
		_r;                                                                                \
	})

static inline int test_revoke(const char *path)
{
	return TEST_RETRY_TIMEDOUT(revoke(path));
}

static inline int test_frevoke(int fd)
{
	return TEST_RETRY_TIMEDOUT(frevoke(fd));
}

static inline int test_revoke_ex(const char *const *paths, size_t n, const struct revoke_opts *opts,
				 struct revoke_report **ret_report)
{
	for (int i = 0;; i++) {
		int r = revoke_ex(paths, n, opts, ret_report);
		if (!(r == -1 && errno == ETIMEDOUT && i < 2))
			return r;
		fprintf(stderr, "  note: revoke_ex: ETIMEDOUT (nothing changed), again\n");
		if (ret_report) {
			revoke_report_free(*ret_report);
			*ret_report = NULL;
		}
	}
}

/* ---- scratch files and identities ---- */

/*
 * A private scratch directory for the case, returned as "/tmp": the case
 * process moves into a new mount namespace (propagation private, so nothing
 * leaks to the host) and mounts a fresh tmpfs on /tmp. Victims forked
 * afterwards share it; everything in it, device nodes and loop backing files
 * included, vanishes with the case's processes, even when the case fails.
 * Call it first thing in a case, before forking victims.
 */
static inline const char *test_scratch(void)
{
	CHECK(unshare(CLONE_NEWNS) == 0, "unshare(CLONE_NEWNS): %m");
	CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "make / private: %m");
	CHECK(mount("revoke-test", "/tmp", "tmpfs", 0, "mode=1777") == 0, "mount tmpfs: %m");
	return "/tmp";
}

/* Create PATH (mode 0644) holding DATA; the case fails otherwise. */
static inline void test_write_file(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t len = strlen(data);

	CHECK(fd >= 0, "create %s: %m", path);
	CHECK(write(fd, data, len) == (ssize_t)len, "write %s: %m", path);
	CHECK(close(fd) == 0, "close %s: %m", path);
}

#define TEST_NOBODY 65534

/*
 * Run FN(ARG) in a forked child as uid/gid 65534 with no capabilities and no
 * supplementary groups; the case fails (or skips) as the child did. The child
 * is made dumpable again: changing uid cleared that, and the kernel refuses
 * to let even the same uid trace or read /proc/PID/fd of a non-dumpable
 * process (an exec'd program would be dumpable).
 */
static inline void test_as_nobody(void (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	int status;

	CHECK(pid >= 0, "fork: %m");
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 ||
		    setresgid(TEST_NOBODY, TEST_NOBODY, TEST_NOBODY) < 0 ||
		    setresuid(TEST_NOBODY, TEST_NOBODY, TEST_NOBODY) < 0)
			test_fail("drop to uid %d: %m", TEST_NOBODY);
		/* The uid change cleared both. */
		prctl(PR_SET_DUMPABLE, 1);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fn(arg);
		fflush(NULL);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		CHECK(errno == EINTR, "waitpid: %m");
	if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_EXIT_SKIP)
		_exit(TEST_EXIT_SKIP);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the uid %d child failed (status 0x%x)", TEST_NOBODY, status);
}

#endif
