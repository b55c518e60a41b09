/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Victims: see victim.h. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fork.h"
#include "harness.h"
#include "proc.h"
#include "victim.h"

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

static void victim_serve(int sock);

static void *victim_thread_main(void *p)
{
	victim_serve((int)(intptr_t)p);
	return NULL;
}

static int victim_clone_main(void *p)
{
	victim_serve((int)(intptr_t)p);
	_exit(0);
}

/* Make a new victim of kind OP sharing what OP shares; returns its pid/tid
 * and the test's end of its socket in *ret_sock. */
static long victim_spawn_local(int op, int parent_sock, int *ret_sock)
{
	int sp[2];
	long r;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -1;
	if (op == VOP_FORK) {
		pid_t pid = test_fork();
		if (pid == 0) {
			close(parent_sock);
			close(sp[0]);
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
		/* sp[1] stays open here: closing it would close it in the shared
		 * table, under the child. */
		r = test_clone(victim_clone_main, (void *)(intptr_t)sp[1], CLONE_FILES);
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

static void victim_do(int sock, const struct victim_req *q, struct victim_res *s, int *ret_fd)
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
static void victim_serve(int sock)
{
	struct sigaction sa = {.sa_handler = victim_on_fault};

	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	for (int i = 0; i < 1000000; i++) {
		static __thread struct victim_req q;
		static __thread struct victim_res s;
		int fd = -1, in = -1;
		ssize_t n = msg_recv_fd(sock, &q, sizeof(q), &in);

		if (n != (ssize_t)sizeof(q) || q.op == VOP_EXIT)
			break;
		memset(&s, 0, sizeof(s));
		if (q.op == VOP_RECVFD) {
			s.ret = in;
			s.err = in < 0 ? EBADF : 0;
			s.tid = (pid_t)syscall(SYS_gettid);
		} else {
			if (in >= 0)
				close(in);
			victim_do(sock, &q, &s, &fd);
		}
		if (msg_send_fd(sock, &s, sizeof(s), fd) < 0)
			break;
		if (fd >= 0)
			close(fd);
	}
}

void victim_become(int sock)
{
	victim_serve(sock);
	_exit(0);
}

/* ---- in the test ---- */

void victim_start(struct victim *v)
{
	int sp[2];

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0, "socketpair: %m");
	v->pid = test_fork();
	CHECK(v->pid >= 0, "fork: %m");
	v->in = v->out = -1;
	if (v->pid == 0) {
		close(sp[0]);
		victim_serve(sp[1]);
		_exit(0);
	}
	close(sp[1]);
	v->sock = sp[0];
}

void victim_start_as(struct victim *v, uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups)
{
	int sp[2];

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0, "socketpair: %m");
	v->pid = test_fork();
	CHECK(v->pid >= 0, "fork: %m");
	v->in = v->out = -1;
	if (v->pid == 0) {
		close(sp[0]);
		if (setgroups(ngroups, groups) < 0 ||
		    test_become(uid, gid,
				TEST_BECOME_DUMPABLE | (ngroups ? 0 : TEST_BECOME_NOGROUPS)) < 0)
			_exit(1);
		victim_serve(sp[1]);
		_exit(0);
	}
	close(sp[1]);
	v->sock = sp[0];
}

void victim_send(struct victim *v, const struct victim_req *q)
{
	CHECK(send(v->sock, q, sizeof(*q), MSG_NOSIGNAL) == (ssize_t)sizeof(*q),
	      "send to victim %d: %m", (int)v->pid);
}

int victim_send_fd(struct victim *v, int fd)
{
	struct victim_req q = {.op = VOP_RECVFD};
	struct victim_res r;

	CHECK(msg_send_fd(v->sock, &q, sizeof(q), fd) == 0, "send a descriptor to victim %d: %m",
	      (int)v->pid);
	r = victim_recv(v);
	CHECK(r.ret >= 0, "victim %d received no descriptor", (int)v->pid);
	return (int)r.ret;
}

struct victim_res victim_recv_fd(struct victim *v, int *ret_fd)
{
	struct victim_res s;
	ssize_t n = msg_recv_fd(v->sock, &s, sizeof(s), ret_fd);

	CHECK(n == (ssize_t)sizeof(s), "no reply from victim %d (%zd: %m): did it die?",
	      (int)v->pid, n);
	return s;
}

struct victim_res victim_recv(struct victim *v)
{
	return victim_recv_fd(v, NULL);
}

struct victim_res victim_call(struct victim *v, const struct victim_req *q)
{
	victim_send(v, q);
	return victim_recv(v);
}

int victim_open(struct victim *v, const char *path, int flags)
{
	struct victim_req q = {.op = VOP_OPEN, .flags = flags};
	struct victim_res r;

	snprintf(q.path, sizeof(q.path), "%s", path);
	r = victim_call(v, &q);
	CHECK(r.ret >= 0, "victim %d: open(%s): %s", (int)v->pid, path, strerror(r.err));
	return (int)r.ret;
}

struct victim_res victim_read(struct victim *v, int fd, size_t len)
{
	return victim_call(v, VICTIM_REQ(.op = VOP_READ, .fd = fd, .len = len));
}

struct victim_res victim_write(struct victim *v, int fd, const char *data)
{
	struct victim_req q = {.op = VOP_WRITE, .fd = fd, .len = strlen(data)};

	snprintf(q.data, sizeof(q.data), "%s", data);
	return victim_call(v, &q);
}

void victim_spawn(struct victim *v, int op, struct victim *nv)
{
	struct victim_res r;
	int fd;

	victim_send(v, VICTIM_REQ(.op = op));
	r = victim_recv_fd(v, &fd);
	CHECK(r.ret >= 0 && fd >= 0, "victim %d: spawn op %d: %s", (int)v->pid, op,
	      strerror(r.err));
	nv->sock = fd;
	nv->pid = op == VOP_THREAD ? v->pid : (pid_t)r.ret;
	nv->in = nv->out = -1;
}

int victim_wait_syscall(pid_t tid, long nr)
{
	return proc_wait_syscall(0, tid, nr, -1, NULL, 10000, 1000);
}

/* ---- the victim that runs a function of the test ---- */

struct victim victim_run(void (*fn)(int sock))
{
	int sv[2];
	pid_t pid;

	msg_socketpair(sv);
	pid = test_fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(sv[0]);
		fn(sv[1]);
		_exit(0);
	}
	close(sv[1]);
	return (struct victim){.pid = pid, .sock = sv[0], .in = -1, .out = -1};
}

