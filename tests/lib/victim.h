/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Victims: processes (and threads) the test created itself, that hold files
 * and act on request. Every one is made through fork.h (it dies with the
 * test) and stays in the case's process group, so the harness's kill(-case)
 * takes it down too. Victims never print.
 *
 * Three kinds, one struct victim:
 *
 *  - a victim that performs one requested system call at a time and answers
 *    with its result (struct victim_req / victim_res over the socket):
 *
 *	struct victim v;
 *	victim_start(&v);                         // forked child, serving
 *	int fd = victim_open(&v, path, O_RDONLY); // opened in the victim
 *	... revoke(path) ...
 *	struct victim_res r = victim_read(&v, fd, 16);
 *	CHECK(r.ret == -1 && r.err == EBADF, ...);
 *
 *    It can make more victims that inherit its descriptors: VOP_FORK (a
 *    child), VOP_THREAD (a thread of the same process), VOP_CLONE_FILES (a
 *    process sharing its fd table, not its memory), each serving its own
 *    socket, handed back to the test with SCM_RIGHTS (victim_spawn()). For a
 *    call that blocks (a read on an empty FIFO), split it: victim_send(),
 *    victim_wait_syscall() until the thread sits in that syscall, act, then
 *    victim_recv(). victim_become(sock) turns a child the test forked itself
 *    with a special parent (an unshared namespace, another uid) into one.
 *
 *  - a victim that runs a function of the test, FN(sock), and talks struct
 *    msg (msg.h) on its socket: victim_run(FN); recv_msg() reads its answers
 *    and says in what state the victim was when none came;
 *
 *  - a victim that runs FN(in, out) on two pipes (the unit tests, whose
 *    victims block in read() on IN): victim_start_pipes().
 */
#ifndef REVOKE_TEST_LIB_VICTIM_H
#define REVOKE_TEST_LIB_VICTIM_H

#include <stddef.h>
#include <sys/types.h>

#include "msg.h"

struct victim {
	pid_t pid;   /* in the test's pid namespace, or 0 if unknown */
	int sock;    /* the test's end of the socket (not the pipe victims) */
	int in, out; /* pipe victims: the test's ends (test -> victim, victim -> test) */
};

/* ---- the victim that performs one system call at a time ---- */

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
	VOP_RECVFD,	 /* ret = the descriptor sent with the request (SCM_RIGHTS:
			  * victim_send_fd), the same open file description */
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

#define VICTIM_REQ(...) (&(struct victim_req){__VA_ARGS__})

/* Fork a victim that serves requests; returns in the parent only. */
void victim_start(struct victim *v);

/* victim_start() as UID/GID with supplementary GROUPS (NGROUPS of them, 0:
 * none), dumpable: a holder of another user's. */
void victim_start_as(struct victim *v, uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups);

/* In a child of the test (test_fork()): become a victim serving SOCK. */
void __attribute__((noreturn)) victim_become(int sock);

void victim_send(struct victim *v, const struct victim_req *q);
/* Send FD to V (it keeps a copy: VOP_RECVFD); its number in V. */
int victim_send_fd(struct victim *v, int fd);
/* Receive one reply; *RET_FD (if not NULL) gets a descriptor attached to it or -1. */
struct victim_res victim_recv_fd(struct victim *v, int *ret_fd);
struct victim_res victim_recv(struct victim *v);
struct victim_res victim_call(struct victim *v, const struct victim_req *q);

/* Open PATH in the victim; the case fails unless it worked. */
int victim_open(struct victim *v, const char *path, int flags);
struct victim_res victim_read(struct victim *v, int fd, size_t len);
struct victim_res victim_write(struct victim *v, int fd, const char *data);

/* Make a new victim from V (VOP_FORK, VOP_THREAD or VOP_CLONE_FILES) into *NV. */
void victim_spawn(struct victim *v, int op, struct victim *nv);

/* Wait (bounded, ~10 s) until thread TID sits in syscall NR, e.g. blocked in
 * read(): 0, -ETIMEDOUT or -errno. */
int victim_wait_syscall(pid_t tid, long nr);

/* ---- the victim that runs a function of the test ---- */

/* Fork a victim running FN(sock); it dies with the test. */
struct victim victim_run(void (*fn)(int sock));

/* The next message from V within 15 s; the case fails otherwise, saying what
 * state V was in (a signal left blocked, a call that went on waiting). */
struct msg recv_msg(const struct victim *v);

/* ---- the victim on two pipes ---- */

void victim_start_pipes(struct victim *v, void (*fn)(int in, int out));

#endif
