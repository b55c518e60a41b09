/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The only way a test makes a process (tests/check-shape enforces it): every
 * child dies with the thread that forked it (PR_SET_PDEATHSIG, SIGKILL unless
 * said otherwise) and gives up at once when that parent is already gone (the
 * getppid() check closes the window between fork() and prctl()). A child that
 * is pid 1 of a new pid namespace has no parent it can see (getppid() is 0):
 * there the signal alone ties it to the test.
 *
 *	pid_t pid = test_fork();
 *	if (pid == 0) { ...; _exit(0); }
 *
 * Also here: a child on its own stack (test_clone()), a child that shares
 * nothing but makes its parent wait as vfork does (test_clone_vfork()), a
 * real vfork() whose child runs a fixed program of raw system calls
 * (test_vfork()), dropping to another uid without losing the death signal
 * (test_become()), and running a function in a child whose result becomes
 * the case's (test_run_child(), test_as_nobody()).
 */
#ifndef REVOKE_TEST_LIB_FORK_H
#define REVOKE_TEST_LIB_FORK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* fork(); the child gets SIGKILL when the calling thread dies. */
pid_t test_fork(void);

/* The same with death signal SIG (0: none; the child outlives the test). */
pid_t test_fork_sig(int sig);

/* clone(FN, ARG) on a stack of its own with FLAGS (CLONE_FILES...; never
 * CLONE_VM; the exit signal is SIGCHLD); FN's return value is the child's
 * exit status. */
pid_t test_clone(int (*fn)(void *), void *arg, int flags);

/* clone(CLONE_VFORK): a child with its own memory (no CLONE_VM) whose parent
 * waits, in state D, until it exits or execs. Returns as fork(). */
pid_t test_clone_vfork(void);

/* The program a vfork() child runs: raw system calls only (it runs on its
 * parent's stack), one step after the other, until TEST_VF_EXIT or TEST_VF_EXEC. */
enum test_vf_op {
	TEST_VF_EXIT,	   /* exit(a) */
	TEST_VF_CLOSE,	   /* close(a) */
	TEST_VF_SLEEP,	   /* nanosleep(a seconds) */
	TEST_VF_OPEN,	   /* fd = openat(AT_FDCWD, path, a); exit(b) if that failed */
	TEST_VF_OPEN_WAIT, /* openat(AT_FDCWD, path, a), whatever it returns (a FIFO) */
	TEST_VF_WRITE,	   /* write(a, path, 1): one byte */
	TEST_VF_READ,	   /* read(a, &byte, 1) */
	TEST_VF_READ_FD,   /* read(fd, &byte, 1), then write(a, its errno or 0, 1) */
	TEST_VF_EXEC,	   /* execve(path, argv, environ), exit(a) if it returns */
};

struct test_vf_step {
	enum test_vf_op op;
	long a, b;
	const char *path;
	char *const *argv;
};

/* The steps as rows: test_vfork((const struct test_vf_step[]){VF_READ(fd), VF_EXIT(0)}). */
#define VF_STEP(...)	  ((struct test_vf_step){__VA_ARGS__})
#define VF_EXIT(code)	  VF_STEP(.op = TEST_VF_EXIT, .a = (code))
#define VF_CLOSE(fd)	  VF_STEP(.op = TEST_VF_CLOSE, .a = (fd))
#define VF_SLEEP(seconds) VF_STEP(.op = TEST_VF_SLEEP, .a = (seconds))
#define VF_OPEN(file, flags, code)                                                                 \
	VF_STEP(.op = TEST_VF_OPEN, .a = (flags), .b = (code), .path = (file))
#define VF_OPEN_WAIT(file, flags) VF_STEP(.op = TEST_VF_OPEN_WAIT, .a = (flags), .path = (file))
#define VF_WRITE(fd, byte)	  VF_STEP(.op = TEST_VF_WRITE, .a = (fd), .path = (byte))
#define VF_READ(fd)		  VF_STEP(.op = TEST_VF_READ, .a = (fd))
#define VF_READ_FD(to)		  VF_STEP(.op = TEST_VF_READ_FD, .a = (to))
#define VF_EXEC(file, args, code)                                                                  \
	VF_STEP(.op = TEST_VF_EXEC, .a = (code), .path = (file), .argv = (args))

/* vfork(); the child runs STEPS. Returns the child's pid (in the parent only,
 * once the child exited or exec'd), or -1. */
pid_t test_vfork(const struct test_vf_step *steps);

/* In a child: become UID/GID (with TEST_BECOME_NOGROUPS also no
 * supplementary groups), dumpable again with TEST_BECOME_DUMPABLE (a uid
 * change clears that, and the kernel refuses even the same uid to trace or
 * read /proc/PID/fd of a non-dumpable process), and die with the parent
 * again (a uid change clears that too). 0 or -1 (errno). */
enum { TEST_BECOME_NOGROUPS = 1, TEST_BECOME_DUMPABLE = 2 };
int test_become(uid_t uid, gid_t gid, unsigned int flags);

#define TEST_NOBODY 65534

/*
 * Run FN(ARG) in a forked child and wait for it: the case skips when the
 * child skipped, and fails with "WHAT failed (status S)" unless it exited 0.
 * test_as_nobody() does it as uid/gid 65534 with no capabilities and no
 * supplementary groups (dumpable).
 */
void test_run_child(void (*fn)(void *), void *arg, const char *what);
void test_as_nobody(void (*fn)(void *), void *arg);

/* waitpid(PID) through EINTR: PID or -1. */
pid_t test_wait(pid_t pid, int *status, int options);

/* A wait status in words: "killed by signal 9 (KILL)", "exit status 1". */
void test_describe_status(int status, char *buf, size_t size);

#endif