struct msg recv_msg(const struct victim *v)
{
	struct msg m;
	int r = recv_msg_timeout(v->sock, &m, 15000);

	/* The signal words tell a signal left blocked (a mask not put back)
	 * from a call that went on waiting. */
	CHECK(r == 0,
	      "no message from victim %d (state %c, TracerPid %ld, SigPnd %llx ShdPnd %llx SigBlk "
	      "%llx): %s",
	      (int)v->pid, proc_state(v->pid), proc_status_field(v->pid, "TracerPid"),
	      proc_status_hex(v->pid, "SigPnd"), proc_status_hex(v->pid, "ShdPnd"),
	      proc_status_hex(v->pid, "SigBlk"), strerror(-r));
	return m;
}

/* ---- the victim on two pipes ---- */

void victim_start_pipes(struct victim *v, void (*fn)(int in, int out))
{
	int a[2], b[2];

	CHECK(pipe2(a, O_CLOEXEC) == 0 && pipe2(b, O_CLOEXEC) == 0, "pipe: %m");
	v->pid = test_fork();
	CHECK(v->pid >= 0, "fork: %m");
	if (v->pid == 0) {
		close(a[1]);
		close(b[0]);
		fn(a[0], b[1]);
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	v->sock = -1;
	v->in = a[1];
	v->out = b[0];
}
