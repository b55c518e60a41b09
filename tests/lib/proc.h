/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the tests read in /proc about their own victims: state letters, fields
 * of status (TracerPid, SigBlk...), the system call a thread sits in, its
 * threads, its descriptors, a parent's child, the mount table. Each reader
 * says what it returns when the file cannot be read (the process is gone).
 * The library's own parsers (lib/procfs.c) are what the tests check; these
 * are deliberately small and separate.
 *
 * Also the clock and sleeps the waits use.
 */
#ifndef REVOKE_TEST_LIB_PROC_H
#define REVOKE_TEST_LIB_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* A small file (one read) into BUF, NUL-terminated: its length or -errno. */
ssize_t read_text(const char *path, char *buf, size_t size);
/* The same for a /proc file: 0 or -errno. */
int read_proc(const char *path, char *buf, size_t size);

/* The value after "KEY:" (and blanks) at the start of a line of TEXT, or NULL. */
const char *proc_field(const char *text, const char *key);

/* The state letter of /proc/PID/stat ('R', 'S', 'T', 't', 'D', 'Z'), or 0. */
char proc_state(pid_t pid);

/* The state letter of thread TID of PID, or '?'. */
char task_state(pid_t pid, pid_t tid);

/* The value of KEY in /proc/PID/status, parsed in BASE; FAIL if unreadable or absent. */
unsigned long long proc_status_value(pid_t pid, const char *key, int base, unsigned long long fail);
/* A decimal field (TracerPid...), or -1. */
long proc_status_field(pid_t pid, const char *key);
/* A hexadecimal field (SigBlk, SigPnd...), or ~0. */
unsigned long long proc_status_hex(pid_t pid, const char *key);

/* One thread's status: /proc/PID/task/TID/status. */
struct proc_task {
	char state;	 /* State: letter */
	pid_t tracer;	 /* TracerPid: */
	uint64_t sigblk; /* SigBlk: */
	uint64_t sigpnd; /* SigPnd: (this thread's private pending set) */
};
/* 0, or -1 when it cannot be read (gone). */
int proc_task_status(pid_t pid, pid_t tid, struct proc_task *ret);

/* TracerPid in an open /proc/PID/status (read again from offset 0), or 0. */
pid_t proc_status_fd_tracer(int fd);

/* The system call thread TID of PID (0: TID alone, /proc/TID) sits in: its
 * number, -EAGAIN when it runs in user space, -errno when unreadable. */
long proc_syscall(pid_t pid, pid_t tid);

/*
 * Until thread TID of PID (0: TID alone) sits in system call NR or ALT
 * (-1: none; NR -1: any), and, when STATES is not NULL, is in one of those
 * state letters ("SD": asleep in it). Looks TRIES times, INTERVAL_US apart
 * (a liveness bound, not a timing assertion). 0, -ETIMEDOUT, or -ENOENT at
 * once when the thread is gone.
 */
int proc_wait_syscall(pid_t pid, pid_t tid, long nr, long alt, const char *states, int tries,
		      unsigned int interval_us);

/* The thread ids of PID, sorted; how many (at most MAX), -1 if gone. */
int proc_tasks(pid_t pid, pid_t *tids, int max);

/* One descriptor: where /proc/PID/fd/N leads (zeros when nothing stat can follow). */
struct proc_fd {
	int fd;
	dev_t dev;
	ino_t ino;
	mode_t mode;
};
/* PID's descriptor table, sorted by number; how many (at most MAX), -1 if gone. */
int proc_fds(pid_t pid, struct proc_fd *fds, int max);

/* Where fd FD of PID leads ("/memfd:revoked (deleted)", "pipe:[123]") into
 * BUF, NUL-terminated: its length, or -errno. */
ssize_t proc_fd_link(pid_t pid, int fd, char *buf, size_t size);

/* Whether fd FD of PID refers to the file ST describes. */
bool proc_fd_is(pid_t pid, int fd, const struct stat *st);

/* The process whose parent is PPID (the first /proc lists), or 0. */
pid_t proc_child_of(pid_t ppid);

/* PID's hard RLIMIT_NOFILE, or -1. */
long long proc_limit_nofile_hard(pid_t pid);

/* The id of the topmost mount at PATH in /proc/self/mountinfo, or -1; -2 when
 * mountinfo cannot be read. */
int proc_mount_id(const char *path);
/* Its source ("/dev/loop3") into BUF, "" when none; -1 when mountinfo cannot be read. */
int proc_mount_source(const char *path, char *buf, size_t size);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t now_ns(void);
/* Sleep MS milliseconds (NS nanoseconds), through EINTR. */
void msleep(unsigned int ms);
void sleep_ns(uint64_t ns);

#endif
