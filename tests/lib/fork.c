/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The only place tests make processes: see fork.h. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fork.h"
#include "harness.h"

/* In the child: die with the parent, or now if it is gone already. */
static void die_with(pid_t parent, int sig)
{
	if (sig == 0)
		return;
	prctl(PR_SET_PDEATHSIG, sig);
	/* pid 1 of a new pid namespace: the parent is outside it (getppid() 0) */
	if (getppid() != parent && getpid() != 1)
		_exit(1);
}

pid_t test_fork_sig(int sig)
{
	pid_t parent = getpid(), pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		die_with(parent, sig);
	return pid;
}

pid_t test_fork(void)
{
	return test_fork_sig(SIGKILL);
}

struct clone_arg {
	int (*fn)(void *);
	void *arg;
	pid_t parent;
};

static int clone_main(void *p)
{
	struct clone_arg *a = p;

	die_with(a->parent, SIGKILL);
	return a->fn(a->arg);
}

pid_t test_clone(int (*fn)(void *), void *arg, int flags)
{
	/* Without CLONE_VM the child has a copy of this buffer and of A;
	 * no two children of one process run on it at once. */
	static char stack[256 * 1024] __attribute__((aligned(16)));
	static struct clone_arg a;

	a = (struct clone_arg){.fn = fn, .arg = arg, .parent = getpid()};
	fflush(NULL);
	return clone(clone_main, stack + sizeof(stack), flags | SIGCHLD, &a);
}

pid_t test_clone_vfork(void)
{
	pid_t parent = getpid();
	long c;

	fflush(NULL);
	c = syscall(SYS_clone, CLONE_VFORK | SIGCHLD, 0, NULL, NULL, 0);
	if (c == 0)
		die_with(parent, SIGKILL);
	return (pid_t)c;
}

pid_t test_vfork(const struct test_vf_step *steps)
{
	/* volatile: the child moves it along on the frame it shares with us */
	const struct test_vf_step *volatile s = steps;
	pid_t pid;

	fflush(NULL);
	pid = vfork();
	if (pid == 0) {
		/* Raw system calls only, and never a return: the child runs on
		 * the parent's stack until it exits or execs. */
		long fd = -1;

		for (;; s++) {
			switch (s->op) {
			case TEST_VF_EXIT:
				syscall(SYS_exit, s->a);
				break;
			case TEST_VF_CLOSE:
				syscall(SYS_close, s->a);
				break;
			case TEST_VF_SLEEP: {
				struct timespec ts = {.tv_sec = s->a};

				syscall(SYS_nanosleep, &ts, NULL);
				break;
			}
			case TEST_VF_OPEN:
				fd = syscall(SYS_openat, AT_FDCWD, s->path, s->a);
				if (fd < 0)
					syscall(SYS_exit, s->b);
				break;
			case TEST_VF_OPEN_WAIT:
				syscall(SYS_openat, AT_FDCWD, s->path, s->a);
				break;
			case TEST_VF_WRITE:
				syscall(SYS_write, s->a, s->path, 1);
				break;
			case TEST_VF_READ: {
				char b;

				syscall(SYS_read, s->a, &b, 1);
				break;
			}
			case TEST_VF_READ_FD: {
				unsigned char e;
				char b;

				e = syscall(SYS_read, fd, &b, 1) < 0 ? (unsigned char)errno : 0;
				syscall(SYS_write, s->a, &e, 1);
				break;
			}
			case TEST_VF_EXEC:
				syscall(SYS_execve, s->path, s->argv, environ);
				syscall(SYS_exit, s->a);
				break;
			}
		}
	}
	return pid;
}

int test_become(uid_t uid, gid_t gid, unsigned int flags)
{
	if ((flags & TEST_BECOME_NOGROUPS) && setgroups(0, NULL) < 0)
		return -1;
	if (setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		return -1;
	if (flags & TEST_BECOME_DUMPABLE)
		prctl(PR_SET_DUMPABLE, 1);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	return 0;
}

pid_t test_wait(pid_t pid, int *status, int options)
{
	pid_t r;

	while ((r = waitpid(pid, status, options)) < 0 && errno == EINTR)
		;
	return r;
}

struct as_nobody {
	void (*fn)(void *);
	void *arg;
};

static void as_nobody_main(void *p)
{
	struct as_nobody *a = p;

	if (test_become(TEST_NOBODY, TEST_NOBODY, TEST_BECOME_NOGROUPS | TEST_BECOME_DUMPABLE) < 0)
		test_fail("drop to uid %d: %m", TEST_NOBODY);
	a->fn(a->arg);
}

void test_run_child(void (*fn)(void *), void *arg, const char *what)
{
	pid_t pid = test_fork();
	int status;

	CHECK(pid >= 0, "fork: %m");
	if (pid == 0) {
		fn(arg);
		fflush(NULL);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		CHECK(errno == EINTR, "waitpid: %m");
	if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_EXIT_SKIP)
		_exit(TEST_EXIT_SKIP);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s failed (status 0x%x)", what,
	      status);
}

void test_as_nobody(void (*fn)(void *), void *arg)
{
	struct as_nobody a = {.fn = fn, .arg = arg};

	test_run_child(as_nobody_main, &a, "the uid 65534 child");
}

void test_describe_status(int status, char *buf, size_t size)
{
	if (WIFSIGNALED(status))
		snprintf(buf, size, "killed by signal %d (%s)", WTERMSIG(status),
			 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
	else
		snprintf(buf, size, "exit status %d", WEXITSTATUS(status));
}
